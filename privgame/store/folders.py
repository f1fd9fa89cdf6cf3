"""The run store: one folder per run, written atomically, readable by its owner only.

Layout of a run folder::

    spec.json            the frozen RunSpec (see privgame.settings.run_spec)
    data.parquet         the prepared table the run audits (so a run is self-contained)
    status.json          state, progress, executor, timings, error message
    cancel               present when a cancel was requested
    engine.lock          locked (flock) by the engine working on the run, while it works
    plan.json            the unit plan: datasets per shared checkpoint, targets per task
    shared/              checkpoints of the shared synthetic datasets (shadow 'out', model-seeded 'in')
    targets/             one checkpoint per evaluated target record: scores and labels of both games
    pool/                checkpoints of the pooled traditional game (see privgame.games.pool)
    attacks/             a remedy run's trained attacks, copied from its parent (see privgame.runs.remedy)
    scores.parquet       every score: record_id, game, label, index, score
    records.parquet/csv  one row per evaluated record: values, risks, bounds, difference
    summary.json         the Table-1 style summary at the spec's threshold
    utility.json         the utility figures (privgame.analysis.utility), once measured
    anonymity.json       anonymeter's three risks (privgame.analysis.anonymity), once measured
    checksums.sha256     the SHA-256 of every file above except status.json, cancel and engine.lock

Every file is written to a temporary name in the same folder, flushed, then renamed, so no
reader ever sees half a file. After the rename its SHA-256 is appended to ``checksums.sha256``
(one ``<hex>  <relative path>`` line per write, the format ``sha256sum -c`` reads; the last line
for a path wins), and every read of a file the store trusts checks it: a file that does not match,
or has no line (the engine was killed between the rename and the append, or the line was
removed), raises :class:`~privgame.core.errors.RunError` naming the file and the fix, and a checkpoint
that does not match counts as not done, so resuming the run recomputes it. A folder without
``checksums.sha256`` has no trusted file at all.

``status.json`` changes after every unit and is not checksummed; it is checked against a schema
when read (:func:`status_problem`), and a status that does not fit reads as the state
``"damaged"`` with the reason, so one damaged run never breaks a list of runs. The unit plan (how
many datasets each shared checkpoint holds) is kept in the checksummed ``plan.json``, so that a
damaged status can never make a resumed run mix checkpoints of two plans.

An engine claims a folder by holding an exclusive :func:`fcntl.flock` on ``engine.lock`` for as
long as it works on it (:meth:`StatusFolder.claim`). The kernel releases the lock when the process
dies, however it dies, so a claim can neither outlive its holder nor be confused with another
process that happens to get the same PID later; "is an engine running on this folder?" is answered
by trying the lock (:meth:`StatusFolder.is_running`), never by looking up a PID.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import math
import os
import re
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from privgame.core.errors import OutputError, RunError
from privgame.settings.run_spec import RunSpec

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no claim (one engine per folder is then on the user)
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CHECKSUMS",
    "DAMAGED",
    "LOCK",
    "PLAN",
    "RunFolder",
    "RunInfo",
    "append_checksum",
    "atomic_write",
    "default_runs_root",
    "launching",
    "list_runs",
    "new_run_folder",
    "real_folders",
    "refuse_link",
    "remove_folder",
    "run_name_part",
    "sha256_hex",
    "status_problem",
    "symlinked_entries",
    "write_checked",
    "write_error",
]

_RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[a-z0-9_]+-[0-9a-f]{6}$")
_GENERATOR_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
STATES = ("created", "queued", "running", "done", "failed", "cancelled")
DAMAGED = "damaged"
"""The state a run or study reads as when its ``status.json`` (or its spec) is damaged."""

CHECKSUMS = "checksums.sha256"
LOCK = "engine.lock"
PLAN = "plan.json"
UTILITY = "utility.json"
ANONYMITY = "anonymity.json"
SIMILARITY = "similarity.json"
SCREEN = "screen.parquet"
_CHECKSUM_LINE = re.compile(r"^([0-9a-f]{64})  ([A-Za-z0-9_.\-/]+)$")
_SHARED_FILE = re.compile(r"^([a-z_]{1,32})-([0-9]{6,})\.npz$")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_MAX_STATUS_BYTES = 4 * 2**20
_PLAN_KEYS = ("shadow_out", "ms_in", "targets")
_CLAIM_WAIT_SECONDS = 0.5
"""How long a claim waits for the lock: long enough for a probe of :meth:`StatusFolder.is_running`
(microseconds) to let go, far shorter than any engine holds it."""


def default_runs_root() -> Path:
    """``$PRIVGAME_RUNS`` if set, else ``./runs``."""
    return Path(os.environ.get("PRIVGAME_RUNS", "runs"))


def write_error(path: str | os.PathLike[str], error: OSError) -> OutputError:
    """The typed error for a write to ``path`` that failed with ``error``, naming the fix.

    Parameters
    ----------
    path : path-like
        The file or folder being written.
    error : OSError
        What the operating system said.

    Returns
    -------
    OutputError
        "Cannot write PATH: REASON; FIX." (a full disk, a read-only disk or folder, a file where a
        folder belongs, ...).
    """
    reason = error.strerror or str(error) or type(error).__name__
    code = error.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        fix = "free some space on that disk, or write to a folder on another disk"
    elif code == errno.EROFS:
        fix = "that disk is read-only: write to a folder on a writable disk"
    elif code in (errno.EACCES, errno.EPERM):
        fix = "you may not write there: choose a folder you own, or fix its permissions"
    elif code in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        fix = "a file stands where a folder belongs (or a folder where a file belongs): give another path"
    elif code == errno.ELOOP:
        fix = "it is a symbolic link, which privgame does not follow: give the real path"
    else:
        fix = "check that the folder exists and can be written to"
    return OutputError(f"Cannot write {path}: {reason}; {fix}.")


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename.

    Raises
    ------
    OutputError
        When the file cannot be written (full disk, read-only folder, ...); nothing is left behind.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o600)
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
    except OSError as error:
        raise write_error(path, error) from None
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


def _read_file(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, never through a symbolic link.

    Raises
    ------
    FileNotFoundError
        When there is no such file.
    OSError
        ``ELOOP`` for a symbolic link, ``EISDIR`` for anything that is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
        return handle.read() if limit is None else handle.read(limit + 1)


def _read_parquet_bytes(data: bytes) -> pd.DataFrame:
    """Read a Parquet file from bytes copied into memory Arrow owns.

    Arrow's reader threads may drop the last reference to the buffer they read from; a buffer of
    a Python object then needs the GIL, which a thread cannot take while the interpreter exits.
    """
    buffer = pa.allocate_buffer(len(data))
    np.frombuffer(buffer, dtype=np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)
    return pd.read_parquet(pa.BufferReader(buffer))


def sha256_hex(data: bytes) -> str:
    """The SHA-256 digest of ``data`` in hex, as the checksum log records it."""
    return hashlib.sha256(data).hexdigest()


def append_checksum(folder: Path, relative: str, digest: str) -> None:
    """Append one ``<hex>  <path>`` line to the folder's checksum log, durably.

    Use it for a file written otherwise than by :func:`write_checked` (e.g. copied whole).

    A single ``write`` to a file opened for appending lands whole at the end even with several
    writers, so the log needs no lock; a line torn by a power cut no longer matches the line
    format and only loses that file's checksum (the file is then recomputed or rewritten).
    """
    try:
        fd = os.open(folder / CHECKSUMS, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
        try:
            os.write(fd, f"{digest}  {relative}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise write_error(folder / CHECKSUMS, error) from None


def write_checked(folder: Path, relative: str, data: bytes) -> None:
    """Write ``folder/relative`` atomically, then record its checksum.

    A run or study folder's files are written this way, so that
    reading it back through :class:`CheckedFolder` tells a damaged file from a whole one.
    """
    atomic_write(folder / relative, data)
    append_checksum(folder, relative, sha256_hex(data))


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


# Narrower dtypes a column of shared datasets is stored in when it holds them exactly, in order
# of preference (integer types are tried only on whole numbers within their range).
_INTEGER_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.int32)


def _narrowest(column: np.ndarray) -> np.ndarray:
    """``column`` (float64) in the narrowest dtype that casts back to it bit for bit."""
    if column.size == 0:
        return column
    negative_zero = bool(np.any(np.signbit(column) & (column == 0)))
    if not negative_zero and bool(np.all(np.floor(column) == column)):
        low, high = float(column.min()), float(column.max())
        for dtype in _INTEGER_DTYPES:
            info = np.iinfo(dtype)
            if info.min <= low and high <= info.max:
                return column.astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = column.astype(np.float32)
    if np.array_equal(narrow.astype(np.float64).view(np.uint64), column.view(np.uint64)):
        return narrow
    return column


def _shared_arrays(datasets: np.ndarray) -> dict[str, np.ndarray]:
    """Synthetic datasets ``(m, n, d)`` as one array per column, each in its narrowest exact dtype.

    Encoded tables are mostly small whole numbers (category codes, ages, counts): stored as float64
    they took 8 bytes a cell, about 760 MB for the 200 shared datasets of a 31,655-row release
    audit; column by column, Adult's take 18% of that. :func:`_datasets_from` restores
    the float64 array bit for bit.
    """
    datasets = np.asarray(datasets, dtype=np.float64)
    arrays = {"shape": np.array(datasets.shape, dtype=np.int64)}
    for j in range(datasets.shape[2]):
        arrays[f"column_{j}"] = _narrowest(np.ascontiguousarray(datasets[:, :, j]))
    return arrays


def _datasets_from(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The float64 datasets of a shared checkpoint (column by column, or one array as of old)."""
    if "datasets" in arrays:
        return np.asarray(arrays["datasets"], dtype=np.float64)
    m, n, d = (int(v) for v in arrays["shape"])
    datasets = np.empty((m, n, d), dtype=np.float64)
    for j in range(d):
        datasets[:, :, j] = arrays[f"column_{j}"]
    return datasets


def _safe_role(role: str) -> str:
    if not re.fullmatch(r"[a-z_]{1,32}", role):
        raise RunError(f"{role!r} is not a role of shared datasets (e.g. 'shadow_out', 'ms_in').")
    return role


def _shared_name(role: str, start: int) -> str:
    return f"shared/{_safe_role(role)}-{int(start):06d}.npz"


def _target_name(record_id: int) -> str:
    return f"targets/{int(record_id):09d}.npz"


def _attack_name(record_id: int) -> str:
    return f"attacks/{int(record_id):09d}.npz"


def _screen_name(start: int) -> str:
    return f"screen/{int(start):06d}.npz"


def _pool_name(name: str) -> str:
    if not re.fullmatch(r"[a-z0-9_\-]{1,80}", name):
        raise RunError(f"{name!r} is not a name of a pool checkpoint (letters, digits, '_' and '-').")
    return f"pool/{name}.npz"


@dataclass(frozen=True)
class RunInfo:
    """What the runs list shows of one run.

    ``state`` is :data:`DAMAGED` when the run's ``status.json`` or ``spec.json`` is damaged;
    ``problem`` then says what is wrong and what to do.
    """

    run_id: str
    path: Path
    state: str
    created: float
    generator: str
    data_name: str
    n_targets: int | None
    progress: float
    problem: str | None = None


# -- status.json: a schema ------------------------------------------------------------------

_TIMES = ("created", "updated", "started", "finished", "seconds", "shared_seconds", "eta")
_COUNTS = (
    "done_units",
    "total_units",
    "fits_done",
    "fits_total",
    "n_targets",
    "jobs",
    "pid",
    "screen_done",
    "screen_total",
)
_TEXTS = ("error", "phase", "executor", "scheduler")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def status_problem(status: Any) -> str | None:
    """Why ``status`` (the parsed ``status.json`` of a run or study) does not fit its schema.

    The schema: an object whose ``state`` (default ``"created"``) is one of :data:`STATES`;
    timestamps and durations (``created``, ``updated``, ``started``, ``finished``, ``seconds``,
    ``shared_seconds``, ``eta``) are finite numbers; counts (``done_units``, ``total_units``,
    ``fits_done``, ``fits_total``, ``n_targets``, ``jobs``, ``pid``, ``screen_done``,
    ``screen_total``) whole numbers >= 0;
    ``workers`` a whole number; ``error``, ``phase``, ``executor`` and ``scheduler`` text; each
    may also be null. ``target_ids`` is a list of record ids, ``audit_groups`` an object of such
    lists, ``unit_plan`` and ``unit_seconds`` objects of numbers, ``extensions`` a list of
    objects. Other keys are free.

    Returns
    -------
    str or None
        One sentence, or None when the status fits.
    """
    if not isinstance(status, dict):
        return f"it holds {_shown(status)} instead of an object of fields"
    state = status.get("state", "created")
    if state not in STATES:
        return f"its state {_shown(state)} is not one of {', '.join(STATES)}"
    for key in _TIMES:
        if status.get(key) is not None and not _is_number(status[key]):
            return f"{key} is {_shown(status[key])}, not a number"
    for key in _COUNTS:
        if status.get(key) is not None and not _is_count(status[key]):
            return f"{key} is {_shown(status[key])}, not a whole number >= 0"
    workers = status.get("workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool)):
        return f"workers is {_shown(workers)}, not a whole number"
    for key in _TEXTS:
        if status.get(key) is not None and not isinstance(status[key], str):
            return f"{key} is {_shown(status[key])}, not a text"
    ids = status.get("target_ids")
    if ids is not None and not (isinstance(ids, list) and all(_is_count(i) for i in ids)):
        return "target_ids is not a list of record ids"
    groups = status.get("audit_groups")
    if groups is not None and not (
        isinstance(groups, dict)
        and all(isinstance(v, list) and all(_is_count(i) for i in v) for v in groups.values())
    ):
        return "audit_groups is not an object of lists of record ids"
    for key in ("unit_plan", "unit_seconds"):
        value = status.get(key)
        if value is not None and not (isinstance(value, dict) and all(_is_number(v) for v in value.values())):
            return f"{key} is not an object of numbers"
    passes = status.get("extensions")
    if passes is not None and not (isinstance(passes, list) and all(isinstance(v, dict) for v in passes)):
        return "extensions is not a list of objects"
    return None


class StatusFolder:
    """A folder with a ``status.json``, a ``cancel`` flag and an ``engine.lock``: a run's, or a study's."""

    path: Path
    kind = "run"
    """What the folder holds, for messages: ``"run"`` or ``"study"``."""

    def status(self) -> dict[str, Any]:
        """The last written status (state, progress, timings, error).

        A status that cannot be read, is not JSON or does not fit :func:`status_problem`'s schema
        reads as ``{"state": "damaged", "error": <what is wrong and what to do>}``.
        """
        try:
            data = _read_file(self.path / "status.json", limit=_MAX_STATUS_BYTES)
        except FileNotFoundError:
            return {"state": "created"}
        except OSError as error:
            return self._damaged(f"it cannot be read ({error.strerror or error})")
        if len(data) > _MAX_STATUS_BYTES:
            return self._damaged(f"it is larger than {_MAX_STATUS_BYTES // 2**20} MiB")
        try:
            status = json.loads(data)
        except (ValueError, RecursionError):
            return self._damaged("it is not valid JSON")
        problem = status_problem(status)
        return status if problem is None else self._damaged(problem)

    def _damaged(self, problem: str) -> dict[str, Any]:
        return {
            "state": DAMAGED,
            "error": (
                f"status.json of {self.kind} {self.path.name} is damaged: {problem}. Resume the "
                f"{self.kind} to rebuild it from its checkpoints, or delete the {self.kind}."
            ),
        }

    def write_status(self, **fields: Any) -> dict[str, Any]:
        """Merge ``fields`` into the status and write it atomically (a damaged status is replaced)."""
        status = self.status()
        if status.get("state") == DAMAGED:
            status = {}
        status.update(fields)
        status["updated"] = time.time()
        data = json_bytes(status)
        try:
            atomic_write(self.path / "status.json", data)
        except OutputError:
            # A full disk has no room for a second copy; rewriting the file in place reuses the
            # old one's blocks, so that e.g. "failed" and its reason still get recorded.
            if not _overwrite(self.path / "status.json", data):
                raise
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

    # -- the claim ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def claim(self) -> Iterator[None]:
        """Hold the folder's lock while the ``with`` block runs: one engine per folder.

        An exclusive :func:`fcntl.flock` on ``engine.lock``. The kernel drops it when the process
        ends, however it ends (SIGKILL included), so a claim never outlives its holder and never
        depends on a PID that a later process may reuse. Of two processes claiming at the same
        moment, exactly one gets it.

        Raises
        ------
        RunError
            When another process (or another claim in this one) holds the folder.
        OutputError
            When the lock file cannot be created (a read-only folder, a full disk).
        """
        if fcntl is None:  # pragma: no cover - not POSIX
            yield
            return
        lock = self.path / LOCK
        while True:
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
            except OSError as error:
                raise write_error(lock, error) from None
            if self._lock(fd, lock):
                break
        try:
            with contextlib.suppress(OSError):  # who holds it, for people; never trusted
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _lock(self, fd: int, lock: Path) -> bool:
        """Lock ``fd`` (waiting briefly for a probe); False when ``lock`` was replaced meanwhile."""
        deadline = time.monotonic() + _CLAIM_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                holder = _lock_holder(fd)
                os.close(fd)
                raise RunError(
                    f"{self.kind.capitalize()} {self.path.name} is already being run by another "
                    f"process{f' (pid {holder})' if holder else ''}; wait for it to finish, or cancel "
                    f"it, before resuming it here."
                ) from None
            except OSError as error:
                os.close(fd)
                raise write_error(lock, error) from None
        try:
            same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if not same:  # deleted or replaced between open and lock: lock the file that is there now
            os.close(fd)
        return same

    def is_running(self) -> bool:
        """Whether an engine holds this folder's lock right now (a probe that takes microseconds)."""
        if fcntl is None:  # pragma: no cover - not POSIX
            return False
        try:
            fd = os.open(self.path / LOCK, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        except OSError:
            return False  # never claimed (or not readable): no engine
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)
        return False

    def engine_gone(self) -> bool:
        """Whether the status says ``running`` while no engine holds the folder.

        The process that ran it ended without recording how: killed (SIGKILL, the system out of
        memory), interrupted, or ended by the generator's own code (a plug-in calling
        ``os._exit``). The lock is probed before and after the status is read, so that an engine
        starting or finishing meanwhile is never taken for a dead one.
        """
        if self.is_running():
            return False
        return self.status().get("state") == "running" and not self.is_running()

    def needs_engine(self) -> bool:
        """Whether the folder is unfinished and no engine holds it or is starting for it.

        True for a folder created but never started, one that failed or was cancelled, and one
        'queued' or 'running' whose engine died; a 'queued' status younger than
        :meth:`status_is_stale`'s limit is an engine still starting. Launching the same request
        again resumes such a folder instead of making a duplicate.
        """
        state = self.status().get("state")
        if state == "done" or self.is_running():
            return False
        return state != "queued" or self.status_is_stale()

    def status_is_stale(self, seconds: float = 120.0) -> bool:
        """True when no engine holds the folder and its status has not changed for ``seconds``.

        A 'queued' or 'running' status that is stale belongs to an engine that died (or never
        started); the folder can be resumed. Whether an engine holds it is :meth:`is_running`.
        """
        if self.is_running():
            return False
        updated = self.status().get("updated")
        return time.time() - (float(updated) if _is_number(updated) else 0.0) > seconds


def _overwrite(path: Path, data: bytes) -> bool:
    """Rewrite the existing file ``path`` in place (not atomic: a last resort); True on success."""
    try:
        fd = os.open(path, os.O_WRONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return False
    try:
        os.ftruncate(fd, 0)
        written = os.pwrite(fd, data, 0)
        os.fsync(fd)
        return written == len(data)
    except OSError:
        return False
    finally:
        os.close(fd)


def _lock_holder(fd: int) -> int | None:
    """The PID the holder of a lock file wrote in it, for messages (None when unreadable)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


class CheckedFolder(StatusFolder):
    """A status folder whose files are checked against a checksum log (``checksums.sha256``).

    ``inputs`` are the files that cannot be recomputed (a damaged one makes the folder unusable);
    every other checked file is a checkpoint or a result, which resuming recomputes or rewrites.
    """

    inputs: tuple[str, ...] = ()

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # The checksum log, parsed incrementally: (inode, bytes parsed, path -> sha256).
        self._log: tuple[int, int, dict[str, str]] = (-1, 0, {})
        self._log_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}  # a lock does not pickle; the log is parsed again

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self._log = (-1, 0, {})
        self._log_lock = threading.Lock()

    def _checksums(self) -> dict[str, str] | None:
        """Path -> SHA-256 from the checksum log (last line wins); None when there is no log."""
        with self._log_lock:
            try:
                fd = os.open(self.path / CHECKSUMS, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
            except OSError:
                return None
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                known_inode, parsed, table = self._log
                if info.st_ino != known_inode or info.st_size < parsed:  # replaced, or cut short
                    parsed, table = 0, {}
                handle.seek(parsed)
                tail = handle.read()
            complete = tail[: tail.rfind(b"\n") + 1]
            table = dict(table)
            for line in complete.decode("ascii", errors="replace").splitlines():
                match = _CHECKSUM_LINE.match(line)
                if match:
                    table[match.group(2)] = match.group(1)
            self._log = (info.st_ino, parsed + len(complete), table)
            return table

    def _read_checked(self, relative: str) -> bytes:
        """The bytes of ``relative``, after checking them against the checksum log.

        Raises
        ------
        FileNotFoundError
            When the file does not exist.
        RunError
            When the file does not match its checksum, has none, or is a symbolic link.
        """
        try:
            data = _read_file(self.path / relative)
        except FileNotFoundError:
            raise
        except OSError as error:
            what = "a symbolic link" if error.errno == errno.ELOOP else "not a regular file"
            raise RunError(
                f"{relative} of {self.kind} {self.path.name} is {what}; privgame reads only the files "
                f"it wrote, never through a link: {self._fix(relative)}"
            ) from None
        problem = self._checksum_problem(relative, data)
        if problem is not None:
            raise RunError(problem)
        return data

    def _fix(self, relative: str) -> str:
        """What to do about a damaged ``relative``."""
        if relative in self.inputs:
            return f"the {self.kind} cannot be used: start a new {self.kind} from the original data file."
        return (
            f"resume the {self.kind} to recompute it (its other checkpoints are kept): "
            f"python -m privgame resume {self.path}"
        )

    def _checksum_problem(self, relative: str, data: bytes) -> str | None:
        expected = (self._checksums() or {}).get(relative)
        if expected is not None and expected == sha256_hex(data):
            return None
        if expected is None:
            what = (
                "has no checksum in checksums.sha256 (it was being written when the engine stopped, "
                "or the line was removed), so it cannot be trusted"
            )
        else:
            what = "does not match the SHA-256 checksum recorded when it was written: it is corrupt"
        return f"{relative} of {self.kind} {self.path.name} {what}; {self._fix(relative)}"

    def _intact(self, relative: str) -> bool:
        """Whether ``relative`` exists and matches its checksum."""
        try:
            data = _read_file(self.path / relative)
        except OSError:
            return False
        return self._checksum_problem(relative, data) is None


def refuse_link(path: Path, what: str) -> None:
    """Refuse to open ``path`` as a ``what`` folder (``"run"``, ``"study"``) if it is a symbolic link.

    Raises
    ------
    RunError
        When ``path`` is a symbolic link, naming where it points.
    """
    if path.is_symlink():
        raise RunError(
            f"{path} is a symbolic link; privgame opens {what} folders only as real folders, so that "
            f"nothing is read or deleted outside the runs folder. Open the folder it points to "
            f"({path.resolve()}) directly, or remove the link."
        )


class RunFolder(CheckedFolder):
    """Read and write one run folder.

    Parameters
    ----------
    path : path-like
        The run folder (it must exist, hold ``spec.json``, and not be a symbolic link).
    """

    inputs = ("spec.json", "data.parquet")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        refuse_link(self.path, "run")
        if not (self.path / "spec.json").is_file():
            raise RunError(
                f"{self.path} is not a privgame run folder (it has no spec.json); "
                "give the folder a run was written to."
            )

    @property
    def run_id(self) -> str:
        """The folder's name."""
        return self.path.name

    def _fix(self, relative: str) -> str:
        if relative == PLAN:
            return (
                "its checkpoints of shared datasets cannot be matched to their units any more: delete "
                f"{self.path / 'shared'} and resume the run, which makes them again (the targets' "
                f"checkpoints are kept): python -m privgame resume {self.path}"
            )
        if relative == UTILITY:
            return f"measure it again: python -m privgame utility {self.path}"
        if relative == ANONYMITY:
            return f"measure it again: python -m privgame anonymity {self.path}"
        return super()._fix(relative)

    # -- spec and data -------------------------------------------------------------------
    def spec(self) -> RunSpec:
        """The frozen run spec."""
        data = self._read_checked("spec.json")
        try:
            return RunSpec.from_json(data.decode())
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise RunError(f"{self.path / 'spec.json'} is corrupt ({exc}); the run cannot be read.") from None

    def write_spec(self, spec: RunSpec) -> None:
        """Replace the spec (only :func:`privgame.games.engine.extend` does: more evaluation runs)."""
        write_checked(self.path, "spec.json", spec.to_json().encode())

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

    # -- the unit plan ----------------------------------------------------------------------
    def unit_plan(self) -> dict[str, Any] | None:
        """The run's unit plan from ``plan.json`` (checked), or None when none was written yet.

        Raises
        ------
        RunError
            When ``plan.json`` does not match its checksum, has none, or does not hold a plan.
        """
        try:
            data = self._read_checked(PLAN)
        except FileNotFoundError:
            return None
        try:
            plan = json.loads(data)
        except (ValueError, RecursionError):
            plan = None
        if not (isinstance(plan, dict) and all(_is_count(plan.get(k)) and plan[k] >= 1 for k in _PLAN_KEYS)):
            raise RunError(f"{PLAN} of run {self.run_id} does not hold a unit plan; {self._fix(PLAN)}")
        return plan

    def write_unit_plan(self, plan: Mapping[str, Any]) -> None:
        """Write the unit plan once, before the first checkpoint (``plan.json``, checksummed)."""
        write_checked(self.path, PLAN, json_bytes(dict(plan)))

    def shared_starts(self, role: str) -> list[int]:
        """The first dataset index of every checkpoint file of ``role``, sorted (names only)."""
        role = _safe_role(role)
        starts = []
        for path in (self.path / "shared").glob(f"{role}-*.npz"):
            match = _SHARED_FILE.match(path.name)
            if match and match.group(1) == role:
                starts.append(int(match.group(2)))
        return sorted(starts)

    # -- checkpoints ----------------------------------------------------------------------
    def save_shared(self, role: str, start: int, datasets: np.ndarray) -> None:
        """Checkpoint shared synthetic datasets ``start .. start + len(datasets)`` of ``role``."""
        write_checked(self.path, _shared_name(role, start), _npz_bytes(_shared_arrays(datasets)))

    def shared_done(self, role: str, start: int) -> bool:
        """Whether that chunk is checkpointed and matches its checksum (else it is recomputed)."""
        return self._intact(_shared_name(role, start))

    def load_shared(self, role: str) -> np.ndarray:
        """Every checkpointed chunk of ``role`` in index order, as one (m, n, d) array.

        The chunks must follow each other without overlap or gap (each starts where the one
        before it ends), as the chunks of one unit plan do; chunks of two plans are never mixed.

        Raises
        ------
        RunError
            When there is none, one does not match its checksum, or they do not fit together.
        """
        starts = self.shared_starts(role)
        if not starts:
            raise RunError(f"No shared datasets {role!r} in {self.path}; run the engine first.")
        parts = []
        made = 0
        for start in starts:
            if start != made:
                raise RunError(
                    f"The checkpoints of the shared datasets {role!r} of run {self.run_id} do not fit "
                    f"together: one starts at dataset {start}, the ones before it end at {made} (they "
                    f"were made with two different unit plans); {self._fix(PLAN)}"
                )
            datasets = _datasets_from(self._load_npz(_shared_name(role, start)))
            parts.append(datasets)
            made += len(datasets)
        return np.concatenate(parts)

    def load_shared_chunk(self, role: str, start: int) -> np.ndarray:
        """The datasets of one checkpointed chunk of ``role`` (checked against its checksum)."""
        return _datasets_from(self._load_npz(_shared_name(role, start)))

    def save_target(self, record_id: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one evaluated target."""
        write_checked(self.path, _target_name(record_id), _npz_bytes(arrays))

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

    def save_attack(self, record_id: int, classifier: np.ndarray) -> None:
        """Store a target's trained attack (pickled meta-classifier bytes) for the engine to reuse."""
        write_checked(self.path, _attack_name(record_id), _npz_bytes({"classifier": classifier}))

    def load_attack(self, record_id: int) -> np.ndarray | None:
        """A stored attack of ``record_id``, or None when there is none or it fails its checksum
        (the engine then trains it, which gives the same classifier)."""
        if not self._intact(_attack_name(record_id)):
            return None
        return self._load_npz(_attack_name(record_id))["classifier"]

    def save_pool(self, name: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one unit of the pooled traditional game as ``pool/<name>.npz``."""
        write_checked(self.path, _pool_name(name), _npz_bytes(arrays))

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

    # -- the screen (privgame.games.screen) ------------------------------------------------
    def save_screen_chunk(self, start: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint screening datasets ``start ..`` (every record's statistics on each)."""
        write_checked(self.path, _screen_name(start), _npz_bytes(arrays))

    def screen_chunk_done(self, start: int) -> bool:
        """Whether that screening chunk is checkpointed and intact (else it is recomputed)."""
        return self._intact(_screen_name(start))

    def load_screen_chunk(self, start: int) -> dict[str, np.ndarray]:
        """One checkpointed screening chunk (checked against its checksum)."""
        return self._load_npz(_screen_name(start))

    def write_screen(self, screened: pd.DataFrame) -> None:
        """Write the screen's per-record table (``screen.parquet``)."""
        buffer = io.BytesIO()
        screened.to_parquet(buffer, index=False)
        write_checked(self.path, SCREEN, buffer.getvalue())

    def has_screen(self) -> bool:
        """Whether the run screened every record and wrote the table."""
        return (self.path / SCREEN).is_file()

    def screen(self) -> pd.DataFrame:
        """The screen's per-record table: one row per record of D.

        Raises
        ------
        RunError
            When the run has no screen (``--screen none``, or it has not finished screening), or
            the table does not match its checksum.
        """
        if not self.has_screen():
            raise RunError(
                f"Run {self.run_id} has no screen: it was started with --screen none, or has not finished "
                f"screening (resume it with: python -m privgame resume {self.path})."
            )
        return self._read_parquet(SCREEN)

    def finished_targets(self) -> list[int]:
        """Record ids of every checkpointed target (with a recorded checksum)."""
        folder = self.path / "targets"
        if not folder.is_dir():
            return []
        ids = sorted(int(p.stem) for p in folder.glob("*.npz") if p.stem.isdigit())
        checksums = self._checksums() or {}
        return [i for i in ids if _target_name(i) in checksums]

    # -- results ------------------------------------------------------------------------
    def write_results(self, records: pd.DataFrame, scores: pd.DataFrame, summary: Mapping[str, Any]) -> None:
        """Write the final per-record results, every score and the summary.

        ``records.parquet`` is written last, so that :meth:`has_results` implies the others exist.
        """
        buffer = io.BytesIO()
        scores.to_parquet(buffer, index=False)
        write_checked(self.path, "scores.parquet", buffer.getvalue())
        write_checked(self.path, "summary.json", json_bytes(dict(summary)))
        from privgame.core.csvsafe import csv_safe  # a spreadsheet must not run a record's text

        write_checked(
            self.path,
            "records.csv",
            csv_safe(records).to_csv(index=False, lineterminator="\n").encode(),
        )
        buffer = io.BytesIO()
        records.to_parquet(buffer, index=False)
        write_checked(self.path, "records.parquet", buffer.getvalue())

    def has_results(self) -> bool:
        """Whether the final results are written."""
        return (self.path / "records.parquet").is_file()

    def is_done(self) -> bool:
        """Whether the run finished: its state is ``done`` and its results are written."""
        return self.status().get("state") == "done" and self.has_results()

    def current_status(self) -> dict[str, Any]:
        """:meth:`status` as it stands: a run whose engine is gone (:meth:`engine_gone`) reads as
        ``failed``, its ``error`` saying so and how to resume it.

        Its ``status.json`` is left as it is: only an engine that holds the run writes it.
        """
        status = self.status()
        if status.get("state") == "running" and self.engine_gone():
            status = {**status, "state": "failed", "error": self._gone()}
        return status

    def _gone(self) -> str:
        return (
            f"Run {self.run_id} failed: the process that ran it ended before the run finished, "
            "without recording why (it was killed or interrupted, or the generator ended the "
            "process itself, as a plug-in calling os._exit does). Its finished units are kept; "
            f"resume it with: python -m privgame resume {self.path}"
        )

    def require_done(self, *, what: str = "results exist") -> None:
        """Raise a clear error, with the command that finishes the run, unless it is done.

        Raises
        ------
        RunError
            ``"Run … is running; results exist only once it is done (resume it with: …)"``, with
            ``what`` in place of "results exist"; for a run whose engine is gone, that it failed.
        """
        if not self.is_done():
            if self.engine_gone():
                raise RunError(self._gone())
            state = self.status().get("state")
            if state == "done":  # its status says done, but its results are gone
                raise RunError(
                    f"Run {self.run_id} is marked done but its results (records.parquet) are missing; "
                    f"resume it to write them again from its checkpoints: python -m privgame resume "
                    f"{self.path}"
                )
            raise RunError(
                f"Run {self.run_id} is {state}; {what} only once it is done "
                f"(resume it with: python -m privgame resume {self.path})."
            )

    def records(self) -> pd.DataFrame:
        """The per-record results.

        Raises
        ------
        RunError
            When the run has no results yet, or ``records.parquet`` does not match its checksum.
        """
        if not self.has_results():
            raise RunError(f"Run {self.run_id} has no results yet (state: {self.status().get('state')}).")
        from privgame.core.records import normalise_records  # an older run's layout, read as today's

        return normalise_records(self._read_parquet("records.parquet"))

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

    # -- utility ------------------------------------------------------------------------
    def write_utility(self, utility: Mapping[str, Any]) -> None:
        """Write the run's utility figures (``utility.json``, checksummed; see
        :mod:`privgame.analysis.utility`)."""
        write_checked(self.path, UTILITY, json_bytes(dict(utility)))

    def read_utility(self) -> dict[str, Any] | None:
        """The stored utility figures, or None when none were measured.

        Raises
        ------
        RunError
            When ``utility.json`` does not match its checksum, has none, or is not a JSON object.
        """
        try:
            data = self._read_checked(UTILITY)
        except FileNotFoundError:
            return None
        try:
            utility = json.loads(data)
        except (ValueError, RecursionError):
            utility = None
        if not isinstance(utility, dict):
            raise RunError(f"{UTILITY} of run {self.run_id} is unreadable; {self._fix(UTILITY)}")
        return utility

    # -- the three risks (anonymeter) ---------------------------------------------------
    def write_anonymity(self, anonymity: Mapping[str, Any]) -> None:
        """Write anonymeter's three risks of the run's release (``anonymity.json``, checksummed;
        see :mod:`privgame.analysis.anonymity`)."""
        write_checked(self.path, ANONYMITY, json_bytes(dict(anonymity)))

    def read_anonymity(self) -> dict[str, Any] | None:
        """The stored three risks, or None when they were never measured.

        Raises
        ------
        RunError
            When ``anonymity.json`` does not match its checksum, has none, or is not a JSON object.
        """
        try:
            data = self._read_checked(ANONYMITY)
        except FileNotFoundError:
            return None
        try:
            figures = json.loads(data)
        except (ValueError, RecursionError):
            figures = None
        if not isinstance(figures, dict):
            raise RunError(f"{ANONYMITY} of run {self.run_id} is unreadable; {self._fix(ANONYMITY)}")
        return figures

    # -- the release's similarity checks -------------------------------------------------
    def write_similarity(self, similarity: Mapping[str, Any]) -> None:
        """Write the audited release's similarity figures (``similarity.json``, checksummed; see
        :mod:`privgame.games.closeness`)."""
        write_checked(self.path, SIMILARITY, json_bytes(dict(similarity)))

    def read_similarity(self) -> dict[str, Any] | None:
        """The stored similarity figures, or None when none were measured (or they are damaged:
        the engine measures them again).
        """
        try:
            data = self._read_checked(SIMILARITY)
        except (FileNotFoundError, RunError):
            return None
        try:
            similarity = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return similarity if isinstance(similarity, dict) else None

    def damage(self) -> str | None:
        """What is wrong with the run's status or spec (the fix included), or None when both read."""
        status = self.status()
        if status.get("state") == DAMAGED:
            return str(status.get("error"))
        try:
            self.spec()
        except RunError as error:
            return str(error)
        return None

    def info(self) -> RunInfo:
        """A short description for lists (state :data:`DAMAGED` when the status or spec is)."""
        status = self.status()
        state = str(status.get("state", "created"))
        problem = status.get("error") if state == DAMAGED else None
        try:
            spec = self.spec()
            generator, data_name = spec.generator, spec.data_name
        except RunError as error:
            generator, data_name = "?", "?"
            state, problem = DAMAGED, problem or str(error)
        created = status.get("created")
        if not _is_number(created):
            try:
                created = (self.path / "spec.json").stat().st_mtime
            except OSError:
                created = 0.0
        # Progress is counted in generator fits everywhere (the pages, the command line's bar):
        # units differ in size, so a share of units is not a share of the work.
        total = status.get("fits_total") or status.get("total_units") or 0
        done = status.get("fits_done") if status.get("fits_total") else status.get("done_units")
        if status.get("phase") == "screen" and status.get("screen_total"):
            # The screen of every record runs first, one fit per screening dataset.
            total, done = status.get("screen_total"), status.get("screen_done")
        done = done or 0
        return RunInfo(
            run_id=self.run_id,
            path=self.path,
            state=state,
            created=float(created),
            generator=generator,
            data_name=data_name,
            n_targets=status.get("n_targets"),
            progress=min(1.0, done / total) if total else 0.0,
            problem=problem,
        )

    def delete(self) -> None:
        """Remove the run folder and everything in it (a symbolic link: the link only).

        Raises
        ------
        RunError
            When an engine is running the run, or the folder cannot be removed.
        """
        status = self.status()
        if self.is_running() or (status.get("state") in ("queued", "running") and not self.status_is_stale()):
            raise RunError(f"Run {self.run_id} is running; cancel it before deleting it.")
        remove_folder(self.path, f"run {self.run_id}")


def remove_folder(path: Path, what: str) -> None:
    """Remove ``path`` (a symbolic link: only the link), turning an OS error into a RunError.

    Raises
    ------
    RunError
        When the folder cannot be removed completely, naming what to do.
    """
    try:
        if path.is_symlink():
            path.unlink()
        else:
            shutil.rmtree(path)
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        raise RunError(
            f"Could not delete {what} completely: {error.strerror or error}{where}; check the "
            f"permissions of {path} and remove what is left by hand."
        ) from None


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


def run_name_part(generator: str) -> str:
    """The part of a run folder's name that names its generator (see :func:`new_run_folder`).

    Raises
    ------
    RunError
        When the generator name could not be part of a folder name.
    """
    part = _id_generator(generator)
    if part is None:
        raise RunError(
            f"Generator name {generator!r} cannot name a run folder; generator names use "
            "only lower-case letters, digits and underscores, and plug-ins are named module.path:ClassName."
        )
    return part


def new_run_folder(root: str | os.PathLike[str], spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """Write a new run folder under ``root`` holding ``spec`` and the prepared ``table``.

    Nothing is checked here but what the folder itself needs: a run is created with
    :func:`privgame.games.preflight.create_run`, which checks first everything that can be checked
    before the run starts. If writing fails (a full disk), what was written is removed, so no copy
    of the table is left behind.

    The folder name is ``YYYYmmdd-HHMMSS-<generator>-<6 hex>``; it never contains user text (a
    generator name is one of the registered names, checked here against ``[a-z0-9_]``, or a
    plug-in's ``plugin_<slug>``, see :func:`_id_generator`). The folder is readable by its owner
    only (0700), whatever the umask, and so are its files (0600).

    Raises
    ------
    RunError
        When the generator name could not be part of a folder name.
    OutputError
        When the folder cannot be written (``root`` is a file, read-only, or the disk is full).
    """
    generator = run_name_part(spec.generator)
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    data = buffer.getvalue()
    del buffer
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise write_error(root, error) from None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for _ in range(10):
        run_id = f"{stamp}-{generator}-{secrets.token_hex(3)}"
        path = root / run_id
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
        except OSError as error:
            raise write_error(path, error) from None
    else:  # pragma: no cover - ten random collisions in one second
        raise RunError(f"Could not create a new run folder under {root}.")
    try:
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask; an odd umask must not widen it
        write_checked(path, "data.parquet", data)
        write_checked(path, "spec.json", spec.to_json().encode())
        folder = RunFolder(path)
        folder.write_status(state="created", created=time.time(), done_units=0, total_units=None)
    except BaseException as error:
        shutil.rmtree(path, ignore_errors=True)  # no half-made run, and no stray copy of the table
        if isinstance(error, OSError):
            raise write_error(path, error) from None
        raise
    return folder


@contextlib.contextmanager
def launching(root: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the launch lock of the runs folder ``root`` (made if missing) for the ``with`` block:
    an exclusive ``flock`` on the folder itself, so that no lock file is left among the runs.

    The dashboard answers a second click at once, on a new thread, while the first click's launch
    is still checking the generator; a reload or a second tab does the same from another session.
    Under this lock, looking for a run with the same settings and making it when there is none is
    one step for every thread and process, so a launch is made once however often it is asked for.
    """
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:  # e.g. $PRIVGAME_RUNS names a file: the same words on every face
        raise write_error(root, error) from None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def real_folders(root: Path) -> Iterator[Path]:
    """The folders directly under ``root``, sorted; symbolic links are skipped, never followed."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return
    for path in entries:
        if not path.is_symlink() and path.is_dir():
            yield path


def symlinked_entries(root: str | os.PathLike[str]) -> list[str]:
    """Names of the entries directly under ``root`` that are symbolic links (never listed as runs)."""
    try:
        return sorted(p.name for p in Path(root).iterdir() if p.is_symlink())
    except OSError:
        return []


def iter_run_folders(root: str | os.PathLike[str]) -> Iterator[RunFolder]:
    """Every run folder directly under ``root`` (a symbolic link to a folder is not one)."""
    root = Path(root)
    if not root.is_dir():
        return
    for path in real_folders(root):
        if _RUN_ID.match(path.name) and (path / "spec.json").is_file():
            yield RunFolder(path)


def list_runs(root: str | os.PathLike[str]) -> list[RunInfo]:
    """Every run under ``root``, newest first; a damaged run is listed with the state ``damaged``."""
    return sorted((f.info() for f in iter_run_folders(root)), key=lambda i: i.created, reverse=True)


def open_run(root: str | os.PathLike[str], run_id: str) -> RunFolder:
    """Open the run ``run_id`` under ``root``; ``run_id`` must be a run folder name.

    Raises
    ------
    RunError
        For a name that is not a run id, a symbolic link, or a folder that is not a run's.
    """
    if not _RUN_ID.match(run_id):
        raise RunError(f"{run_id!r} is not a run id (expected e.g. 20261130-101500-synthpop-1a2b3c).")
    return RunFolder(Path(root) / run_id)
