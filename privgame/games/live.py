"""Progress while units run: their generator fits counted as they finish, and a heartbeat.

A unit of the engine (a shared chunk, a pool unit, a target) can hold hundreds of generator fits
and run for minutes; progress counted by finished units stood still that long ("1 of 6,001
generator fits" for five minutes, a bar moving in 10% steps, one per record). So:

- the engine hands the executor its calls wrapped by :class:`Tally` (:meth:`Tally.calls`): each
  unit, wherever it runs, counts its generator fits (:func:`fit_done`, called by
  :func:`privgame.games.work.synthesise` and :func:`~privgame.games.work.synthesise_swapped`)
  into a slot of a small file, which the engine reads (:meth:`Tally.in_flight`). A Dask worker on
  another host, which cannot open the file, counts nothing, and its fits count when its unit
  returns;
- :class:`Heartbeat` calls the engine's report from a thread of its own whenever
  :data:`HEARTBEAT_SECONDS` pass without one, so that the fits done, the elapsed time and the time
  left move while the engine waits for units.

The file holds counts only (no data), in a private temporary folder removed when the phase ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["HEARTBEAT_SECONDS", "Heartbeat", "Slot", "Tally", "counted", "fit_done"]

HEARTBEAT_SECONDS = 5.0
"""The longest the engine's progress goes without a report while it waits for units (the
dashboard shows a run's status once a second; 10 s was the goal)."""

_WRITE_SECONDS = 0.5  # a unit writes its count at most this often: a millisecond fit pays no file write
_COUNT = np.dtype("<i8")


@dataclass(frozen=True)
class Slot:
    """Where one unit counts its fits: its slot in the phase's count file."""

    path: str
    index: int


class _Counter:
    """A running unit's fits, written to its :class:`Slot` now and then."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.count = 0
        self.written = -float("inf")
        self.broken = False

    def add(self, fits: int) -> None:
        self.count += fits
        now = time.monotonic()
        if not self.broken and now - self.written >= _WRITE_SECONDS:
            self.written = now
            try:
                fd = os.open(self.slot.path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:  # another host's worker, or the phase is over: nothing to tell
                self.broken = True
                return
            try:
                os.pwrite(fd, np.array(self.count, dtype=_COUNT).tobytes(), self.slot.index * _COUNT.itemsize)
            except OSError:
                self.broken = True
            finally:
                os.close(fd)


_CURRENT: ContextVar[_Counter | None] = ContextVar("privgame_live_counter", default=None)


def counted(slot: Slot | None, fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)`` (a unit) with its generator fits counted into ``slot``."""
    token = _CURRENT.set(None if slot is None else _Counter(slot))
    try:
        return fn(*args)
    finally:
        _CURRENT.reset(token)


def fit_done(fits: int = 1) -> None:
    """Count ``fits`` generator fits finished by the unit running in this thread, if it is counted."""
    counter = _CURRENT.get()
    if counter is not None:
        counter.add(fits)


Call = tuple[Any, Callable[..., Any], tuple[Any, ...]]


class Tally:
    """The fits of one phase's units in flight, as the engine sees them.

    Parameters
    ----------
    calls : sequence of (key, function, args)
        The phase's calls, as :func:`privgame.settings.executors.run_calls` takes them.
    fits : sequence of int
        Each call's generator fits as the plan counts them: a unit's count is never taken above
        its own (a fit the plan does not count, such as the model on D a refit starts from, is
        then harmless).

    Notes
    -----
    Use it as a context manager: the count file goes with the phase.
    """

    def __init__(self, calls: Sequence[Call], fits: Sequence[int]) -> None:
        self._folder = tempfile.mkdtemp(prefix="privgame-fits-")
        self._path = os.path.join(self._folder, "fits")
        with open(self._path, "wb") as file:
            file.write(np.zeros(len(calls), dtype=_COUNT).tobytes())
        self._fits = np.asarray(fits, dtype=np.int64)
        self._open = np.ones(len(calls), dtype=bool)
        self.calls: list[Call] = [
            ((index, key), counted, (Slot(self._path, index), fn, *args))
            for index, (key, fn, args) in enumerate(calls)
        ]

    def finished(self, key: tuple[int, Any]) -> Any:
        """The key of a call whose result came back (its fits now count as done), unwrapped."""
        index, inner = key
        self._open[index] = False
        return inner

    def in_flight(self) -> int:
        """Fits finished by units that have not returned yet."""
        try:
            counts = np.fromfile(self._path, dtype=_COUNT, count=len(self._fits))
        except (OSError, ValueError):
            return 0
        if len(counts) != len(self._fits):
            return 0
        return int(np.minimum(np.maximum(counts, 0), self._fits)[self._open].sum())

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> Tally:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Heartbeat:
    """Calls ``beat`` from a thread of its own whenever ``interval`` seconds pass without a call
    of :meth:`touch` (or of ``beat``), from ``with`` to its end.

    ``beat`` and the caller's own reports are run one at a time: the caller holds :attr:`lock`
    while it changes what ``beat`` reads. An error in ``beat`` stops the beating and is raised
    where the ``with`` block ends (or at the caller's next :meth:`check`).

    Parameters
    ----------
    beat : callable
        The report to make.
    interval : float, optional
        :data:`HEARTBEAT_SECONDS` by default (read when the heartbeat starts).
    """

    def __init__(self, beat: Callable[[], None], interval: float | None = None) -> None:
        self._beat = beat
        self._interval = HEARTBEAT_SECONDS if interval is None else float(interval)
        self.lock = threading.RLock()
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._tally: Tally | None = None

    @contextlib.contextmanager
    def counting(self, calls: Sequence[Call], fits: Sequence[int]) -> Iterator[Tally]:
        """A :class:`Tally` of ``calls`` (hand its :attr:`Tally.calls` to the executor), read by
        :meth:`in_flight` until the ``with`` block ends."""
        tally = Tally(calls, fits)
        with self.lock:
            self._tally = tally
        try:
            yield tally
        finally:
            with self.lock:
                self._tally = None
            tally.close()

    def in_flight(self) -> int:
        """Fits finished by the units in flight of the phase being counted (0 between phases)."""
        with self.lock:
            return 0 if self._tally is None else self._tally.in_flight()

    def touch(self) -> None:
        """A report was just made: the next beat is due ``interval`` seconds from now."""
        self._last = time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(max(0.01, self._last + self._interval - time.monotonic())):
            with self.lock:
                if self._stop.is_set():
                    return
                if time.monotonic() - self._last < self._interval:
                    continue
                try:
                    self._beat()
                except BaseException as error:  # handed to the caller's thread (see check)
                    self._error = error
                    return
                self.touch()

    def check(self) -> None:
        """Raise the error a beat met, if any."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def __enter__(self) -> Heartbeat:
        self.touch()
        self._stop = threading.Event()  # a heartbeat may be started again, for the next phase
        self._thread = threading.Thread(target=self._run, name="privgame-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            with contextlib.suppress(RuntimeError):
                self._thread.join()
        if kind is None:
            self.check()
