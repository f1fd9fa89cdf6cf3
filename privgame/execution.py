"""Where units of work run: local processes through joblib (loky) by default, a Dask cluster
when a scheduler address is given.

The engine hands this module a list of calls and consumes results in completion order; which
executor ran them never changes the results, since every unit seeds itself from plain integers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from typing import Any

from joblib import Parallel, delayed, parallel_config

from privgame.errors import ParameterError

__all__ = ["Call", "default_workers", "describe_executor", "run_calls", "scheduler_address"]

Call = tuple[Any, Callable[..., Any], tuple[Any, ...]]


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def scheduler_address(explicit: str | None = None) -> str | None:
    """The Dask scheduler to use: ``explicit``, else ``$PRIVGAME_SCHEDULER``, else None (local)."""
    address = explicit or os.environ.get("PRIVGAME_SCHEDULER") or None
    if address is not None and not address.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        raise ParameterError(
            f"Scheduler address {address!r} is not a Dask address; give it as tcp://HOST:PORT."
        )
    return address


def describe_executor(workers: int, scheduler: str | None) -> dict[str, Any]:
    """What a run records about how it was executed."""
    if scheduler:
        return {"executor": "dask", "scheduler": scheduler}
    return {"executor": "loky" if workers > 1 else "in-process", "workers": workers}


def _keyed(key: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any, float]:
    start = time.perf_counter()
    result = fn(*args)
    return key, result, time.perf_counter() - start


def run_calls(
    calls: Sequence[Call], *, workers: int | None = None, scheduler: str | None = None
) -> Iterator[tuple[Any, Any, float]]:
    """Run ``calls`` (key, function, args) and yield ``(key, result, seconds)`` as each finishes.

    ``seconds`` is the time the call took on its worker.

    Closing the iterator early (e.g. on cancel) stops scheduling the remaining calls.
    """
    if not calls:
        return
    workers = workers or default_workers()
    with ExitStack() as stack:
        if scheduler:
            try:
                from distributed import Client
            except ImportError:  # pragma: no cover - dask is a listed dependency
                raise ParameterError(
                    "Running on a Dask cluster needs the 'distributed' package: "
                    "pip install 'dask[distributed]'."
                ) from None
            client = stack.enter_context(Client(scheduler, timeout="10s"))
            stack.enter_context(parallel_config(backend="dask", wait_for_workers_timeout=60))
            del client
            n_jobs = -1
        else:
            n_jobs = min(workers, len(calls))
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered", max_nbytes="1M")
        yield from parallel(delayed(_keyed)(key, fn, args) for key, fn, args in calls)
