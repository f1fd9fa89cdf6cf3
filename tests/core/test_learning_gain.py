"""An attack that is still learning: its gain over its half attacks against training noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgame.core import metrics


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("v", [0.005, 0.02, 0.08])
def test_an_attack_that_stopped_learning_is_rarely_called_learning(v: float) -> None:
    # The full attack and its halves share one expected logit AUC; the full attack's training noise
    # has variance v, each half's 2 v (half the shadow datasets), independently.
    rng = np.random.default_rng(7)
    trials, centre = 4000, math.log(0.8 / 0.2)
    full = _expit(centre + rng.normal(0, math.sqrt(v), trials))
    halves = _expit(centre + rng.normal(0, math.sqrt(2 * v), (2, trials)))
    flagged = [metrics.learning_gain(f, a, b, v)[1] for f, a, b in zip(full, *halves, strict=True)]
    assert np.mean(flagged) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)


def test_an_attack_still_learning_is_caught_and_its_high_end_raised() -> None:
    rng = np.random.default_rng(8)
    v, trials, centre = 0.02, 2000, math.log(0.8 / 0.2)
    gain = 4 * math.sqrt(2 * v)  # the halves are this much weaker on the logit scale
    full = _expit(centre + rng.normal(0, math.sqrt(v), trials))
    halves = _expit(centre - gain + rng.normal(0, math.sqrt(2 * v), (2, trials)))
    found = [metrics.learning_gain(f, a, b, v) for f, a, b in zip(full, *halves, strict=True)]
    assert np.mean([learning for _, learning in found]) >= 0.9
    assert np.median([g for g, _ in found]) == pytest.approx(gain, rel=0.15)


def test_the_learning_bound_and_its_edge_cases() -> None:
    assert metrics.learning_bound(0.78, 0.0) == 0.78
    assert metrics.learning_bound(0.78, -0.3) == 0.78
    assert metrics.learning_bound(math.nan, 0.4) != metrics.learning_bound(math.nan, 0.4)  # nan stays nan
    raised = metrics.learning_bound(0.78, 0.4)
    assert raised == pytest.approx(1 / (1 + math.exp(-(math.log(0.78 / 0.22) + 0.4))))
    assert 0.78 < raised < 1
    assert metrics.learning_bound(1.0, 2.0) == 1.0
    assert metrics.learning_gain(0.9, math.nan, 0.8, 0.01) == (pytest.approx(math.nan, nan_ok=True), False)
    # No training noise measured: the floor keeps a tiny gain from counting as learning.
    assert metrics.learning_gain(0.801, 0.8, 0.8, 0.0)[1] is False
    assert metrics.learning_gain(0.85, 0.8, 0.8, 0.0)[1] is True
