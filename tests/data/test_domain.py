"""The public domain: parsing its JSON, declaring it on a dataset, the template, PrivBayes' guarantee."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.core.errors import ParameterError, SchemaError
from privgame.data import (
    BUNDLED_ADULT,
    Dataset,
    Domain,
    declare_domain,
    decode,
    domain_template,
    encode,
    fingerprint_table,
    infer_schema,
    load_dataset,
    parse_domain,
)
from privgame.generators import create
from privgame.settings.generator_options import apply_domain


@pytest.fixture(scope="module")
def adult() -> Dataset:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    return load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")


def _dataset(table: pd.DataFrame) -> Dataset:
    return Dataset(
        table=table,
        schema=infer_schema(table),
        dropped_rows=0,
        fingerprint=fingerprint_table(table),
        source_name="t.csv",
    )


# -- parse_domain ------------------------------------------------------------------------------


def test_parse_reads_bounds_and_categories_from_text_or_bytes() -> None:
    text = '{"bounds": {"age": [17, 90.5]}, "categories": {"race": ["A", "B", 3, true]}}'
    domain = parse_domain(text)
    assert domain == Domain(categories={"race": ("A", "B", 3, True)}, bounds={"age": (17.0, 90.5)})
    assert domain.names == ["age", "race"]
    assert parse_domain(b"\xef\xbb\xbf" + text.encode()) == domain  # a BOM from a Windows editor
    assert parse_domain("{}") == Domain()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"bounds": {"age": [17, 90]}', r"not valid JSON \(line 1, column 29"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        ('[["age", 17, 90]]', 'must be a JSON object with "bounds"'),
        ('{"bounds": {}, "colours": {}}', 'unknown key \'colours\': only "bounds" and "categories"'),
        ('{"bounds": [17, 90]}', '"bounds" must be an object of column name'),
        ('{"bounds": {"age": [17]}}', r"bounds of column 'age': must be a pair of numbers \[lower, upper\]"),
        ('{"bounds": {"age": ["17", 90]}}', "bounds of column 'age': must be a pair of numbers"),
        ('{"bounds": {"age": [false, true]}}', "bounds of column 'age': must be a pair of numbers"),
        ('{"bounds": {"age": [0, Infinity]}}', "bounds of column 'age': must be finite numbers"),
        ('{"bounds": {"age": [90, 17]}}', "bounds of column 'age': the lower bound must be below"),
        ('{"bounds": {"age": [5, 5]}}', "bounds of column 'age': the lower bound must be below"),
        ('{"categories": ["A", "B"]}', '"categories" must be an object of column name'),
        ('{"categories": {"race": "A"}}', "categories of column 'race': must be a non-empty list"),
        ('{"categories": {"race": []}}', "categories of column 'race': must be a non-empty list"),
        ('{"categories": {"race": ["A", null]}}', "categories of column 'race': each category must be"),
        (
            '{"bounds": {"x": [0, 1]}, "categories": {"x": ["a"]}}',
            "column 'x' has both bounds and categories",
        ),
    ],
)
def test_parse_rejects_a_bad_domain_with_the_fix(text: str | bytes, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        parse_domain(text)


def test_parse_lists_every_problem_at_once() -> None:
    text = json.dumps(
        {
            "extra": 1,
            "bounds": {"age": [90, 17], "hours": [0, 99], "fnlwgt": "wide"},
            "categories": {"race": "A", "sex": ["F", "M"]},
        }
    )
    with pytest.raises(ParameterError) as caught:
        parse_domain(text)
    problems = caught.value.problems
    assert len(problems) == 4
    assert ["extra" in problems[0], "'age'" in problems[1], "'fnlwgt'" in problems[2]] == [True] * 3
    assert "'race'" in problems[3]


# -- declare_domain ----------------------------------------------------------------------------


def test_declare_marks_only_the_named_columns_public(adult: Dataset) -> None:
    races = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White", "Unlisted"]
    domain = parse_domain(json.dumps({"bounds": {"age": [0, 120]}, "categories": {"race": races}}))
    declared = declare_domain(adult, domain)
    assert declared.table is adult.table and declared.fingerprint == adult.fingerprint
    age, race = declared.schema.column("age"), declared.schema.column("race")
    assert (age.lower, age.upper, age.domain_public) == (0.0, 120.0, True)
    assert race.categories == tuple(races) and race.domain_public
    assert not declared.schema.column("workclass").domain_public
    assert not declared.schema.domain_public
    assert not adult.schema.column("age").domain_public  # the input is left as it was
    codes = encode(declared.table, declared.schema)
    j = declared.schema.names.index("race")
    assert set(np.unique(codes[:, j])) <= set(range(5))  # "Unlisted" is declared but absent


def test_values_outside_declared_categories_are_rejected_naming_the_column(adult: Dataset) -> None:
    domain = parse_domain('{"categories": {"gender": ["Female"], "race": ["White"]}}')
    with pytest.raises(SchemaError, match=r"outside the declared categories") as caught:
        declare_domain(adult, domain)
    text = str(caught.value)
    assert "'gender'" in text and "'Male'" in text and "not among its categories" in text
    assert "'race'" in text and len(caught.value.problems) == 2


def test_continuous_values_outside_declared_bounds_are_allowed(adult: Dataset) -> None:
    declared = declare_domain(adult, parse_domain('{"bounds": {"age": [30, 40]}}'))
    assert adult.table["age"].min() < 30 and adult.table["age"].max() > 40
    assert (declared.schema.column("age").lower, declared.schema.column("age").upper) == (30.0, 40.0)


def test_declare_rejects_unknown_excluded_and_wrong_role_columns(adult: Dataset) -> None:
    domain = parse_domain(
        json.dumps(
            {
                "bounds": {"race": [0, 1], "agee": [0, 100]},
                "categories": {"age": [1, 2]},
            }
        )
    )
    with pytest.raises(SchemaError, match="does not fit the columns") as caught:
        declare_domain(adult, domain)
    text = str(caught.value)
    assert "column 'age' is continuous: declare its bounds" in text
    assert "column 'race' is categorical: declare its list of categories" in text
    assert "column 'agee': not a column of adult300.csv; check the spelling" in text
    table = pd.DataFrame({"id": range(30), "x": [0.5 + i for i in range(30)]})
    with pytest.raises(SchemaError, match="column 'id' is excluded, so it needs no domain"):
        declare_domain(_dataset(table), parse_domain('{"bounds": {"id": [0, 100]}}'))


def test_declared_codes_keep_the_columns_integer_type() -> None:
    table = pd.DataFrame({"grade": [1, 2, 3, 2, 1] * 6, "score": np.linspace(0, 1, 30)})
    dataset = _dataset(table)
    assert dataset.schema.column("grade").role == "categorical"
    declared = declare_domain(dataset, parse_domain('{"categories": {"grade": ["1", 2.0, 3, 4]}}'))
    assert declared.schema.column("grade").categories == (1, 2, 3, 4)
    back = decode(encode(declared.table, declared.schema), declared.schema)
    assert back["grade"].dtype == np.int64 and back["grade"].tolist() == table["grade"].tolist()


# -- domain_template ---------------------------------------------------------------------------


def test_the_template_round_trips_to_every_used_column(adult: Dataset) -> None:
    text = domain_template(adult.schema)
    data = json.loads(text)
    continuous = [c.name for c in adult.schema.used if c.role == "continuous"]
    categorical = [c.name for c in adult.schema.used if c.role == "categorical"]
    assert list(data["bounds"]) == continuous and list(data["categories"]) == categorical
    assert data["bounds"]["age"] == [int(adult.table["age"].min()), int(adult.table["age"].max())]
    assert text.count("\n") == len(continuous) + len(categorical) + 6  # a column per line
    declared = declare_domain(adult, parse_domain(text))
    assert declared.schema.domain_public
    for before, after in zip(adult.schema.used, declared.schema.used, strict=True):
        assert (after.categories, after.lower, after.upper) == (before.categories, before.lower, before.upper)
    assert domain_template(declared.schema) == text


def test_the_template_of_a_table_without_continuous_columns_still_parses() -> None:
    table = pd.DataFrame({"colour": ["red", "blue", "ünïcode"] * 10, "size": ["S", "M", "L"] * 10})
    text = domain_template(infer_schema(table))
    assert '"bounds": {}' in text and "ünïcode" in text
    assert parse_domain(text).categories["colour"] == ("blue", "red", "ünïcode")


# -- PrivBayes ---------------------------------------------------------------------------------


def test_privbayes_guarantee_needs_every_column_declared(adult: Dataset) -> None:
    def metadata(dataset: Dataset) -> dict:
        X = encode(dataset.table, dataset.schema)
        generator = create("privbayes", epsilon=1.0)
        return generator.fit(X, dataset.schema, rng=np.random.default_rng(0)).metadata

    assert metadata(adult)["dp_guarantee"] is False
    partial = declare_domain(adult, parse_domain('{"bounds": {"age": [0, 120]}}'))
    assert metadata(partial)["dp_guarantee"] is False
    full = declare_domain(adult, parse_domain(domain_template(adult.schema)))
    meta = metadata(full)
    assert meta["dp_guarantee"] is True and "declared public domain" in meta["dp_note"]


# -- the CLI's --domain ------------------------------------------------------------------------


def test_apply_domain_reads_the_file_and_names_it_in_errors(adult: Dataset, tmp_path: Path) -> None:
    assert apply_domain(adult, None) is adult
    good = tmp_path / "domain.json"
    good.write_text('{"bounds": {"age": [0, 120]}}', encoding="utf-8")
    assert apply_domain(adult, str(good)).schema.column("age").domain_public
    bad = tmp_path / "bad.json"
    bad.write_text('{"bounds": {"age": [120, 0]}}', encoding="utf-8")
    with pytest.raises(ParameterError, match=rf"--domain {bad}: The domain cannot be used") as caught:
        apply_domain(adult, str(bad))
    assert "lower bound must be below" in caught.value.problems[0]
    with pytest.raises(ParameterError, match=r"cannot be read .*check the path"):
        apply_domain(adult, str(tmp_path / "missing.json"))
