"""The reliability of noisy per-record estimates: by simulation, it is the squared correlation of
the estimates with the truths, so its square root caps any score's agreement with them."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.core.seeding import stream

Z = 1.959963984540054


@pytest.mark.parametrize(("spread", "noise"), [(0.06, 0.03), (0.04, 0.045), (0.1, 0.01)])
def test_reliability_is_the_squared_correlation_with_the_truth(spread: float, noise: float) -> None:
    rng = stream(0, 0, 0, int(1000 * spread + 10 * noise))
    estimated, correlations = [], []
    for _ in range(400):
        truth = 0.85 + spread * rng.standard_normal(40)
        se = noise * rng.uniform(0.7, 1.3, 40)  # each record its own noise, as each its interval
        estimate = truth + se * rng.standard_normal(40)
        estimated.append(metrics.reliability(estimate, estimate - Z * se, estimate + Z * se))
        correlations.append(np.corrcoef(estimate, truth)[0, 1])
    mean_square = (1.3**3 - 0.7**3) / (3 * 0.6)  # of U(0.7, 1.3)
    expected = spread**2 / (spread**2 + mean_square * noise**2)
    # The mean estimate sits on the squared correlation of the estimates with the truths (within
    # simulation error); a noise read as the interval's whole width over z, not over 2 z, or an
    # inverse variance left biased, would put it below.
    assert np.mean(estimated) == pytest.approx(expected, abs=0.025)
    # The truth itself, the best score there is, correlates with the estimates by about its root.
    assert np.mean(correlations) <= np.mean(np.sqrt(estimated)) + 0.04


def test_reliability_edge_cases() -> None:
    five = [0.6, 0.7, 0.8, 0.9, 0.95]
    assert metrics.reliability(five[:4], five[:4], five[:4]) is None  # fewer than five records
    assert metrics.reliability([0.8] * 5, [0.7] * 5, [0.9] * 5) is None  # no spread to share
    # Noise larger than the spread: nothing of it is the truth's.
    assert metrics.reliability([0.80, 0.81, 0.82, 0.83, 0.84], [0.5] * 5, [1.0] * 5) == 0.0
    # Exact estimates: all of it.
    assert metrics.reliability(five, five, five) == 1.0
    # A record without an interval is left out.
    assert metrics.reliability([*five, 0.5], [*five, np.nan], [*five, 0.6]) == 1.0
    with pytest.raises(ParameterError, match="one length"):
        metrics.reliability(five, [0.5], [1.0])
