"""Trees grown on the distinct rows, each counted as often as it occurs, are the trees of the
table itself: the same nodes, thresholds, leaf ranges and leaf values, array for array.

A bootstrap of a smaller table (the release set-up's shadow datasets) repeats most of its rows,
so the CART grows on its distinct rows with weights; these tests hold that shortcut to the
unweighted growth on random tables and on an Adult bootstrap.
"""

from __future__ import annotations

import numpy as np
import pytest

from privgame.data import BUNDLED_ADULT, encode, load_dataset
from privgame.generators._cart import _DISTINCT_SHARE, Forest, _dedup, grow_forest, sample_forest

FIELDS = ("feature", "threshold", "upper", "left", "right", "lo", "hi", "roots", "leaf_values")


def assert_same_forest(a: Forest, b: Forest) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        np.testing.assert_array_equal(x, y, err_msg=name)


def repeated_table(
    rng: np.random.Generator, *, whole: bool, many: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """A table drawn with replacement from a few distinct rows; half its columns categorical.

    ``many`` adds a first column with more distinct values than the histograms take and a second,
    categorical, with hundreds of codes, so the sorted-list searches (threshold and one-vs-rest)
    run too.
    """
    d = int(rng.integers(3, 6))
    categorical = rng.random(d) < 0.5
    n_base = int(rng.integers(600, 900)) if many else int(rng.integers(1, 40))
    base = rng.integers(0, 4, size=(n_base, d)).astype(float)
    scale = rng.integers(1, 1000, size=d) if whole else rng.random(d) + 0.1
    base[:, ~categorical] *= scale[~categorical]
    if many:
        base[:, 0] = rng.permutation(n_base) if whole else rng.random(n_base)
        base[:, 1] = rng.integers(0, 300, n_base)
        categorical[:2] = False, True
    size = int(rng.integers(1_000, 2_000)) if many else int(rng.integers(5, 300))
    return base[rng.integers(0, len(base), size)], categorical


@pytest.mark.parametrize(
    ("whole", "many", "tables"),
    [(True, False, 150), (False, False, 60), (True, True, 12)],
    ids=["whole-numbers", "fractions", "many-valued"],
)
def test_distinct_growth_is_the_growth_of_the_table(whole: bool, many: bool, tables: int) -> None:
    rng = np.random.default_rng(7 if whole else 8)
    for _ in range(tables):
        X, categorical = repeated_table(rng, whole=whole, many=many)
        min_leaf = int(rng.integers(1, 7))
        onehot = categorical & (rng.random(len(categorical)) < 0.5)
        plain = grow_forest(X, categorical, min_leaf, onehot=onehot, distinct=False)
        assert_same_forest(grow_forest(X, categorical, min_leaf, onehot=onehot, distinct=True), plain)
        assert_same_forest(grow_forest(X, categorical, min_leaf, onehot=onehot), plain)


def test_an_adult_bootstrap_grows_the_same_forest_and_draws_the_same_rows() -> None:
    dataset = load_dataset(BUNDLED_ADULT)
    X = encode(dataset.table, dataset.schema)
    categorical = dataset.schema.is_categorical
    rng = np.random.default_rng(3)
    pool = X[rng.choice(len(X), 1_500, replace=False)]
    boot = pool[rng.integers(0, len(pool), 5_000)]
    assert len(_dedup(boot)[0]) <= _DISTINCT_SHARE * len(boot)  # the default takes the shortcut
    for min_leaf, onehot in ((5, categorical), (1, None), (20, categorical)):
        plain = grow_forest(boot, categorical, min_leaf, onehot=onehot, distinct=False)
        fast = grow_forest(boot, categorical, min_leaf, onehot=onehot)
        assert_same_forest(fast, plain)
        u = rng.random((2_000, X.shape[1]))
        np.testing.assert_array_equal(sample_forest(fast, u), sample_forest(plain, u))


def test_dedup_finds_each_distinct_row_once() -> None:
    rng = np.random.default_rng(11)
    for _ in range(50):
        base = rng.integers(0, 3, size=(int(rng.integers(1, 20)), int(rng.integers(1, 5)))).astype(float)
        X = np.ascontiguousarray(base[rng.integers(0, len(base), int(rng.integers(1, 200)))])
        first, inverse, counts = _dedup(X)
        reference, ref_counts = np.unique(X, axis=0, return_counts=True)
        assert len(first) == len(reference)
        np.testing.assert_array_equal(X[first][inverse], X)
        np.testing.assert_array_equal(np.sort(first), first)  # in order of first appearance
        np.testing.assert_array_equal(np.bincount(inverse, minlength=len(first)), counts)
        assert sorted(counts) == sorted(ref_counts)


def test_a_table_of_distinct_rows_grows_without_the_shortcut() -> None:
    rng = np.random.default_rng(5)
    X = rng.integers(0, 1_000, size=(400, 3)).astype(float)
    categorical = np.zeros(3, dtype=bool)
    assert len(_dedup(X)[0]) > _DISTINCT_SHARE * len(X)
    assert_same_forest(grow_forest(X, categorical, 5), grow_forest(X, categorical, 5, distinct=False))
