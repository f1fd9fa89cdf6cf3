"""The inference gain's interval and verdicts (privgame.core.gains): edge cases, and its error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgame.core.errors import ParameterError
from privgame.core.gains import best_gain_interval, gain_interval, gain_verdicts
from privgame.core.metrics import look_level
from privgame.core.seeding import Role, stream


def test_the_gain_is_the_difference_of_rates_and_its_interval_contains_it() -> None:
    gain, low, high = gain_interval(80, 100, 30, 100)
    assert gain == pytest.approx(0.5)
    assert low < 0.5 < high
    assert low >= -1 and high <= 1


def test_rates_of_zero_and_one_still_give_an_interval_of_positive_width() -> None:
    gain, low, high = gain_interval(100, 100, 0, 100)
    assert gain == 1.0
    assert 0.9 < low < 1.0 and high == 1.0
    gain, low, high = gain_interval(50, 50, 50, 50)
    assert gain == 0.0 and low < 0 < high


def test_no_run_on_a_side_gives_an_undefined_gain() -> None:
    assert all(math.isnan(v) for v in gain_interval(0, 0, 3, 10))


@pytest.mark.parametrize(
    ("counts", "message"),
    [((5, 4, 1, 4), "exceed"), ((-1, 4, 1, 4), "whole numbers"), ((1.5, 4, 1, 4), "whole numbers")],
)
def test_impossible_counts_are_refused(counts: tuple[float, ...], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        gain_interval(*counts)  # type: ignore[arg-type]


def test_a_higher_level_gives_a_wider_interval() -> None:
    _, low95, high95 = gain_interval(60, 100, 40, 100, level=0.95)
    _, low99, high99 = gain_interval(60, 100, 40, 100, level=0.99)
    assert low99 < low95 and high99 > high95


def test_each_attack_is_compared_with_itself_or_with_the_floor_where_that_is_higher() -> None:
    gain, low, high, best, out = best_gain_interval([90, 40, 70], 100, [20, 30, 70], 100, floor=2)
    assert gain == pytest.approx(0.9 - 0.7)  # attack 0 over the floor's 0.7, not its own 0.2
    assert (best, out) == (0, 2)
    assert low < gain < high
    # A usual value the floor names in both worlds leaves no gain however well another attack does
    # with the record in D.
    gain, _, high, _, _ = best_gain_interval([100, 100, 100], 100, [0, 60, 100], 100, floor=2)
    assert gain == 0.0 and high < 0.1
    # Another attack's chance success without the record is no floor: attack 0 still gains.
    gain, low, _, best, out = best_gain_interval([100, 0, 25], 100, [10, 100, 25], 100, floor=2)
    assert (gain, best, out) == (pytest.approx(0.75), 0, 2)
    assert low > 0.5
    # Without a floor, each attack against itself alone.
    assert best_gain_interval([100, 0, 25], 100, [10, 100, 25], 100)[0] == pytest.approx(0.9)


def test_the_best_gain_refuses_bad_counts() -> None:
    with pytest.raises(ParameterError, match="one length"):
        best_gain_interval([1, 2], 10, [1], 10)
    with pytest.raises(ParameterError, match="from 0 to the number of runs"):
        best_gain_interval([11], 10, [1], 10)
    with pytest.raises(ParameterError, match="floor must index"):
        best_gain_interval([1], 10, [1], 10, floor=3)
    assert math.isnan(best_gain_interval([0], 0, [0], 10)[0])


def test_verdicts_follow_the_interval_against_the_threshold() -> None:
    verdicts = gain_verdicts([0.2, -0.1, 0.0, np.nan], [0.5, 0.05, 0.3, np.nan], 0.1)
    assert list(verdicts) == ["at risk", "not at risk", "undecided", "undecided"]
    with pytest.raises(ParameterError, match="inference threshold"):
        gain_verdicts([0.0], [0.1], 1.5)


_SCENARIOS = {
    # name: (rates in, rates out) of three attacks, the third the floor; the largest gain
    # max_a (in(a) - max(out(a), out(floor))) is 0.1 = t
    "one strong attack": ([0.6, 0.3, 0.5], [0.5, 0.2, 0.5]),
    "near certainty": ([0.95, 0.9, 0.85], [0.85, 0.85, 0.85]),
    "rare successes": ([0.15, 0.1, 0.05], [0.05, 0.05, 0.05]),
    "all alike": ([0.7, 0.7, 0.7], [0.6, 0.6, 0.6]),
    "two attacks at t": ([0.6, 0.75, 0.5], [0.4, 0.65, 0.5]),
    "the floor binding": ([0.7, 0.4, 0.6], [0.3, 0.2, 0.6]),
}


def _true_gain(rates_in: np.ndarray, rates_out: np.ndarray) -> float:
    return float((rates_in - np.maximum(rates_out, rates_out[2])).max())


@pytest.mark.parametrize("runs", [20, 100])
@pytest.mark.parametrize("scenario", list(_SCENARIOS))
def test_false_at_risk_at_a_gain_equal_to_the_threshold_is_at_most_the_verdict_error(
    scenario: str, runs: int
) -> None:
    """At a true gain (the largest of the attacks', each over its floored rate out) of exactly t,
    "at risk" errs at most 2.5% of the time at a record's first look, the attacks failing
    independently of each other."""
    t = 0.1
    rates_in, rates_out = (np.array(r) for r in _SCENARIOS[scenario])
    assert _true_gain(rates_in, rates_out) == pytest.approx(t)
    rng = stream(2026, 0, Role.SIMILARITY, 46)
    trials = 4000
    hits_in = rng.binomial(runs, rates_in, size=(trials, 3))
    hits_out = rng.binomial(runs, rates_out, size=(trials, 3))
    level = look_level(1)
    false = sum(
        best_gain_interval(a, runs, b, runs, floor=2, level=level)[1] > t
        for a, b in zip(hits_in, hits_out, strict=True)
    )
    rate = false / trials
    # 2.5% plus three binomial standard errors of the simulation itself.
    assert rate <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / trials), rate


def test_a_clear_gain_is_found_at_the_default_number_of_runs() -> None:
    """The bound is conservative, not blind: a gain of 0.45 over t = 0.1 (0.9 with the record, 0.45
    without) is called at risk in nearly every audit of 100 runs a side."""
    rng = stream(2026, 2, Role.SIMILARITY, 46)
    hits_in = rng.binomial(100, [0.9, 0.5, 0.45], size=(1000, 3))
    hits_out = rng.binomial(100, [0.3, 0.45, 0.45], size=(1000, 3))
    found = [
        best_gain_interval(a, 100, b, 100, floor=2, level=look_level(1))[1] > 0.1
        for a, b in zip(hits_in, hits_out, strict=True)
    ]
    assert np.mean(found) >= 0.9


def test_the_interval_covers_a_known_gain_as_often_as_its_level() -> None:
    rng = stream(2026, 1, Role.SIMILARITY, 46)
    n, p_in, p_out = 100, 0.7, 0.45
    hits = rng.binomial(n, [p_in, p_out], size=(3000, 2))
    covered = [
        low <= p_in - p_out <= high for _, low, high in (gain_interval(int(a), n, int(b), n) for a, b in hits)
    ]
    assert np.mean(covered) >= 0.94
