"""Options as data (:mod:`privgame.core.options`): each rule, its words and its reading of text."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgame.core.errors import ParameterError
from privgame.core.options import (
    BINS,
    CATEGORICAL_SPLITS,
    DEGREE,
    DELTA,
    EPSILON,
    GENERATOR_OPTIONS,
    N_SHADOW,
    SEED,
    THRESHOLD,
    Option,
    option_problems,
)
from privgame.core.parameters import count_problem, seed_problem, threshold_problem


@pytest.mark.parametrize(
    ("option", "rule"),
    [
        (BINS, "a whole number >= 2"),
        (DEGREE, "a whole number >= 0"),
        (DELTA, "a number strictly between 0 and 1"),
        (EPSILON, "a positive number, or inf for no noise"),
        (CATEGORICAL_SPLITS, "'onehot' or 'ordinal'"),
        (
            Option(name="x", kind="float", default=1.0, low=0, high=2, open_high=True, help="h", label="x"),
            "a number >= 0 and < 2",
        ),
        (Option(name="x", kind="int", default=1, high=2, help="h", label="x"), "a whole number <= 2"),
        (Option(name="x", kind="float", default=1.0, help="h", label="x"), "a number"),
    ],
)
def test_each_rule_is_said_in_words(option: Option, rule: str) -> None:
    assert option.rule == rule


@pytest.mark.parametrize(
    ("option", "good", "bad"),
    [
        (BINS, [2, 10, np.int64(3)], [1, 2.0, 2.5, True, None, "10", math.nan, -3]),
        (DEGREE, [0, 1, 6], [-1, 1.5, True, "1"]),
        (DELTA, [1e-9, 0.5, np.float64(0.1)], [0, 0.0, 1, 1.0, math.inf, math.nan, "0.1", False]),
        (EPSILON, [0.1, 1, math.inf, np.float64(2)], [0, -1.0, math.nan, -math.inf, "1", None, True]),
        (CATEGORICAL_SPLITS, ["onehot", "ordinal"], ["one-hot", "", None, 1, ["onehot"]]),
    ],
)
def test_a_value_passes_exactly_when_it_fits_the_rule(option: Option, good: list, bad: list) -> None:
    for value in good:
        assert option.problem(value) is None, value
        assert option.check(value) == value
    for value in bad:
        problem = option.problem(value)
        assert problem == f"{option.name} must be {option.rule}; got {value!r}.", value
        with pytest.raises(ParameterError, match="must be"):
            option.check(value)


def test_a_setting_with_a_rule_of_its_own_keeps_that_rule_and_message() -> None:
    for value in (2, 7, 8.0, 1000, 10**9):
        assert N_SHADOW.problem(value) == count_problem("n_shadow", value, N_SHADOW.high)
    for value in (0.5, 1, 0.8, "0.9", math.nan):
        assert THRESHOLD.problem(value) == threshold_problem(value, numbers_only=True)
    for value in (-1, 0, 1.5, True):
        assert SEED.problem(value) == seed_problem(value)


def test_text_is_read_as_the_type_and_the_range_is_left_to_the_rule() -> None:
    assert BINS.read("1") == 1 and BINS.problem(BINS.read("1")) is not None
    assert DELTA.read("1e-6") == 1e-6
    assert EPSILON.read("inf") == math.inf and EPSILON.read("∞") == math.inf
    assert CATEGORICAL_SPLITS.read("ordinal") == "ordinal"
    for option, text in ((BINS, "ten"), (BINS, "2.5"), (DELTA, "nan"), (DELTA, "inf"), (EPSILON, "some")):
        with pytest.raises(ParameterError):
            option.read(text)


def test_a_declaration_whose_default_breaks_its_own_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="option x: its default x must be a whole number >= 2"):
        Option(name="x", kind="int", default=1, low=2, help="h", label="x")
    assert Option(name="my_thing", kind="int", default=1, help="h", label="x").flag == "--my-thing"


def test_every_problem_is_collected_and_values_without_an_option_are_left_alone() -> None:
    options = {o.name: o for o in GENERATOR_OPTIONS["mst"]}
    problems = option_problems(options, {"epsilon": 0, "delta": 2, "bins": 10, "other": "x"})
    assert problems == [EPSILON.problem(0), DELTA.problem(2)]


def test_a_flag_s_problem_names_the_flag_the_rule_and_the_default() -> None:
    from privgame.core.options import CONFIRM_TOP

    assert CONFIRM_TOP.flag_problem(3) is None
    said = CONFIRM_TOP.flag_problem(-1)
    assert said == "--confirm-top must be a whole number >= 0; got -1 (the default is 20)."
