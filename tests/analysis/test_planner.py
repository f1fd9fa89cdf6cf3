"""The planner: a plan that fits a time budget, and the precision each plan gives."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from builders import small_spec

from privgame.analysis.planner import (
    CUTS,
    RISK_MISSED_200_AGAINST_1000,
    plan_for_budget,
    plan_rows,
    random_for_width,
    risk_missed,
)
from privgame.cli.main import main
from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.games.estimate import Calibration
from privgame.settings.run_spec import AttackSettings, TargetSelection

CALIBRATION = Calibration(fit_sample=0.05, features=0.001, classifier=0.5, setup=0.1, refit_sample=0.02)


def test_the_planned_auc_half_width_matches_the_spread_of_simulated_aucs() -> None:
    # Exponential scores, for which Hanley and McNeil's variance is exact: AUC = 1 / (1 + rate).
    rng = np.random.default_rng(3)
    for n, rate in ((50, 0.25), (100, 0.25), (25, 0.6)):
        true_auc = 1 / (1 + rate)
        aucs = [
            metrics.auc(
                np.r_[rng.exponential(1.0, n), rng.exponential(rate, n)], np.r_[np.ones(n), np.zeros(n)]
            )
            for _ in range(3000)
        ]
        simulated = 1.959964 * float(np.std(aucs))
        assert metrics.auc_half_width(true_auc, n, n) == pytest.approx(simulated, rel=0.08), n


def test_the_share_width_is_the_widest_clopper_pearson_interval() -> None:
    for n in (1, 7, 20, 53):
        widths = [np.subtract(*metrics.binomial_interval(k, n)[::-1]) for k in range(n + 1)]
        worst, clean = metrics.share_width(n)
        assert worst == pytest.approx(max(widths))
        assert clean == pytest.approx(metrics.binomial_interval(0, n)[1])
    m = random_for_width(0.2)
    assert metrics.share_width(m)[0] <= 0.2 < metrics.share_width(m - 1)[0]
    with pytest.raises(ParameterError, match="needs more than"):
        random_for_width(0.001)
    with pytest.raises(ParameterError, match="strictly between 0 and 1"):
        random_for_width(1.5)


def _spec(small_adult: Path):  # type: ignore[no-untyped-def]
    return small_spec(
        small_adult,
        attack=AttackSettings(n_shadow=1000, n_eval=200),
        targets=TargetSelection.plan(outliers=20, random=20),
    )


def test_the_plan_as_given_stands_when_it_fits(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    plan = plan_for_budget(spec, table, workers=1, calibration=CALIBRATION)
    assert plan.chosen == 0 and len(plan.steps) == 1
    assert plan.steps[0].n_shadow == 1000 and plan.steps[0].outliers == 20
    assert plan.text.startswith("The plan as given takes about")


def test_cuts_are_made_in_order_until_the_estimate_fits(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    everything = plan_for_budget(spec, table, workers=1, budget_seconds=0.001, calibration=CALIBRATION)
    assert everything.chosen is None and "No plan fits" in everything.text
    assert len(everything.steps) == 1 + len(CUTS)
    seconds = [s.seconds for s in everything.steps]
    assert all(b < a for a, b in itertools.pairwise(seconds))
    budget = (seconds[2] + seconds[3]) / 2
    plan = plan_for_budget(spec, table, workers=1, budget_seconds=budget, calibration=CALIBRATION)
    assert plan.chosen == 3 and plan.steps[-1].seconds <= budget < plan.steps[-2].seconds
    assert [r["chosen"] for r in plan_rows(plan)] == [False] * 3 + [True]
    assert [s.n_eval for s in plan.steps] == [200, 100, 100, 100]
    assert [(s.random, s.outliers) for s in plan.steps] == [(20, 20), (20, 20), (10, 20), (10, 10)]
    assert plan.steps[1].risk_half_width > plan.steps[0].risk_half_width
    # N_shadow, whose cuts miss risk, is cut last.
    assert [s.n_shadow for s in everything.steps] == [1000] * 6 + [500, 200, 100]


def test_each_cut_states_the_risk_it_misses_and_n_shadow_is_cut_last(small_adult: Path) -> None:
    """REPRODUCTION 6.2: N_shadow 200 instead of 1,000 read every risk 0.052 lower (9 records at
    risk became 5), the costliest cut: it is tried last, and its rows say what it misses."""
    spec, table = _spec(small_adult)
    everything = plan_for_budget(spec, table, workers=1, budget_seconds=0.001, calibration=CALIBRATION)
    rows = {r["N_shadow"]: r for r in plan_rows(everything)}
    assert rows[1000]["risk missed (vs N_shadow 1,000)"] == 0
    assert rows[200]["risk missed (vs N_shadow 1,000)"] == RISK_MISSED_200_AGAINST_1000[0] == 0.052
    assert rows[500]["risk missed (vs N_shadow 1,000)"] < 0.052 < rows[100]["risk missed (vs N_shadow 1,000)"]
    assert "0.052 ± 0.007" in rows[200]["gives up"] and "REPRODUCTION 6.2" in rows[200]["gives up"]
    assert "found 5 records at risk, not 9" in rows[200]["gives up"]
    missed = [s.risk_missed for s in everything.steps]
    assert missed == sorted(missed) and missed[-1] == max(risk_missed(n) for n in (100, 200, 500))
    # A budget that one cut meets: a cut that misses no risk, not N_shadow.
    budget = (everything.steps[0].seconds + everything.steps[1].seconds) / 2
    one = plan_for_budget(spec, table, workers=1, budget_seconds=budget, calibration=CALIBRATION)
    assert one.chosen == 1 and one.steps[1].change == "N_eval = 100"
    assert one.steps[1].n_shadow == 1000 and one.steps[1].risk_missed == 0


def test_a_share_width_sets_the_random_records_and_is_never_cut(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    plan = plan_for_budget(
        spec, table, workers=1, budget_seconds=0.001, share_width=0.3, calibration=CALIBRATION
    )
    assert {s.random for s in plan.steps} == {random_for_width(0.3)}
    assert all(math.isclose(s.share_width or 0, plan.steps[0].share_width or 0) for s in plan.steps)
    with pytest.raises(ParameterError, match="--budget must be a positive"):
        plan_for_budget(spec, table, workers=1, budget_seconds=-1, calibration=CALIBRATION)


def test_the_plan_command_prints_the_run_to_make_and_writes_nothing(
    small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    args = ["plan", "--data", str(small_adult), "--generator", "baynet", "--workers", "1", "--budget", "0.2"]
    small = ["--n-shadow", "40", "--n-eval", "20", "--outliers", "2", "--random", "2"]
    assert main([*args, "--out", str(out), *small]) == 0
    printed = capsys.readouterr().out
    assert "run it with:" in printed or "No plan fits" in printed
    assert "missed" in printed.splitlines()[0] and "REPRODUCTION.md 6.2" in printed
    if "run it with:" in printed:
        command = printed.split("run it with:")[1]
        assert "python -m privgame run --data" in command and "--out" in command and "--budget" not in command
    assert not out.exists()
    assert main(["plan", "--data", str(small_adult), "--generator", "baynet", "--targets", "3"]) == 2
    assert "cannot plan a run of chosen records" in capsys.readouterr().err
