"""A plan that fits a time budget: which settings to cut, in which order, and what each cut costs.

The planner starts from the settings a data owner gave (by default the audit plan's 20 most
outlying + 20 random records, N_shadow = 1,000, N_eval = 200) and, while the estimate on this
machine is over the budget, cuts one setting at a time along :data:`CUTS`. Each step is estimated
from one calibration of the generator, the features and the meta-classifier
(:func:`privgame.games.estimate.calibrate`); the meta-classifier's cost is scaled to each N_shadow as
``n log n`` (a random forest's). Each step says what it gives up:

- N_eval: a wider interval around each risk (:func:`privgame.core.metrics.auc_half_width` at t), so
  more records are undecided; ``extend --undecided-only`` adds runs to those records later,
  so this cut can be made up where it matters.
- the random records (M): a wider interval for the share of all of D at risk
  (:func:`privgame.core.metrics.share_width`). With ``share_width`` given, M is chosen first (the
  smallest sample whose worst-case interval is that narrow) and never cut.
- the most outlying records (K): fewer of the records most likely to be at risk are checked.
- N_shadow: a weaker attacker, and a bias, not only a wider interval: every risk reads lower, so
  "not at risk" means less, and no later run on the same records makes it up. Measured
  (REPRODUCTION.md, section 6.2): N_shadow 200 instead of 1,000 read every record's risk
  0.052 ± 0.007 lower on average (leave-one-out attacker, Synthpop) and put 5 records at risk
  instead of 9. :func:`risk_missed` gives this bias for any N_shadow; each step shows it.

The order of :data:`CUTS`: the cuts that lose no risk come first (those that widen an interval,
which says so, then those that check fewer records), and the cuts of N_shadow last, the one
that loses most risk (the smallest N_shadow) last of all.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.games.estimate import Calibration, calibrate, estimate_seconds, in_words
from privgame.settings.run_spec import RunSpec, TargetSelection

__all__ = [
    "AT_RISK_N_SHADOW_200",
    "AT_RISK_N_SHADOW_1000",
    "CUTS",
    "MAX_RANDOM",
    "REFERENCE_N_SHADOW",
    "RISK_MISSED_100_AGAINST_200",
    "RISK_MISSED_200_AGAINST_1000",
    "RISK_MISSED_500_AGAINST_1000",
    "Plan",
    "PlanStep",
    "for_n_shadow",
    "plan_for_budget",
    "plan_rows",
    "random_for_width",
    "risk_missed",
]

REFERENCE_N_SHADOW = 1_000
"""The N_shadow the risk an attacker misses is measured against: privgame's default and the paper's
(whether 1,000 is itself enough is open, REPRODUCTION.md section 6.1; above it nothing is counted)."""

RISK_MISSED_200_AGAINST_1000: tuple[float, float] = (0.052, 0.007)
"""How much lower every record's risk reads with N_shadow 200 than with 1,000: the mean paired
difference and its standard error over 20 records (10 most outlying + 10 random) of a 7,000-row
D of Adult, Synthpop, the leave-one-out attacker, N_eval = 200, the same evaluation runs for both
(REPRODUCTION.md section 6.2: +0.052 ± 0.007, higher with 1,000 on all 20 records)."""

AT_RISK_N_SHADOW_1000 = 9
"""Records at risk at t = 0.8 among those 20 with N_shadow 1,000 (REPRODUCTION.md section 6.2)."""

AT_RISK_N_SHADOW_200 = 5
"""Records at risk at t = 0.8 among the same 20 with N_shadow 200 (REPRODUCTION.md section 6.2)."""

RISK_MISSED_500_AGAINST_1000: tuple[float, float] = (0.018, 0.009)
"""The same for N_shadow 500 against 1,000 (REPRODUCTION.md section 4.6, Synthpop on Adult, 20
random records, N_eval = 500: R_MS −0.018 ± 0.009)."""

RISK_MISSED_100_AGAINST_200: tuple[float, float] = (0.037, 0.013)
"""The same for N_shadow 100 against 200 (REPRODUCTION.md section 6, the leave-one-out attacker
with Synthpop, N_eval = 100: +0.037 ± 0.013 with 200)."""

_MEASURED_MISSED: tuple[tuple[int, float], ...] = (
    (100, RISK_MISSED_200_AGAINST_1000[0] + RISK_MISSED_100_AGAINST_200[0]),
    (200, RISK_MISSED_200_AGAINST_1000[0]),
    (500, RISK_MISSED_500_AGAINST_1000[0]),
    (REFERENCE_N_SHADOW, 0.0),
)


def risk_missed(n_shadow: int) -> float:
    """The mean risk an attacker with ``n_shadow`` shadow datasets misses against one with
    :data:`REFERENCE_N_SHADOW`, from the measured figures above (REPRODUCTION.md 6.2, 4.6, 6).

    A bias: every record's risk reads about this much lower, so more records read "not at risk".
    Between the measured N_shadow it is interpolated in ``log N_shadow``; below 100 it grows at the
    rate measured from 200 to 100 (0.037 per halving), up to 0.5 (a risk at chance); at or above
    1,000 it is 0. Measured with Synthpop on Adult: a generator that leaks less may lose less.
    """
    if n_shadow >= REFERENCE_N_SHADOW:
        return 0.0
    points = [(math.log2(n), missed) for n, missed in _MEASURED_MISSED]
    x = math.log2(max(n_shadow, 2))
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x <= x1:
            slope = (y1 - y0) / (x1 - x0)
            return min(0.5, max(0.0, y0 + slope * (x - x0)))
    return 0.0  # pragma: no cover - n_shadow < 1,000 lies below the last point


def _shadow_cost(before: int, after: int) -> str:
    """What cutting N_shadow from ``before`` to ``after`` gives up, in risk."""
    lost = risk_missed(after) - risk_missed(before)
    missed, error = RISK_MISSED_200_AGAINST_1000
    return (
        f"a weaker attacker: every record's risk reads about {lost:.3f} lower (a bias that no later run "
        f"makes up; {risk_missed(after):.3f} below N_shadow {REFERENCE_N_SHADOW:,}), so 'not at risk' "
        f"means less. Measured (REPRODUCTION 6.2, Synthpop): N_shadow 200 read risks {missed:.3f} ± "
        f"{error:.3f} lower than 1,000 and found {AT_RISK_N_SHADOW_200} records at risk, not "
        f"{AT_RISK_N_SHADOW_1000}"
    )


CUTS: tuple[tuple[str, int, str], ...] = (
    (
        "n_eval",
        100,
        "wider intervals, more records undecided (extend --undecided-only adds runs later); "
        "no risk is missed",
    ),
    ("random", 10, "a wider interval for the share of D at risk; no record's risk is missed"),
    ("outliers", 10, "fewer of the most outlying records, the likeliest to be at risk, are checked"),
    ("n_eval", 50, "much wider intervals: many records will be undecided (extend adds runs later)"),
    ("outliers", 5, "fewer outlying records still"),
    ("n_shadow", 500, ""),
    ("n_shadow", 200, ""),
    ("n_shadow", 100, ""),
)
"""The cuts, in the order the planner makes them: (setting, value, what it costs); the cost of a
cut of N_shadow is said from the risk it misses (:func:`risk_missed`). The cuts that miss no risk
come first, and those of N_shadow, which bias every risk low, last, the largest bias last of all."""

MAX_RANDOM = 2_000
"""The largest random sample the planner proposes for a share width."""


@dataclass(frozen=True)
class PlanStep:
    """One candidate plan: its settings, estimate and precision.

    Attributes
    ----------
    outliers, random, n_shadow, n_eval : int
        The audit plan (K most outlying + M random records) and the attack's sizes.
    seconds : float
        Estimated wall-clock seconds on this machine.
    risk_half_width : float
        Expected half-width of a record's 95% interval for a risk at t (before the attack's own
        training noise, which widens it a little).
    risk_missed : float
        The mean risk the attack misses against N_shadow 1,000 (:func:`risk_missed`): how much
        lower every risk reads, a bias the interval does not show.
    share_width : float or None
        The widest the share's 95% interval can be with M random records (None without any).
    clean_share : float or None
        The share's upper end when no random record is at risk.
    change : str
        The cut this step made ("" for the plan as given).
    cost : str
        What the cut gives up.
    """

    outliers: int
    random: int
    n_shadow: int
    n_eval: int
    seconds: float
    risk_half_width: float
    share_width: float | None
    clean_share: float | None
    change: str = ""
    cost: str = ""
    risk_missed: float = 0.0

    def options(self) -> list[str]:
        """The ``run`` options of this plan."""
        return [
            "--outliers",
            str(self.outliers),
            "--random",
            str(self.random),
            "--n-shadow",
            str(self.n_shadow),
            "--n-eval",
            str(self.n_eval),
        ]


@dataclass(frozen=True)
class Plan:
    """The steps from the plan as given to the first one within budget.

    Attributes
    ----------
    steps : list of PlanStep
        The plan as given, then one step per cut made.
    chosen : int or None
        The index of the first step within the budget (None: none fits; the last step is the
        smallest the planner proposes). Without a budget, 0.
    budget_seconds : float or None
    workers : int
    """

    steps: list[PlanStep]
    chosen: int | None
    budget_seconds: float | None
    workers: int

    @property
    def text(self) -> str:
        """The answer in one sentence."""
        if self.chosen is None:
            last = self.steps[-1]
            return (
                f"No plan fits in {_minutes(self.budget_seconds or 0)}: the smallest proposed here takes "
                f"{in_words(last.seconds)} with {self.workers} worker process(es). Give a larger budget, "
                "more cores (--workers, or a Dask cluster), or audit fewer records."
            )
        step = self.steps[self.chosen]
        head = "The plan as given" if self.chosen == 0 else "This plan"
        budget = f", within {_minutes(self.budget_seconds)}" if self.budget_seconds is not None else ""
        return (
            f"{head} takes {in_words(step.seconds)} with {self.workers} worker process(es){budget}: "
            f"{step.outliers} most outlying + {step.random} random records, N_shadow = {step.n_shadow:,}, "
            f"N_eval = {step.n_eval:,}."
        )


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} minutes"


def random_for_width(width: float, *, most: int = MAX_RANDOM) -> int:
    """The smallest random sample whose share interval is at most ``width`` wide whatever it finds.

    Raises
    ------
    ParameterError
        For a width outside (0, 1), or one that needs more than ``most`` records.
    """
    if not 0 < width < 1:
        raise ParameterError(f"--share-width must lie strictly between 0 and 1, got {width!r}.")
    if metrics.share_width(most)[0] > width:
        raise ParameterError(
            f"--share-width {width:g} needs more than {most:,} random records (with {most:,} the share's "
            f"interval can still be {metrics.share_width(most)[0]:.3f} wide); ask for a wider interval."
        )
    low, high = 1, most
    while low < high:  # the worst-case width falls as the sample grows
        middle = (low + high) // 2
        if metrics.share_width(middle)[0] <= width:
            high = middle
        else:
            low = middle + 1
    return low


def for_n_shadow(calibration: Calibration, measured_n_shadow: int, n_shadow: int) -> Calibration:
    """``calibration``, measured with ``measured_n_shadow`` shadow datasets, for ``n_shadow``.

    Only the meta-classifier's cost depends on N_shadow; it is scaled as a random forest's
    ``n log n``, so that a changed N_shadow is estimated at once, without timing anything again.
    """

    def cost(n: int) -> float:
        return max(n, 2) * math.log2(max(n, 2))

    if n_shadow == measured_n_shadow:
        return calibration
    return replace(calibration, classifier=calibration.classifier * cost(n_shadow) / cost(measured_n_shadow))


def _settings(spec: RunSpec) -> dict[str, int]:
    targets = spec.targets
    if targets.mode != "plan":
        raise ParameterError(
            "The planner sizes the audit plan (--outliers K --random M); it cannot plan a run of "
            "chosen records (--targets, --target-ids, --all-targets). Leave those out."
        )
    return {
        "outliers": int(targets.outliers or 0),
        "random": int(targets.random or 0),
        "n_shadow": spec.attack.n_shadow,
        "n_eval": spec.attack.n_eval,
    }


def _with(spec: RunSpec, settings: dict[str, int]) -> RunSpec:
    return replace(
        spec,
        attack=replace(spec.attack, n_shadow=settings["n_shadow"], n_eval=settings["n_eval"]),
        targets=TargetSelection.plan(outliers=settings["outliers"], random=settings["random"]),
    )


def plan_for_budget(
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int,
    budget_seconds: float | None = None,
    share_width: float | None = None,
    calibration: Calibration | None = None,
) -> Plan:
    """Cut the plan ``spec`` along :data:`CUTS` until its estimate fits ``budget_seconds``.

    Parameters
    ----------
    spec : RunSpec
        The run as given, in audit-plan mode (``--outliers``/``--random``).
    table : DataFrame
        The prepared table.
    workers : int
        Worker processes the run will use.
    budget_seconds : float, optional
        The time budget; without it the plan as given is estimated, with its precision.
    share_width : float, optional
        The widest the share's 95% interval may be, whatever the sample finds: sets M.
    calibration : Calibration, optional
        A calibration of ``spec`` made earlier; measured now when not given (a few seconds).

    Raises
    ------
    ParameterError
        For a budget that is not a positive number, a share width outside (0, 1), or a run of
        chosen records.
    """
    if budget_seconds is not None and not (math.isfinite(budget_seconds) and budget_seconds > 0):
        raise ParameterError(f"--budget must be a positive number of minutes, got {budget_seconds!r}.")
    settings = _settings(spec)
    if share_width is not None:
        settings["random"] = random_for_width(share_width)
    spec = _with(spec, settings)
    cal = calibration if calibration is not None else calibrate(spec, table, workers=workers)
    measured = spec.attack.n_shadow
    t = spec.threshold if 0.5 <= spec.threshold <= 1 else 0.8

    def step(values: dict[str, int], change: str = "", cost: str = "") -> PlanStep:
        candidate = _with(spec, values)
        scaled = for_n_shadow(cal, measured, values["n_shadow"])
        seconds = estimate_seconds(candidate, table, workers=workers, calibration=scaled)
        widths = metrics.share_width(values["random"]) if values["random"] else (None, None)
        half = values["n_eval"] // 2
        return PlanStep(
            outliers=values["outliers"],
            random=values["random"],
            n_shadow=values["n_shadow"],
            n_eval=values["n_eval"],
            seconds=seconds,
            risk_half_width=metrics.auc_half_width(t, half, half),
            share_width=widths[0],
            clean_share=widths[1],
            change=change,
            cost=cost,
            risk_missed=risk_missed(values["n_shadow"]),
        )

    steps = [step(dict(settings))]
    fits = budget_seconds is None or steps[0].seconds <= budget_seconds
    values = dict(settings)
    for name, value, cost in CUTS if not fits else ():
        if values[name] <= value or (name == "random" and share_width is not None):
            continue
        if name == "n_shadow":
            cost = _shadow_cost(values[name], value)
        values[name] = value
        label = {"n_shadow": "N_shadow", "n_eval": "N_eval", "outliers": "K", "random": "M"}[name]
        steps.append(step(dict(values), f"{label} = {value:,}", cost))
        if steps[-1].seconds <= (budget_seconds or math.inf):
            fits = True
            break
    chosen = len(steps) - 1 if fits else None
    return Plan(steps=steps, chosen=chosen, budget_seconds=budget_seconds, workers=workers)


def plan_rows(plan: Plan) -> list[dict[str, Any]]:
    """The steps as table rows (for the command line and the Evaluate page)."""
    return [
        {
            "step": "as given" if i == 0 else s.change,
            "K": s.outliers,
            "M": s.random,
            "N_shadow": s.n_shadow,
            "N_eval": s.n_eval,
            "estimate": in_words(s.seconds),
            "risk ± (95%, at t)": round(s.risk_half_width, 3),
            "risk missed (vs N_shadow 1,000)": round(s.risk_missed, 3),
            "share interval up to": None if s.share_width is None else round(s.share_width, 3),
            "gives up": s.cost,
            "chosen": i == plan.chosen,
        }
        for i, s in enumerate(plan.steps)
    ]
