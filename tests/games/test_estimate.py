"""The cost estimate shown before a run is launched."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from privgame.core.errors import SizeError
from privgame.data import BUNDLED_ADULT, Sizes, load_dataset
from privgame.games import estimate
from privgame.games.estimate import Calibration, breakdown, calibrate, estimate_seconds, time_left
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dataset():
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    return load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")


def _spec(dataset, **changes) -> RunSpec:
    options = {
        "sizes": Sizes(aux=150, eval=150, target=30).to_dict(),
        "generator": "synthpop",
        "attack": AttackSettings(n_shadow=8, n_eval=8),
        "targets": TargetSelection(mode="random", k=2),
        **changes,
    }
    return RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        **options,
    )


def test_calibration_times_every_piece(dataset) -> None:
    cal = calibrate(_spec(dataset), dataset.table)
    assert 3 <= cal.fits <= 40  # fits of milliseconds are timed more often than asked
    for seconds in (cal.fit_sample, cal.features, cal.classifier, cal.setup):
        assert math.isfinite(seconds) and 0 < seconds < 30
    assert 0 < cal.sample <= cal.fit_sample
    assert 0 < cal.share <= 1
    assert cal.startup is None and cal.throughput is None  # one worker: no processes started


def test_calibration_starts_and_times_the_workers(dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    small = calibrate(_spec(dataset), dataset.table, fits=1, workers=2)
    assert small.startup is None  # a tiny run is not worth the seconds of timing fresh workers
    monkeypatch.setattr(estimate, "WORKER_TIMING_WORK", 0.0)  # as for a run of a minute or more
    cal = calibrate(_spec(dataset), dataset.table, fits=1, workers=2)
    assert cal.workers == 2
    assert cal.startup is not None and 0 < cal.startup < 120
    assert cal.throughput is not None and 0 < cal.throughput <= 2.0


_CAL = Calibration(fit_sample=0.01, features=0.001, classifier=0.1, sample=0.004, setup=0.5)


def test_the_parts_follow_the_documented_formula(dataset) -> None:
    # Deterministic fit, per-target game: 5 shared fits + 16 per target, plus 4 'in' samples.
    spec = _spec(
        dataset, generator="marginals", attack=AttackSettings(n_shadow=8, n_eval=8, traditional="per-target")
    )
    parts = breakdown(spec, dataset.table, workers=1, calibration=_CAL)
    assert parts.total_fits == 37
    assert parts.generator == pytest.approx(37 * 0.01 + 4 * 0.004)
    assert parts.features == pytest.approx(2 * (8 + 2 * 8) * 0.001)
    assert parts.classifier == pytest.approx(2 * 0.1)
    assert parts.setup == pytest.approx(0.5 + 3 * 0.01 + 0.01)  # context, the engine's probe, the fit on D
    # The results, and the release's similarity checks: one more fit, and its distances to the
    # non-members (every row outside D) and to D and as many non-members.
    d, rest = spec.sizes["target"], len(dataset.table) - spec.sizes["target"]
    assert parts.results == pytest.approx(0.01 + 0.5 + 0.01 + d * (rest + 2 * min(d, rest)) * 1e-9)
    assert parts.startup == 0.0 and parts.parallel == 1.0
    total = parts.setup + parts.startup + parts.generator + parts.features + parts.classifier + parts.results
    assert parts.seconds == pytest.approx(total)
    # Shadow datasets (4 shared 'out', 4 'in' per target) at their own cost, the rest at D_eval's.
    dear_shadows = breakdown(
        spec, dataset.table, workers=1, calibration=replace(_CAL, shadow_fit_sample=0.02)
    )
    assert dear_shadows.generator == pytest.approx(12 * 0.02 + 25 * 0.01 + 4 * 0.004)
    # Half a core (a busy machine): every CPU second takes two, the start-up (wall-clock) as it is.
    busy = breakdown(spec, dataset.table, workers=1, calibration=replace(_CAL, share=0.5))
    assert busy.seconds == pytest.approx(2 * total)
    # A load average of 5 on 2 cores leaves this process (one of the 5) 2/5 of a core: the
    # estimate takes the mean of that and the share measured (1).
    loaded = breakdown(spec, dataset.table, workers=1, calibration=replace(_CAL, load=5.0, cores=2))
    assert loaded.share == pytest.approx(0.7) and loaded.seconds == pytest.approx(total / 0.7)
    assert estimate_seconds(spec, dataset.table, workers=1, calibration=_CAL) == pytest.approx(total)


def test_workers_speed_up_the_units_by_the_measured_throughput_only(dataset) -> None:
    spec = _spec(dataset, generator="marginals")
    one = breakdown(spec, dataset.table, workers=1, calibration=_CAL)
    measured = replace(_CAL, startup=1.5, throughput=1.6, workers=2)
    two = breakdown(spec, dataset.table, workers=2, calibration=measured)
    assert two.parallel == pytest.approx(1.6) and two.startup == 1.5
    # Load 4 on 2 cores: 3 other processes and 2 workers share them, 0.8 cores for the workers,
    # averaged with the 1.6 measured.
    loaded = breakdown(spec, dataset.table, workers=2, calibration=replace(measured, load=4.0, cores=2))
    assert loaded.parallel == pytest.approx(1.2)
    assert two.seconds == pytest.approx(one.seconds - one.work + one.work / 1.6 + 1.5)
    # Not measured for this worker count: a core each (this process's share; the start-up is kept).
    eight = breakdown(spec, dataset.table, workers=8, calibration=measured)
    assert eight.startup == 1.5
    # Two targets and two shared chunks: at most two units run at once, however many workers.
    assert eight.parallel == 2.0


def test_the_pooled_estimate_counts_the_fits_the_run_makes(dataset, tmp_path) -> None:
    from privgame.games.engine import plan_summary, start_run

    spec = _spec(dataset, generator="marginals")
    assert spec.attack.traditional == "pooled"
    plan = plan_summary(spec, 2, table=dataset.table)
    assert plan["exact"] and plan["pool_fits"] > 0
    parts = breakdown(spec, dataset.table, workers=1, calibration=_CAL)
    assert parts.total_fits == plan["total_fits"]
    assert parts.generator == pytest.approx(plan["total_fits"] * 0.01 + 4 * 0.004)
    status = start_run(tmp_path, spec, dataset.table, workers=1).status()
    assert status["fits_total"] == status["fits_done"] == plan["total_fits"]


def test_estimate_grows_with_the_plan(dataset) -> None:
    cal = _CAL
    small = estimate_seconds(_spec(dataset), dataset.table, workers=1, calibration=cal)
    more_targets = _spec(dataset, targets=TargetSelection(mode="random", k=8))
    more_runs = _spec(dataset, attack=AttackSettings(n_shadow=40, n_eval=40))
    assert estimate_seconds(more_targets, dataset.table, workers=1, calibration=cal) > small
    assert estimate_seconds(more_runs, dataset.table, workers=1, calibration=cal) > small


def test_estimate_without_a_calibration_measures_one(dataset) -> None:
    seconds = estimate_seconds(_spec(dataset), dataset.table, workers=1)
    assert 0 < seconds < 120


def test_sizes_that_do_not_fit_the_table_are_refused(dataset) -> None:
    spec = _spec(dataset, sizes=Sizes(aux=250, eval=150, target=30).to_dict())
    with pytest.raises(SizeError, match="rows"):
        calibrate(spec, dataset.table)


def test_time_left_before_any_unit_is_the_estimate() -> None:
    assert time_left(elapsed=0.0, done=0, total=100, units_done=0, estimate_left=42.0) == 42.0
    assert time_left(elapsed=3.0, done=0, total=100, units_done=0, estimate_left=-5.0) == 0.0
    assert time_left(elapsed=3.0, done=0, total=100, units_done=0) is None


def test_time_left_when_everything_is_done_is_zero() -> None:
    assert time_left(elapsed=10.0, done=100, total=100, units_done=7, estimate_left=50.0) == 0.0
    assert time_left(elapsed=0.0, done=0, total=0, units_done=0) == 0.0


def test_one_slow_first_unit_does_not_set_the_pace() -> None:
    # The first unit took 60 s (worker start-up) for 1 fit of 100: its rate alone says 99 min.
    assert time_left(elapsed=60.0, done=1, total=100, units_done=1, estimate_left=30.0) == 30.0
    assert time_left(elapsed=60.0, done=1, total=100, units_done=1) is None


def test_time_left_follows_the_rate_of_the_finished_work() -> None:
    # Without an estimate: the rate of everything done so far.
    assert time_left(elapsed=20.0, done=40, total=100, units_done=4) == pytest.approx(30.0)
    # With one: weighed by the share done, so it moves from the estimate to the measured rate.
    blended = time_left(elapsed=20.0, done=40, total=100, units_done=4, estimate_left=60.0)
    assert blended == pytest.approx(0.4 * 30.0 + 0.6 * 60.0)
    late = time_left(elapsed=45.0, done=90, total=100, units_done=9, estimate_left=60.0)
    assert late == pytest.approx(0.9 * 5.0 + 0.1 * 60.0)


@pytest.mark.parametrize("traditional", ["pooled", "per-target"])
@pytest.mark.parametrize("generator", ["marginals", "baynet"])
def test_the_plan_the_progress_and_the_status_count_the_same_fits(
    dataset, tmp_path, capsys, traditional: str, generator: str
) -> None:
    from privgame.cli.commands._progress import ProgressBar
    from privgame.games.engine import Progress, build_context, execute, plan_summary
    from privgame.games.preflight import create_run

    spec = _spec(
        dataset, generator=generator, attack=AttackSettings(n_shadow=8, n_eval=8, traditional=traditional)
    )
    _, targets = build_context(spec, dataset.table)
    planned = plan_summary(spec, len(targets), table=dataset.table)["total_fits"]
    seen: list[Progress] = []
    bar = ProgressBar(quiet=False)

    def progress(p: Progress) -> None:
        seen.append(p)
        bar(p)

    folder = create_run(tmp_path, spec, dataset.table)
    execute(folder, workers=1, progress=progress, estimate=5.0)
    status = folder.status()
    assert seen[-1].fits_done == seen[-1].fits_total == planned
    assert status["fits_done"] == status["fits_total"] == planned
    assert all(p.fits_total == planned and p.fits_done <= planned for p in seen)
    assert f"fits {planned:,}/{planned:,}" in capsys.readouterr().err.splitlines()[-1]
    assert seen[0].eta is not None  # the estimate before any unit finished
    assert status["estimate_seconds"] == 5.0 and status["eta"] == 0.0


_COLD_AND_WARM = """
import contextlib, io, re, sys
import privgame.games.estimate
privgame.games.estimate.COST_LIMIT_SECONDS = 2 * privgame.games.estimate.DAY_SECONDS
from privgame.cli.main import main
argv = ["run", "--data", sys.argv[1], "--generator", sys.argv[2], "--all-targets", "--n-shadow",
        "100000", "--n-eval", "100000", "--attacker", "population", "--workers", "2", "--out", sys.argv[3]]
for _ in range(2):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        print(main(argv), err.getvalue().replace(chr(10), " "))
"""
_DAYS = {"days": 1.0, "years": 365.25}


@pytest.mark.parametrize("generator", ["synthpop", "baynet"])
def test_an_estimate_made_in_a_cold_process_agrees_with_a_warm_one(generator: str, tmp_path: Path) -> None:
    """The plan of the cost limit's 'years' test (every record of a 3,150-row D, 100,000 shadow
    datasets and runs) estimated first in a fresh process, then again in the same process: both
    are refused, and the two estimates are within a factor of 1.5 (they were 3.6 apart when the
    calibration's warm-up fitted 64 rows and a millisecond fit was timed once)."""
    data = tmp_path / "adult.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=4500).iloc[:, :6].to_csv(data, index=False)
    script = [sys.executable, "-c", _COLD_AND_WARM, str(data), generator, str(tmp_path / "runs")]
    done = subprocess.run(script, capture_output=True, text=True, timeout=300, cwd=ROOT, check=True)
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2, done.stdout + done.stderr
    cpu_days = []
    for line in lines:
        assert line.startswith("2 ") and "over the limit of about 2.0 days of CPU time" in line, line
        found = re.search(r"\(about ([\d,.]+) (days|years) of CPU time\)", line)
        assert found, line
        cpu_days.append(float(found.group(1).replace(",", "")) * _DAYS[found.group(2)])
    cold, warm = cpu_days
    assert 1 / 1.5 <= cold / warm <= 1.5, (cold, warm)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_busy_processes_counted_while_timing_outweigh_a_lagging_load_average(dataset) -> None:
    """Two busy processes started a moment ago: the minute's load average still reads 0.5, the
    count of runnable processes 2, and it is the count that sizes the workers' share."""
    spec = _spec(dataset, generator="marginals")
    lagging = replace(_CAL, load=0.5, cores=2, others=2.0)
    assert lagging.load_share(2) == pytest.approx(0.5) and lagging.load_share(1) == pytest.approx(2 / 3)
    two = breakdown(spec, dataset.table, workers=2, calibration=lagging)
    # The share measured (1) and the count's (2/3) make this process's; each worker's averages it
    # with the count's share for two workers (1/2).
    assert two.share == pytest.approx((1.0 + 2 / 3) / 2)
    assert two.parallel == pytest.approx(2 * ((1.0 + 2 / 3) / 2 + 0.5) / 2)
    # Load ended a moment ago: the load average still reads 3, no other process is counted.
    ended = replace(_CAL, load=3.0, cores=2, others=0.0)
    assert ended.load_share(2) == 1.0
    from privgame.games.estimate import load_note

    note = load_note(replace(lagging, share=0.6), 2)
    assert note is not None and "about 2.0 other busy processes on 2 cores" in note


def test_runnable_processes_are_counted(dataset) -> None:
    """A simulation: with two busy processes started, the count read over a second is near 2 or
    above (more on a busy test machine), never the 0 a lagging load average would suggest."""
    import subprocess
    import sys
    import time

    from privgame.games.estimate import runnable_others

    if runnable_others() is None:
        pytest.fail("this Linux machine should report procs_running in /proc/stat")
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.2)
        counts = []
        for _ in range(20):
            counts.append(runnable_others() or 0.0)
            time.sleep(0.05)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert sum(counts) / len(counts) >= 1.5, counts


def test_a_busy_machine_is_named_in_the_estimate(dataset) -> None:
    from privgame.games.estimate import check_cost, load_note

    idle = replace(_CAL, load=0.5, cores=2, share=1.0)
    busy = replace(_CAL, load=7.0, cores=2, share=0.9)
    assert load_note(idle, 2) is None
    note = load_note(busy, 2)
    assert note is not None and "load average 7.0 on 2 cores" in note and "25% of a core" in note
    spec = _spec(dataset, generator="marginals", attack=AttackSettings(n_shadow=8, n_eval=8))
    assert "the machine is busy" in check_cost(spec, dataset.table, workers=2, calibration=busy).text
    assert "busy" not in check_cost(spec, dataset.table, workers=2, calibration=idle).text
    # The busier machine gets the longer estimate.
    assert estimate_seconds(spec, dataset.table, workers=2, calibration=busy) > estimate_seconds(
        spec, dataset.table, workers=2, calibration=idle
    )
