"""Who a record is: the identifier columns excluded from the generator are shown and exported first."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.cli.commands.export import export_bytes
from privgame.core.records import identifier_columns, identifiers_first
from privgame.data import BUNDLED_ADULT, Sizes, load_dataset
from privgame.games.engine import execute
from privgame.games.preflight import create_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _open(run, page: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:  # type: ignore[no-untyped-def]
    """The dashboard's ``page`` on ``run`` (its runs folder as the dashboard's)."""
    monkeypatch.setenv("PRIVGAME_RUNS", str(run.path.parent))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.query_params.update(run=run.run_id)
    return at.switch_page(f"pages/{page}.py").run()


@pytest.fixture(scope="module")
def run_with_ids(tmp_path_factory: pytest.TempPathFactory):
    """A tiny finished run on 300 Adult rows with a person id and a constant column in front."""
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    table.insert(0, "Person ID", [f"P{i:04d}" for i in range(len(table))])
    table["source"] = "census"
    dataset = load_dataset(table.to_csv(index=False).encode(), filename="people.csv")
    assert dataset.schema.column("Person ID").role == "excluded"
    spec = RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=Sizes(aux=150, eval=150, target=30).to_dict(),
        generator="identity",  # records at risk, so that the high-risk list has rows
        attack=AttackSettings(n_shadow=8, n_eval=20),
        targets=TargetSelection(mode="random", k=2),
        threshold=0.51,
        seed=0,
    ).validate()
    root = tmp_path_factory.mktemp("runs")
    return execute(create_run(root, spec, dataset.table), workers=1)


def test_identifier_columns_leave_out_constants() -> None:
    schema = {
        "columns": [
            {"name": "age", "role": "continuous"},
            {"name": "Person ID", "role": "excluded", "reason": "identifier-like: unique on every row"},
            {"name": "source", "role": "excluded", "reason": "constant: a single distinct value"},
            {"name": "note", "role": "excluded", "reason": "excluded by the user"},
        ]
    }
    records = pd.DataFrame(
        columns=["risk_model_seeded", "value:age", "value:note", "record_id", "value:Person ID"]
    )
    assert identifier_columns(records, schema) == ["value:Person ID", "value:note"]
    assert list(identifiers_first(records, schema).columns) == [
        "record_id",
        "value:Person ID",
        "value:note",
        "risk_model_seeded",
        "value:age",
    ]


@pytest.mark.parametrize("what", ["records", "high-risk"])
def test_exports_put_the_identifiers_first(run_with_ids, what: str) -> None:
    csv = pd.read_csv(io.BytesIO(export_bytes(run_with_ids, what, "csv", threshold=0.51)))
    assert len(csv) == 2
    assert list(csv.columns[:2]) == ["record_id", "value:Person ID"]
    assert "value:source" in csv.columns  # the constant stays, just not in front
    ids = {f"P{i:04d}" for i in csv["record_id"]}
    assert set(csv["value:Person ID"]) == ids  # row i of the table is person P{i}
    records = pd.read_json(io.BytesIO(export_bytes(run_with_ids, what, "json", threshold=0.51)))
    assert list(records.columns[:2]) == ["record_id", "value:Person ID"]


def test_results_and_record_pages_show_who_the_record_is(
    run_with_ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _open(run_with_ids, "3_Results", monkeypatch)
    assert not at.exception
    table = at.dataframe[-1]
    assert list(table.proto.column_order[:2]) == ["record_id", "value:Person ID"]

    record_id = int(run_with_ids.records()["record_id"].iloc[0])
    at.query_params.update(run=run_with_ids.run_id, record=str(record_id))
    at.switch_page("pages/4_Record.py").run()
    assert not at.exception
    assert f"**Person ID**: P{record_id:04d}" in "\n".join(m.value for m in at.markdown)


def test_the_export_page_orders_columns_as_the_command_line_does(
    run_with_ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both faces write their tables through service.export_frame: the same columns in the same
    order (the identifier was 2nd in the command line's high-risk CSV and 13th in the page's)."""
    import privgame.service as service

    real = service.export_frame
    made: dict[str, list[str]] = {}

    def spy(folder, what, threshold, **options):  # type: ignore[no-untyped-def]
        frame = real(folder, what, threshold, **options)
        made[what] = list(frame.columns)
        return frame

    monkeypatch.setattr(service, "export_frame", spy)
    at = _open(run_with_ids, "6_Export", monkeypatch)
    assert not at.exception
    assert set(made) == {"records", "high-risk"}
    for what, columns in made.items():
        cli = pd.read_csv(io.BytesIO(export_bytes(run_with_ids, what, "csv", threshold=0.51)))
        assert columns == list(cli.columns), what
        assert columns[:2] == ["record_id", "value:Person ID"]


def test_the_release_says_which_columns_it_leaves_out_and_why(
    run_with_ids, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from privgame.cli.main import main

    out = tmp_path / "synthetic.csv"
    assert main(["release", str(run_with_ids.path), "-o", str(out), "--accept-risk"]) == 0
    card = json.loads((tmp_path / "synthetic.card.json").read_text())
    left = {c["name"]: c["reason"] for c in card["data"]["columns_not_released"]}
    assert set(left) == {"Person ID", "source"}
    assert left["source"].startswith("constant") and left["Person ID"].startswith("identifier-like")
    released = pd.read_csv(out)
    assert not set(left) & set(released.columns)
    err = capsys.readouterr().err
    assert "The released file leaves out 2 column(s) of the table" in err and "source (constant" in err


def test_the_release_page_says_which_columns_it_leaves_out(
    run_with_ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _open(run_with_ids, "8_Release", monkeypatch)
    accept = f"accept-risk-{run_with_ids.run_id}"
    if any(box.key == accept for box in at.checkbox):
        at.checkbox(key=accept).check().run()
    at.button(key="make-release").click().run()
    assert not at.exception
    said = "\n".join(str(e.value) for e in at.info).replace("\\", "")
    assert "The released file leaves out 2 column(s) of the table" in said
    assert "Person ID (identifier-like" in said and "source (constant" in said


def test_records_are_named_by_their_identifiers_where_the_table_has_them(run_with_ids) -> None:
    from privgame.service import record_names

    record_id = int(run_with_ids.records()["record_id"].iloc[0])
    assert record_names(run_with_ids, [record_id]) == [f"Person ID P{record_id:04d} (record {record_id})"]
    assert record_names(run_with_ids, [10**9]) == [f"record {10**9}"]  # not audited: the id alone
