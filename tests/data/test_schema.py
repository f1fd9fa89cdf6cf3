"""Schema inference on tables as the loader reads them."""

from __future__ import annotations

import pandas as pd

from privgame.data import infer_schema, load_table

ADULT_CONTINUOUS = {
    "age",
    "fnlwgt",
    "educational-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
}
ADULT_CATEGORICAL = {
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "native-country",
    "income",
}


def test_adult_roles_through_the_loader(adult_raw: pd.DataFrame) -> None:
    schema = infer_schema(adult_raw)
    roles = {c.name: c.role for c in schema.columns}
    assert {n for n, r in roles.items() if r == "continuous"} == ADULT_CONTINUOUS
    assert {n for n, r in roles.items() if r == "categorical"} == ADULT_CATEGORICAL
    assert schema.names == list(adult_raw.columns)
    workclass = schema.column("workclass")
    assert workclass.missing == 2_799
    assert "?" not in (workclass.categories or ())
    assert schema.column("age").integer


def test_loaded_codes_identifiers_and_constants() -> None:
    rows = "\n".join(f"{i},{i % 3},{i * 1.5},same,{'ab'[i % 2]}" for i in range(30))
    table = load_table(f"user_id,code,amount,constant,letter\n{rows}\n".encode(), filename="t.csv")
    roles = {c.name: c.role for c in infer_schema(table).columns}
    assert roles == {
        "user_id": "excluded",
        "code": "categorical",
        "amount": "continuous",
        "constant": "excluded",
        "letter": "categorical",
    }


def test_whole_numbers_with_missing_values_still_count_as_codes() -> None:
    rows = "\n".join(f"{'NA' if i == 4 else i % 4},{i}.5" for i in range(30))
    table = load_table(f"code,value\n{rows}\n".encode(), filename="t.csv")
    schema = infer_schema(table)
    assert schema.column("code").role == "categorical"
    assert schema.column("code").missing == 1
    assert schema.column("value").role == "continuous"
