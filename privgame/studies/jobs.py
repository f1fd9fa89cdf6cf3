"""A study's jobs: one run per value of the varied setting, its context, targets and cost."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.errors import ParameterError, RunError, SizeError
from privgame.core.seeding import Role, stream
from privgame.data.splits import Sizes, check_sizes
from privgame.games import plan
from privgame.games.engine import build_context, plan_summary
from privgame.games.work import Context
from privgame.settings.run_spec import RunSpec
from privgame.studies.spec import _ALL, StudySpec, _epsilon_text

__all__ = ["Job", "plan_jobs", "study_cost"]

# --------------------------------------------------------------------------------------------
# Jobs: one run per value of the varied setting
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One run of a study.

    Attributes
    ----------
    key : str
        The run folder's name under ``runs/``, e.g. ``00-size-200``.
    index : int
        Position in the study (also the ``k`` of a dataset or ``r`` of a repeat).
    value : float
        The value of the varied setting (|D|, epsilon, dataset index or repeat index).
    spec : RunSpec
        The run's settings, written as its ``spec.json``.
    """

    key: str
    index: int
    value: float
    spec: RunSpec


def _derived_seed(root: int, index: int) -> int:
    return int(stream(root, 0, Role.STUDY, index).integers(0, 2**31 - 1))


def plan_jobs(spec: StudySpec) -> list[Job]:
    """The runs of a study, in order.

    Every job plays the per-target traditional game (a study runs the engine's units itself and
    does not pool), and its ``spec.json`` says so.
    """
    base = replace(spec.base, attack=replace(spec.base.attack, traditional="per-target"))
    jobs: list[Job] = []
    if spec.study == "size":
        for i, n in enumerate(spec.sizes):
            sizes = {**base.sizes, "target": int(n)}
            jobs.append(Job(f"{i:02d}-size-{n}", i, float(n), replace(base, sizes=sizes)))
    elif spec.study == "epsilon":
        for i, eps in enumerate(spec.epsilons):
            label = _epsilon_text(eps).replace(".", "p")
            params = {**base.generator_params, "epsilon": float(eps)}
            jobs.append(
                Job(f"{i:02d}-epsilon-{label}", i, float(eps), replace(base, generator_params=params))
            )
    elif spec.study == "datasets":
        jobs = [Job(f"{k:02d}-dataset-{k}", k, float(k), base) for k in range(spec.n_datasets)]
    else:
        jobs = [Job(f"{r:02d}-repeat-{r}", r, float(r), base) for r in range(spec.repeats)]
    return jobs


def _job_context(
    spec: StudySpec, job: Job, table: pd.DataFrame
) -> tuple[Context, np.ndarray, dict[str, Any]]:
    """The worker context, the targets and what differs from the job's spec (for context.json)."""
    ctx, _ = build_context(replace(job.spec, targets=_ALL), table)
    targets = np.sort(np.asarray(spec.target_ids, dtype=np.int64))
    extra: dict[str, Any] = {}
    if spec.study == "datasets":
        x = int(targets[0])
        rows = plan.t_in_rows(stream(job.spec.seed, 0, Role.STUDY, job.index), ctx.eval_pool, x, ctx.n)
        target = np.sort(rows)
        ctx = replace(ctx, target=target, reference=np.setdiff1d(ctx.eval_pool, target))
        extra = {
            "note": (
                "D is not the split's: it is the record plus |D| - 1 rows of D_eval drawn from "
                "stream(seed, 0, Role.STUDY, k); the references are D_eval without D."
            ),
            "dataset_index": job.index,
            "target_dataset": [int(r) for r in target],
        }
    elif spec.study == "convergence":
        seed = _derived_seed(job.spec.seed, job.index)
        ctx = replace(ctx, seed=seed)
        extra = {
            "note": (
                "The split and the targets come from the spec's seed; every other choice (shadow "
                "datasets, attack, both games) from the evaluation seed below."
            ),
            "repeat": job.index,
            "evaluation_seed": seed,
        }
    else:
        members = set(ctx.target.tolist())
        missing = [int(t) for t in targets if int(t) not in members]
        if missing:
            raise RunError(
                f"Records {missing[:10]} are not in D of job {job.key}; the study is inconsistent."
            )
    return ctx, targets, extra


def _resolve_targets(spec: StudySpec, table: pd.DataFrame) -> tuple[int, ...]:
    """The target record ids, from the base selection, checked against the study."""
    base = spec.base
    if spec.study == "size":
        smallest = {**base.sizes, "target": min(spec.sizes)}
        _, targets = build_context(replace(base, sizes=smallest), table)
        return tuple(int(t) for t in targets)
    if spec.study == "datasets" and base.targets.mode == "ids":
        ctx, _ = build_context(replace(base, targets=_ALL), table)
        x = int(base.targets.ids[0])
        if x not in set(ctx.eval_pool.tolist()):
            raise ParameterError(
                f"Record {x} is not in the evaluation pool D_eval of this split (seed {base.seed}); "
                "the datasets study draws datasets from D_eval around the record. Pick a record of "
                "D (see `privgame report` or the Data page) or leave --record-id out."
            )
        return (x,)
    _, targets = build_context(base, table)
    return tuple(int(t) for t in targets)


def _check_sizes(spec: StudySpec, n_rows: int) -> None:
    problems: list[str] = []
    sizes = spec.sizes if spec.study == "size" else (spec.base.sizes["target"],)
    for n in sizes:
        try:
            check_sizes(n_rows, Sizes(aux=spec.base.sizes["aux"], eval=spec.base.sizes["eval"], target=n))
        except SizeError as error:
            problems += [f"|D| = {n:,}: {p}" for p in error.problems]
    if problems:
        raise SizeError(
            f"Some dataset sizes do not fit the table of {n_rows:,} rows with |D_aux| = "
            f"{spec.base.sizes['aux']:,} and |D_eval| = {spec.base.sizes['eval']:,}.",
            problems,
        )


def study_cost(spec: StudySpec, n_targets: int | None = None) -> dict[str, int]:
    """Generator fits of the whole study: ``{"jobs", "fits"}``."""
    k = n_targets if n_targets is not None else len(spec.target_ids)
    if not k:
        sel = spec.base.targets
        k = len(sel.ids) if sel.mode == "ids" else int(sel.k or 0)
    jobs = plan_jobs(spec)
    return {"jobs": len(jobs), "fits": sum(plan_summary(job.spec, k)["total_fits"] for job in jobs)}
