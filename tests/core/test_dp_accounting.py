"""zCDP accounting and the AUC bound of a differential-privacy guarantee, against slow, obvious
references and a simulation of the mechanism that meets the bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgame.core import metrics, privacy
from privgame.core.errors import ParameterError
from privgame.core.seeding import stream


def _delta_on_a_grid(rho: float, epsilon: float) -> float:
    """Canonne, Kamath and Steinke's delta, minimised over a fine grid of alpha (slow, obvious)."""
    alpha = 1 + np.exp(np.linspace(math.log(1e-6), math.log(1e6), 400_001))
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * np.log1p(-1 / alpha) - np.log(alpha - 1)
    return float(min(1.0, np.exp(log_delta.min())))


@pytest.mark.parametrize(("rho", "epsilon"), [(0.01, 1.0), (0.015, 1.0), (0.1, 2.0), (1.0, 3.0), (0.5, 0.1)])
def test_zcdp_delta_is_the_grid_minimum(rho: float, epsilon: float) -> None:
    assert privacy.zcdp_delta(rho, epsilon) == pytest.approx(_delta_on_a_grid(rho, epsilon), rel=1e-6)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-9), (1.0, 1e-9), (1.0, 1e-5), (10.0, 1e-6)])
def test_zcdp_rho_and_epsilon_invert_zcdp_delta(epsilon: float, delta: float) -> None:
    rho = privacy.zcdp_rho(epsilon, delta)
    assert privacy.zcdp_delta(rho, epsilon) <= delta
    assert privacy.zcdp_delta(rho * 1.001, epsilon) > delta  # the largest such rho
    assert privacy.zcdp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-6)
    # Tighter than the classic conversion epsilon = rho + 2 sqrt(rho log(1 / delta)).
    classic = (math.sqrt(math.log(1 / delta) + epsilon) - math.sqrt(math.log(1 / delta))) ** 2
    assert rho > classic


def test_auc_bound_without_delta_is_the_logistic_of_epsilon() -> None:
    for epsilon in (0.0, 0.1, 1.0, 2.0, 5.0):
        assert privacy.auc_bound(epsilon) == pytest.approx(math.exp(epsilon) / (1 + math.exp(epsilon)))
    assert privacy.auc_bound(math.inf) == 1.0


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 0.0), (1.0, 1e-3), (2.0, 0.05), (0.0, 0.2)])
def test_auc_bound_is_the_area_under_the_trade_off_curve(epsilon: float, delta: float) -> None:
    fpr = np.linspace(0.0, 1.0, 2_000_001)
    tpr = np.minimum.reduce(
        [np.ones_like(fpr), math.exp(epsilon) * fpr + delta, 1 - math.exp(-epsilon) * (1 - delta - fpr)]
    )
    area = float(np.sum((tpr[1:] + tpr[:-1]) / 2 * np.diff(fpr)))
    assert privacy.auc_bound(epsilon, delta) == pytest.approx(area, abs=1e-9)


def test_randomised_response_reaches_the_bound_and_no_further() -> None:
    # One bit of membership told truthfully with probability e^eps / (1 + e^eps): eps-DP, and the
    # best attack (read the bit) has exactly the bound's AUC; 200,000 games each way.
    epsilon = 1.0
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    rng = stream(11, 0)
    n = 200_000
    inside = (rng.random(n) < keep).astype(float)
    outside = (rng.random(n) >= keep).astype(float)
    scores = np.concatenate([inside, outside])
    labels = np.concatenate([np.ones(n), np.zeros(n)])
    auc = metrics.auc(scores, labels)
    assert abs(auc - privacy.auc_bound(epsilon)) < 4 * math.sqrt(keep * (1 - keep) / n)


def test_bad_privacy_parameters_are_named() -> None:
    with pytest.raises(ParameterError, match="delta must lie in"):
        privacy.zcdp_rho(1.0, 0.0)
    with pytest.raises(ParameterError, match="epsilon must lie in"):
        privacy.zcdp_rho(-1.0, 1e-9)
    with pytest.raises(ParameterError, match="delta in"):
        privacy.auc_bound(1.0, 1.5)
