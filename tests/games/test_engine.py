"""The engine end to end on small Adult samples: games, determinism, resume, sanity risks."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from blind_generator import blind_generator
from builders import small_spec

from privgame.core.errors import RunError
from privgame.core.seeding import Role
from privgame.games.engine import Progress, build_context, execute, start_run
from privgame.games.preflight import create_run
from privgame.games.work import shared_chunk
from privgame.generators import create
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.store.folders import RunFolder, new_run_folder


def _spec(path: Path, generator: str = "synthpop", **kwargs: object) -> tuple[RunSpec, pd.DataFrame]:
    return small_spec(path, generator, **kwargs)


def test_results_are_identical_with_one_and_two_workers(small_adult: Path, tmp_path: Path) -> None:
    spec, table = _spec(small_adult)
    one = start_run(tmp_path / "a", spec, table, workers=1)
    two = start_run(tmp_path / "b", spec, table, workers=2)
    assert (one.path / "records.csv").read_bytes() == (two.path / "records.csv").read_bytes()
    pd.testing.assert_frame_equal(one.scores(), two.scores())
    records = one.records()
    assert len(records) == 3
    assert records["risk_model_seeded"].between(0, 1).all()
    assert np.allclose(records["difference"], records["risk_model_seeded"] - records["risk_traditional"])
    assert one.status()["state"] == "done"
    assert one.summary()["records"] == 3


def test_a_record_gets_the_same_risk_whichever_records_are_audited_with_it(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = _spec(small_adult)
    together = start_run(tmp_path / "a", spec, table, workers=1).records()
    record_id = int(together["record_id"].iloc[1])
    alone_spec, _ = _spec(small_adult, targets=TargetSelection("ids", None, (record_id,)))
    alone = start_run(tmp_path / "b", alone_spec, table, workers=1).records()
    assert alone["risk_model_seeded"].iloc[0] == together["risk_model_seeded"].iloc[1]
    assert alone["risk_traditional"].iloc[0] == together["risk_traditional"].iloc[1]


def test_a_cancelled_run_resumes_to_identical_results(small_adult: Path, tmp_path: Path) -> None:
    spec, table = _spec(small_adult)
    reference = start_run(tmp_path / "ref", spec, table, workers=1)
    folder = create_run(tmp_path / "runs", spec, table)
    seen: list[Progress] = []

    def stop_after_first_target(p: Progress) -> None:
        seen.append(p)

    def cancel() -> bool:
        return len(folder.finished_targets()) >= 1

    execute(folder, workers=1, progress=stop_after_first_target, cancel=cancel)
    assert folder.status()["state"] == "cancelled"
    assert len(folder.finished_targets()) == 1 and not folder.has_results()
    execute(folder, workers=2)
    assert folder.status()["state"] == "done"
    assert (folder.path / "records.csv").read_bytes() == (reference.path / "records.csv").read_bytes()
    assert seen and all(0 <= p.fraction <= 1 for p in seen)


def test_a_killed_engine_resumes_to_identical_results(small_adult: Path, tmp_path: Path) -> None:
    spec, table = _spec(small_adult, targets=TargetSelection("random", 4))
    reference = start_run(tmp_path / "ref", spec, table, workers=1)
    folder = create_run(tmp_path / "runs", spec, table)
    process = subprocess.Popen(
        [sys.executable, "-m", "privgame", "resume", str(folder.path), "--workers", "1", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while len(folder.finished_targets()) < 1 and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not folder.has_results(), "the engine finished before it could be killed"
    execute(folder, workers=1)
    assert (folder.path / "records.csv").read_bytes() == (reference.path / "records.csv").read_bytes()


def test_the_identity_generator_exposes_an_outlier_in_the_model_seeded_game(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = _spec(small_adult, generator="identity", targets=TargetSelection("outliers", 1))
    records = start_run(tmp_path, spec, table, workers=1).records()
    assert records["risk_model_seeded"].iloc[0] >= 0.95


def test_a_generator_that_ignores_its_data_gives_risks_near_one_half(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = _spec(
        small_adult,
        generator="marginals",
        attack=AttackSettings(n_shadow=60, n_eval=100),
        targets=TargetSelection("random", 4),
    )
    ctx, _ = build_context(spec, table)
    with blind_generator(ctx.X[ctx.aux]) as name:
        spec = RunSpec.from_dict({**spec.to_dict(), "generator": name})
        records = start_run(tmp_path, spec, table, workers=1).records()
    # 100 evaluation runs: the AUC of a useless score has sd <= sqrt(201 / (12 * 50 * 50)) = 0.082.
    for column in ("risk_model_seeded", "risk_traditional"):
        assert (records[column] - 0.5).abs().max() < 0.25
        assert abs(records[column].mean() - 0.5) < 0.125


def test_fitting_the_model_seeded_in_models_once_equals_fitting_each(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    ctx, _ = build_context(spec, table)
    assert create("synthpop").deterministic_fit
    fast = shared_chunk(ctx, Role.MS_IN, 0, 4)
    from privgame.core.seeding import stream

    for i in range(4):
        rng = stream(ctx.seed, 0, Role.MS_IN, i)
        slow = create("synthpop").fit_sample(ctx.X[ctx.target], ctx.schema, ctx.n, rng=rng)
        assert np.array_equal(fast[i], slow)


def test_run_folder_reports_failure_for_an_impossible_plan(small_adult: Path, tmp_path: Path) -> None:
    spec, table = _spec(small_adult)
    ctx, _ = build_context(spec, table)
    outside_d = int(ctx.aux[0])
    spec, table = _spec(small_adult, targets=TargetSelection("ids", None, (outside_d,)))
    with pytest.raises(ValueError, match="not in the target dataset D"):
        create_run(tmp_path / "runs", spec, table)  # checked before anything is written
    assert not (tmp_path / "runs").exists()
    folder = new_run_folder(tmp_path, spec, table)
    with pytest.raises(ValueError, match="not in the target dataset D"):
        execute(folder, workers=1)
    assert RunFolder(folder.path).status()["state"] == "failed"


def test_a_second_live_engine_on_one_folder_is_refused(small_adult: Path, tmp_path: Path) -> None:
    spec, table = _spec(small_adult)
    folder = create_run(tmp_path, spec, table)
    # Another engine: a process holding the folder's lock (the claim is the lock, not a PID).
    holder = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode()); print('held', flush=True); "
        "time.sleep(60)"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", holder, str(folder.path / "engine.lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        folder.write_status(state="running", pid=other.pid)
        (folder.path / ".records.csv.1234.tmp").write_bytes(b"half")
        with pytest.raises(RunError, match=rf"already being run by another process \(pid {other.pid}\)"):
            execute(folder, workers=1)
        assert folder.is_running()
    finally:
        other.kill()
        other.wait()
    execute(folder, workers=1)  # the other engine is gone: resuming is allowed again
    assert folder.status()["state"] == "done"
    assert not list(folder.path.rglob(".*.tmp"))


def test_progress_moves_with_every_fit_and_at_least_every_heartbeat(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "1 of 6,001 generator fits · time left 12 min" stood still for 5 minutes: progress came once
    per unit, and a unit held hundreds of fits. Each fit now counts as it finishes, and a report
    comes at least every heartbeat while units run (10 s is the goal: 0.3 s here, against fits of
    0.1 s and target units of seconds)."""
    from slow_generator import slow_generator

    from privgame.games import live

    monkeypatch.setattr(live, "HEARTBEAT_SECONDS", 0.3)
    monkeypatch.setattr(live, "_WRITE_SECONDS", 0.0)
    seen: list[tuple[float, Progress]] = []
    with slow_generator(0.1) as name:
        spec, table = _spec(
            small_adult,
            name,
            attack=AttackSettings(n_shadow=20, n_eval=20),
            targets=TargetSelection("random", 2),
        )
        folder = create_run(tmp_path, spec, table)
        execute(folder, workers=1, progress=lambda p: seen.append((time.monotonic(), p)), estimate=20.0)
    progress = [p for _, p in seen]
    fits = [p.fits_done for p in progress]
    assert len(progress) > len(folder.records())
    assert fits == sorted(fits) and fits[-1] == progress[-1].fits_total
    # Reported once per unit, the count would take at most one value per unit (and its start).
    assert len(set(fits)) > progress[-1].total + 1
    targets = [p.fits_done for p in progress if p.phase == "targets"]
    assert len(set(targets)) > 2 + 1  # it moves inside the two targets' units too
    # A report at least every heartbeat (with a margin for a busy machine), the time left with it.
    during = [t for t, p in seen if p.phase in ("shared", "targets")]
    gaps = [b - a for a, b in itertools.pairwise(during)]
    assert max(gaps) <= 0.3 + 1.0, gaps
    left = [p.eta for p in progress if p.phase == "targets"]
    assert len(set(left)) > 2 + 1
