"""The missing-value policy, and load_dataset from file to audit-ready table."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.core.errors import DataError, ParameterError
from privgame.data import (
    BUNDLED_ADULT,
    MISSING_CATEGORY,
    Schema,
    decode,
    encode,
    fingerprint_table,
    infer_schema,
    inspect_dataset,
    load_dataset,
    prepare_table,
)


def test_drop_policy_on_adult(adult_raw: pd.DataFrame) -> None:
    prepared = prepare_table(adult_raw, infer_schema(adult_raw))
    assert len(prepared.table) == 45_222
    assert prepared.dropped_rows == 3_620
    assert list(prepared.table.index) == list(range(45_222))
    assert not prepared.table.isna().any().any()
    assert prepared.notes == (
        "Dropped 3,620 of 48,842 rows (7.4%) with a missing value in a used column "
        "(workclass: 2,799, occupation: 2,809, native-country: 857).",
    )
    assert prepared.schema.notes == prepared.notes
    workclass = prepared.schema.column("workclass")
    assert workclass.missing == 2_799  # counted in the file
    assert workclass.distinct == len(workclass.categories or ()) == 7
    assert "Never-worked" not in workclass.categories  # only in dropped rows
    X = encode(prepared.table, prepared.schema)
    assert X.shape == (45_222, 15)


def test_category_policy_on_adult(adult_raw: pd.DataFrame) -> None:
    prepared = prepare_table(adult_raw, infer_schema(adult_raw, missing_policy="category"))
    assert len(prepared.table) == 48_842
    assert prepared.dropped_rows == 0
    for name in ("workclass", "occupation", "native-country"):
        assert MISSING_CATEGORY in prepared.schema.column(name).categories
        assert (prepared.table[name] == MISSING_CATEGORY).sum() == adult_raw[name].isna().sum()
    assert MISSING_CATEGORY not in prepared.schema.column("education").categories
    assert prepared.notes == (
        "Missing values became the category '<missing>' in workclass, occupation, native-country.",
    )
    X = encode(prepared.table, prepared.schema)
    back = decode(X, prepared.schema)
    assert back["workclass"].tolist()[:50] == prepared.table["workclass"].tolist()[:50]


def test_category_policy_still_drops_missing_continuous_values() -> None:
    table = pd.DataFrame(
        {
            "colour": ["red", None, "blue", "red", None, "blue"] * 5,
            "size": [1.5, 2.5, np.nan, 4.5, 5.5, 6.5] * 5,
            "code": [1, np.nan, 2, 1, 2, 3] * 5,
        }
    )
    prepared = prepare_table(table, infer_schema(table, missing_policy="category"))
    assert prepared.dropped_rows == 5
    assert prepared.notes[0].startswith(
        "Dropped 5 of 30 rows (16.7%) with a missing value in a continuous column (size: 5)"
    )
    assert prepared.schema.column("colour").categories == ("<missing>", "blue", "red")
    code = prepared.schema.column("code")
    assert code.role == "categorical"
    assert set(code.categories) == {1, 2, 3, MISSING_CATEGORY}  # whole numbers again, not 1.0


def test_drop_restores_whole_numbers_that_missing_values_made_float() -> None:
    table = pd.DataFrame({"code": [1, 2, np.nan, 3] * 10, "size": np.arange(40) + 0.5})
    prepared = prepare_table(table, infer_schema(table))
    assert prepared.table["code"].dtype == np.int64
    assert prepared.schema.column("code").categories == (1, 2, 3)


def test_declared_domains_survive_the_policy() -> None:
    table = pd.DataFrame({"colour": ["red", None, "blue"] * 10, "size": np.arange(30) + 0.5})
    schema = infer_schema(table, missing_policy="category").with_domain(
        categories={"colour": ["red", "blue", "green"]}, bounds={"size": (0.0, 100.0)}
    )
    prepared = prepare_table(table, schema)
    colour = prepared.schema.column("colour")
    assert colour.categories == ("red", "blue", "green", MISSING_CATEGORY)
    assert colour.domain_public
    assert (prepared.schema.column("size").lower, prepared.schema.column("size").upper) == (
        0.0,
        100.0,
    )


def test_prepare_is_idempotent_and_rejects_unknown_policies(adult_raw: pd.DataFrame) -> None:
    once = prepare_table(adult_raw.head(500), infer_schema(adult_raw.head(500)))
    twice = prepare_table(once.table, once.schema)
    assert twice.dropped_rows == 0
    pd.testing.assert_frame_equal(twice.table, once.table)
    assert twice.schema == once.schema
    bad = Schema(columns=(), missing_policy="impute")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="Unknown missing-value policy 'impute'"):
        prepare_table(adult_raw.head(50), bad)


def test_load_dataset_on_the_bundled_adult() -> None:
    dataset = load_dataset(BUNDLED_ADULT)
    assert len(dataset.table) == 45_222
    assert dataset.dropped_rows == 3_620
    assert dataset.source_name == "adult.csv.gz"
    assert re.fullmatch(r"[0-9a-f]{64}", dataset.fingerprint)
    assert dataset.fingerprint == fingerprint_table(dataset.table)
    assert len(dataset.schema.used) == 15


def test_fingerprint_is_stable_across_formats_and_changes_with_the_data(tmp_path: Path) -> None:
    text = "colour,size,code\n" + "".join(f"{'rgb'[i % 3]},{i * 0.5},{i % 4}\n" for i in range(40))
    plain = load_dataset(text.encode(), filename="t.csv")
    packed = load_dataset(gzip.compress(text.encode()), filename="t.csv.gz")
    plain.table.to_parquet(tmp_path / "t.parquet")
    parquet = load_dataset(tmp_path / "t.parquet")
    assert plain.fingerprint == packed.fingerprint == parquet.fingerprint
    changed = load_dataset(text.replace("r,0.0,0", "g,0.0,0").encode(), filename="t.csv")
    assert changed.fingerprint != plain.fingerprint


def test_load_dataset_roles_and_missing_policy() -> None:
    text = "colour,size,code\n" + "".join(
        f"{'?' if i % 7 == 0 else 'rgb'[i % 3]},{i * 0.5},{i % 4}\n" for i in range(40)
    )
    dropped = load_dataset(text.encode(), filename="t.csv", roles={"code": "continuous"})
    assert dropped.dropped_rows == 6
    assert dropped.schema.column("code").role == "continuous"
    kept = load_dataset(text.encode(), filename="t.csv", missing_policy="category")
    assert len(kept.table) == 40
    with pytest.raises(ParameterError, match="Unknown missing-value policy 'mean'"):
        load_dataset(text.encode(), filename="t.csv", missing_policy="mean")  # type: ignore[arg-type]


def test_load_dataset_raises_one_error_with_every_problem() -> None:
    sizes = [f"{i}.5" if i != 3 else "inf" for i in range(30)]
    text = "id,colour,notes,size\n" + "".join(f"{i},{'rg'[i % 2]},,{sizes[i]}\n" for i in range(30))
    with pytest.raises(DataError) as error:
        load_dataset(text.encode(), filename="bad.csv", roles={"nope": "categorical"})
    assert error.value.summary == "bad.csv cannot be used for an audit."
    problems = error.value.problems
    assert len(problems) == 3
    assert problems[0].startswith("column 'nope': no such column")
    assert problems[1].startswith("column 'notes': every value is missing")
    assert problems[2].startswith("column 'size': 1 infinite value (inf)")


def test_too_few_rows_after_the_policy_is_a_problem() -> None:
    found = inspect_dataset(b"a,b\n1,x\n2,y\n3,x\n", filename="tiny.csv")
    assert found.problems == (
        "only 3 rows are left after the missing-value policy; an audit needs at least 10: add "
        "rows, or keep more rows by making missing values a category of their own (missing policy "
        '"category").',
    )
    assert len(found.table) == 3


def test_file_level_problems_still_raise_from_load_dataset(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="column name 'a' appears 2 times"):
        load_dataset(b"a,a\n1,2\n", filename="dup.csv")
    with pytest.raises(FileNotFoundError):
        load_dataset(tmp_path / "missing.csv")
