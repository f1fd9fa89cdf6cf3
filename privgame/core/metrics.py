"""Metrics of the privacy games: per-record risk (ROC AUC) and comparisons across records.

Per record (Section 3.3 and Algorithm 1 of the paper), a game yields one membership score per run
and the secret bit of that run. Here ``labels`` hold the bits (1 = 'in', the target record was a
member; 0 = 'out') and ``scores`` the attack's membership scores, higher meaning more likely 'in'.
The attack predicts 'in' when ``score >= gamma``; sweeping the threshold ``gamma`` gives the
empirical false positive rate (Eq. 5) and false negative rate (Eq. 6), and the area under the ROC
curve is the record's risk ``R`` (``R^MS`` in the model-seeded game, ``R^T`` in the traditional
game).

Across records (Section 4.3), the two risks are compared with the miss rate (Eq. 9) and the root
mean squared deviation (Eq. 10), together with distribution summaries (ECDF, percentiles).

Decisions on edge cases, applied everywhere in this module:

* A per-record metric needs both classes. With only 'in' or only 'out' runs (or none), the AUC,
  its confidence interval and TPR at a given FPR are ``nan``: undefined, never a silent 0.5.
* Scores must be finite, and labels 0 or 1 (booleans allowed); anything else raises
  :class:`~privgame.core.errors.ParameterError`.
* Risks compared across records must lie in [0, 1] or be ``nan``. A record with a ``nan`` risk in
  either game (an undefined AUC) is left out of every across-record metric, and the number left
  out is reported (``MissRate.excluded``, ``summarize``'s ``records_excluded``).
* A miss rate with no record at risk (no ``R^MS > t``) is undefined: ``MissRate.rate`` is
  ``None`` and its text says so, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privgame.core.errors import ParameterError

__all__ = [
    "FEW_DISCORDANT",
    "FEW_DISCORDANT_HIGH",
    "LEARNING_FLOOR_SD",
    "LEARNING_Z",
    "TRAINING_QUANTILE",
    "VERDICTS",
    "MissRate",
    "RocCurve",
    "abs_differences",
    "at_risk_p_value",
    "auc",
    "auc_ci",
    "auc_half_width",
    "auc_variance",
    "benjamini_hochberg",
    "binomial_interval",
    "binormal_tpr",
    "ecdf",
    "hoeffding_half_width",
    "holm",
    "kept_sample_share",
    "learning_bound",
    "learning_gain",
    "look_level",
    "miss_rate",
    "miss_rate_curve",
    "percentiles",
    "record_training_variance",
    "reliability",
    "rmsd",
    "roc_points",
    "screened_share",
    "share_bracket",
    "share_width",
    "summarize",
    "tpr_at_fpr",
    "training_variance",
    "verdicts",
]

FloatArray = NDArray[np.float64]


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _float_vector(values: ArrayLike, name: str) -> FloatArray:
    """Return ``values`` as a 1-D float64 array, or raise ParameterError."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} must be a sequence of numbers; convert it to a 1-D numeric array ({exc})."
        ) from exc
    if array.ndim != 1:
        raise ParameterError(
            f"{name} must be one-dimensional, got shape {array.shape}; pass one value per entry."
        )
    return array


def _scores_labels(scores: ArrayLike, labels: ArrayLike) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Validate one record's game output; return (scores, is_in)."""
    s = _float_vector(scores, "scores")
    lab = _float_vector(labels, "labels")
    if s.shape != lab.shape:
        raise ParameterError(
            f"scores and labels must have the same length, got {s.size} scores and "
            f"{lab.size} labels; pass one score and one label per run."
        )
    if not np.all(np.isfinite(s)):
        bad = int(np.count_nonzero(~np.isfinite(s)))
        raise ParameterError(
            f"scores must be finite numbers, but {bad} are nan or infinite; drop or repair "
            "those runs before computing the metric."
        )
    if not np.all((lab == 0) | (lab == 1)):
        bad = int(np.count_nonzero((lab != 0) & (lab != 1)))
        raise ParameterError(
            f"labels must be 0 ('out') or 1 ('in'), but {bad} are something else; encode the "
            "secret bit of each run as 0 or 1."
        )
    return s, lab == 1


def _probability(value: float, name: str, *, open_low: bool, open_high: bool) -> float:
    """Validate a number in [0, 1] (ends open as requested) and return it as float."""
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a number, got {value!r}.") from exc
    low_ok = v > 0 if open_low else v >= 0
    high_ok = v < 1 if open_high else v <= 1
    if not (math.isfinite(v) and low_ok and high_ok):
        interval = ("(" if open_low else "[") + "0, 1" + (")" if open_high else "]")
        raise ParameterError(f"{name} must lie in {interval}, got {value!r}; choose e.g. 0.05.")
    return v


def _risk_vector(values: ArrayLike, name: str) -> FloatArray:
    """Validate per-record risks: 1-D, each in [0, 1] or nan."""
    r = _float_vector(values, name)
    defined = r[~np.isnan(r)]
    if np.any((defined < 0) | (defined > 1)):
        bad = int(np.count_nonzero((defined < 0) | (defined > 1)))
        raise ParameterError(
            f"{name} must hold risks in [0, 1] (an AUC) or nan for an undefined risk, but {bad} "
            "values lie outside; pass AUC values, not percentages or raw scores."
        )
    return r


def _paired(
    first: ArrayLike, second: ArrayLike, names: tuple[str, str], noun: str = "value"
) -> tuple[FloatArray, FloatArray]:
    """Validate two risk vectors of the same records (``nan`` allowed) and return them."""
    a = _risk_vector(first, names[0])
    b = _risk_vector(second, names[1])
    if a.shape != b.shape:
        raise ParameterError(
            f"{names[0]} and {names[1]} must have one {noun} per record each, got {a.size} and "
            f"{b.size}; pass both for the same records in the same order."
        )
    return a, b


def _risk_pairs(
    r_ms: ArrayLike, r_t: ArrayLike, names: tuple[str, str] = ("r_ms", "r_t"), noun: str = "value"
) -> tuple[FloatArray, FloatArray, int]:
    """Validate paired risks; return the pairs where both are defined and how many were dropped."""
    ms, t = _paired(r_ms, r_t, names, noun)
    keep = ~(np.isnan(ms) | np.isnan(t))
    return ms[keep], t[keep], int(ms.size - np.count_nonzero(keep))


def _finite_values(values: ArrayLike, name: str) -> FloatArray:
    """Validate a 1-D array whose entries are finite or nan; return the non-nan entries."""
    v = _float_vector(values, name)
    if np.any(np.isinf(v)):
        raise ParameterError(
            f"{name} must hold finite numbers (nan marks an undefined value), but some are "
            "infinite; remove them first."
        )
    return v[~np.isnan(v)]


def _threshold(value: float, name: str = "threshold") -> float:
    return _probability(value, name, open_low=False, open_high=False)


# --------------------------------------------------------------------------------------------
# Per record: ROC curve, AUC, DeLong interval, TPR at low FPR, Hoeffding bound
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RocCurve:
    """The empirical ROC curve of one record's game, one point per attack threshold.

    Attributes
    ----------
    thresholds : ndarray of float
        ``+inf`` followed by every distinct score in decreasing order. The attack predicts
        'in' when ``score >= threshold``, so the first point predicts 'in' for no run
        (FPR = TPR = 0) and the last for every run (FPR = TPR = 1).
    fpr : ndarray of float
        Empirical false positive rate (Eq. 5) at each threshold: share of 'out' runs predicted
        'in'. All ``nan`` when there is no 'out' run.
    fnr : ndarray of float
        Empirical false negative rate (Eq. 6) at each threshold: share of 'in' runs predicted
        'out', equal to ``1 - tpr``. All ``nan`` when there is no 'in' run.
    tpr : ndarray of float
        True positive rate, ``1 - fnr``.
    n_in : int
        Number of 'in' runs (label 1).
    n_out : int
        Number of 'out' runs (label 0).

    Notes
    -----
    The arrays are read-only. Equality is identity (arrays have no single truth value).
    """

    thresholds: FloatArray
    fpr: FloatArray
    fnr: FloatArray
    tpr: FloatArray
    n_in: int
    n_out: int


def roc_points(scores: ArrayLike, labels: ArrayLike) -> RocCurve:
    """Compute FPR and FNR of the threshold attack at every distinct threshold.

    Parameters
    ----------
    scores : array-like of float, shape (N,)
        Membership scores, one per run; higher means more likely 'in'. Must be finite.
    labels : array-like of {0, 1}, shape (N,)
        Secret bit of each run: 1 = 'in' (target record in the training data), 0 = 'out'.

    Returns
    -------
    RocCurve
        Thresholds ``[+inf, s_max, ..., s_min]`` with the error rates of the prediction
        ``score >= threshold``; ``(fpr, tpr)`` runs from ``(0, 0)`` to ``(1, 1)``. A rate
        whose class is absent is ``nan`` throughout. With no runs at all, the curve has the
        single threshold ``+inf`` and ``nan`` rates.

    Raises
    ------
    ParameterError
        If the lengths differ, a score is not finite, or a label is not 0 or 1.
    """
    s, is_in = _scores_labels(scores, labels)
    n_in = int(np.count_nonzero(is_in))
    n_out = int(s.size - n_in)
    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    in_sorted = is_in[order]
    # The last index of each run of equal scores: all tied runs switch to 'in' together.
    if s.size:
        last = np.flatnonzero(np.r_[s_sorted[1:] != s_sorted[:-1], True])
    else:
        last = np.empty(0, dtype=np.intp)
    tp = np.r_[0, np.cumsum(in_sorted)[last]].astype(np.float64)
    fp = np.r_[0, last + 1].astype(np.float64) - tp
    thresholds = np.r_[np.inf, s_sorted[last]]
    tpr = tp / n_in if n_in else np.full(tp.shape, np.nan)
    fpr = fp / n_out if n_out else np.full(fp.shape, np.nan)
    fnr = 1.0 - tpr
    for array in (thresholds, fpr, fnr, tpr):
        array.setflags(write=False)
    return RocCurve(thresholds=thresholds, fpr=fpr, fnr=fnr, tpr=tpr, n_in=n_in, n_out=n_out)


def _midranks(x: FloatArray) -> FloatArray:
    """Ranks 1..n of ``x`` with ties given the mean of the ranks they share."""
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    ends = np.r_[starts[1:], n]  # exclusive
    # Ranks starts+1 .. ends share their mean (starts + 1 + ends) / 2.
    group_rank = (starts + 1 + ends) / 2.0
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def _placements(s: FloatArray, is_in: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
    """DeLong's placement values: for each 'in' run the share of 'out' runs it beats (ties 1/2),
    and for each 'out' run the share of 'in' runs that beat it (ties 1/2)."""
    pos, neg = s[is_in], s[~is_in]
    all_ranks = _midranks(np.r_[pos, neg])
    # midrank among all minus midrank within its own class = number of the other class below
    # it, ties counted 1/2 (Sun and Xu 2014).
    below_pos = all_ranks[: pos.size] - _midranks(pos)
    below_neg = all_ranks[pos.size :] - _midranks(neg)
    v10 = below_pos / neg.size
    v01 = 1.0 - below_neg / pos.size
    return v10, v01


def auc(scores: ArrayLike, labels: ArrayLike) -> float:
    """ROC AUC of the threshold attack: the record's risk ``R`` in a game.

    Equal to the Mann-Whitney statistic: the probability that an 'in' run scores higher than an
    'out' run, with ties counted as 1/2; equivalently, the trapezoidal area under
    :func:`roc_points`. Computed from midranks as ``U / (n_in * n_out)`` where ``U`` is exact, so
    the result is the correctly rounded value of the exact fraction (an AUC of exactly 4/5
    compares equal to ``0.8``).

    Parameters
    ----------
    scores : array-like of float, shape (N,)
        Membership scores (finite), higher meaning more likely 'in'.
    labels : array-like of {0, 1}, shape (N,)
        1 = 'in', 0 = 'out'.

    Returns
    -------
    float
        The AUC in [0, 1]; ``nan`` when there are no 'in' runs or no 'out' runs (including
        empty input): the AUC is undefined then, not 0.5.

    Raises
    ------
    ParameterError
        If the lengths differ, a score is not finite, or a label is not 0 or 1.
    """
    s, is_in = _scores_labels(scores, labels)
    n_in = int(np.count_nonzero(is_in))
    n_out = s.size - n_in
    if n_in == 0 or n_out == 0:
        return math.nan
    ranks = _midranks(s)
    u = float(ranks[is_in].sum()) - n_in * (n_in + 1) / 2.0
    return u / (n_in * n_out)


def auc_ci(
    scores: ArrayLike,
    labels: ArrayLike,
    *,
    level: float = 0.95,
    method: Literal["logit", "wald"] = "logit",
    extra_variance: float = 0.0,
) -> tuple[float, float]:
    """Confidence interval of the AUC from DeLong's variance, on the logit scale by default.

    The variance of the Mann-Whitney AUC is estimated as in DeLong, DeLong and Clarke-Pearson
    (1988): ``var = S10 / n_in + S01 / n_out``, where ``S10`` and ``S01`` are the sample variances
    (denominator ``n - 1``) of the placement values of the 'in' and 'out' runs (the share of the
    other class each run beats, ties counted 1/2). Placement values come from midranks (Sun and
    Xu 2014), O(N log N). With ``z`` the ``(1 + level) / 2`` standard normal quantile:

    * ``"logit"`` (the default, used for every verdict): ``logit(auc) +/- z * se / (auc (1 -
      auc))``, mapped back. The AUC's sampling distribution is skewed towards 0.5 when the AUC is
      high, so the symmetric interval is too narrow on its upper side there: simulated with
      binormal scores at a true AUC of 0.8 and 100 + 100 runs, the plain interval's lower bound
      lies above 0.8 in 4.1% of games for a nominal 2.5%, the logit interval's in 2.3% (its upper
      bound below 0.8 in 2.4%, against 1.5%); ``benchmarks/verdicts.py`` measures it.
    * ``"wald"``: the plain ``auc +/- z * se``, clipped to [0, 1] (privgame before 2026-12).

    When the variance estimate is zero the AUC is 0, 1/2 or 1. At 1/2 every score is tied: the
    attack tells no run from another and the interval is ``(0.5, 0.5)`` (the verdict reads it as
    a failed attack, see :func:`verdicts`). At 0 or 1 (the classes are perfectly separated) the
    interval is the Wilson score interval of a proportion equal to the AUC over
    ``min(n_in, n_out)`` trials: the Birnbaum-McCarty bound ``var <= A (1 - A) / min(n_in,
    n_out)`` on the AUC's variance makes it conservative, where a zero variance would claim
    certainty.

    Near those edges the logit interval is not enough either: when fewer than
    :data:`FEW_DISCORDANT` runs of a class go against the AUC (an AUC above 1/2 with, say, two
    'in' runs that do not beat every 'out' run), DeLong's variance is estimated from those few
    runs, and it is too small as often as not. Simulated at t = 0.97 with 94% of the 'in' scores
    tied at the top and 50 + 50 runs, the logit interval called 2.8% of records at a true AUC of
    exactly t "at risk", for 1.5% nominal, and 3.2% over four looks; most of them had a single
    such run. The interval then spans the Wilson interval too (the Birnbaum-McCarty bound holds
    for any shape): 0.0% and 0.2% there, and every shape and procedure of
    ``benchmarks/verdicts.py`` stays within 2.5%. It costs power only where a class has so few
    discordant runs, which at N_eval >= 1,000 did not happen in any simulated shape. The high end,
    on which "not at risk" rests, takes the Wilson bound's high end below
    :data:`FEW_DISCORDANT_HIGH` discordant runs.

    The same few runs carry DeLong's variance at a high AUC whatever the shape: with unequal
    variances at t = 0.97 and 100 + 100 runs, the logit interval with the normal quantile called
    3.3% of records at exactly t "at risk" (1.5% nominal) and 3.7% over four looks. The logit
    interval therefore takes the Student-t quantile with ``m - 1`` degrees of freedom, ``m`` the
    discordant runs of the class with fewer: 1.6% and 2.2% there, while at t = 0.8 (where ``m``
    is large) it is the normal quantile in all but name (power 29.9% -> 28.4% at 200 runs).

    Parameters
    ----------
    scores : array-like of float, shape (N,)
        Membership scores (finite), higher meaning more likely 'in'.
    labels : array-like of {0, 1}, shape (N,)
        1 = 'in', 0 = 'out'.
    level : float, default 0.95
        Confidence level, strictly between 0 and 1 (see :func:`look_level` for a record looked at
        more than once).
    method : {"logit", "wald"}, default "logit"
    extra_variance : float, default 0
        Variance on the logit scale of the AUC added to DeLong's: the attack's own training noise
        (:func:`training_variance`), so that the interval is about the attack procedure's risk,
        not only about the one attack that was trained. (``"wald"`` adds it as ``extra (A (1 -
        A))^2``; a perfect separation's Wilson bound moves by ``z sqrt(extra)`` on the logit
        scale.)

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` when the AUC is undefined (a class absent) or a class has a single run
        (its sample variance is undefined).

    Raises
    ------
    ParameterError
        If ``level`` is not in (0, 1), ``method`` is unknown, or the inputs are invalid as for
        :func:`auc`.
    """
    level = _probability(level, "level", open_low=True, open_high=True)
    if method not in ("logit", "wald"):
        raise ParameterError(f"method must be 'logit' or 'wald', got {method!r}.")
    s, is_in = _scores_labels(scores, labels)
    n_in = int(np.count_nonzero(is_in))
    n_out = s.size - n_in
    if n_in < 2 or n_out < 2:
        return (math.nan, math.nan)
    value = auc(s, is_in)
    v10, v01 = _placements(s, is_in)
    extra = float(extra_variance)
    if not (math.isfinite(extra) and extra >= 0):
        raise ParameterError(f"extra_variance must be a finite number >= 0, got {extra_variance!r}.")
    variance = max(0.0, float(np.var(v10, ddof=1) / n_in + np.var(v01, ddof=1) / n_out))
    if variance == 0.0 and value == 0.5:
        return (0.5, 0.5)  # every score tied: no attack to speak of, whatever its training noise
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    spread = value * (1.0 - value)
    if method == "wald":
        half = z * math.sqrt(variance + extra * spread * spread)
        return (max(0.0, value - half), min(1.0, value + half))
    bound = _bounded_wilson(value, min(n_in, n_out), z, extra)
    if value in (0.0, 1.0):
        return bound
    discordant = _discordant_runs(v10, v01, value)
    half = _student_quantile(z, discordant) * math.sqrt(variance / (spread * spread) + extra)
    centre = _logit(value)
    low, high = _expit(centre - half), _expit(centre + half)
    if discordant < FEW_DISCORDANT:
        # DeLong's variance rests on a handful of runs here and is too small as often as not:
        # the interval spans the Wilson bound too, which holds whatever the scores' shape.
        return (min(low, bound[0]), max(high, bound[1]))
    if discordant < FEW_DISCORDANT_HIGH:
        # The high end is what "not at risk" rests on: it takes the Wilson bound for longer.
        return (low, max(high, bound[1]))
    return (low, high)


def _student_quantile(z: float, discordant: int) -> float:
    """The Student-t quantile, with ``discordant - 1`` degrees of freedom, of the normal ``z``'s
    level: DeLong's variance near the edges is the spread of the discordant runs' placements, so
    it is known only as well as those few runs tell it."""
    from scipy.stats import t as student

    return float(student.ppf(NormalDist().cdf(z), max(discordant - 1, 1)))


def _student_cdf(x: float, discordant: int) -> float:
    from scipy.stats import t as student

    return float(student.cdf(x, max(discordant - 1, 1)))


FEW_DISCORDANT = 5
"""Below this many discordant runs in a class (:func:`_discordant_runs`), :func:`auc_ci` widens
the logit interval to the Wilson bound (``benchmarks/verdicts.py``, ``--shapes``)."""

FEW_DISCORDANT_HIGH = 20
"""Below this many, :func:`auc_ci` raises the logit interval's high end to the Wilson bound's:
with most 'in' scores tied at the top, the logit interval's high end fell below a true risk of t
in 2.7% of records over four looks (t = 0.95 and 0.97, 6,000 simulated records), for 2.5%; 1.6%
and 1.8% with this. "Not at risk" rests on the high end, so it keeps the bound for longer."""


def _discordant_runs(v10: FloatArray, v01: FloatArray, value: float) -> int:
    """The fewer, over the two classes, of the runs that go against the AUC's side of 1/2.

    For an AUC above 1/2: the 'in' runs that do not beat every 'out' run and the 'out' runs that
    not every 'in' run beats (below 1/2, the mirror image). DeLong's variance is the spread of
    these runs' placement values; when a class has only a few, it is estimated from them alone.
    """
    if value >= 0.5:
        return int(min(np.count_nonzero(v10 < 1.0), np.count_nonzero(v01 < 1.0)))
    return int(min(np.count_nonzero(v10 > 0.0), np.count_nonzero(v01 > 0.0)))


def _bounded_wilson(value: float, n: int, z: float, extra: float) -> tuple[float, float]:
    """The Wilson interval of a proportion ``value`` over ``n`` trials, widened by the training
    noise ``extra`` on the logit scale: by the Birnbaum-McCarty bound ``var <= A (1 - A) / n`` on
    the AUC's variance (``n = min(n_in, n_out)``), an interval for the AUC under any shape."""
    low, high = _wilson(value, n, z)
    shift = z * math.sqrt(extra)
    return (
        _expit(_logit(low) - shift) if low > 0 else 0.0,
        _expit(_logit(high) + shift) if high < 1 else 1.0,
    )


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


_MEDIAN_CHI2_1 = 0.454936423119572
"""The median of a chi-square variable with one degree of freedom."""

_LOGIT_CLIP = 0.001
"""Half attacks' AUCs are clipped to [0.001, 0.999] before their logit is taken."""

TRAINING_QUANTILE = 0.9
"""The quantile of the records' squared half-attack gaps that the pooled training noise is read
from (:func:`training_variance`)."""


def _half_gaps(half_a: ArrayLike, half_b: ArrayLike) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Each record's ``d = logit(A_a) - logit(A_b)`` (AUCs clipped), and which records have one."""
    a, b = _paired(half_a, half_b, ("half_a", "half_b"), "AUC")
    known = np.isfinite(a) & np.isfinite(b)
    a, b = (np.clip(np.where(known, x, 0.5), _LOGIT_CLIP, 1 - _LOGIT_CLIP) for x in (a, b))
    return np.where(known, np.log(a / (1 - a)) - np.log(b / (1 - b)), np.nan), known


def training_variance(half_a: ArrayLike, half_b: ArrayLike, *, quantile: float = TRAINING_QUANTILE) -> float:
    """The variance of a record's risk that comes from training the attack, on the logit scale,
    pooled over a run's records.

    Two attacks trained on disjoint halves of the shadow datasets score the *same* evaluation
    runs, so the gap ``d = logit(A_a) - logit(A_b)`` between their AUCs comes from their training
    alone (the evaluation noise they share cancels, up to what the attacks do differently with
    it). ``E[d^2] = 2 v_half``, and training noise shrinks with the number of shadow datasets like
    a sampling variance, so the attack trained on all of them has ``v = v_half / 2 = E[d^2] / 4``.

    The logit scale, because training noise moves an attack's separation: an AUC near 1 cannot
    move far, and an absolute variance pooled from records near 0.7 would swamp it (on the AUC
    scale a record at 0.999 got the interval 0.007-1.0). One record's ``d^2 / (4 v)`` is a
    chi-square with one degree of freedom; the run's records are pooled by a quantile ``q``,
    ``quantile_q(d^2) / (4 chi2_1(q))``, which a few records whose half attacks hit an AUC of 0 or
    1 cannot swamp. Where every record has the same noise, any ``q`` estimates it. Where records
    differ (measured per record: 0.0009-0.098 against a pooled 0.034), the median
    (``q = 0.5``, privgame until 2026-12) is the typical record's noise and too small for the
    noisiest records; the default upper quantile 0.9 reads it from them, and
    :func:`record_training_variance` adds each record's own gap. AUCs are clipped to
    [0.001, 0.999].

    Measured on Adult (Synthpop, |D| = 2,000, N_shadow = 1,000, N_eval = 200, 10 records): a
    standard deviation of 0.14 on the logit scale for the leave-one-out attacker and 0.20 for the
    population attacker, that is 0.022 and 0.033 for a risk at 0.8 (DeLong's standard error there
    is about 0.03 at 200 evaluation runs); the population attacker's half attacks were 0.086 apart
    in AUC (root mean square).

    Parameters
    ----------
    half_a, half_b : array-like of float, shape (R,)
        Each record's AUC under the two half attacks; records with ``nan`` in either are left
        out.
    quantile : float, default :data:`TRAINING_QUANTILE`
        The quantile ``q`` in (0, 1) the pooled value is read from; 0.5 gives the typical record's
        noise (what :func:`learning_gain` compares a gain with).

    Returns
    -------
    float
        The variance on the logit scale (pass it to :func:`auc_ci` as ``extra_variance``); 0
        when no record has both.

    Raises
    ------
    ParameterError
        If the lengths differ, an AUC is outside [0, 1] or ``quantile`` is not in (0, 1).
    """
    from scipy.stats import chi2

    q = _probability(quantile, "quantile", open_low=True, open_high=True)
    d, known = _half_gaps(half_a, half_b)
    if not known.any():
        return 0.0
    return float(np.quantile(d[known] ** 2, q) / (4.0 * float(chi2.ppf(q, 1))))


def record_training_variance(half_a: ArrayLike, half_b: ArrayLike, pooled: float) -> FloatArray:
    """Each record's training noise: the larger of the run's pooled value and its own.

    A record's own estimate is ``d^2 / 4`` from its two half attacks (:func:`training_variance`);
    with one degree of freedom it is too noisy to stand alone (it is below the truth two times
    in three), so it only ever widens the pooled value, for the records whose own half attacks
    disagree more than the run's. Simulated with records whose training noise spans a factor of
    20 (``tests/test_verdict_errors.py``): at a true risk of t, the noisiest quarter of the
    records were called at risk 9.0% of the time with the pooled median, 3.7% with this, 1.5%
    nominal (the rest of the records: below nominal either way).

    Parameters
    ----------
    half_a, half_b : array-like of float, shape (R,)
        Each record's AUC under the two half attacks; ``nan`` where a record has none.
    pooled : float
        The run's pooled value (:func:`training_variance`), >= 0.

    Returns
    -------
    numpy.ndarray of float, shape (R,)
        On the logit scale; ``pooled`` for a record without half attacks.
    """
    if not (math.isfinite(pooled) and pooled >= 0):
        raise ParameterError(f"pooled must be a finite number >= 0, got {pooled!r}.")
    d, known = _half_gaps(half_a, half_b)
    own = np.where(known, np.nan_to_num(d) ** 2 / 4.0, 0.0)
    return np.maximum(pooled, own)


LEARNING_Z = 1.645
"""The one-sided 95% point above which an attack's gain over its halves is taken as learning."""

LEARNING_FLOOR_SD = 0.05
"""The least noise (logit scale) a learning gain is measured against: a run whose half attacks all
agree exactly would otherwise call any gain, however small, learning."""


def learning_gain(
    full: float, half_a: float, half_b: float, training: float, *, z: float = LEARNING_Z
) -> tuple[float, bool]:
    """How much more the attack found with all its shadow datasets than with half of them, and
    whether that is more than training noise: an attack that is still learning.

    ``gain = logit(A_full) - (logit(A_a) + logit(A_b)) / 2`` (AUCs clipped to [0.001, 0.999]).
    Had the attack stopped learning, the full attack and its halves would have the same expected
    logit AUC, and the gain would be noise: the full attack's training noise ``v`` plus the mean of
    two halves' ``v_half / 2 = v`` (``v`` = ``training``, :func:`training_variance`), so a standard
    deviation of at most ``sqrt(2 v)`` (less, as the full attack shares its shadow datasets with its
    halves). The attack is *still learning* when ``gain > z * max(sqrt(2 v), LEARNING_FLOOR_SD)``.

    Returns
    -------
    gain : float
        On the logit scale; ``nan`` when a half AUC is missing.
    learning : bool
        False when ``gain`` is ``nan``.
    """
    values = np.array([full, half_a, half_b], dtype=np.float64)
    if not np.isfinite(values).all():
        return math.nan, False
    values = np.clip(values, _LOGIT_CLIP, 1 - _LOGIT_CLIP)
    logits = np.log(values / (1 - values))
    gain = float(logits[0] - (logits[1] + logits[2]) / 2)
    noise = max(math.sqrt(2 * max(training, 0.0)), LEARNING_FLOOR_SD)
    return gain, gain > z * noise


def learning_bound(high: float, gain: float) -> float:
    """An interval's upper bound raised by a still-learning attack's gain on the logit scale: the
    risk another doubling of the shadow datasets could reach if the attack gains as much again
    (learning curves flatten, so a gain no larger than the last is the expected case)."""
    if not (math.isfinite(high) and math.isfinite(gain)) or gain <= 0:
        return high
    clipped = min(max(high, _LOGIT_CLIP), 1 - _LOGIT_CLIP)
    return max(high, _expit(_logit(clipped) + gain))


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _wilson(p: float, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed over ``n`` trials."""
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def look_level(look: int, *, level: float = 0.95) -> float:
    """The confidence level of a record's interval at its ``look``-th look (1, 2, ...).

    A record whose verdict is looked at again after more runs (``extend``, ``run --resolve-to``)
    is tested once per look, and stopping when the interval clears t inflates the error of the
    final verdict (optional stopping: 8.5% false "at risk" at a true AUC of t over four looks of
    95% intervals). The error ``alpha = 1 - level`` is spent over the looks: look ``k`` gets
    ``alpha * 6 / (pi^2 k^2)``, whose sum over every ``k`` is ``alpha``. By the union bound a
    record's verdict is wrong at *any* look with probability at most ``alpha`` (``alpha / 2`` on
    each side), however many looks are taken and whatever made the data owner look again, with
    nothing to declare in advance. The first look spends 61% of the error (z = 2.17 instead of
    1.96 at 95%), the second 15%, the third 7%.

    Parameters
    ----------
    look : int
        1 for the verdict after a record's first evaluation runs, 2 after its first extension, ...
    level : float, default 0.95
        The overall confidence level.

    Returns
    -------
    float
        ``1 - alpha * 6 / (pi^2 look^2)``.

    Raises
    ------
    ParameterError
        If ``look`` is not a whole number >= 1 or ``level`` is not in (0, 1).
    """
    if isinstance(look, bool) or not isinstance(look, int | np.integer) or look < 1:
        raise ParameterError(f"look must be a whole number >= 1, got {look!r}.")
    level = _probability(level, "level", open_low=True, open_high=True)
    return 1.0 - (1.0 - level) * 6.0 / (math.pi**2 * int(look) ** 2)


def tpr_at_fpr(scores: ArrayLike, labels: ArrayLike, fpr: float) -> float:
    """Highest true positive rate among thresholds whose false positive rate is at most ``fpr``.

    Read off the empirical ROC curve of :func:`roc_points` without interpolation. The threshold
    ``+inf`` (predict 'in' for no run) always qualifies, so the result is at least 0.

    Parameters
    ----------
    scores : array-like of float, shape (N,)
        Membership scores (finite), higher meaning more likely 'in'.
    labels : array-like of {0, 1}, shape (N,)
        1 = 'in', 0 = 'out'.
    fpr : float
        The largest acceptable false positive rate, in [0, 1] (e.g. 0.01 or 0.1).

    Returns
    -------
    float
        The TPR; ``nan`` when a class is absent (including empty input).

    Raises
    ------
    ParameterError
        If ``fpr`` is not in [0, 1], or the inputs are invalid as for :func:`auc`.
    """
    limit = _probability(fpr, "fpr", open_low=False, open_high=False)
    curve = roc_points(scores, labels)
    if curve.n_in == 0 or curve.n_out == 0:
        return math.nan
    return float(curve.tpr[curve.fpr <= limit].max())


def hoeffding_half_width(n: int, rho: float = 0.05) -> float:
    """Half-width of the Hoeffding bound on an empirical error rate (Proposition 1).

    With probability at least ``1 - rho`` over the game's fresh seeds, the empirical FPR (or FNR)
    from ``n`` runs of its class is within ``sqrt(log(2 / rho) / (2 n))`` of the true rate
    (Eq. 7; Appendix A).

    Parameters
    ----------
    n : int
        Number of runs of one class ('out' runs for the FPR, 'in' runs for the FNR), ``>= 1``.
    rho : float, default 0.05
        Failure probability, strictly between 0 and 1.

    Returns
    -------
    float
        The half-width (may exceed 1 for very small ``n``, where the bound says nothing).

    Raises
    ------
    ParameterError
        If ``n`` is not an integer ``>= 1`` or ``rho`` is not in (0, 1).
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ParameterError(
            f"n must be a whole number of runs >= 1, got {n!r}; pass the number of runs per class."
        )
    rho = _probability(rho, "rho", open_low=True, open_high=True)
    return math.sqrt(math.log(2.0 / rho) / (2.0 * int(n)))


def auc_half_width(auc: float, n_in: int, n_out: int, *, level: float = 0.95) -> float:
    """The expected half-width of an AUC's confidence interval before any run is made.

    Hanley and McNeil's (1982) standard error of an AUC ``A`` from ``n_in`` positive and
    ``n_out`` negative scores, with ``Q1 = A / (2 - A)`` and ``Q2 = 2 A^2 / (1 + A)`` (exact for
    exponential score distributions, close for others):
    ``sqrt((A (1 - A) + (n_in - 1)(Q1 - A^2) + (n_out - 1)(Q2 - A^2)) / (n_in n_out))``, times the
    normal quantile of ``level``. Used to plan N_eval: how precisely a risk near t will be known.

    Parameters
    ----------
    auc : float
        The AUC the interval is planned for (e.g. the threshold t), in [0.5, 1].
    n_in, n_out : int
        Runs of each class (N_eval / 2 each), at least 1.
    level : float, default 0.95

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For an AUC outside [0.5, 1], counts below 1, or a level outside (0, 1).
    """
    a = float(auc)
    if not 0.5 <= a <= 1.0:
        raise ParameterError(f"auc must lie in [0.5, 1] to plan an interval, got {auc!r}.")
    for name, value in (("n_in", n_in), ("n_out", n_out)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ParameterError(f"{name} must be a whole number of runs >= 1, got {value!r}.")
    level = _probability(level, "level", open_low=True, open_high=True)
    from scipy.stats import norm

    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    variance = (a * (1 - a) + (n_in - 1) * (q1 - a * a) + (n_out - 1) * (q2 - a * a)) / (n_in * n_out)
    return float(norm.ppf(0.5 + level / 2) * math.sqrt(max(variance, 0.0)))


def binormal_tpr(auc: float, fpr: float) -> float:
    """The attack's true-positive rate at false-positive rate ``fpr``, for a risk (AUC) of ``auc``,
    in the equal-variance binormal model.

    With the 'in' and 'out' scores normal with equal variance and means ``d`` apart,
    ``AUC = Phi(d / sqrt 2)``, so ``d = sqrt 2 * Phi^-1(AUC)`` and ``TPR(fpr) = Phi(d + Phi^-1(fpr))``.
    It turns a threshold on the AUC into what a data owner can judge: how often an attacker who
    accepts ``fpr`` false alarms is right about the record. A run's own records have their measured
    TPR at FPR 1% and 10% (``risk_model_seeded_tpr_at_fpr_0.01``, ``_0.1``); this is the planning
    figure, before any run.

    Parameters
    ----------
    auc : float
        In [0.5, 1]; an AUC of 1 separates the scores completely (TPR 1).
    fpr : float
        In (0, 1).

    Raises
    ------
    ParameterError
        For an AUC outside [0.5, 1] or an FPR outside (0, 1).
    """
    a = float(auc)
    if not 0.5 <= a <= 1.0:
        raise ParameterError(f"auc must lie in [0.5, 1], got {auc!r}.")
    f = _probability(fpr, "fpr", open_low=True, open_high=True)
    if a == 1.0:
        return 1.0
    from scipy.stats import norm

    return float(norm.cdf(math.sqrt(2.0) * norm.ppf(a) + norm.ppf(f)))


def share_width(sampled: int, *, level: float = 0.95) -> tuple[float, float]:
    """How wide the share's Clopper-Pearson interval can be with ``sampled`` random records.

    Returns
    -------
    (float, float)
        The widest interval over every count of records at risk (its worst case, near half of
        them), and the upper end when none is at risk (what a clean sample can show at best).
        Both are lower bounds on privgame's share bracket, which also allows for the verdicts'
        own errors and counts undecided records at its high end.

    Raises
    ------
    ParameterError
        For ``sampled`` below 1 or a level outside (0, 1).
    """
    if isinstance(sampled, bool) or not isinstance(sampled, int | np.integer) or sampled < 1:
        raise ParameterError(f"sampled must be a whole number of records >= 1, got {sampled!r}.")
    level = _probability(level, "level", open_low=True, open_high=True)
    from scipy.stats import beta

    n = int(sampled)
    k = np.arange(n + 1)
    alpha = 1.0 - level
    with np.errstate(all="ignore"):
        low = np.where(k == 0, 0.0, beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1))
        high = np.where(k == n, 1.0, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1)))
    return float(np.max(high - low)), float(high[0])


VERDICTS: tuple[str, ...] = ("at risk", "undecided", "not at risk", "attack failed")
"""The verdict of a record, from its risk's interval against the threshold t (see :func:`verdicts`)."""

FAILED_BELOW = 0.5
"""An interval whose upper bound is at or below this AUC is a failed attack, not safety."""


def verdicts(low: ArrayLike, high: ArrayLike, threshold: float) -> NDArray[np.str_]:
    """The verdict of each record from its risk's confidence interval.

    * *attack failed* when the interval's upper bound is at or below 0.5: the attack did no
      better than a coin on this record, or worse (an interval wholly below 0.5 means it learnt a
      difference between its shadow datasets and the real ones that points the wrong way; the
      interval ``(0.5, 0.5)`` of :func:`auc_ci` means its scores did not vary). Such a record is
      never *not at risk*: an attack that failed says nothing of the record's safety.
    * *at risk* when the interval's lower bound is above ``t``;
    * *not at risk* when its upper bound is at or below ``t``;
    * *undecided* when the interval contains ``t`` (a bound exactly at ``t`` follows the point
      risk's rule: above ``t`` is at risk, at ``t`` is not), or a bound is undefined.

    Each record is tested on its own, with the interval of its own look (:func:`look_level`).

    Parameters
    ----------
    low, high : array-like of float, shape (R,)
        The bounds of each record's interval (:func:`auc_ci` at the record's look level);
        ``nan`` where the risk is undefined.
    threshold : float
        The high-risk threshold ``t`` in [0, 1].

    Returns
    -------
    ndarray of str, shape (R,)
        One of :data:`VERDICTS` per record.

    Raises
    ------
    ParameterError
        If the lengths differ or ``threshold`` is outside [0, 1].
    """
    t = _threshold(threshold)
    lo = _float_vector(low, "low")
    hi = _float_vector(high, "high")
    if lo.shape != hi.shape:
        raise ParameterError(f"low and high must have the same length, got {lo.size} and {hi.size}.")
    out = np.full(lo.shape, "undecided", dtype=object)
    out[lo > t] = "at risk"
    out[hi <= t] = "not at risk"
    out[hi <= FAILED_BELOW] = "attack failed"
    return out.astype(str)


VERDICT_ERROR = 0.025
"""The most often a record's verdict is wrong on one side: a record whose true risk is at or
below t is called *at risk*, or one above t *not at risk*, with probability at most this (half of
the 5% that :func:`look_level` spends over every look)."""


VERDICT_RULE = (
    "each record's risk has a logit DeLong interval whose 5% error is spent over the record's looks "
    "(look k: 5% x 6/(pi^2 k^2), so the verdict's error holds however many looks are taken); at risk "
    "when the interval lies above t, not at risk when at or below t, attack failed when at or below "
    "0.5, undecided otherwise"
)
"""The verdict rule in words, as a run's summary records it."""


def share_bracket(
    at_risk: int, at_risk_or_undecided: int, sampled: int, *, level: float = 0.95
) -> tuple[float, float]:
    """The share of all records at risk, bracketed by the records' verdicts.

    From a uniform sample of ``sampled`` records: the low end rests on the records *at risk*, the
    high end on those *at risk or undecided*, so the share means what a verdict means. Each end
    is a one-sided Clopper-Pearson bound at ``(1 - level) / 2`` corrected for the verdicts' own
    errors: a sampled record is called at risk with probability at most ``p + e`` when a share
    ``p`` of all records is at risk (``e`` = :data:`VERDICT_ERROR`, the chance that a record at
    or below t is called at risk), so the count at risk is stochastically at most Binomial(m, p +
    e) and ``p >= CP_low - e``; a record above t is at risk or undecided with probability at
    least ``1 - e``, so ``p <= CP_high / (1 - e)``. Both ends hold together with probability at
    least ``level`` (records' verdicts taken as independent). A census (every record audited) is
    treated the same way: its records carry no sampling error, but their verdicts do. A failed
    attack is counted in neither end's favour: it is not at risk, undecided or safe, so the high
    end counts it with the undecided records (pass it in ``at_risk_or_undecided``).

    Parameters
    ----------
    at_risk : int
        Records of the sample at risk.
    at_risk_or_undecided : int
        Records at risk, undecided, or whose attack failed: every record not shown safe.
    sampled : int
        Records in the sample, at least 1.
    level : float, default 0.95

    Returns
    -------
    (low, high) : tuple of float
        Shares in [0, 1].

    Raises
    ------
    ParameterError
        For counts out of order or out of range, or a level outside (0, 1).
    """
    for name, value in (("at_risk", at_risk), ("at_risk_or_undecided", at_risk_or_undecided)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ParameterError(f"{name} must be a whole number, got {value!r}.")
    a, u, m = int(at_risk), int(at_risk_or_undecided), int(sampled)
    if not 0 <= a <= u <= m or m < 1:
        raise ParameterError(
            "A share bracket needs 0 <= at_risk <= at_risk_or_undecided <= sampled and sampled >= 1; "
            f"got {a}, {u} and {m}."
        )
    low, _ = binomial_interval(a, m, level=level)
    _, high = binomial_interval(u, m, level=level)
    return max(0.0, low - VERDICT_ERROR), min(1.0, high / (1.0 - VERDICT_ERROR))


def screened_share(
    screened_low: ArrayLike,
    screened_high: ArrayLike,
    sample_low: ArrayLike,
    sample_high: ArrayLike,
    sample_screened_low: ArrayLike,
    sample_screened_high: ArrayLike,
    *,
    level: float = 0.95,
    low_error: float = VERDICT_ERROR,
) -> tuple[float, float, float]:
    """The share of all of D at risk from every record's screening verdict, corrected by the
    exact verdicts of a uniform random sample (prediction-powered inference).

    Each end of :func:`share_bracket` counts a uniform sample's exact verdicts. Here every record
    of D has a cheap screening verdict, and the sample has both. For one end (the low end counts
    records *at risk*, the high end every record not shown safe), with ``Y`` the exact indicator
    and ``Ŷ`` the screened one, the share of D the exact game would find is

        mean over D of Ŷ  +  mean over D of (Y - Ŷ),

    the first term known exactly (every record is screened), the second (the *rectifier*)
    estimated from the sample (Angelopoulos et al., Science 2023). ``Y - Ŷ`` is -1, 0 or 1, so
    its mean is ``P(+1) - P(-1)``, and each of the two shares gets a one-sided Clopper-Pearson
    bound at ``(1 - level) / 4``: the low end is ``mean(Ŷ_low) + CP_low(+1) - CP_high(-1)``, the
    high end ``mean(Ŷ_high) + CP_high(+1) - CP_low(-1)``. By the union bound both ends hold
    together with probability at least ``level``, whatever the screen's errors: a screen that
    agrees with the exact game narrows the interval, one that does not widens it but never
    breaks it. The ends are then corrected for the sample verdicts' own errors as in
    :func:`share_bracket`: ``- low_error`` (the chance that a record at or below t is called at
    risk) and ``/ (1 - e)`` (``e`` = :data:`VERDICT_ERROR`, the chance that one above t is called
    safe). Sampling without replacement from D makes the binomial bounds conservative.

    Parameters
    ----------
    screened_low, screened_high : array-like of bool, shape (N,)
        Every record of D: screened *at risk*; screened not shown safe (*at risk*, *undecided* or
        *attack failed*).
    sample_low, sample_high : array-like of bool, shape (n,)
        The sample's exact verdicts, the same two indicators.
    sample_screened_low, sample_screened_high : array-like of bool, shape (n,)
        The sample's screened verdicts, the same two indicators.
    level : float, default 0.95
    low_error : float, default :data:`VERDICT_ERROR`
        The most often a sampled record at or below t is called at risk (twice
        :data:`VERDICT_ERROR` when its verdict is "at risk" by either of two attacks).

    Returns
    -------
    (estimate, low, high) : tuple of float
        The point estimate of the share at risk (the low end's indicator) and the interval, in
        [0, 1].

    Raises
    ------
    ParameterError
        For an empty D or sample, lengths that differ, or a level outside (0, 1).
    """
    level = _probability(level, "level", open_low=True, open_high=True)
    arrays = [
        np.asarray(a, dtype=bool).reshape(-1)
        for a in (
            screened_low,
            screened_high,
            sample_low,
            sample_high,
            sample_screened_low,
            sample_screened_high,
        )
    ]
    all_low, all_high, y_low, y_high, s_low, s_high = arrays
    if all_low.size == 0 or all_low.size != all_high.size:
        raise ParameterError("screened_low and screened_high must give every record of D, at least one.")
    n = y_low.size
    if n == 0 or any(a.size != n for a in (y_high, s_low, s_high)):
        raise ParameterError("The sample's four indicators must have one, equal, non-zero length.")
    each = 1.0 - (1.0 - level) / 2  # each binomial interval's two sides at (1 - level) / 4

    def rectifier(y: NDArray[np.bool_], s: NDArray[np.bool_]) -> tuple[float, float]:
        plus_low, plus_high = binomial_interval(int(np.count_nonzero(y & ~s)), n, level=each)
        minus_low, minus_high = binomial_interval(int(np.count_nonzero(~y & s)), n, level=each)
        return plus_low - minus_high, plus_high - minus_low

    low_shift, _ = rectifier(y_low, s_low)
    _, high_shift = rectifier(y_high, s_high)
    estimate = float(all_low.mean() + (y_low.astype(float) - s_low.astype(float)).mean())
    e_low = _probability(low_error, "low_error", open_low=False, open_high=True)
    low = max(0.0, float(all_low.mean()) + low_shift - e_low)
    high = min(1.0, (float(all_high.mean()) + high_shift) / (1.0 - VERDICT_ERROR))
    return min(max(estimate, 0.0), 1.0), low, max(low, high)


def reliability(
    estimates: ArrayLike, lows: ArrayLike, highs: ArrayLike, *, level: float = 0.95
) -> float | None:
    """The share of the spread of estimates across records that is not their estimation noise.

    With ``estimate = truth + noise`` record by record, the variance across records is the
    truths' variance plus the mean noise variance (classical test theory), and each record's
    noise standard deviation is read from its ``level`` interval as its width over ``2 z``. The
    reliability ``1 - mean(noise variance) / variance(estimates)`` is the squared correlation
    of the estimates with the truths; no score, however good, is expected to correlate with these
    estimates by more than about its square root. Used to read the screen's agreement with the
    exact game's risks: at N_eval = 200 on records whose risks lie close together, the exact
    risks' own noise caps the rank correlation well below 1.

    Parameters
    ----------
    estimates, lows, highs : array-like of float, shape (n,)
        Each record's estimate and interval; records with a missing value are left out.
    level : float, default 0.95
        The intervals' level.

    Returns
    -------
    float or None
        In [0, 1] (a noise larger than the spread gives 0); ``None`` with fewer than five
        records or estimates that do not vary.
    """
    level = _probability(level, "level", open_low=True, open_high=True)
    values = [np.asarray(a, dtype=np.float64).reshape(-1) for a in (estimates, lows, highs)]
    if len({v.size for v in values}) != 1:
        raise ParameterError("estimates, lows and highs must have one length.")
    estimate, low, high = values
    keep = np.isfinite(estimate) & np.isfinite(low) & np.isfinite(high)
    if np.count_nonzero(keep) < 5:
        return None
    spread = float(np.var(estimate[keep], ddof=1))
    if not spread > 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    noise = float(np.mean(((high[keep] - low[keep]) / (2.0 * z)) ** 2))
    # 1 / variance is biased upwards (Jensen): for normal values (n - 3) / ((n - 1) s^2) is unbiased.
    n = int(np.count_nonzero(keep))
    unbiased = (n - 3) / (n - 1)
    return min(1.0, max(0.0, 1.0 - unbiased * noise / spread))


def binomial_interval(successes: int, trials: int, *, level: float = 0.95) -> tuple[float, float]:
    """The Clopper-Pearson ("exact") confidence interval of a binomial proportion.

    Used for the share of a release's records at risk, estimated from a uniform random sample of
    them. Clopper-Pearson inverts the two one-sided binomial tests, so its coverage is at least
    ``level`` for every true proportion (it is conservative), unlike Wald or Wilson intervals,
    whose coverage dips below ``level`` for the small shares and samples of an audit. Sampling
    without replacement from a finite table makes it more conservative still.

    Parameters
    ----------
    successes : int
        Records found at risk, ``0 <= successes <= trials``.
    trials : int
        Records in the sample, at least 1.
    level : float, default 0.95
        Confidence level, strictly between 0 and 1.

    Returns
    -------
    (float, float)
        ``(low, high)``; ``low`` is 0 when ``successes == 0`` and ``high`` is 1 when
        ``successes == trials``.

    Raises
    ------
    ParameterError
        For counts that are not whole numbers in range, or a level outside (0, 1).
    """
    for name, value in (("successes", successes), ("trials", trials)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ParameterError(f"{name} must be a whole number, got {value!r}.")
    k, n = int(successes), int(trials)
    if n < 1 or not 0 <= k <= n:
        raise ParameterError(
            f"A binomial interval needs 1 <= trials and 0 <= successes <= trials; got {k} of {n}."
        )
    level = _probability(level, "level", open_low=True, open_high=True)
    from scipy.stats import beta

    alpha = 1.0 - level
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def kept_sample_share(
    *,
    records_in_d: int,
    sampled: int,
    removable: int,
    left_out: int,
    kept: int,
    kept_at_risk: int,
    level: float = 0.95,
    verdict_error: float = 0.0,
) -> tuple[float, float, float]:
    """The share at risk of D' = D minus the records a leave-out remedy took out, from the parent's
    random sample kept: a conservative estimate and its interval.

    The parent audited a uniform random sample S of ``sampled`` records of D (``records_in_d``
    records). Let B be the records of D whose parent verdict the remedy leaves out (at risk, or
    also undecided); ``removable`` = |S ∩ B| of them were sampled. The remedy took out R (the
    ``left_out`` audited records of B: every sampled one, plus outliers), so D' = D - R. The
    re-audit scores the ``kept`` records of S - R on D' and finds ``kept_at_risk`` at risk.

    * S - R = S ∩ (D - B) is a uniform sample of D - B (a uniform sample meets any fixed set
      in a uniform sample of it), so ``kept_at_risk / kept`` = q̂ estimates without bias the
      share q of D - B at risk on D'.
    * The records of B - R were never audited; counting all of them as still at risk bounds
      their part from above. |B| is estimated by b̂ |D|, b̂ = ``removable / sampled``.

    Estimate: ``(max(0, b̂ |D| - |R|) + (1 - b̂) |D| q̂) / |D'|``. In expectation it overstates
    the share by the records of B - R no longer at risk on D', and never understates it.
    Interval: Clopper-Pearson intervals of b and q at level ``1 - (1 - level) / 2`` each (so
    both hold together with probability at least ``level``); the high end takes the worst b
    and the high q; the low end counts only the records of D - B at risk,
    ``(1 - b_high) |D| q_low / |D'|``, a bound on the true share whatever became of B - R.
    Shares are clipped to [0, 1].

    Parameters
    ----------
    records_in_d, sampled, removable, left_out, kept, kept_at_risk : int
        As above; ``0 <= removable <= sampled <= records_in_d``, ``left_out < records_in_d``
        and ``kept_at_risk <= kept <= sampled - removable``.
    level : float, default 0.95
    verdict_error : float, default 0
        The most often a kept record's verdict is wrong on one side (:data:`VERDICT_ERROR` when
        the counts are verdicts): q's bounds become ``q_low - e`` and ``q_high / (1 - e)``, as in
        :func:`share_bracket`.

    Returns
    -------
    (estimate, low, high) : tuple of float
        With no kept record (``kept == 0``) q is unknown: the estimate is the high end.

    Raises
    ------
    ParameterError
        For counts out of range.
    """
    counts = {
        "records_in_d": records_in_d,
        "sampled": sampled,
        "removable": removable,
        "left_out": left_out,
        "kept": kept,
        "kept_at_risk": kept_at_risk,
    }
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ParameterError(f"{name} must be a whole number of records, 0 or more; got {value!r}.")
    n, m, k, n_out = int(records_in_d), int(sampled), int(removable), int(left_out)
    m_kept, a_kept = int(kept), int(kept_at_risk)
    if not (1 <= m <= n and k <= m and n_out < n and a_kept <= m_kept <= m - k):
        raise ParameterError(
            "A kept-sample share needs 1 <= sampled <= records_in_d, removable <= sampled, "
            f"left_out < records_in_d and kept_at_risk <= kept <= sampled - removable; got {counts}."
        )
    level = _probability(level, "level", open_low=True, open_high=True)
    each = 1.0 - (1.0 - level) / 2
    n_new = n - n_out
    b_hat = k / m
    b_low, b_high = binomial_interval(k, m, level=each)
    e = _probability(verdict_error, "verdict_error", open_low=False, open_high=True)
    q_low, q_high = binomial_interval(a_kept, m_kept, level=each) if m_kept else (0.0, 1.0)
    q_low, q_high = max(0.0, q_low - e), min(1.0, q_high / (1.0 - e))

    def bound(b: float, q: float) -> float:
        return min(1.0, (max(0.0, b * n - n_out) + (1.0 - b) * n * q) / n_new)

    high = max(bound(b_low, q_high), bound(b_high, q_high))
    low = min(1.0, (1.0 - b_high) * n * q_low / n_new)
    estimate = bound(b_hat, a_kept / m_kept) if m_kept else high
    return estimate, low, max(high, estimate)


# --------------------------------------------------------------------------------------------
# Across records: miss rate, RMSD, distributions, summary
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MissRate:
    """Miss rate of the traditional game at high-risk threshold ``t`` (Eq. 9).

    Attributes
    ----------
    rate : float or None
        ``missed / at_risk``; ``None`` when ``at_risk == 0`` (undefined, never 0).
    missed : int
        Records with ``R^T <= t`` and ``R^MS > t``: high risk, but judged low risk by the
        traditional game.
    at_risk : int
        Records with ``R^MS > t``.
    threshold : float
        The high-risk threshold ``t``.
    excluded : int
        Records left out because either risk is ``nan`` (undefined AUC).
    """

    rate: float | None
    missed: int
    at_risk: int
    threshold: float
    excluded: int = 0

    def describe(self) -> str:
        """One sentence stating the miss rate, or why it is undefined."""
        t = f"t={self.threshold:g}"
        if self.rate is None:
            text = f"Miss rate undefined: no record has model-seeded risk above {t}"
        else:
            text = (
                f"Miss rate {self.rate:.2f}: {self.missed} of the {self.at_risk} records with "
                f"model-seeded risk above {t} have traditional risk at or below {t}"
            )
        if self.excluded:
            noun = "record" if self.excluded == 1 else "records"
            text += f" ({self.excluded} {noun} with an undefined risk left out)"
        return text + "."

    def __str__(self) -> str:
        return self.describe()


def _miss_rate_of_pairs(ms: FloatArray, t: FloatArray, threshold: float, excluded: int) -> MissRate:
    high = ms > threshold
    at_risk = int(np.count_nonzero(high))
    missed = int(np.count_nonzero(high & (t <= threshold)))
    rate = missed / at_risk if at_risk else None
    return MissRate(rate=rate, missed=missed, at_risk=at_risk, threshold=threshold, excluded=excluded)


def miss_rate(r_ms: ArrayLike, r_t: ArrayLike, threshold: float) -> MissRate:
    """Share of high-risk records (``R^MS > t``) that the traditional game calls low risk (Eq. 9).

    Parameters
    ----------
    r_ms : array-like of float, shape (R,)
        Model-seeded risk of each record, in [0, 1], ``nan`` when undefined.
    r_t : array-like of float, shape (R,)
        Traditional risk of the same records in the same order.
    threshold : float
        High-risk threshold ``t`` in [0, 1] (the paper uses 0.8).

    Returns
    -------
    MissRate
        With ``rate`` ``None`` when no defined record has ``R^MS > t``. Records with a ``nan``
        risk in either game are left out and counted in ``excluded``.

    Raises
    ------
    ParameterError
        If the lengths differ, a risk lies outside [0, 1], or ``threshold`` is outside [0, 1].
    """
    t = _threshold(threshold)
    ms, tr, excluded = _risk_pairs(r_ms, r_t)
    return _miss_rate_of_pairs(ms, tr, t, excluded)


def miss_rate_curve(r_ms: ArrayLike, r_t: ArrayLike, thresholds: ArrayLike) -> list[MissRate]:
    """Miss rate at each of several high-risk thresholds (Figure 2a).

    Parameters
    ----------
    r_ms, r_t : array-like of float, shape (R,)
        Model-seeded and traditional risks, as for :func:`miss_rate`.
    thresholds : array-like of float
        High-risk thresholds in [0, 1], in the order wanted.

    Returns
    -------
    list of MissRate
        One per threshold, in the given order.

    Raises
    ------
    ParameterError
        As for :func:`miss_rate`, for any threshold.
    """
    ts = _float_vector(thresholds, "thresholds")
    checked = [_threshold(float(t), "each threshold") for t in ts]
    ms, tr, excluded = _risk_pairs(r_ms, r_t)
    return [_miss_rate_of_pairs(ms, tr, t, excluded) for t in checked]


def rmsd(r_ms: ArrayLike, r_t: ArrayLike) -> float:
    """Root mean squared deviation between traditional and model-seeded risks (Eq. 10).

    Parameters
    ----------
    r_ms, r_t : array-like of float, shape (R,)
        Model-seeded and traditional risks of the same records; records with a ``nan`` in either
        are left out.

    Returns
    -------
    float
        ``sqrt(mean((R^T - R^MS)^2))`` over the defined records; ``nan`` when there is none.

    Raises
    ------
    ParameterError
        If the lengths differ or a risk lies outside [0, 1].
    """
    ms, tr, _ = _risk_pairs(r_ms, r_t)
    if ms.size == 0:
        return math.nan
    return math.sqrt(float(np.mean((tr - ms) ** 2)))


def abs_differences(r_ms: ArrayLike, r_t: ArrayLike) -> FloatArray:
    """Per-record absolute difference ``|R^T - R^MS|`` (Figure 1b).

    Parameters
    ----------
    r_ms, r_t : array-like of float, shape (R,)
        Model-seeded and traditional risks of the same records.

    Returns
    -------
    ndarray of float, shape (R,)
        Aligned with the input records (this is a per-record value, not an across-record
        summary), so a record with an undefined risk keeps ``nan`` in its place.

    Raises
    ------
    ParameterError
        If the lengths differ or a risk lies outside [0, 1].
    """
    ms, tr = _paired(r_ms, r_t, ("r_ms", "r_t"))
    return np.abs(tr - ms)


def ecdf(values: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Empirical cumulative distribution function (Figure 2b).

    Parameters
    ----------
    values : array-like of float, shape (R,)
        Finite values; ``nan`` entries (undefined risks) are left out.

    Returns
    -------
    (x, F) : tuple of ndarray
        ``x`` the distinct values in increasing order and ``F[i]`` the share of values
        ``<= x[i]``, in (0, 1] with ``F[-1] == 1``. Both empty when no value is defined.

    Raises
    ------
    ParameterError
        If ``values`` is not 1-D or holds an infinite value.
    """
    v = _finite_values(values, "values")
    x, counts = np.unique(v, return_counts=True)
    if v.size == 0:
        return x.astype(np.float64), np.empty(0, dtype=np.float64)
    return x.astype(np.float64), np.cumsum(counts) / v.size


def percentiles(values: ArrayLike, q: Sequence[int] = (10, 50, 90)) -> dict[int, float]:
    """Percentiles of the defined values (numpy's default linear interpolation).

    Parameters
    ----------
    values : array-like of float, shape (R,)
        Finite values; ``nan`` entries (undefined risks) are left out.
    q : sequence of int, default (10, 50, 90)
        Percentiles to compute, whole numbers in [0, 100].

    Returns
    -------
    dict of int to float
        ``{q_i: percentile}`` in the order of ``q``; every value ``nan`` when no value is defined.

    Raises
    ------
    ParameterError
        If a ``q`` is not a whole number in [0, 100], or ``values`` is invalid as for
        :func:`ecdf`.
    """
    keys: list[int] = []
    for p in q:
        if isinstance(p, bool) or not isinstance(p, int | np.integer) or not 0 <= p <= 100:
            raise ParameterError(
                f"each percentile must be a whole number in [0, 100], got {p!r}; e.g. q=(10, 50, 90)."
            )
        keys.append(int(p))
    v = _finite_values(values, "values")
    if v.size == 0:
        return dict.fromkeys(keys, math.nan)
    found = np.percentile(v, keys)
    return {k: float(x) for k, x in zip(keys, found, strict=True)}


def _json_number(value: float) -> float | None:
    """JSON has no nan: an undefined number becomes None."""
    return None if math.isnan(value) else float(value)


def summarize(
    r_ms: ArrayLike,
    r_t: ArrayLike,
    *,
    threshold: float = 0.8,
    difference: float = 0.1,
    traditional: bool = True,
) -> dict[str, Any]:
    """A Table-1 style comparison of model-seeded and traditional risks, ready for ``json.dumps``.

    Parameters
    ----------
    r_ms, r_t : array-like of float, shape (R,)
        Model-seeded and traditional risk of each record, in [0, 1], ``nan`` when undefined.
    threshold : float, default 0.8
        High-risk threshold ``t`` for the miss rate and the at-risk counts.
    difference : float, default 0.1
        Cut-off for the share of records whose risks differ by more than it (Section 5).
    traditional : bool, default True
        False for a run that played the model-seeded game alone (``r_t`` is then ignored): the
        model-seeded figures use every record with a defined risk, and every figure that needs
        the traditional game (RMSD, miss rate, differences) is ``None``, its text "not run".

    Returns
    -------
    dict
        Plain Python types only; every undefined number is ``None`` (JSON has no nan). Keys:

        - ``records``: number of records given; ``records_with_defined_risk``: those with both
          risks defined; ``records_excluded``: the rest, left out of everything below.
        - ``threshold``; ``rmsd`` (Eq. 10).
        - ``miss_rate`` (Eq. 9, ``None`` when undefined), ``missed``, ``at_risk``,
          ``miss_rate_text`` (one sentence, see :meth:`MissRate.describe`).
        - ``above_t_model_seeded`` (#``R^MS > t``), ``above_t_traditional`` (#``R^T > t``):
          point estimates above t, the paper's counts. A record is *at risk* only by its
          verdict (:func:`verdicts`); :func:`privgame.games.audit.audit_summary` counts those.
        - ``mean_model_seeded``, ``mean_traditional``.
        - ``percentiles_model_seeded``, ``percentiles_traditional``,
          ``percentiles_abs_difference``: ``{"p10": ..., "p50": ..., "p90": ...}``.
        - ``max_abs_difference``; ``difference_cutoff``; ``share_abs_difference_above``: share
          of records with ``|R^T - R^MS| > difference``.

    Raises
    ------
    ParameterError
        If the lengths differ, a risk lies outside [0, 1], or ``threshold`` or ``difference``
        lies outside [0, 1].
    """
    t = _threshold(threshold)
    cutoff = _probability(difference, "difference", open_low=False, open_high=False)
    if not traditional:
        return _summarize_model_seeded(r_ms, t, cutoff)
    ms, tr, excluded = _risk_pairs(r_ms, r_t)
    n = int(ms.size)
    mr = _miss_rate_of_pairs(ms, tr, t, excluded)
    diff = np.abs(tr - ms)

    def mean(v: FloatArray) -> float | None:
        return float(np.mean(v)) if v.size else None

    def pct(v: FloatArray) -> dict[str, float | None]:
        return {f"p{k}": _json_number(x) for k, x in percentiles(v, (10, 50, 90)).items()}

    return {
        "records": n + excluded,
        "records_with_defined_risk": n,
        "records_excluded": excluded,
        "threshold": t,
        "rmsd": math.sqrt(float(np.mean(diff**2))) if n else None,
        "miss_rate": mr.rate,
        "missed": mr.missed,
        "at_risk": mr.at_risk,
        "miss_rate_text": mr.describe(),
        "above_t_model_seeded": mr.at_risk,
        "above_t_traditional": int(np.count_nonzero(tr > t)),
        "mean_model_seeded": mean(ms),
        "mean_traditional": mean(tr),
        "percentiles_model_seeded": pct(ms),
        "percentiles_traditional": pct(tr),
        "percentiles_abs_difference": pct(diff),
        "max_abs_difference": float(diff.max()) if n else None,
        "difference_cutoff": cutoff,
        "share_abs_difference_above": float(np.mean(diff > cutoff)) if n else None,
    }


def _summarize_model_seeded(r_ms: ArrayLike, t: float, cutoff: float) -> dict[str, Any]:
    """:func:`summarize` of a run without the traditional game."""
    risks = _risk_vector(r_ms, "r_ms")
    ms = risks[~np.isnan(risks)]
    n = int(ms.size)
    at_risk = int(np.count_nonzero(ms > t))
    none = {"p10": None, "p50": None, "p90": None}
    return {
        "records": int(risks.size),
        "records_with_defined_risk": n,
        "records_excluded": int(risks.size) - n,
        "threshold": t,
        "rmsd": None,
        "miss_rate": None,
        "missed": None,
        "at_risk": at_risk,
        "miss_rate_text": "Miss rate not run: the traditional game was not played in this run.",
        "above_t_model_seeded": at_risk,
        "above_t_traditional": None,
        "mean_model_seeded": float(np.mean(ms)) if n else None,
        "mean_traditional": None,
        "percentiles_model_seeded": {
            f"p{k}": _json_number(x) for k, x in percentiles(ms, (10, 50, 90)).items()
        },
        "percentiles_traditional": none,
        "percentiles_abs_difference": dict(none),
        "max_abs_difference": None,
        "difference_cutoff": cutoff,
        "share_abs_difference_above": None,
    }


def auc_variance(scores: ArrayLike, labels: ArrayLike) -> tuple[float, int]:
    """The pieces of :func:`auc_ci` that a verdict at another threshold needs besides the AUC
    and ``min(n_in, n_out)``.

    Returns
    -------
    variance : float
        DeLong's variance of the AUC (``nan`` when a class has fewer than 2 runs).
    discordant : int
        The discordant runs of the class with fewer (:func:`_discordant_runs`; 0 at an AUC of 0
        or 1).
    """
    s, is_in = _scores_labels(scores, labels)
    n_in = int(np.count_nonzero(is_in))
    n_out = s.size - n_in
    if n_in < 2 or n_out < 2:
        return math.nan, 0
    value = auc(s, is_in)
    v10, v01 = _placements(s, is_in)
    variance = max(0.0, float(np.var(v10, ddof=1) / n_in + np.var(v01, ddof=1) / n_out))
    return variance, _discordant_runs(v10, v01, value)


def at_risk_p_value(
    value: float,
    variance: float,
    threshold: float,
    *,
    discordant: int,
    n: int,
    extra_variance: float = 0.0,
    look: int = 1,
) -> float:
    """The p-value of "this record's risk is at most t", spent over its looks as its verdict is.

    The one-sided p-value ``p1`` is the error at which :func:`auc_ci`'s lower bound reaches t: the
    logit interval's ``1 - T((logit(A) - logit(t)) / se)`` with ``se^2 = variance / (A (1 -
    A))^2 + extra_variance`` and ``T`` the Student-t distribution with ``discordant - 1`` degrees
    of freedom, and, where the interval spans the Wilson bound (fewer than
    :data:`FEW_DISCORDANT` discordant runs, or an AUC of 0 or 1), the larger of that and the
    Wilson bound's over ``n`` trials. The verdict's error at look ``k`` is
    ``(1 - look_level(k)) / 2``, so the returned ``p = min(1, p1 pi^2 k^2 / 6)`` is below
    :data:`VERDICT_ERROR` exactly when the record is *at risk* at ``t``: the p-values that
    :func:`holm` and :func:`benjamini_hochberg` read a set of verdicts with.

    Parameters
    ----------
    value : float
        The record's AUC (its risk).
    variance : float
        DeLong's variance of it (:func:`auc_variance`).
    threshold : float
        t, strictly between 0 and 1.
    discordant : int
        :func:`auc_variance`'s second value.
    n : int
        ``min(n_in, n_out)``: half the record's evaluation runs.
    extra_variance : float, default 0
        The training noise on the logit scale (:func:`record_training_variance`).
    look : int, default 1
        The record's looks (the ``looks`` column).

    Returns
    -------
    float
        In [0, 1]; 1 where the AUC is undefined or every score is tied.
    """
    t = _probability(threshold, "threshold", open_low=True, open_high=True)
    if not (math.isfinite(value) and math.isfinite(variance)):
        return 1.0
    if variance == 0.0 and value == 0.5:
        return 1.0
    extra = max(0.0, float(extra_variance))
    p1 = 0.0
    if 0.0 < value < 1.0:
        se = math.sqrt(variance / (value * (1.0 - value)) ** 2 + extra)
        stat = (_logit(value) - _logit(t)) / se if se > 0 else (math.inf if value > t else -math.inf)
        p1 = 1.0 - _student_cdf(stat, discordant)
    if discordant < FEW_DISCORDANT or value in (0.0, 1.0):
        p1 = max(p1, _wilson_p_value(value, max(int(n), 1), t, extra))
    spent = 6.0 / (math.pi**2 * int(look) ** 2)
    return min(1.0, p1 / spent)


def _wilson_p_value(value: float, n: int, t: float, extra: float) -> float:
    """The one-sided error at which the Wilson lower bound of :func:`_bounded_wilson` reaches t."""
    if value <= t:
        return 0.5

    def low(z: float) -> float:
        return _bounded_wilson(value, n, z, extra)[0]

    z_low, z_high = 0.0, 40.0
    if low(z_high) > t:
        return 0.0
    for _ in range(60):
        middle = (z_low + z_high) / 2
        z_low, z_high = (middle, z_high) if low(middle) > t else (z_low, middle)
    return 1.0 - NormalDist().cdf(z_low)


def holm(p_values: ArrayLike, alpha: float = VERDICT_ERROR) -> NDArray[np.bool_]:
    """Holm's step-down test: the records whose "at risk" holds for the whole set at once.

    The chance that *any* record named is not at risk is at most ``alpha``, whatever the others'
    risks (family-wise error). Sorted p-values ``p_(1) <= ...``: reject while ``p_(i) <= alpha /
    (m - i + 1)``.

    Parameters
    ----------
    p_values : array-like of float, shape (m,)
        :func:`at_risk_p_value` of each record; ``nan`` counts as 1.
    alpha : float, default :data:`VERDICT_ERROR`

    Returns
    -------
    numpy.ndarray of bool, shape (m,)
    """
    p = np.nan_to_num(np.asarray(p_values, dtype=np.float64), nan=1.0)
    alpha = _probability(alpha, "alpha", open_low=True, open_high=True)
    m = p.size
    order = np.argsort(p, kind="stable")
    passed = p[order] <= alpha / (m - np.arange(m))
    keep = int(np.argmin(passed)) if not passed.all() else m
    named = np.zeros(m, dtype=bool)
    named[order[:keep]] = True
    return named


def benjamini_hochberg(p_values: ArrayLike, q: float = 0.05) -> NDArray[np.bool_]:
    """Benjamini-Hochberg's step-up test: the records named at risk with at most a share ``q`` of
    false ones among them, in expectation (false discovery rate; for p-values that are
    independent or positively dependent, as separate records' games are).

    Sorted p-values: name the ``k`` smallest, ``k`` the largest ``i`` with ``p_(i) <= q i / m``.

    Parameters
    ----------
    p_values : array-like of float, shape (m,)
        :func:`at_risk_p_value` of each record; ``nan`` counts as 1.
    q : float, default 0.05

    Returns
    -------
    numpy.ndarray of bool, shape (m,)
    """
    p = np.nan_to_num(np.asarray(p_values, dtype=np.float64), nan=1.0)
    q = _probability(q, "q", open_low=True, open_high=True)
    m = p.size
    order = np.argsort(p, kind="stable")
    below = np.flatnonzero(p[order] <= q * np.arange(1, m + 1) / max(m, 1))
    named = np.zeros(m, dtype=bool)
    if below.size:
        named[order[: below[-1] + 1]] = True
    return named
