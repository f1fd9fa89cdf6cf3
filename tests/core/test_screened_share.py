"""The share of all of D at risk from the screen, corrected by the exact random sample: coverage by
simulation with a known truth, including screens that are wrong in the worst ways."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.core import metrics
from privgame.core.errors import ParameterError

N_RECORDS = 3000


def _exact_verdicts(truth: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Exact verdicts within their error bound: a record above t is at risk (70%) or undecided,
    never safe; one at or below t is at risk 2% of the time (<= 2.5%), undecided 20%."""
    u = rng.random(truth.size)
    at_risk = np.where(truth, u < 0.7, u < 0.02)
    not_safe = np.where(truth, True, u < 0.22)
    return at_risk, not_safe


SCREENS = {
    # agrees with the exact verdicts 95% of the time
    "good": lambda low, high, truth, rng: (
        np.where(rng.random(low.size) < 0.95, low, ~low),
        np.where(rng.random(low.size) < 0.95, high, ~high),
    ),
    # calls half of the records truly at risk safe: the screen's worst error
    "misses": lambda low, high, truth, rng: (
        low & (rng.random(low.size) < 0.5),
        high & ~(truth & (rng.random(low.size) < 0.5)),
    ),
    # calls everything at risk
    "alarmist": lambda low, high, truth, rng: (np.ones(low.size, bool), np.ones(low.size, bool)),
    # knows nothing
    "coin": lambda low, high, truth, rng: (rng.random(low.size) < 0.5, rng.random(low.size) < 0.7),
}


@pytest.mark.parametrize("screen", sorted(SCREENS))
@pytest.mark.parametrize("share", [0.0, 0.03, 0.3, 0.7])
def test_the_interval_covers_the_true_share(screen, share):
    rng = np.random.default_rng([11, int(share * 100), sorted(SCREENS).index(screen)])
    trials, covered = 400, 0
    for _ in range(trials):
        truth = rng.random(N_RECORDS) < share
        true_share = truth.mean()
        exact_low, exact_high = _exact_verdicts(truth, rng)
        screened_low, screened_high = SCREENS[screen](exact_low, exact_high, truth, rng)
        sample = rng.choice(N_RECORDS, size=40, replace=False)
        _, low, high = metrics.screened_share(
            screened_low,
            screened_high,
            exact_low[sample],
            exact_high[sample],
            screened_low[sample],
            screened_high[sample],
        )
        covered += low <= true_share <= high
    # 95% nominal; 400 trials put a coverage of 95% below 0.93 with probability < 2%
    assert covered / trials >= 0.93, f"{screen} screen at share {share}: coverage {covered / trials:.3f}"


def test_a_good_screen_narrows_the_bracket_of_the_sample_alone():
    rng = np.random.default_rng(5)
    truth = rng.random(N_RECORDS) < 0.1
    exact_low, exact_high = _exact_verdicts(truth, rng)
    sample = rng.choice(N_RECORDS, size=100, replace=False)
    _, low, high = metrics.screened_share(
        exact_low, exact_high, exact_low[sample], exact_high[sample], exact_low[sample], exact_high[sample]
    )
    old_low, old_high = metrics.share_bracket(
        int(exact_low[sample].sum()), int(exact_high[sample].sum()), sample.size
    )
    assert high - low < old_high - old_low


def test_a_screen_that_agrees_everywhere_gives_its_own_share_within_the_rectifier():
    screened = np.zeros(1000, bool)
    screened[:100] = True
    estimate, low, high = metrics.screened_share(
        screened, screened, np.zeros(50, bool), np.zeros(50, bool), np.zeros(50, bool), np.zeros(50, bool)
    )
    assert estimate == pytest.approx(0.1)
    assert low < 0.1 < high


def test_bad_inputs_are_named():
    with pytest.raises(ParameterError, match="every record of D"):
        metrics.screened_share([], [], [True], [True], [True], [True])
    with pytest.raises(ParameterError, match="equal, non-zero length"):
        metrics.screened_share([True], [True], [True], [True, False], [True], [True])


def test_two_attacks_verdicts_need_twice_the_low_error():
    """A sampled record's verdict is at risk when either of two attacks puts it there, so its false
    "at risk" rate can reach twice one test's (4.5% here): with ``low_error`` at twice the one-test
    error the interval covers a true share of 0; with the one-test error it does not."""
    rng = np.random.default_rng(3)
    trials = 200
    covered = {metrics.VERDICT_ERROR: 0, 2 * metrics.VERDICT_ERROR: 0}
    for _ in range(trials):
        u = rng.random(N_RECORDS)
        at_risk, not_safe = u < 0.045, u < 0.3  # nobody is truly at risk
        sample = rng.choice(N_RECORDS, size=1000, replace=False)
        for error in covered:
            _, low, _ = metrics.screened_share(
                at_risk,
                not_safe,
                at_risk[sample],
                not_safe[sample],
                at_risk[sample],
                not_safe[sample],
                low_error=error,
            )
            covered[error] += low <= 0.0
    assert covered[2 * metrics.VERDICT_ERROR] / trials >= 0.95
    assert covered[metrics.VERDICT_ERROR] / trials < 0.5
