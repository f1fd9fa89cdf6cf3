"""Compile the run's numba kernels once, here, before worker processes start.

privgame's numba kernels (Synthpop's CART, Baynet's counts and draws, the attack's query counts)
are compiled with ``cache=True``: the first process to compile one writes it to numba's on-disk
cache (beside the module in ``__pycache__``, or in ``$NUMBA_CACHE_DIR`` or the user's cache folder
where the package folder is read-only, as in some installed packages), and every later process
loads it instead of compiling. Without a warm-up, the N workers of a fresh machine all start by
compiling the same kernels at once (seconds each); :func:`warm_up` compiles them in the parent
first, so the workers load them.

A warm-up fits the run's generator on a few rows of D, and on the same rows each taken twice
(Synthpop grows its trees on the distinct rows of a table that repeats rows, as shadow datasets
drawn with replacement do: kernels of their own), and samples a few rows, from a stream of its own,
so it never changes a run's results; it refits the model with one row swapped where the
generator has ``refit_swap``, and counts the attack's queries on those rows. A Dask
worker on another host has its own cache: it compiles once there, and its later tasks (and the
other workers of that host) reuse it.
"""

from __future__ import annotations

import numpy as np

from privgame.core.seeding import stream
from privgame.games.work import Context

__all__ = ["WARM_UP_ROWS", "warm_up"]

WARM_UP_ROWS = 64
"""Rows of D a warm-up fit uses: enough to reach every kernel, cheap at any |D|."""

_WARM_UP_STREAM = 14  # a stream no run uses for its results


def warm_up(ctx: Context) -> None:
    """Fit and sample the run's generator on a few rows of D and count the attack's queries on
    them, compiling and caching their kernels.

    Parameters
    ----------
    ctx : Context
        The run's context (its generator, parameters, schema and D).

    Notes
    -----
    A generator that fails on so few rows (e.g. a plug-in with a minimum size) is left to fail,
    if at all, in the run itself, with the run's own error: the warm-up only saves time.
    """
    rows = ctx.X[ctx.target[: min(WARM_UP_ROWS, len(ctx.target))]]
    if len(rows):
        ctx.featuriser().features(rows, rows[0])
    rng = stream(ctx.seed, _WARM_UP_STREAM)
    try:
        for table in (rows, np.concatenate([rows, rows])):
            model = ctx.new_generator().fit(table, ctx.schema, rng=rng)
            model.sample(len(rows), rng=rng)
        # The one-row refits of the swapped datasets have kernels of their own.
        if callable(getattr(model, "refit_swap", None)) and len(rows) > 1:
            model.refit_swap(0, rows[1], rng=rng).sample(len(rows), rng=rng)
    except Exception:  # see Notes: the run itself reports the generator's own errors
        return
