"""A table's column names can never take the place of privgame's own columns, nor of each other.

* A Parquet file whose stored pandas index is named like a column is read, not a traceback.
* An unnamed CSV column gets a name no other column of the header has.
* A run's records keep the record's values under ``value:<name>``, so data columns named
  ``record_id``, ``risk_model_seeded``, ``difference`` (...) never replace the results, and every
  reader (report, exports, HTML, release card, figures) names the right records. Records written
  in the older layout (values under their bare names) still read.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import small_spec

from privgame.cli.commands.export import export_bytes
from privgame.cli.main import main
from privgame.core.errors import DataError
from privgame.core.records import RESULT_COLUMNS, normalise_records, value_column, value_columns
from privgame.data import load_table
from privgame.games.engine import start_run
from privgame.outputs import figures
from privgame.outputs.release import make_release
from privgame.outputs.run_report import high_risk, html_report, record_profile
from privgame.store.folders import RunFolder

# ---- a Parquet index named like a column -------------------------------------------------------


def _frame(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame({"age": np.arange(n) % 7 + 20, "x": list("abcd") * (n // 4)})


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


INDEXED = {
    "copy-of-a-column": lambda f: f.set_index("age", drop=False),
    "moved-to-the-index": lambda f: f.set_index("age"),
    "two-levels-both-copies": lambda f: f.set_index(["age", "x"], drop=False),
    "one-level-a-copy": lambda f: f.assign(person=range(100, 100 + len(f))).set_index(
        ["person", "age"], drop=False
    ),
    "unnamed-beside-a-column-index": lambda f: f.assign(index=7).iloc[::-1].set_index(np.arange(len(f)) * 3),
    "named-row-range": lambda f: f.set_index(pd.RangeIndex(5, 5 + len(f), name="row")),
}


@pytest.mark.parametrize("case", sorted(INDEXED))
def test_a_stored_index_named_like_a_column_is_read(case: str) -> None:
    frame = _frame()
    stored = INDEXED[case](frame)
    table = load_table(_parquet(stored), filename=f"{case}.parquet")
    assert isinstance(table.index, pd.RangeIndex) and table.index.start == 0
    assert table.columns.is_unique
    assert table["age"].tolist() == stored["age"].tolist() if "age" in stored else True
    assert set(table.columns) >= {"age", "x"}


def test_a_copy_of_a_column_is_dropped_and_a_meaningful_index_is_kept() -> None:
    frame = _frame()
    assert list(load_table(_parquet(frame.set_index("age", drop=False)), filename="a.parquet").columns) == [
        "age",
        "x",
    ]
    both = frame.assign(person=range(100, 140)).set_index(["person", "age"], drop=False)
    assert list(load_table(_parquet(both), filename="b.parquet").columns) == ["age", "x", "person"]
    moved = frame.assign(person=range(100, 140)).set_index("person")
    assert list(load_table(_parquet(moved), filename="m.parquet").columns) == ["person", "age", "x"]
    ranged = load_table(_parquet(frame.set_index(pd.RangeIndex(5, 45, name="row"))), filename="c.parquet")
    assert list(ranged.columns) == ["row", "age", "x"] and ranged["row"].tolist() == list(range(5, 45))


def test_an_index_named_like_a_column_but_holding_other_values_is_refused() -> None:
    frame = _frame()
    other = frame.set_index(pd.Index(np.arange(40) * 2, name="age"))  # the column 'age' stays
    with pytest.raises(
        DataError, match=r"the index 'age' stored in other.parquet has the same name as a column"
    ):
        load_table(_parquet(other), filename="other.parquet")


@pytest.mark.parametrize("case", ["copy-of-a-column", "two-levels-both-copies"])
def test_schema_and_run_read_a_parquet_with_an_index_named_like_a_column(
    case: str, adult_rows: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    columns = ["age", "workclass", "education", "gender", "hours-per-week"]
    index = ["age"] if case == "copy-of-a-column" else ["age", "gender"]
    path = tmp_path / "indexed.parquet"
    adult_rows.iloc[:600][columns].set_index(index, drop=False).to_parquet(path)
    assert main(["schema", str(path)]) == 0
    out = capsys.readouterr().out
    assert "indexed.parquet: 5 columns, 600 rows" in out
    argv = ["run", "--data", str(path), "--generator", "marginals", "--setup", "paper", "--size", "60"]
    argv += ["--targets", "2", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    assert main([*argv, "--out", str(tmp_path / "runs"), "--quiet"]) == 0, capsys.readouterr().err


# ---- an unnamed CSV column ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("age,,Unnamed: 1,x", ["age", "Unnamed: 1 (2)", "Unnamed: 1", "x"]),
        ("age,,Unnamed: 1,Unnamed: 1 (2),x", ["age", "Unnamed: 1 (3)", "Unnamed: 1", "Unnamed: 1 (2)", "x"]),
        (",age,,x", ["Unnamed: 0", "age", "Unnamed: 2", "x"]),
        ("Unnamed: 2,age,,x", ["Unnamed: 2", "age", "Unnamed: 2 (2)", "x"]),
    ],
)
def test_an_unnamed_column_never_replaces_a_named_one(header: str, expected: list[str]) -> None:
    width = len(header.split(","))
    rows = "\n".join(",".join(str(10 * r + j) for j in range(width)) for r in range(3))
    table = load_table(f"{header}\n{rows}\n".encode(), filename="unnamed.csv")
    assert list(table.columns) == expected
    assert table.shape == (3, width)
    for j, name in enumerate(expected):  # every column keeps its own values
        assert table[name].tolist() == [10 * r + j for r in range(3)]


# ---- records: the data's names never take the place of the results -------------------------------

HOSTILE_NAMES = (
    "record_id",
    "risk_model_seeded",
    "difference",
    "audit_group",
    "n_eval",
    "verdict_model_seeded",
    "outlier_score",
    "missed_by_traditional",
    "value:age",
)


def _hostile_table(adult_rows: pd.DataFrame, record_id: str) -> pd.DataFrame:
    table = adult_rows.iloc[:1500, :6].copy().reset_index(drop=True)
    rng = np.random.default_rng(5)
    if record_id == "int":
        table["record_id"] = rng.choice(np.arange(10_000_000, 99_999_999), len(table), replace=False)
    else:
        table["record_id"] = [f"=ID-{i:05d}" for i in rng.permutation(len(table))]
    table["risk_model_seeded"] = ["high", "low", "=1+1"] * 500
    table["difference"] = rng.normal(100.0, 1.0, len(table)).round(3)
    table["audit_group"] = ["outlier"] * 1500
    table["n_eval"] = 7
    table["verdict_model_seeded"] = "at risk"
    table["outlier_score"] = -5.0
    table["missed_by_traditional"] = "yes"
    table["value:age"] = table["age"] * 2
    return table


@pytest.fixture(scope="module", params=["int", "text"])
def hostile_run(
    request: pytest.FixtureRequest, adult_rows: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> tuple[RunFolder, pd.DataFrame]:
    folder = tmp_path_factory.mktemp(f"hostile-{request.param}")
    path = folder / "hostile.csv"
    _hostile_table(adult_rows, request.param).to_csv(path, index=False)
    # The identity generator, so that records are at risk and the high-risk list has rows.
    spec, table = small_spec(path, generator="identity")
    return start_run(folder / "runs", spec, table, workers=1), table


def test_results_keep_their_own_columns_whatever_the_data_calls_its_own(
    hostile_run: tuple[RunFolder, pd.DataFrame],
) -> None:
    run, table = hostile_run
    records = run.records()
    assert records.columns.is_unique
    ids = records["record_id"].to_numpy()
    assert ids.dtype.kind == "i" and set(ids) == set(run.status()["target_ids"]) and (ids < len(table)).all()
    for column in ("risk_model_seeded", "difference", "outlier_score"):
        values = records[column].to_numpy(float)
        assert np.isfinite(values).all()
    assert ((records["risk_model_seeded"] >= 0) & (records["risk_model_seeded"] <= 1)).all()
    assert np.allclose(records["difference"], records["risk_model_seeded"] - records["risk_traditional"])
    assert set(records["audit_group"]) == {"random"}  # the spec's group, not the data's 'outlier'
    assert (records["n_eval"] == run.spec().attack.n_eval).all()
    for _, record in records.iterrows():  # each record's own values, under value:<name>
        row = table.iloc[int(record["record_id"])]
        assert [record[value_column(c)] for c in table.columns] == row.tolist()
    assert set(value_columns(records)) == {value_column(c) for c in table.columns}
    assert not set(RESULT_COLUMNS) & set(value_columns(records))


def test_every_reader_names_the_right_records(hostile_run: tuple[RunFolder, pd.DataFrame]) -> None:
    run, _ = hostile_run
    records = run.records()
    ids = set(records["record_id"].astype(int))
    summary = json.loads(export_bytes(run, "spec"))
    assert summary["generator"] == "identity"
    for fmt in ("csv", "json", "parquet"):
        data = export_bytes(run, "records", fmt)
        exported = (
            pd.read_parquet(io.BytesIO(data))
            if fmt == "parquet"
            else pd.read_json(io.BytesIO(data))
            if fmt == "json"
            else pd.read_csv(io.BytesIO(data))
        )
        assert set(exported["record_id"].astype(int)) == ids, fmt
        assert "value:record_id" in exported.columns and "value:value:age" in exported.columns
    listed = high_risk(records, 0.51)
    assert len(listed) and set(listed["record_id"]) <= ids
    page = html_report(run, 0.51)  # a text record_id once crashed here
    # The data's own record_id and value:age columns, named as the data names them, in each
    # high-risk record's cell of values (beside privgame's record id, its first cell).
    cells = re.findall(r"<td class='values'>(.*?)</td>", page)
    assert cells and all("record_id: " in cell and "value:age: " in cell for cell in cells)
    for rid in records["record_id"].astype(int):
        assert f"<td class='num'>{rid}</td>" in page
    profile = record_profile(run, int(records["record_id"].iloc[0]))
    assert profile["risks"]["record_id"] == int(records["record_id"].iloc[0])
    assert set(figures.risk_scatter(records, 0.8).data["record_id"]) == ids
    card = make_release(run, rows=5, accept_risk=True).card
    assert set(card["audit"]["at_risk_record_ids"]) <= ids


def test_records_written_in_the_old_layout_still_read(
    hostile_run: tuple[RunFolder, pd.DataFrame], tmp_path: Path
) -> None:
    run, _ = hostile_run
    new = run.records()
    old = new.drop(columns=[value_column(c) for c in HOSTILE_NAMES])  # lost to the results then
    old = old.rename(columns={c: c.removeprefix("value:") for c in value_columns(old)})
    assert not value_columns(old)
    read = normalise_records(old)
    assert read["record_id"].tolist() == new["record_id"].tolist()
    assert read[value_column("age")].tolist() == new[value_column("age")].tolist()
    assert normalise_records(read) is read  # idempotent


def test_an_old_run_folder_reads_and_exports(adult_rows: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    adult_rows.iloc[:1500, :6].to_csv(path, index=False)
    spec, table = small_spec(path, generator="marginals")
    run = start_run(tmp_path / "runs", spec, table, workers=1)
    new = run.records()
    old = new.rename(columns={c: c.removeprefix("value:") for c in value_columns(new)})
    run.write_results(old, run.scores(), run.summary())  # as a run of an earlier version wrote it
    pd.testing.assert_frame_equal(run.records(), new)
    assert "value:age" in export_bytes(run, "records", "csv").decode().splitlines()[0]
    assert "<td class='num'>" in html_report(run)


@pytest.mark.parametrize(
    "content",
    [
        b'a,"multi\nline"\n1,2\n3,4\n5,6\n',
        b'\n\na,"x\r\ny"\r\n1,2\r\n3,4\r\n5,6\r\n',
        b'"a\rb",c\n1,2\n3,4\n5,6\n',
    ],
    ids=["line-feed", "blank-lines-and-crlf", "carriage-return"],
)
def test_a_header_name_over_several_lines_loses_no_row(content: bytes) -> None:
    table = load_table(content, filename="multiline.csv")
    assert table.to_numpy().tolist() == [[1, 2], [3, 4], [5, 6]]
