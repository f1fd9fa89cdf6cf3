"""The statistics of an inference gain: a difference of two success rates, its interval, its verdict.

An attribute-inference attack succeeds on a record in a synthetic table when it predicts the
record's secret value. The record's *inference gain* is its success rate over the synthetic
tables made with the record in D minus the rate over those made with it swapped for a reference
record (:mod:`privgame.games.inference`): what the record's own presence adds to what the
release reveals about it, beyond what the rest of the population reveals.

The 'in' and 'out' tables are independent draws, so the gain is a difference of two independent
binomial proportions. Its interval is Newcombe's hybrid score interval (Newcombe 1998, method
10: each rate's Wilson interval, combined by the square root of their squared half-widths), which
keeps close to its level down to a few dozen runs and at rates of 0 or 1, where the Wald interval
collapses to a point. Its one-sided error is checked by simulation in
``tests/core/test_gains.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import norm

from privgame.core.errors import ParameterError

__all__ = [
    "GAIN_VERDICTS",
    "gain_interval",
    "gain_level",
    "gain_verdicts",
]

GAIN_VERDICTS: tuple[str, ...] = ("at risk", "undecided", "not at risk")
"""The verdict of a record's inference gain against the inference threshold (:func:`gain_verdicts`)."""


def _wilson(successes: int, n: int, z: float) -> tuple[float, float, float]:
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def gain_interval(
    successes_in: int, runs_in: int, successes_out: int, runs_out: int, *, level: float = 0.95
) -> tuple[float, float, float]:
    """The gain ``p_in - p_out`` of two independent success rates and its two-sided interval.

    Parameters
    ----------
    successes_in, runs_in : int
        Successes of the attack over the runs with the record in D.
    successes_out, runs_out : int
        Successes over the runs with the record swapped out.
    level : float, default 0.95
        Two-sided confidence level; each side errs with probability about ``(1 - level) / 2``.

    Returns
    -------
    (gain, low, high) : tuple of float
        In [-1, 1]; all ``nan`` when either side has no run.

    Raises
    ------
    ParameterError
        If a count is negative, successes exceed runs, or ``level`` is not in (0, 1).
    """
    counts = (successes_in, runs_in, successes_out, runs_out)
    if any(isinstance(c, bool) or int(c) != c or c < 0 for c in counts):
        raise ParameterError(f"successes and runs must be whole numbers >= 0, got {counts}.")
    if successes_in > runs_in or successes_out > runs_out:
        raise ParameterError(f"successes cannot exceed runs, got {counts}.")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level!r}.")
    if runs_in == 0 or runs_out == 0:
        return (math.nan, math.nan, math.nan)
    z = float(norm.ppf(0.5 + level / 2))
    p1, l1, u1 = _wilson(int(successes_in), int(runs_in), z)
    p0, l0, u0 = _wilson(int(successes_out), int(runs_out), z)
    gain = p1 - p0
    low = gain - math.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2)
    high = gain + math.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2)
    return (gain, max(-1.0, low), min(1.0, high))


def gain_level(look_level: float, attacks: int) -> float:
    """The level of each attack's interval when a record's gain is the largest of ``attacks``.

    Splitting the error ``1 - look_level`` evenly over the attacks (Bonferroni) keeps the chance
    that *any* attack's interval misses its gain at or below ``1 - look_level``: a record is
    called *at risk* when some attack's low end clears the threshold, so its false *at risk*
    is bounded by the sum of the attacks' one-sided errors, whatever their correlation.
    """
    if attacks < 1:
        raise ParameterError(f"attacks must be >= 1, got {attacks!r}.")
    return 1.0 - (1.0 - look_level) / attacks


def gain_verdicts(low: ArrayLike, high: ArrayLike, threshold: float) -> NDArray[np.str_]:
    """The verdict of each record's inference gain from its interval.

    *at risk* when the low end is above ``threshold``, *not at risk* when the high end is at or
    below it, *undecided* otherwise or where a bound is undefined (``nan``). A gain has no
    "attack failed": an attack that infers a secret as well without the record as with it has
    measured what the record's presence adds, which is the question.

    Raises
    ------
    ParameterError
        If the lengths differ or ``threshold`` is outside [0, 1].
    """
    if not 0 <= float(threshold) <= 1:
        raise ParameterError(f"the inference threshold must be in [0, 1], got {threshold!r}.")
    lo = np.asarray(low, dtype=np.float64).ravel()
    hi = np.asarray(high, dtype=np.float64).ravel()
    if lo.shape != hi.shape:
        raise ParameterError(f"low and high must have the same length, got {lo.size} and {hi.size}.")
    out = np.full(lo.shape, "undecided", dtype=object)
    out[lo > threshold] = "at risk"
    out[hi <= threshold] = "not at risk"
    return out.astype(str)
