"""Runs on a real Dask cluster (separate scheduler and worker processes on 127.0.0.1).

The results must equal a local run's byte for byte, a cancel must release the cluster's tasks,
and a worker killed mid-run must not lose the run. The worker-killing test goes last: it replaces
one of the module's two workers.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from privgame.cli.main import main
from privgame.core.errors import RunError
from privgame.games.engine import Progress, execute
from privgame.games.preflight import create_run
from privgame.settings import executors as execution
from privgame.settings.executors import _submit, run_calls
from privgame.store.folders import RunFolder

SIZES = [
    "--generator",
    "synthpop",
    "--size",
    "60",
    "--aux-size",
    "700",
    "--eval-size",
    "600",
    "--seed",
    "7",
    "--quiet",
]
SMALL = ["--targets", "3", "--n-shadow", "20", "--n-eval", "20", *SIZES]
LONGER = ["--targets", "6", "--n-shadow", "40", "--n-eval", "40", *SIZES]
# Units sized by cost would put these small runs' targets in one or two units; the tests need one
# target per unit to cancel or kill between units.
ONE_TARGET_PER_UNIT = {"shadow_out": 4, "ms_in": 4, "targets": 1}


def _only_run(out: Path) -> RunFolder:
    folders = [p for p in out.iterdir() if (p / "spec.json").is_file()]
    assert len(folders) == 1, folders
    return RunFolder(folders[0])


def _local_run(data: Path, out: Path, options: list[str]) -> RunFolder:
    assert (
        main(["run", "--setup", "paper", "--data", str(data), *options, "--workers", "1", "--out", str(out)])
        == 0
    )
    return _only_run(out)


def _cli(data: Path, out: Path, options: list[str], *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "privgame",
        "run",
        "--setup",
        "paper",
        "--data",
        str(data),
        *options,
        "--out",
        str(out),
        *extra,
    ]


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PRIVGAME_SCHEDULER"}
    env.update(values)
    return env


def _scheduler_tasks(cluster: Any) -> int:
    return int(cluster.client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))


def _wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {seconds:g} s waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def local_run(small_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _local_run(small_csv, tmp_path_factory.mktemp("local"), SMALL)


def _cluster_run(cluster: Any, data: Path, out: Path, options: list[str]) -> RunFolder:
    """``privgame run`` on the cluster, in a process of its own; the finished run."""
    done = subprocess.run(
        _cli(data, out, options, "--scheduler", cluster.address),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr + cluster.logs()
    return _only_run(out)


def test_a_cli_run_on_the_cluster_equals_a_local_run(
    cluster: Any, small_csv: Path, local_run: RunFolder, tmp_path: Path
) -> None:
    out = tmp_path / "runs"
    folder = _cluster_run(cluster, small_csv, out, SMALL)
    assert (folder.path / "records.csv").read_bytes() == (local_run.path / "records.csv").read_bytes()
    assert folder.scores().equals(local_run.scores())
    status = folder.status()
    assert (status["state"], status["executor"], status["scheduler"]) == ("done", "dask", cluster.address)
    assert local_run.status()["executor"] == "in-process"
    assert status["unit_plan"]["targets"] >= 1


def test_the_screen_on_the_cluster_equals_the_local_screen(
    cluster: Any, small_csv: Path, tmp_path: Path
) -> None:
    screen = ["--screen", "all", "--screen-shadows", "40", "--confirm-top", "1", *SMALL]
    local = _local_run(small_csv, tmp_path / "local", screen)
    out = tmp_path / "runs"
    folder = _cluster_run(cluster, small_csv, out, screen)
    assert folder.has_screen() and len(folder.screen()) == folder.spec().sizes["target"]
    assert (folder.path / "screen.parquet").read_bytes() == (local.path / "screen.parquet").read_bytes()
    assert (folder.path / "records.csv").read_bytes() == (local.path / "records.csv").read_bytes()


def test_every_attack_on_the_cluster_equals_the_local_run(
    cluster: Any, small_csv: Path, tmp_path: Path
) -> None:
    attacks = ["--attacks", "all", *SMALL]
    local = _local_run(small_csv, tmp_path / "local", attacks)
    folder = _cluster_run(cluster, small_csv, tmp_path / "runs", attacks)
    assert len(folder.spec().attack.attacks) == 4  # every attack that applies to Synthpop
    assert (folder.path / "records.csv").read_bytes() == (local.path / "records.csv").read_bytes()
    assert folder.scores().equals(local.scores())


def test_a_cancel_releases_the_clusters_tasks_and_the_run_resumes_identically(
    cluster: Any, local_run: RunFolder, tmp_path: Path
) -> None:
    folder = create_run(tmp_path, local_run.spec(), local_run.load_table())
    folder.write_status(unit_plan=ONE_TARGET_PER_UNIT)
    seen: list[Progress] = []
    execute(
        folder,
        scheduler=cluster.address,
        progress=seen.append,
        cancel=lambda: len(folder.finished_targets()) >= 1,
    )
    assert folder.status()["state"] == "cancelled"
    assert len(folder.finished_targets()) == 1 and not folder.has_results()
    _wait_until(lambda: _scheduler_tasks(cluster) == 0, 15, "the scheduler to forget the cancelled tasks")
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and 0 < fractions[-1] < 1
    assert seen[-1].eta is not None and seen[-1].eta > 0

    execute(folder, scheduler=cluster.address)
    assert (folder.path / "records.csv").read_bytes() == (local_run.path / "records.csv").read_bytes()
    assert len(list((folder.path / "shared").glob("shadow_out-*.npz"))) == 3  # the recorded plan: 4 + 4 + 2


def test_shared_objects_are_shipped_to_every_worker_once(cluster: Any) -> None:
    client = cluster.client
    big = np.arange(1_000_000, dtype=np.float64)  # 8 MB
    calls = {i: (i, np.sum, (big,)) for i in range(4)}
    scattered, futures = _submit(client, calls, [big])
    try:
        assert [result[1] for result in client.gather(list(futures))] == [big.sum()] * 4
        [data_key] = [f.key for f in scattered]
        workers = set(client.scheduler_info()["workers"])
        # Broadcast copies land in the scheduler's books asynchronously; on a loaded machine a
        # little after the results.
        _wait_until(lambda: set(client.who_has(scattered)[data_key]) == workers, 30, "a copy on every worker")

        def task_specs(dask_scheduler: Any, keys: list[str]) -> list[tuple[list[str], bytes]]:
            tasks = [dask_scheduler.tasks[k] for k in keys]
            return [([d.key for d in t.dependencies], pickle.dumps(t.run_spec)) for t in tasks]

        for dependencies, spec in client.run_on_scheduler(task_specs, keys=[f.key for f in futures]):
            assert dependencies == [data_key]
            assert len(spec) < 100_000  # the task refers to the data; it does not carry it
    finally:
        client.cancel([*futures, *scattered], force=True)


def test_an_error_in_a_unit_reaches_the_caller(cluster: Any) -> None:
    with pytest.raises(ValueError, match="invalid literal for int"):
        list(run_calls([(0, int, ("x",))], scheduler=cluster.address))


def test_workers_that_cannot_import_privgame_are_refused_with_the_fix(
    start_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    fake = tmp_path / "elsewhere" / "privgame"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("not this privgame")\n')
    with start_cluster(tmp_path / "dask", workers=1, env={"PYTHONPATH": str(fake.parent)}) as other:
        expected = r"1 of the 1 workers .* cannot run privgame .*not this privgame.*install the same privgame"
        with pytest.raises(RunError, match=expected):
            list(run_calls([(0, np.sum, ([1, 2],))], scheduler=other.address))


def test_units_are_resubmitted_when_the_only_copy_of_the_shared_data_is_lost(
    start_cluster: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds: list[int] = []

    def counted(client: Any, calls: dict[int, Any], shared: Any) -> Any:
        rounds.append(len(calls))
        return _submit(client, calls, shared)

    monkeypatch.setattr(execution, "_submit", counted)
    pause = 0.4  # shared by every call, so each task depends on the scattered copy
    calls = [(k, time.sleep, (pause,)) for k in range(6)]
    with start_cluster(tmp_path / "dask", workers=1) as lonely:
        results = run_calls(calls, scheduler=lonely.address, shared=[pause])
        keys = [next(results)[0]]
        lonely.kill_worker(lonely.workers[0])  # the only worker, and the only copy of the shared data
        lonely.start_worker()
        keys += [key for key, _, _ in results]
    assert sorted(keys) == list(range(6))
    assert len(rounds) == 2 and rounds[0] == 6 and 1 <= rounds[1] <= 5  # the unfinished ones, again


def test_a_run_survives_a_worker_killed_mid_run(cluster: Any, small_csv: Path, tmp_path: Path) -> None:
    reference = _local_run(small_csv, tmp_path / "local", LONGER)
    folder = create_run(tmp_path / "runs", reference.spec(), reference.load_table())
    folder.write_status(unit_plan=ONE_TARGET_PER_UNIT)
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "privgame", "resume", str(folder.path), "--quiet"],
            env=_env(PRIVGAME_SCHEDULER=cluster.address),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:

        def two_targets_done() -> bool:
            if process.poll() is not None:
                pytest.fail(f"the run ended early:\n{log.read_text()}\n{cluster.logs()}")
            return len(folder.finished_targets()) >= 2

        _wait_until(two_targets_done, 120, "two targets to finish")
        # Kill a worker that is running a unit, with its nanny, as if its host died.
        busy = [address for address, keys in cluster.client.processing().items() if keys]
        assert busy, "no worker was running a unit"
        worker_pid = cluster.client.run(os.getpid, workers=busy[:1])[busy[0]]
        cluster.kill_worker(next(w for w in cluster.workers if w.pid == os.getpgid(worker_pid)))
        assert not folder.has_results(), "the run finished before a worker could be killed"
        cluster.start_worker()
        assert process.wait(timeout=180) == 0, log.read_text() + cluster.logs()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    status = folder.status()
    assert (status["state"], status["executor"]) == ("done", "dask")
    assert (folder.path / "records.csv").read_bytes() == (reference.path / "records.csv").read_bytes()
    assert busy[0] not in cluster.client.scheduler_info()["workers"]  # the scheduler saw it go
