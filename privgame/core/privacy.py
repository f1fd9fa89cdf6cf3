"""Differential-privacy accounting and what a guarantee bounds: pure functions.

* zero-concentrated differential privacy (zCDP, Bun and Steinke 2016) and its conversion to
  (epsilon, delta)-DP, in the tight form of Canonne, Kamath and Steinke (2020, Proposition 12):
  a rho-zCDP mechanism is (epsilon, delta)-DP for every ``alpha > 1`` with
  ``delta = exp((alpha - 1) (alpha rho - epsilon)) / (alpha - 1) * (1 - 1 / alpha) ** alpha``;
  :func:`zcdp_delta` takes the best ``alpha``, :func:`zcdp_rho` and :func:`zcdp_epsilon` invert it.
* the highest ROC AUC any membership attack can reach against an (epsilon, delta)-DP mechanism
  (:func:`auc_bound`): every test of 'in' against 'out' has a true-positive rate at most
  ``min(e^eps * fpr + delta, 1 - e^-eps * (1 - delta - fpr))`` (Kairouz, Oh and Viswanath 2015),
  and the area under that curve is the bound. With ``delta = 0`` it is ``e^eps / (1 + e^eps)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from privgame.core.errors import ParameterError

__all__ = ["auc_bound", "zcdp_delta", "zcdp_epsilon", "zcdp_rho"]


def _check(name: str, value: float, *, low: float, high: float = math.inf, inf_ok: bool = False) -> float:
    number = float(value)
    if math.isnan(number) or number <= low or number > high or (number == math.inf and not inf_ok):
        raise ParameterError(f"{name} must lie in ({low:g}, {high:g}), got {value!r}.")
    return number


def _switch(before: Callable[[float], bool], lo: float, hi: float) -> tuple[float, float]:
    """Bisection: ``(lo, hi)`` 200 halvings apart around the point where the monotone ``before``
    turns from True (at ``lo``) to False (at ``hi``)."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if before(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest delta for which rho-zCDP implies (epsilon, delta)-DP (Canonne et al. 2020).

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0 (0: no privacy loss at all, delta = 0).
    epsilon : float
        >= 0.

    Returns
    -------
    float
        In [0, 1].
    """
    rho, epsilon = float(rho), float(epsilon)
    if not (rho >= 0 and epsilon >= 0) or math.isinf(rho):
        raise ParameterError(
            f"rho and epsilon must be finite and >= 0, got rho={rho!r}, epsilon={epsilon!r}."
        )
    if rho == 0:
        return 0.0

    # The exponent is convex in alpha: a golden-section search over log(alpha - 1) finds its minimum.
    def log_delta(alpha: float) -> float:
        return (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)

    lo, hi = math.log(1e-9), math.log(1e9)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = log_delta(1 + math.exp(a)), log_delta(1 + math.exp(b))
    for _ in range(200):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = log_delta(1 + math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = log_delta(1 + math.exp(b))
    best = min(fa, fb)
    return min(1.0, math.exp(best)) if best < 700 else 1.0


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose rho-zCDP implies (epsilon, delta)-DP: the budget a zCDP mechanism
    such as MST spends for an (epsilon, delta) target.

    Raises
    ------
    ParameterError
        Unless ``epsilon > 0`` (finite) and ``0 < delta < 1``.
    """
    epsilon = _check("epsilon", epsilon, low=0.0)
    delta = _check("delta", delta, low=0.0, high=1.0)
    if delta >= 1:
        raise ParameterError(f"delta must lie in (0, 1), got {delta!r}.")
    lo, hi = 0.0, epsilon + 1.0  # rho <= epsilon always: zcdp_delta(epsilon, epsilon) is large
    while zcdp_delta(hi, epsilon) <= delta:
        hi *= 2
    return _switch(lambda rho: zcdp_delta(rho, epsilon) <= delta, lo, hi)[0]


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon with rho-zCDP => (epsilon, delta)-DP.

    Raises
    ------
    ParameterError
        Unless ``rho >= 0`` (finite) and ``0 < delta < 1``.
    """
    rho = float(rho)
    if not rho >= 0 or math.isinf(rho):
        raise ParameterError(f"rho must be finite and >= 0, got {rho!r}.")
    delta = _check("delta", delta, low=0.0, high=1.0)
    if rho == 0:
        return 0.0
    hi = rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1.0  # the classic bound, loosened
    return _switch(lambda epsilon: zcdp_delta(rho, epsilon) > delta, 0.0, hi)[1]


def auc_bound(epsilon: float, delta: float = 0.0) -> float:
    """The highest ROC AUC of any attack telling the two neighbouring worlds of an
    (epsilon, delta)-DP mechanism apart.

    The true-positive rate at false-positive rate ``a`` is at most ``1 - f(a)``, with the
    trade-off function ``f(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a))``; the two
    lines cross at ``a* = (1 - delta) / (1 + e^eps)``, so the area is
    ``1 - [(1 - delta) a* - e^eps a*^2 / 2 + e^-eps (1 - delta - a*)^2 / 2]``.

    Parameters
    ----------
    epsilon : float
        >= 0; ``inf`` gives 1 (no bound).
    delta : float, default 0
        In [0, 1].

    Returns
    -------
    float
        In [0.5, 1]: 0.5 at ``epsilon = delta = 0``.
    """
    epsilon, delta = float(epsilon), float(delta)
    if math.isnan(epsilon) or epsilon < 0 or math.isnan(delta) or not 0 <= delta <= 1:
        raise ParameterError(f"epsilon must be >= 0 and delta in [0, 1], got {epsilon!r} and {delta!r}.")
    if math.isinf(epsilon) or delta == 1:
        return 1.0
    grow = math.exp(epsilon)
    cross = (1 - delta) / (1 + grow)
    missed = (1 - delta) * cross - grow * cross * cross / 2 + (1 - delta - cross) ** 2 / (2 * grow)
    return min(1.0, max(0.5, 1.0 - missed))
