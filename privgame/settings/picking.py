"""Records the user picks, named as the user knows them: a row of the file, or a column's value.

A run names a record by its *record id*, its row in the prepared table (the file's rows less the
rows the missing-value policy dropped, numbered from 0). Users know a record by its row in the
file (1 for the first data row after the header) or by the value of an identifier column. The
functions here turn either into the record ids of
:class:`~privgame.settings.run_spec.TargetSelection` ``ids``, the same spec ``python -m privgame run
--target-ids`` builds for those records, and say plainly which rows cannot be audited and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.errors import ParameterError

__all__ = ["parse_row_numbers", "record_ids_for_rows", "record_ids_for_values"]

_RANGE = re.compile(r"(\d+)\s*(?:-|–|\.\.)\s*(\d+)")
# A range this long is a typo (a missing comma), not a list of records to audit one by one.
_MAX_RANGE = 100_000


def parse_row_numbers(text: str) -> tuple[int, ...]:
    """Row numbers written as people write them: ``3, 17 120-125`` (commas, spaces, ranges).

    Parameters
    ----------
    text : str
        Whole numbers and ranges ``a-b`` (both ends included), separated by commas, semicolons
        or spaces.

    Returns
    -------
    tuple of int
        The numbers in the order given, each once.

    Raises
    ------
    ParameterError
        Naming every part that is not a whole number of 1 or more, or a range written backwards.
    """
    out: dict[int, None] = {}
    bad: list[str] = []
    normalised = _RANGE.sub(lambda m: f"{m.group(1)}-{m.group(2)}", text)
    for part in re.split(r"[\s,;]+", normalised.strip()):
        if not part:
            continue
        ends = part.split("-")
        if len(ends) == 2 and all(e.isdigit() for e in ends):
            low, high = int(ends[0]), int(ends[1])
            if low < 1 or high < low or high - low > _MAX_RANGE:
                bad.append(part)
                continue
            out.update(dict.fromkeys(range(low, high + 1)))
        elif part.isdigit() and int(part) >= 1:
            out[int(part)] = None
        else:
            bad.append(part)
    if bad:
        raise ParameterError(
            f"These are not row numbers: {', '.join(bad)}. Write whole numbers from 1 (the first "
            "row after the header), separated by commas, and ranges as 120-125."
        )
    return tuple(out)


def record_ids_for_rows(
    rows: Sequence[int], file_rows: np.ndarray, members: Iterable[int], *, n_file_rows: int | None = None
) -> tuple[int, ...]:
    """The record ids of rows of the file, refusing rows that are not records of D.

    Parameters
    ----------
    rows : sequence of int
        Row numbers of the file, 1 for the first data row.
    file_rows : ndarray of int
        The file's row number of every record id (:meth:`privgame.data.Dataset.file_rows`).
    members : iterable of int
        The record ids of D, the records that can be audited.
    n_file_rows : int, optional
        Data rows in the file; rows beyond it are named as such rather than as dropped.

    Returns
    -------
    tuple of int
        One record id per row, in the order of ``rows``.

    Raises
    ------
    ParameterError
        Listing the rows the file does not have, the rows the missing-value policy dropped, and
        the rows that are not in D (in the release set-up, the held-back rows).
    """
    record_of = {int(row): i for i, row in enumerate(np.asarray(file_rows, dtype=np.int64))}
    in_d = {int(i) for i in members}
    last = int(n_file_rows) if n_file_rows is not None else None
    ids: list[int] = []
    absent: list[int] = []
    dropped: list[int] = []
    outside: list[int] = []
    for row in rows:
        record = record_of.get(int(row))
        if record is None:
            (absent if last is not None and row > last else dropped).append(int(row))
        elif record not in in_d:
            outside.append(int(row))
        else:
            ids.append(record)
    problems = []
    if absent:
        problems.append(f"the file has {last:,} rows, so it has no {_rows(absent)}")
    if dropped:
        verb = "was" if len(dropped) == 1 else "were"
        problems.append(
            f"{_rows(dropped)} {verb} dropped by the missing-value policy (a missing value in a used column)"
        )
    if outside:
        verb = "is" if len(outside) == 1 else "are"
        problems.append(
            f"{_rows(outside)} {verb} not in D, the records the synthetic data is made from (the "
            "other rows are the attacker's data or reference records)"
        )
    if problems:
        raise ParameterError("Some rows cannot be audited: " + "; ".join(problems) + ".")
    return tuple(ids)


def record_ids_for_values(
    table: pd.DataFrame, column: str, values: Iterable[Any], members: Iterable[int]
) -> tuple[int, ...]:
    """The record ids of D whose ``column`` holds one of ``values``, in record-id order.

    Parameters
    ----------
    table : DataFrame
        The prepared table (its row ``i`` is record id ``i``).
    column : str
        A column of ``table``, usually an identifier the generator does not use.
    values : iterable
        The values to look for, compared as text (as the user typed or picked them).
    members : iterable of int
        The record ids of D.

    Returns
    -------
    tuple of int
        Every record of D with one of the values.

    Raises
    ------
    ParameterError
        When the column is not in the table, or naming the values no record of D holds.
    """
    if column not in table.columns:
        raise ParameterError(f"The table has no column {column!r}; choose one of its columns.")
    wanted = list(dict.fromkeys(str(v) for v in values))
    d = np.sort(np.fromiter((int(i) for i in members), dtype=np.int64))
    text = table[column].iloc[d].astype(str).to_numpy()
    hits = np.isin(text, wanted)
    missing = sorted(set(wanted) - set(text[hits].tolist()))
    if missing:
        raise ParameterError(
            f"No record of D has {column} = {_listed(missing)}; pick values of the records of D."
        )
    return tuple(int(i) for i in d[hits])


def _rows(rows: Sequence[int]) -> str:
    return f"{'row' if len(rows) == 1 else 'rows'} {_listed(rows)}"


def _listed(values: Sequence[Any], most: int = 10) -> str:
    shown = ", ".join(str(v) for v in values[:most])
    return shown + (f" and {len(values) - most:,} more" if len(values) > most else "")
