"""Splits into D_aux, D_eval and D: sizes, constraints and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privgame.core.errors import ParameterError, SizeError
from privgame.data import MIN_ROWS, Sizes, check_sizes, default_sizes, split_indices


def test_adult_defaults_are_the_papers_sizes() -> None:
    assert default_sizes(45_222) == Sizes(aux=30_000, eval=15_222, target=1_000)


@pytest.mark.parametrize(
    ("n_rows", "expected"),
    [
        (10, Sizes(aux=6, eval=4, target=2)),
        (300, Sizes(aux=200, eval=100, target=25)),
        (3_000, Sizes(aux=2_000, eval=1_000, target=250)),
        (15_000, Sizes(aux=10_000, eval=5_000, target=1_000)),
        (100_000, Sizes(aux=66_000, eval=34_000, target=1_000)),
    ],
)
def test_default_sizes_follow_the_documented_rule(n_rows: int, expected: Sizes) -> None:
    assert default_sizes(n_rows) == expected


def test_defaults_work_for_every_table_from_the_minimum() -> None:
    assert MIN_ROWS == 10
    for n_rows in range(MIN_ROWS, 5_000):
        sizes = default_sizes(n_rows)
        check_sizes(n_rows, sizes)
        assert sizes.aux + sizes.eval == n_rows
        assert sizes.eval - sizes.target >= sizes.target  # room for reference records


def test_a_table_below_the_minimum_says_how_many_rows_are_needed() -> None:
    with pytest.raises(SizeError, match="The table has 9 usable rows; an audit needs at least 10"):
        default_sizes(9)


def test_check_sizes_lists_every_violated_constraint_and_the_rows_needed() -> None:
    with pytest.raises(SizeError) as error:
        check_sizes(100, Sizes(aux=1, eval=1, target=1))
    assert "they need at least 5 rows" in error.value.summary
    assert [p.split(":")[0] for p in error.value.problems] == [
        "the target dataset D has 1 record(s); it needs at least 2.",
        "the evaluation pool (1 rows) is not larger than the target dataset D (1 rows)",
    ]
    with pytest.raises(SizeError) as error:
        check_sizes(1_000, Sizes(aux=900, eval=200, target=300))
    problems = error.value.problems
    assert len(problems) == 2
    assert problems[0].startswith(
        "the evaluation pool (200 rows) is not larger than the target dataset D (300 rows)"
    )
    assert "give the pool at least 301 rows" in problems[0]
    assert problems[1].startswith("the attacker's data and the evaluation pool (1,100 rows together)")
    assert "more than the table's 1,000 rows" in problems[1]
    assert "they need at least 1,201 rows" in error.value.summary


def test_aux_smaller_than_target() -> None:
    with pytest.raises(
        SizeError, match=r"the attacker's data \(5 rows\) is smaller than the target dataset D \(10 rows\)"
    ) as error:
        check_sizes(1_000, Sizes(aux=5, eval=100, target=10))
    assert len(error.value.problems) == 1


def test_sizes_round_trip_and_reject_bad_values() -> None:
    sizes = Sizes(aux=30_000, eval=15_222, target=1_000)
    assert sizes.to_dict() == {"aux": 30_000, "eval": 15_222, "target": 1_000}
    assert Sizes.from_dict(sizes.to_dict()) == sizes
    assert Sizes(aux=np.int64(3), eval=4, target=2).aux.__class__ is int
    with pytest.raises(ParameterError, match="size 'target' is missing"):
        Sizes.from_dict({"aux": 1, "eval": 2})
    with pytest.raises(ParameterError, match="'extra' is not a size"):
        Sizes.from_dict({"aux": 1, "eval": 2, "target": 2, "extra": 3})
    with pytest.raises(ParameterError, match=r"size 'eval' must be a whole number, got 2\.5"):
        Sizes(aux=1, eval=2.5, target=2)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="size 'aux' must be a whole number"):
        Sizes(aux=True, eval=2, target=2)


def test_split_invariants_on_adult_sizes() -> None:
    sizes = default_sizes(45_222)
    split = split_indices(45_222, sizes, seed=7)
    assert (len(split.aux), len(split.eval), len(split.target)) == (30_000, 15_222, 1_000)
    assert len(split.reference) == 14_222
    for part in (split.aux, split.eval, split.target, split.reference):
        assert part.dtype == np.int64
        assert np.all(np.diff(part) > 0)  # sorted, no repeats
        assert not part.flags.writeable
    assert np.intersect1d(split.aux, split.eval).size == 0
    assert np.isin(split.target, split.eval).all()
    assert np.array_equal(np.union1d(split.target, split.reference), split.eval)
    assert np.intersect1d(split.target, split.reference).size == 0
    assert split.aux.min() >= 0 and split.eval.max() < 45_222


def test_split_is_deterministic_by_seed_and_seeds_differ() -> None:
    sizes = Sizes(aux=200, eval=100, target=25)
    first = split_indices(300, sizes, seed=1)
    assert first == split_indices(300, sizes, seed=1)
    other = split_indices(300, sizes, seed=2)
    assert first != other
    assert not np.array_equal(first.target, other.target)


def test_split_checks_sizes_and_seed() -> None:
    with pytest.raises(SizeError, match="do not fit a table of 100 rows"):
        split_indices(100, Sizes(aux=80, eval=40, target=10), seed=0)
    with pytest.raises(ParameterError, match="non-negative whole number"):
        split_indices(300, default_sizes(300), seed=-1)


@settings(max_examples=40, deadline=None)
@given(
    n_rows=st.integers(min_value=MIN_ROWS, max_value=400),
    seed=st.integers(min_value=0, max_value=2**32),
    data=st.data(),
)
def test_any_valid_sizes_give_a_valid_split(n_rows: int, seed: int, data: st.DataObject) -> None:
    target = data.draw(st.integers(min_value=2, max_value=(n_rows - 1) // 2))
    aux = data.draw(st.integers(min_value=target, max_value=n_rows - target - 1))
    eval_ = data.draw(st.integers(min_value=target + 1, max_value=n_rows - aux))
    split = split_indices(n_rows, Sizes(aux=aux, eval=eval_, target=target), seed)
    assert (len(split.aux), len(split.eval), len(split.target)) == (aux, eval_, target)
    assert len(np.unique(np.concatenate([split.aux, split.eval]))) == aux + eval_
    assert np.isin(split.target, split.eval).all()
    assert len(split.reference) == eval_ - target >= 1
