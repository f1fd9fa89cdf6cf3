"""A run's screening pass: its units, checkpoints and table in the run folder.

The engine (:func:`privgame.games.engine.execute`) calls :func:`screen_pass` before the exact game
when the spec screens (``RunSpec.screen``). The screening datasets are made in chunks of
:data:`SCREEN_CHUNK` on the run's workers (local or Dask), each chunk checkpointed as
``screen/<start>.npz``, so Ctrl-C and ``resume`` work as they do for the exact game; the per-record
table (:func:`privgame.games.screen.screen_records`) is written as ``screen.parquet`` once every
chunk is in. Progress goes to the same callback as the run's, in the phase ``"screen"``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from privgame.games import live
from privgame.games.estimate import time_left
from privgame.games.screen import screen_chunk, screen_records, statistic_names
from privgame.games.work import Context
from privgame.settings.executors import run_calls, until_cancelled
from privgame.settings.run_spec import RunSpec
from privgame.settings.targets import outlier_scores
from privgame.store.folders import RunFolder

__all__ = ["SCREEN_CHUNK", "load_statistics", "screen_pass"]

SCREEN_CHUNK = 10
"""Screening datasets per unit (fixed: a resumed run finds its chunks where it left them)."""


def _starts(shadows: int) -> list[int]:
    return list(range(0, shadows, SCREEN_CHUNK))


def load_statistics(folder: RunFolder, shadows: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Every checkpointed chunk of the screen, joined: statistics (K, F, n), who was out (K, n),
    and the seconds spent in the generator and in the statistics."""
    stats: np.ndarray | None = None
    out: np.ndarray | None = None
    seconds = np.zeros(2)
    for start in _starts(shadows):
        chunk = folder.load_screen_chunk(start)
        if stats is None or out is None:
            # Filled chunk by chunk: joining a list of chunks would hold every statistic twice.
            stats = np.empty((shadows, *chunk["stats"].shape[1:]), dtype=chunk["stats"].dtype)
            out = np.empty((shadows, chunk["out"].shape[1]), dtype=bool)
        stop = start + len(chunk["out"])
        stats[start:stop], out[start:stop] = chunk["stats"], chunk["out"]
        seconds += chunk["seconds"]
    if stats is None or out is None:
        raise ValueError("a screen of no datasets")
    return stats, out, float(seconds[0]), float(seconds[1])


def _chunk_fits(folder: RunFolder, start: int, n_stats: int) -> bool:
    """Whether a chunk is checkpointed with the statistics this version counts (a chunk a version
    with other statistics left is made again, so that a resumed screen joins like with like)."""
    if not folder.screen_chunk_done(start):
        return False
    return folder.load_screen_chunk(start)["stats"].shape[1] == n_stats


def screen_pass(
    folder: RunFolder,
    ctx: Context,
    spec: RunSpec,
    *,
    workers: int,
    scheduler: str | None,
    report: Callable[[str, int, int, float | None], None],
    cancelled: Callable[[], bool],
) -> pd.DataFrame:
    """Screen every record of D (or read the screen a resumed run already wrote).

    Parameters
    ----------
    report : callable
        ``report(phase, done, total, eta)`` after every finished chunk and at least every
        :data:`privgame.games.live.HEARTBEAT_SECONDS` (from a thread of its own while chunks run),
        ``done`` and ``total`` counting screening datasets (one generator fit each), those of
        chunks in flight included.
    cancelled : callable
        Polled between chunks; raises :class:`~privgame.settings.executors.Cancelled` through
        :func:`~privgame.settings.executors.until_cancelled` when it returns True.

    Returns
    -------
    DataFrame
        :data:`privgame.games.screen.SCREEN_COLUMNS`, one row per record of D.
    """
    settings = spec.screen
    if folder.has_screen():
        return folder.screen()
    total = settings.shadows
    starts = _starts(total)
    names = statistic_names(ctx.attacks)
    kept = {start for start in starts if _chunk_fits(folder, start, len(names))}
    done = sum(min(SCREEN_CHUNK, total - s) for s in kept)
    todo = [
        (start, screen_chunk, (ctx, settings.swap, start, min(start + SCREEN_CHUNK, total)))
        for start in starts
        if start not in kept
    ]
    began = time.time()
    done_now = 0
    shown = done

    def tell() -> None:
        """Report the datasets made, those of chunks in flight too (at least every
        live.HEARTBEAT_SECONDS: a chunk of a large D takes minutes)."""
        nonlocal shown
        with beat.lock:
            made = done_now + beat.in_flight()
            shown = max(shown, min(total, done - done_now + made))
            eta = time_left(elapsed=time.time() - began, done=made, total=total - (done - done_now))
            report("screen", shown, total, eta)
            beat.touch()

    beat = live.Heartbeat(tell)
    report("screen", done, total, None)
    with beat, beat.counting(todo, [min(SCREEN_CHUNK, total - start) for start, _, _ in todo]) as tally:
        for key, result, _ in until_cancelled(
            run_calls(tally.calls, workers=workers, scheduler=scheduler, shared=[ctx]), cancelled
        ):
            with beat.lock:
                start = tally.finished(key)
                folder.save_screen_chunk(start, result)
                made = len(result["out"])
                done += made
                done_now += made
                tell()
    stats, out, _, _ = load_statistics(folder, total)
    screened = screen_records(stats, out, ctx.target, spec.threshold, names=names)
    del stats, out  # hundreds of MB at |D| = 31,655: gone before the exact game loads its datasets
    # Where every record stands among the others, for the Results page's view of all of D.
    screened["outlier_score"] = outlier_scores(ctx.X[ctx.target], ctx.schema)
    folder.write_screen(screened)
    return screened
