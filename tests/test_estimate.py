"""The cost estimate shown before a run is launched."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT, Sizes, load_dataset
from privgame.errors import SizeError
from privgame.estimate import STARTUP_SECONDS, Calibration, calibrate, estimate_seconds
from privgame.spec import AttackSettings, RunSpec, TargetSelection


@pytest.fixture(scope="module")
def dataset():
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    return load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")


def _spec(dataset, **changes) -> RunSpec:
    spec = RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=Sizes(aux=150, eval=150, target=30).to_dict(),
        generator="synthpop",
        attack=AttackSettings(n_shadow=8, n_eval=8),
        targets=TargetSelection(mode="random", k=2),
    )
    return replace(spec, **changes)


def test_calibration_times_every_piece(dataset) -> None:
    cal = calibrate(_spec(dataset), dataset.table)
    assert cal.fits == 3
    for seconds in (cal.fit_sample, cal.features, cal.classifier):
        assert math.isfinite(seconds) and 0 < seconds < 30


def test_estimate_follows_the_documented_formula(dataset) -> None:
    cal = Calibration(fit_sample=0.01, features=0.001, classifier=0.1)
    # Deterministic fit: 5 shared + 16 per target in the per-target traditional game.
    spec = _spec(
        dataset, generator="marginals", attack=AttackSettings(n_shadow=8, n_eval=8, traditional="per-target")
    )
    per_target = (8 + 2 * 8) * 0.001 + 0.1
    work = 37 * 0.01 + 2 * per_target
    one = estimate_seconds(spec, dataset.table, workers=1, calibration=cal)
    assert one == pytest.approx(work + STARTUP_SECONDS)
    # Two targets and two shared chunks: at most two units run at once, however many workers.
    assert estimate_seconds(spec, dataset.table, workers=8, calibration=cal) == pytest.approx(
        work / 2 + STARTUP_SECONDS
    )


def test_the_pooled_estimate_counts_the_fits_the_run_makes(dataset, tmp_path) -> None:
    from privgame.games.engine import plan_summary, start_run

    cal = Calibration(fit_sample=0.01, features=0.001, classifier=0.1)
    spec = _spec(dataset, generator="marginals")
    assert spec.attack.traditional == "pooled"
    plan = plan_summary(spec, 2, table=dataset.table)
    assert plan["exact"] and plan["pool_fits"] > 0
    per_target = (8 + 2 * 8) * 0.001 + 0.1
    work = plan["total_fits"] * 0.01 + 2 * per_target
    assert estimate_seconds(spec, dataset.table, workers=1, calibration=cal) == pytest.approx(
        work + STARTUP_SECONDS
    )
    status = start_run(tmp_path, spec, dataset.table, workers=1).status()
    assert status["fits_total"] == status["fits_done"] == plan["total_fits"]


def test_estimate_grows_with_the_plan(dataset) -> None:
    cal = Calibration(fit_sample=0.01, features=0.001, classifier=0.1)
    small = estimate_seconds(_spec(dataset), dataset.table, workers=1, calibration=cal)
    more_targets = _spec(dataset, targets=TargetSelection(mode="random", k=8))
    more_runs = _spec(dataset, attack=AttackSettings(n_shadow=40, n_eval=40))
    assert estimate_seconds(more_targets, dataset.table, workers=1, calibration=cal) > small
    assert estimate_seconds(more_runs, dataset.table, workers=1, calibration=cal) > small


def test_estimate_without_a_calibration_measures_one(dataset) -> None:
    seconds = estimate_seconds(_spec(dataset), dataset.table, workers=1)
    assert STARTUP_SECONDS < seconds < 120


def test_sizes_that_do_not_fit_the_table_are_refused(dataset) -> None:
    spec = _spec(dataset, sizes=Sizes(aux=250, eval=150, target=30).to_dict())
    with pytest.raises(SizeError, match="rows"):
        calibrate(spec, dataset.table)
