"""Two dashboard sessions launching runs at once, and a CLI run beside them: no run sees another's
data or results, and each session follows only its own run."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.core.records import value_column
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.data.splits import Sizes
from privgame.store.folders import RunFolder, list_runs

ROOT = Path(__file__).resolve().parents[2]


def _session(dataset) -> AppTest:  # type: ignore[no-untyped-def]
    """A dashboard session with ``dataset`` chosen on the Data page and a tiny audit set up."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = {"kind": "paper", "sizes": Sizes(aux=150, eval=150, target=30)}
    at.switch_page("pages/2_Evaluate.py").run()
    at.selectbox(key="generator").set_value("synthpop")
    at.number_input(key="n_shadow").set_value(8)
    at.number_input(key="n_eval").set_value(8)
    at.radio(key="target_mode").set_value("random").run()
    at.number_input(key="target_k").set_value(3)
    at.number_input(key="workers").set_value(1)
    return at.run()


def test_two_sessions_and_a_cli_run_stay_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adult = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna()
    tables = {name: adult.iloc[i * 300 : (i + 1) * 300] for i, name in enumerate(("alice", "bob", "cli"))}
    files = {}
    for name, table in tables.items():
        files[name] = tmp_path / f"{name}.csv"
        table.to_csv(files[name], index=False)
    root = tmp_path / "runs"
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    monkeypatch.chdir(ROOT)

    sessions = {name: _session(load_dataset(files[name])) for name in ("alice", "bob")}
    for at in sessions.values():
        at.button(key="launch").click()
    cli = subprocess.Popen(
        [sys.executable, "-m", "privgame", "run", "--setup", "paper", "--data", str(files["cli"]),
         "--generator", "synthpop", "--aux-size", "150", "--eval-size", "150", "--size", "30",
         "--targets", "3", "--n-shadow", "8", "--n-eval", "8", "--workers", "1", "--out", str(root),
         "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    for at in sessions.values():
        at.run()
        assert not at.exception, [e.value for e in at.exception]

    deadline = time.time() + 240
    while True:
        infos = list_runs(root)
        if len(infos) == 3 and all(i.state in ("done", "failed", "cancelled") for i in infos):
            break
        assert time.time() < deadline, [(i.run_id, i.state) for i in infos]
        time.sleep(0.5)
    assert cli.wait(timeout=60) == 0, cli.stderr.read() if cli.stderr else ""
    assert {i.state for i in infos} == {"done"}

    by_data = {RunFolder(i.path).spec().data_name: RunFolder(i.path) for i in infos}
    assert set(by_data) == {"alice.csv", "bob.csv", "cli.csv"}
    fingerprints = {folder.spec().data_fingerprint for folder in by_data.values()}
    assert len(fingerprints) == 3
    for name, folder in by_data.items():
        own = tables[name.removesuffix(".csv")]
        own_rows = set(map(tuple, own.astype(str).to_numpy()))
        records = folder.records()[[value_column(c) for c in own.columns]]
        assert set(map(tuple, records.astype(str).to_numpy())) <= own_rows, name
        pd.testing.assert_frame_equal(
            folder.load_table().astype(str), own.reset_index(drop=True).astype(str), check_dtype=False
        )

    # Each session follows only the run it launched.
    for name, at in sessions.items():
        at.run()
        own_id = by_data[f"{name}.csv"].run_id
        shown = "\n".join(str(m.value) for m in at.markdown)
        others = [f.run_id for n, f in by_data.items() if n != f"{name}.csv"]
        assert own_id in shown
        assert not any(run_id in shown for run_id in others), name
