"""The run store: one folder per run, written atomically, readable by its owner only.

Layout of a run folder::

    spec.json            the frozen RunSpec (see privgame.spec)
    data.parquet         the prepared table the run audits (so a run is self-contained)
    status.json          state, progress, executor, timings, error message
    cancel               present when a cancel was requested
    shared/              checkpoints of the shared synthetic datasets (shadow 'out', model-seeded 'in')
    targets/             one checkpoint per evaluated target record: scores and labels of both games
    pool/                checkpoints of the pooled traditional game (see privgame.games.pool)
    scores.parquet       every score: record_id, game, label, index, score
    records.parquet/csv  one row per evaluated record: values, risks, bounds, difference
    summary.json         the Table-1 style summary at the spec's threshold
    checksums.sha256     the SHA-256 of every file above except status.json and cancel

Every file is written to a temporary name in the same folder, flushed, then renamed, so no
reader ever sees half a file. After the rename its SHA-256 is appended to ``checksums.sha256``
(one ``<hex>  <relative path>`` line per write, the format ``sha256sum -c`` reads; the last line
for a path wins), and every read of a checkpoint or result checks it: a file that does not match
raises :class:`~privgame.errors.RunError` naming the file and the fix, and a checkpoint that does
not match counts as not done, so resuming the run recomputes it. A checkpoint or result with no
line (the engine was killed between the rename and the append) is treated the same way. The
inputs ``spec.json`` and ``data.parquet`` are checked when they have a line; folders written
before checksums existed (no ``checksums.sha256``) are read unchecked.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from privgame.errors import RunError
from privgame.spec import RunSpec

__all__ = [
    "CHECKSUMS",
    "RunFolder",
    "RunInfo",
    "atomic_write",
    "create_run",
    "default_runs_root",
    "list_runs",
]

_RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[a-z0-9_]+-[0-9a-f]{6}$")
_GENERATOR_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
STATES = ("created", "queued", "running", "done", "failed", "cancelled")

CHECKSUMS = "checksums.sha256"
_CHECKSUM_LINE = re.compile(r"^([0-9a-f]{64})  ([A-Za-z0-9_.\-/]+)$")
_INPUTS = ("spec.json", "data.parquet")


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
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a power cut, not only a killed process)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)


def _read_parquet_bytes(data: bytes) -> pd.DataFrame:
    """Read a Parquet file from bytes copied into memory Arrow owns.

    Arrow's reader threads may drop the last reference to the buffer they read from; a buffer of
    a Python object then needs the GIL, which a thread cannot take while the interpreter exits.
    """
    buffer = pa.allocate_buffer(len(data))
    np.frombuffer(buffer, dtype=np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)
    return pd.read_parquet(pa.BufferReader(buffer))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _append_checksum(folder: Path, relative: str, digest: str) -> None:
    """Append one ``<hex>  <path>`` line to the folder's checksum log, durably.

    A single ``write`` to a file opened for appending lands whole at the end even with several
    writers, so the log needs no lock; a line torn by a power cut no longer matches the line
    format and only loses that file's checksum (the file is then recomputed or rewritten).
    """
    fd = os.open(folder / CHECKSUMS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{digest}  {relative}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_checked(folder: Path, relative: str, data: bytes) -> None:
    """Write ``folder/relative`` atomically, then record its checksum."""
    atomic_write(folder / relative, data)
    _append_checksum(folder, relative, _sha256(data))


def json_bytes(data: Any) -> bytes:
    """Canonical, strict JSON text (sorted keys, infinities as strings) as UTF-8 bytes."""
    return (
        json.dumps(_strict(data), indent=2, sort_keys=True, allow_nan=False, default=_json_default) + "\n"
    ).encode()


def _strict(value: Any) -> Any:
    """``value`` with infinities written as "inf"/"-inf" and NaN as null (strict JSON has neither)."""
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return float(value)
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value


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


def _safe_role(role: str) -> str:
    if not re.fullmatch(r"[a-z_]{1,32}", role):
        raise RunError(f"{role!r} is not a role of shared datasets (e.g. 'shadow_out', 'ms_in').")
    return role


def _shared_name(role: str, start: int) -> str:
    return f"shared/{_safe_role(role)}-{int(start):06d}.npz"


def _target_name(record_id: int) -> str:
    return f"targets/{int(record_id):09d}.npz"


def _pool_name(name: str) -> str:
    if not re.fullmatch(r"[a-z0-9_\-]{1,80}", name):
        raise RunError(f"{name!r} is not a name of a pool checkpoint (letters, digits, '_' and '-').")
    return f"pool/{name}.npz"


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


class StatusFolder:
    """A folder with a ``status.json`` and a ``cancel`` flag: a run's, or a study's."""

    path: Path

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
        atomic_write(self.path / "status.json", json_bytes(status))
        return status

    def request_cancel(self) -> None:
        """Ask the engine working on this folder to stop after the units in flight."""
        atomic_write(self.path / "cancel", b"cancel requested\n")

    def cancel_requested(self) -> bool:
        """True when a cancel was requested and not yet cleared."""
        return (self.path / "cancel").exists()

    def clear_cancel(self) -> None:
        """Forget a cancel request (before resuming)."""
        with contextlib.suppress(FileNotFoundError):
            (self.path / "cancel").unlink()


class RunFolder(StatusFolder):
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
        # The checksum log, parsed incrementally: (inode, bytes parsed, path -> sha256).
        self._log: tuple[int, int, dict[str, str]] = (-1, 0, {})
        self._log_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}  # a lock does not pickle; the log is parsed again

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self._log = (-1, 0, {})
        self._log_lock = threading.Lock()

    @property
    def run_id(self) -> str:
        """The folder's name."""
        return self.path.name

    # -- checksums --------------------------------------------------------------------------
    def _checksums(self) -> dict[str, str] | None:
        """Path -> SHA-256 from the checksum log (last line wins); None when there is no log."""
        with self._log_lock:
            try:
                fd = os.open(self.path / CHECKSUMS, os.O_RDONLY)
            except FileNotFoundError:
                return None
            with os.fdopen(fd, "rb") as handle:
                inode = os.fstat(handle.fileno()).st_ino
                known_inode, parsed, table = self._log
                if inode != known_inode:
                    parsed, table = 0, {}
                handle.seek(parsed)
                tail = handle.read()
            complete = tail[: tail.rfind(b"\n") + 1]
            table = dict(table)
            for line in complete.decode("ascii", errors="replace").splitlines():
                match = _CHECKSUM_LINE.match(line)
                if match:
                    table[match.group(2)] = match.group(1)
            self._log = (inode, parsed + len(complete), table)
            return table

    def _read_checked(self, relative: str) -> bytes:
        """The bytes of ``relative``, after checking them against the checksum log.

        Raises
        ------
        FileNotFoundError
            When the file does not exist.
        RunError
            When the file does not match its checksum, or (a checkpoint or a result) has none.
        """
        data = (self.path / relative).read_bytes()
        problem = self._checksum_problem(relative, data)
        if problem is not None:
            raise RunError(problem)
        return data

    def _checksum_problem(self, relative: str, data: bytes) -> str | None:
        checksums = self._checksums()
        if checksums is None:
            return None  # written before checksums existed
        expected = checksums.get(relative)
        if expected is None and relative in _INPUTS:
            return None  # written by other code than create_run (a study's job folder)
        if expected == _sha256(data):
            return None
        if relative in _INPUTS:
            fix = "the run cannot be used: start a new run from the original data file."
        else:
            fix = (
                "resume the run to recompute it (its other checkpoints are kept): "
                f"python -m privgame resume {self.path}"
            )
        if expected is None:
            what = (
                "has no checksum in checksums.sha256 (it was being written when the engine "
                "stopped), so it cannot be trusted"
            )
        else:
            what = "does not match the SHA-256 checksum recorded when it was written: it is corrupt"
        return f"{relative} of run {self.run_id} {what}; {fix}"

    def _intact(self, relative: str) -> bool:
        """Whether ``relative`` exists and matches its checksum."""
        try:
            data = (self.path / relative).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return False
        return self._checksum_problem(relative, data) is None

    # -- spec and data -------------------------------------------------------------------
    def spec(self) -> RunSpec:
        """The frozen run spec."""
        data = self._read_checked("spec.json")
        try:
            return RunSpec.from_json(data.decode())
        except (ValueError, KeyError, TypeError) as exc:
            raise RunError(f"{self.path / 'spec.json'} is corrupt ({exc}); the run cannot be read.") from None

    def write_spec(self, spec: RunSpec) -> None:
        """Replace the spec (only :func:`privgame.games.engine.extend` does: more evaluation runs)."""
        _write_checked(self.path, "spec.json", spec.to_json().encode())

    def load_table(self) -> pd.DataFrame:
        """The prepared table the run audits."""
        data = self._read_checked("data.parquet")
        try:
            return _read_parquet_bytes(data)
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise RunError(
                f"data.parquet of run {self.run_id} is unreadable ({type(exc).__name__}); the run "
                "cannot be used: start a new run from the original data file."
            ) from None

    # -- checkpoints ----------------------------------------------------------------------
    def save_shared(self, role: str, start: int, datasets: np.ndarray) -> None:
        """Checkpoint shared synthetic datasets ``start .. start + len(datasets)`` of ``role``."""
        _write_checked(self.path, _shared_name(role, start), _npz_bytes({"datasets": datasets}))

    def shared_done(self, role: str, start: int) -> bool:
        """Whether that chunk is checkpointed and matches its checksum (else it is recomputed)."""
        return self._intact(_shared_name(role, start))

    def load_shared(self, role: str) -> np.ndarray:
        """Every checkpointed chunk of ``role`` in index order, as one (m, n, d) array.

        Raises
        ------
        RunError
            When there is none, or one does not match its checksum.
        """
        files = sorted((self.path / "shared").glob(f"{_safe_role(role)}-*.npz"))
        if not files:
            raise RunError(f"No shared datasets {role!r} in {self.path}; run the engine first.")
        return np.concatenate([self._load_npz(f"shared/{f.name}")["datasets"] for f in files])

    def save_target(self, record_id: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one evaluated target."""
        _write_checked(self.path, _target_name(record_id), _npz_bytes(arrays))

    def target_done(self, record_id: int) -> bool:
        """Whether that target is checkpointed and matches its checksum (else it is recomputed)."""
        return self._intact(_target_name(record_id))

    def load_target(self, record_id: int) -> dict[str, np.ndarray]:
        """The checkpoint of one target (scores, labels, reference ids, timings).

        Raises
        ------
        RunError
            When the target was not evaluated, or its checkpoint does not match its checksum.
        """
        relative = _target_name(record_id)
        if not (self.path / relative).is_file():
            raise RunError(f"Record {record_id} was not evaluated in run {self.run_id}.")
        return self._load_npz(relative)

    def _load_npz(self, relative: str) -> dict[str, np.ndarray]:
        data = self._read_checked(relative)
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                return {k: arrays[k] for k in arrays.files}
        except Exception as exc:  # a legacy folder's file, unchecked and damaged
            raise RunError(
                f"{relative} of run {self.run_id} is unreadable ({type(exc).__name__}); resume the "
                f"run to recompute it after deleting the file: python -m privgame resume {self.path}"
            ) from None

    def save_pool(self, name: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one unit of the pooled traditional game as ``pool/<name>.npz``."""
        _write_checked(self.path, _pool_name(name), _npz_bytes(arrays))

    def pool_names(self) -> list[str]:
        """Names of every pool checkpoint present (intact or not), sorted."""
        folder = self.path / "pool"
        return sorted(p.stem for p in folder.glob("*.npz")) if folder.is_dir() else []

    def load_pool(self, name: str) -> dict[str, np.ndarray] | None:
        """A pool checkpoint, or None when it does not match its checksum (it is then recomputed)."""
        relative = _pool_name(name)
        try:
            data = (self.path / relative).read_bytes()
        except FileNotFoundError:
            return None
        if self._checksum_problem(relative, data) is not None:
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                return {k: arrays[k] for k in arrays.files}
        except Exception:  # a legacy folder's file, unchecked and damaged: recompute it
            return None

    def finished_targets(self) -> list[int]:
        """Record ids of every checkpointed target (with a recorded checksum)."""
        folder = self.path / "targets"
        if not folder.is_dir():
            return []
        ids = sorted(int(p.stem) for p in folder.glob("*.npz") if p.stem.isdigit())
        checksums = self._checksums()
        if checksums is None:
            return ids
        return [i for i in ids if _target_name(i) in checksums]

    # -- results ------------------------------------------------------------------------
    def write_results(self, records: pd.DataFrame, scores: pd.DataFrame, summary: Mapping[str, Any]) -> None:
        """Write the final per-record results, every score and the summary.

        ``records.parquet`` is written last, so that :meth:`has_results` implies the others exist.
        """
        buffer = io.BytesIO()
        scores.to_parquet(buffer, index=False)
        _write_checked(self.path, "scores.parquet", buffer.getvalue())
        _write_checked(self.path, "summary.json", json_bytes(dict(summary)))
        from privgame.csvsafe import csv_safe  # a spreadsheet must not run a record's text

        _write_checked(
            self.path,
            "records.csv",
            csv_safe(records).to_csv(index=False, lineterminator="\n").encode(),
        )
        buffer = io.BytesIO()
        records.to_parquet(buffer, index=False)
        _write_checked(self.path, "records.parquet", buffer.getvalue())

    def has_results(self) -> bool:
        """Whether the final results are written."""
        return (self.path / "records.parquet").is_file()

    def records(self) -> pd.DataFrame:
        """The per-record results.

        Raises
        ------
        RunError
            When the run has no results yet, or ``records.parquet`` does not match its checksum.
        """
        if not self.has_results():
            raise RunError(f"Run {self.run_id} has no results yet (state: {self.status().get('state')}).")
        return self._read_parquet("records.parquet")

    def scores(self) -> pd.DataFrame:
        """Every attack score of the run: record_id, game, label, index, score."""
        if not (self.path / "scores.parquet").is_file():
            raise RunError(f"Run {self.run_id} has no scores yet.")
        return self._read_parquet("scores.parquet")

    def _read_parquet(self, relative: str) -> pd.DataFrame:
        data = self._read_checked(relative)
        try:
            return _read_parquet_bytes(data)
        except Exception as exc:  # a legacy folder's file, unchecked and damaged
            raise RunError(
                f"{relative} of run {self.run_id} is unreadable ({type(exc).__name__}); resume the "
                f"run to rewrite it: python -m privgame resume {self.path}"
            ) from None

    def summary(self) -> dict[str, Any]:
        """The summary written at the end of the run."""
        try:
            data = self._read_checked("summary.json")
        except FileNotFoundError:
            raise RunError(f"Run {self.run_id} has no summary yet.") from None
        try:
            return json.loads(data)
        except ValueError:
            raise RunError(
                f"summary.json of run {self.run_id} is unreadable; resume the run to rewrite it: "
                f"python -m privgame resume {self.path}"
            ) from None

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


def _id_generator(name: str) -> str | None:
    """The generator's part of a run id, or None when ``name`` cannot give one.

    A registered name is used as it is. A plug-in (``module.path:ClassName``, or an installed
    entry point whose name is not ``[a-z0-9_]``) becomes ``plugin_<class or entry point name>``,
    lower-cased with every other character run replaced by ``_``; the spec keeps the full name.
    """
    if _GENERATOR_NAME.match(name):
        return name
    if ":" in name:
        label = name.rpartition(":")[2].rpartition(".")[2]
    else:
        from privgame.generators import installed_plugins

        if name not in installed_plugins():
            return None
        label = name
    slug = _NOT_SLUG.sub("_", label.lower()).strip("_")
    return f"plugin_{slug}"[:64].rstrip("_") if slug else "plugin"


def create_run(root: str | os.PathLike[str], spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """Create a new run folder under ``root`` holding ``spec`` and the prepared ``table``.

    The folder name is ``YYYYmmdd-HHMMSS-<generator>-<6 hex>``; it never contains user text (a
    generator name is one of the registered names, checked here against ``[a-z0-9_]``, or a
    plug-in's ``plugin_<slug>``, see :func:`_id_generator`). The folder is readable by its owner
    only (0700), whatever the umask, and so are its files (0600).

    Raises
    ------
    RunError
        When the generator name could not be part of a folder name.
    """
    generator = _id_generator(spec.generator)
    if generator is None:
        raise RunError(
            f"Generator name {spec.generator!r} cannot name a run folder; generator names use "
            "only lower-case letters, digits and underscores, and plug-ins are named module.path:ClassName."
        )
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for _ in range(10):
        run_id = f"{stamp}-{generator}-{secrets.token_hex(3)}"
        path = root / run_id
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - ten random collisions in one second
        raise RunError(f"Could not create a new run folder under {root}.")
    os.chmod(path, 0o700)  # mkdir's mode is masked by the umask; an odd umask must not widen it
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    _write_checked(path, "data.parquet", buffer.getvalue())
    _write_checked(path, "spec.json", spec.to_json().encode())
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
