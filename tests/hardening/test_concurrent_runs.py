"""Concurrent runs in one runs folder never see each other's data or results.

Four runs on four different tables start at once under the same runs root: two the way the
dashboard starts them on "Launch the audit" (:func:`privgame.games.preflight.create_run`, then
:func:`privgame.runs.background.launch`, a detached ``privgame resume``), one with ``privgame run`` on
the command line, and one in this process (:func:`privgame.games.engine.start_run`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _hardening import REPO, cli_command
from builders import SIZES, small_spec

from privgame.core.records import value_column
from privgame.data import fingerprint_table, load_dataset
from privgame.games.engine import start_run
from privgame.games.preflight import create_run
from privgame.runs.background import launch
from privgame.settings.run_spec import TargetSelection
from privgame.store.folders import RunFolder, list_runs, open_run

ORIGINS = ("session-a", "session-b", "cli", "in-process")


@pytest.fixture(scope="module")
def tables(adult_rows: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Four CSV files of different Adult rows, each with a constant column naming its origin."""
    folder = tmp_path_factory.mktemp("tables")
    paths = {}
    for i, origin in enumerate(ORIGINS):
        rows = adult_rows.iloc[(i % 3) * 1500 : (i % 3) * 1500 + 1500].copy()
        if origin == "in-process":  # same rows as session-a, another origin: only the label differs
            rows = adult_rows.iloc[:1500].copy()
        rows["origin"] = origin
        paths[origin] = folder / f"{origin}.csv"
        rows.to_csv(paths[origin], index=False)
    return paths


def _wait(pids: list[int], seconds: float) -> None:
    """Wait for detached processes started by this test, killing any left at the deadline."""
    deadline = time.monotonic() + seconds
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                waiting.discard(pid)
        time.sleep(0.05)
    for pid in waiting:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not waiting, f"processes {sorted(waiting)} did not finish in {seconds:.0f} s"


def test_concurrent_runs_each_see_only_their_own_data_and_results(
    tables: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    targets = TargetSelection("random", 5)
    specs = {origin: small_spec(tables[origin], targets=targets) for origin in ORIGINS}
    pids = []
    for origin in ("session-a", "session-b"):
        spec, table = specs[origin]
        pids.append(launch(create_run(root, spec, table), workers=1))
    command = subprocess.Popen(
        cli_command(
            "run",
            "--setup",
            "paper",
            *("--data", str(tables["cli"]), "--generator", "synthpop", "--targets", "5"),
            *(
                "--size",
                str(SIZES["target"]),
                "--aux-size",
                str(SIZES["aux"]),
                "--eval-size",
                str(SIZES["eval"]),
            ),
            *("--n-shadow", "20", "--n-eval", "20", "--seed", "7", "--workers", "1"),
            *("--out", str(root), "--quiet"),
        ),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        len(list_runs(root)) < 3 or any(info.state not in ("running", "done") for info in list_runs(root))
    ):
        time.sleep(0.05)
    spec, table = specs["in-process"]
    start_run(root, spec, table, workers=1)
    _, err = command.communicate(timeout=300)
    assert command.returncode == 0, err.decode()
    _wait(pids, 300)

    runs = list_runs(root)
    assert sorted(p.name for p in root.iterdir()) == sorted(info.run_id for info in runs)
    assert len(runs) == 4 and all(info.state == "done" for info in runs), [(i.run_id, i.state) for i in runs]
    by_origin: dict[str, RunFolder] = {}
    for info in runs:
        folder = open_run(root, info.run_id)
        (origin,) = set(folder.load_table()["origin"])
        by_origin[origin] = folder
    assert sorted(by_origin) == sorted(ORIGINS)

    fingerprints = set()
    for origin, folder in by_origin.items():
        own = load_dataset(tables[origin]).table
        stored = folder.load_table()
        assert folder.spec().data_fingerprint == fingerprint_table(own) == fingerprint_table(stored)
        fingerprints.add(folder.spec().data_fingerprint)
        records = folder.records()
        assert len(records) == 5 and set(records[value_column("origin")]) == {origin}
        for _, record in records.iterrows():
            row = own.iloc[int(record["record_id"])]
            values = [record[value_column(c)] for c in own.columns]
            assert values == row.tolist(), (origin, int(record["record_id"]))
        status_targets = set(folder.status()["target_ids"])
        assert set(records["record_id"]) == status_targets
        assert set(folder.scores()["record_id"]) == status_targets
        assert folder.summary()["records"] == 5
    assert len(fingerprints) == 4
    spans = [(folder.status()["started"], folder.status()["finished"]) for folder in by_origin.values()]
    most = max(sum(start <= moment < end for start, end in spans) for moment, _ in spans)
    # Two background runs started together always overlap; whether the CLI's run and the
    # in-process one overlap them as well depends on the machine's load (a busy CI machine
    # starts them seconds apart), so only the overlap that does not is asserted.
    assert most >= 2, f"no two runs ran at once: {spans}"

    # Same rows and seed, another origin label: the same risks, so nothing leaked between them.
    a, same = by_origin["session-a"].records(), by_origin["in-process"].records()
    assert np.array_equal(a["record_id"], same["record_id"])
    assert np.array_equal(a["risk_model_seeded"], same["risk_model_seeded"])
