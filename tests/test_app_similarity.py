"""The dashboard's similarity checks: the Check a file page, and the Results and Record pages of
an audit (Streamlit's AppTest, no browser; ``tests/e2e`` clicks through them in Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import execute
from privgame.games.preflight import create_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs, with_setup

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 60


def _csv(rows: slice, drop: str | None = None) -> bytes:
    table = load_dataset(BUNDLED_ADULT).table.iloc[rows]
    if drop is not None:
        table = table.drop(columns=[drop])
    return table.to_csv(index=False).encode()


def _page(name: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.query_params.update(query)
    return at.switch_page(f"pages/{name}.py").run()


def _text(elements) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements)


@pytest.fixture
def runs_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    return root


def _upload(at: AppTest, data: bytes, synthetic: bytes, holdout: bytes) -> AppTest:
    at.file_uploader(key="check-data").set_value(("d.csv", data, "text/csv"))
    at.file_uploader(key="check-synthetic").set_value(("s.csv", synthetic, "text/csv"))
    at.file_uploader(key="check-holdout").set_value(("h.csv", holdout, "text/csv"))
    return at.run()


def test_check_a_file_compares_a_copy_and_says_what_it_cannot_show(runs_root: Path) -> None:
    at = _page("10_Check_file")
    assert at.button(key="check-file").disabled
    data = _csv(slice(0, 400))
    at = _upload(at, data, data, _csv(slice(400, 800)))
    at.button(key="check-file").click().run()
    assert not at.exception and not at.error, _text(at.error)
    assert "DCR share test fails" in _text(at.warning)
    assert "no record is called safe" in _text(at.info)
    (frame,) = at.dataframe
    assert len(frame.value) == 400 and (frame.value["dcr"] == 0).all()


def test_check_a_file_lists_every_column_difference(runs_root: Path) -> None:
    at = _upload(
        _page("10_Check_file"), _csv(slice(0, 300)), _csv(slice(300, 600), "age"), _csv(slice(600, 900))
    )
    at.button(key="check-file").click().run()
    assert not at.exception
    errors = _text(at.error)
    assert "do not match the columns of d.csv" in errors and "'age'" in errors
    assert not at.dataframe


@pytest.fixture(scope="module")
def release_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    dataset = load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")
    inputs = release_inputs(dataset, seed=0)
    kwargs = {
        "data_name": dataset.source_name,
        "generator": "identity",
        "attack": AttackSettings(n_shadow=8, n_eval=8),
        "targets": TargetSelection.plan(outliers=2, random=2),
        "threshold": 0.8,
        "seed": 0,
    }
    root = tmp_path_factory.mktemp("similarity-runs")
    spec = RunSpec(**with_setup(kwargs, inputs)).validate()
    execute(create_run(root, spec, inputs.table), workers=1)
    return root


def test_results_and_record_show_the_similarity_test_beside_the_attack(
    release_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(release_runs))
    (run_id,) = [p.name for p in release_runs.iterdir()]
    at = _page("3_Results", run=run_id)
    assert not at.exception and not at.error, _text(at.error)
    assert "Similarity test against the attack" in [s.value for s in at.subheader]
    shown = _text([*at.info, *at.warning])
    assert "The similarity test fails" in shown  # the identity generator copies D
    at = _page("4_Record", run=run_id)
    assert not at.exception
    assert "flags this record" in _text(at.caption)
