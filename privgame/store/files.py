"""The run store's files on disk: atomic writes, the checksum log, strict JSON and npz encodings,
and reads that never follow a symbolic link (see :mod:`privgame.store.folders` for the layout)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import math
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from privgame.core.errors import OutputError

__all__ = [
    "CHECKSUMS",
    "append_checksum",
    "atomic_write",
    "interrupts_kept",
    "json_bytes",
    "npz_bytes",
    "parquet_bytes",
    "read_file",
    "read_parquet_bytes",
    "sha256_hex",
    "write_checked",
    "write_error",
]

CHECKSUMS = "checksums.sha256"
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


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
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | CLOEXEC, 0o600)
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


def read_file(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, never through a symbolic link.

    Raises
    ------
    FileNotFoundError
        When there is no such file.
    OSError
        ``ELOOP`` for a symbolic link, ``EISDIR`` for anything that is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | NOFOLLOW | CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
        return handle.read() if limit is None else handle.read(limit + 1)


def read_parquet_bytes(data: bytes) -> pd.DataFrame:
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
        fd = os.open(folder / CHECKSUMS, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW | CLOEXEC, 0o600)
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


@contextlib.contextmanager
def interrupts_kept() -> Iterator[None]:
    """Raise an interrupt (Ctrl-C, or SIGTERM, which the command line turns into one) as itself
    when it lands inside a library's clean-up and comes out as that library's own error.

    ``np.savez`` interrupted while it closes its zip member raised "Can't close the ZIP file while
    there is an open writing handle on it", and the command ended with status 1 and a traceback
    instead of its resume command. The bytes are made in memory, so nothing is half written.

    In the main thread, SIGINT and SIGTERM are also held back until the body ends (it only encodes
    in memory, so briefly): an interrupt that lands inside ``zipfile`` left an abandoned archive
    whose clean-up printed "Exception ignored ... Traceback" beside the resume command. Held back,
    the interrupt arrives after the body, at a clean point.
    """
    with _signals_held():
        try:
            yield
        except Exception as error:
            seen: BaseException | None = error
            while seen is not None:
                if isinstance(seen, KeyboardInterrupt):
                    raise seen from None
                seen = seen.__context__ or seen.__cause__
            raise


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """In the main thread, note SIGINT and SIGTERM instead of acting on them until the body ends,
    then hand each to the handler it would have reached (Python runs signal handlers in the main
    thread only, so blocking the signal there would not hold one the kernel gives another thread)."""
    kinds = (signal.SIGINT, signal.SIGTERM)
    # A handler installed outside Python (None) could not be put back: leave the signals alone.
    if threading.current_thread() is not threading.main_thread() or any(
        signal.getsignal(kind) is None for kind in kinds
    ):
        yield
        return
    pending: list[int] = []
    previous = {kind: signal.signal(kind, lambda number, _frame: pending.append(number)) for kind in kinds}
    try:
        yield
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)
        for number in pending:
            handler = previous[signal.Signals(number)]
            if callable(handler):
                handler(number, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), number)


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """``arrays`` as the bytes of an ``.npz`` file (made in memory; see :func:`interrupts_kept`)."""
    buffer = io.BytesIO()
    with interrupts_kept():
        np.savez(buffer, **arrays)
    return buffer.getvalue()


def parquet_bytes(table: pd.DataFrame) -> bytes:
    """``table`` as the bytes of a Parquet file, without its index (made in memory; see
    :func:`interrupts_kept`)."""
    buffer = io.BytesIO()
    with interrupts_kept():
        table.to_parquet(buffer, index=False)
    return buffer.getvalue()
