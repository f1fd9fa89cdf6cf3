"""The cost estimate shown before a run is launched."""

from __future__ import annotations

import contextlib
import json
import math
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import psutil
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
    # Time enough to start them however busy the test machine is (see TIMING_BUDGET_SECONDS).
    cal = calibrate(_spec(dataset), dataset.table, fits=1, workers=2, budget=300.0)
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


def test_time_left_before_any_fit_is_the_estimate() -> None:
    assert time_left(elapsed=0.0, done=0, total=100, estimate=42.0) == pytest.approx(42.0)
    assert time_left(elapsed=3.0, done=0, total=100) is None
    assert time_left(elapsed=3.0, done=0, total=100, estimate=float("nan")) is None


def test_time_left_when_everything_is_done_is_zero() -> None:
    assert time_left(elapsed=10.0, done=100, total=100, estimate=50.0) == 0.0
    assert time_left(elapsed=0.0, done=0, total=0) == 0.0


def test_a_run_that_goes_as_estimated_counts_down_the_estimate() -> None:
    for elapsed in (30.0, 300.0, 600.0):
        done = 6001 * elapsed / 900.0
        assert time_left(elapsed=elapsed, done=done, total=6001, estimate=900.0) == pytest.approx(
            900.0 - elapsed
        )


def test_without_an_estimate_the_pace_needs_two_fits() -> None:
    # The first fit also paid for starting the workers: its pace alone is not extrapolated.
    assert time_left(elapsed=60.0, done=1, total=100) is None
    assert time_left(elapsed=20.0, done=40, total=100) == pytest.approx(30.0)


def test_time_left_follows_the_measured_pace_of_a_slower_run() -> None:
    """The user's run: 6,001 fits estimated at 15 minutes took 34. Eight minutes in, at its own
    pace, 26 minutes were left; the share-of-work weighting showed 11.5 (the estimate's 7 counted
    for three quarters). The measured pace must carry it after the first minutes."""
    total, estimate, actual = 6001, 15 * 60.0, 34 * 60.0

    def at(elapsed: float) -> float | None:
        return time_left(elapsed=elapsed, done=total * elapsed / actual, total=total, estimate=estimate)

    assert at(8 * 60.0) == pytest.approx(26 * 60.0, rel=0.1)
    assert at(20 * 60.0) == pytest.approx(14 * 60.0, rel=0.05)
    # At the start the estimate carries the few fits done: workers starting are not the pace.
    assert time_left(elapsed=5.0, done=0, total=total, estimate=estimate) == pytest.approx(estimate, rel=0.2)


def test_a_faster_run_than_estimated_is_shown_less_time_left() -> None:
    # 5 fits a second where 1 was estimated: 400 fits in 80 s, not the estimate's 880 s.
    left = time_left(elapsed=120.0, done=600, total=1000, estimate=1000.0)
    assert left == pytest.approx(80.0, rel=0.2)


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


# --------------------------------------------------------------------------------------------
# privgame's own runs in progress are not load
# --------------------------------------------------------------------------------------------


def test_privgame_run_commands_are_told_from_other_commands() -> None:
    from privgame.games.estimate import _runs_privgame

    runs = [
        [b"/usr/bin/python3", b"-m", b"privgame", b"run", b"--data", b"a.csv", b""],
        [b"python", b"-u", b"-m", b"privgame", b"resume", b"runs/x", b"--quiet"],
        [b"/venv/bin/python", b"/venv/bin/privgame", b"extend", b"runs/x", b"--n-eval", b"400"],
        [b"privgame", b"study", b"spec.json"],
    ]
    others = [
        [b"python", b"-m", b"privgame", b"plan", b"--data", b"a.csv"],  # an estimate, not a run
        [b"python", b"-c", b"while True: pass"],
        [b"python", b"-m", b"pytest", b"tests/privgame/run"],
        [b"/venv/bin/python", b"/venv/bin/streamlit", b"run", b"app.py"],
    ]
    assert all(_runs_privgame(argv) for argv in runs)
    assert not any(_runs_privgame(argv) for argv in others)


_HOLDS_A_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
while True:
    pass
"""


def test_a_busy_engine_started_from_python_is_privgame_work(tmp_path: Path) -> None:
    """An engine run through the Python API (a notebook's process) is known by the run folder's
    engine.lock it holds; a busy process that holds none is other load."""
    from privgame.games.estimate import busy_count, privgame_processes

    (tmp_path / "run").mkdir()
    engine = subprocess.Popen(
        [sys.executable, "-c", _HOLDS_A_LOCK, str(tmp_path / "run" / "engine.lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    other = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert engine.stdout is not None and engine.stdout.readline().strip() == "locked"
        found = privgame_processes()
        assert engine.pid in found and other.pid not in found
        counts = []
        for _ in range(20):
            counts.append(busy_count())
            time.sleep(0.05)
        # Each busy loop is runnable nearly always: the engine's counts as privgame's.
        assert sum(c.privgame for c in counts if c is not None) / len(counts) >= 0.5, counts
    finally:
        for process in (engine, other):
            process.kill()
            process.wait()


def _run_in_progress(data: Path, out: Path) -> subprocess.Popen[bytes]:
    """A real ``privgame run`` on a small table, whose plan keeps its two workers busy for
    minutes, returned once its first fits are done."""
    command = [sys.executable, "-m", "privgame", "run", "--data", str(data), "--generator", "synthpop"]
    command += ["--targets", "20", "--n-shadow", "1000", "--n-eval", "1000", "--workers", "2"]
    command += ["--out", str(out), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 180
    while time.time() < deadline and process.poll() is None:
        for status in out.glob("*/status.json"):
            with contextlib.suppress(ValueError, OSError):
                if json.loads(status.read_text()).get("fits_done", 0) > 0:
                    time.sleep(1.0)  # every worker at work
                    return process
        time.sleep(0.2)
    process.kill()
    process.wait()
    pytest.fail("the privgame run did not start its units within 3 minutes")


def _busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def _end(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
    for process in processes:
        process.wait()


def test_an_estimate_made_beside_a_privgame_run_is_the_idle_machines(
    dataset, small_adult: Path, tmp_path: Path
) -> None:
    """The dashboard said 56 minutes and ``privgame plan`` 2.3 hours a few minutes apart: a
    privgame run was busy during the second. Beside a real run (its engine and two busy workers)
    the estimate is the idle machine's; two busy processes that are not privgame's still count.

    The test machine is shared: other work comes and goes. The run's two workers are busy all the
    time, so the quietest of three calibrations beside it is compared with the idle machine before
    and after (today's count read 7 beside the run against 4 and 5 idle)."""
    from privgame.games.estimate import privgame_processes

    spec = _spec(dataset, generator="marginals")

    def estimate_beside(loaded: Calibration) -> float:
        # The machine's load enters the estimate through these figures only; the costs are the
        # idle calibration's, so that their own noise does not blur the comparison.
        seen = replace(idle, share=loaded.share, others=loaded.others, load=loaded.load)
        return estimate_seconds(spec, dataset.table, workers=2, calibration=seen)

    def others(cal: Calibration) -> float:
        assert cal.others is not None, "this Linux machine should let /proc be read"
        return cal.others

    idle = calibrate(spec, dataset.table, workers=2)
    run = _run_in_progress(small_adult, tmp_path / "runs")
    try:
        workers = {child.pid for child in psutil.Process(run.pid).children(recursive=True)}
        assert workers and run.pid in privgame_processes() and workers <= privgame_processes()
        beside_run = min((calibrate(spec, dataset.table, workers=2) for _ in range(3)), key=others)
    finally:
        _end([run])
    loops = _busy_loops(2)
    try:
        time.sleep(0.3)
        assert not {p.pid for p in loops} & privgame_processes()
        beside_loops = calibrate(spec, dataset.table, workers=2)
    finally:
        _end(loops)
    idle_again = calibrate(spec, dataset.table, workers=2)
    quiet = [others(idle), others(idle_again)]
    # The run's two busy workers are not other busy processes; the two busy loops are.
    assert others(beside_run) <= max(quiet) + 0.5, (quiet, beside_run)
    assert others(beside_loops) >= min(quiet) + 1, (quiet, beside_loops)
    estimates = [estimate_beside(idle), estimate_beside(idle_again)]
    near = min(abs(estimate_beside(beside_run) / e - 1) for e in estimates)
    assert near <= 0.25, (beside_run, idle, idle_again)
    assert estimate_beside(beside_loops) > min(estimates), (beside_loops, idle, idle_again)


# --------------------------------------------------------------------------------------------
# The first estimate: what it is timing, and a time budget
# --------------------------------------------------------------------------------------------


def test_the_calibration_tells_what_it_is_timing(dataset) -> None:
    told: list[tuple[str, float]] = []
    calibrate(_spec(dataset), dataset.table, fits=3, progress=lambda what, done: told.append((what, done)))
    said = [what for what, _ in told]
    for step in ("round 1 of 3", "round 2 of 3", "round 3 of 3", "meta-classifier"):
        assert any(step in what for what in said), said
    assert said[0].startswith("Preparing") and any(
        w.startswith("Timing the generator: a warm-up") for w in said
    )
    fractions = [done for _, done in told]
    assert fractions == sorted(fractions) and fractions[0] >= 0 and fractions[-1] == 1.0


def test_a_slow_generator_keeps_the_first_estimate_to_its_budget(dataset) -> None:
    """Every fit takes 2.5 s: four rounds of two fits took 20 s and more. Within the budget of
    12 s, the warm-up round (two fits) and one timed round are made."""
    from slow_generator import slow_generator

    with slow_generator(2.5) as name:
        spec = _spec(dataset, generator=name)
        started = time.perf_counter()
        cal = calibrate(spec, dataset.table, workers=1)
        seconds = time.perf_counter() - started
    assert seconds <= estimate.TIMING_BUDGET_SECONDS + 3.0, seconds
    assert cal.fits == 1 and cal.fit_sample >= 0.0


def test_a_warm_up_that_compiles_for_long_is_never_the_timing(dataset) -> None:
    """In a fresh install the warm-up compiles every kernel (a minute on a 35,000-row D): taken
    as the timing once the budget ran out, it made a 40-minute run 8 hours. A timed round follows
    it, however long it took."""
    from slow_generator import slow_generator

    with slow_generator(0.0, compiling=6.0) as name:
        cal = calibrate(_spec(dataset, generator=name), dataset.table, workers=1)
    assert cal.fits >= 1
    assert cal.shadow_fit_sample < 1.0 and cal.fit_sample < 1.0, cal


def test_a_privgame_run_in_progress_is_named_beside_the_estimate(dataset) -> None:
    """Not counted as load, it still slows this run while it goes on: the note says so."""
    from privgame.games.estimate import check_cost, load_note

    beside = replace(_CAL, cores=2, share=1.0, others=0.0, privgame=2.0)
    note = load_note(beside, 2)
    assert note is not None and "a privgame run in progress (2 busy processes) is not counted" in note
    assert load_note(replace(beside, privgame=0.0), 2) is None
    spec = _spec(dataset, generator="marginals", attack=AttackSettings(n_shadow=8, n_eval=8))
    assert (
        "takes longer while it goes on" in check_cost(spec, dataset.table, workers=2, calibration=beside).text
    )


def test_a_timing_is_reused_for_the_same_work_until_it_is_old(
    dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's sessions share one timing of the same work for a while: a new browser tab
    or another seed (other rows, the same cost) does not time the generator again; another
    generator, other workers or an old timing does."""
    timed: list[str] = []

    def fake(spec: RunSpec, table: object, **_: object) -> str:
        timed.append(spec.generator)
        return f"timing {len(timed)}"

    monkeypatch.setattr(estimate, "calibrate", fake)
    monkeypatch.setattr(estimate, "_TIMINGS", {})
    spec = _spec(dataset)
    first = estimate.calibrate_once(spec, dataset.table, workers=1)
    assert first == ("timing 1", spec.attack.n_shadow)
    assert estimate.calibrate_once(replace(spec, seed=5), dataset.table, workers=1) == first
    changed = replace(spec, attack=replace(spec.attack, n_shadow=spec.attack.n_shadow * 2))
    assert estimate.calibrate_once(changed, dataset.table, workers=1) == first  # scaled, not timed
    assert estimate.calibrate_once(spec, dataset.table, workers=2)[0] == "timing 2"
    assert (
        estimate.calibrate_once(replace(spec, generator="baynet"), dataset.table, workers=1)[0] == "timing 3"
    )
    assert estimate.calibrate_once(spec, dataset.table, workers=1, max_age=0.0)[0] == "timing 4"
    assert timed == [spec.generator, spec.generator, "baynet", spec.generator]
