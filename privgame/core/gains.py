"""The statistics of an inference gain: a difference of two success rates, its interval, its verdict.

An attribute-inference attack succeeds on a record in a synthetic table when it predicts the
record's secret value. The record's *inference gain* is its success rate over the synthetic
tables made with the record in D minus the rate over those made with it swapped for a reference
record (:mod:`privgame.games.inference`): what the record's own presence adds to what the
release reveals about it, beyond what the rest of the population reveals.

Several attacks run on every table, and the gain is the largest of theirs, each attack against
itself without the record or against the usual value's success where that is higher
(:func:`best_gain_interval`, with simultaneous Wilson bounds). A single
attack's gain, a difference of two independent binomial proportions, has Newcombe's hybrid score
interval (:func:`gain_interval`; Newcombe 1998, method 10: each rate's Wilson interval, combined by
the square root of their squared half-widths), used for the table-wide member/non-member gap.
Both keep close to their level down to a few dozen runs and at rates of 0 or 1, where the Wald
interval collapses to a point. Their one-sided errors are checked by simulation in
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
    "best_gain_interval",
    "gain_interval",
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


def best_gain_interval(
    hits_in: ArrayLike,
    runs_in: int,
    hits_out: ArrayLike,
    runs_out: int,
    *,
    floor: int | None = None,
    level: float = 0.95,
) -> tuple[float, float, float, int, int]:
    """The largest gain of several attacks, each over its own rate without the record, or over the
    floor attack's rate without it where that is higher.

    ``gain = max_a (p_in(a) - max(p_out(a), p_out(floor)))``: each attack is compared with itself
    across the two worlds, as the membership game compares them, and no attack is credited with
    a success that guessing the population's usual value (the ``floor`` attack) has without the
    record. Another attack's success without the record is not a floor: one that names a record's
    secret there by chance (a deterministic guess right for a quarter of the records of a
    four-valued secret) would hide the records a copying release leaks.

    The interval is simultaneous: every attack's rate gets a one-sided Wilson bound on each side at
    error ``(1 - level) / 2`` split over the ``2 A`` bounds one side of the gain uses (Bonferroni);
    ``low = max_a (L_in(a) - max(U_out(a), U_out(floor)))`` and ``high`` likewise with the other
    bounds. When every bound holds the true gain lies between them, so the low end exceeds the
    true gain with probability at most ``(1 - level) / 2``, whatever the attacks' correlation (they
    run on the same synthetic tables) and whichever attack is best: no attack is chosen on the
    runs it is scored on.

    Parameters
    ----------
    hits_in, hits_out : array-like of int, shape (A,)
        Each attack's successes over the 'in' runs and over the 'out' runs.
    runs_in, runs_out : int
        The numbers of 'in' and 'out' runs.
    floor : int, optional
        The index of the floor attack (none: each attack against itself alone).
    level : float
        Two-sided confidence level of the gain's interval.

    Returns
    -------
    (gain, low, high, best, out) : tuple
        The gain and its bounds in [-1, 1] (``nan`` when a side has no run), the attack with the
        largest gain, and the attack whose rate without the record it is measured from (itself or
        the floor).

    Raises
    ------
    ParameterError
        For counts that are negative, above the runs, of different lengths, or empty.
    """
    k1 = np.asarray(hits_in)
    k0 = np.asarray(hits_out)
    if k1.shape != k0.shape or k1.ndim != 1 or k1.size == 0:
        raise ParameterError(
            f"hits_in and hits_out must be two non-empty vectors of one length; got {k1.shape}, {k0.shape}."
        )
    if (k1 < 0).any() or (k0 < 0).any() or (k1 > runs_in).any() or (k0 > runs_out).any():
        raise ParameterError("successes must be whole numbers from 0 to the number of runs.")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level!r}.")
    if floor is not None and not 0 <= floor < k1.size:
        raise ParameterError(f"floor must index one of the {k1.size} attacks, got {floor!r}.")
    if runs_in == 0 or runs_out == 0:
        return (math.nan, math.nan, math.nan, 0, 0)
    attacks = k1.size
    z = float(norm.ppf(1 - (1 - level) / 2 / (2 * attacks)))
    # _wilson's two-sided interval at z has z's one-sided error on each side: (rate, low, high).
    inside = np.array([_wilson(int(k), int(runs_in), z) for k in k1])
    outside = np.array([_wilson(int(k), int(runs_out), z) for k in k0])
    if floor is not None:
        floored = np.maximum(outside, outside[floor])
        source = np.where(outside[:, 0] >= outside[floor, 0], np.arange(attacks), floor)
    else:
        floored, source = outside, np.arange(attacks)
    gains = inside[:, 0] - floored[:, 0]
    best = int(np.argmax(gains))
    low = float((inside[:, 1] - floored[:, 2]).max())
    high = float((inside[:, 2] - floored[:, 1]).max())
    return (float(gains[best]), max(-1.0, low), min(1.0, high), best, int(source[best]))


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
