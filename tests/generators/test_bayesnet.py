"""Tests of the Baynet and PrivBayes generators."""

from __future__ import annotations

import math
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import declared

from privgame.core.errors import ParameterError, SchemaError
from privgame.data.encoding import encode
from privgame.data.schema import CATEGORICAL, Column, Schema, infer_schema
from privgame.generators import create
from privgame.generators.bayesnet import (
    GUIDE,
    BaynetGenerator,
    PrivBayesGenerator,
    _ancestral_sample,
    _conditional_tables,
    _Domain,
    _draw,
    _guides,
    _joint_counts,
    _marginal_counts,
    _mi_sensitivity,
    _MutualInformation,
    _sampling_cdfs,
)

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult.csv.gz"


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema]:
    """2,000 Adult rows, encoded, with the schema inferred from them."""
    table = pd.read_csv(ADULT, na_values=["?"]).dropna().sample(2000, random_state=0)
    schema = infer_schema(table)
    return encode(table, schema), schema


def _binned_marginals(X: np.ndarray, schema: Schema) -> list[np.ndarray]:
    domain = _Domain(schema, 10)
    codes = domain.discretise(X, schema)
    return [np.bincount(codes[j], minlength=domain.cards[j]) / len(X) for j in range(len(codes))]


def _tv(real: np.ndarray, synth: np.ndarray, schema: Schema) -> np.ndarray:
    """Total-variation distance of every one-way marginal (continuous columns in 10 bins)."""
    pairs = zip(_binned_marginals(real, schema), _binned_marginals(synth, schema), strict=True)
    return np.array([0.5 * np.abs(p - q).sum() for p, q in pairs])


def _cramers_v(x: np.ndarray, y: np.ndarray) -> float:
    table = pd.crosstab(x, y).to_numpy(dtype=float)
    n = table.sum()
    expected = np.outer(table.sum(1), table.sum(0)) / n
    chi2 = ((table - expected) ** 2 / expected).sum()
    return math.sqrt(chi2 / (n * (min(table.shape) - 1)))


def _mi_textbook(x: list[int], y: list[int]) -> float:
    """Mutual information in bits by the definition, with explicit loops over the table."""
    n = len(x)
    xs, ys = sorted(set(x)), sorted(set(y))
    counts = {(a, b): 0 for a in xs for b in ys}
    for a, b in zip(x, y, strict=True):
        counts[(a, b)] += 1
    px = {a: sum(counts[(a, b)] for b in ys) / n for a in xs}
    py = {b: sum(counts[(a, b)] for a in xs) / n for b in ys}
    total = 0.0
    for a in xs:
        for b in ys:
            pxy = counts[(a, b)] / n
            if pxy > 0:
                total += pxy * math.log2(pxy / (px[a] * py[b]))
    return total


def _check_in_domain(out: np.ndarray, schema: Schema) -> None:
    assert out.dtype == np.float64
    for j, col in enumerate(schema.used):
        x = out[:, j]
        if col.role == CATEGORICAL:
            assert np.array_equal(x, np.round(x)), col.name
            assert x.min() >= 0 and x.max() < len(col.categories), col.name
        else:
            assert x.min() >= col.lower and x.max() <= col.upper, col.name
            if col.integer:
                assert np.array_equal(x, np.round(x)), col.name


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize(
    ("name", "params"),
    [("baynet", {}), ("baynet", {"degree": 2}), ("privbayes", {"epsilon": 1.0})],
)
def test_same_seed_same_output_and_seeds_differ(adult, name, params):
    X, schema = adult

    def run(seed: int) -> np.ndarray:
        gen = create(name, **params)
        return gen.fit(X[:500], schema, rng=np.random.default_rng(seed)).sample(
            300, rng=np.random.default_rng(seed + 1)
        )

    first, again, other = run(7), run(7), run(8)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


def test_infinite_epsilon_is_exactly_baynet(adult):
    X, schema = adult
    baynet = BaynetGenerator(degree=2).fit(X, schema, rng=np.random.default_rng(3))
    privbayes = PrivBayesGenerator(degree=2, epsilon=math.inf).fit(X, schema, rng=np.random.default_rng(3))
    assert baynet.network == privbayes.network
    a = baynet.sample(500, rng=np.random.default_rng(4))
    b = privbayes.sample(500, rng=np.random.default_rng(4))
    assert np.array_equal(a, b)


# --------------------------------------------------------------------------- mutual information


@pytest.mark.parametrize("seed", range(5))
def test_mutual_information_matches_textbook_formula(seed):
    rng = np.random.default_rng(seed)
    d, n = 6, int(rng.integers(5, 60))
    cards = rng.integers(1, 6, size=d)
    codes = np.stack([rng.integers(0, k, size=n) for k in cards])
    # make one column depend on others so that the scores are not all near zero
    codes[5] = (codes[0] + codes[1]) % cards[5]
    mi = _MutualInformation(codes, cards)
    for parents in [(0,), (1, 2), (0, 1), (4, 3, 2)]:
        children = np.array([c for c in range(d) if c not in parents])
        got = mi.scores(parents, children)
        config = [
            tuple(int(codes[p, i]) for p in parents) for i in range(n)
        ]  # a parent set's configuration as one value
        config_ids = [sorted(set(config)).index(c) for c in config]
        for child, value in zip(children, got, strict=True):
            expected = _mi_textbook(codes[child].tolist(), config_ids)
            assert value == pytest.approx(max(expected, 0.0), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_the_counting_kernels_match_bincount(seed):
    # marginal counts (up to each column's largest code, as np.bincount gives them, and the
    # narrow copy) and joint counts of 1 to 3 columns, first column most significant
    rng = np.random.default_rng(seed)
    d, n = 5, int(rng.integers(0, 300))
    cards = rng.integers(1, 7, size=d)
    codes = np.stack([rng.integers(0, k, size=n) for k in cards])
    narrow = np.empty(codes.shape, dtype=np.uint8)
    counts, tops = _marginal_counts(codes, cards, narrow)
    np.testing.assert_array_equal(narrow, codes)
    for j in range(d):
        expected = np.bincount(codes[j])
        assert tops[j] == len(expected) - 1
        np.testing.assert_array_equal(counts[j, : tops[j] + 1], expected)
        assert not counts[j, tops[j] + 1 :].any()
    for cols in [(0,), (3, 1), (2, 4, 0)]:
        index = np.zeros(n, dtype=np.int64)
        for c in cols:
            index = index * cards[c] + codes[c]
        size = math.prod(int(cards[c]) for c in cols)
        got = _joint_counts(codes, cards, cols)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, np.bincount(index, minlength=size))


def test_mutual_information_sensitivity_bounds_a_one_row_change():
    rng = np.random.default_rng(0)
    n = 12
    for child_card, parent_card in [(2, 4), (4, 2), (3, 4), (5, 3)]:
        binary = child_card == 2 or parent_card == 2
        bound = _mi_sensitivity(n, binary)
        worst = 0.0
        for _ in range(300):
            codes = np.stack([rng.integers(0, parent_card, n), rng.integers(0, child_card, n)])
            cards = np.array([parent_card, child_card])
            before = _MutualInformation(codes, cards).scores((0,), np.array([1]))[0]
            changed = codes.copy()
            row = rng.integers(n)
            changed[:, row] = [rng.integers(parent_card), rng.integers(child_card)]
            after = _MutualInformation(changed, cards).scores((0,), np.array([1]))[0]
            worst = max(worst, abs(after - before))
        assert 0 < worst <= bound + 1e-12
    assert _mi_sensitivity(n, True) < _mi_sensitivity(n, False)


# --------------------------------------------------------------------------- tables and sampling


def test_ancestral_sampling_follows_the_tables():
    # column 2 (2 values) is the root; column 0 (3 values) | column 2; column 1 (2) | (2, 0)
    cards = np.array([3, 2, 2])
    order = [2, 0, 1]
    parents = [(), (2,), (2, 0)]
    root = np.array([[0.3, 0.7]])
    middle = np.array([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]])
    leaf = np.array([[0.9, 0.1], [0.5, 0.5], [0.0, 1.0], [0.6, 0.4], [0.35, 0.65], [1.0, 0.0]])
    n = 200_000
    codes = _ancestral_sample(
        cards, order, parents, _sampling_cdfs([root, middle, leaf]), n, np.random.default_rng(1)
    )
    observed = np.zeros((2, 3, 2))
    np.add.at(observed, (codes[2], codes[0], codes[1]), 1)
    observed /= n
    for r, m, f in product(range(2), range(3), range(2)):
        p = root[0, r] * middle[r, m] * leaf[r * 3 + m, f]
        assert abs(observed[r, m, f] - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12
        if p == 0:
            assert observed[r, m, f] == 0


def test_ancestral_sampling_is_the_searchsorted_draw():
    # the compiled draw must pick exactly what np.searchsorted of config + u on the shifted cdf
    # picks, including uniforms next to 1 and configurations large enough to round config + u
    rng = np.random.default_rng(5)
    cards = np.array([4000, 3])
    table = rng.dirichlet(np.ones(3), size=4000)
    table[::7] = [0.0, 1.0, 0.0]
    cdfs = _sampling_cdfs([np.full((1, 4000), 1 / 4000), table])
    n = 50_000
    codes = _ancestral_sample(cards, [0, 1], [(), (0,)], cdfs, n, np.random.default_rng(6))
    u = np.random.default_rng(6).random((2, n))
    root = np.clip(np.searchsorted(cdfs[0], u[0], side="right"), 0, 3999)
    np.testing.assert_array_equal(codes[0], root)
    np.testing.assert_array_equal(
        codes[1], np.clip(np.searchsorted(cdfs[1], root + u[1], side="right") - root * 3, 0, 2)
    )
    # the largest uniform on the last configuration rounds config + u up to the next row
    flat = np.concatenate(cdfs)
    ends = np.array([0, len(cdfs[0]), len(flat)])
    parent = np.array([3999, 3999, 17, 0])
    u = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, np.nextafter(1.0, 0.0), 0.5, 0.999]])
    out = np.zeros((2, 4), dtype=np.int64)
    out[0] = parent
    guides = np.empty(4000 * GUIDE, dtype=np.int64)
    _guides(flat[ends[1] :], 3, guides)
    _draw(
        cards,
        np.array([1]),
        np.array([0]),
        np.array([0, 1]),
        flat[ends[1] :],
        np.array([0, ends[2] - ends[1]]),
        guides,
        u[1:],
        out,
    )
    expected = np.clip(np.searchsorted(cdfs[1], parent + u[1], side="right") - parent * 3, 0, 2)
    np.testing.assert_array_equal(out[1], expected)


def test_a_draw_with_two_parents_is_the_searchsorted_draw():
    # the general path of the compiled draw (several parents), against np.searchsorted
    rng = np.random.default_rng(9)
    cards = np.array([3, 5, 4])
    tables = [
        rng.dirichlet(np.ones(3))[None, :],
        rng.dirichlet(np.ones(5), size=3),
        rng.dirichlet(np.ones(4), size=15),
    ]
    tables[2][4] = [0.0, 0.0, 1.0, 0.0]
    cdfs = _sampling_cdfs(tables)
    n = 30_000
    codes = _ancestral_sample(cards, [0, 1, 2], [(), (0,), (0, 1)], cdfs, n, np.random.default_rng(10))
    u = np.random.default_rng(10).random((3, n))
    first = np.clip(np.searchsorted(cdfs[0], u[0], side="right"), 0, 2)
    second = np.clip(np.searchsorted(cdfs[1], first + u[1], side="right") - first * 5, 0, 4)
    config = first * 5 + second
    third = np.clip(np.searchsorted(cdfs[2], config + u[2], side="right") - config * 4, 0, 3)
    np.testing.assert_array_equal(codes, np.stack([first, second, third]))


def test_the_guided_draw_is_the_searchsorted_draw_at_bucket_edges():
    # Probabilities in multiples of 1 / GUIDE put cdf entries exactly on bucket edges, and
    # uniforms exactly on them: the guide must neither skip an entry nor stop short.
    rng = np.random.default_rng(11)
    for k in (1, 2, 5, 41, 200):
        rows = 7
        table = rng.integers(0, 3, size=(rows, k)).astype(np.float64)
        table[:, 0] += 0.5 * (table.sum(axis=1) == 0)  # no empty row
        table[2] = 0.0
        table[2, -1] = 1.0  # all the mass on the last value
        table /= table.sum(axis=1, keepdims=True)
        if k >= GUIDE:
            table[3] = 0.0
            table[3, :GUIDE] = 1.0 / GUIDE  # every edge is an entry
        cdfs = _sampling_cdfs([np.full((1, rows), 1 / rows), table])
        n = 20_000
        edges = np.arange(GUIDE) / GUIDE
        u = rng.random((2, n))
        u[1, : n // 2] = edges[rng.integers(0, GUIDE, n // 2)]
        u[1, -1] = np.nextafter(1.0, 0.0)
        codes = _ancestral_sample(np.array([rows, k]), [0, 1], [(), (0,)], cdfs, n, _Fixed(u))
        root = np.clip(np.searchsorted(cdfs[0], u[0], side="right"), 0, rows - 1)
        expected = np.clip(np.searchsorted(cdfs[1], root + u[1], side="right") - root * k, 0, k - 1)
        np.testing.assert_array_equal(codes[0], root)
        np.testing.assert_array_equal(codes[1], expected)


class _Fixed:
    """A stand-in for a Generator whose ``random`` returns given uniforms."""

    def __init__(self, u: np.ndarray) -> None:
        self.u = u

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        assert shape == self.u.shape
        return self.u


def test_discretise_matches_the_binning_formula():
    schema = Schema(
        [
            Column("x", "continuous", lower=-1.5, upper=7.25),
            Column("c", CATEGORICAL, categories=("a", "b", "c")),
            Column("flat", "continuous", lower=2.0, upper=2.0),
        ]
    )
    domain = _Domain(schema, 7)
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.uniform(-3, 9, 1000), [-1.5, 7.25, -1e300, 1e300]])
    X = np.column_stack([x, rng.integers(0, 3, len(x)), rng.uniform(0, 4, len(x))])
    codes = domain.discretise(X, schema)
    expected = np.clip(np.floor((x + 1.5) * (7 / 8.75)), 0, 6).astype(np.int64)
    np.testing.assert_array_equal(codes[0], expected)
    np.testing.assert_array_equal(codes[1], X[:, 1].astype(np.int64))
    np.testing.assert_array_equal(codes[2], 0)


def test_unseen_parent_configuration_falls_back():
    # parent (3 values) never takes value 2; child (2 values) has marginal (0.75, 0.25)
    codes = np.array([[0, 0, 1, 1], [0, 0, 0, 1]])
    cards = np.array([3, 2])
    rng = np.random.default_rng(0)
    tables = _conditional_tables(codes, cards, [0, 1], [(), (0,)], 1, 0.0, rng, False)
    np.testing.assert_allclose(tables[0], [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(tables[1], [[1.0, 0.0], [0.5, 0.5], [0.75, 0.25]])
    private = _conditional_tables(codes, cards, [0, 1], [(), (0,)], 1, 0.0, rng, True)
    np.testing.assert_allclose(private[1][2], [0.5, 0.5])


def test_root_tables_are_marginals_of_the_first_joint_table():
    rng = np.random.default_rng(5)
    cards = np.array([3, 4, 2, 3])
    codes = np.stack([rng.integers(0, k, 400) for k in cards])
    order, parents = [1, 3, 0, 2], [(), (1,), (1, 3), (3, 0)]
    tables = _conditional_tables(codes, cards, order, parents, 2, 0.0, rng, False)
    np.testing.assert_allclose(tables[0][0], np.bincount(codes[1], minlength=4) / 400)
    joint = np.zeros((4, 3))
    np.add.at(joint, (codes[1], codes[3]), 1)
    np.testing.assert_allclose(tables[1], joint / joint.sum(1, keepdims=True))
    assert tables[2].shape == (12, 3) and tables[3].shape == (9, 2)


def test_values_follow_the_per_cell_rule():
    # every kind of column: categorical, continuous, integer (with bins holding no whole
    # number), integer without a whole number inside its bounds (rounded), and a flat one
    schema = Schema(
        (
            Column("x", "continuous", lower=-1.5, upper=7.25),
            Column("c", CATEGORICAL, categories=("a", "b", "c")),
            Column("i", "continuous", lower=0, upper=3, integer=True),
            Column("r", "continuous", lower=0.2, upper=0.7, integer=True),
            Column("flat", "continuous", lower=2.0, upper=2.0),
            Column("big", "continuous", lower=-40, upper=12345, integer=True),
        )
    )
    domain = _Domain(schema, 10)
    rng = np.random.default_rng(3)
    n = 700
    codes = np.stack([rng.integers(0, k, size=n) for k in domain.cards])
    got = domain.values(codes, np.random.default_rng(4))
    u = np.random.default_rng(4).random((5, n))
    expected = np.empty((n, 6))
    for i in range(n):
        q = 0
        for j, col in enumerate(schema.used):
            b = int(codes[j, i])
            if col.role == CATEGORICAL:
                expected[i, j] = b
                continue
            lo, hi = domain.lower[j], domain.upper[j]
            x = lo + (b + u[q, i]) * ((hi - lo) / domain.cards[j])
            if col.integer and math.ceil(lo) <= math.floor(hi):
                starts, counts = domain.integer_bins(j)
                if counts[b] > 0:
                    x = starts[b] + min(math.floor(u[q, i] * counts[b]), counts[b] - 1)
                else:
                    x = float(np.rint(x))
                lo, hi = math.ceil(lo), math.floor(hi)
            elif col.integer:
                x = float(np.rint(x))
            expected[i, j] = min(max(x, lo), hi)
            q += 1
    np.testing.assert_array_equal(got, expected)
    assert set(np.unique(got[:, 3])) <= {0.2, 0.7} and (got[:, 4] == 2.0).all()


def test_integer_bins_hold_every_whole_number_once():
    for lo, hi, bins in [(1, 16, 10), (0, 3, 10), (-7.5, 12.2, 4), (17, 90, 10), (0, 99999, 7)]:
        schema = Schema((Column("x", "continuous", lower=lo, upper=hi, integer=True),))
        domain = _Domain(schema, bins)
        starts, counts = domain.integer_bins(0)
        whole = np.arange(math.ceil(lo), math.floor(hi) + 1, dtype=float)
        assert counts.sum() == len(whole)
        bins_of_whole = domain.discretise(whole[:, None], schema)[0]
        assert np.array_equal(np.repeat(np.arange(bins), counts), bins_of_whole)
        assert np.array_equal(
            starts[counts > 0], whole[np.searchsorted(bins_of_whole, np.flatnonzero(counts))]
        )


# --------------------------------------------------------------------------- structure


def test_degree_two_network(adult):
    X, schema = adult
    gen = BaynetGenerator(degree=2).fit(X, schema, rng=np.random.default_rng(0))
    sizes = [len(p) for p in gen.parents_]
    assert sizes == [0, 1] + [2] * (len(schema.used) - 2)
    assert sorted(gen.order_) == list(range(len(schema.used)))
    for position, ps in enumerate(gen.parents_):
        assert set(ps) <= set(gen.order_[:position])
    _check_in_domain(gen.sample(1000, rng=np.random.default_rng(1)), schema)


def test_degree_zero_and_degree_above_the_columns():
    rng = np.random.default_rng(0)
    schema = Schema(
        (
            Column("a", "categorical", categories=(0, 1, 2)),
            Column("b", "continuous", lower=0.0, upper=1.0),
        )
    )
    X = np.column_stack([rng.integers(0, 3, 50), rng.random(50)])
    independent = BaynetGenerator(degree=0).fit(X, schema, rng=rng)
    assert [len(p) for p in independent.parents_] == [0, 0]
    full = PrivBayesGenerator(degree=5, epsilon=1.0).fit(X, schema, rng=rng)
    assert [len(p) for p in full.parents_] == [0, 1]
    assert full.noise_scale_ == pytest.approx(2 * (2 - 1) / 0.5)
    _check_in_domain(full.sample(200, rng=rng), schema)
    assert independent.sample(0, rng=rng).shape == (0, 2)
    alone = PrivBayesGenerator(degree=2, epsilon=1.0).fit(X[:, :1], Schema(schema.columns[:1]), rng=rng)
    assert alone.parents_ == [()] and alone.noise_scale_ == pytest.approx(2 / 0.5)
    assert set(np.unique(alone.sample(100, rng=rng))) <= {0.0, 1.0, 2.0}


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"degree": -1}, "degree must be a whole number >= 0"),
        ({"degree": 1.5}, "degree must be a whole number"),
        ({"degree": True}, "degree must be a whole number"),
        ({"bins": 1}, "bins must be a whole number >= 2"),
        ({"bins": 2.5}, "bins must be a whole number >= 2"),
        ({"bins": 50}, "bins=50 is more than the 20 training rows"),
        ({"epsilon": 0.0}, "epsilon must be a positive number"),
        ({"epsilon": -1.0}, "epsilon must be a positive number"),
        ({"epsilon": float("nan")}, "epsilon must be a positive number"),
        ({"epsilon": "1"}, "epsilon must be a positive number"),
    ],
)
def test_parameter_errors_are_raised_by_fit(adult, params, message):
    X, schema = adult
    name = "privbayes" if "epsilon" in params else "baynet"
    gen = create(name, **params)  # the constructor only stores the parameters
    with pytest.raises(ParameterError, match=message):
        gen.fit(X[:20], schema, rng=np.random.default_rng(0))
    if "epsilon" not in params:
        with pytest.raises(ParameterError, match=message):
            PrivBayesGenerator(**params).fit(X[:20], schema, rng=np.random.default_rng(0))


def test_bad_arrays_and_unfitted_sampling(adult):
    X, schema = adult
    with pytest.raises(SchemaError, match="used columns"):
        BaynetGenerator().fit(X[:, :3], schema, rng=np.random.default_rng(0))
    bad = X[:30].copy()
    bad[0, schema.names.index("race")] = 9
    with pytest.raises(SchemaError, match="'race'"):
        BaynetGenerator().fit(bad, schema, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="must be fitted"):
        BaynetGenerator().sample(5, rng=np.random.default_rng(0))
    gen = BaynetGenerator().fit(X[:30], schema, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="n must be a whole number >= 0"):
        gen.sample(-1, rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- fidelity and noise


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("baynet", {"degree": 1}),
        ("baynet", {"degree": 2}),
        ("privbayes", {"degree": 1, "epsilon": 1000.0}),
    ],
)
def test_one_way_marginals_are_kept(adult, name, params):
    X, schema = adult
    gen = create(name, **params).fit(X, schema, rng=np.random.default_rng(11))
    out = gen.sample(len(X), rng=np.random.default_rng(12))
    _check_in_domain(out, schema)
    tv = _tv(X, out, schema)
    assert tv.max() < 0.1, dict(zip(schema.names, tv.round(3), strict=True))


def test_baynet_keeps_relationship_and_marital_status(adult):
    X, schema = adult
    i, j = schema.names.index("relationship"), schema.names.index("marital-status")
    real = _cramers_v(X[:, i], X[:, j])
    out = (
        BaynetGenerator()
        .fit(X, schema, rng=np.random.default_rng(2))
        .sample(len(X), rng=np.random.default_rng(3))
    )
    synthetic = _cramers_v(out[:, i], out[:, j])
    assert synthetic > 0.4
    assert synthetic == pytest.approx(real, abs=0.05)


def test_privbayes_noise_has_the_expected_scale(adult):
    X, schema = adult
    d = len(schema.used)

    def mean_tv(epsilon: float) -> float:
        values = []
        for seed in range(3):
            gen = PrivBayesGenerator(epsilon=epsilon).fit(X, schema, rng=np.random.default_rng(seed))
            assert gen.noise_scale_ == pytest.approx(2 * (d - 1) / (epsilon / 2))
            out = gen.sample(len(X), rng=np.random.default_rng(seed + 100))
            _check_in_domain(out, schema)
            values.append(_tv(X, out, schema).mean())
        return float(np.mean(values))

    loud, quiet = mean_tv(0.01), mean_tv(1000.0)
    assert quiet < 0.05
    assert loud > 0.3
    assert loud > 5 * quiet


# --------------------------------------------------------------------------- metadata


def test_dp_metadata_depends_on_the_domain(adult):
    X, schema = adult
    rng = np.random.default_rng(0)
    inferred = PrivBayesGenerator(epsilon=1.0).fit(X[:300], schema, rng=rng).metadata
    assert inferred["dp_guarantee"] is False
    assert "read off the private data" in inferred["dp_note"]
    assert inferred["epsilon"] == 1.0
    declared_schema = declared(schema)
    assert declared_schema.domain_public
    public = PrivBayesGenerator(epsilon=1.0).fit(X[:300], declared_schema, rng=rng).metadata
    assert public["dp_guarantee"] is True
    assert "epsilon = 1" in public["dp_note"]
    unbounded = PrivBayesGenerator(epsilon=math.inf).fit(X[:300], declared_schema, rng=rng)
    assert unbounded.metadata["dp_guarantee"] is False
    baynet = BaynetGenerator().fit(X[:300], schema, rng=rng).metadata
    assert "dp_guarantee" not in baynet
    assert baynet["params"] == {"degree": 1, "bins": 10}
    assert len(baynet["network"]) == len(schema.used)
    assert PrivBayesGenerator().metadata == {
        "generator": "privbayes",
        "params": {"degree": 1, "epsilon": 1.0, "bins": 10},
    }


@pytest.mark.parametrize("name", ["baynet", "privbayes"])
def test_an_integer_column_beyond_int64_samples_without_overflow(name: str) -> None:
    # A population with +-1e308 in an integer column once ended in an OverflowError (int64 bins)
    # and a release full of -9223372036854775808. Loading now refuses magnitudes from 1e150 (see
    # tests/data); below that, whole numbers beyond int64 are sampled as continuous and rounded.
    from privgame.data.encoding import decode

    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {"age": np.r_[rng.integers(17, 90, 98), [-1e20, 1e20]], "job": rng.choice(list("abc"), 100)}
    )
    schema = infer_schema(table)
    assert schema.columns[0].integer
    X = encode(table, schema)
    out = create(name).fit_sample(X, schema, 50, rng=np.random.default_rng(1))
    assert np.isfinite(out[:, 0]).all() and (np.abs(out[:, 0]) <= 1e20).all()
    age = decode(out, schema)["age"]
    assert age.dtype == np.float64 and (age == np.round(age)).all()  # whole numbers, as floats
    small = decode(encode(table.iloc[:98], schema), schema)["age"]
    assert small.dtype == np.int64  # an ordinary integer column still decodes to int64
