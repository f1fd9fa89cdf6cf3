"""Where units of work run: local processes through joblib (loky) by default, a Dask cluster
when a scheduler address is given.

The engine hands :func:`run_calls` a list of calls and consumes the results in completion order;
which executor ran them never changes the results, since every unit seeds itself from plain
integers.

On Dask, the objects named in ``shared`` (the run's context, the shared synthetic datasets) are
scattered to every worker once and the tasks refer to them; a worker that dies takes only its
running unit with it, which the scheduler runs again elsewhere. If the last copy of a shared object
is lost (every worker holding it died), the shared objects are scattered again and the unfinished
units resubmitted. Closing the iterator (a cancel) cancels every future not yet finished. Before
the client connects, the scheduler's handshake is awaited with a time limit, so an address that
accepts connections but is not a Dask scheduler (a web server, Dask's dashboard port, a silent
listener) ends in a clear error instead of a hang.

Local worker processes hold the private table and synthetic data in memory, so they must not
outlive the engine: each runs a watchdog thread that ends the worker as soon as its parent process
is gone (a SIGKILL of the engine included), and the arrays shared with them are in a temporary
folder that the workers' resource tracker deletes when every process using it has ended.

An external generator's command (:mod:`privgame.generators.external`) runs in a session of its own
with a copy of the private table in a temporary folder, which a worker killed outright would leave
behind. So a worker ends on SIGTERM only after ending its commands and removing their folders (so
does its watchdog); before joblib kills the workers (an error, Ctrl-C, SIGTERM, a cancel), the
engine sends them SIGTERM and waits a little for that clean-up; and it then sweeps the folders of
workers that died without any (:func:`~privgame.generators.external.remove_leftovers`). A worker
ended by SIGTERM (``timeout`` and service managers signal every process of the group) interrupts
the run as Ctrl-C does; any other death of a worker fails it (:class:`WorkerLostError`). A process
runs one engine on its local workers at a time: the pool of workers is this process's.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import math
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait as wait_for_ends
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from joblib._parallel_backends import LokyBackend
from joblib.externals.loky.process_executor import TerminatedWorkerError

from privgame.core.defaults import PLUGIN_TIME_LIMIT_SETTING
from privgame.core.errors import ParameterError, RunError, WorkerLostError
from privgame.generators.external import remove_leftovers, set_owner, stop_commands

__all__ = [
    "MIN_UNITS",
    "MIN_UNIT_SECONDS",
    "Call",
    "Cancelled",
    "batch_size",
    "default_workers",
    "describe_executor",
    "resolve_workers",
    "run_calls",
    "scheduler_address",
    "until_cancelled",
]

Call = tuple[Any, Callable[..., Any], tuple[Any, ...]]

MIN_UNIT_SECONDS = 1.0
"""A unit should take at least this long, so that per-unit overhead (tens of ms) stays under 5%."""

MIN_UNITS = 8
"""A phase too short for this many one-second units is spread over up to this many shorter ones."""

CONNECT_SECONDS = 10.0
"""How long connecting to a Dask scheduler, handshake included, may take."""
WORKER_WAIT_SECONDS = 60.0
MAX_RESUBMITS = 3
_MEMMAP_BYTES = 2**20
_PARENT_POLL_SECONDS = 0.2
_STOP_SECONDS = 5.0
"""How long the engine waits for its stopped workers to clean up before they are killed."""
_EXIT_TERMINATED = 128 + signal.SIGTERM
# The exit codes of a worker ended by SIGTERM, as loky reports them: by _terminated, or by the
# signal itself before the worker had its handler.
_TERMINATED_CODES = {f"EXIT({_EXIT_TERMINATED})", f"SIGTERM(-{signal.SIGTERM.value})"}


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def resolve_workers(workers: int | None) -> int:
    """The number of local worker processes ``workers`` asks for, as a count >= 1.

    ``None`` or 0: every core (:func:`default_workers`); a negative number counts back from it as
    joblib does (``-1``: every core, ``-2``: all but one).

    Raises
    ------
    ParameterError
        For a negative number beyond the cores, or a value that is not a whole number.
    """
    if workers is None or (isinstance(workers, int) and not isinstance(workers, bool) and workers == 0):
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise ParameterError(f"--workers must be a whole number; got {workers!r}.")
    if workers > 0:
        return workers
    cores = default_workers()
    if cores + 1 + workers < 1:
        raise ParameterError(
            f"--workers {workers} asks for {cores + 1 + workers} worker processes on {cores} cores; give "
            "a positive number, or -1 for every core."
        )
    return cores + 1 + workers


def scheduler_address(explicit: str | None = None) -> str | None:
    """The Dask scheduler to use: ``explicit``, else ``$PRIVGAME_SCHEDULER``, else None (local)."""
    address = (explicit or os.environ.get("PRIVGAME_SCHEDULER") or "").strip() or None
    if address is not None and not address.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        raise ParameterError(
            f"Scheduler address {address!r} is not a Dask address; give it as tcp://HOST:PORT."
        )
    return address


def describe_executor(workers: int | None, scheduler: str | None) -> dict[str, Any]:
    """What a run records about how it was executed (merged into ``status.json``).

    ``workers`` is resolved first (:func:`resolve_workers`), so the record says how many worker
    processes actually ran (``-1`` is recorded as the number of cores).
    """
    if scheduler:
        return {"executor": "dask", "scheduler": scheduler, "workers": None}
    workers = resolve_workers(workers)
    return {"executor": "loky" if workers > 1 else "in-process", "workers": workers, "scheduler": None}


def batch_size(
    item_seconds: float,
    count: int,
    *,
    max_items: int | None = None,
    floor_seconds: float = MIN_UNIT_SECONDS / 10,
) -> int:
    """How many items to put in one unit so that it takes about :data:`MIN_UNIT_SECONDS`.

    Parameters
    ----------
    item_seconds : float
        Estimated seconds one item (a generator fit, a target) takes.
    count : int
        Items in the phase.
    max_items : int, optional
        A hard cap (e.g. so that a unit's result stays a few tens of MB).
    floor_seconds : float
        Units are never made shorter than this (by the estimate) to spread a short phase; 0 when
        the estimate is only a lower bound, so that short items are merged no more than needed.

    Returns
    -------
    int
        At least 1. A phase too short to fill :data:`MIN_UNITS` one-second units is split into
        :data:`MIN_UNITS` units instead (parallelism matters more there than overhead), but not
        into units shorter than ``floor_seconds``.
    """
    if count <= 1:
        return 1
    item_seconds = max(float(item_seconds), 1e-6)
    full = math.ceil(MIN_UNIT_SECONDS / item_seconds)
    floor = math.ceil(floor_seconds / item_seconds) if floor_seconds > 0 else 1
    size = min(full, max(floor, count // MIN_UNITS))
    if max_items is not None:
        size = min(size, max_items)
    return max(1, min(size, count))


def _keyed(key: Any, fn: Callable[..., Any], *args: Any) -> tuple[Any, Any, float]:
    start = time.perf_counter()
    result = fn(*args)
    return key, result, time.perf_counter() - start


def run_calls(
    calls: Sequence[Call],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    shared: Sequence[Any] = (),
) -> Iterator[tuple[Any, Any, float]]:
    """Run ``calls`` (key, function, args) and yield ``(key, result, seconds)`` as each finishes.

    Parameters
    ----------
    calls : sequence of (key, function, args)
        Functions must be importable (module-level) where they run.
    workers : int, optional
        Local worker processes (1: in this process); every core by default. Ignored on Dask.
    scheduler : str, optional
        A Dask scheduler address; the calls then run on that cluster's workers.
    shared : sequence
        Large objects that several calls take as arguments (matched by identity): arrays, or
        dataclasses holding arrays. On Dask each is scattered to the workers once and tasks refer
        to it; in local processes their large arrays are written once to memory-mapped files,
        which joblib then passes by reference.

    Yields
    ------
    key, result, seconds
        ``seconds`` is the time the call took on its worker.

    Notes
    -----
    Closing the iterator early (a cancel) stops scheduling the remaining calls; on Dask their
    futures are cancelled.
    """
    if not calls:
        return
    if scheduler:
        try:
            yield from _run_on_dask(calls, scheduler, shared)
        except Exception as exc:
            if type(exc).__name__ != "KilledWorker":
                raise
            raise _worker_lost(str(exc)) from None
        return
    n_jobs = min(resolve_workers(workers), len(calls))
    folder = _private_folder() if n_jobs > 1 and shared else None
    if folder is not None:
        mapped = {id(obj): _memory_mapped(obj, Path(folder), str(i)) for i, obj in enumerate(shared)}
        calls = [(key, fn, tuple(mapped.get(id(a), a) for a in args)) for key, fn, args in calls]
    backend = _Backend(initializer=_worker_start, initargs=(os.getpid(),))
    _shut_down_workers_at_exit()
    parallel = Parallel(
        n_jobs=n_jobs, backend=backend, return_as="generator_unordered", max_nbytes=_MEMMAP_BYTES
    )
    results = parallel(delayed(_keyed)(key, fn, *args) for key, fn, args in calls)
    finished = False
    try:
        # Not `yield from`: that would close `results` before the warning filter below applies.
        for item in results:  # noqa: UP028
            yield item
        finished = True
    except (TerminatedWorkerError, BrokenProcessPool) as exc:
        _stop_workers(n_jobs)
        # The broken pool would otherwise be handed to the next call, which would fail at once.
        _shut_down_workers()
        if _terminated(str(exc)):
            raise KeyboardInterrupt from None
        raise _worker_lost(str(exc)) from None
    finally:
        if not finished:  # a unit's error, Ctrl-C, SIGTERM or a cancel: joblib kills the workers next
            _stop_workers(n_jobs)
        with warnings.catch_warnings():
            # A cancel is deliberate: joblib need not tell the user that calls in flight were dropped.
            warnings.filterwarnings(
                "ignore", message=r".*still being processed by the workers", category=UserWarning
            )
            results.close()
        if not finished and n_jobs > 1:
            remove_leftovers()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
            _untrack(folder)


class _Backend(LokyBackend):
    """joblib's process backend, whose workers get this process's limit on plug-in calls (loky
    starts fresh workers when the environment it hands them changes)."""

    def _prepare_worker_env(self, n_jobs: int) -> dict[str, str]:
        env: dict[str, str] = super()._prepare_worker_env(n_jobs)
        env[PLUGIN_TIME_LIMIT_SETTING] = os.environ.get(PLUGIN_TIME_LIMIT_SETTING, "")
        return env


def _worker_lost(detail: str) -> WorkerLostError:
    """The error for a worker process that died mid-unit, with its exit code when the executor
    gave one (loky writes them as ``{EXIT(3)}`` or ``{SIGKILL(-9)}``)."""
    codes = re.search(r"exit codes of the workers are \{([^}]*)\}", detail)
    how = f" ({codes.group(1)})" if codes else ""
    return WorkerLostError(
        f"A worker process ended in the middle of its work{how}: the system may have killed it for "
        "want of memory, native code may have crashed, or the generator ended its own process "
        "(a plug-in calling os._exit). The units finished before it are kept.",
        [
            "resume the run with `python -m privgame resume RUN_FOLDER`, with fewer --workers if "
            "memory was short;",
            "if it happens again at the same place, run with --workers 1 to see the generator's own error.",
        ],
    )


def _terminated(detail: str) -> bool:
    """Whether every worker that died was ended by SIGTERM (as loky's message gives their codes)."""
    codes = re.search(r"exit codes of the workers are \{([^}]*)\}", detail)
    found = {code.strip() for code in codes.group(1).split(",")} if codes else set()
    return bool(found) and found <= _TERMINATED_CODES


def _worker_start(parent: int) -> None:
    """Run in each local worker as it starts (loky's initializer).

    The worker names its external commands' folders after ``parent`` (the engine, which sweeps
    them), ends on SIGTERM after cleaning up (:func:`_end_on_sigterm`), and watches its parent
    (:func:`_exit_with_parent`).
    """
    set_owner(parent)
    signal.signal(signal.SIGTERM, _end_on_sigterm)
    _exit_with_parent(parent)


def _end_on_sigterm(signum: int, frame: Any) -> None:
    """A worker's SIGTERM handler: end its external commands, remove their copies of the data,
    and end the worker with status 128 + SIGTERM.

    The worker ends at once rather than unwinding its unit: plug-in code may catch any exception,
    and loky would hand the exception back as the unit's result and keep the worker. The engine
    loses the unit in flight only; every finished one is checkpointed.
    """
    stop_commands()
    os._exit(128 + signum)


def _stop_workers(n_jobs: int) -> None:
    """Send every local worker SIGTERM and wait, at most :data:`_STOP_SECONDS`, until each has ended
    or no folder of an external command of this engine is left.

    joblib kills the workers outright (SIGKILL) when a call ends early, which would leave each
    external command running and its copy of the private table on disk; after SIGTERM a worker
    removes them itself (:func:`_end_on_sigterm`). A worker busy in native code answers only when
    that returns, so the wait ends as soon as no command folder is left. Nothing is done for a
    call that ran in this process (``n_jobs`` 1): the pool then belongs to no running call.
    """
    if n_jobs <= 1:
        return
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover - joblib without loky
        return
    executor = getattr(reusable_executor, "_executor", None)
    processes = list((getattr(executor, "_processes", None) or {}).values())
    ends = []
    for process in processes:
        try:
            os.kill(process.pid, signal.SIGTERM)
            ends.append(process.sentinel)
        except (OSError, ValueError, AttributeError):  # ended already, or never started
            continue
    deadline = time.monotonic() + _STOP_SECONDS
    while ends and time.monotonic() < deadline:
        ended = wait_for_ends(ends, timeout=0.05)
        ends = [end for end in ends if end not in ended]
        if not _command_folders_left():
            break


def _command_folders_left() -> bool:
    """Whether a folder of an external command of this engine's workers is still there."""
    return any(Path(tempfile.gettempdir()).glob(f"privgame-external-{os.getpid()}-*"))


def _exit_with_parent(parent: int) -> None:
    """Run in each local worker as it starts: end the worker as soon as ``parent`` is gone.

    A watchdog thread compares the worker's parent process with ``parent`` every
    :data:`_PARENT_POLL_SECONDS`; when the engine dies (even by SIGKILL, which runs no clean-up),
    the worker is re-parented and exits at once, with the private data it holds. The parent's
    identity is checked rather than its PID being alive, so a reused PID cannot keep a worker up.
    The worker's external commands are ended and their folders removed first.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_SECONDS)
        stop_commands()  # no engine is left to sweep their folders
        os._exit(1)

    threading.Thread(target=watch, name="privgame-exit-with-parent", daemon=True).start()


_AT_EXIT = threading.Lock()
_at_exit_registered = False


def _shut_down_workers_at_exit() -> None:
    """Shut the reusable worker pool down when this process exits normally (once registered)."""
    global _at_exit_registered
    with _AT_EXIT:
        if not _at_exit_registered:
            atexit.register(_shut_down_workers)
            _at_exit_registered = True


def _shut_down_workers() -> None:
    """Stop the local worker processes, if any were started (the pool joblib reuses)."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover - joblib without loky
        return
    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            executor.shutdown(wait=True, kill_workers=True)


def _private_folder() -> str:
    """A new temporary folder (mode 0700) for arrays shared with local workers.

    Registered with the workers' resource tracker, which deletes it when every process that uses
    it has ended, so a killed engine does not leave copies of private data in ``$TMPDIR``.
    """
    folder = tempfile.mkdtemp(prefix="privgame-shared-")
    try:
        from joblib.externals.loky.backend import resource_tracker

        resource_tracker.register(folder, "folder")
    except Exception:  # pragma: no cover - a joblib without the tracker: deleted at the end only
        pass
    return folder


def _untrack(folder: str) -> None:
    try:
        from joblib.externals.loky.backend import resource_tracker

        resource_tracker.unregister(folder, "folder")
    except Exception:  # pragma: no cover - see _private_folder
        pass


def _memory_mapped(obj: Any, folder: Path, name: str) -> Any:
    """``obj`` with its large arrays replaced by read-only memory maps of copies in ``folder``: an
    array, a tuple of arrays, or a dataclass's fields that are either.

    joblib would otherwise memory-map such arrays itself, but hash their bytes for every call to
    find the file again (about 0.3 s for 60 MB), which would make dispatching a bottleneck.
    """
    if isinstance(obj, np.ndarray) and not isinstance(obj, np.memmap) and obj.nbytes >= _MEMMAP_BYTES:
        path = folder / f"{name}.npy"
        np.save(path, obj, allow_pickle=False)
        return np.load(path, mmap_mode="r")
    if isinstance(obj, tuple) and _holds_arrays(obj):
        return tuple(_memory_mapped(a, folder, f"{name}-{i}") for i, a in enumerate(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {
            f.name: _memory_mapped(value, folder, f"{name}-{f.name}")
            for f in dataclasses.fields(obj)
            if f.init and _holds_arrays(value := getattr(obj, f.name))
        }
        return dataclasses.replace(obj, **changes) if changes else obj
    return obj


def _holds_arrays(value: Any) -> bool:
    """An array, or a tuple of arrays (as the columns of shared synthetic tables)."""
    return isinstance(value, np.ndarray) or (
        isinstance(value, tuple) and bool(value) and all(isinstance(a, np.ndarray) for a in value)
    )


def _worker_version() -> str:
    """Runs on each Dask worker: unpickling this function imports privgame there."""
    from privgame import _version

    return _version.__version__


def _connect(scheduler: str) -> Any:
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask is an optional dependency
        raise ParameterError(
            "Running on a Dask cluster needs the 'distributed' package: pip install 'privgame[dask]'."
        ) from None
    _probe_scheduler(scheduler)
    try:
        client = Client(scheduler, timeout=f"{CONNECT_SECONDS:g}s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise RunError(
            f"Cannot reach the Dask scheduler at {scheduler} ({exc}). Start one with "
            f"'dask scheduler' and workers with 'dask worker {scheduler}', or run without a "
            "scheduler to use this machine's cores."
        ) from None
    try:
        _await_workers(client, scheduler)
        _check_workers(client, scheduler)
    except BaseException:
        client.close()
        raise
    return client


def _probe_scheduler(scheduler: str) -> None:
    """Connect to ``scheduler`` and complete Dask's handshake within :data:`CONNECT_SECONDS`.

    ``distributed`` bounds the TCP connect but waits for the peer's handshake without a limit,
    so an address that accepts connections and answers something else (an HTTP server, Dask's
    dashboard port 8787 instead of the scheduler's 8786) or nothing at all would hang forever.

    Raises
    ------
    RunError
        Naming the address and the fix, when the connection or the handshake fails or takes too long.
    """
    from distributed.comm import connect

    async def handshake() -> None:
        # connect() gives up on the TCP connection after CONNECT_SECONDS by itself ("cannot
        # reach"); the outer limit is the one that catches a handshake that never comes.
        comm = await asyncio.wait_for(connect(scheduler, timeout=CONNECT_SECONDS), 1.5 * CONNECT_SECONDS)
        await comm.close()

    try:
        # A thread of its own, so that a caller inside an event loop (a notebook) can use it too.
        with ThreadPoolExecutor(1, thread_name_prefix="privgame-dask-probe") as pool:
            pool.submit(asyncio.run, handshake()).result()
    except TimeoutError:
        raise RunError(
            f"The address {scheduler} accepted a connection but did not answer as a Dask scheduler "
            f"within {CONNECT_SECONDS:g} s (is it a web server, or Dask's dashboard port 8787 "
            "instead of the scheduler's 8786?). Give the scheduler's address, as 'dask scheduler' "
            "prints it (tcp://HOST:8786 by default), or run without a scheduler to use this "
            "machine's cores."
        ) from None
    except OSError as exc:
        raise RunError(
            f"Cannot reach the Dask scheduler at {scheduler} ({exc}). Start one with "
            f"'dask scheduler' and workers with 'dask worker {scheduler}', or run without a "
            "scheduler to use this machine's cores."
        ) from None
    except Exception as exc:  # the peer sent something that is not Dask's protocol
        raise RunError(
            f"The address {scheduler} did not answer as a Dask scheduler ({type(exc).__name__}); give "
            "the scheduler's address, as 'dask scheduler' prints it (tcp://HOST:8786 by default), or "
            "run without a scheduler to use this machine's cores."
        ) from None


def _await_workers(client: Any, scheduler: str) -> None:
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
    except TimeoutError:
        raise RunError(
            f"The Dask scheduler at {scheduler} has had no workers for {WORKER_WAIT_SECONDS:g} s; "
            f"start some with: dask worker {scheduler} --nworkers N --nthreads 1"
        ) from None


def _check_workers(client: Any, scheduler: str) -> None:
    """Fail early, with the fix, when a worker lacks privgame or runs another version of it."""
    from privgame import _version

    versions = client.run(_worker_version, on_error="return")
    wrong = {
        address: version
        for address, version in versions.items()
        if not isinstance(version, str) or version != _version.__version__
    }
    if wrong:
        address, found = next(iter(wrong.items()))
        found_text = f"privgame {found}" if isinstance(found, str) else f"{type(found).__name__}: {found}"
        raise RunError(
            f"{len(wrong)} of the {len(versions)} workers of {scheduler} cannot run privgame "
            f"{_version.__version__} (e.g. {address}: {found_text}); install the same privgame "
            "version in every worker's Python environment and restart the workers."
        )


def _run_on_dask(
    calls: Sequence[Call], scheduler: str, shared: Sequence[Any]
) -> Iterator[tuple[Any, Any, float]]:
    from distributed import KilledWorker, as_completed
    from distributed.client import FutureCancelledError

    client = _connect(scheduler)
    remaining = dict(enumerate(calls))
    futures: dict[Any, int] = {}
    resubmits = 0
    try:
        while remaining:
            # The scattered futures stay referenced until the round ends, so the cluster keeps the data.
            scattered, futures = _submit(client, remaining, shared)
            lost = False
            for future in as_completed(list(futures), loop=client.loop):
                index = futures.pop(future)
                try:
                    key, result, seconds = future.result()
                except FutureCancelledError:
                    # Only a lost shared object cancels our futures: we cancel none while iterating.
                    lost = True
                    break
                except KilledWorker as exc:
                    raise RunError(
                        f"A unit of work killed Dask workers repeatedly ({exc}); the workers may "
                        "lack memory: give them more (dask worker --memory-limit) and resume the run."
                    ) from None
                future.release()  # the result is ours now; the cluster need not keep (or recompute) it
                del remaining[index]
                yield key, result, seconds
            client.cancel([*futures, *scattered], force=True)
            if lost:
                resubmits += 1
                if resubmits > MAX_RESUBMITS:
                    raise RunError(
                        f"The workers of {scheduler} lost the run's shared data {resubmits} times; "
                        "check that the workers stay up, then resume the run."
                    )
                _await_workers(client, scheduler)
    finally:
        if futures:
            client.cancel(list(futures), force=True)
        client.close()


def _submit(client: Any, calls: dict[int, Call], shared: Sequence[Any]) -> tuple[list[Any], dict[Any, int]]:
    """Scatter ``shared`` to every worker, then submit ``calls`` referring to it.

    Returns the scattered futures and a map from each call's future to its index.
    """
    scattered = client.scatter(list(shared), broadcast=True, hash=False) if shared else []
    by_id = {id(obj): future for obj, future in zip(shared, scattered, strict=True)}
    token = uuid.uuid4().hex[:12]
    futures = {}
    for index, (key, fn, args) in calls.items():
        ready = [by_id.get(id(arg), arg) for arg in args]
        name = f"privgame-{getattr(fn, '__name__', 'unit')}-{token}-{index}"
        futures[client.submit(_keyed, key, fn, *ready, key=name, pure=False, retries=0)] = index
    return scattered, futures


class Cancelled(Exception):
    """Raised by :func:`until_cancelled` when a cancel was requested between two results."""


def until_cancelled(results: Iterator[Any], cancelled: Callable[[], bool]) -> Iterator[Any]:
    """Yield ``results`` until ``cancelled()`` is true, then close the executor's iterator.

    Raises
    ------
    Cancelled
        After the result during which the cancel was noticed has been handed on.
    """
    try:
        for item in results:
            yield item
            if cancelled():
                raise Cancelled
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
