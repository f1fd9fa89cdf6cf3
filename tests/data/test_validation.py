"""validate_table: every problem at once, each naming the column and the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgame.data import infer_schema, missing_code_warnings, validate_table


def good_table(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "colour": [["red", "green", "blue"][i % 3] for i in range(n)],
            "size": np.linspace(1.0, 9.0, n),
            "group": [i % 4 for i in range(n)],
        }
    )


def test_a_good_table_and_adult_have_no_problem(adult_raw: pd.DataFrame) -> None:
    assert validate_table(good_table(), infer_schema(good_table())) == []
    assert validate_table(adult_raw, infer_schema(adult_raw)) == []


def test_a_single_usable_column() -> None:
    table = pd.DataFrame({"row_id": range(30), "colour": ["a", "b", "c"] * 10})
    problems = validate_table(table, infer_schema(table))
    assert len(problems) == 1
    assert problems[0].startswith("only 1 usable column ('colour'): an audit needs at least 2")
    assert "'row_id' (named like an identifier)" in problems[0]


def test_an_empty_column_is_a_problem_until_the_user_excludes_it() -> None:
    table = good_table().assign(notes=np.nan)
    problems = validate_table(table, infer_schema(table))
    assert problems == [
        "column 'notes': every value is missing; fill it in, remove it from the file, or set "
        "its role to excluded."
    ]
    assert validate_table(table, infer_schema(table, roles={"notes": "excluded"})) == []


def test_too_many_categories() -> None:
    table = good_table(60).assign(city=[f"c{i % 50}" for i in range(60)])
    schema = infer_schema(table)
    assert validate_table(table, schema) == []
    problems = validate_table(table, schema, max_categories=20)
    assert len(problems) == 1
    assert problems[0].startswith("column 'city': 50 categories, more than the limit of 20")


def test_infinite_numbers_in_a_continuous_column() -> None:
    table = good_table()
    table.loc[[3, 7], "size"] = [np.inf, -np.inf]
    problems = validate_table(table, infer_schema(table))
    assert len(problems) == 1
    assert problems[0].startswith("column 'size': 2 infinite values (inf)")


def test_no_row_left_under_drop_but_fine_under_category() -> None:
    table = good_table(8)
    table.loc[::2, "colour"] = np.nan
    table.loc[1::2, "group"] = np.nan
    problems = validate_table(table, infer_schema(table))
    assert len(problems) == 1
    assert problems[0].startswith("every row has a missing value in a used column")
    assert "'colour': 4 missing" in problems[0]
    assert 'make missing values a category of their own (missing policy "category")' in problems[0]
    assert validate_table(table, infer_schema(table, missing_policy="category")) == []


def test_a_schema_column_absent_from_the_table() -> None:
    schema = infer_schema(good_table())
    problems = validate_table(good_table().drop(columns="group"), schema)
    assert problems == ["column 'group' is in the schema but not in the table; infer the schema again."]


def test_every_problem_is_collected_together() -> None:
    table = good_table(60).assign(city=[f"c{i}" for i in range(59)] + ["c0"], empty=None)
    table.loc[0, "size"] = np.inf
    problems = validate_table(table, infer_schema(table), max_categories=10)
    starts = sorted(p.split(":")[0] for p in problems)
    assert starts == ["column 'city'", "column 'empty'", "column 'size'"]


@pytest.mark.parametrize("limit", [2, 3])
def test_the_category_limit_is_inclusive(limit: int) -> None:
    problems = validate_table(good_table(), infer_schema(good_table()), max_categories=limit)
    assert any(p.startswith("column 'colour'") for p in problems) == (limit < 3)


def _coded(n: int = 60, code: float = -9, coded: int = 6) -> pd.DataFrame:
    """A small survey-like table whose income column writes 'no answer' as ``code`` in ``coded`` rows."""
    income = np.r_[np.linspace(1_000.0, 5_000.0, n - coded), np.full(coded, code)]
    return pd.DataFrame({"colour": [["red", "green", "blue"][i % 3] for i in range(n)], "income": income})


def test_a_minus_nine_column_warns_naming_the_column_value_and_count() -> None:
    table = _coded()
    (warning,) = missing_code_warnings(table, infer_schema(table))
    assert warning.startswith("column 'income': 6 of 60 values (10.0%) are -9, far from its other values")
    assert "declare it missing: leave those cells empty (or write NA)" in warning
    assert validate_table(table, infer_schema(table)) == []  # a warning, not a problem


@pytest.mark.parametrize(
    ("column", "warned"),
    [
        (np.r_[np.arange(0, 54) % 7, [-1] * 6], True),  # -1 in a column otherwise never negative
        (np.r_[np.arange(-27, 27) % 7 - 3, [-1] * 6], False),  # -1 among other negatives
        (np.r_[np.linspace(1950, 2020, 54).round(), [9999] * 6], True),
        (np.r_[np.linspace(17, 90, 54).round(), [99] * 6], False),  # an age of 99 may be real
        (np.r_[np.linspace(1_000, 5_000, 56), [-9] * 4], False),  # under 5 rows
    ],
)
def test_which_numbers_read_as_missing_codes(column: np.ndarray, warned: bool) -> None:
    table = pd.DataFrame({"colour": ["a", "b", "c"] * 20, "value": column.astype(float)})
    assert bool(missing_code_warnings(table, infer_schema(table))) is warned


def test_adult_has_no_missing_code_warning(adult_raw: pd.DataFrame) -> None:
    # capital-gain tops out at 99,999 in 0.5% of rows: a real amount, under the share pointed out.
    assert missing_code_warnings(adult_raw, infer_schema(adult_raw)) == []
