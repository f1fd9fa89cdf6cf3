"""Tests of the synthpop (CART) generator and its numba trees."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from privgame.core.errors import DataError, ParameterError
from privgame.data.encoding import encode
from privgame.data.schema import Schema, infer_schema
from privgame.generators import create
from privgame.generators._cart import apply_tree, best_split, grow_forest, grow_tree, sample_forest
from privgame.generators.synthpop import SynthpopGenerator

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult.csv.gz"


# --- slow, obvious references -------------------------------------------------------------


def reference_split(
    P: np.ndarray, y: np.ndarray, categorical: bool, min_leaf: int, onehot: np.ndarray | None = None
) -> tuple[int, float, float] | None:
    """Brute force: try every threshold between distinct values of every predictor.

    A predictor marked in ``onehot`` instead tries each of its codes but 0 against the others,
    as a tree on its one-hot indicators (drop-first) would; such a split returns the threshold
    ``code - 0.5``. ``y`` must already be centred as the trees centre it (by its rounded mean).
    """
    n, k = P.shape
    if n < 2 * min_leaf or k == 0:
        return None
    if (len(np.unique(y)) == 1) if categorical else (y.min() == y.max()):
        return None
    best, best_p = None, -np.inf
    for f in range(k):
        values = np.unique(P[:, f])
        one_vs_rest = onehot is not None and onehot[f]
        candidates = [(c - 0.5, c) for c in values if c != 0] if one_vs_rest else itertools.pairwise(values)
        for a, b in candidates:
            left = P[:, f] != b if one_vs_rest else P[:, f] <= a
            n_l = int(left.sum())
            n_r = n - n_l
            if n_l < min_leaf or n_r < min_leaf:
                continue
            if categorical:
                sq_l = int((np.bincount(y[left].astype(int)) ** 2).sum())
                sq_r = int((np.bincount(y[~left].astype(int)) ** 2).sum())
                p = sq_l / n_l + sq_r / n_r
            else:
                s_l = float(y[left].sum())
                s_r = float(y[~left].sum())
                p = s_l * s_l / n_l + s_r * s_r / n_r
            if p > best_p:
                t = a if one_vs_rest else a / 2.0 + b / 2.0
                best, best_p = (f, t if t < b else a, p), p
    return best


def goes_right(forest, node: int, x: np.ndarray) -> np.ndarray:
    """Whether values ``x`` of the node's predictor go right: ``threshold < x <= upper``."""
    return (forest.threshold[node] < x) & (x <= forest.upper[node])


def reference_sample(forest, u: np.ndarray) -> np.ndarray:
    """One row at a time, one node at a time."""
    m, d = u.shape
    out = np.empty((m, d))
    for i in range(m):
        for j in range(d):
            node = forest.roots[j]
            while forest.left[node] >= 0:
                right = goes_right(forest, node, out[i, forest.feature[node]])
                node = forest.right[node] if right else forest.left[node]
            lo, hi = forest.lo[node], forest.hi[node]
            out[i, j] = forest.leaf_values[j, lo + int(u[i, j] * (hi - lo))]
    return out


def random_case(rng: np.random.Generator, categorical: bool, exact: bool = True):
    """Small predictors full of ties, sometimes constant; integer or float targets."""
    n = int(rng.integers(1, 40))
    k = int(rng.integers(1, 4))
    cols = []
    for _ in range(k):
        kind = rng.integers(3)
        if kind == 0:
            cols.append(rng.integers(0, 3, n).astype(float))
        elif kind == 1:
            cols.append(np.full(n, 7.0))
        else:
            cols.append(rng.normal(size=n).round(1))
    P = np.column_stack(cols)
    if categorical:
        y = rng.integers(0, int(rng.integers(1, 4)), n).astype(float)
    elif exact:
        y = rng.integers(0, int(rng.integers(1, 6)), n).astype(float) * 3 + 100
    else:
        y = rng.normal(50, 10, n)
    return P, y, int(rng.integers(1, 6))


# --- the trees ------------------------------------------------------------------------------


@pytest.mark.parametrize("categorical", [True, False])
def test_best_split_matches_brute_force_exactly(categorical: bool) -> None:
    rng = np.random.default_rng(1)
    splits = 0
    for _ in range(300):
        P, y, min_leaf = random_case(rng, categorical)
        yc = y if categorical else y - np.round(y.mean())
        expected = reference_split(P, yc, categorical, min_leaf)
        assert best_split(P, y, categorical, min_leaf) == expected
        splits += expected is not None
    assert splits > 100  # the cases exercise real splits, not only the trivial ones


def test_best_split_matches_brute_force_on_float_targets() -> None:
    rng = np.random.default_rng(2)
    for _ in range(200):
        P, y, min_leaf = random_case(rng, categorical=False, exact=False)
        expected = reference_split(P, y - np.round(y.mean()), False, min_leaf)
        got = best_split(P, y, False, min_leaf)
        if expected is None:
            assert got is None
            continue
        assert got is not None
        assert got[2] == pytest.approx(expected[2], rel=1e-12)
        assert got[:2] == expected[:2]


def test_best_split_refuses_pure_and_unsplittable_nodes() -> None:
    P = np.arange(20.0)[:, None]
    assert best_split(P, np.zeros(20), True, 5) is None
    assert best_split(P, np.full(20, 3.5), False, 5) is None
    assert best_split(np.ones((20, 2)), np.arange(20.0) % 2, True, 5) is None
    assert best_split(P, np.arange(20.0) % 2, True, 11) is None
    # A perfect split wins whatever the other predictor offers.
    f, t, _ = best_split(np.column_stack([P % 3, P]), (P[:, 0] >= 8).astype(float), True, 5)
    assert (f, t) == (1, 7.5)


def node_rows(forest, P: np.ndarray) -> dict[int, np.ndarray]:
    """The training rows that reach each node of tree 0, by walking down from the root."""
    rows = {int(forest.roots[0]): np.arange(len(P))}
    out = {}
    while rows:
        node, idx = rows.popitem()
        out[node] = idx
        if forest.left[node] >= 0:
            go_left = ~goes_right(forest, node, P[idx, forest.feature[node]])
            rows[int(forest.left[node])] = idx[go_left]
            rows[int(forest.right[node])] = idx[~go_left]
    return out


@pytest.mark.parametrize("onehot", [None, np.array([True, False, True, True])])
@pytest.mark.parametrize("categorical", [True, False])
def test_every_node_is_the_brute_force_split_of_its_rows(categorical: bool, onehot) -> None:
    rng = np.random.default_rng(3)
    for _ in range(15):
        n = int(rng.integers(30, 120))
        P = np.column_stack(
            [rng.integers(0, 4, n), rng.normal(size=n).round(1), np.ones(n), rng.integers(0, 6, n)]
        )
        y = (P[:, 0] + (P[:, 3] == 2) + rng.integers(0, 3, n)).astype(float)
        min_leaf = int(rng.integers(1, 8))
        tree = grow_tree(P, y, categorical, min_leaf, onehot=onehot)
        yc = y if categorical else y - np.round(y.mean())
        for node, idx in node_rows(tree, P).items():
            expected = reference_split(P[idx], yc[idx], categorical, min_leaf, onehot)
            if tree.left[node] < 0:
                assert expected is None
                assert len(idx) >= min(min_leaf, n)
                leaf = tree.leaf_values[0, tree.lo[node] : tree.hi[node]]
                np.testing.assert_array_equal(np.sort(leaf), np.sort(y[idx]))
            else:
                assert expected is not None
                assert (tree.feature[node], tree.threshold[node]) == expected[:2]


def _partition(leaves: np.ndarray) -> list[tuple[int, ...]]:
    groups: dict[int, list[int]] = {}
    for row, leaf in enumerate(leaves):
        groups.setdefault(int(leaf), []).append(row)
    return sorted(tuple(g) for g in groups.values())


def test_onehot_tree_partitions_training_rows_like_sklearn_on_dummies() -> None:
    # hazy's synthpop: scikit-learn's tree on one-hot indicators without the first category
    for seed in range(6):
        rng = np.random.default_rng(seed)
        codes = rng.integers(0, 6, 400)
        x = rng.random(400).astype(np.float32).astype(np.float64)
        y = np.array([0.0, 3.0, -1.0, 2.0, 0.5, 1.0])[codes] + x + rng.normal(size=400)
        P = np.column_stack([codes, x]).astype(float)
        tree = grow_tree(P, y, False, 20, onehot=np.array([True, False]))
        assert np.isfinite(tree.upper[(tree.left >= 0) & (tree.feature == 0)]).all()
        ours = apply_tree(tree, 0, P)
        dummies = (codes[:, None] == np.arange(1, 6)).astype(float)
        theirs = DecisionTreeRegressor(min_samples_leaf=20, random_state=seed)
        theirs = theirs.fit(np.column_stack([dummies, x]), y).apply(np.column_stack([dummies, x]))
        assert _partition(ours) == _partition(theirs)


def test_regression_tree_partitions_training_rows_like_sklearn() -> None:
    for seed in range(8):
        rng = np.random.default_rng(seed)
        # float32-exact values: scikit-learn's trees compare predictors in float32
        P = rng.random((300, 4)).astype(np.float32).astype(np.float64)
        y = P @ np.array([1.0, 2.0, 0.0, -1.0]) + rng.normal(size=300)
        ours = apply_tree(grow_tree(P, y, False, 5), 0, P)
        theirs = DecisionTreeRegressor(min_samples_leaf=5, random_state=seed).fit(P, y).apply(P)
        assert _partition(ours) == _partition(theirs)


def _gini_proxy(P: np.ndarray, y: np.ndarray, f: int, t: float) -> float:
    left = P[:, f] <= t
    sq_l = (np.bincount(y[left].astype(int)) ** 2).sum()
    sq_r = (np.bincount(y[~left].astype(int)) ** 2).sum()
    return sq_l / left.sum() + sq_r / (~left).sum()


def test_classification_tree_agrees_with_sklearn_up_to_ties() -> None:
    # Class counts make exactly tied splits common, and scikit-learn breaks ties between
    # predictors at random, so its tree is walked node by node: at every node our choice is
    # either its split or one with exactly the same Gini gain.
    ties = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        P = rng.random((300, 3)).astype(np.float32).astype(np.float64)
        y = np.clip(np.round(P.sum(axis=1) * 3 + rng.normal(size=300)), 0, 4)
        sk = DecisionTreeClassifier(min_samples_leaf=5, random_state=seed).fit(P, y).tree_
        stack = [(0, np.arange(300))]
        while stack:
            node, idx = stack.pop()
            ours = best_split(P[idx], y[idx], True, 5)
            if sk.children_left[node] < 0:
                assert ours is None
                continue
            f, t = int(sk.feature[node]), float(sk.threshold[node])
            assert ours is not None
            if ours[0] != f or abs(ours[1] - t) > 1e-6:
                ties += 1
                assert _gini_proxy(P[idx], y[idx], ours[0], ours[1]) == pytest.approx(
                    _gini_proxy(P[idx], y[idx], f, t), rel=1e-12
                )
            go_left = P[idx, f] <= t
            stack += [
                (sk.children_left[node], idx[go_left]),
                (sk.children_right[node], idx[~go_left]),
            ]
    # with one predictor there is no tie between predictors: the whole partition agrees
    rng = np.random.default_rng(0)
    P = rng.random((300, 1)).astype(np.float32).astype(np.float64)
    y = np.clip(np.round(P[:, 0] * 4 + rng.normal(size=300)), 0, 4)
    ours = apply_tree(grow_tree(P, y, True, 5), 0, P)
    theirs = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(P, y).apply(P)
    assert _partition(ours) == _partition(theirs)


def test_fast_sampling_matches_a_row_by_row_walk() -> None:
    rng = np.random.default_rng(4)
    X = np.column_stack(
        [rng.integers(0, 3, 200), rng.normal(size=200), rng.integers(0, 5, 200), rng.random(200)]
    ).astype(float)
    X[:, 2] = np.where(X[:, 1] > 0, X[:, 2], 0)
    forest = grow_forest(X, np.array([True, False, True, False]), 5)
    u = rng.random((300, 4))
    np.testing.assert_array_equal(sample_forest(forest, u), reference_sample(forest, u))
    u[:5] = np.nextafter(1.0, 0.0)  # the largest uniform still picks a row inside its leaf
    np.testing.assert_array_equal(sample_forest(forest, u), reference_sample(forest, u))
    for m in (0, 1, 2, 3, 5, 301):  # rows walk in groups of four: every partial group
        u = rng.random((m, 4))
        np.testing.assert_array_equal(sample_forest(forest, u), reference_sample(forest, u))
    # one-vs-rest splits (a code goes right, the others left) walk the same way
    onehot = grow_forest(X, np.array([True, False, True, False]), 3, np.array([True, False, True, False]))
    assert np.isfinite(onehot.upper[onehot.left >= 0]).any()
    for m in (7, 400):
        u = rng.random((m, 4))
        np.testing.assert_array_equal(sample_forest(onehot, u), reference_sample(onehot, u))


def test_sampled_values_come_from_the_leaf_the_row_lands_in() -> None:
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 4, 300), rng.normal(size=300).round(2)])
    X = np.column_stack([X, (X[:, 0] * 10 + rng.integers(0, 3, 300)).astype(float)])
    forest = grow_forest(X, np.array([True, False, False]), 5)
    syn = sample_forest(forest, rng.random((500, 3)))
    for j in (1, 2):
        train_leaf = apply_tree(forest, j, X[:, :j])
        syn_leaf = apply_tree(forest, j, syn[:, :j])
        for leaf in np.unique(syn_leaf):
            allowed = set(X[train_leaf == leaf, j])
            assert allowed and set(syn[syn_leaf == leaf, j]) <= allowed


def test_leaf_draw_is_uniform_over_its_rows() -> None:
    values = np.array([0.0, 0.0, 1.0, 2.0, 3.0])  # value 0 appears twice: twice as likely
    forest = grow_forest(values[:, None], np.array([False]), 5)
    draws = sample_forest(forest, np.random.default_rng(6).random((20_000, 1)))[:, 0]
    freq = np.bincount(draws.astype(int)) / len(draws)
    np.testing.assert_allclose(freq, [0.4, 0.2, 0.2, 0.2], atol=0.015)


# --- the generator --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema]:
    df = pd.read_csv(ADULT, na_values=["?"]).dropna()
    schema = infer_schema(df)
    rows = np.random.default_rng(0).choice(len(df), 2000, replace=False)
    return encode(df.iloc[rows], schema), schema


@pytest.fixture(scope="module")
def small() -> tuple[np.ndarray, Schema, pd.DataFrame]:
    rng = np.random.default_rng(7)
    n = 150
    df = pd.DataFrame(
        {
            "user_id": np.arange(n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.normal(10, 3, n).round(2),
            "grade": rng.choice(["a", "b"], n),
        }
    )
    schema = infer_schema(df)
    return encode(df, schema), schema, df


def test_registered_and_documented() -> None:
    gen = create("synthpop", min_samples_leaf=3)
    assert isinstance(gen, SynthpopGenerator)
    assert gen.get_params() == {
        "visit_sequence": None,
        "min_samples_leaf": 3,
        "categorical_splits": "onehot",
    }
    assert SynthpopGenerator.deterministic_fit is True
    assert not SynthpopGenerator.leaks_training_data


def test_same_seed_same_output_different_seed_different(small) -> None:
    X, schema, _ = small
    a = create("synthpop").fit_sample(X, schema, 100, rng=np.random.default_rng(1))
    b = create("synthpop").fit_sample(X, schema, 100, rng=np.random.default_rng(1))
    c = create("synthpop").fit_sample(X, schema, 100, rng=np.random.default_rng(2))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_fit_once_sample_many_equals_fit_then_sample(small) -> None:
    X, schema, _ = small
    rng = np.random.default_rng(123)
    state = rng.bit_generator.state
    fitted = create("synthpop").fit(X, schema, rng=rng)
    assert rng.bit_generator.state == state  # fit draws nothing
    for seed in range(4):
        once = fitted.sample(80, rng=np.random.default_rng(seed))
        fresh = create("synthpop").fit_sample(X, schema, 80, rng=np.random.default_rng(seed))
        np.testing.assert_array_equal(once, fresh)


def test_output_shape_dtype_and_domain(small) -> None:
    X, schema, _ = small
    gen = create("synthpop").fit(X, schema, rng=np.random.default_rng(0))
    out = gen.sample(400, rng=np.random.default_rng(1))
    assert out.shape == (400, X.shape[1])
    assert out.dtype == np.float64
    for j in range(X.shape[1]):
        assert set(out[:, j]) <= set(X[:, j])
    assert gen.sample(0, rng=np.random.default_rng(1)).shape == (0, X.shape[1])
    leaves = gen.forest_.hi - gen.forest_.lo
    assert leaves[gen.forest_.left < 0].min() >= 5


def test_generator_sample_is_the_tree_walk_in_table_order(small) -> None:
    X, schema, _ = small
    gen = create("synthpop", visit_sequence=["grade", "size"]).fit(X, schema, rng=np.random.default_rng(0))
    names = schema.names
    assert [names[j] for j in gen.order_] == ["grade", "size", "colour"]
    out = gen.sample(50, rng=np.random.default_rng(9))
    walk = reference_sample(gen.forest_, np.random.default_rng(9).random((50, len(names))))
    np.testing.assert_array_equal(out[:, gen.order_], walk)
    # the first visited column is a bootstrap: no other column shapes it
    first = gen.forest_.roots[0]
    assert gen.forest_.left[first] < 0


def test_visit_sequence_changes_the_model(small) -> None:
    X, schema, _ = small
    default = create("synthpop").fit_sample(X, schema, 100, rng=np.random.default_rng(3))
    other = create("synthpop", visit_sequence=["size"]).fit_sample(
        X, schema, 100, rng=np.random.default_rng(3)
    )
    assert not np.array_equal(default, other)


@pytest.mark.parametrize(
    ("sequence", "match"),
    [
        ("colour", "must be a list of column names"),
        (["colour", "shape"], r"'shape' does not exist"),
        (["colour", "colour"], "listed twice"),
        (["user_id"], "excluded from the schema"),
        ([3], "is not a column name"),
        (7, "must be a list of column names"),
    ],
)
def test_visit_sequence_validated(small, sequence, match) -> None:
    X, schema, _ = small
    gen = SynthpopGenerator(visit_sequence=sequence)
    with pytest.raises(ParameterError, match=match):
        gen.fit(X, schema, rng=np.random.default_rng(0))


@pytest.mark.parametrize("value", [0, -3, 2.5, True, "5", None])
def test_min_samples_leaf_validated(small, value) -> None:
    X, schema, _ = small
    with pytest.raises(ParameterError, match="min_samples_leaf must be a whole number >= 1"):
        SynthpopGenerator(min_samples_leaf=value).fit(X, schema, rng=np.random.default_rng(0))


@pytest.mark.parametrize("value", ["one-hot", "", None, 1, ["onehot"]])
def test_categorical_splits_validated(small, value) -> None:
    X, schema, _ = small
    gen = SynthpopGenerator(categorical_splits=value)  # stored as given, checked by fit
    assert gen.categorical_splits == value
    with pytest.raises(ParameterError, match=r"categorical_splits must be 'onehot' or 'ordinal'"):
        gen.fit(X, schema, rng=np.random.default_rng(0))


def test_onehot_splits_change_the_trees_not_the_determinism(adult) -> None:
    X, schema = adult
    rng = np.random.default_rng
    onehot = create("synthpop", categorical_splits="onehot")
    a = onehot.fit_sample(X, schema, 500, rng=rng(5))
    b = create("synthpop", categorical_splits="onehot").fit_sample(X, schema, 500, rng=rng(5))
    c = create("synthpop", categorical_splits="ordinal").fit_sample(X, schema, 500, rng=rng(5))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # every categorical split of the fitted trees sends one code (not 0) right
    forest = onehot.forest_
    split = forest.left >= 0
    on_categorical = split & schema.is_categorical[onehot.order_][np.maximum(forest.feature, 0)]
    assert on_categorical.sum() > 100
    codes = forest.threshold[on_categorical] + 0.5
    np.testing.assert_array_equal(forest.upper[on_categorical], codes + 0.5)
    assert np.all((codes == np.round(codes)) & (codes >= 1))
    assert np.all(np.isinf(forest.upper[split & ~on_categorical]))


def test_min_samples_leaf_one_and_tiny_tables(small) -> None:
    X, schema, _ = small
    gen = SynthpopGenerator(min_samples_leaf=1).fit(X, schema, rng=np.random.default_rng(0))
    assert set(gen.sample(50, rng=np.random.default_rng(0))[:, 1]) <= set(X[:, 1])
    tiny = X[:3]  # too few rows to split: every column is a bootstrap of its values
    out = create("synthpop").fit_sample(tiny, schema, 30, rng=np.random.default_rng(0))
    for j in range(tiny.shape[1]):
        assert set(out[:, j]) <= set(tiny[:, j])


def test_bad_input_rejected(small) -> None:
    X, schema, _ = small
    gen = create("synthpop")
    with pytest.raises(ParameterError, match="must be fitted"):
        gen.sample(5, rng=np.random.default_rng(0))
    with pytest.raises(DataError, match="schema has 3 used columns"):
        gen.fit(X[:, :2], schema, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="at least one training row"):
        gen.fit(X[:0], schema, rng=np.random.default_rng(0))
    bad = X.copy()
    bad[0, 0] = 3  # colour has 3 categories: codes 0..2
    bad[1, 1] = np.nan
    with pytest.raises(DataError, match=r"not category codes 0\.\.2") as info:
        gen.fit(bad, schema, rng=np.random.default_rng(0))
    assert any("'size' holds missing" in p for p in info.value.problems)
    gen.fit(X, schema, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="n must be an integer >= 0"):
        gen.sample(-1, rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        (0, -1.0, "'colour' holds values that are not category codes 0..2"),
        (0, 1.5, "'colour' holds values that are not category codes 0..2"),
        (0, np.nan, "'colour' holds missing or infinite values"),
        (1, np.inf, "'size' holds missing or infinite values"),
        (1, -np.inf, "'size' holds missing or infinite values"),
    ],
)
def test_each_bad_cell_is_named_once(small, column: int, value: float, problem: str) -> None:
    X, schema, _ = small
    bad = X.copy()
    bad[-1, column] = value  # the last row: whole-column checks must see every row
    with pytest.raises(DataError, match="does not fit its schema") as info:
        create("synthpop").fit(bad, schema, rng=np.random.default_rng(0))
    assert len(info.value.problems) == 1 and problem in info.value.problems[0]


def _tvd(a: np.ndarray, b: np.ndarray, categorical: bool, k: int) -> float:
    if categorical:
        p = np.bincount(a.astype(int), minlength=k) / len(a)
        q = np.bincount(b.astype(int), minlength=k) / len(b)
    else:
        edges = np.unique(np.quantile(a, np.linspace(0, 1, 11)[1:-1]))
        p = np.bincount(np.searchsorted(edges, a), minlength=len(edges) + 1) / len(a)
        q = np.bincount(np.searchsorted(edges, b), minlength=len(edges) + 1) / len(b)
    return 0.5 * float(np.abs(p - q).sum())


def _cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    table = pd.crosstab(a, b).to_numpy(dtype=float)
    n = table.sum()
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / n
    chi2 = ((table - expected) ** 2 / expected).sum()
    return float(np.sqrt(chi2 / n / (min(table.shape) - 1)))


@pytest.mark.parametrize("splits", ["ordinal", "onehot"])
def test_fidelity_on_adult(adult, splits: str) -> None:
    X, schema = adult
    gen = create("synthpop", categorical_splits=splits)
    syn = gen.fit_sample(X, schema, len(X), rng=np.random.default_rng(11))
    cards = schema.cardinalities
    for j, col in enumerate(schema.used):
        tvd = _tvd(X[:, j], syn[:, j], bool(schema.is_categorical[j]), int(cards[j]))
        assert tvd < 0.1, f"{col.name}: total variation {tvd:.3f}"
    r, m = schema.names.index("relationship"), schema.names.index("marital-status")
    assert _cramers_v(X[:, r], X[:, m]) > 0.4
    assert _cramers_v(syn[:, r], syn[:, m]) > 0.4
    # the independent-marginals baseline loses that association, so the trees carry it
    base = create("marginals").fit_sample(X, schema, len(X), rng=np.random.default_rng(11))
    assert _cramers_v(base[:, r], base[:, m]) < 0.1
