"""The inference gain's interval and verdicts (privgame.core.gains): edge cases, and its error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgame.core.errors import ParameterError
from privgame.core.gains import gain_interval, gain_level, gain_verdicts
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


def test_the_level_is_split_over_the_attacks() -> None:
    assert gain_level(0.97, 2) == pytest.approx(0.985)
    with pytest.raises(ParameterError, match="attacks"):
        gain_level(0.95, 0)


def test_verdicts_follow_the_interval_against_the_threshold() -> None:
    verdicts = gain_verdicts([0.2, -0.1, 0.0, np.nan], [0.5, 0.05, 0.3, np.nan], 0.1)
    assert list(verdicts) == ["at risk", "not at risk", "undecided", "undecided"]
    with pytest.raises(ParameterError, match="inference threshold"):
        gain_verdicts([0.0], [0.1], 1.5)


@pytest.mark.parametrize(("p_in", "n"), [(0.6, 100), (0.95, 100), (0.15, 100), (0.5, 20), (0.9, 40)])
def test_false_at_risk_at_a_gain_equal_to_the_threshold_is_at_most_the_verdict_error(
    p_in: float, n: int
) -> None:
    """At a true gain of exactly t, "at risk" errs at most 2.5% of the time, for the largest of two
    attacks each tested at the split level (here both attacks independent, the worst case of the
    union bound), at a record's first look."""
    t = 0.1
    p_out = p_in - t
    level = gain_level(look_level(1), 2)
    rng = stream(2026, 0, Role.SIMILARITY, 46)
    trials = 4000
    hits = rng.binomial(n, [p_in, p_out, p_in, p_out], size=(trials, 4))
    false = 0
    for a_in, a_out, b_in, b_out in hits:
        low_a = gain_interval(int(a_in), n, int(a_out), n, level=level)[1]
        low_b = gain_interval(int(b_in), n, int(b_out), n, level=level)[1]
        false += max(low_a, low_b) > t
    rate = false / trials
    # 2.5% plus three binomial standard errors of the simulation itself.
    assert rate <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / trials), rate


def test_the_interval_covers_a_known_gain_as_often_as_its_level() -> None:
    rng = stream(2026, 1, Role.SIMILARITY, 46)
    n, p_in, p_out = 100, 0.7, 0.45
    hits = rng.binomial(n, [p_in, p_out], size=(3000, 2))
    covered = [
        low <= p_in - p_out <= high for _, low, high in (gain_interval(int(a), n, int(b), n) for a, b in hits)
    ]
    assert np.mean(covered) >= 0.94
