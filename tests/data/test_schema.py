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


def _messy_csv(n: int = 320) -> bytes:
    """A table like the issue's: ';', decimal commas, NA/?, a date, free text, distinct money."""
    lines = ["Person ID;Größe (cm);Revenu annuel (€);Couleur;Date d'entrée;Commentaire"]
    for i in range(n):
        height = "NA" if i % 29 == 0 else f"{150 + (i * 7) % 50},{i % 10}"
        income = "?" if i % 41 == 0 else f"{20 + i // 10} {(i * 37) % 1000:03d},{i % 100:02d}"
        colour = ("rouge", "bleu", "vert", "?")[i % 4]
        date = f"20{15 + i % 9}-{1 + i % 12:02d}-{1 + i % 28:02d}"
        comment = ("rien", "bon client", "à rappeler", "NA")[i % 4]
        lines.append(f"P{1000 + i};{height};{income};{colour};{date};{comment}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def test_messy_table_roles() -> None:
    table = load_table(_messy_csv(), filename="messy.csv")
    schema = infer_schema(table)
    roles = {c.name: c.role for c in schema.columns}
    assert roles == {
        "Person ID": "excluded",
        "Größe (cm)": "continuous",
        "Revenu annuel (€)": "continuous",
        "Couleur": "categorical",
        "Date d'entrée": "excluded",
        "Commentaire": "categorical",
    }
    income = schema.column("Revenu annuel (€)")
    assert income.reason is None and income.missing == 8
    assert income.distinct == 320 - 8  # every value differs, as in the issue
    assert income.lower == 20_037.01 and not income.integer  # row 1 is "20 037,01"
    date = schema.column("Date d'entrée").reason or ""
    assert date.startswith("dates (2015-01-01 to ") and "number of days" in date
    assert schema.column("Couleur").categories == ("bleu", "rouge", "vert")


def test_unique_fractional_numbers_are_measurements_and_unique_whole_numbers_identifiers() -> None:
    rows = "\n".join(f"{i * 3 + 1};{1000 + i},{(i * 13) % 100:02d}" for i in range(40))
    table = load_table(f"numero;montant\n{rows}\n".encode(), filename="t.csv")
    schema = infer_schema(table)
    assert schema.column("numero").role == "excluded"
    assert schema.column("numero").reason == "identifier-like: unique on every row"
    assert schema.column("montant").role == "continuous"


def test_dates_in_day_first_and_slashed_forms_are_recognised_but_not_text_like_dates() -> None:
    n = 30
    table = pd.DataFrame(
        {
            "day_first": [f"{1 + i % 28:02d}/{1 + i % 12:02d}/2020" for i in range(n)],
            "slashed": [f"2020/{1 + i % 12:02d}/{1 + i % 28:02d}" for i in range(n)],
            "not_a_date": [f"2020-{13 + i % 5}-40" for i in range(n)],
            "version": [f"1.{i % 4}.0" for i in range(n)],
        }
    )
    schema = infer_schema(table)
    assert schema.column("day_first").reason.startswith("dates (01/01/2020 to ")
    assert schema.column("slashed").reason.startswith("dates (2020/01/01 to ")
    assert schema.column("not_a_date").role == "categorical"
    assert schema.column("version").role == "categorical"
