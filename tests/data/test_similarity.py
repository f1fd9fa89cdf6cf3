"""Tests of privgame.data.similarity: a slow reference, hand-computed figures, calibration by simulation."""

from __future__ import annotations

import json
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from privgame.core.errors import ParameterError
from privgame.data.similarity import (
    GowerEncoding,
    RecordSimilarity,
    TableSimilarity,
    dcr_p_values,
    nearest_distances,
    record_similarity,
    table_similarity,
)

# ---- a slow, obvious reference ---------------------------------------------------------------


def gower_matrix(a: np.ndarray, b: np.ndarray, is_categorical: np.ndarray) -> np.ndarray:
    """Every Gower distance between rows of ``a`` and ``b``, one pair at a time.

    The continuous ranges are taken over ``a`` and ``b`` together; a zero range contributes 0.
    """
    both = np.vstack([a, b])
    ranges = both.max(axis=0) - both.min(axis=0)
    out = np.empty((len(a), len(b)))
    for i, row in enumerate(a):
        for j, other in enumerate(b):
            terms = []
            for c, categorical in enumerate(is_categorical):
                if categorical:
                    terms.append(0.0 if row[c] == other[c] else 1.0)
                elif ranges[c] == 0:
                    terms.append(0.0)
                else:
                    terms.append(abs(row[c] - other[c]) / ranges[c])
            out[i, j] = sum(terms) / len(terms)
    return out


def mixed_table(rng: np.random.Generator, n: int, is_categorical: np.ndarray, *, grid: bool) -> np.ndarray:
    """Random rows: codes 0..2 in categorical columns; in continuous ones normal numbers, or,
    with ``grid``, multiples of 1/4 in [0, 1] (many ties, and every Gower term exact)."""
    out = np.empty((n, len(is_categorical)))
    for c, categorical in enumerate(is_categorical):
        if categorical:
            out[:, c] = rng.integers(0, 3, n)
        elif grid:
            out[:, c] = rng.integers(0, 5, n) / 4
        else:
            out[:, c] = rng.normal(0, 10, n)
    return out


def with_full_grid(table: np.ndarray, is_categorical: np.ndarray) -> np.ndarray:
    """``table`` with two rows added so that every continuous column spans exactly [0, 1]."""
    ends = np.zeros((2, table.shape[1]))
    ends[1, ~is_categorical] = 1.0
    return np.vstack([table, ends])


# ---- the fast path against the reference -----------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("grid", [False, True])
def test_nearest_distances_match_the_reference(seed: int, k: int, grid: bool) -> None:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 7))
    is_categorical = rng.random(d) < 0.5
    queries = mixed_table(rng, int(rng.integers(1, 40)), is_categorical, grid=grid)
    reference = mixed_table(rng, int(rng.integers(2, 60)), is_categorical, grid=grid)
    if grid:
        reference = with_full_grid(reference, is_categorical)
    # Some exact copies, so that distance 0 and ties at the minimum occur.
    copies = min(5, len(queries), len(reference))
    reference[:copies] = queries[:copies]
    encoding = GowerEncoding.for_arrays(is_categorical, queries, reference)
    got = nearest_distances(queries, reference, encoding, k=k)
    want = np.sort(gower_matrix(queries, reference, is_categorical), axis=1)[:, :k]
    assert got.shape == (len(queries), k)
    if grid:
        # Quarters over a range of 1: every term and sum is exact, so equality is exact too.
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("share_categorical", [0.0, 0.4, 1.0])
def test_larger_tables_match_the_reference(share_categorical: float) -> None:
    """Enough rows that the sorted reference, the skips and the pivot bound all come into play."""
    rng = np.random.default_rng(11)
    is_categorical = np.arange(7) < round(7 * share_categorical)
    reference = mixed_table(rng, 300, is_categorical, grid=False)
    queries = np.vstack([mixed_table(rng, 150, is_categorical, grid=False), reference[:50]])
    encoding = GowerEncoding.for_arrays(is_categorical, queries, reference)
    want = np.sort(gower_matrix(queries, reference, is_categorical), axis=1)[:, :3]
    np.testing.assert_allclose(
        nearest_distances(queries, reference, encoding, k=3), want, rtol=1e-12, atol=1e-15
    )


def test_distances_do_not_depend_on_row_order() -> None:
    """A distance is a function of the two rows alone, bit for bit, whatever the other rows."""
    rng = np.random.default_rng(3)
    is_categorical = np.array([True, False, True, False, False])
    queries = mixed_table(rng, 40, is_categorical, grid=False)
    reference = mixed_table(rng, 80, is_categorical, grid=False)
    encoding = GowerEncoding.for_arrays(is_categorical, queries, reference)
    first = nearest_distances(queries, reference, encoding, k=2)
    shuffled = nearest_distances(queries, reference[rng.permutation(80)], encoding, k=2)
    np.testing.assert_array_equal(first, shuffled)
    alone = np.array([nearest_distances(q[None], reference, encoding, k=2)[0] for q in queries])
    np.testing.assert_array_equal(first, alone)


def test_the_encoding_spans_every_table() -> None:
    a = np.array([[0.0, 1.0, 5.0], [1.0, 3.0, 5.0]])
    b = np.array([[2.0, -1.0, 5.0]])
    encoding = GowerEncoding.for_arrays(np.array([True, False, False]), a, b)
    np.testing.assert_array_equal(encoding.is_categorical, [True, False, False])
    # Categorical 1; the range of column 1 is 3 - (-1) = 4; column 2 is constant.
    np.testing.assert_array_equal(encoding.scale, [1.0, 0.25, 0.0])
    assert encoding.n_columns == 3
    with pytest.raises(ValueError):
        encoding.scale[0] = 2.0  # read-only


def test_no_distance_matrix_is_built() -> None:
    """4,000 x 4,000 rows: the float64 matrix would take 122 MiB; the search holds a few MiB."""
    rng = np.random.default_rng(5)
    is_categorical = np.array([True, True, False, False])
    queries = mixed_table(rng, 4000, is_categorical, grid=False)
    reference = mixed_table(rng, 4000, is_categorical, grid=False)
    encoding = GowerEncoding.for_arrays(is_categorical, queries, reference)
    # Load (or compile) the kernels outside the trace; 300 queries take the multi-threaded one.
    nearest_distances(queries[:300], reference, encoding, k=2)
    tracemalloc.start()
    try:
        nearest_distances(queries, reference, encoding, k=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024**2


# ---- hand-computed figures -------------------------------------------------------------------

# Columns: a categorical code, then two continuous columns with ranges 60 - 20 = 40 and
# 5000 - 1000 = 4000 over the three tables.
IS_CATEGORICAL = np.array([True, False, False])
TRAIN = np.array([[0, 20, 1000], [1, 30, 3000]], dtype=float)
HOLDOUT = np.array([[0, 40, 1000], [1, 30, 2000]], dtype=float)
SYNTHETIC = np.array([[0, 20, 1000], [1, 40, 2000], [2, 60, 5000], [0, 30, 1000]], dtype=float)

# Column terms summed, per synthetic row, to (train row 0, train row 1, holdout 0, holdout 1):
#   s0 = t0:     0,     1 + 1/4 + 1/2,   0 + 1/2 + 0,     1 + 1/4 + 1/4
#   s1:          1 + 1/2 + 1/4,   0 + 1/4 + 1/4,   1 + 0 + 1/4,   0 + 1/4 + 0
#   s2:          1 + 1 + 1,   1 + 3/4 + 1/2,   1 + 1/2 + 1,   1 + 3/4 + 3/4
#   s3:          0 + 1/4 + 0,   1 + 0 + 1/2,   0 + 1/4 + 0,   1 + 0 + 1/4
SUMS = [
    [Fraction(0), Fraction(7, 4), Fraction(1, 2), Fraction(3, 2)],
    [Fraction(7, 4), Fraction(1, 2), Fraction(5, 4), Fraction(1, 4)],
    [Fraction(3), Fraction(9, 4), Fraction(5, 2), Fraction(5, 2)],
    [Fraction(1, 4), Fraction(3, 2), Fraction(1, 4), Fraction(5, 4)],
]


def _encoding() -> GowerEncoding:
    return GowerEncoding.for_arrays(IS_CATEGORICAL, TRAIN, HOLDOUT, SYNTHETIC)


def _p5(values: list[Fraction]) -> float:
    """numpy's default (linear) 5th percentile of four values: v0 + 0.15 (v1 - v0)."""
    v = sorted(values)
    return float(v[0] + Fraction(15, 100) * (v[1] - v[0]))


def test_hand_computed_distances() -> None:
    encoding = _encoding()
    np.testing.assert_array_equal(encoding.scale, [1.0, 1 / 40, 1 / 4000])
    to_train = nearest_distances(SYNTHETIC, TRAIN, encoding, k=2)
    to_holdout = nearest_distances(SYNTHETIC, HOLDOUT, encoding, k=2)
    for i, sums in enumerate(SUMS):
        np.testing.assert_allclose(to_train[i], [float(v / 3) for v in sorted(sums[:2])], rtol=1e-15)
        np.testing.assert_allclose(to_holdout[i], [float(v / 3) for v in sorted(sums[2:])], rtol=1e-15)


def test_hand_computed_table_figures() -> None:
    result = table_similarity(
        TRAIN, HOLDOUT, SYNTHETIC, _encoding(), rng=np.random.default_rng(0), n_permutations=20_000
    )
    d_train = [min(s[:2]) / 3 for s in SUMS]
    d_holdout = [min(s[2:]) / 3 for s in SUMS]
    # s0 and s2 are closer to train, s1 to holdout, s3 equally close to both: (1 + 0 + 1 + 1/2) / 4.
    assert result.dcr_share == 0.625
    assert result.dcr_train_p5 == pytest.approx(_p5(d_train), rel=1e-12)
    assert result.dcr_holdout_p5 == pytest.approx(_p5(d_holdout), rel=1e-12)
    # NNDR to train: 0, (1/2)/(7/4), (9/4)/3, (1/4)/(3/2); to holdout: (1/2)/(3/2), (1/4)/(5/4),
    # (5/2)/(5/2), (1/4)/(5/4).
    nndr_train = [min(s[:2]) / max(s[:2]) for s in SUMS]
    nndr_holdout = [min(s[2:]) / max(s[2:]) for s in SUMS]
    assert result.nndr_train_p5 == pytest.approx(_p5(nndr_train), rel=1e-12) == pytest.approx(0.025)
    assert result.nndr_holdout_p5 == pytest.approx(_p5(nndr_holdout), rel=1e-12) == pytest.approx(0.2)
    # The pool {t0, t1, h0, h1} has six balanced labellings. The closest records are {t0} for s0,
    # {h1} for s1, {t1} for s2 and {t0, h0} for s3; the doubled share is 5 under the true labels
    # and under {t0, h1} as train, 4 or 3 under the other four: p = 2/6.
    assert result.share_p_value == pytest.approx(1 / 3, abs=0.015)
    assert result.passes and result.alpha == 0.05
    assert (result.n_train, result.n_holdout, result.n_synthetic) == (2, 2, 4)


def test_hand_computed_record_figures() -> None:
    result = record_similarity(TRAIN, HOLDOUT, SYNTHETIC, _encoding())
    assert isinstance(result, RecordSimilarity)
    # t0 is copied by s0; t1 is 1/2 from s1. h0 is 1/4 from s3, h1 1/4 from s1 (sums over 3 columns).
    np.testing.assert_allclose(result.dcr, [0.0, 0.5 / 3], rtol=1e-15)
    np.testing.assert_allclose(result.holdout_dcr, [0.25 / 3, 0.25 / 3], rtol=1e-15)
    # t0: no holdout DCR <= 0, so 1/3; t1: both are <= 1/6, so 3/3.
    np.testing.assert_allclose(result.p_value, [1 / 3, 1.0])


def test_dcr_p_values_count_ties_against_the_member() -> None:
    p = dcr_p_values([0.0, 0.1, 0.2, 0.5, 0.05], [0.1, 0.2, 0.2, 0.3])
    np.testing.assert_allclose(p, [1 / 5, 2 / 5, 4 / 5, 5 / 5, 1 / 5])
    assert dcr_p_values([], [0.3]).shape == (0,)


def test_to_dict_is_json_ready() -> None:
    result = table_similarity(TRAIN, HOLDOUT, SYNTHETIC, _encoding(), rng=np.random.default_rng(0))
    data = result.to_dict()
    assert list(data) == [f.name for f in TableSimilarity.__dataclass_fields__.values()]
    assert json.loads(json.dumps(data)) == data
    assert isinstance(data["passes"], bool) and isinstance(data["n_train"], int)


# ---- copies and memorisation -----------------------------------------------------------------


def test_an_exact_copy_gives_zero_distances_and_the_smallest_p_values() -> None:
    rng = np.random.default_rng(7)
    is_categorical = np.array([True, False, False, True])
    train = mixed_table(rng, 120, is_categorical, grid=False)
    holdout = mixed_table(rng, 49, is_categorical, grid=False)
    encoding = GowerEncoding.for_arrays(is_categorical, train, holdout, train)
    result = record_similarity(train, holdout, train.copy(), encoding)
    np.testing.assert_array_equal(result.dcr, 0.0)
    assert np.all(result.holdout_dcr > 0)
    np.testing.assert_array_equal(result.p_value, 1 / 50)


def test_a_memorising_synthetic_table_fails_the_share_test() -> None:
    rng = np.random.default_rng(8)
    is_categorical = np.array([True, False, False])
    train = mixed_table(rng, 300, is_categorical, grid=False)
    holdout = mixed_table(rng, 200, is_categorical, grid=False)
    synthetic = train[rng.integers(0, len(train), 300)]
    encoding = GowerEncoding.for_arrays(is_categorical, train, holdout, synthetic)
    result = table_similarity(train, holdout, synthetic, encoding, rng=np.random.default_rng(0))
    assert (result.n_train, result.n_holdout, result.n_synthetic) == (200, 200, 300)
    # Copies of the train rows kept by the subsample are at distance 0; the rest still often
    # sit nearer to train. Every relabelling gives a smaller share.
    assert result.dcr_share > 0.7
    assert result.share_p_value == 1 / 1000
    assert not result.passes
    assert result.dcr_train_p5 == 0.0 and result.nndr_train_p5 == 0.0
    assert result.dcr_holdout_p5 > 0.0


def test_identical_train_and_holdout_tie_everywhere() -> None:
    """Equal rows in train and holdout give bit-identical distances, so each synthetic row ties."""
    rng = np.random.default_rng(9)
    is_categorical = np.array([True, False, True, False])
    train = mixed_table(rng, 50, is_categorical, grid=False)
    synthetic = mixed_table(rng, 80, is_categorical, grid=False)
    encoding = GowerEncoding.for_arrays(is_categorical, train, synthetic)
    holdout = train[rng.permutation(50)]
    result = table_similarity(train, holdout, synthetic, encoding, rng=np.random.default_rng(1))
    assert result.dcr_share == 0.5
    assert result.dcr_train_p5 == result.dcr_holdout_p5
    assert result.passes


def test_the_subsample_is_drawn_from_rng() -> None:
    rng = np.random.default_rng(10)
    is_categorical = np.array([False, True])
    train = mixed_table(rng, 90, is_categorical, grid=False)
    holdout = mixed_table(rng, 30, is_categorical, grid=False)
    synthetic = mixed_table(rng, 60, is_categorical, grid=False)
    encoding = GowerEncoding.for_arrays(is_categorical, train, holdout, synthetic)
    runs = [
        table_similarity(train, holdout, synthetic, encoding, rng=np.random.default_rng(seed)).to_dict()
        for seed in (1, 1, 2)
    ]
    assert runs[0] == runs[1]
    assert runs[0]["dcr_train_p5"] != runs[2]["dcr_train_p5"]
    assert runs[0]["n_train"] == runs[0]["n_holdout"] == 30
    swapped = table_similarity(holdout, train, synthetic, encoding, rng=np.random.default_rng(1))
    assert swapped.n_train == swapped.n_holdout == 30


# ---- calibration by simulation ---------------------------------------------------------------


def _margin(alpha: float, replications: int) -> float:
    """Four standard errors of a share of ``replications`` trials with chance ``alpha``."""
    return 4 * math.sqrt(alpha * (1 - alpha) / replications)


@pytest.mark.parametrize("kind", ["continuous", "coarse"])
def test_record_p_values_are_valid_when_synthetic_is_independent(kind: str) -> None:
    """Train, holdout and synthetic drawn from one distribution: P(p <= a) <= a, and = a for
    a multiple of 1/20 without ties (19 holdout rows). Counting ties for the member (<) instead
    of against it would make coarse tables' p-values too small: that rule fails the same check."""
    replications = 1500
    rng = np.random.default_rng(12)
    is_categorical = (
        np.array([False, False, False]) if kind == "continuous" else np.array([True, True, False])
    )
    alphas = (0.05, 0.1, 0.5)
    below = np.zeros(len(alphas))
    below_wrong_rule = np.zeros(len(alphas))
    for _ in range(replications):
        train, holdout, synthetic = (
            mixed_table(rng, n, is_categorical, grid=kind == "coarse") for n in (20, 19, 30)
        )
        encoding = GowerEncoding.for_arrays(is_categorical, train, holdout, synthetic)
        result = record_similarity(train, holdout, synthetic, encoding)
        strictly = np.searchsorted(np.sort(result.holdout_dcr), result.dcr, side="left")
        wrong = (1 + strictly) / 20
        for a, alpha in enumerate(alphas):
            # Rows of one replication share the holdout: average them, then over replications.
            below[a] += np.mean(result.p_value <= alpha + 1e-12)
            below_wrong_rule[a] += np.mean(wrong <= alpha + 1e-12)
    below /= replications
    below_wrong_rule /= replications
    for a, alpha in enumerate(alphas):
        assert below[a] <= alpha + _margin(alpha, replications)
        if kind == "continuous":
            assert below[a] >= alpha - _margin(alpha, replications)
    if kind == "coarse":
        assert below_wrong_rule[0] > 0.05 + _margin(0.05, replications)


@pytest.mark.parametrize("kind", ["continuous", "coarse"])
def test_the_share_test_holds_its_level_when_synthetic_is_independent(kind: str) -> None:
    """With ten synthetic rows per train row, a sign test over the synthetic rows rejects far
    more often than alpha (checked here too); the permutation test passes at rate 1 - alpha."""
    replications = 400
    alpha = 0.1
    rng = np.random.default_rng(13)
    is_categorical = np.array([False]) if kind == "continuous" else np.array([True, True, False])
    passes = 0
    sign_rejects = 0
    for _ in range(replications):
        train, holdout, synthetic = (
            mixed_table(rng, n, is_categorical, grid=kind == "coarse") for n in (30, 40, 300)
        )
        encoding = GowerEncoding.for_arrays(is_categorical, train, holdout, synthetic)
        result = table_similarity(
            train, holdout, synthetic, encoding, rng=rng, alpha=alpha, n_permutations=199
        )
        passes += result.passes
        if kind == "continuous":
            to_train = nearest_distances(synthetic, train, encoding)[:, 0]
            to_holdout = nearest_distances(synthetic, holdout[:30], encoding)[:, 0]
            closer, farther = int(np.sum(to_train < to_holdout)), int(np.sum(to_train > to_holdout))
            sign_rejects += binom.sf(closer - 1, closer + farther, 0.5) < alpha
    rate = passes / replications
    assert abs(rate - (1 - alpha)) <= _margin(alpha, replications)
    if kind == "continuous":
        assert sign_rejects / replications > alpha + _margin(alpha, replications)


# ---- errors ----------------------------------------------------------------------------------


def test_errors_name_the_problem() -> None:
    encoding = _encoding()
    empty = np.empty((0, 3))
    with pytest.raises(ParameterError, match="train has no rows"):
        record_similarity(empty, HOLDOUT, SYNTHETIC, encoding)
    with pytest.raises(ParameterError, match="synthetic has no rows"):
        table_similarity(TRAIN, HOLDOUT, empty, encoding, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match=r"holdout has shape \(2, 2\) but the encoding has 3 columns"):
        record_similarity(TRAIN, HOLDOUT[:, :2], SYNTHETIC, encoding)
    with pytest.raises(ParameterError, match="reference has shape"):
        nearest_distances(SYNTHETIC, TRAIN[0], encoding)
    with_nan = SYNTHETIC.copy()
    with_nan[1, 2] = np.nan
    with pytest.raises(ParameterError, match="synthetic holds nan or infinite values in 1 rows"):
        record_similarity(TRAIN, HOLDOUT, with_nan, encoding)
    with pytest.raises(ParameterError, match="nan or infinite"):
        GowerEncoding.for_arrays(IS_CATEGORICAL, TRAIN, with_nan)
    with pytest.raises(ParameterError, match="k=3 neighbours were asked for but the reference has 2 rows"):
        nearest_distances(SYNTHETIC, TRAIN, encoding, k=3)
    with pytest.raises(ParameterError, match="k=0"):
        nearest_distances(SYNTHETIC, TRAIN, encoding, k=0)
    with pytest.raises(ParameterError, match="whole number"):
        nearest_distances(SYNTHETIC, TRAIN, encoding, k=1.5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="at least two in each"):
        table_similarity(TRAIN[:1], HOLDOUT, SYNTHETIC, encoding, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="alpha must lie in"):
        table_similarity(TRAIN, HOLDOUT, SYNTHETIC, encoding, rng=np.random.default_rng(0), alpha=1.0)
    with pytest.raises(ParameterError, match="n_permutations"):
        table_similarity(TRAIN, HOLDOUT, SYNTHETIC, encoding, rng=np.random.default_rng(0), n_permutations=0)
    with pytest.raises(ParameterError, match=r"numpy\.random\.Generator"):
        table_similarity(TRAIN, HOLDOUT, SYNTHETIC, encoding, rng=np.random.RandomState(0))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="must be a GowerEncoding"):
        nearest_distances(SYNTHETIC, TRAIN, IS_CATEGORICAL)  # type: ignore[arg-type]


def test_encoding_errors() -> None:
    with pytest.raises(ParameterError, match="needs the tables"):
        GowerEncoding.for_arrays(IS_CATEGORICAL)
    with pytest.raises(ParameterError, match=r"Every table passed to GowerEncoding\.for_arrays is empty"):
        GowerEncoding.for_arrays(IS_CATEGORICAL, np.empty((0, 3)))
    with pytest.raises(ParameterError, match="1-D boolean array"):
        GowerEncoding.for_arrays(np.array([[True]]), TRAIN)
    with pytest.raises(ParameterError, match="table 2 has shape"):
        GowerEncoding.for_arrays(IS_CATEGORICAL, TRAIN, TRAIN[:, :2])
    with pytest.raises(ParameterError, match="scale must be 1 for every categorical column"):
        GowerEncoding(IS_CATEGORICAL, np.array([0.5, 1.0, 1.0]))
    with pytest.raises(ParameterError, match="scale has shape"):
        GowerEncoding(IS_CATEGORICAL, np.ones(2))


def test_p_value_errors() -> None:
    with pytest.raises(ParameterError, match="nonmember_dcr is empty"):
        dcr_p_values([0.1], [])
    with pytest.raises(ParameterError, match="member_dcr holds nan"):
        dcr_p_values([np.nan], [0.1])
    with pytest.raises(ParameterError, match="one-dimensional"):
        dcr_p_values([[0.1]], [0.1])
