"""A folder's ``status.json`` (its schema, read so that a damaged one never breaks a list) and its
``engine.lock`` (the claim an engine holds while it works; see :mod:`privgame.store.folders`)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from privgame.core.errors import OutputError, RunError
from privgame.store import files

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no claim (one engine per folder is then on the user)
    fcntl = None  # type: ignore[assignment]

__all__ = ["DAMAGED", "LOCK", "STATES", "StatusFolder", "status_problem"]

STATES = ("created", "queued", "running", "done", "failed", "cancelled")
DAMAGED = "damaged"
"""The state a run or study reads as when its ``status.json`` (or its spec) is damaged."""
LOCK = "engine.lock"
_MAX_STATUS_BYTES = 4 * 2**20
_CLAIM_WAIT_SECONDS = 0.5
"""How long a claim waits for the lock: long enough for a probe of :meth:`StatusFolder.is_running`
(microseconds) to let go, far shorter than any engine holds it."""


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


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_count(value: Any) -> bool:
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
        if status.get(key) is not None and not is_number(status[key]):
            return f"{key} is {_shown(status[key])}, not a number"
    for key in _COUNTS:
        if status.get(key) is not None and not is_count(status[key]):
            return f"{key} is {_shown(status[key])}, not a whole number >= 0"
    workers = status.get("workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool)):
        return f"workers is {_shown(workers)}, not a whole number"
    for key in _TEXTS:
        if status.get(key) is not None and not isinstance(status[key], str):
            return f"{key} is {_shown(status[key])}, not a text"
    ids = status.get("target_ids")
    if ids is not None and not (isinstance(ids, list) and all(is_count(i) for i in ids)):
        return "target_ids is not a list of record ids"
    groups = status.get("audit_groups")
    if groups is not None and not (
        isinstance(groups, dict)
        and all(isinstance(v, list) and all(is_count(i) for i in v) for v in groups.values())
    ):
        return "audit_groups is not an object of lists of record ids"
    for key in ("unit_plan", "unit_seconds"):
        value = status.get(key)
        if value is not None and not (isinstance(value, dict) and all(is_number(v) for v in value.values())):
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
            data = files.read_file(self.path / "status.json", limit=_MAX_STATUS_BYTES)
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
        data = files.json_bytes(status)
        try:
            files.atomic_write(self.path / "status.json", data)
        except OutputError:
            # A full disk has no room for a second copy; rewriting the file in place reuses the
            # old one's blocks, so that e.g. "failed" and its reason still get recorded.
            if not _overwrite(self.path / "status.json", data):
                raise
        return status

    def request_cancel(self) -> None:
        """Ask the engine working on this folder to stop after the units in flight."""
        files.atomic_write(self.path / "cancel", b"cancel requested\n")

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
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | files.NOFOLLOW | files.CLOEXEC, 0o600)
            except OSError as error:
                raise files.write_error(lock, error) from None
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
                raise files.write_error(lock, error) from None
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
            fd = os.open(self.path / LOCK, os.O_RDONLY | files.NOFOLLOW | files.CLOEXEC)
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
        return time.time() - (float(updated) if is_number(updated) else 0.0) > seconds


def _overwrite(path: Path, data: bytes) -> bool:
    """Rewrite the existing file ``path`` in place (not atomic: a last resort); True on success."""
    try:
        fd = os.open(path, os.O_WRONLY | files.NOFOLLOW | files.CLOEXEC)
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
