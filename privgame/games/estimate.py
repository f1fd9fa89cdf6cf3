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
  timed (the runnable threads in ``/proc``, this process's aside: the median over the timed
  rounds, so that a burst, such as the browser drawing the page that asked for the estimate,
  does not read as load); the last minute's load average stands in where that count cannot be
  read. The load average alone lagged: two busy processes started 5 s before a run read as a
  load of 0.5, and the run took twice its estimate. privgame's own runs in progress (an engine
  and its workers: :func:`busy_count`) are not load: the dashboard said 56 minutes and ``privgame
  plan`` 2.3 hours for one run, a few minutes apart, because a run was busy during the second;
  they are left out of ``others``, and the share measured beside them is scaled to the one this
  process would get without them;
- with several workers, ``startup``: the seconds until fresh worker processes have imported
  privgame and loaded the generator's kernels (they are started and timed for real), and
  ``throughput``: the cores those workers get together while they all fit at once (the sum of
  their shares: 2 workers on 2 busy cores get less than 2; measured, not assumed), averaged
  likewise with ``workers * cores / (others + workers)``. Timing fresh workers costs seconds
  of its own, so it is done only for a run whose work is a minute of CPU time or more
  (:data:`WORKER_TIMING_WORK`) and when the time budget leaves room for it; otherwise the run is
  estimated with a fixed start-up allowance.

The whole calibration aims at :data:`TIMING_BUDGET_SECONDS` of wall-clock time, and tells a
``progress`` callback what it is timing as it goes.

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

While a run goes, :func:`time_left` gives the time left from the measured pace of its generator
fits, with the estimate made before it counting for the first few.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.seeding import stream
from privgame.settings.run_spec import RunSpec

__all__ = [
    "CALIBRATION_MAX_AGE_SECONDS",
    "TIMING_BUDGET_SECONDS",
    "Breakdown",
    "BusyCount",
    "Calibration",
    "CalibrationProgress",
    "breakdown",
    "busy_count",
    "calibrate",
    "calibrate_once",
    "calibration_key",
    "cost_warning",
    "estimate_seconds",
    "load_note",
    "privgame_processes",
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
        Other processes' threads runnable at once while the generator was timed, the median over
        its timed rounds (None: not known); preferred to ``load`` by :meth:`load_share`, as it is
        not a minute behind. privgame's runs in progress are not counted (see :class:`BusyCount`).
    cores : int
        The cores this process may use.
    refit_sample : float or None
        Median CPU seconds of one exact one-row refit of the model on D (``refit_swap``) plus one
        sample of ``|D|`` rows: the cost of each swapped dataset (the model-seeded 'out' runs and
        the leave-one-out attacker's shadow datasets); None when the generator has no
        ``refit_swap`` (each swapped dataset is then a fresh fit).
    privgame : float or None
        The threads of privgame's runs in progress runnable at once while the generator was timed,
        the median over its timed rounds (None: not known). Not load: ``share`` and ``throughput``
        are measured with them busy and scaled to what they would be without them.
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
    privgame: float | None = None

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


_RUN_COMMANDS = frozenset({b"run", b"resume", b"extend", b"remedy", b"study"})
"""The ``privgame`` commands that run audits: an engine, and the worker processes it starts."""


@dataclass(frozen=True)
class BusyCount:
    """Threads runnable on the machine at one moment, this process's aside.

    Attributes
    ----------
    others : int
        Those of processes other than privgame's runs in progress: the load a run must share the
        cores with.
    privgame : int
        Those of privgame's runs in progress (their engines and worker processes): not load, since
        an estimate is for the machine the run will have (the run being estimated may be the
        one in progress, as when ``privgame plan`` is asked about a run the dashboard started).
    """

    others: int
    privgame: int


def _proc_stat(path: str) -> tuple[bytes, int] | None:
    """The state letter and parent pid in a ``/proc/.../stat`` file (None when it is gone)."""
    try:
        with open(path, "rb") as stat:
            text = stat.read()
        fields = text[text.rindex(b")") + 2 :].split()  # the command name may hold spaces
        return fields[0], int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def _runs_privgame(argv: list[bytes]) -> bool:
    """Whether a command line runs an audit: ``python -m privgame run ...``, ``privgame resume
    ...`` (the script), and the other :data:`_RUN_COMMANDS`."""
    args = [a for a in argv if a]
    for i, arg in enumerate(args):
        module = arg == b"privgame" and i > 0 and args[i - 1] == b"-m"
        script = i <= 1 and os.path.basename(arg) == b"privgame"
        if module or script:
            commands = [a for a in args[i + 1 :] if not a.startswith(b"-")]
            return bool(commands) and commands[0] in _RUN_COMMANDS
    return False


def _holds_run_lock(pid: int) -> bool:
    """Whether a process holds a run's (or a study's) ``engine.lock`` open: an engine at work,
    however it was started (the Python API in a notebook too)."""
    from privgame.store.folders import LOCK

    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # another user's process, or gone
        return False
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{descriptor}").endswith(os.sep + LOCK):
                return True
    return False


def _scan() -> tuple[dict[int, int], set[int]] | None:
    """Every process's runnable threads (pid -> count), and the processes of privgame's runs in
    progress (this one aside); None where ``/proc`` cannot be read."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    me = os.getpid()
    parents: dict[int, int] = {}
    runnable: dict[int, int] = {}
    engines: set[int] = set()
    for pid in pids:
        found = _proc_stat(f"/proc/{pid}/stat")
        if found is None:
            continue
        parents[pid] = found[1]
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as command:
                argv = command.read().split(b"\0")
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        # A process's threads run apart: a busy BLAS pool whose main thread waits is busy.
        states = (_proc_stat(f"/proc/{pid}/task/{tid}/stat") for tid in tasks)
        runnable[pid] = sum(1 for state in states if state is not None and state[0] == b"R")
        python = os.path.basename(argv[0]).startswith(b"python")
        if _runs_privgame(argv) or (python and pid != me and _holds_run_lock(pid)):
            engines.add(pid)
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    privgame: set[int] = set()
    todo = list(engines)
    while todo:
        pid = todo.pop()
        if pid not in privgame:
            privgame.add(pid)
            todo.extend(children.get(pid, ()))
    privgame.discard(me)
    return runnable, privgame


def privgame_processes() -> set[int]:
    """The processes of privgame's runs in progress on this machine, this one aside: each process
    running one of privgame's run commands (:data:`_RUN_COMMANDS`) or holding a run folder's
    ``engine.lock``, and every process it started (its workers); empty where ``/proc`` cannot
    be read."""
    scanned = _scan()
    return set() if scanned is None else scanned[1]


def busy_count() -> BusyCount | None:
    """Threads runnable on the machine right now, this process's aside, split into privgame's runs
    in progress (:func:`privgame_processes`) and the rest (:class:`BusyCount`); None where
    ``/proc`` cannot be read."""
    scanned = _scan()
    if scanned is None:
        return None
    runnable, privgame = scanned
    me = os.getpid()
    own = sum(runnable.get(pid, 0) for pid in privgame)
    others = sum(count for pid, count in runnable.items() if pid not in privgame and pid != me)
    return BusyCount(others=others, privgame=own)


def runnable_others() -> float | None:
    """Threads runnable on the machine right now, this process's and privgame's runs in progress
    aside (:func:`busy_count`); None where ``/proc`` cannot be read."""
    count = busy_count()
    return None if count is None else float(count.others)


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


TIMING_BUDGET_SECONDS = 12.0
"""The wall-clock seconds :func:`calibrate` aims to take, context and workers included (a user's
first estimate of a 35,000-row table took 234 s, with nothing on screen but a spinner). Every
piece is timed at least once: the generator's warm-up (compiling its kernels in a fresh install,
which no budget can spare) and one round, one refit, the
meta-classifier (on at most :data:`_CLASSIFIER_CELLS` feature values, whatever the time: which
rows it is timed on must not depend on the machine's load, since the cost is scaled from them).
The rest gives way to the budget: the generator's rounds stop once 40% of it is spent, the refits
at 55%, and fresh workers are timed only when what is left is enough to start them on a machine
this busy. A generator whose single fit takes longer than the budget takes longer."""
_ROUNDS_SHARE = 0.40
_REFITS_SHARE = 0.55
_CLASSIFIER_CELLS = 16_000_000
"""The most feature values the meta-classifier is timed on (rows x features, 64 MB): 250 rows of
Adult's 32,898 query features are 8.2 million; a table with a million features is timed on 16 rows
(:data:`_MIN_CLASSIFIER_ROWS`), and the cost scaled from them."""
_MIN_CLASSIFIER_ROWS = 16

CalibrationProgress = Callable[[str, float], None]
"""Told what :func:`calibrate` is timing: ``(what, fraction)``, e.g. ``("Timing the generator:
round 2 of 3", 0.35)``, the fraction being the share of :data:`TIMING_BUDGET_SECONDS` spent."""


def calibrate(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    fits: int = CALIBRATION_FITS,
    workers: int = 1,
    progress: CalibrationProgress | None = None,
    budget: float | None = None,
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
        (up to 40 times), as one such timing is mostly noise. Fewer are timed when the time
        budget runs out (at least one).
    workers : int, default 1
        Local worker processes the run will use; with more than one, that many are started and
        their start-up and speed-up timed (a few seconds), when the budget leaves time for it.
    progress : callable, optional
        Called with what is being timed and the share of the budget spent
        (:data:`CalibrationProgress`), before each piece: for a screen to show while it waits.
    budget : float, optional
        Wall-clock seconds to aim for; :data:`TIMING_BUDGET_SECONDS` by default.

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
    from privgame.settings.executors import default_workers

    budget = TIMING_BUDGET_SECONDS if budget is None else float(budget)
    began = time.perf_counter()

    def say(what: str) -> None:
        if progress is not None:
            progress(what, min(1.0, (time.perf_counter() - began) / budget))

    say("Preparing the run's data (D, the splits, the records to audit)")
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
    wall0, cpu0 = time.perf_counter(), clock()
    counts: list[BusyCount] = []
    # The first round is a warm-up, not timed: it absorbs one-off costs (compiling or loading
    # kernels for the data's shapes, first-call caches, the first touch of memory) the run will
    # not pay. A warm-up on a few rows left some of them to the first timed fit, and a cold process
    # estimated a run 3.6 times longer than a warm one (tests/games/test_estimate.py holds them to 1.5).
    # Fits of a millisecond are timed over more rounds (as timeit does), until the timed rounds
    # add up to _MIN_TIMED_SECONDS: one round of them is mostly noise. Not for a run that would
    # take under a minute anyway (roughly: its fits at the first round's pace), whose estimate
    # needs no such precision.
    rough_fits = len(targets) * (spec.attack.n_shadow / 2 + spec.attack.n_eval) + spec.attack.n_shadow
    rounds = max(1, fits)
    rounds_until = began + _ROUNDS_SHARE * budget
    round_ = 0
    while round_ <= rounds or (
        sum(shadow_times) + sum(fit_times) < _MIN_TIMED_SECONDS
        and round_ <= _MAX_TIMED_ROUNDS
        and rough_fits * (shadow_times[0] + fit_times[0]) >= _WORTH_TIMING_SECONDS
    ):
        if round_ >= 2 and time.perf_counter() >= rounds_until:
            # Out of time, with one round timed: never the warm-up alone, which in a fresh
            # install compiles every kernel (a minute: an estimate of 8 hours for 40 minutes).
            break
        if round_ == 1:
            fit_times, shadow_times, sample_times, feature_times, feature_rows = [], [], [], [], []
            wall0, cpu0 = time.perf_counter(), clock()
        if round_ == 0:
            say("Timing the generator: a warm-up fit (compiling its kernels)")
        elif round_ <= rounds:
            say(f"Timing the generator: round {round_} of {rounds}")
        else:
            say(f"Timing the generator: round {round_} (fast fits are timed more often)")
        round_ += 1
        counted = busy_count()
        if counted is not None:
            counts.append(counted)
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
    refit_times = _time_refits(
        ctx, rng, rounds, precise=precise, until=began + _REFITS_SHARE * budget, say=say
    )

    # A training matrix of the run's shape: the measured feature rows, jittered, half 'in'. A huge
    # plan (100,000 shadow datasets of 32,767 features is 24 GiB) is timed on at most
    # _CLASSIFIER_ROWS rows and scaled: a random forest's fit grows as n log n, its scoring as n.
    # Many features make even those rows slow and large: fewer (_CLASSIFIER_CELLS).
    n_features = max(1, int(feature_rows[0].size))
    trained = min(spec.attack.n_shadow, _CLASSIFIER_ROWS)
    trained = min(trained, max(_MIN_CLASSIFIER_ROWS, _CLASSIFIER_CELLS // n_features))
    say(f"Timing the meta-classifier on {trained} shadow datasets' features")
    classifier = _time_classifier(spec, queries, feature_rows, rng, trained)
    wall, cpu = time.perf_counter() - wall0, clock() - cpu0
    share = min(1.0, max(0.05, cpu / wall)) if wall > 0 else 1.0
    others = statistics.median(c.others for c in counts) if counts else None
    own = statistics.median(c.privgame for c in counts) if counts else None
    if others is not None and own:
        # A privgame run in progress took its share of the cores while this process was timed;
        # it is not load (see BusyCount): the share is what this process would get without it.
        share = min(1.0, share * (others + own + 1) / (others + 1))
    startup = throughput = None
    workers = max(1, int(workers))
    per_dataset = statistics.median(fit_times) + statistics.median(feature_times)
    # Starting workers takes STARTUP_SECONDS on two idle cores, longer with every process busy
    # beside them (privgame's included: their work is not load for the run, but it is for this).
    busy = (others or 0.0) + (own or 0.0) + workers
    timing = (STARTUP_SECONDS + _SHARE_SECONDS) / min(1.0, default_workers() / busy)
    if (
        workers > 1
        and _rough_work(spec, ctx.n, per_dataset, classifier) >= WORKER_TIMING_WORK
        and began + budget - time.perf_counter() >= timing
    ):
        say(f"Starting {workers} worker processes and timing them")
        startup, throughput = _measure_workers(ctx, training, workers)
        if others is not None and own:
            throughput = min(float(workers), throughput * (others + own + workers) / (others + workers))
    if progress is not None:
        progress("Timed", 1.0)
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
        others=others,
        privgame=own,
    )


CALIBRATION_MAX_AGE_SECONDS = 600.0
"""How long a timing is reused for the same work in this process (a second browser tab, the page
run again): the machine's speed is measured again after that, since its load changes."""

_TIMINGS: dict[str, tuple[float, Calibration, int]] = {}
_TIMINGS_LOCK = threading.Lock()


def calibration_key(spec: RunSpec, workers: int) -> str:
    """What a calibration depends on: the data, the generator and its parameters, the sizes, the
    set-up (not which rows the seed drew: other rows of the same sizes cost the same), the
    meta-classifier and the workers. N_shadow aside: it scales the meta-classifier's cost only
    (:func:`privgame.analysis.planner.for_n_shadow`)."""
    import json

    setup = replace(spec.setup, data_fingerprint=None, population_fingerprint=None)
    return json.dumps(
        [
            spec.data_fingerprint,
            spec.generator,
            spec.to_dict()["generator_params"],
            spec.sizes,
            asdict(setup),
            spec.attack.classifier,
            workers,
        ],
        sort_keys=True,
        default=str,
    )


def calibrate_once(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int = 1,
    progress: CalibrationProgress | None = None,
    max_age: float = CALIBRATION_MAX_AGE_SECONDS,
) -> tuple[Calibration, int]:
    """:func:`calibrate`, reused for the same work (:func:`calibration_key`) in this process for
    ``max_age`` seconds: the dashboard's sessions share it, so a new browser tab or a changed
    setting that does not change the cost shows the estimate at once. Returns the calibration and
    the N_shadow it was timed at (scale it with ``for_n_shadow``)."""
    key = calibration_key(spec, workers)
    now = time.monotonic()
    with _TIMINGS_LOCK:
        kept = _TIMINGS.get(key)
    if kept is not None and now - kept[0] <= max_age:
        return kept[1], kept[2]
    calibration = calibrate(spec, table, workers=workers, progress=progress)
    with _TIMINGS_LOCK:
        if len(_TIMINGS) > 64:
            _TIMINGS.clear()
        _TIMINGS[key] = (time.monotonic(), calibration, spec.attack.n_shadow)
    return calibration, spec.attack.n_shadow


def _time_classifier(
    spec: RunSpec, queries: Any, feature_rows: list[np.ndarray], rng: np.random.Generator, rows: int
) -> float:
    """CPU seconds of one target's meta-classifier: its fit on ``N_shadow`` feature rows (timed on
    ``rows`` of them and scaled as n log n), its scoring of the ``2 N_eval`` evaluation runs and
    its checkpoint."""
    n_scored = min(2 * spec.attack.n_eval, _CLASSIFIER_ROWS)
    base = np.stack(feature_rows)[np.arange(rows) % len(feature_rows)]
    train = base + rng.poisson(1.0, size=base.shape).astype(np.float32)
    labels = (np.arange(rows) % 2).astype(np.int8)
    t0 = _work_clock()
    fitted = queries.fit(train, labels, root=spec.seed, key=1)
    t1 = _work_clock()
    # A target's unit also scores its 2 N_eval runs and checkpoints the classifier.
    fitted.score(base[np.arange(n_scored) % rows])
    pickle.dumps(fitted)
    t2 = _work_clock()
    n_shadow = spec.attack.n_shadow
    grow = n_shadow / rows * math.log2(max(2, n_shadow)) / math.log2(max(2, rows))
    return (t1 - t0) * grow + (t2 - t1) * (2 * spec.attack.n_eval) / n_scored


def _time_refits(
    ctx: Any,
    rng: np.random.Generator,
    fits: int,
    *,
    precise: bool = True,
    until: float = math.inf,
    say: Callable[[str], None] | None = None,
) -> list[float]:
    """CPU seconds of ``fits`` one-row refits of the model on D plus a sample of ``|D|`` rows
    (after an untimed one that compiles the refit's kernels; with ``precise``, more while they
    add up to less than :data:`_MIN_TIMED_SECONDS`; one only once :func:`time.perf_counter` has
    passed ``until``), or none when the generator has no ``refit_swap``."""
    model = ctx.new_generator()
    if not callable(getattr(model, "refit_swap", None)) or not len(ctx.reference):
        return []
    clock = time.process_time
    try:
        if say is not None:
            say("Timing the one-row refits: fitting the model on D")
        model.fit(ctx.X[ctx.target], ctx.schema, rng=rng)
        times: list[float] = []
        k = 0
        while k <= fits or (precise and sum(times) < _MIN_TIMED_SECONDS and k <= _MAX_TIMED_ROUNDS):
            if k >= 2 and time.perf_counter() >= until:
                break
            if say is not None:
                if not k:
                    say("Timing the one-row refits: a warm-up")
                elif k <= fits:
                    say(f"Timing the one-row refits: {k} of {fits}")
                else:
                    say(f"Timing the one-row refits: {k} (fast refits are timed more often)")
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
    from privgame.games import threat

    loo = threat.create(spec.attack.attacker).knows_d
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
# columns: 0.143 s a table on Adult (31,655 rows, 15 columns and 105 pairs) on this 2-core machine
# when each pair was sorted and merged; counted densely it takes a third of that (72 ms against
# 215 ms, measured side by side on another day).
_VALUE_COUNT_SECONDS = 1.3e-8


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


PRIOR_SECONDS = 30.0
"""What the estimate made before a run counts for once the run measures its own pace
(:func:`time_left`): as much as the run's first 30 seconds (long enough for the workers to start
and make their first fits), or its first :data:`PRIOR_FITS` fits where these take longer; at most
half the estimate."""
PRIOR_FITS = 20.0
"""See :data:`PRIOR_SECONDS`."""


def time_left(
    *,
    elapsed: float,
    done: float,
    total: float,
    estimate: float | None = None,
) -> float | None:
    """Seconds left in a run, from the measured pace of its generator fits.

    The pace is the fits done per second of wall clock since the run's units started. The estimate
    made before the run counts as ``prior`` seconds of fits made at its own pace (``total /
    estimate``), so it carries the first seconds and gives way as the run measures its own::

        prior = min(max(PRIOR_SECONDS, PRIOR_FITS * estimate / total), estimate / 2)
        pace = (prior * total / estimate + done) / (prior + elapsed)
        left = (total - done) / pace

    A run that goes as estimated is shown ``estimate - elapsed``; one slower or faster than
    estimated is shown the time left at its own pace within a few minutes. (The share of the work
    done weighed the two before, so the estimate held on: 6,001 fits were estimated at 15 minutes,
    the run took 34, and 8 minutes in that weighting gave 11.5 minutes left where 26 were.)

    Parameters
    ----------
    elapsed : float
        Seconds since the run's units started (in this attempt).
    done, total : float
        Generator fits finished in this attempt, those of units still running included, and the
        fits this attempt has to make.
    estimate : float, optional
        The seconds the estimate made before the run gives this attempt's units.

    Returns
    -------
    float or None
        Seconds left (0 when all is done); None without an estimate until two fits are done (the
        first ones also pay for starting the workers).
    """
    if total <= 0 or done >= total:
        return 0.0
    elapsed, done = max(0.0, float(elapsed)), max(0.0, float(done))
    if estimate is None or not math.isfinite(estimate) or estimate <= 0:
        if done < 2 or elapsed <= 0:
            return None
        return elapsed / done * (total - done)
    estimate = float(estimate)
    prior = min(max(PRIOR_SECONDS, PRIOR_FITS * estimate / total), estimate / 2)
    pace = (prior * total / estimate + done) / (prior + elapsed)
    return (total - done) / pace


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
    moves when the load changes. A privgame run in progress is not load (:class:`BusyCount`), and
    the note says so too: while it goes on, this run takes longer.
    """
    running = None
    if calibration.privgame is not None and calibration.privgame >= 1:
        running = (
            f"a privgame run in progress ({calibration.privgame:.0f} busy processes) is not counted: "
            "the estimate is for the machine once it has ended, and this run takes longer while it goes on"
        )
    expected = calibration.load_share(max(1, workers))
    busy = min(calibration.share, expected)
    if busy >= 0.85:
        return running
    if calibration.others is not None:
        measured = f"about {calibration.others:.1f} other busy processes on {calibration.cores} cores"
    elif calibration.load is not None:
        measured = f"load average {calibration.load:.1f} on {calibration.cores} cores"
    else:
        measured = "a busy machine"
    note = (
        f"the machine is busy ({measured}: each worker can expect about {busy:.0%} of a core), which "
        "the estimate allows for; the run takes less if the load drops, more if it grows"
    )
    return note if running is None else f"{note}; {running}"


def check_cost(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    calibration: Calibration | None = None,
    allow_large: bool = False,
    limit_seconds: float | None = None,
    scheduler: bool = False,
    progress: CalibrationProgress | None = None,
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
    progress : callable, optional
        Told what is being timed while the generator is timed (see :func:`calibrate`).

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
            else calibrate(spec, table, fits=1, workers=1 if scheduler else workers, progress=progress)
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
