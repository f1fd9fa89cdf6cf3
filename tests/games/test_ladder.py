"""The doubling ladder an extension climbs, and why: a number of runs chosen after seeing the
verdicts keeps the verdicts' error."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.games.ladder import doublings, ladder_n_eval, rungs


def test_ladder_n_eval_rounds_to_the_nearest_rung() -> None:
    assert ladder_n_eval(200, 1000) == 800  # 5x: log2 2.32 -> two doublings
    assert ladder_n_eval(200, 1300) == 1600
    assert ladder_n_eval(200, 202) == 400  # at least one doubling
    assert ladder_n_eval(200, 100) == 400
    assert ladder_n_eval(8, 12) == 16
    assert ladder_n_eval(200, 10**9) == 200 * 2**8  # 51,200 <= 100,000
    assert ladder_n_eval(80_000, 200_000) == 80_000  # no doubling fits under the limit
    assert rungs(200, most=2000) == [400, 800, 1600]
    with pytest.raises(ParameterError, match="at least 2"):
        ladder_n_eval(0, 10)


def test_doublings_count_a_step_of_two_rungs_as_two_looks() -> None:
    assert [doublings(200, n) for n in (400, 800, 1600, 1000, 300)] == [1, 2, 3, 3, 1]
    assert doublings(800, 800) == 1


def _walk(first: np.ndarray, more: np.ndarray, choose, t: float, ladder: bool) -> bool:  # type: ignore[no-untyped-def]
    """One record: a look at 200 runs, then, if undecided, one extension to ``choose(A_1)`` runs
    (a choice made from the first look's AUC), on the ladder or not."""
    labels = np.r_[np.ones(100), np.zeros(100)]
    scores = np.r_[first[:100], more[:100]]
    low, high = metrics.auc_ci(scores, labels, level=metrics.look_level(1))
    if low > t:
        return True
    if high < t:
        return False
    wanted = choose(metrics.auc(scores, labels))
    n = ladder_n_eval(200, wanted) if ladder else wanted
    look = 1 + (doublings(200, n) if ladder else 1)
    h = n // 2
    labels = np.r_[np.ones(h), np.zeros(h)]
    low, _ = metrics.auc_ci(np.r_[first[:h], more[:h]], labels, level=metrics.look_level(look))
    return bool(low > t)


@pytest.mark.parametrize(
    "choose",
    [
        lambda a: 300 if a > 0.8 else 4000,  # a few more runs when the first look was lucky
        lambda a: 1000,
        lambda a: 600 if a > 0.82 else 2400,
    ],
)
def test_an_extension_chosen_after_seeing_the_verdicts_keeps_the_error(choose) -> None:  # type: ignore[no-untyped-def]
    # Binormal scores at a true AUC of exactly t: every "at risk" is false. The choice of N is
    # made from the first look's AUC; on the ladder the bound holds by construction (one N per
    # look index), which the simulation checks.
    t, reps = 0.8, 2000
    d = math.sqrt(2) * NormalDist().inv_cdf(t)
    false = 0
    for child in np.random.SeedSequence(44).spawn(reps):
        rng = np.random.default_rng(child)
        false += _walk(rng.normal(d, 1, 2000), rng.normal(0, 1, 2000), choose, t, ladder=True)
    bound = 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)
    assert false / reps <= bound
