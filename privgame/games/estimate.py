"""How long a run will take on this machine, measured before it starts, and how long is left.

:func:`calibrate` times, on the run's own data and sizes, the CPU seconds of every kind of work
a run does (CPU time, not wall-clock time: it does not change with the machine's load):

- ``setup``: building the run's context in the engine (encoding D, the splits, the audit plan);
- ``fit`` and ``sample``: one generator fit and one sample of ``|D|`` rows, on a dataset drawn
  from D_eval and on a shadow dataset drawn from D_aux (the median of a few, after an untimed
  warm-up fit that absorbs one-off costs such as numba's compilation, which the run itself then
  finds in the on-disk cache); an external generator command counts with the wall-clock seconds
  waited for it, as its work runs in a process of its own;
- ``refit_sample``: for a generator with ``refit_swap``, one exact one-row refit of the model on
  D plus a sample: each dataset that is D with one row swapped (the model-seeded 'out' runs, the
  leave-one-out attacker's own shadow datasets) costs this instead of a fresh fit;
- ``features``: the attack's query features on one synthetic dataset;
- ``classifier``: one meta-classifier fit on ``N_shadow`` feature rows, its scoring of the
  ``2 N_eval`` evaluation runs and its checkpoint;
- ``share``: the share of a core this process got while it was timed (CPU seconds per
  wall-clock second; below 1 on a busy machine), averaged with what the machine's other busy
  processes leave to it (``cores / (others + 1)``). ``others`` is counted while the generator is
  timed (the runnable processes the kernel reports, this one aside: the median over the timed
  rounds, so that a burst, such as the browser drawing the page that asked for the estimate,
  does not read as load); the last minute's load average stands in where that count cannot be
  read. The load average alone lagged: two busy processes started 5 s before a run read as a
  load of 0.5, and the run took twice its estimate;
- with several workers, ``startup``: the seconds until fresh worker processes have imported
  privgame and loaded the generator's kernels (they are started and timed for real), and
  ``throughput``: the cores those workers get together while they all fit at once (the sum of
  their shares: 2 workers on 2 busy cores get less than 2; measured, not assumed), averaged
  likewise with ``workers * cores / (others + workers)``. Timing fresh workers costs seconds
  of its own, so it is done only for a run whose work is a minute of CPU time or more
  (:data:`WORKER_TIMING_WORK`); a smaller run is estimated with a fixed start-up allowance.

:func:`breakdown` then counts the run's work exactly from its plan
(:func:`privgame.games.context.plan_summary`, which counts the pooled traditional game's fits
from the audited records):

``seconds = (setup + probe + results) / share + startup + (generator + features + classifier) / parallel``

where ``generator`` is the plan's shadow fits times a shadow dataset's ``fit + sample`` (drawn
from D_aux), its other fits times a D_eval dataset's, plus, for a generator whose fit is
deterministic, the ``N_eval / 2`` model-seeded 'in' samples of its single fit on D; ``features``
is every scored dataset's features, ``(N_shadow + 2 N_eval) * features`` per target; ``classifier``
one fit, scoring and checkpoint per target; ``probe`` the engine's own timing of a fit when it
sizes its units (up to three fits), and the single model-seeded fit on D when it is
deterministic; ``results`` one fit on D (the release's metadata) and a second pass over the
table; ``parallel`` the measured throughput of the workers (``share`` with one worker, in this
process), scaled down when fewer units than workers can run at once. The calibration draws its
rows from a stream of its own, so it never changes a run's results.

While a run goes, :func:`time_left` gives the time left from the rate of the finished work.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import statistics
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.seeding import stream
from privgame.settings.run_spec import RunSpec

__all__ = [
    "Breakdown",
    "Calibration",
    "breakdown",
    "calibrate",
    "cost_warning",
    "estimate_seconds",
    "load_note",
    "time_left",
]

CALIBRATION_FITS = 3
STARTUP_SECONDS = 3.0
"""Worker start-up allowed for when a calibration did not start workers (one worker, a Dask
cluster, or a run too small to be worth timing them): what two fresh workers took to import the
engine and load its compiled kernels on a 2-core machine (``run --dry-run`` measures it for a
large run: 3.0 s; 2.0 s left ``benchmarks/estimate.py``'s small Adult run estimated at 0.65 of its
time)."""
_CALIBRATION_STREAM = 11  # a stream no run uses for its results
_WARM_UP_ROWS = 64
_MIN_TIMED_SECONDS = 0.25
_MAX_TIMED_ROUNDS = 40
_WORTH_TIMING_SECONDS = 60.0  # a run estimated shorter than this needs no more than `fits` rounds
_SHARE_SECONDS = 1.0  # each worker fits for at least this long when its share of a core is measured
_SHARE_ROWS = 1_000
# The most feature rows the calibration trains a meta-classifier on; more are scaled as n log n,
# which on 32,767 query features predicted the fit on 1,000 rows from 250 within 4%.
_CLASSIFIER_ROWS = 250
_PROBE_SECONDS = 1.0  # as privgame.games.engine._PROBE_SECONDS: the engine's own timing of a fit
DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class Calibration:
    """Measured costs of the pieces of a run, in seconds.

    Attributes
    ----------
    fit_sample : float
        Median CPU seconds of one generator fit on ``|D|`` rows drawn from D_eval plus one sample
        of ``|D|`` rows.
    features : float
        Median CPU seconds of the attack's query features on one synthetic dataset.
    classifier : float
        CPU seconds of one meta-classifier fit on ``N_shadow`` feature rows, its scoring of
        ``2 N_eval`` rows and its checkpoint.
    fits : int
        Number of calibration fits timed.
    sample : float
        Median CPU seconds of the sample alone (0 when not measured).
    setup : float
        CPU seconds to build the run's context from the table.
    shadow_fit_sample : float or None
        The same for a shadow dataset, drawn from D_aux (None: as ``fit_sample``).
    share : float
        The share of a core this process got while timed (1: a core of its own).
    startup : float or None
        Wall-clock seconds until freshly started worker processes could work (None: not measured).
    throughput : float or None
        Cores that ``workers`` processes got together while fitting at once (None: not measured).
    workers : int
        The worker processes ``startup`` and ``throughput`` were measured with.
    load : float or None
        The machine's load average over the last minute, when timed (None: not known).
    others : float or None
        Other processes runnable at once while the generator was timed, the median over its timed
        rounds (None: not known); preferred to ``load`` by :meth:`load_share`, as it is not a
        minute behind.
    cores : int
        The cores this process may use.
    refit_sample : float or None
        Median CPU seconds of one exact one-row refit of the model on D (``refit_swap``) plus one
        sample of ``|D|`` rows: the cost of each swapped dataset (the model-seeded 'out' runs and
        the leave-one-out attacker's shadow datasets); None when the generator has no
        ``refit_swap`` (each swapped dataset is then a fresh fit).
    """

    fit_sample: float
    features: float
    classifier: float
    fits: int = CALIBRATION_FITS
    sample: float = 0.0
    setup: float = 0.0
    shadow_fit_sample: float | None = None
    share: float = 1.0
    startup: float | None = None
    throughput: float | None = None
    workers: int = 1
    load: float | None = None
    cores: int = 1
    refit_sample: float | None = None
    others: float | None = None

    def busy_others(self) -> float | None:
        """How many other processes keep the machine busy: ``others`` when counted, else the load
        average less this process (busy while timed); None when neither is known."""
        if self.others is not None and math.isfinite(self.others):
            return max(0.0, self.others)
        if self.load is None or not math.isfinite(self.load):
            return None
        return max(0.0, self.load - 1.0)

    def load_share(self, processes: int) -> float:
        """The share of a core each of ``processes`` busy processes can expect beside the other
        processes that keep the machine busy (:meth:`busy_others`), which share its cores.

        Parameters
        ----------
        processes : int

        Returns
        -------
        float
            In (0, 1]; 1 when the load is not known.
        """
        others = self.busy_others()
        if others is None:
            return 1.0
        return min(1.0, self.cores / (others + max(1, processes)))


def runnable_others() -> float | None:
    """Processes (threads) runnable on the machine right now, this one aside; None where the
    kernel does not say (``procs_running`` of Linux's ``/proc/stat``, read in microseconds)."""
    try:
        with open("/proc/stat", "rb") as stat:
            for line in stat:
                if line.startswith(b"procs_running "):
                    return max(0.0, float(line.split()[1]) - 1.0)  # this process is running
    except (OSError, ValueError, IndexError):
        return None
    return None


def _work_clock() -> float:
    """CPU seconds of this process, plus the wall-clock seconds it waited for an external
    generator command (:mod:`privgame.generators.external`): that work runs in another process,
    which :func:`time.process_time` does not count, while the worker waits for it all the same."""
    from privgame.generators.external import command_seconds

    return time.process_time() + command_seconds()


def _worker_ready(ctx: Any, rows: np.ndarray) -> float:
    """In a fresh worker: import and first use of what a run's units use (the generator and its
    compiled kernels, the query features, the meta-classifier), on a few rows; returns the wall
    clock when done."""
    rng = stream(ctx.seed, 1, _CALIBRATION_STREAM)
    with contextlib.suppress(Exception):  # the timed fits report a generator's errors
        synthetic = ctx.new_generator().fit(rows, ctx.schema, rng=rng).sample(len(rows), rng=rng)
        attacks = ctx.featuriser()
        features = np.stack([attacks.features(synthetic[i:], rows[0]) for i in range(4)])
        labels = np.array([0, 1, 0, 1], dtype=np.int8)
        attacks.fit(features, labels, root=ctx.seed, key=1).score(features)
    return time.time()


def _worker_fits(generator: str, params: dict, rows: np.ndarray, schema: object, seed: int) -> float:
    """In a worker: the share of a core it gets (CPU seconds per wall-clock second) while it fits
    and samples ``rows`` for at least ``_SHARE_SECONDS``."""
    from privgame.generators import create

    rng = stream(seed, 2, _CALIBRATION_STREAM)
    wall0, cpu0 = time.perf_counter(), _work_clock()
    while time.perf_counter() - wall0 < _SHARE_SECONDS:
        create(generator, **params).fit_sample(rows, schema, len(rows), rng=rng)
    wall, cpu = time.perf_counter() - wall0, _work_clock() - cpu0
    return min(1.0, cpu / wall) if wall > 0 else 1.0


def _measure_workers(ctx: Any, rows: np.ndarray, workers: int) -> tuple[float, float]:
    """Start ``workers`` fresh processes as the engine does (loky), time their start-up, then
    let them all fit at once; returns ``(startup, throughput)``, the cores they got together."""
    from joblib.externals.loky import ProcessPoolExecutor

    args = (ctx.generator, dict(ctx.generator_params), rows, ctx.schema)
    small = rows[:_WARM_UP_ROWS]
    started = time.time()
    executor = ProcessPoolExecutor(max_workers=workers)
    try:
        ready = [executor.submit(_worker_ready, replace(ctx, X=ctx.X[:0]), small) for _ in range(workers)]
        startup = max(f.result() for f in ready) - started
        # The share a worker gets does not depend on the fit's size: a small one samples it often.
        some = rows[:_SHARE_ROWS]
        timed = [
            executor.submit(_worker_fits, args[0], args[1], some, args[3], ctx.seed) for _ in range(workers)
        ]
        throughput = sum(f.result() for f in timed)
    finally:
        executor.shutdown(wait=True)
    return startup, max(0.05, throughput)


WORKER_TIMING_WORK = 60.0
"""CPU seconds of work from which :func:`calibrate` starts and times real worker processes."""


def _rough_work(spec: RunSpec, d_rows: int, per_dataset: float, classifier: float) -> float:
    """A quick upper view of a run's CPU seconds: every target's datasets and its classifier."""
    chosen = spec.targets
    targets = {
        "plan": chosen.outliers + chosen.random,
        "ids": len(chosen.ids),
        "all": d_rows,
    }.get(chosen.mode, chosen.k if chosen.k is not None else d_rows)
    datasets = spec.attack.n_shadow + 2 * spec.attack.n_eval
    return float(targets) * (datasets * per_dataset + classifier)


def calibrate(
    spec: RunSpec, table: pd.DataFrame, *, fits: int = CALIBRATION_FITS, workers: int = 1
) -> Calibration:
    """Time the generator, the query features, the meta-classifier and the workers on this machine.

    Parameters
    ----------
    spec : RunSpec
        The run to calibrate for (generator, parameters, sizes, attack settings, seed).
    table : DataFrame
        The prepared table the run will audit.
    fits : int, default 3
        Number of generator fits + samples to time, after an untimed warm-up; the median is kept.
        Fits so fast that these add up to less than a quarter of a second are timed more often
        (up to 40 times), as one such timing is mostly noise.
    workers : int, default 1
        Local worker processes the run will use; with more than one, that many are started and
        their start-up and speed-up timed (a few seconds).

    Returns
    -------
    Calibration

    Raises
    ------
    SizeError, SchemaError, ParameterError
        When the spec does not fit the table or the generator's parameters are invalid.
    """
    from privgame.games import plan
    from privgame.games.context import build_context

    started = time.process_time()
    ctx, targets = build_context(spec, table)
    setup = time.process_time() - started
    rng = stream(spec.seed, 0, _CALIBRATION_STREAM)
    target = ctx.X[int(targets[0]) if len(targets) else int(ctx.target[0])]
    queries = ctx.featuriser()
    rows = plan.shadow_out_rows(rng, ctx.aux, ctx.n_shadow_rows, replace=ctx.shadow_replace)
    training = ctx.X[rows]
    # The games' other datasets are drawn from D_eval, whose rows (unlike a shadow dataset drawn
    # with replacement from a small D_aux) are all distinct: a generator's cost can differ.
    pool_rows = ctx.X[rng.choice(ctx.eval_pool, ctx.n, replace=len(ctx.eval_pool) < ctx.n)]
    fit_times: list[float] = []
    shadow_times: list[float] = []
    sample_times: list[float] = []
    feature_times: list[float] = []
    feature_rows: list[np.ndarray] = []
    clock = _work_clock  # CPU seconds: the same on a busy machine
    wall0 = cpu0 = 0.0
    others: list[float] = []
    # The first round is a warm-up, not timed: it absorbs one-off costs (compiling or loading
    # kernels for the data's shapes, first-call caches, the first touch of memory) the run will
    # not pay. A warm-up on a few rows left some of them to the first timed fit, and a cold process
    # estimated a run 3.6 times longer than a warm one (tests/games/test_estimate.py holds them to 1.5).
    # Fits of a millisecond are timed over more rounds (as timeit does), until the timed rounds
    # add up to _MIN_TIMED_SECONDS: one round of them is mostly noise. Not for a run that would
    # take under a minute anyway (roughly: its fits at the first round's pace), whose estimate
    # needs no such precision.
    rough_fits = len(targets) * (spec.attack.n_shadow / 2 + spec.attack.n_eval) + spec.attack.n_shadow
    round_ = 0
    while round_ <= max(1, fits) or (
        sum(shadow_times) + sum(fit_times) < _MIN_TIMED_SECONDS
        and round_ <= _MAX_TIMED_ROUNDS
        and rough_fits * (shadow_times[0] + fit_times[0]) >= _WORTH_TIMING_SECONDS
    ):
        if round_ == 1:
            fit_times, shadow_times, sample_times, feature_times, feature_rows = [], [], [], [], []
            wall0, cpu0 = time.perf_counter(), clock()
        round_ += 1
        counted = runnable_others()
        if counted is not None:
            others.append(counted)
        t0 = clock()
        ctx.new_generator().fit_sample(training, ctx.schema, ctx.n, rng=rng)
        shadow_times.append(clock() - t0)
        t0 = clock()
        generator = ctx.new_generator().fit(pool_rows, ctx.schema, rng=rng)
        t1 = clock()
        synthetic = generator.sample(ctx.n, rng=rng)
        t2 = clock()
        feature_rows.append(queries.features(synthetic, target))
        fit_times.append(t2 - t0)
        sample_times.append(t2 - t1)
        feature_times.append(clock() - t2)

    precise = rough_fits * (shadow_times[0] + fit_times[0]) >= _WORTH_TIMING_SECONDS
    refit_times = _time_refits(ctx, rng, max(1, fits), precise=precise)

    # A training matrix of the run's shape: the measured feature rows, jittered, half 'in'. A huge
    # plan (100,000 shadow datasets of 32,767 features is 24 GiB) is timed on at most
    # _CLASSIFIER_ROWS rows and scaled: a random forest's fit grows as n log n, its scoring as n.
    n_rows = min(spec.attack.n_shadow, _CLASSIFIER_ROWS)
    n_scored = min(2 * spec.attack.n_eval, _CLASSIFIER_ROWS)
    base = np.stack(feature_rows)[np.arange(n_rows) % len(feature_rows)]
    train = base + rng.poisson(1.0, size=base.shape).astype(np.float32)
    labels = (np.arange(n_rows) % 2).astype(np.int8)
    t0 = clock()
    fitted = queries.fit(train, labels, root=spec.seed, key=1)
    t1 = clock()
    # A target's unit also scores its 2 N_eval runs and checkpoints the classifier.
    fitted.score(base[np.arange(n_scored) % n_rows])
    pickle.dumps(fitted)
    t2 = clock()
    grow = spec.attack.n_shadow / n_rows * math.log2(max(2, spec.attack.n_shadow)) / math.log2(max(2, n_rows))
    classifier = (t1 - t0) * grow + (t2 - t1) * (2 * spec.attack.n_eval) / n_scored
    wall, cpu = time.perf_counter() - wall0, clock() - cpu0
    share = min(1.0, max(0.05, cpu / wall)) if wall > 0 else 1.0
    startup = throughput = None
    workers = max(1, int(workers))
    per_dataset = statistics.median(fit_times) + statistics.median(feature_times)
    if workers > 1 and _rough_work(spec, ctx.n, per_dataset, classifier) >= WORKER_TIMING_WORK:
        startup, throughput = _measure_workers(ctx, training, workers)
    from privgame.settings.executors import default_workers

    return Calibration(
        fit_sample=statistics.median(fit_times),
        shadow_fit_sample=statistics.median(shadow_times),
        features=statistics.median(feature_times),
        classifier=classifier,
        fits=len(fit_times),
        sample=statistics.median(sample_times),
        setup=setup,
        share=share,
        startup=startup,
        throughput=throughput,
        workers=workers,
        load=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        cores=default_workers(),
        refit_sample=statistics.median(refit_times) if refit_times else None,
        others=statistics.median(others) if others else None,
    )


def _time_refits(ctx: Any, rng: np.random.Generator, fits: int, *, precise: bool = True) -> list[float]:
    """CPU seconds of ``fits`` one-row refits of the model on D plus a sample of ``|D|`` rows
    (after an untimed one that compiles the refit's kernels; with ``precise``, more while they
    add up to less than :data:`_MIN_TIMED_SECONDS`), or none when the generator has no
    ``refit_swap``."""
    model = ctx.new_generator()
    if not callable(getattr(model, "refit_swap", None)) or not len(ctx.reference):
        return []
    clock = time.process_time
    try:
        model.fit(ctx.X[ctx.target], ctx.schema, rng=rng)
        times: list[float] = []
        k = 0
        while k <= fits or (precise and sum(times) < _MIN_TIMED_SECONDS and k <= _MAX_TIMED_ROUNDS):
            position = int(rng.integers(len(ctx.target)))
            row = ctx.X[int(ctx.reference[rng.integers(len(ctx.reference))])]
            t0 = clock()
            model.refit_swap(position, row, rng=rng).sample(ctx.n, rng=rng)
            if k:  # the first refit compiles what the run finds in the on-disk cache
                times.append(clock() - t0)
            k += 1
    except Exception:  # a plug-in's refit that fails is timed as fresh fits; the run reports it
        return []
    return times


@dataclass(frozen=True)
class Breakdown:
    """An estimate of a run's wall-clock time, by part, in seconds.

    ``seconds`` is ``(setup + results) / share + startup + (generator + features + classifier) /
    parallel``; every part but ``startup`` (wall-clock) is in CPU seconds.

    Attributes
    ----------
    setup : float
        Serial work in the engine before the units: the context, the engine's timing of a fit,
        and a deterministic generator's single model-seeded fit on D.
    startup : float
        Starting the worker processes (wall-clock seconds).
    generator : float
        Every generator fit and sample of the plan.
    features : float
        The attack's features on every scored dataset.
    classifier : float
        Every meta-classifier fit.
    results : float
        Assembling and writing the results, and the release's similarity checks (one more fit and
        sample, and the distances).
    share : float
        The share of a core the engine's own process gets (for ``setup`` and ``results``).
    parallel : float
        The cores the workers get together (measured), scaled down when fewer units than
        workers can run at once.
    total_fits : int
        The plan's generator fits.
    """

    setup: float
    startup: float
    generator: float
    features: float
    classifier: float
    results: float
    share: float
    parallel: float
    total_fits: int

    @property
    def work(self) -> float:
        """CPU seconds of the units."""
        return self.generator + self.features + self.classifier

    @property
    def cpu(self) -> float:
        """CPU seconds of the whole run (worker start-up aside)."""
        return self.setup + self.results + self.work

    @property
    def seconds(self) -> float:
        """The estimated wall-clock seconds."""
        return (self.setup + self.results) / self.share + self.startup + self.work / self.parallel


def breakdown(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    calibration: Calibration | None = None,
    scheduler: bool = False,
) -> Breakdown:
    """The estimated time of the run ``spec`` on ``table`` with ``workers`` processes, by part.

    Parameters
    ----------
    spec : RunSpec
        The run (validated or not; the table must fit its sizes).
    table : DataFrame
        The prepared table.
    workers : int
        Local worker processes (or Dask workers) the run will use.
    calibration : Calibration, optional
        A calibration measured earlier with :func:`calibrate` for the same generator, sizes and
        attack settings; measured now (with ``workers``) when not given.
    scheduler : bool, default False
        Whether the run goes to a Dask cluster, whose workers this machine cannot time: each is
        then taken to have a core of its own.

    Returns
    -------
    Breakdown
    """
    from privgame.games.context import CHUNK, build_context, plan_summary
    from privgame.generators import resolve

    workers = max(1, int(workers))
    cal = (
        calibration
        if calibration is not None
        else calibrate(spec, table, workers=1 if scheduler else workers)
    )
    ctx, targets = build_context(spec, table)
    plan = plan_summary(spec, len(targets), table=table)
    n_targets = int(plan["n_targets"])  # with the screen's top records, which the exact game plays
    n_shadow, n_eval = spec.attack.n_shadow, spec.attack.n_eval
    deterministic = bool(getattr(resolve(spec.generator), "deterministic_fit", False))
    sample = cal.sample if cal.sample > 0 else cal.fit_sample
    half_shadow, half_eval = n_shadow // 2, n_eval // 2
    # A deterministic fit on D is fitted once and sampled for every model-seeded 'in' dataset
    # (and, against the leave-one-out attacker, every shared shadow dataset).
    loo = spec.attack.attacker == "leave-one-out"
    on_d_samples = (half_eval + (half_shadow if loo else 0)) if deterministic else 0
    shadow = cal.fit_sample if cal.shadow_fit_sample is None else cal.shadow_fit_sample
    # Swapped datasets (D with one row swapped) are one-row refits where the generator has them.
    swap = cal.fit_sample if cal.refit_sample is None else cal.refit_sample
    swapped = n_targets * (half_eval + (half_shadow if loo else 0))
    own_shadow = 0 if loo else n_targets * half_shadow  # the population attacker's 'in' datasets
    shared_shadow = 0 if loo else half_shadow  # its 'out' datasets, from D_aux
    screen_fits = int(plan.get("screen_fits", 0))  # fresh fits on D with a share swapped
    others = plan["total_fits"] - swapped - own_shadow - shared_shadow
    generator = (
        (own_shadow + shared_shadow) * shadow
        + swapped * swap
        + max(0, others) * cal.fit_sample
        + on_d_samples * sample
    )
    screen_features = screen_fits * screen_table_seconds(
        len(ctx.target), int(ctx.X.shape[1]), value_counts="values" in ctx.attacks
    )
    probe = min(3 * cal.fit_sample, _PROBE_SECONDS + cal.fit_sample)
    setup = cal.setup + probe + (cal.fit_sample if deterministic else 0.0)
    shared_chunks = math.ceil(n_shadow / 2 / CHUNK) + math.ceil(n_eval / 2 / CHUNK)
    at_once = max(1, min(workers, max(n_targets, shared_chunks)))
    # The share measured while timed and the one the other busy processes leave: both count.
    known = cal.busy_others() is not None
    share = min(1.0, max(0.05, (cal.share + cal.load_share(1)) / 2 if known else cal.share))
    if workers == 1:
        throughput, startup = share, 0.0
    elif scheduler:
        throughput, startup = float(workers), STARTUP_SECONDS
    elif cal.throughput is None or cal.workers != workers:
        # Not measured for this count: each worker gets the share this process got.
        throughput = workers * ((share + cal.load_share(workers)) / 2 if known else share)
        startup = STARTUP_SECONDS if cal.startup is None else cal.startup
    else:
        throughput = (cal.throughput + workers * cal.load_share(workers)) / 2 if known else cal.throughput
        startup = float(cal.startup or 0.0)
    return Breakdown(
        setup=setup,
        startup=startup,
        generator=generator,
        features=n_targets * (n_shadow + 2 * n_eval) * cal.features + screen_features,
        classifier=n_targets * cal.classifier,
        results=cal.fit_sample + cal.setup + _similarity_seconds(spec, len(table), cal),
        share=share,
        parallel=throughput * at_once / workers,
        total_fits=int(plan["total_fits"]),
    )


# CPU seconds of the screen's statistics per record and per (column + pairs of columns / 5):
# benchmarks/screen.py measures about 0.08 s a table on Adult (31,655 rows, 15 columns).
_SCREEN_CELL_SECONDS = 7e-8

# CPU seconds of the exact-values attack's every-record count per record and column or pair of
# columns: 0.143 s a table on Adult (31,655 rows, 15 columns and 105 pairs) on this 2-core machine.
_VALUE_COUNT_SECONDS = 3.8e-8


def screen_table_seconds(n: int, d: int, *, value_counts: bool = False) -> float:
    """CPU seconds of the screen's statistics of every record of an ``n``-row D with ``d`` used
    columns on one synthetic table (:func:`privgame.attack.screening.screen_statistics`, and with
    ``value_counts`` the exact-values attack's :class:`~privgame.attack.values.ExactValueCounts`)."""
    cells = n * (d + d * (d - 1) / 10) * _SCREEN_CELL_SECONDS
    return cells + (n * d * (d + 1) / 2 * _VALUE_COUNT_SECONDS if value_counts else 0.0)


# Seconds per pair of rows the release's similarity checks compare (privgame.data.similarity's search
# with its early exits; benchmarks/similarity.py: about 2.3e9 pairs in 1.8 s on Adult).
_SIMILARITY_PAIR_SECONDS = 1e-9


def _similarity_seconds(spec: RunSpec, n_rows: int, cal: Calibration) -> float:
    """The release's similarity checks at the end of the run (:mod:`privgame.games.closeness`):
    one more fit and sample of the release, and its distances to the non-members and to D."""
    from privgame.games.closeness import MAX_HOLDOUT_ROWS

    d = int(spec.sizes["target"])
    holdout = min(max(n_rows - d, 0), MAX_HOLDOUT_ROWS)
    synthetic = spec.setup.synthetic_rows or d
    pairs = synthetic * (holdout + 2 * min(d, holdout))
    return cal.fit_sample + pairs * _SIMILARITY_PAIR_SECONDS


def estimate_seconds(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    calibration: Calibration | None = None,
    scheduler: bool = False,
) -> float:
    """Estimated wall-clock seconds of the run ``spec`` on ``table`` with ``workers`` processes.

    The sum of :func:`breakdown`'s parts (see the module notes).

    Parameters
    ----------
    spec : RunSpec
        The run (validated or not; the table must fit its sizes).
    table : DataFrame
        The prepared table.
    workers : int
        Local worker processes (or Dask workers) the run will use.
    calibration : Calibration, optional
        A calibration measured earlier with :func:`calibrate` for the same generator, sizes and
        attack settings; measured now when not given.
    scheduler : bool, default False
        Whether the run goes to a Dask cluster (see :func:`breakdown`).

    Returns
    -------
    float
        Seconds.
    """
    return breakdown(spec, table, workers=workers, calibration=calibration, scheduler=scheduler).seconds


def time_left(
    *,
    elapsed: float,
    done: float,
    total: float,
    units_done: int,
    estimate_left: float | None = None,
) -> float | None:
    """Seconds left in a run, from the rate of its finished work.

    Parameters
    ----------
    elapsed : float
        Seconds since the first unit of this attempt started.
    done, total : float
        Work finished by this attempt, and the work this attempt had to do (in any unit, e.g.
        generator fits, or estimated seconds per unit).
    units_done : int
        Units this attempt finished; the rate of a single unit is never extrapolated on its own
        (the first unit also pays for starting the workers).
    estimate_left : float, optional
        The time left by the estimate made before the run (its estimated seconds less the
        seconds since the run started). Used alone before two units are done, and weighed
        against the measured rate by the share of the work done.

    Returns
    -------
    float or None
        Seconds left (0 when all is done); None while nothing can be said (fewer than two units
        done and no estimate).
    """
    if total <= 0 or done >= total:
        return 0.0
    prior = None
    if estimate_left is not None and math.isfinite(estimate_left):
        prior = max(0.0, float(estimate_left))
    if units_done < 2 or done <= 0 or elapsed <= 0:
        return prior
    measured = elapsed / done * (total - done)
    if prior is None:
        return measured
    share = done / total  # the measured rate counts for more as more work is measured
    return share * measured + (1 - share) * prior


def cost_warning(seconds: float) -> str | None:
    """A warning sentence when a run would take more than a day, else None.

    Parameters
    ----------
    seconds : float
        An estimate from :func:`estimate_seconds`.

    Returns
    -------
    str or None
        The expected duration in days and the ways to shorten it; None up to one day.
    """
    if not seconds > DAY_SECONDS:  # also None for NaN
        return None
    duration = (
        f"about {seconds / DAY_SECONDS:.1f} days"
        if math.isfinite(seconds)
        else "longer than can be estimated"
    )
    return (
        f"This run would take {duration} on this machine; choose fewer targets, smaller N_shadow and "
        "N_eval, a faster generator, or run it on a Dask cluster (--scheduler)."
    )


# --------------------------------------------------------------------------------------------
# The cost limit: a run that would take too long is refused before any work
# --------------------------------------------------------------------------------------------

COST_LIMIT_SECONDS = 30 * DAY_SECONDS
"""The most CPU time a run may be estimated to take without ``allow_large`` (30 days)."""


@dataclass(frozen=True)
class CostCheck:
    """A run's estimated cost against the limit.

    Attributes
    ----------
    cpu_seconds : float
        Estimated CPU time: the run on one worker process (``nan`` when it could not be timed).
    wall_seconds : float
        Estimated wall-clock time with ``workers`` processes (``nan`` likewise).
    workers : int
        The worker processes the wall-clock time is for.
    limit_seconds : float
        The CPU-time limit checked against.
    over : bool
        Whether the estimate exceeds the limit.
    text : str
        The estimate in words, e.g. ``"about 3.2 hours with 8 worker processes (about 1.1 days of
        CPU time)"``.
    calibration : Calibration or None
        The timings the estimate was made from (None when the generator could not be timed).
    """

    cpu_seconds: float
    wall_seconds: float
    workers: int
    limit_seconds: float
    over: bool
    text: str
    calibration: Calibration | None = None


def in_words(seconds: float) -> str:
    """A duration for people: minutes, hours, days or years, with one decimal.

    Parameters
    ----------
    seconds : float

    Returns
    -------
    str
        ``"about 42.0 minutes"``, ``"about 3.5 days"``, ``"about 12,345.6 years"``;
        ``"longer than can be estimated"`` when not finite.
    """
    if not math.isfinite(seconds):
        return "longer than can be estimated"
    for unit, size, below in (
        ("minutes", 60.0, 2 * 3600.0),
        ("hours", 3600.0, 2 * DAY_SECONDS),
        ("days", DAY_SECONDS, 730 * DAY_SECONDS),
    ):
        if seconds < below:
            return f"about {seconds / size:,.1f} {unit}"
    return f"about {seconds / (365.25 * DAY_SECONDS):,.1f} years"


def load_note(calibration: Calibration, workers: int) -> str | None:
    """What the machine's load does to the estimate, in words; None when the machine is idle.

    The estimate already allows for the load measured when the generator was timed (the share of a
    core this process got, and the other busy processes): this says so, and which way the time
    moves when the load changes.
    """
    expected = calibration.load_share(max(1, workers))
    busy = min(calibration.share, expected)
    if busy >= 0.85:
        return None
    if calibration.others is not None:
        measured = f"about {calibration.others:.1f} other busy processes on {calibration.cores} cores"
    elif calibration.load is not None:
        measured = f"load average {calibration.load:.1f} on {calibration.cores} cores"
    else:
        measured = "a busy machine"
    return (
        f"the machine is busy ({measured}: each worker can expect about {busy:.0%} of a core), which "
        "the estimate allows for; the run takes less if the load drops, more if it grows"
    )


def check_cost(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    calibration: Calibration | None = None,
    allow_large: bool = False,
    limit_seconds: float | None = None,
    scheduler: bool = False,
) -> CostCheck:
    """Estimate a run's cost and refuse it, before any work, when it exceeds the limit.

    The run's hard limits (at most :data:`privgame.settings.run_spec.MAX_N_SHADOW` shadow datasets and
    :data:`privgame.settings.run_spec.MAX_N_EVAL` evaluation runs) are checked first, without timing anything;
    then the generator, the features and the classifier are timed on this machine
    (:func:`calibrate` with one fit, unless a ``calibration`` is given) and the CPU time of the whole run is
    estimated (:func:`estimate_seconds` with one worker). A run estimated above
    ``limit_seconds`` of CPU time (30 days by default) is refused unless ``allow_large``. When
    the generator cannot be timed (a plug-in that fails outside the run, say), there is no
    estimate and nothing is refused: the run itself will report the failure.

    Used by ``privgame run`` (``--i-know-its-large`` sets ``allow_large``) and by the
    dashboard's Evaluate page (a check box).

    Parameters
    ----------
    spec : RunSpec
        The run.
    table : DataFrame
        The prepared table it audits.
    workers : int
        Worker processes it will use (for the wall-clock time in the message).
    calibration : Calibration, optional
        A calibration measured earlier for the same generator, sizes and attack settings.
    allow_large : bool, default False
        Run whatever the estimate says.
    limit_seconds : float, optional
        The CPU-time limit; :data:`COST_LIMIT_SECONDS` (30 days) by default.
    scheduler : bool, default False
        Whether the run goes to a Dask cluster (its workers are not timed here).

    Returns
    -------
    CostCheck
        The estimate (also when it is over the limit and ``allow_large``).

    Raises
    ------
    ParameterError
        For counts beyond the hard limits, or, unless ``allow_large``, an estimate over the
        limit; the message gives the estimate and the ways to shrink the run or to run it anyway.
    """
    from privgame.core.errors import ParameterError, PrivgameError

    problems = spec.attack.problems()
    if problems:
        raise ParameterError("The attack settings are not valid.", problems)
    workers = max(1, int(workers))
    limit = COST_LIMIT_SECONDS if limit_seconds is None else float(limit_seconds)
    try:
        # One timed fit tells days from years; the Evaluate page passes its three-fit calibration.
        cal = (
            calibration
            if calibration is not None
            else calibrate(spec, table, fits=1, workers=1 if scheduler else workers)
        )
    except PrivgameError:
        raise
    except Exception:  # the estimate is advice: a generator that cannot be timed fails in the run
        nan = float("nan")
        return CostCheck(nan, nan, workers, limit, False, "no estimate (the generator could not be timed)")
    cpu = breakdown(spec, table, workers=1, calibration=cal).cpu
    wall = estimate_seconds(spec, table, workers=workers, calibration=cal, scheduler=scheduler)
    noun = "process" if workers == 1 else "processes"
    text = f"{in_words(wall)} with {workers} worker {noun} ({in_words(cpu)} of CPU time)"
    note = load_note(cal, workers)
    if note and not scheduler:
        text += f"; {note}"
    over = not cpu <= limit  # NaN or inf counts as over
    if over and not allow_large:
        raise ParameterError(
            f"This run would take {text} on this machine, over the limit of {in_words(limit)} of CPU time.",
            [
                "make it smaller: fewer target records, smaller N_shadow and N_eval, or a faster generator;",
                "or, if you mean it, run it anyway with --i-know-its-large (on the dashboard: tick "
                '"I know it\'s large").',
            ],
        )
    return CostCheck(cpu, wall, workers, limit, over, text, cal)


__all__ += ["COST_LIMIT_SECONDS", "CostCheck", "check_cost", "in_words"]
