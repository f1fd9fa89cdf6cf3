"""The verdicts' error rates, by simulation on privgame's own interval and verdict code.

Each claim of :mod:`privgame.core.metrics` about the verdicts gets a simulation that fails when the
claim is false: the error of a record looked at again and again, the interval near t, a failed
attack never read as safety, and the share bracket's coverage. ``benchmarks/verdicts.py`` runs
the same simulations at full size.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from privgame.core import metrics

T = 0.8


def _scores(auc: float, per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Binormal scores whose true AUC is ``auc``: 'in' ~ N(d, 1), 'out' ~ N(0, 1)."""
    d = math.sqrt(2) * NormalDist().inv_cdf(auc)
    return rng.normal(d, 1.0, per_class), rng.normal(0.0, 1.0, per_class)


def _final_verdict(ins: np.ndarray, outs: np.ndarray, looks: tuple[int, ...], rule: str) -> str:
    """Look at the first n runs of each size in turn while the record is undecided."""
    verdict = "undecided"
    for k, n in enumerate(looks, start=1):
        h = n // 2
        scores, labels = np.r_[ins[:h], outs[:h]], np.r_[np.ones(h), np.zeros(h)]
        if rule == "before":
            low, high = metrics.auc_ci(scores, labels, method="wald")
        else:
            low, high = metrics.auc_ci(scores, labels, level=metrics.look_level(k))
        verdict = str(metrics.verdicts([low], [high], T)[0])
        if verdict != "undecided":
            return verdict
    return verdict


def _false_at_risk(looks: tuple[int, ...], rule: str, reps: int) -> float:
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(2026).spawn(reps)]
    found = [_final_verdict(*_scores(T, looks[-1] // 2, rng), looks, rule) for rng in rngs]
    return found.count("at risk") / reps


def test_looking_again_keeps_the_false_at_risk_rate_within_its_bound() -> None:
    # run --resolve-to: the undecided records double their runs until decided. At a true AUC of
    # exactly t every "at risk" is false; the bound is 2.5% plus three simulation errors.
    looks, reps = (100, 200, 400, 800), 3000
    bound = 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)
    before = _false_at_risk(looks, "before", reps)
    now = _false_at_risk(looks, "now", reps)
    assert before > bound, f"the simulation lost its teeth: {before:.2%} before"
    assert now <= bound, f"{now:.2%} false 'at risk' after four looks, bound {bound:.2%}"


def test_the_error_spent_over_every_look_sums_to_at_most_alpha() -> None:
    spent = sum(1 - metrics.look_level(k) for k in range(1, 200_001))
    assert spent <= 0.05
    assert spent == pytest.approx(0.05, abs=1e-5)
    assert metrics.look_level(1) == pytest.approx(1 - 0.05 * 6 / math.pi**2)
    assert metrics.look_level(1) < 0.975 and metrics.look_level(2) > metrics.look_level(1)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(metrics.ParameterError, match="look must be a whole number"):
            metrics.look_level(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("truth", [0.8, 0.9])
def test_the_logit_interval_holds_on_its_upper_side_where_the_plain_one_does_not(truth: float) -> None:
    # Near a high AUC the plain interval's lower bound lies above the truth too often (its upper
    # side is too narrow); the logit interval's does not. 100 + 100 runs, nominal 2.5% per side.
    reps = 3000
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(7).spawn(reps)]
    labels = np.r_[np.ones(100), np.zeros(100)]
    above = {"wald": 0, "logit": 0}
    for rng in rngs:
        scores = np.concatenate(_scores(truth, 100, rng))
        for method in above:
            above[method] += metrics.auc_ci(scores, labels, method=method)[0] > truth  # type: ignore[arg-type]
    bound = 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)
    assert above["logit"] / reps <= bound
    assert above["wald"] / reps > above["logit"] / reps


def test_a_failed_attack_is_never_read_as_safety() -> None:
    labels = np.r_[np.ones(50), np.zeros(50)]
    constant = metrics.auc_ci(np.full(100, 0.5), labels)
    assert constant == (0.5, 0.5)
    backwards = metrics.auc_ci(np.r_[np.linspace(0, 0.4, 50), np.linspace(0.3, 1, 50)], labels)
    assert backwards[1] < 0.5
    for t in (0.5, 0.6, 0.8, 0.95, 1.0):
        found = metrics.verdicts([constant[0], backwards[0], 0.9], [constant[1], backwards[1], 0.95], t)
        assert found[:2].tolist() == ["attack failed", "attack failed"]
    # An interval just above 0.5 is a weak attack, read as usual.
    assert metrics.verdicts([0.45], [0.55], 0.8).tolist() == ["not at risk"]
    # With a random attack (true AUC 0.5), "not at risk" is at most as common as chance allows.
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(3).spawn(500)]
    failed = 0
    for rng in rngs:
        scores = np.round(rng.random(100), 1)  # ties, as a forest's probabilities have
        low, high = metrics.auc_ci(scores, labels)
        failed += metrics.verdicts([low], [high], T)[0] == "attack failed"
    assert 0 < failed < 500  # about half the random attacks' intervals end at or below 0.5


def test_the_share_bracket_covers_the_true_share() -> None:
    # Simulated audits of tables whose records' true AUCs are known, many of them near t: the
    # bracket built from 20 sampled records' verdicts covers the true share in >= 95% of audits.
    audits, sample = 400, 20
    covered = 0
    for child in np.random.SeedSequence(11).spawn(audits):
        rng = np.random.default_rng(child)
        true = np.concatenate(
            [rng.uniform(0.5, 0.7, 700), rng.uniform(T - 0.03, T + 0.03, 250), rng.uniform(0.9, 0.99, 50)]
        )
        share = float(np.mean(true > T))
        picked = rng.choice(true, size=sample, replace=False)
        verdicts = []
        for auc in picked:
            ins, outs = _scores(float(auc), 100, rng)
            low, high = metrics.auc_ci(
                np.r_[ins, outs], np.r_[np.ones(100), np.zeros(100)], level=metrics.look_level(1)
            )
            verdicts.append(str(metrics.verdicts([low], [high], T)[0]))
        at_risk = verdicts.count("at risk")
        low, high = metrics.share_bracket(at_risk, sample - verdicts.count("not at risk"), sample)
        covered += low <= share <= high
    assert covered / audits >= 0.95


def test_the_share_bracket_by_hand() -> None:
    from scipy.stats import beta

    low, high = metrics.share_bracket(3, 8, 20)
    assert low == pytest.approx(beta.ppf(0.025, 3, 18) - metrics.VERDICT_ERROR)
    assert high == pytest.approx(beta.ppf(0.975, 9, 12) / (1 - metrics.VERDICT_ERROR))
    assert metrics.share_bracket(0, 0, 20)[0] == 0.0
    assert metrics.share_bracket(20, 20, 20)[1] == 1.0
    with pytest.raises(metrics.ParameterError, match="at_risk <= at_risk_or_undecided"):
        metrics.share_bracket(5, 3, 20)


def test_the_training_noise_widens_the_interval_to_cover_the_attack_procedures_risk() -> None:
    # Each trained attack's true AUC differs from the attack procedure's by its training noise:
    # its separation is d* + e. The two half attacks have twice the noise variance and the full
    # attack their mean (var(e) = s^2); all three score the same evaluation runs. Pooled over a
    # run's 20 records, the halves' gap restores the interval's coverage of the procedure's AUC.
    runs, records, per_class, s = 150, 20, 100, 0.25
    covered = {"without": 0, "with": 0}
    for child in np.random.SeedSequence(5).spawn(runs):
        rng = np.random.default_rng(child)
        truth = rng.uniform(0.6, 0.9, records)
        d_star = math.sqrt(2) * np.array([NormalDist().inv_cdf(a) for a in truth])
        e_a, e_b = rng.normal(0, math.sqrt(2) * s, (2, records))
        labels = np.r_[np.ones(per_class), np.zeros(per_class)]
        games, a_auc, b_auc = [], [], []
        for r in range(records):
            z = rng.normal(0, 1, 2 * per_class)  # the evaluation runs' own noise, shared
            full = z + labels * (d_star[r] + (e_a[r] + e_b[r]) / 2)
            games.append(full)
            a_auc.append(metrics.auc(z + labels * (d_star[r] + e_a[r]), labels))
            b_auc.append(metrics.auc(z + labels * (d_star[r] + e_b[r]), labels))
        extra = metrics.training_variance(a_auc, b_auc)
        for r in range(records):
            for name, v in (("without", 0.0), ("with", extra)):
                low, high = metrics.auc_ci(games[r], labels, extra_variance=v)
                covered[name] += low <= truth[r] <= high
    total = runs * records
    assert covered["without"] / total < 0.90  # the training noise is as large as DeLong's error
    assert covered["with"] / total >= 0.93


def test_training_variance_by_hand() -> None:
    def logit(p: float) -> float:
        return math.log(p / (1 - p))

    from scipy.stats import chi2

    gaps = [logit(0.8) - logit(0.6), 0.0, logit(0.9) - logit(0.85)]
    median = float(np.median(np.square(gaps))) / (4 * 0.454936423119572)
    upper = float(np.quantile(np.square(gaps), 0.9)) / (4 * chi2.ppf(0.9, 1))
    assert metrics.training_variance([0.8, 0.7, 0.9], [0.6, 0.7, 0.85], quantile=0.5) == pytest.approx(median)
    assert metrics.training_variance([0.8, 0.7, 0.9], [0.6, 0.7, 0.85]) == pytest.approx(upper)
    assert metrics.training_variance([0.8, math.nan], [0.6, 0.9], quantile=0.5) == pytest.approx(
        (logit(0.8) - logit(0.6)) ** 2 / (4 * 0.454936423119572)
    )
    # A half attack at an AUC of 1 is clipped, and one such record in 20 cannot swamp the quantile.
    assert metrics.training_variance([1.0] + [0.7] * 19, [0.9] + [0.71] * 19) < 0.01
    with pytest.raises(metrics.ParameterError, match="quantile"):
        metrics.training_variance([0.5], [0.5], quantile=1.0)
    # A record's own noise only ever widens the pooled value.
    own = metrics.record_training_variance([0.8, 0.7, math.nan], [0.6, 0.7, 0.9], 0.05)
    assert own.tolist() == pytest.approx([(logit(0.8) - logit(0.6)) ** 2 / 4, 0.05, 0.05])
    with pytest.raises(metrics.ParameterError, match="pooled"):
        metrics.record_training_variance([0.5], [0.5], math.nan)
    assert metrics.training_variance([], []) == 0.0
    with pytest.raises(metrics.ParameterError, match="one AUC per record"):
        metrics.training_variance([0.5], [0.5, 0.6])
    scores, labels = np.r_[np.linspace(0, 1, 50), np.linspace(0.3, 1.3, 50)], np.r_[np.zeros(50), np.ones(50)]
    plain, wide = metrics.auc_ci(scores, labels), metrics.auc_ci(scores, labels, extra_variance=0.01)
    assert wide[0] < plain[0] < plain[1] < wide[1]
    with pytest.raises(metrics.ParameterError, match="extra_variance"):
        metrics.auc_ci(scores, labels, extra_variance=-1)


def test_the_share_bracket_allows_for_records_just_below_t_where_point_estimates_do_not() -> None:
    # Half the records just below t (none at risk), half far below: a point estimate lands above
    # t about a third of the time, so the share of point estimates above t sees risk that is not
    # there; the verdicts' bracket does not.
    audits, sample = 200, 20
    before = now = 0
    labels = np.r_[np.ones(100), np.zeros(100)]
    for child in np.random.SeedSequence(13).spawn(audits):
        rng = np.random.default_rng(child)
        picked = rng.choice(np.r_[np.full(500, T - 0.02), np.full(500, 0.6)], size=sample, replace=False)
        points, verdicts = [], []
        for auc in picked:
            scores = np.concatenate(_scores(float(auc), 100, rng))
            points.append(metrics.auc(scores, labels))
            low, high = metrics.auc_ci(scores, labels, level=metrics.look_level(1))
            verdicts.append(str(metrics.verdicts([low], [high], T)[0]))
        before += metrics.binomial_interval(int(np.sum(np.array(points) > T)), sample)[0] <= 0.0
        low, _ = metrics.share_bracket(
            verdicts.count("at risk"), sample - verdicts.count("not at risk"), sample
        )
        now += low <= 0.0
    assert before / audits < 0.5
    assert now / audits >= 0.95


def _ties_at_top(auc: float, per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A share 2 auc - 1 of the 'in' scores tied at the top, above every 'out'; the other 'in'
    scores and the 'out' scores U(0, 1): the true AUC is ``auc``."""
    ins = rng.uniform(0, 1, per_class)
    ins[rng.uniform(size=per_class) < 2 * auc - 1] = 2.0
    return ins, rng.uniform(0, 1, per_class)


def test_the_interval_holds_when_most_in_scores_tie_at_the_top() -> None:
    # t = 0.97, 94% of the 'in' runs tied at the top, 50 + 50 runs, one look: the logit interval
    # alone called 2.8% of these records at risk at a true AUC of exactly t, for 1.52% nominal.
    t, reps = 0.97, 4000
    labels = np.r_[np.ones(50), np.zeros(50)]
    level = metrics.look_level(1)
    nominal = (1 - level) / 2
    false_at_risk = 0
    for child in np.random.SeedSequence(97).spawn(reps):
        ins, outs = _ties_at_top(t, 50, np.random.default_rng(child))
        low, _ = metrics.auc_ci(np.r_[ins, outs], labels, level=level)
        false_at_risk += low > t
    bound = nominal + 3 * math.sqrt(nominal * (1 - nominal) / reps)
    assert false_at_risk / reps <= bound, f"{false_at_risk / reps:.2%} false 'at risk', bound {bound:.2%}"


def test_few_discordant_runs_widen_the_interval_to_the_wilson_bound() -> None:
    # 49 'in' runs beat every 'out' run and one nearly does: DeLong's variance is tiny, and so was
    # the interval, narrower than that of 50 runs that all beat every 'out' run.
    labels = np.r_[np.ones(50), np.zeros(50)]
    outs = np.linspace(0, 1, 50)
    one_short = np.r_[np.full(49, 2.0), 0.995]
    perfect = np.full(50, 2.0)
    low_short, _ = metrics.auc_ci(np.r_[one_short, outs], labels)
    low_perfect, _ = metrics.auc_ci(np.r_[perfect, outs], labels)
    assert low_short <= low_perfect
    # Many discordant runs: the logit interval as before, narrower than the Wilson bound.
    rng = np.random.default_rng(3)
    scores = np.r_[rng.normal(1.2, 1, 50), rng.normal(0, 1, 50)]
    low, high = metrics.auc_ci(scores, labels)
    p, n, z = metrics.auc(scores, labels), 50, NormalDist().inv_cdf(0.975)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert centre - half < low < p < high < centre + half
    assert metrics.FEW_DISCORDANT == 5


def _training_rates(variance_of, reps: int = 3000, records: int = 20) -> float:
    """The false "at risk" rate, at a true risk of exactly t, of the noisiest quarter of a run's
    records whose training noise (sd on the logit scale) spans 0.02-0.4, with ``variance_of``
    giving each record's training variance from the half attacks' AUCs. The evaluation noise is
    DeLong's at 200 runs near 0.8 (sd 0.19 on the logit scale); one look."""
    rng = np.random.default_rng(2026)
    z = NormalDist().inv_cdf(0.5 + metrics.look_level(1) / 2)
    sd = np.exp(rng.uniform(math.log(0.02), math.log(0.4), (reps, records)))
    e_a, e_b = (rng.normal(0, 1, (reps, records)) * sd * math.sqrt(2) for _ in range(2))
    logit_t = math.log(T / (1 - T))
    full = logit_t + (e_a + e_b) / 2 + rng.normal(0, 0.19, (reps, records))
    noisy = sd >= np.quantile(sd, 0.75, axis=1, keepdims=True)
    false = 0
    for run in range(reps):
        a, b = 1 / (1 + np.exp(-(logit_t + e_a[run]))), 1 / (1 + np.exp(-(logit_t + e_b[run])))
        v = variance_of(a, b)
        false += int(np.sum((full[run] - z * np.sqrt(0.19**2 + v) > logit_t) & noisy[run]))
    return false / noisy.sum()


def test_each_records_training_noise_keeps_the_noisiest_records_near_their_error() -> None:
    pooled_median = _training_rates(lambda a, b: metrics.training_variance(a, b, quantile=0.5))
    now = _training_rates(
        lambda a, b: metrics.record_training_variance(a, b, metrics.training_variance(a, b))
    )
    assert pooled_median > 0.07, f"the simulation lost its teeth: {pooled_median:.2%} with the median"
    assert now < 0.045, f"{now:.2%} false 'at risk' among the noisiest records"


def test_the_at_risk_p_value_agrees_with_the_verdict_at_every_threshold_and_look() -> None:
    rng = np.random.default_rng(31)
    checked = 0
    for case in range(300):
        n = int(rng.choice([20, 50, 100, 400]))
        labels = np.r_[np.ones(n), np.zeros(n)]
        if case % 3 == 0:
            ins, outs = _ties_at_top(float(rng.uniform(0.75, 0.99)), n, rng)
        elif case % 3 == 1:
            ins, outs = _scores(float(rng.uniform(0.55, 0.98)), n, rng)
        else:
            ins, outs = np.round(rng.normal(rng.uniform(0, 3), 1, n), 1), np.round(rng.normal(0, 1, n), 1)
        scores = np.r_[ins, outs]
        extra = float(rng.choice([0.0, 0.02]))
        look = int(rng.integers(1, 4))
        value = metrics.auc(scores, labels)
        variance, discordant = metrics.auc_variance(scores, labels)
        low, _ = metrics.auc_ci(scores, labels, level=metrics.look_level(look), extra_variance=extra)
        for t in rng.uniform(0.55, 0.99, 5):
            p = metrics.at_risk_p_value(
                value, variance, t, discordant=discordant, n=n, extra_variance=extra, look=look
            )
            if abs(low - t) > 1e-9:
                assert (low > t) == (p < metrics.VERDICT_ERROR), (case, t, low, p)
                checked += 1
    assert checked > 1000


def test_holm_and_benjamini_hochberg_by_hand() -> None:
    p = [0.001, 0.02, 0.012, 0.3, 0.0001]
    # Holm at 2.5%: 0.0001 <= 0.005, 0.001 <= 0.00625, 0.012 > 0.00833: two named.
    assert metrics.holm(p).tolist() == [True, False, False, False, True]
    # BH at 5%: sorted 0.0001, 0.001, 0.012, 0.02, 0.3 against 0.01, 0.02, 0.03, 0.04, 0.05.
    assert metrics.benjamini_hochberg(p).tolist() == [True, True, True, False, True]
    assert metrics.holm([]).tolist() == [] and metrics.benjamini_hochberg([math.nan]).tolist() == [False]


def test_a_set_named_at_risk_keeps_its_error_as_a_set() -> None:
    # 10 records at exactly t, 10 far above. One by one, "at least one of the named is false"
    # happens far more often than 2.5%; Holm keeps it within 2.5%, and Benjamini-Hochberg keeps
    # the expected share of false ones among the named within 5%.
    reps, labels = 600, np.r_[np.ones(100), np.zeros(100)]
    any_false = {"each": 0, "holm": 0}
    false_share = []
    for child in np.random.SeedSequence(17).spawn(reps):
        rng = np.random.default_rng(child)
        p, null = [], []
        for truth in [T] * 10 + [0.97] * 10:
            ins, outs = _scores(truth, 100, rng)
            scores = np.r_[ins, outs]
            variance, discordant = metrics.auc_variance(scores, labels)
            value = metrics.auc(scores, labels)
            p.append(metrics.at_risk_p_value(value, variance, T, discordant=discordant, n=100))
            null.append(truth == T)
        p_arr, null_arr = np.array(p), np.array(null)
        each = p_arr < metrics.VERDICT_ERROR
        any_false["each"] += bool(np.any(each & null_arr))
        any_false["holm"] += bool(np.any(metrics.holm(p_arr) & null_arr))
        named = metrics.benjamini_hochberg(p_arr)
        false_share.append(np.sum(named & null_arr) / max(1, np.sum(named)))
    assert any_false["each"] / reps > 0.08, "the simulation lost its teeth"
    assert any_false["holm"] / reps <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)
    assert float(np.mean(false_share)) <= 0.05


def test_the_high_end_holds_when_most_in_scores_tie_at_the_top() -> None:
    # "Not at risk" rests on the high end. At t = 0.97 with 94% of the 'in' runs tied at the top
    # and 50 + 50 runs, the logit interval's high end lay below the true risk in 2.2% of records,
    # for 1.52% nominal at a first look; with the Wilson bound below 20 discordant runs, 1.3%.
    t, reps = 0.97, 10_000
    labels = np.r_[np.ones(50), np.zeros(50)]
    level = metrics.look_level(1)
    nominal = (1 - level) / 2
    false_safe = 0
    for child in np.random.SeedSequence(970).spawn(reps):
        ins, outs = _ties_at_top(t, 50, np.random.default_rng(child))
        _, high = metrics.auc_ci(np.r_[ins, outs], labels, level=level)
        false_safe += high < t
    bound = nominal + 3 * math.sqrt(nominal * (1 - nominal) / reps)
    assert false_safe / reps <= bound, f"{false_safe / reps:.2%} false 'not at risk', bound {bound:.2%}"


def test_the_interval_holds_at_a_high_risk_with_unequal_variances() -> None:
    # 'in' ~ N(mu, 0.5), 'out' ~ N(0, 1) at a true AUC of t = 0.97, 100 + 100 runs, one look:
    # DeLong's variance rests on the few 'out' runs that some 'in' run does not beat. With the
    # normal quantile the logit interval called 3.3% of records "at risk", for 1.52% nominal.
    t, reps, sd = 0.97, 4000, 0.5
    mu = math.sqrt(1 + sd * sd) * NormalDist().inv_cdf(t)
    labels = np.r_[np.ones(100), np.zeros(100)]
    level = metrics.look_level(1)
    nominal = (1 - level) / 2
    false_at_risk = 0
    for child in np.random.SeedSequence(971).spawn(reps):
        rng = np.random.default_rng(child)
        low, _ = metrics.auc_ci(np.r_[rng.normal(mu, sd, 100), rng.normal(0, 1, 100)], labels, level=level)
        false_at_risk += low > t
    bound = nominal + 3 * math.sqrt(nominal * (1 - nominal) / reps)
    assert false_at_risk / reps <= bound, f"{false_at_risk / reps:.2%} false 'at risk', bound {bound:.2%}"
