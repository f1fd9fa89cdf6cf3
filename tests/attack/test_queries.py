"""Counting-query features: fast paths against brute force, layout, and errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privgame.attack import queries as queries_module
from privgame.attack.queries import QuerySet
from privgame.core.errors import ParameterError


def brute_count(table: np.ndarray, target: np.ndarray, is_cat: np.ndarray, cols: tuple) -> int:
    """Rows agreeing with the target on every column of ``cols``, one row at a time."""
    count = 0
    for row in table:
        agrees = [row[j] == target[j] if is_cat[j] else row[j] >= target[j] for j in cols]
        count += int(all(agrees))
    return count


@st.composite
def mixed_tables(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small table with categorical codes and continuous values full of ties, plus a target."""
    d = draw(st.integers(1, 6))
    n = draw(st.integers(0, 25))
    is_cat = np.array(draw(st.lists(st.booleans(), min_size=d, max_size=d)))
    columns = []
    for j in range(d):
        if is_cat[j]:
            values = st.integers(0, draw(st.integers(0, 3))).map(float)
        else:
            # A few distinct floats (negative, fractional) so that ties and >= edges are common.
            pool = draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=4))
            values = st.sampled_from(pool)
        columns.append(draw(st.lists(values, min_size=n, max_size=n)))
    table = np.array(columns, dtype=np.float64).T.reshape(n, d)
    if n and draw(st.booleans()):
        target = table[draw(st.integers(0, n - 1))].copy()
    else:
        target = np.array(
            [float(draw(st.integers(0, 3))) if is_cat[j] else draw(st.floats(-6, 6)) for j in range(d)]
        )
    return table, target, is_cat


@settings(max_examples=150, deadline=None)
@given(mixed_tables())
def test_all_subset_counts_equal_brute_force(case: tuple) -> None:
    table, target, is_cat = case
    queries = QuerySet.for_schema(is_cat)
    assert queries.exact
    features = queries.features(table, target)
    d = len(is_cat)
    assert features.shape == (2**d - 1,)
    assert features.dtype == np.float32
    for mask in range(1, 2**d):
        cols = tuple(j for j in range(d) if mask >> j & 1)
        assert features[mask - 1] == brute_count(table, target, is_cat, cols), cols


@settings(max_examples=60, deadline=None)
@given(mixed_tables(), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_sampled_subset_counts_equal_brute_force(case: tuple, n_random: int, seed: int) -> None:
    table, target, is_cat = case
    queries = QuerySet.for_schema(
        is_cat, max_exact_columns=0, n_random=n_random, rng=np.random.default_rng(seed)
    )
    assert not queries.exact
    features = queries.features(table, target)
    assert features.shape == (queries.n_features,)
    for row, value in zip(queries.subsets, features, strict=True):
        cols = tuple(int(j) for j in row if j >= 0)
        assert value == brute_count(table, target, is_cat, cols)


def test_feature_order_is_the_subset_bitmask() -> None:
    is_cat = np.array([True, False])
    table = np.array([[1.0, 5.0], [1.0, 1.0], [0.0, 9.0]])
    target = np.array([1.0, 2.0])
    features = QuerySet.for_schema(is_cat).features(table, target)
    # mask 1 = {col 0}: two rows equal 1; mask 2 = {col 1}: two rows >= 2; mask 3: only row 0.
    np.testing.assert_array_equal(features, [2, 2, 1])


def test_sampled_subsets_are_distinct_sorted_orders_one_to_three_and_seeded() -> None:
    is_cat = np.zeros(30, dtype=bool)
    a = QuerySet.for_schema(is_cat, n_random=500, max_exact_columns=20, rng=np.random.default_rng(7))
    b = QuerySet.for_schema(is_cat, n_random=500, max_exact_columns=20, rng=np.random.default_rng(7))
    c = QuerySet.for_schema(is_cat, n_random=500, max_exact_columns=20, rng=np.random.default_rng(8))
    np.testing.assert_array_equal(a.subsets, b.subsets)
    assert not np.array_equal(a.subsets, c.subsets)
    assert a.n_features == 500
    rows = [tuple(int(j) for j in r if j >= 0) for r in a.subsets]
    assert len(set(rows)) == 500
    assert all(1 <= len(r) <= 3 and list(r) == sorted(set(r)) for r in rows)
    assert rows == sorted(rows, key=lambda r: (len(r), r))
    described = a.describe()
    # 500 split as 167/167/166 over orders 1-3; order 1 has only 30 subsets, so its 137 spare
    # go to orders 2 and 3 (69 and 68).
    assert described["orders"] == {"1": 30, "2": 236, "3": 234}
    assert described["subsets_sha256"] == b.describe()["subsets_sha256"]
    assert described["exact"] is False and described["n_features"] == 500


def test_sampled_path_takes_every_subset_when_there_are_few() -> None:
    d = 8
    queries = QuerySet.for_schema(np.ones(d, dtype=bool), max_exact_columns=4, rng=np.random.default_rng(0))
    expected = sum(math.comb(d, k) for k in (1, 2, 3))
    assert queries.n_features == expected
    rows = {tuple(int(j) for j in r if j >= 0) for r in queries.subsets}
    assert rows == {c for k in (1, 2, 3) for c in itertools.combinations(range(d), k)}


def test_exact_describe_and_adult_width() -> None:
    queries = QuerySet.for_schema(np.array([True, False] * 7 + [True]))
    assert queries.exact and queries.subsets is None
    assert queries.n_features == 32_767
    assert queries.describe()["kind"] == "all subsets"


def test_features_batch_stacks_features() -> None:
    rng = np.random.default_rng(3)
    is_cat = np.array([True, True, False])
    datasets = [rng.integers(0, 3, size=(20, 3)).astype(float) for _ in range(4)]
    target = datasets[0][0]
    queries = QuerySet.for_schema(is_cat)
    batch = queries.features_batch(datasets, target)
    assert batch.shape == (4, 7) and batch.dtype == np.float32
    for row, data in zip(batch, datasets, strict=True):
        np.testing.assert_array_equal(row, queries.features(data, target))


def test_errors_name_the_problem() -> None:
    with pytest.raises(ParameterError, match="at least one used column"):
        QuerySet.for_schema(np.array([], dtype=bool))
    with pytest.raises(ParameterError, match="pass rng"):
        QuerySet.for_schema(np.ones(5, dtype=bool), max_exact_columns=3)
    with pytest.raises(ParameterError, match="n_random must be >= 1"):
        QuerySet.for_schema(np.ones(2, dtype=bool), n_random=0)
    queries = QuerySet.for_schema(np.ones(3, dtype=bool))
    with pytest.raises(ParameterError, match=r"target record has shape \(2,\)"):
        queries.features(np.zeros((4, 3)), np.zeros(2))
    with pytest.raises(ParameterError, match=r"synthetic dataset has shape \(4, 2\)"):
        queries.features(np.zeros((4, 2)), np.zeros(3))


@pytest.mark.parametrize("n", [0, 1, 64, 130, 1000])
def test_sampled_path_agrees_with_exact_path_across_word_boundaries(n: int) -> None:
    rng = np.random.default_rng(n)
    is_cat = np.array([True, False, True, False, True, False])
    table = rng.integers(0, 3, size=(n, 6)).astype(float)
    target = np.array([1.0, 1.0, 0.0, 2.0, 1.0, 0.5])
    exact = QuerySet.for_schema(is_cat).features(table, target)
    sampled = QuerySet.for_schema(is_cat, max_exact_columns=5, rng=rng)
    masks = [sum(1 << int(j) for j in row if j >= 0) for row in sampled.subsets]
    np.testing.assert_array_equal(sampled.features(table, target), exact[np.array(masks) - 1])


def test_popcount_without_numpy_bitwise_count(monkeypatch: pytest.MonkeyPatch) -> None:
    words = np.array([[0, 1, 2**64 - 1], [2**63, 0b1011, 12345678901234]], dtype=np.uint64)
    expected = [[0, 1, 64], [1, 3, bin(12345678901234).count("1")]]
    np.testing.assert_array_equal(queries_module._popcount(words), expected)
    monkeypatch.delattr(np, "bitwise_count")
    np.testing.assert_array_equal(queries_module._popcount(words), expected)


def reference_superset_sums(counts: np.ndarray) -> np.ndarray:
    """Each mask's sum over the masks that contain it, one mask at a time."""
    size = len(counts)
    return np.array([sum(counts[s] for s in range(size) if s & mask == mask) for mask in range(size)])


@pytest.mark.parametrize("d", range(0, 10))
def test_superset_sums_against_the_obvious_sum(d: int) -> None:
    counts = np.random.default_rng(d).integers(0, 50, size=1 << d).astype(np.int64)
    expected = reference_superset_sums(counts)
    queries_module._superset_sums(counts)  # in place
    np.testing.assert_array_equal(counts, expected)


@pytest.mark.parametrize(("n", "d"), [(0, 15), (1, 12), (500, 15), (3000, 14)])
def test_wide_exact_features_equal_a_numpy_pattern_count(n: int, d: int) -> None:
    # Adult's width and more rows than the brute-force cases: the compiled histogram and
    # superset sums against numpy's bincount, then a subset-by-subset mask sum.
    rng = np.random.default_rng(n + d)
    is_cat = rng.random(d) < 0.5
    table = rng.integers(0, 3, size=(n, d)).astype(float) + np.where(is_cat, 0.0, rng.random((n, d)))
    target = table[0] if n else rng.integers(0, 3, size=d).astype(float)
    matches = np.where(is_cat, table == target, table >= target)
    patterns = matches.astype(np.int64) @ (np.int64(1) << np.arange(d, dtype=np.int64))
    histogram = np.bincount(patterns, minlength=1 << d)
    masks = np.arange(1, 1 << d)
    chosen = rng.choice(masks, size=200, replace=False)
    features = QuerySet.for_schema(is_cat).features(table, target)
    assert features.shape == ((1 << d) - 1,) and features.dtype == np.float32
    assert features.sum() >= 0 and (n == 0 or features[-1] >= 1)  # the target's own row
    all_patterns = np.arange(1 << d)
    for mask in chosen:
        assert features[mask - 1] == histogram[(all_patterns & mask) == mask].sum(), mask
