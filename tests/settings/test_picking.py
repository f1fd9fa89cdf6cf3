"""Records picked by the file's row number or by a column's value, mapped to record ids."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.core.errors import ParameterError
from privgame.data import load_dataset
from privgame.settings.picking import parse_row_numbers, record_ids_for_rows, record_ids_for_values


def _dataset():
    """40 data rows; rows 3 and 10 of the file have a missing age and are dropped.

    File rows 1, 2, 4, 5, ... are record ids 0, 1, 2, 3, ...
    """
    lines = ["person;age;colour"]
    for row in range(1, 41):
        age = "NA" if row in (3, 10) else str(20 + row % 17)
        lines.append(f"P{row:03d};{age};{'abc'[row % 3]}")
    return load_dataset(("\n".join(lines) + "\n").encode(), filename="people.csv")


def test_row_numbers_are_parsed_with_ranges_in_order_and_once() -> None:
    assert parse_row_numbers("3, 17 5-7;3  9–10") == (3, 17, 5, 6, 7, 9, 10)
    assert parse_row_numbers("  ") == ()
    with pytest.raises(ParameterError, match=r"These are not row numbers: 0, x, 9-4\."):
        parse_row_numbers("0, x, 9-4, 2")


def test_file_rows_skip_the_dropped_rows() -> None:
    dataset = _dataset()
    assert dataset.dropped_rows == 2
    rows = dataset.file_rows()
    assert len(rows) == 38 and rows[:4].tolist() == [1, 2, 4, 5]
    # Record id 2 is the file's row 4, P004.
    assert dataset.table["person"].iloc[2] == "P004"


def test_rows_map_to_record_ids_of_d_and_refusals_say_why() -> None:
    dataset = _dataset()
    members = np.arange(0, 38, 2)  # D: every other record id
    assert record_ids_for_rows([4, 1], dataset.file_rows(), members, n_file_rows=40) == (2, 0)
    with pytest.raises(ParameterError, match=r"has no row 41.*rows 3, 10 were dropped.*row 2 is not in D"):
        record_ids_for_rows([41, 3, 10, 2, 1], dataset.file_rows(), members, n_file_rows=40)


def test_values_map_to_every_record_of_d_that_holds_them() -> None:
    dataset = _dataset()
    members = np.arange(38)
    assert record_ids_for_values(dataset.table, "person", ["P004", "P001"], members) == (0, 2)
    colour_a = record_ids_for_values(dataset.table, "colour", ["a"], members)
    assert len(colour_a) == 12  # file rows 6, 9, ..., 39
    assert all(dataset.table["colour"].iloc[i] == "a" for i in colour_a)
    with pytest.raises(ParameterError, match=r"No record of D has person = P003"):
        record_ids_for_values(dataset.table, "person", ["P003"], members)
    with pytest.raises(ParameterError, match=r"no column 'name'"):
        record_ids_for_values(dataset.table, "name", ["x"], members)
