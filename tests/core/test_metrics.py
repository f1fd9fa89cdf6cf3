"""Tests of privgame.core.metrics: hand-computed cases, edge cases, and properties against sklearn."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score, roc_curve

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.core.metrics import (
    MissRate,
    abs_differences,
    auc,
    auc_ci,
    ecdf,
    hoeffding_half_width,
    miss_rate,
    miss_rate_curve,
    percentiles,
    rmsd,
    roc_points,
    summarize,
    tpr_at_fpr,
)

NAN = float("nan")
SCORES = [0.1, 0.4, 0.35, 0.8]
LABELS = [0, 0, 1, 1]
Z95 = NormalDist().inv_cdf(0.975)

# ---- hypothesis strategies -----------------------------------------------------------------

# A coarse grid forces many ties; the fine floats exercise the general case.
_score = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)


@st.composite
def games(draw: st.DrawFn, min_per_class: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels with at least ``min_per_class`` runs of each class."""
    n_in = draw(st.integers(min_per_class, 25))
    n_out = draw(st.integers(min_per_class, 25))
    scores = draw(st.lists(_score, min_size=n_in + n_out, max_size=n_in + n_out))
    labels = np.array([1] * n_in + [0] * n_out)
    order = draw(st.permutations(range(n_in + n_out)))
    return np.array(scores, dtype=float), labels[list(order)]


_risk = st.one_of(
    st.sampled_from([0.5, 0.8, 0.9, 1.0, NAN]),
    st.floats(min_value=0.0, max_value=1.0),
)


@st.composite
def risk_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 30))
    ms = draw(st.lists(_risk, min_size=n, max_size=n))
    t = draw(st.lists(_risk, min_size=n, max_size=n))
    return np.array(ms, dtype=float), np.array(t, dtype=float)


def _brute_placements(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong placement values straight from the definition, O(n_in * n_out)."""
    pos, neg = s[y == 1], s[y == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return psi.mean(axis=1), psi.mean(axis=0)


# ---- module surface ------------------------------------------------------------------------


def test_all_lists_every_public_name() -> None:
    public = {
        name
        for name, obj in vars(metrics).items()
        if not name.startswith("_")
        and getattr(obj, "__module__", None) == "privgame.core.metrics"
        and callable(obj)
    }
    assert public == {name for name in metrics.__all__ if callable(getattr(metrics, name))}


# ---- roc_points ----------------------------------------------------------------------------


def test_roc_points_by_hand() -> None:
    curve = roc_points(SCORES, LABELS)
    np.testing.assert_array_equal(curve.thresholds, [np.inf, 0.8, 0.4, 0.35, 0.1])
    np.testing.assert_array_equal(curve.fpr, [0, 0, 0.5, 0.5, 1])
    np.testing.assert_array_equal(curve.tpr, [0, 0.5, 0.5, 1, 1])
    np.testing.assert_array_equal(curve.fnr, [1, 0.5, 0.5, 0, 0])
    assert (curve.n_in, curve.n_out) == (2, 2)


def test_roc_points_ties_move_together() -> None:
    # Runs with equal scores cross every threshold at once: no point splits them.
    curve = roc_points([0.5, 0.5, 0.5, 0.2], [1, 0, 0, 1])
    np.testing.assert_array_equal(curve.thresholds, [np.inf, 0.5, 0.2])
    np.testing.assert_array_equal(curve.fpr, [0, 1, 1])
    np.testing.assert_array_equal(curve.tpr, [0, 0.5, 1])


def test_roc_points_are_read_only() -> None:
    curve = roc_points(SCORES, LABELS)
    with pytest.raises(ValueError, match="read-only"):
        curve.fpr[0] = 1.0


def test_roc_points_one_class_gives_nan_for_the_missing_rate() -> None:
    curve = roc_points([0.3, 0.7], [1, 1])
    assert np.all(np.isnan(curve.fpr))
    np.testing.assert_array_equal(curve.tpr, [0, 0.5, 1])
    curve = roc_points([0.3, 0.7], [0, 0])
    assert np.all(np.isnan(curve.tpr)) and np.all(np.isnan(curve.fnr))
    np.testing.assert_array_equal(curve.fpr, [0, 0.5, 1])


def test_roc_points_empty() -> None:
    curve = roc_points([], [])
    np.testing.assert_array_equal(curve.thresholds, [np.inf])
    assert np.isnan(curve.fpr).all() and np.isnan(curve.tpr).all()
    assert (curve.n_in, curve.n_out) == (0, 0)


@settings(max_examples=60, deadline=None)
@given(games())
def test_roc_points_match_sklearn(game: tuple[np.ndarray, np.ndarray]) -> None:
    s, y = game
    fpr, tpr, thresholds = roc_curve(y, s, drop_intermediate=False)
    curve = roc_points(s, y)
    np.testing.assert_array_equal(curve.thresholds, thresholds)
    np.testing.assert_allclose(curve.fpr, fpr, atol=1e-12)
    np.testing.assert_allclose(curve.tpr, tpr, atol=1e-12)
    np.testing.assert_allclose(curve.fnr, 1 - tpr, atol=1e-12)
    # Eq. 5 and 6 at each threshold, straight from the definition.
    for k, gamma in enumerate(curve.thresholds):
        guess = s >= gamma
        assert curve.fpr[k] == pytest.approx(np.mean(guess[y == 0]))
        assert curve.fnr[k] == pytest.approx(np.mean(~guess[y == 1]))


# ---- auc -----------------------------------------------------------------------------------


def test_auc_by_hand() -> None:
    assert auc(SCORES, LABELS) == 0.75
    # in {0.5, 0.9} vs out {0.5, 0.2}: pairs 0.5 (tie) + 1 + 1 + 1 = 3.5 of 4.
    assert auc([0.5, 0.5, 0.2, 0.9], [1, 0, 0, 1]) == 0.875
    assert auc([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1]) == 0.0


def test_auc_accepts_booleans_and_lists() -> None:
    assert auc(np.array(SCORES), np.array(LABELS, dtype=bool)) == 0.75


def test_auc_all_tied_is_one_half() -> None:
    assert auc([0.3] * 6, [0, 1, 0, 1, 1, 0]) == 0.5


def test_auc_perfect_separation_is_one() -> None:
    assert auc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == 1.0


@pytest.mark.parametrize(
    ("scores", "labels"),
    [([0.1, 0.9], [1, 1]), ([0.1, 0.9], [0, 0]), ([0.5], [1]), ([], [])],
)
def test_auc_undefined_without_both_classes(scores: list[float], labels: list[int]) -> None:
    assert math.isnan(auc(scores, labels))


def test_auc_is_the_correctly_rounded_fraction() -> None:
    # 4 of 5 pairs won: exactly 0.8, so comparisons with t = 0.8 behave as written.
    value = auc([0.1, 0.2, 0.3, 0.4, 0.5, 0.15], [1, 1, 1, 1, 1, 0])
    assert value == 0.8
    assert not value > 0.8


@settings(max_examples=100, deadline=None)
@given(games())
def test_auc_matches_sklearn_and_exact_fraction(game: tuple[np.ndarray, np.ndarray]) -> None:
    s, y = game
    value = auc(s, y)
    assert value == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    pos, neg = s[y == 1], s[y == 0]
    twice_u = int(np.sum(2 * (pos[:, None] > neg) + (pos[:, None] == neg)))
    assert value == float(Fraction(twice_u, 2 * pos.size * neg.size))
    # Reversing the scores swaps the roles of the classes.
    assert auc(-s, y) == pytest.approx(1 - value, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(_score, min_size=1, max_size=40))
def test_midranks_match_scipy(values: list[float]) -> None:
    x = np.array(values)
    np.testing.assert_array_equal(metrics._midranks(x), rankdata(x, method="average"))


# ---- auc_ci --------------------------------------------------------------------------------


def test_auc_ci_by_hand() -> None:
    # Placements: in (0.35, 0.8) beat 1/2 and 2/2 of the outs; outs (0.1, 0.4) are beaten by
    # 2/2 and 1/2 of the ins. Sample variances 0.125 each: var = 0.125/2 + 0.125/2 = 0.125.
    low, high = auc_ci(SCORES, LABELS, method="wald")
    assert low == pytest.approx(0.75 - Z95 * math.sqrt(0.125))
    assert high == 1.0  # 0.75 + 0.69 clipped
    # On the logit scale: logit(0.75) = log 3, se / (A (1 - A)) = sqrt(0.125) / 0.1875, with the
    # Student-t quantile of one degree of freedom (one discordant run per class: the 'in' at 0.35
    # and the 'out' at 0.4), widened to the Wilson interval of 0.75 over 2 trials.
    from scipy.stats import t as student

    low, high = auc_ci(SCORES, LABELS)
    half = student.ppf(0.975, 1) * math.sqrt(0.125) / 0.1875
    z2 = Z95**2
    centre, spread = (0.75 + z2 / 4) / (1 + z2 / 2), Z95 * math.sqrt(0.75 * 0.25 / 2 + z2 / 16) / (1 + z2 / 2)
    assert low == pytest.approx(min(1 / (1 + math.exp(-(math.log(3) - half))), centre - spread))
    assert high == pytest.approx(max(1 / (1 + math.exp(-(math.log(3) + half))), centre + spread))
    assert 0 <= low < 0.75 < high <= 1


def test_auc_ci_level_changes_width() -> None:
    rng = np.random.default_rng(3)
    s = np.r_[rng.normal(0.5, 1, 60), rng.normal(0, 1, 60)]
    y = np.r_[np.ones(60), np.zeros(60)]
    lo90, hi90 = auc_ci(s, y, level=0.9, method="wald")
    lo99, hi99 = auc_ci(s, y, level=0.99, method="wald")
    assert lo99 < lo90 < auc(s, y) < hi90 < hi99
    assert (hi99 - auc(s, y)) / (hi90 - auc(s, y)) == pytest.approx(
        NormalDist().inv_cdf(0.995) / NormalDist().inv_cdf(0.95)
    )


def test_auc_ci_zero_variance() -> None:
    # The plain interval collapses; the logit interval of a perfect separation is the Wilson
    # interval of a proportion 1 over min(n_in, n_out) trials, so it claims no certainty.
    assert auc_ci([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], method="wald") == (1.0, 1.0)
    low, high = auc_ci([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])
    assert high == 1.0 and low == pytest.approx(2 / (2 + Z95**2))
    low, high = auc_ci(np.r_[np.zeros(100), np.ones(100)], np.r_[np.zeros(100), np.ones(100)])
    assert low == pytest.approx(100 / (100 + Z95**2)) and low > 0.96
    low, high = auc_ci([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1])  # perfectly wrong
    assert low == 0.0 and high == pytest.approx(Z95**2 / (2 + Z95**2))
    # Every score tied: the attack tells no run from another.
    assert auc_ci([0.4] * 6, [0, 1, 0, 1, 1, 0]) == (0.5, 0.5)
    with pytest.raises(ParameterError, match="method must be"):
        auc_ci([0.4] * 6, [0, 1, 0, 1, 1, 0], method="exact")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scores", "labels"),
    [([0.1, 0.9], [1, 1]), ([], []), ([0.1, 0.5, 0.9], [1, 0, 0]), ([0.2, 0.6], [1, 0])],
)
def test_auc_ci_undefined(scores: list[float], labels: list[int]) -> None:
    low, high = auc_ci(scores, labels)
    assert math.isnan(low) and math.isnan(high)


@settings(max_examples=60, deadline=None)
@given(games(min_per_class=2), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_auc_ci_matches_brute_force_delong(game: tuple[np.ndarray, np.ndarray], level: float) -> None:
    s, y = game
    v10, v01 = _brute_placements(s, y)
    var = np.var(v10, ddof=1) / v10.size + np.var(v01, ddof=1) / v01.size
    half = NormalDist().inv_cdf(0.5 + level / 2) * math.sqrt(var)
    value = auc(s, y)
    low, high = auc_ci(s, y, level=level, method="wald")
    assert low == pytest.approx(max(0.0, value - half), abs=1e-9)
    assert high == pytest.approx(min(1.0, value + half), abs=1e-9)
    assert 0.0 <= low <= value <= high <= 1.0


def test_auc_ci_covers_the_true_auc() -> None:
    # 'in' ~ N(d, 1), 'out' ~ N(0, 1): true AUC = Phi(d / sqrt 2).
    rng = np.random.default_rng(11)
    d, n, reps = 0.6, 80, 400
    truth = NormalDist().cdf(d / math.sqrt(2))
    y = np.r_[np.ones(n), np.zeros(n)]
    hits = 0
    for _ in range(reps):
        s = np.r_[rng.normal(d, 1, n), rng.normal(0, 1, n)]
        low, high = auc_ci(s, y)
        hits += low <= truth <= high
    assert 0.91 <= hits / reps <= 0.985


# ---- tpr_at_fpr ----------------------------------------------------------------------------


def test_tpr_at_fpr_by_hand() -> None:
    # Points (fpr, tpr): (0,0), (0,.5), (.5,.5), (.5,1), (1,1).
    assert tpr_at_fpr(SCORES, LABELS, 0.0) == 0.5
    assert tpr_at_fpr(SCORES, LABELS, 0.49) == 0.5
    assert tpr_at_fpr(SCORES, LABELS, 0.5) == 1.0
    assert tpr_at_fpr([0.9, 0.1], [0, 1], 0.1) == 0.0  # only the (0, 0) point qualifies


def test_tpr_at_fpr_exact_rate_boundary() -> None:
    # 1 of 100 'out' runs above every 'in' run: FPR exactly 0.01 qualifies for fpr=0.01.
    s = np.r_[[2.0], np.zeros(99), np.ones(10)]
    y = np.r_[np.zeros(100), np.ones(10)]
    assert tpr_at_fpr(s, y, 0.01) == 1.0
    assert tpr_at_fpr(s, y, 0.0099) == 0.0


def test_tpr_at_fpr_undefined_without_both_classes() -> None:
    assert math.isnan(tpr_at_fpr([0.2, 0.3], [1, 1], 0.1))
    assert math.isnan(tpr_at_fpr([], [], 0.1))


@settings(max_examples=60, deadline=None)
@given(games(), st.sampled_from([0.0, 0.01, 0.1, 0.3, 1.0]))
def test_tpr_at_fpr_matches_sklearn_curve(game: tuple[np.ndarray, np.ndarray], f: float) -> None:
    s, y = game
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    assert tpr_at_fpr(s, y, f) == pytest.approx(tpr[fpr <= f + 1e-12].max())


# ---- hoeffding_half_width ------------------------------------------------------------------


def test_hoeffding_by_hand() -> None:
    assert hoeffding_half_width(500) == pytest.approx(math.sqrt(math.log(40) / 1000))
    assert hoeffding_half_width(500, rho=0.2) == pytest.approx(0.0479853, abs=1e-7)
    assert hoeffding_half_width(np.int64(2000), 0.2) == pytest.approx(hoeffding_half_width(500, 0.2) / 2)


@pytest.mark.parametrize("n", [0, -3, 1.5, True, "10"])
def test_hoeffding_rejects_bad_n(n: object) -> None:
    with pytest.raises(ParameterError, match="n must be a whole number of runs >= 1"):
        hoeffding_half_width(n)  # type: ignore[arg-type]


@pytest.mark.parametrize("rho", [0, 1, -0.1, 1.5, NAN])
def test_hoeffding_rejects_bad_rho(rho: float) -> None:
    with pytest.raises(ParameterError, match=r"rho must lie in \(0, 1\)"):
        hoeffding_half_width(100, rho)


# ---- miss_rate -----------------------------------------------------------------------------

# Four records, t = 0.8:
#   record  R_MS  R_T   R_MS > t   R_T <= t   missed
#   a       0.90  0.70  yes        yes        yes
#   b       0.85  0.90  yes        no         no
#   c       0.50  0.60  no         yes        no
#   d       0.95  0.80  yes        yes (=t)   yes
# at_risk = 3, missed = 2, MR = 2/3.
R_MS = [0.90, 0.85, 0.50, 0.95]
R_T = [0.70, 0.90, 0.60, 0.80]


def test_miss_rate_by_hand() -> None:
    mr = miss_rate(R_MS, R_T, 0.8)
    assert mr == MissRate(rate=2 / 3, missed=2, at_risk=3, threshold=0.8, excluded=0)
    assert str(mr) == mr.describe()
    assert "Miss rate 0.67: 2 of the 3 records" in mr.describe()
    assert "t=0.8" in mr.describe()


def test_miss_rate_risk_equal_to_t_is_not_at_risk() -> None:
    mr = miss_rate([0.8, 0.9], [0.1, 0.1], 0.8)
    assert (mr.at_risk, mr.missed, mr.rate) == (1, 1, 1.0)


def test_miss_rate_undefined_when_nobody_at_risk() -> None:
    mr = miss_rate([0.5, 0.8, 0.7], [0.9, 0.95, 0.2], 0.8)
    assert mr.rate is None
    assert (mr.missed, mr.at_risk) == (0, 0)
    assert "undefined: no record has model-seeded risk above t=0.8" in str(mr)
    assert "0.00" not in str(mr)


def test_miss_rate_empty_is_undefined() -> None:
    mr = miss_rate([], [], 0.8)
    assert mr.rate is None and mr.at_risk == 0
    assert "undefined" in mr.describe()


def test_miss_rate_leaves_out_undefined_risks_and_counts_them() -> None:
    mr = miss_rate([*R_MS, NAN, 0.99], [*R_T, 0.1, NAN], 0.8)
    assert (mr.rate, mr.missed, mr.at_risk, mr.excluded) == (2 / 3, 2, 3, 2)
    assert "2 records with an undefined risk left out" in mr.describe()
    one = miss_rate([0.9, NAN], [0.1, 0.1], 0.8)
    assert "1 record with an undefined risk left out" in one.describe()


def test_miss_rate_accepts_none_as_undefined() -> None:
    assert miss_rate([0.9, None], [0.1, 0.2], 0.8).excluded == 1


def test_miss_rate_curve_by_hand() -> None:
    curve = miss_rate_curve(R_MS, R_T, [0.6, 0.8, 0.99])
    # t = 0.6: at risk a, b, d (c = 0.5 not); none of them has R_T <= 0.6 -> 0/3.
    assert [(m.missed, m.at_risk) for m in curve] == [(0, 3), (2, 3), (0, 0)]
    assert [m.rate for m in curve] == [0.0, 2 / 3, None]
    assert [m.threshold for m in curve] == [0.6, 0.8, 0.99]


@settings(max_examples=80, deadline=None)
@given(risk_pairs(), st.sampled_from([0.0, 0.5, 0.8, 0.9, 1.0]))
def test_miss_rate_matches_definition(pairs: tuple[np.ndarray, np.ndarray], t: float) -> None:
    ms, tr = pairs
    rows = [(a, b) for a, b in zip(ms, tr, strict=True) if not (math.isnan(a) or math.isnan(b))]
    at_risk = sum(a > t for a, _ in rows)
    missed = sum(a > t and b <= t for a, b in rows)
    mr = miss_rate(ms, tr, t)
    assert (mr.at_risk, mr.missed, mr.excluded) == (at_risk, missed, len(ms) - len(rows))
    assert mr.rate == (missed / at_risk if at_risk else None)
    assert miss_rate_curve(ms, tr, [t]) == [mr]


# ---- rmsd, abs_differences -----------------------------------------------------------------


def test_rmsd_by_hand() -> None:
    # differences 0.1 and -0.3: sqrt((0.01 + 0.09) / 2) = sqrt(0.05)
    assert rmsd([0.5, 0.7], [0.6, 0.4]) == pytest.approx(math.sqrt(0.05))
    assert rmsd([0.5, 0.7, NAN], [0.6, 0.4, 0.9]) == pytest.approx(math.sqrt(0.05))
    assert rmsd([0.3, 0.3], [0.3, 0.3]) == 0.0


def test_rmsd_undefined_for_no_records() -> None:
    assert math.isnan(rmsd([], []))
    assert math.isnan(rmsd([NAN], [0.5]))


@settings(max_examples=60, deadline=None)
@given(risk_pairs())
def test_rmsd_matches_definition(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    ms, tr = pairs
    keep = ~(np.isnan(ms) | np.isnan(tr))
    expected = math.sqrt(np.mean((tr[keep] - ms[keep]) ** 2)) if keep.any() else NAN
    assert rmsd(ms, tr) == pytest.approx(expected, nan_ok=True)


def test_abs_differences_stay_aligned_with_records() -> None:
    out = abs_differences([0.5, NAN, 0.9], [0.75, 0.4, 0.5])
    np.testing.assert_allclose(out, [0.25, NAN, 0.4])
    assert abs_differences([], []).shape == (0,)


# ---- ecdf, percentiles ---------------------------------------------------------------------


def test_ecdf_by_hand() -> None:
    x, f = ecdf([0.3, 0.1, 0.3, NAN, 0.2])
    np.testing.assert_array_equal(x, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(f, [0.25, 0.5, 1.0])


def test_ecdf_empty() -> None:
    x, f = ecdf([])
    assert x.shape == f.shape == (0,)
    x, f = ecdf([NAN, NAN])
    assert x.shape == f.shape == (0,)


@settings(max_examples=40, deadline=None)
@given(st.lists(_risk, max_size=40))
def test_ecdf_is_the_share_at_or_below(values: list[float]) -> None:
    v = np.array(values, dtype=float)
    x, f = ecdf(v)
    defined = v[~np.isnan(v)]
    assert np.all(np.diff(x) > 0)
    for xi, fi in zip(x, f, strict=True):
        assert fi == pytest.approx(np.mean(defined <= xi))
    if defined.size:
        assert f[-1] == 1.0 and f[0] > 0


def test_percentiles_by_hand() -> None:
    got = percentiles([5, 1, 4, 2, 3, NAN])
    assert list(got) == [10, 50, 90]
    assert got == pytest.approx({10: 1.4, 50: 3.0, 90: 4.6})
    assert percentiles([0.2, 0.4], q=(0, 100)) == {0: 0.2, 100: 0.4}


def test_percentiles_of_nothing_are_nan() -> None:
    got = percentiles([NAN])
    assert list(got) == [10, 50, 90] and all(math.isnan(v) for v in got.values())


@pytest.mark.parametrize("q", [(101,), (-1,), (2.5,), (True,)])
def test_percentiles_reject_bad_q(q: tuple[object, ...]) -> None:
    with pytest.raises(ParameterError, match=r"whole number in \[0, 100\]"):
        percentiles([0.1, 0.2], q=q)  # type: ignore[arg-type]


# ---- summarize -----------------------------------------------------------------------------


def test_summarize_by_hand() -> None:
    out = summarize([*R_MS, NAN], [*R_T, 0.5])
    json.dumps(out, allow_nan=False)  # JSON-ready: no nan anywhere
    assert out["records"] == 5
    assert out["records_with_defined_risk"] == 4
    assert out["records_excluded"] == 1
    assert out["threshold"] == 0.8
    # diffs R_T - R_MS: -0.2, 0.05, 0.1, -0.15 -> squares .04 .0025 .01 .0225 -> mean .01875
    assert out["rmsd"] == pytest.approx(math.sqrt(0.01875))
    assert out["miss_rate"] == pytest.approx(2 / 3)
    assert (out["missed"], out["at_risk"]) == (2, 3)
    assert out["miss_rate_text"].startswith("Miss rate 0.67")
    assert out["above_t_model_seeded"] == 3
    assert out["above_t_traditional"] == 1  # only 0.90
    assert out["mean_model_seeded"] == pytest.approx(0.8)
    assert out["mean_traditional"] == pytest.approx(0.75)
    assert out["percentiles_model_seeded"] == pytest.approx({"p10": 0.605, "p50": 0.875, "p90": 0.935})
    assert out["percentiles_traditional"]["p50"] == pytest.approx(0.75)
    assert out["percentiles_abs_difference"]["p50"] == pytest.approx(0.125)
    assert out["max_abs_difference"] == pytest.approx(0.2)
    # |diff| > 0.1: 0.2 and 0.15 (0.1 itself does not count, up to rounding of 0.6 - 0.5)
    assert out["difference_cutoff"] == 0.1
    assert out["share_abs_difference_above"] == pytest.approx(0.5)


def test_summarize_undefined_miss_rate_is_none_with_text() -> None:
    out = summarize([0.5, 0.6], [0.9, 0.7], threshold=0.8)
    assert out["miss_rate"] is None
    assert out["at_risk"] == 0 and out["above_t_traditional"] == 1
    assert "undefined: no record has model-seeded risk above t=0.8" in out["miss_rate_text"]
    json.dumps(out, allow_nan=False)


def test_summarize_of_no_records_is_all_none() -> None:
    out = summarize([NAN], [0.5])
    json.dumps(out, allow_nan=False)
    assert out["records"] == 1 and out["records_with_defined_risk"] == 0
    for key in ("rmsd", "miss_rate", "mean_model_seeded", "max_abs_difference"):
        assert out[key] is None
    assert out["share_abs_difference_above"] is None
    assert out["percentiles_abs_difference"] == {"p10": None, "p50": None, "p90": None}


def test_summarize_threshold_and_difference_options() -> None:
    out = summarize(R_MS, R_T, threshold=0.6, difference=0.16)
    assert (out["missed"], out["at_risk"], out["above_t_traditional"]) == (0, 3, 3)
    assert out["share_abs_difference_above"] == pytest.approx(0.25)


# ---- validation ----------------------------------------------------------------------------


def test_scores_and_labels_must_have_equal_length() -> None:
    with pytest.raises(ParameterError, match="same length, got 3 scores and 2 labels"):
        auc([0.1, 0.2, 0.3], [0, 1])


def test_labels_must_be_zero_or_one() -> None:
    with pytest.raises(ParameterError, match=r"labels must be 0 \('out'\) or 1 \('in'\)"):
        roc_points([0.1, 0.2], [0, 2])


@pytest.mark.parametrize("bad", [NAN, np.inf, -np.inf])
def test_scores_must_be_finite(bad: float) -> None:
    with pytest.raises(ParameterError, match="scores must be finite numbers, but 1 are"):
        auc_ci([0.1, bad, 0.3, 0.4], [0, 1, 0, 1])


def test_inputs_must_be_one_dimensional_numbers() -> None:
    with pytest.raises(ParameterError, match="scores must be one-dimensional"):
        auc([[0.1, 0.2]], [[0, 1]])
    with pytest.raises(ParameterError, match="labels must be a sequence of numbers"):
        auc([0.1, 0.2], ["in", "out"])


@pytest.mark.parametrize("level", [0, 1, 95])
def test_auc_ci_level_must_be_a_probability(level: float) -> None:
    with pytest.raises(ParameterError, match=r"level must lie in \(0, 1\)"):
        auc_ci(SCORES, LABELS, level=level)


@pytest.mark.parametrize("f", [-0.01, 1.5, NAN])
def test_tpr_at_fpr_rejects_bad_fpr(f: float) -> None:
    with pytest.raises(ParameterError, match=r"fpr must lie in \[0, 1\]"):
        tpr_at_fpr(SCORES, LABELS, f)


def test_risks_must_be_paired_and_in_unit_interval() -> None:
    with pytest.raises(ParameterError, match="one value per record each, got 2 and 3"):
        rmsd([0.5, 0.6], [0.5, 0.6, 0.7])
    with pytest.raises(ParameterError, match="one value per record each"):
        abs_differences([0.5], [0.5, 0.6])
    with pytest.raises(ParameterError, match=r"r_t must hold risks in \[0, 1\]"):
        miss_rate([0.5, 0.6], [50.0, 60.0], 0.8)
    with pytest.raises(ParameterError, match=r"r_ms must hold risks in \[0, 1\]"):
        summarize([np.inf], [0.5])


@pytest.mark.parametrize("t", [-0.1, 1.1, NAN])
def test_threshold_must_be_in_unit_interval(t: float) -> None:
    with pytest.raises(ParameterError, match=r"threshold must lie in \[0, 1\]"):
        miss_rate(R_MS, R_T, t)
    with pytest.raises(ParameterError, match=r"each threshold must lie in \[0, 1\]"):
        miss_rate_curve(R_MS, R_T, [0.5, t])
    with pytest.raises(ParameterError, match=r"threshold must lie in \[0, 1\]"):
        summarize(R_MS, R_T, threshold=t)


def test_summarize_difference_must_be_in_unit_interval() -> None:
    with pytest.raises(ParameterError, match=r"difference must lie in \[0, 1\]"):
        summarize(R_MS, R_T, difference=-1)


def test_ecdf_and_percentiles_reject_infinite_values() -> None:
    with pytest.raises(ParameterError, match="values must hold finite numbers"):
        ecdf([0.1, np.inf])
    with pytest.raises(ParameterError, match="values must hold finite numbers"):
        percentiles([0.1, -np.inf])


# --------------------------------------------------------------------------------------------
# The three-way verdict
# --------------------------------------------------------------------------------------------


def test_the_verdict_of_hand_made_intervals_including_bounds_exactly_at_t() -> None:
    from privgame.core.metrics import verdicts

    low = [0.85, 0.80, 0.60, 0.60, 0.70, float("nan")]
    high = [0.95, 0.90, 0.80, 0.79, 0.81, float("nan")]
    assert verdicts(low, high, 0.8).tolist() == [
        "at risk",  # the whole interval is above t
        "undecided",  # the lower bound is exactly t: not above it
        "not at risk",  # the upper bound is exactly t: at or below it
        "not at risk",
        "undecided",  # the interval contains t
        "undecided",  # an undefined risk decides nothing
    ]


def test_the_verdict_checks_its_inputs() -> None:
    from privgame.core.errors import ParameterError
    from privgame.core.metrics import verdicts

    with pytest.raises(ParameterError, match="same length"):
        verdicts([0.1, 0.2], [0.3], 0.8)
    with pytest.raises(ParameterError, match="threshold"):
        verdicts([0.1], [0.3], 1.5)


# ---- the share at risk after a leave-out, from the parent's sample kept ----------------------


def test_kept_sample_share_on_hand_made_counts() -> None:
    # |D| = 1,000; the parent sampled 100, 10 of them left out (b = 0.1), plus 2 outliers; of the
    # 90 kept, 9 are at risk on the new D.
    estimate, low, high = metrics.kept_sample_share(
        records_in_d=1000, sampled=100, removable=10, left_out=12, kept=90, kept_at_risk=9
    )
    assert estimate == pytest.approx((0.1 * 1000 - 12 + 0.9 * 1000 * 0.1) / 988)
    assert 0 < low < estimate < high < 1


def test_kept_sample_share_edges() -> None:
    # Nothing was removable: the kept sample is the parent's whole sample, read as a plain share.
    estimate, low, high = metrics.kept_sample_share(
        records_in_d=500, sampled=50, removable=0, left_out=3, kept=50, kept_at_risk=5
    )
    assert estimate == pytest.approx(500 * 0.1 / 497)
    assert low <= estimate <= high
    # More left out (outliers) than the sample suggests are removable: that part is 0, not negative.
    estimate, _, _ = metrics.kept_sample_share(
        records_in_d=500, sampled=50, removable=1, left_out=30, kept=49, kept_at_risk=0
    )
    assert estimate == 0.0
    # No kept record: q is unknown, so the estimate is the interval's high end.
    estimate, low, high = metrics.kept_sample_share(
        records_in_d=500, sampled=5, removable=5, left_out=5, kept=0, kept_at_risk=0
    )
    assert estimate == high and low == 0.0
    with pytest.raises(ParameterError, match="kept_at_risk <= kept <= sampled - removable"):
        metrics.kept_sample_share(
            records_in_d=500, sampled=50, removable=10, left_out=10, kept=45, kept_at_risk=1
        )
    with pytest.raises(ParameterError, match="left_out must be a whole number"):
        metrics.kept_sample_share(
            records_in_d=500, sampled=50, removable=1, left_out=-1, kept=4, kept_at_risk=1
        )


def test_kept_sample_share_covers_the_truth_and_never_reads_low_on_average() -> None:
    # A population where the remedy's leave-out set B is 10% of D, 5% of the rest is at risk on
    # D', and half of B's unsampled records are still at risk: draw the parent's sample many
    # times, leave out what it finds (plus 4 outliers of B), and read the kept sample.
    rng = np.random.default_rng(7)
    n, m = 2000, 120
    in_b = np.zeros(n, dtype=bool)
    in_b[:200] = True
    at_risk_after = np.zeros(n, dtype=bool)
    at_risk_after[200:300] = True  # 100 of the 1,800 records outside B
    at_risk_after[:200:2] = True  # half of B
    outliers = np.arange(4)
    covered, estimates, truths = 0, [], []
    trials = 400
    for _ in range(trials):
        sample = rng.choice(n, size=m, replace=False)
        removed = np.union1d(sample[in_b[sample]], outliers)
        kept = np.setdiff1d(sample, removed)
        d_new = np.setdiff1d(np.arange(n), removed)
        truth = at_risk_after[d_new].mean()
        estimate, low, high = metrics.kept_sample_share(
            records_in_d=n,
            sampled=m,
            removable=int(in_b[sample].sum()),
            left_out=len(removed),
            kept=len(kept),
            kept_at_risk=int(at_risk_after[kept].sum()),
        )
        covered += low <= truth <= high
        estimates.append(estimate)
        truths.append(truth)
    assert covered / trials >= 0.95
    # Conservative: on average above the truth (by about the half of B no longer at risk).
    assert np.mean(estimates) > np.mean(truths)
