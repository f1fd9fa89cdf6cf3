"""validate_table: every problem at once, each naming the column and the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgame.data import infer_schema, validate_table


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
