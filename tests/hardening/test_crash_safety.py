"""Crash safety: an engine killed at random points resumes to the results of an uninterrupted run;
no file is ever half-written, and every result and checkpoint is checked on load (checksums)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _hardening import REPO, cli_command
from builders import small_spec

from privgame.core.errors import RunError
from privgame.games.engine import execute, start_run
from privgame.games.preflight import create_run
from privgame.settings.run_spec import TargetSelection
from privgame.store.folders import CHECKSUMS, LOCK, RunFolder, atomic_write

_TEMPORARY = re.compile(r"^\..+\.[0-9a-f]{8}\.tmp$")
_LINE = re.compile(r"^([0-9a-f]{64})  (\S+)$")


def _checksum_lines(folder: RunFolder) -> list[tuple[str, str]]:
    text = (folder.path / CHECKSUMS).read_text()
    return [(m.group(2), m.group(1)) for m in map(_LINE.match, text.splitlines()) if m]


def _checkpoints(folder: RunFolder) -> int:
    return sum(1 for _ in folder.path.glob("*/*.npz"))


def _assert_nothing_half_written(folder: RunFolder) -> None:
    """Every file a reader may open is whole: it parses, and matches its checksum if it has one."""
    recorded = dict(_checksum_lines(folder))
    for path in folder.path.rglob("*"):
        if path.is_dir() or _TEMPORARY.match(path.name):
            continue  # a temporary file left by the kill is never read; the next write replaces it
        relative = path.relative_to(folder.path).as_posix()
        data = path.read_bytes()
        if path.suffix == ".json":
            json.loads(data)
        elif path.suffix == ".npz":
            with np.load(io.BytesIO(data)) as arrays:
                assert arrays.files
        elif path.suffix == ".parquet":
            pd.read_parquet(io.BytesIO(data))
        if relative in recorded:
            assert hashlib.sha256(data).hexdigest() == recorded[relative], relative


def test_an_engine_killed_at_random_points_resumes_to_the_uninterrupted_results(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = small_spec(small_adult, targets=TargetSelection("random", 10))
    reference = start_run(tmp_path / "reference", spec, table, workers=1)
    folder = create_run(tmp_path / "runs", spec, table)
    rng = np.random.default_rng(20261130)
    planned = int(rng.integers(3, 6))
    killed: list[tuple[int, float]] = []
    for attempt in range(planned):
        before = _checkpoints(folder)
        process = subprocess.Popen(
            cli_command("resume", str(folder.path), "--workers", "1", "--quiet"),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if attempt == 0:
            # Anywhere from the start-up to the first units: imports, the plan, the shared phase.
            delay = float(rng.uniform(0.5, 4.0))
        else:
            # Once the engine has made progress (a new checkpoint), after a random delay, so that
            # the kills land in different units, in a computation or in a write.
            deadline = time.monotonic() + 120
            while process.poll() is None and _checkpoints(folder) == before and time.monotonic() < deadline:
                time.sleep(0.01)
            delay = float(rng.uniform(0.0, 0.3))
        time.sleep(delay)
        if process.poll() is not None:
            break  # it finished first
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        killed.append((_checkpoints(folder), delay))
        _assert_nothing_half_written(folder)
    assert len(killed) >= 3, f"the engine finished after {len(killed)} kills: {killed}"
    assert killed[0][0] < killed[-1][0], "no progress between the kills"

    execute(folder, workers=1)
    assert folder.status()["state"] == "done"
    assert (folder.path / "records.csv").read_bytes() == (reference.path / "records.csv").read_bytes()
    pd.testing.assert_frame_equal(folder.scores(), reference.scores())
    assert folder.summary() == reference.summary()
    _assert_nothing_half_written(folder)


# ---- checksums -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(small_adult: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    spec, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 2))
    return start_run(tmp_path_factory.mktemp("finished"), spec, table, workers=1)


@pytest.fixture()
def run(finished: RunFolder, tmp_path: Path) -> RunFolder:
    """A copy of a finished run, free to damage."""
    return RunFolder(shutil.copytree(finished.path, tmp_path / finished.run_id))


def _damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_every_file_of_a_run_has_its_checksum_in_sha256sum_format(run: RunFolder) -> None:
    recorded = dict(_checksum_lines(run))
    files = {
        p.relative_to(run.path).as_posix()
        for p in run.path.rglob("*")
        if p.is_file() and p.name not in ("status.json", CHECKSUMS, LOCK)
    }
    assert files == set(recorded)
    for relative, digest in recorded.items():
        assert hashlib.sha256((run.path / relative).read_bytes()).hexdigest() == digest
    if shutil.which("sha256sum"):
        done = subprocess.run(
            ["sha256sum", "--check", "--strict", "--quiet", CHECKSUMS], cwd=run.path, check=False
        )
        assert done.returncode == 0


def test_the_results_are_written_last_with_records_parquet_the_very_last(run: RunFolder) -> None:
    order = [relative for relative, _ in _checksum_lines(run)]
    assert order[-4:-1] == ["scores.parquet", "summary.json", "records.csv"]
    assert order[-1] == "records.parquet"
    assert order.index("records.parquet") > max(i for i, r in enumerate(order) if r.startswith("targets/"))


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("records.parquet", RunFolder.records),
        ("scores.parquet", RunFolder.scores),
        ("summary.json", RunFolder.summary),
    ],
)
def test_a_damaged_result_is_named_and_resuming_rewrites_it(
    run: RunFolder, name: str, read: object, finished: RunFolder
) -> None:
    _damage(run.path / name)
    with pytest.raises(RunError, match=rf"{re.escape(name)} of run .* does not match the SHA-256") as error:
        read(run)  # type: ignore[operator]
    assert f"python -m privgame resume {run.path}" in str(error.value)
    execute(run, workers=1)
    assert (run.path / name).read_bytes() == (finished.path / name).read_bytes()
    pd.testing.assert_frame_equal(run.records(), finished.records())


def test_a_damaged_checkpoint_is_recomputed_on_resume(run: RunFolder, finished: RunFolder) -> None:
    target = run.finished_targets()[0]
    _damage(run.path / "targets" / f"{target:09d}.npz")
    shared = sorted((run.path / "shared").glob("ms_in-*.npz"))[0]
    _damage(shared)
    with pytest.raises(RunError, match=rf"targets/{target:09d}.npz of run .* does not match"):
        run.load_target(target)
    with pytest.raises(RunError, match=rf"shared/{shared.name} of run .* does not match"):
        run.load_shared("ms_in")
    assert not run.target_done(target)
    assert not run.shared_done("ms_in", int(shared.stem.split("-")[1]))
    execute(run, workers=1)
    assert run.target_done(target)
    assert (run.path / "records.csv").read_bytes() == (finished.path / "records.csv").read_bytes()
    _assert_nothing_half_written(run)


def test_a_checkpoint_written_without_its_checksum_is_not_trusted(run: RunFolder) -> None:
    """The engine killed between a checkpoint's rename and its checksum line."""
    target = run.finished_targets()[0]
    arrays = run.load_target(target)
    (run.path / "targets" / f"{target:09d}.npz").unlink()
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write(run.path / "targets" / "000999999.npz", buffer.getvalue())
    assert 999_999 not in run.finished_targets()
    assert not run.target_done(999_999)
    with pytest.raises(RunError, match=r"has no checksum in checksums.sha256"):
        run.load_target(999_999)


def test_a_torn_checksum_line_loses_only_its_own_file(run: RunFolder) -> None:
    """A power cut in the middle of appending a line: the next line is fused to it and ignored."""
    with open(run.path / CHECKSUMS, "ab") as log:
        log.write(b"0123abc")
    run.save_target(123_456, {"ms_scores": np.arange(3.0)})
    run.save_target(123_457, {"ms_scores": np.arange(4.0)})
    assert not run.target_done(123_456)
    assert run.target_done(123_457)
    assert run.records() is not None


def test_damaged_inputs_cannot_be_resumed_and_say_so(run: RunFolder) -> None:
    _damage(run.path / "data.parquet")
    with pytest.raises(RunError, match=r"data.parquet of run .* start a new run from the original data"):
        run.load_table()
    with pytest.raises(RunError, match=r"data.parquet"):
        execute(run, workers=1)
    assert run.status()["state"] == "failed"
    spec = run.path / "spec.json"
    spec.write_text(spec.read_text().replace('"seed": 7', '"seed": 8'))
    with pytest.raises(RunError, match=r"spec.json of run .* does not match"):
        run.spec()
    assert run.info().generator == "?"


def test_a_run_without_its_checksum_log_is_not_trusted(run: RunFolder) -> None:
    """Deleting checksums.sha256 does not make a folder's files unchecked: none can be trusted."""
    (run.path / CHECKSUMS).unlink()
    fresh = RunFolder(run.path)
    with pytest.raises(RunError, match=r"records.parquet of run .* has no checksum"):
        fresh.records()
    with pytest.raises(RunError, match=r"spec.json of run .* has no checksum.*start a new run"):
        fresh.spec()
    assert fresh.finished_targets() == []
    assert not any(fresh.target_done(t) for t in run.finished_targets())


def test_the_records_csv_neutralises_spreadsheet_formulas(run: RunFolder) -> None:
    records = pd.DataFrame({"record_id": [1, 2, 3], "city": ["=1+2", "@SUM(A1)", "Paris"], "x": [-1, 2, 3]})
    run.write_results(records, run.scores(), run.summary())
    text = (run.path / "records.csv").read_text()
    assert "'=1+2" in text and "'@SUM(A1)" in text and ",Paris," in text
    assert run.records()["value:city"].tolist() == ["=1+2", "@SUM(A1)", "Paris"]  # an old layout, read as new
