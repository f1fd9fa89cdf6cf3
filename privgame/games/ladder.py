"""The doubling ladder of evaluation runs that an extension climbs.

A record's verdict is read once per look, and :func:`privgame.core.metrics.look_level` spends the
5% error over the looks. The union bound behind it holds for any rule that decides *whether* to
look again, but a number of runs chosen *after* seeing the verdicts is one more choice made from
the data: had the data owner picked another number, the look would have been at another N. On a
ladder fixed before any data is seen, every look index has one possible N, and the bound holds
exactly however the extensions were chosen. So an extension goes to a rung of the ladder that
doubles a record's runs, ``N, 2N, 4N, ...`` from its current N, and a record's look index is its
rung: a step of two doublings counts two looks, as if it had stopped on the rung between.
"""

from __future__ import annotations

import math

from privgame.core.errors import ParameterError
from privgame.core.parameters import MAX_N_EVAL

__all__ = ["doublings", "ladder_n_eval", "rungs"]


def ladder_n_eval(current: int, wanted: int, *, most: int = MAX_N_EVAL) -> int:
    """The rung of the doubling ladder from ``current`` runs nearest to ``wanted`` (on a log
    scale), at least one doubling up and at most ``most``.

    Parameters
    ----------
    current : int
        The record's evaluation runs per game now (even, >= 2).
    wanted : int
        The number asked for.
    most : int, default :data:`privgame.core.parameters.MAX_N_EVAL`

    Returns
    -------
    int
        ``current * 2**j``, ``j >= 1``; ``current`` itself when not even one doubling fits under
        ``most``.

    Raises
    ------
    ParameterError
        For a ``current`` or ``wanted`` below 2.
    """
    if current < 2 or wanted < 2:
        raise ParameterError(f"Evaluation runs must be at least 2; got {current} and {wanted}.")
    steps = max(1, round(math.log2(wanted / current)))
    while steps > 0 and current * 2**steps > most:
        steps -= 1
    return current * 2**steps


def rungs(current: int, *, most: int = MAX_N_EVAL) -> list[int]:
    """The ladder's rungs above ``current``: ``2 current, 4 current, ...`` up to ``most``."""
    found, n = [], current * 2
    while n <= most:
        found.append(n)
        n *= 2
    return found


def doublings(before: int, after: int) -> int:
    """The looks an extension from ``before`` to ``after`` runs counts: its doublings, rounded up
    (at least 1), so that a step off the ladder (a run from before the ladder, or the cap of a
    ``--resolve-to`` declared with the run) never counts fewer looks than its rungs."""
    if after <= before:
        return 1
    return max(1, math.ceil(math.log2(after / before) - 1e-12))
