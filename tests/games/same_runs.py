"""Comparing a run whose records were extended with a run started at the larger N_eval."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from privgame.games.engine import execute, start_run
from privgame.games.preflight import create_run
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import RunFolder

NUMBERS = ["record_id", "risk_model_seeded", "risk_traditional", "difference", "n_eval"]
"""The columns of ``records`` that do not depend on how many looks a record's verdict had."""


def assert_same_runs(extended: RunFolder, fresh: RunFolder) -> None:
    """The same runs and risks, byte for byte; only the intervals differ, by the looks taken.

    An extension is one more look at each extended record's verdict, so its interval spends less
    error (:func:`privgame.core.metrics.look_level`) and is wider: it contains the fresh run's.
    """
    for name in ("scores.parquet", "spec.json"):
        assert (extended.path / name).read_bytes() == (fresh.path / name).read_bytes(), name
    a, b = extended.records(), fresh.records()
    pd.testing.assert_frame_equal(a[NUMBERS], b[NUMBERS])
    assert set(a["looks"]) == {2} and set(b["looks"]) == {1}
    for prefix in ("risk_model_seeded", "risk_traditional"):
        low, high = f"{prefix}_low", f"{prefix}_high"
        defined = b[low].notna()
        assert (a.loc[defined, low] <= b.loc[defined, low]).all()
        assert (a.loc[defined, high] >= b.loc[defined, high]).all()


def resumed_run(tmp_path: Path, spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """A run cancelled after its first target and resumed on two workers, checked to give the bytes
    of the same run made at once on one worker."""
    reference = start_run(tmp_path / "ref", spec, table, workers=1)
    folder = create_run(tmp_path / "runs", spec, table)
    execute(folder, workers=1, cancel=lambda: len(folder.finished_targets()) >= 1)
    assert folder.status()["state"] == "cancelled"
    execute(folder, workers=2)
    assert (folder.path / "records.csv").read_bytes() == (reference.path / "records.csv").read_bytes()
    return folder
