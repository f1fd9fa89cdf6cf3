"""The run store: one folder per run, written atomically, readable by its owner only.

Layout of a run folder::

    spec.json            the frozen RunSpec (see privgame.spec)
    data.parquet         the prepared table the run audits (so a run is self-contained)
    status.json          state, progress, executor, timings, error message
    cancel               present when a cancel was requested
    shared/              checkpoints of the shared synthetic datasets (shadow 'out', model-seeded 'in')
    targets/             one checkpoint per evaluated target record: scores and labels of both games
    scores.parquet       every score: record_id, game, label, index, score
    records.parquet/csv  one row per evaluated record: values, risks, bounds, difference
    summary.json         the Table-1 style summary at the spec's threshold

Every file is written to a temporary name in the same folder, flushed, then renamed, so no
reader ever sees half a file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privgame.errors import RunError
from privgame.spec import RunSpec

__all__ = ["RunFolder", "RunInfo", "atomic_write", "create_run", "default_runs_root", "list_runs"]

_RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[a-z0-9_]+-[0-9a-f]{6}$")
STATES = ("created", "queued", "running", "done", "failed", "cancelled")


def default_runs_root() -> Path:
    """``$PRIVGAME_RUNS`` if set, else ``./runs``."""
    return Path(os.environ.get("PRIVGAME_RUNS", "runs"))


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _json_bytes(data: Any) -> bytes:
    return (
        json.dumps(data, indent=2, sort_keys=True, allow_nan=False, default=_json_default) + "\n"
    ).encode()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@dataclass(frozen=True)
class RunInfo:
    """What the runs list shows of one run."""

    run_id: str
    path: Path
    state: str
    created: float
    generator: str
    data_name: str
    n_targets: int | None
    progress: float


class RunFolder:
    """Read and write one run folder.

    Parameters
    ----------
    path : path-like
        The run folder (it must exist and hold ``spec.json``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not (self.path / "spec.json").is_file():
            raise RunError(
                f"{self.path} is not a privgame run folder (it has no spec.json); "
                "give the folder a run was written to."
            )

    @property
    def run_id(self) -> str:
        """The folder's name."""
        return self.path.name

    # -- spec and data -------------------------------------------------------------------
    def spec(self) -> RunSpec:
        """The frozen run spec."""
        try:
            return RunSpec.from_json((self.path / "spec.json").read_text())
        except (ValueError, KeyError, TypeError) as exc:
            raise RunError(f"{self.path / 'spec.json'} is corrupt ({exc}); the run cannot be read.") from None

    def load_table(self) -> pd.DataFrame:
        """The prepared table the run audits."""
        return pd.read_parquet(self.path / "data.parquet")

    # -- status -----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The last written status (state, progress, timings, error)."""
        try:
            return json.loads((self.path / "status.json").read_text())
        except FileNotFoundError:
            return {"state": "created"}
        except ValueError:
            return {"state": "failed", "error": "status.json is corrupt"}

    def write_status(self, **fields: Any) -> dict[str, Any]:
        """Merge ``fields`` into the status and write it atomically."""
        status = self.status()
        status.update(fields)
        status["updated"] = time.time()
        atomic_write(self.path / "status.json", _json_bytes(status))
        return status

    def request_cancel(self) -> None:
        """Ask the engine running this folder to stop after the units in flight."""
        atomic_write(self.path / "cancel", b"cancel requested\n")

    def cancel_requested(self) -> bool:
        """True when a cancel was requested and not yet cleared."""
        return (self.path / "cancel").exists()

    def clear_cancel(self) -> None:
        """Forget a cancel request (before resuming)."""
        with contextlib.suppress(FileNotFoundError):
            (self.path / "cancel").unlink()

    # -- checkpoints ----------------------------------------------------------------------
    def save_shared(self, role: str, start: int, datasets: np.ndarray) -> None:
        """Checkpoint shared synthetic datasets ``start .. start + len(datasets)`` of ``role``."""
        atomic_write(self.path / "shared" / f"{role}-{start:06d}.npz", _npz_bytes({"datasets": datasets}))

    def shared_done(self, role: str, start: int) -> bool:
        """Whether that chunk is checkpointed."""
        return (self.path / "shared" / f"{role}-{start:06d}.npz").is_file()

    def load_shared(self, role: str) -> np.ndarray:
        """Every checkpointed chunk of ``role`` in index order, as one (m, n, d) array."""
        files = sorted((self.path / "shared").glob(f"{role}-*.npz"))
        if not files:
            raise RunError(f"No shared datasets {role!r} in {self.path}; run the engine first.")
        return np.concatenate([np.load(f)["datasets"] for f in files])

    def save_target(self, record_id: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one evaluated target."""
        atomic_write(self.path / "targets" / f"{int(record_id):09d}.npz", _npz_bytes(arrays))

    def target_done(self, record_id: int) -> bool:
        """Whether that target is checkpointed."""
        return (self.path / "targets" / f"{int(record_id):09d}.npz").is_file()

    def load_target(self, record_id: int) -> dict[str, np.ndarray]:
        """The checkpoint of one target (scores, labels, reference ids, timings)."""
        path = self.path / "targets" / f"{int(record_id):09d}.npz"
        if not path.is_file():
            raise RunError(f"Record {record_id} was not evaluated in run {self.run_id}.")
        with np.load(path) as data:
            return {k: data[k] for k in data.files}

    def finished_targets(self) -> list[int]:
        """Record ids of every checkpointed target."""
        folder = self.path / "targets"
        if not folder.is_dir():
            return []
        return sorted(int(p.stem) for p in folder.glob("*.npz"))

    # -- results ------------------------------------------------------------------------
    def write_results(self, records: pd.DataFrame, scores: pd.DataFrame, summary: Mapping[str, Any]) -> None:
        """Write the final per-record results, every score and the summary."""
        buffer = io.BytesIO()
        records.to_parquet(buffer, index=False)
        atomic_write(self.path / "records.parquet", buffer.getvalue())
        from privgame.report import csv_safe  # a spreadsheet must not run a record's text

        atomic_write(
            self.path / "records.csv",
            csv_safe(records).to_csv(index=False, lineterminator="\n").encode(),
        )
        buffer = io.BytesIO()
        scores.to_parquet(buffer, index=False)
        atomic_write(self.path / "scores.parquet", buffer.getvalue())
        atomic_write(self.path / "summary.json", _json_bytes(dict(summary)))

    def has_results(self) -> bool:
        """Whether the final results are written."""
        return (self.path / "records.parquet").is_file()

    def records(self) -> pd.DataFrame:
        """The per-record results."""
        if not self.has_results():
            raise RunError(f"Run {self.run_id} has no results yet (state: {self.status().get('state')}).")
        return pd.read_parquet(self.path / "records.parquet")

    def scores(self) -> pd.DataFrame:
        """Every attack score of the run: record_id, game, label, index, score."""
        if not (self.path / "scores.parquet").is_file():
            raise RunError(f"Run {self.run_id} has no scores yet.")
        return pd.read_parquet(self.path / "scores.parquet")

    def summary(self) -> dict[str, Any]:
        """The summary written at the end of the run."""
        try:
            return json.loads((self.path / "summary.json").read_text())
        except FileNotFoundError:
            raise RunError(f"Run {self.run_id} has no summary yet.") from None

    def info(self) -> RunInfo:
        """A short description for lists."""
        status = self.status()
        try:
            spec = self.spec()
            generator, data_name = spec.generator, spec.data_name
        except RunError:
            generator, data_name = "?", "?"
        total = status.get("total_units") or 0
        done = status.get("done_units") or 0
        return RunInfo(
            run_id=self.run_id,
            path=self.path,
            state=str(status.get("state", "created")),
            created=float(status.get("created", (self.path / "spec.json").stat().st_mtime)),
            generator=generator,
            data_name=data_name,
            n_targets=status.get("n_targets"),
            progress=(done / total) if total else 0.0,
        )

    def delete(self) -> None:
        """Remove the run folder and everything in it."""
        if self.status().get("state") == "running" and not self.status_is_stale():
            raise RunError(f"Run {self.run_id} is running; cancel it before deleting it.")
        shutil.rmtree(self.path)

    def status_is_stale(self, seconds: float = 120.0) -> bool:
        """True when a 'running' status has not been updated for ``seconds`` (a dead engine)."""
        status = self.status()
        return (
            time.time() - float(status.get("updated", 0.0)) > seconds
            and status.get("pid") not in _live_pids()
        )


def _live_pids() -> set[int]:
    try:
        return {int(p) for p in os.listdir("/proc") if p.isdigit()}
    except OSError:
        return set()


def create_run(root: str | os.PathLike[str], spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """Create a new run folder under ``root`` holding ``spec`` and the prepared ``table``.

    The folder name is ``YYYYmmdd-HHMMSS-<generator>-<6 hex>``; it never contains user text.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for _ in range(10):
        run_id = f"{stamp}-{spec.generator}-{secrets.token_hex(3)}"
        path = root / run_id
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - ten random collisions in one second
        raise RunError(f"Could not create a new run folder under {root}.")
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    atomic_write(path / "data.parquet", buffer.getvalue())
    atomic_write(path / "spec.json", spec.to_json().encode())
    folder = RunFolder(path)
    folder.write_status(state="created", created=time.time(), done_units=0, total_units=None)
    return folder


def iter_run_folders(root: str | os.PathLike[str]) -> Iterator[RunFolder]:
    """Every run folder directly under ``root``."""
    root = Path(root)
    if not root.is_dir():
        return
    for path in sorted(root.iterdir()):
        if path.is_dir() and _RUN_ID.match(path.name) and (path / "spec.json").is_file():
            yield RunFolder(path)


def list_runs(root: str | os.PathLike[str]) -> list[RunInfo]:
    """Every run under ``root``, newest first."""
    return sorted((f.info() for f in iter_run_folders(root)), key=lambda i: i.created, reverse=True)


def open_run(root: str | os.PathLike[str], run_id: str) -> RunFolder:
    """Open the run ``run_id`` under ``root``; ``run_id`` must be a run folder name."""
    if not _RUN_ID.match(run_id):
        raise RunError(f"{run_id!r} is not a run id (expected e.g. 20261130-101500-synthpop-1a2b3c).")
    return RunFolder(Path(root) / run_id)
