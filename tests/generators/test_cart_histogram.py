"""The trees' histogram split search (large nodes, predictors with few values) is exact.

Every node of a tree grown on enough rows to take the histogram path must hold exactly the split
that brute force finds on its rows, and every leaf its rows in column 0's stable order: the same
tree the sorted-list search grows.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privgame.generators._cart import _MAX_BINS, grow_forest, grow_tree


def brute_force_split(
    P: np.ndarray, y: np.ndarray, categorical: bool, min_leaf: int, onehot: np.ndarray | None = None
) -> tuple[int, float] | None:
    """The first (predictor, then threshold) of the best proxy, trying every threshold.

    Predictors marked in ``onehot`` try each code but 0 against the others (threshold
    ``code - 0.5``) instead.
    """
    n, k = P.shape
    if n < 2 * min_leaf or ((len(np.unique(y)) == 1) if categorical else (y.min() == y.max())):
        return None
    best, best_p = None, -np.inf
    for f in range(k):
        values = np.unique(P[:, f])
        one_vs_rest = onehot is not None and onehot[f]
        candidates = [(c - 0.5, c) for c in values if c != 0] if one_vs_rest else itertools.pairwise(values)
        for a, b in candidates:
            left = P[:, f] != b if one_vs_rest else P[:, f] <= a
            n_l = int(left.sum())
            if n_l < min_leaf or n - n_l < min_leaf:
                continue
            if categorical:
                sq_l = int((np.bincount(y[left].astype(int)) ** 2).sum())
                sq_r = int((np.bincount(y[~left].astype(int)) ** 2).sum())
                p = sq_l / n_l + sq_r / (n - n_l)
            else:
                s_l, s_r = float(y[left].sum()), float(y[~left].sum())
                p = s_l * s_l / n_l + s_r * s_r / (n - n_l)
            if p > best_p:
                t = a if one_vs_rest else a / 2.0 + b / 2.0
                best, best_p = (f, t if t < b else a), p
    return best


def predictors(rng: np.random.Generator, n: int) -> np.ndarray:
    """Few-valued predictors (histograms), a many-valued one (sorted lists) and a constant."""
    many = rng.normal(size=n).round(4)
    assert len(np.unique(many)) > _MAX_BINS
    return np.column_stack(
        [rng.integers(0, 6, n), many, rng.integers(0, 40, n), np.full(n, 3.0), rng.integers(0, 2, n)]
    ).astype(float)


def check_every_node(
    P: np.ndarray, y: np.ndarray, categorical: bool, min_leaf: int, onehot: np.ndarray | None = None
) -> int:
    tree = grow_tree(P, y, categorical, min_leaf, onehot=onehot)
    yc = y if categorical else y - np.round(y.mean())
    stack = [(int(tree.roots[0]), np.arange(len(P)))]
    internal = 0
    while stack:
        node, idx = stack.pop()
        expected = brute_force_split(P[idx], yc[idx], categorical, min_leaf, onehot)
        if tree.left[node] < 0:
            assert expected is None
            column0_order = idx[np.argsort(P[idx, 0], kind="stable")]
            leaf = tree.leaf_values[0, tree.lo[node] : tree.hi[node]]
            np.testing.assert_array_equal(leaf, y[column0_order])
            continue
        internal += 1
        assert (tree.feature[node], tree.threshold[node]) == expected
        x = P[idx, tree.feature[node]]
        go_left = ~((tree.threshold[node] < x) & (x <= tree.upper[node]))
        assert tree.lo[node] == tree.lo[tree.left[node]]
        assert tree.hi[tree.left[node]] - tree.lo[tree.left[node]] == go_left.sum()
        stack += [(int(tree.left[node]), idx[go_left]), (int(tree.right[node]), idx[~go_left])]
    return internal


# One-vs-rest on the few-valued codes (histograms), thresholds on the others.
ONEHOT = np.array([True, False, True, True, True])


@pytest.mark.parametrize("onehot", [None, ONEHOT])
@pytest.mark.parametrize("seed", [0, 1])
def test_classification_nodes_match_brute_force(seed: int, onehot) -> None:
    rng = np.random.default_rng(seed)
    P = predictors(rng, 700)
    y = np.clip(P[:, 0] // 2 + (P[:, 2] > 20) + (P[:, 2] == 7) + rng.integers(0, 2, 700), 0, 3)
    assert check_every_node(P, y, True, 5, onehot) > 20


@pytest.mark.parametrize("onehot", [None, ONEHOT])
@pytest.mark.parametrize("seed", [0, 1])
def test_whole_number_regression_nodes_match_brute_force(seed: int, onehot) -> None:
    # whole-number targets take the histogram path (their sums are exact in any order)
    rng = np.random.default_rng(seed)
    P = predictors(rng, 700)
    y = P[:, 0] * 1000 + P[:, 2] * 7 + rng.integers(0, 500, 700) + 250_000
    assert check_every_node(P, y, False, 5, onehot) > 20


@pytest.mark.parametrize("onehot", [None, ONEHOT])
def test_fractional_regression_nodes_match_brute_force(onehot) -> None:
    # fractional targets keep the sorted-list search everywhere
    rng = np.random.default_rng(2)
    P = predictors(rng, 600)
    y = P[:, 0] + rng.normal(size=600)
    assert check_every_node(P, y, False, 5, onehot) > 20


def test_forest_equals_its_trees_grown_one_by_one() -> None:
    rng = np.random.default_rng(3)
    X = predictors(rng, 800)
    X = np.column_stack([X, (X[:, 0] + X[:, 4] * 2 + rng.integers(0, 2, 800)) % 5])
    categorical = np.array([True, False, False, True, True, True])
    forest = grow_forest(X, categorical, 5, onehot=categorical)
    for j in range(1, X.shape[1]):
        tree = grow_tree(X[:, :j], X[:, j], bool(categorical[j]), 5, onehot=categorical[:j])
        start = forest.roots[j]
        size = len(tree.left)
        np.testing.assert_array_equal(forest.feature[start : start + size], tree.feature)
        np.testing.assert_array_equal(forest.threshold[start : start + size], tree.threshold)
        np.testing.assert_array_equal(forest.upper[start : start + size], tree.upper)
        np.testing.assert_array_equal(forest.leaf_values[j], tree.leaf_values[0])
