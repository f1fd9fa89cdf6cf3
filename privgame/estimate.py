"""How long a run will take on this machine, measured before it starts.

The estimate times a short calibration of the chosen generator on the run's own data, then
scales it by the plan's number of generator fits (:func:`privgame.games.engine.plan_summary`,
which counts the pooled traditional game's fits exactly from the audited records):

``seconds = (total_fits * fit_sample + targets * (datasets_per_target * features + classifier))
/ parallel + startup``

where ``fit_sample`` is the median time of three fits + samples of ``|D|`` rows drawn from
D_aux, ``features`` the time to compute the attack's query features on one synthetic dataset,
``classifier`` the time of one meta-classifier fit on ``N_shadow`` feature rows,
``datasets_per_target = N_shadow + 2 N_eval`` (every dataset the attack scores for one target),
``parallel = min(workers, max(targets, shared chunks))`` and ``startup`` a fixed allowance for
starting worker processes. The calibration draws its rows from a stream of its own, so it never
changes a run's results.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privgame.seeding import stream
from privgame.spec import RunSpec

__all__ = ["Calibration", "calibrate", "cost_warning", "estimate_seconds"]

CALIBRATION_FITS = 3
STARTUP_SECONDS = 2.0
_CALIBRATION_STREAM = 11  # a stream no run uses for its results
DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class Calibration:
    """Measured costs of the pieces of a run, in seconds.

    Attributes
    ----------
    fit_sample : float
        Median time of one generator fit plus one sample of ``|D|`` rows.
    features : float
        Median time of the attack's query features on one synthetic dataset.
    classifier : float
        Time of one meta-classifier fit on ``N_shadow`` feature rows.
    fits : int
        Number of calibration fits timed.
    """

    fit_sample: float
    features: float
    classifier: float
    fits: int = CALIBRATION_FITS


def calibrate(spec: RunSpec, table: pd.DataFrame, *, fits: int = CALIBRATION_FITS) -> Calibration:
    """Time the generator, the query features and the meta-classifier on this machine.

    Parameters
    ----------
    spec : RunSpec
        The run to calibrate for (generator, parameters, sizes, attack settings, seed).
    table : DataFrame
        The prepared table the run will audit.
    fits : int, default 3
        Number of generator fits + samples to time; the median is kept.

    Returns
    -------
    Calibration

    Raises
    ------
    SizeError, SchemaError, ParameterError
        When the spec does not fit the table or the generator's parameters are invalid.
    """
    from privgame.attack import MetaClassifier
    from privgame.games import plan
    from privgame.games.engine import build_context

    ctx, targets = build_context(spec, table)
    rng = stream(spec.seed, 0, _CALIBRATION_STREAM)
    target = ctx.X[int(targets[0]) if len(targets) else int(ctx.target[0])]
    queries = ctx.queries()
    fit_times: list[float] = []
    feature_times: list[float] = []
    feature_rows: list[np.ndarray] = []
    for _ in range(max(1, fits)):
        rows = plan.shadow_out_rows(rng, ctx.aux, ctx.n_shadow_rows, replace=ctx.shadow_replace)
        started = time.perf_counter()
        synthetic = ctx.new_generator().fit_sample(ctx.X[rows], ctx.schema, ctx.n, rng=rng)
        fit_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        feature_rows.append(queries.features(synthetic, target))
        feature_times.append(time.perf_counter() - started)

    # A training matrix of the run's shape: the measured feature rows, jittered, half 'in'.
    n_rows = spec.attack.n_shadow
    base = np.stack(feature_rows)[np.arange(n_rows) % len(feature_rows)]
    train = base + rng.poisson(1.0, size=base.shape).astype(np.float32)
    labels = (np.arange(n_rows) % 2).astype(np.int8)
    started = time.perf_counter()
    MetaClassifier(spec.attack.classifier).fit(train, labels, rng=rng)
    classifier = time.perf_counter() - started
    return Calibration(
        fit_sample=statistics.median(fit_times),
        features=statistics.median(feature_times),
        classifier=classifier,
        fits=len(fit_times),
    )


def estimate_seconds(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    calibration: Calibration | None = None,
) -> float:
    """Estimated wall-clock seconds of the run ``spec`` on ``table`` with ``workers`` processes.

    The median fit + sample time of three calibration fits, times the plan's total generator
    fits, plus a feature and classifier allowance for every target, divided by the number of
    units that can run at once, plus a fixed start-up allowance (see the module notes).

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

    Returns
    -------
    float
        Seconds, at least the start-up allowance.
    """
    from privgame.games.engine import CHUNK, build_context, plan_summary

    _, targets = build_context(spec, table)
    cal = calibration if calibration is not None else calibrate(spec, table)
    n_targets = len(targets)
    plan = plan_summary(spec, n_targets, table=table)
    n_shadow, n_eval = spec.attack.n_shadow, spec.attack.n_eval
    per_target = (n_shadow + 2 * n_eval) * cal.features + cal.classifier
    work = plan["total_fits"] * cal.fit_sample + n_targets * per_target
    shared_chunks = math.ceil(n_shadow / 2 / CHUNK) + math.ceil(n_eval / 2 / CHUNK)
    parallel = max(1, min(int(workers), max(n_targets, shared_chunks)))
    return work / parallel + STARTUP_SECONDS


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
    """

    cpu_seconds: float
    wall_seconds: float
    workers: int
    limit_seconds: float
    over: bool
    text: str


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


def check_cost(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    calibration: Calibration | None = None,
    allow_large: bool = False,
    limit_seconds: float | None = None,
) -> CostCheck:
    """Estimate a run's cost and refuse it, before any work, when it exceeds the limit.

    The run's hard limits (at most :data:`privgame.spec.MAX_N_SHADOW` shadow datasets and
    :data:`privgame.spec.MAX_N_EVAL` evaluation runs) are checked first, without timing anything;
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
    from privgame.errors import ParameterError, PrivgameError

    problems = spec.attack.problems()
    if problems:
        raise ParameterError("The attack settings are not valid.", problems)
    workers = max(1, int(workers))
    limit = COST_LIMIT_SECONDS if limit_seconds is None else float(limit_seconds)
    try:
        # One timed fit tells days from years; the Evaluate page passes its three-fit calibration.
        cal = calibration if calibration is not None else calibrate(spec, table, fits=1)
    except PrivgameError:
        raise
    except Exception:  # the estimate is advice: a generator that cannot be timed fails in the run
        nan = float("nan")
        return CostCheck(nan, nan, workers, limit, False, "no estimate (the generator could not be timed)")
    cpu = estimate_seconds(spec, table, workers=1, calibration=cal)
    wall = estimate_seconds(spec, table, workers=workers, calibration=cal)
    noun = "process" if workers == 1 else "processes"
    text = f"{in_words(wall)} with {workers} worker {noun} ({in_words(cpu)} of CPU time)"
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
    return CostCheck(cpu, wall, workers, limit, over, text)


__all__ += ["COST_LIMIT_SECONDS", "CostCheck", "check_cost", "in_words"]
