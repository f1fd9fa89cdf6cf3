"""The paper's studies: sets of runs that vary one setting, each giving a table and a figure.

======================  =======================================================================
study                   what varies (the paper's figure)
======================  =======================================================================
``size``                |D|: the same target records in nested datasets of growing size (Fig. 3)
``epsilon``             PrivBayes' privacy budget epsilon, same D and records (Fig. 4)
``datasets``            the dataset D_k around one record x: its model-seeded risk in K datasets
                        drawn as in the traditional game, beside its traditional risk (Fig. 5)
``convergence``         the seeds: repeated full evaluations of the same records in the same D,
                        the spread of both risks for growing N_eval beside the Hoeffding bound
                        (Fig. 6, Appendix C)
======================  =======================================================================

A study is one folder under ``<runs root>/studies/`` holding its settings and one run folder per
*job* (one setting of the varied quantity)::

    study.json      the frozen StudySpec (the base RunSpec, the values, the resolved targets)
    data.parquet    the prepared table
    status.json     state, progress, error (checked against a schema when read)
    cancel          present when a cancel was requested
    engine.lock     locked (flock) by the process running the study, while it runs
    checksums.sha256  the SHA-256 of study.json, data.parquet and the outputs below
    runs/<key>/     one run folder per job (the layout of privgame.store), e.g. 00-size-200
    table.csv       the study's table, once every job is done
    points.csv      the numbers behind the figure (one row per record, dataset or repeat)
    figure.html     the figure, plotly.js inlined

As in a run folder (see :mod:`privgame.store`), every file the study reads must match its line in
``checksums.sha256`` (a missing line means damaged), and so must the job folders' ``spec.json``
and ``data.parquet``; one process at a time runs a study, which it holds by a lock that dies with it.

Every job is played with the engine's own units (:func:`privgame.games.work.shared_chunk` and
:func:`privgame.games.work.evaluate_target`), checkpointed in its run folder, so an interrupted
study resumes where it stopped and ends with the same numbers. A ``size`` or ``epsilon`` job is
exactly the run ``python -m privgame run`` makes with the job's ``spec.json``.

Seeds. A study has one root seed. The split of the table into D_aux and D_eval is always the
one of the root seed, and so are the target records, resolved once when the study is created and
written to ``study.json``. Beyond that:

* ``size``: every job uses the root seed. The split is one permutation and D is its first |D|
  rows of D_eval, so the datasets are nested and the targets (drawn from the smallest D) belong to
  every one of them.
* ``epsilon``: every job uses the root seed (same D, same records, same shadow datasets); only
  epsilon changes.
* ``datasets``: D_k is x plus |D| - 1 rows of D_eval \\ {x} drawn from
  ``stream(seed, 0, Role.STUDY, k)`` (the traditional game's 'in' dataset); its references are
  D_eval \\ D_k. Every other choice uses the root seed, so the attack and the traditional game
  are the same in every job and only the model-seeded game changes with D_k.
* ``convergence``: repeat ``r`` keeps D and the targets and plays the full pipeline (shadow
  datasets, attack, both games) with the seed ``stream(seed, 0, Role.STUDY, r)`` draws. Each repeat
  is evaluated once with the largest N_eval; a smaller N_eval uses the first N_eval/2 'in' and
  first N_eval/2 'out' runs, which are themselves an evaluation with N_eval runs.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from privgame import metrics
from privgame.data.splits import Sizes, check_sizes
from privgame.errors import ParameterError, RunError, SizeError
from privgame.execution import Cancelled, resolve_workers, run_calls, until_cancelled
from privgame.games import plan
from privgame.games.engine import CHUNK, Progress, build_context, plan_summary, record_results
from privgame.games.work import Context, evaluate_target, shared_chunk
from privgame.seeding import Role, stream
from privgame.spec import RunSpec, TargetSelection
from privgame.store import (
    DAMAGED,
    CheckedFolder,
    RunFolder,
    _append_checksum,
    _real_folders,
    _refuse_link,
    _remove_folder,
    _sha256,
    _write_checked,
    atomic_write,
    json_bytes,
)

__all__ = [
    "DEFAULT_DATASETS",
    "DEFAULT_EPSILONS",
    "DEFAULT_N_EVALS",
    "DEFAULT_SIZES",
    "STUDIES",
    "STUDY_TITLES",
    "Job",
    "StudyFolder",
    "StudyInfo",
    "StudyResult",
    "StudySpec",
    "create_study",
    "estimation_noise",
    "execute_study",
    "launch_study",
    "list_studies",
    "open_study",
    "plan_jobs",
    "studies_dir",
    "study_cost",
    "study_results",
    "write_outputs",
]

StudyName = Literal["size", "epsilon", "datasets", "convergence"]
STUDIES: tuple[str, ...] = ("size", "epsilon", "datasets", "convergence")
STUDY_TITLES: dict[str, str] = {
    "size": "Dataset size (Fig. 3)",
    "epsilon": "Differential privacy: PrivBayes' epsilon (Fig. 4)",
    "datasets": "One record in different datasets (Fig. 5)",
    "convergence": "Convergence in N_eval (Fig. 6, Appendix C)",
}
"""A short title of each study, naming the paper's figure it reproduces."""

DEFAULT_SIZES: tuple[int, ...] = (200, 500, 1000, 2000, 5000, 10000)
DEFAULT_EPSILONS: tuple[float, ...] = (math.inf, 100.0, 10.0, 1.0)
DEFAULT_DATASETS = 15
DEFAULT_N_EVALS: tuple[int, ...] = tuple(range(100, 2001, 100))

_STUDY_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-(size|epsilon|datasets|convergence)-[0-9a-f]{6}$")
_ALL = TargetSelection(mode="all", k=None)
_SHARED_ROLES = {"shadow_out": Role.SHADOW_OUT, "ms_in": Role.MS_IN}


# --------------------------------------------------------------------------------------------
# The study specification
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudySpec:
    """Everything that determines a study's results.

    Attributes
    ----------
    study : {"size", "epsilon", "datasets", "convergence"}
    base : RunSpec
        The settings every job starts from: data, split sizes, generator, attack, threshold and
        the root seed. Its ``targets`` are resolved to record ids by :func:`create_study`.
    sizes : tuple of int
        ``size``: the values of |D|.
    epsilons : tuple of float
        ``epsilon``: PrivBayes' budgets (``inf`` allowed: no noise).
    n_datasets : int
        ``datasets``: how many datasets D_k to draw around the record.
    n_evals : tuple of int
        ``convergence``: the values of N_eval (even, at least 4); jobs use the largest.
    repeats : int
        ``convergence``: full evaluations per record (at least 2).
    rho : float
        ``convergence``: failure probability of the Hoeffding bound drawn beside the spread.
    """

    study: StudyName
    base: RunSpec
    sizes: tuple[int, ...] = ()
    epsilons: tuple[float, ...] = ()
    n_datasets: int = 0
    n_evals: tuple[int, ...] = ()
    repeats: int = 0
    rho: float = 0.2

    @property
    def values(self) -> tuple[float, ...]:
        """The values the study varies, in job order."""
        if self.study == "size":
            return tuple(float(s) for s in self.sizes)
        if self.study == "epsilon":
            return tuple(self.epsilons)
        if self.study == "datasets":
            return tuple(float(k) for k in range(self.n_datasets))
        return tuple(float(n) for n in self.n_evals)

    @property
    def target_ids(self) -> tuple[int, ...]:
        """The resolved target records (empty until :func:`create_study` resolved them)."""
        return self.base.targets.ids if self.base.targets.mode == "ids" else ()

    def problems(self) -> list[str]:
        """Every problem with the study's own settings, one sentence each."""
        out: list[str] = []
        if self.study not in STUDIES:
            return [f"study {self.study!r} is unknown; use one of {list(STUDIES)}."]
        if self.study == "size":
            if not self.sizes:
                out.append("the size study needs at least one dataset size (--sizes).")
            bad = [s for s in self.sizes if isinstance(s, bool) or not isinstance(s, int) or s < 2]
            if bad:
                out.append(f"dataset sizes must be whole numbers of at least 2; these are not: {bad}.")
            if len(set(self.sizes)) != len(self.sizes):
                out.append("the dataset sizes contain duplicates; list each size once.")
        elif self.study == "epsilon":
            if self.base.generator != "privbayes":
                out.append(
                    f"the epsilon study varies PrivBayes' budget; its generator must be 'privbayes', "
                    f"not {self.base.generator!r}."
                )
            if not self.epsilons:
                out.append("the epsilon study needs at least one epsilon (--epsilons).")
            bad_eps = [e for e in self.epsilons if not (isinstance(e, int | float) and e > 0)]
            if bad_eps:
                out.append(f"every epsilon must be a positive number or inf; these are not: {bad_eps}.")
            if len(set(self.epsilons)) != len(self.epsilons):
                out.append("the epsilons contain duplicates; list each value once.")
        elif self.study == "datasets":
            if not (isinstance(self.n_datasets, int) and 1 <= self.n_datasets <= 1000):
                out.append(f"the number of datasets must be between 1 and 1000; got {self.n_datasets!r}.")
            selection = self.base.targets
            if selection.mode == "ids" and len(selection.ids) != 1:
                out.append("the datasets study follows one record; give exactly one record id.")
            if selection.mode in ("random", "outliers") and selection.k != 1:
                out.append("the datasets study follows one record; choose k = 1.")
            if selection.mode == "all":
                out.append("the datasets study follows one record; choose it by id, at random or as outlier.")
        else:
            if not self.n_evals:
                out.append("the convergence study needs at least one N_eval (--n-evals).")
            bad_n = [
                n for n in self.n_evals if isinstance(n, bool) or not isinstance(n, int) or n < 4 or n % 2
            ]
            if bad_n:
                out.append(
                    f"every N_eval must be an even whole number of at least 4; these are not: {bad_n}."
                )
            if len(set(self.n_evals)) != len(self.n_evals):
                out.append("the N_eval values contain duplicates; list each once.")
            if self.n_evals and not bad_n and self.base.attack.n_eval != max(self.n_evals):
                out.append(
                    f"the base N_eval ({self.base.attack.n_eval}) must be the largest of --n-evals "
                    f"({max(self.n_evals)})."
                )
            if not (isinstance(self.repeats, int) and 2 <= self.repeats <= 1000):
                out.append(f"repeats must be between 2 and 1000 (a spread needs two); got {self.repeats!r}.")
            if not (isinstance(self.rho, int | float) and 0 < self.rho < 1):
                out.append(f"rho must lie strictly between 0 and 1; got {self.rho!r}.")
        return out

    def validate(self) -> StudySpec:
        """Check the study and its base run settings; raise one :class:`ParameterError`."""
        problems = self.problems()
        try:
            self.base.validate()
        except ParameterError as error:
            problems += error.problems
        if problems:
            raise ParameterError(f"The {self.study} study's settings are not valid.", problems)
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (infinite epsilon as the string "inf")."""
        return {
            "study": self.study,
            "base": self.base.to_dict(),
            "sizes": list(self.sizes),
            "epsilons": ["inf" if math.isinf(e) else e for e in self.epsilons],
            "n_datasets": self.n_datasets,
            "n_evals": list(self.n_evals),
            "repeats": self.repeats,
            "rho": self.rho,
        }

    def to_json(self) -> str:
        """Canonical JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StudySpec:
        """Rebuild a spec from :meth:`to_dict` output."""
        return cls(
            study=str(data["study"]),  # type: ignore[arg-type]
            base=RunSpec.from_dict(data["base"]),
            sizes=tuple(int(s) for s in data.get("sizes", ())),
            epsilons=tuple(float(e) for e in data.get("epsilons", ())),
            n_datasets=int(data.get("n_datasets", 0)),
            n_evals=tuple(int(n) for n in data.get("n_evals", ())),
            repeats=int(data.get("repeats", 0)),
            rho=float(data.get("rho", 0.2)),
        )

    def describe(self) -> str:
        """One line of the study's settings, for lists and captions."""
        b = self.base
        params = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in b.generator_params.items()
        )
        gen = f"{b.generator}{f' ({params})' if params else ''}"
        varied = {
            "size": f"|D| in {list(self.sizes)}",
            "epsilon": f"epsilon in {[_epsilon_text(e) for e in self.epsilons]}",
            "datasets": f"{self.n_datasets} datasets, |D| = {b.sizes['target']:,}",
            "convergence": (
                f"N_eval in {_short_list(self.n_evals)}, {self.repeats} repeats, |D| = {b.sizes['target']:,}"
            ),
        }[self.study]
        n_eval = "" if self.study == "convergence" else f", N_eval {b.attack.n_eval}"
        return (
            f"{b.data_name} · {gen} · {varied} · {len(self.target_ids) or '?'} record(s) · "
            f"|D_aux| {b.sizes['aux']:,}, |D_eval| {b.sizes['eval']:,} · N_shadow {b.attack.n_shadow}"
            f"{n_eval} · seed {b.seed}"
        )


def _json_safe(value: Any) -> Any:
    """``value`` with infinite floats written as "inf"/"-inf" (PrivBayes' metadata holds epsilon)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _epsilon_text(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def _short_list(values: Sequence[int]) -> str:
    if len(values) <= 6:
        return str(list(values))
    return f"[{values[0]}, {values[1]}, …, {values[-1]}] ({len(values)} values)"


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


# --------------------------------------------------------------------------------------------
# The study folder
# --------------------------------------------------------------------------------------------


def studies_dir(runs_root: str | os.PathLike[str]) -> Path:
    """The folder that holds the study folders: ``<runs root>/studies``."""
    return Path(runs_root) / "studies"


@dataclass(frozen=True)
class StudyInfo:
    """What a list of studies shows of one study."""

    study_id: str
    path: Path
    study: str
    state: str
    created: float
    description: str
    progress: float


@dataclass(frozen=True)
class StudyResult:
    """A study's numbers.

    Attributes
    ----------
    table : DataFrame
        The study's table: one row per value of the varied setting.
    points : DataFrame
        The numbers behind the figure: one row per record and value (``size``, ``epsilon``), per
        dataset (``datasets``) or per record, repeat, game and N_eval (``convergence``).
    jobs_done, jobs_total : int
        Finished jobs and all jobs; the result is partial while they differ.
    """

    table: pd.DataFrame
    points: pd.DataFrame
    jobs_done: int
    jobs_total: int

    @property
    def complete(self) -> bool:
        """Whether every job is finished."""
        return self.jobs_done == self.jobs_total


class StudyFolder(CheckedFolder):
    """Read and write one study folder.

    Parameters
    ----------
    path : path-like
        The study folder (it must hold ``study.json``, and not be a symbolic link).
    """

    kind = "study"
    inputs = ("study.json", "data.parquet")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        _refuse_link(self.path, "study")
        if not (self.path / "study.json").is_file():
            raise RunError(
                f"{self.path} is not a privgame study folder (it has no study.json); give the "
                "folder a study was written to (under <runs>/studies/)."
            )

    @property
    def study_id(self) -> str:
        """The folder's name."""
        return self.path.name

    def _fix(self, relative: str) -> str:
        if relative in self.inputs:
            return "the study cannot be used: start a new study from the original data file."
        return f"resume the study to write it again: python -m privgame study resume {self.path}"

    def spec(self) -> StudySpec:
        """The study's settings (``study.json``, checked against its checksum)."""
        data = self._read_checked("study.json")
        try:
            return StudySpec.from_dict(json.loads(data))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise RunError(
                f"{self.path / 'study.json'} is corrupt ({exc}); the study cannot be read."
            ) from None

    def load_table(self) -> pd.DataFrame:
        """The prepared table the study audits (``data.parquet``, checked against its checksum)."""
        data = self._read_checked("data.parquet")
        try:
            return pd.read_parquet(io.BytesIO(data))
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise RunError(
                f"data.parquet of study {self.study_id} is unreadable ({type(exc).__name__}); "
                f"{self._fix('data.parquet')}"
            ) from None

    def delete(self) -> None:
        """Remove the study folder and every run in it (a symbolic link: the link only).

        Raises
        ------
        RunError
            When a process is running the study, or the folder cannot be removed.
        """
        if self.is_running():
            raise RunError(f"Study {self.study_id} is running; cancel it before deleting it.")
        _remove_folder(self.path, f"study {self.study_id}")

    def job_folder(self, job: Job) -> RunFolder:
        """The run folder of ``job``, created (spec and table, checksummed) if it does not exist yet.

        A job folder whose ``spec.json`` or ``data.parquet`` is missing or does not match its
        checksum (a study killed while creating it) gets them written again: both follow from the
        study's own, checked, files.
        """
        path = self.path / "runs" / job.key
        if (path / "spec.json").is_file():
            folder = RunFolder(path)
            if folder._intact("data.parquet") and folder._intact("spec.json"):
                return folder
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        table = self._read_checked("data.parquet")
        data = path / "data.parquet"
        with contextlib.suppress(FileNotFoundError):
            data.unlink()
        try:
            os.link(self.path / "data.parquet", data)  # the study's, checked just above
        except OSError:  # another file system, or links not allowed
            atomic_write(data, table)
        _append_checksum(path, "data.parquet", _sha256(table))
        if not (path / "status.json").is_file():
            folder_status = {"state": "created", "created": time.time(), "done_units": 0, "total_units": None}
            atomic_write(path / "status.json", json_bytes(folder_status))
        _write_checked(path, "spec.json", job.spec.to_json().encode())
        return RunFolder(path)

    def job_done(self, job: Job) -> bool:
        """Whether ``job`` has its results (a symbolic link in place of its folder has none)."""
        path = self.path / "runs" / job.key
        return (
            not path.is_symlink()
            and (path / "records.parquet").is_file()
            and RunFolder(path).status().get("state") == "done"
        )

    def results(self) -> StudyResult:
        """The study's table and figure data from the jobs finished so far."""
        return study_results(self)

    def has_results(self) -> bool:
        """Whether the final table was written."""
        return (self.path / "table.csv").is_file()

    def info(self) -> StudyInfo:
        """A short description for lists (state ``damaged`` when the status or study.json is)."""
        status = self.status()
        state = str(status.get("state", "created"))
        try:
            spec = self.spec()
            name, description = spec.study, spec.describe()
        except RunError as error:
            name, description = "?", f"unreadable study.json: {error}"
            state = DAMAGED
        if status.get("state") == DAMAGED:
            description = str(status.get("error"))
        total = status.get("fits_total") or 0
        created = status.get("created")
        if created is None:
            try:
                created = (self.path / "study.json").stat().st_mtime
            except OSError:
                created = 0.0
        return StudyInfo(
            study_id=self.study_id,
            path=self.path,
            study=name,
            state=state,
            created=float(created),
            description=description,
            progress=min(1.0, (status.get("fits_done") or 0) / total) if total else 0.0,
        )


def create_study(runs_root: str | os.PathLike[str], spec: StudySpec, table: pd.DataFrame) -> StudyFolder:
    """Validate ``spec`` against ``table``, resolve its targets, and write a new study folder.

    Parameters
    ----------
    runs_root : path-like
        The folder that holds run folders; the study goes to ``<runs_root>/studies/<id>``.
    spec : StudySpec
    table : DataFrame
        The prepared table (as :func:`privgame.data.load_dataset` returns it).

    Returns
    -------
    StudyFolder
        The new study (state ``created``); run it with :func:`execute_study`.

    Raises
    ------
    ParameterError, SizeError
        For settings that do not fit the study or the table.
    """
    spec.validate()
    _check_sizes(spec, len(table))
    ids = _resolve_targets(spec, table)
    resolved = replace(spec, base=replace(spec.base, targets=TargetSelection(mode="ids", k=None, ids=ids)))
    root = studies_dir(runs_root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for _ in range(10):
        path = root / f"{stamp}-{spec.study}-{secrets.token_hex(3)}"
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - ten random collisions in one second
        raise RunError(f"Could not create a new study folder under {root}.")
    try:
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False)
        _write_checked(path, "data.parquet", buffer.getvalue())
        _write_checked(path, "study.json", resolved.to_json().encode())
        folder = StudyFolder(path)
        cost = study_cost(resolved)
        folder.write_status(state="created", created=time.time(), fits_done=0, fits_total=cost["fits"])
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)  # no half-made study, and no stray copy of the table
        raise
    return folder


def list_studies(runs_root: str | os.PathLike[str]) -> list[StudyInfo]:
    """Every study under ``<runs_root>/studies``, newest first."""
    root = studies_dir(runs_root)
    if root.is_symlink() or not root.is_dir():
        return []  # a link is never followed out of the runs folder
    found = [
        StudyFolder(p).info()
        for p in _real_folders(root)
        if _STUDY_ID.match(p.name) and (p / "study.json").is_file()
    ]
    return sorted(found, key=lambda i: i.created, reverse=True)


def open_study(runs_root: str | os.PathLike[str], study_id: str) -> StudyFolder:
    """Open the study ``study_id`` under ``<runs_root>/studies``."""
    if not _STUDY_ID.match(study_id):
        raise RunError(f"{study_id!r} is not a study id (expected e.g. 20261130-101500-size-1a2b3c).")
    return StudyFolder(studies_dir(runs_root) / study_id)


def launch_study(folder: StudyFolder, *, workers: int | None = None) -> int:
    """Run the study in a detached ``python -m privgame study resume`` process; return its pid."""
    command = [sys.executable, "-m", "privgame", "study", "resume", str(folder.path), "--quiet"]
    if workers:
        command += ["--workers", str(int(workers))]
    folder.write_status(state="queued")
    with open(folder.path / "engine.log", "ab") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    folder.write_status(state="queued", pid=process.pid)
    return process.pid


# --------------------------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------------------------


@dataclass
class _Counter:
    fits_total: int
    units_total: int
    fits_done: int = 0
    units_done: int = 0
    fits_now: int = 0
    started: float = field(default_factory=time.time)

    def progress(self, phase: str) -> Progress:
        elapsed = time.time() - self.started
        eta = elapsed / self.fits_now * (self.fits_total - self.fits_done) if self.fits_now else None
        return Progress(
            phase, self.units_done, self.units_total, self.fits_done, self.fits_total, elapsed, eta
        )


@dataclass
class _Prepared:
    job: Job
    folder: RunFolder
    ctx: Context
    targets: np.ndarray
    shared: list[tuple[str, int, int, int]]  # (role name, start, stop, fits)
    fits_per_target: int


def _prepare(study: StudyFolder, spec: StudySpec, job: Job, table: pd.DataFrame) -> _Prepared:
    folder = study.job_folder(job)
    ctx, targets, extra = _job_context(spec, job, table)
    if extra and not (folder.path / "context.json").is_file():
        _write_checked(folder.path, "context.json", json_bytes(extra))
    deterministic = bool(getattr(ctx.new_generator(), "deterministic_fit", False))
    shared = []
    for name, count in (("shadow_out", ctx.n_shadow // 2), ("ms_in", ctx.n_eval // 2)):
        for start in range(0, count, CHUNK):
            stop = min(start + CHUNK, count)
            shared.append((name, start, stop, 1 if (name == "ms_in" and deterministic) else stop - start))
    return _Prepared(job, folder, ctx, targets, shared, ctx.n_shadow // 2 + 3 * (ctx.n_eval // 2))


def _batches(prepared: list[_Prepared], workers: int) -> Iterator[list[_Prepared]]:
    """Groups of consecutive jobs with enough target units to keep every worker busy."""
    batch: list[_Prepared] = []
    units = 0
    for item in prepared:
        batch.append(item)
        units += len(item.targets)
        if units >= 2 * workers:
            yield batch
            batch, units = [], 0
    if batch:
        yield batch


def execute_study(
    folder: StudyFolder,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> StudyFolder:
    """Run or resume every job of a study, then write its table, figure data and figure.

    Jobs are played in batches big enough to keep every worker busy: first the shared synthetic
    datasets of the batch's jobs, then its target records; a finished job's results are written
    at once, so a study's table grows while it runs.

    Parameters
    ----------
    folder : StudyFolder
    workers : int, optional
        Local worker processes; every core by default.
    scheduler : str, optional
        A Dask scheduler address; when given, units run on that cluster.
    progress : callable, optional
        Called with a :class:`privgame.games.engine.Progress` after every finished unit.
    cancel : callable, optional
        Polled between units; returning True stops the study (state ``cancelled``; resumable).

    Returns
    -------
    StudyFolder
        The same folder.
    """
    workers = resolve_workers(workers)
    with folder.claim():
        return _execute_study(folder, workers, scheduler, progress, cancel)


def _execute_study(
    folder: StudyFolder,
    workers: int,
    scheduler: str | None,
    progress: Callable[[Progress], None] | None,
    cancel: Callable[[], bool] | None,
) -> StudyFolder:
    """:func:`execute_study` on a study this process holds."""
    folder.clear_cancel()
    spec = folder.spec()
    try:
        table = folder.load_table()
        jobs = plan_jobs(spec)
        prepared = [_prepare(folder, spec, job, table) for job in jobs]
    except Exception as exc:
        _failed(folder, exc)
        raise
    counter = _Counter(
        fits_total=sum(sum(s[3] for s in p.shared) + p.fits_per_target * len(p.targets) for p in prepared),
        units_total=sum(len(p.shared) + len(p.targets) for p in prepared),
    )

    def report(phase: str) -> None:
        state = counter.progress(phase)
        folder.write_status(
            state="running",
            phase=phase,
            fits_done=counter.fits_done,
            fits_total=counter.fits_total,
            done_units=counter.units_done,
            total_units=counter.units_total,
            eta=state.eta,
        )
        if progress is not None:
            progress(state)

    def cancelled() -> bool:
        return folder.cancel_requested() or (cancel is not None and cancel())

    # Wall time of earlier attempts (a resumed study reports the time of all its attempts).
    earlier = float(folder.status().get("seconds") or 0.0)
    folder.write_status(
        state="running", pid=os.getpid(), started=counter.started, error=None, workers=workers, jobs=len(jobs)
    )
    try:
        pending: list[_Prepared] = []
        for item in prepared:
            if folder.job_done(item.job):
                counter.units_done += len(item.shared) + len(item.targets)
                counter.fits_done += sum(s[3] for s in item.shared) + item.fits_per_target * len(item.targets)
            else:
                pending.append(item)
        report("shared")
        for batch in _batches(pending, workers):
            _run_batch(batch, counter, report, cancelled, workers, scheduler)
    except Cancelled:
        folder.write_status(
            state="cancelled", finished=time.time(), seconds=earlier + time.time() - counter.started
        )
        return folder
    except Exception as exc:
        _failed(folder, exc, seconds=earlier + time.time() - counter.started)
        raise
    try:
        write_outputs(folder)
    except Exception as exc:  # e.g. a full disk while the outputs are written
        _failed(folder, exc, seconds=earlier + time.time() - counter.started)
        raise
    folder.write_status(
        state="done", phase="done", finished=time.time(), seconds=earlier + time.time() - counter.started
    )
    if progress is not None:
        progress(
            Progress(
                "done",
                counter.units_total,
                counter.units_total,
                counter.fits_total,
                counter.fits_total,
                time.time() - counter.started,
                0.0,
            )
        )
    return folder


def _failed(folder: StudyFolder, error: BaseException, **fields: Any) -> None:
    """Record that the study failed; a status that cannot be written does not hide ``error``."""
    with contextlib.suppress(Exception):
        folder.write_status(
            state="failed", error=f"{type(error).__name__}: {error}", finished=time.time(), **fields
        )


def _run_batch(
    batch: list[_Prepared],
    counter: _Counter,
    report: Callable[[str], None],
    cancelled: Callable[[], bool],
    workers: int,
    scheduler: str | None,
) -> None:
    todo = []
    for i, item in enumerate(batch):
        item.folder.write_status(state="running", n_targets=len(item.targets))
        for name, start, stop, fits in item.shared:
            if item.folder.shared_done(name, start):
                counter.units_done += 1
                counter.fits_done += fits
            else:
                todo.append(
                    ((i, name, start, fits), shared_chunk, (item.ctx, _SHARED_ROLES[name], start, stop))
                )
    report("shared")
    for (i, name, start, fits), datasets, _ in until_cancelled(
        run_calls(todo, workers=workers, scheduler=scheduler), cancelled
    ):
        batch[i].folder.save_shared(name, start, datasets)
        counter.units_done += 1
        counter.fits_done += fits
        counter.fits_now += fits
        report("shared")

    todo = []
    for i, item in enumerate(batch):
        shadow_out = item.folder.load_shared("shadow_out")
        ms_in = item.folder.load_shared("ms_in")
        for record_id in item.targets:
            if item.folder.target_done(int(record_id)):
                counter.units_done += 1
                counter.fits_done += item.fits_per_target
            else:
                todo.append(
                    ((i, int(record_id)), evaluate_target, (item.ctx, int(record_id), shadow_out, ms_in))
                )
    report("targets")
    for (i, record_id), result, _ in until_cancelled(
        run_calls(todo, workers=workers, scheduler=scheduler), cancelled
    ):
        batch[i].folder.save_target(record_id, result)
        counter.units_done += 1
        counter.fits_done += batch[i].fits_per_target
        counter.fits_now += batch[i].fits_per_target
        report("targets")

    for item in batch:
        records, scores, summary = record_results(item.folder, item.ctx, item.targets, item.job.spec)
        item.folder.write_results(records, scores, _json_safe(summary))
        item.folder.write_status(state="done", phase="done", finished=time.time())
    report("results")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def _risk_row(records: pd.DataFrame, threshold: float) -> dict[str, Any]:
    ms = records["risk_model_seeded"].to_numpy(np.float64)
    tr = records["risk_traditional"].to_numpy(np.float64)
    summary = metrics.summarize(ms, tr, threshold=threshold)
    keep = ~(np.isnan(ms) | np.isnan(tr))

    def sd(v: np.ndarray) -> float:
        return float(np.std(v, ddof=1)) if v.size > 1 else math.nan

    return {
        "records": int(np.count_nonzero(keep)),
        "mean_model_seeded": _num(summary["mean_model_seeded"]),
        "sd_model_seeded": sd(ms[keep]),
        "mean_traditional": _num(summary["mean_traditional"]),
        "sd_traditional": sd(tr[keep]),
        "rmsd": _num(summary["rmsd"]),
        "max_abs_difference": _num(summary.get("max_abs_difference")),
        "miss_rate": _num(summary["miss_rate"]),
        "at_risk_model_seeded": summary["at_risk_model_seeded"],
        "at_risk_traditional": summary["at_risk_traditional"],
        "records_excluded": summary["records_excluded"],
    }


def estimation_noise(scores: pd.DataFrame) -> dict[str, float]:
    """How far the risks of a run are from their limits for endless evaluation runs.

    Each record's runs of a game are split in two by the parity of their index, so each half
    holds about N_eval/4 'in' and N_eval/4 'out' runs. With ``A1`` and ``A2`` the AUCs of the two
    halves, ``(A1 - A2)**2 / 4`` estimates the variance of the AUC of all N_eval runs (a half has
    twice the variance, and the halves are independent). The root mean of these over records is
    the noise of each game's risk; if both games had the same true risk for every record, their
    RMSD would still be about ``sqrt(noise_ms**2 + noise_t**2)``.

    Parameters
    ----------
    scores : DataFrame
        A run's scores (:meth:`privgame.store.RunFolder.scores`).

    Returns
    -------
    dict
        ``noise_model_seeded``, ``noise_traditional`` (standard deviations, AUC units) and
        ``rmsd_noise``; nan when no record has both classes in both halves.
    """
    out: dict[str, float] = {}
    for game in ("model_seeded", "traditional"):
        squares = []
        for _, part in scores.loc[scores["game"] == game].groupby("record_id"):
            s, lab = part["score"].to_numpy(np.float64), part["label"].to_numpy(np.float64)
            odd = part["index"].to_numpy() % 2 == 1
            a, b = metrics.auc(s[~odd], lab[~odd]), metrics.auc(s[odd], lab[odd])
            if not (math.isnan(a) or math.isnan(b)):
                squares.append((a - b) ** 2 / 4)
        out[f"noise_{game}"] = math.sqrt(float(np.mean(squares))) if squares else math.nan
    out["rmsd_noise"] = math.hypot(out["noise_model_seeded"], out["noise_traditional"])
    return out


def _noise_row(run: RunFolder, records: pd.DataFrame) -> dict[str, float]:
    noise = estimation_noise(run.scores())["rmsd_noise"]
    rmsd = metrics.summarize(
        records["risk_model_seeded"].to_numpy(np.float64), records["risk_traditional"].to_numpy(np.float64)
    )["rmsd"]
    corrected = (
        math.sqrt(max(rmsd**2 - noise**2, 0.0)) if rmsd is not None and not math.isnan(noise) else math.nan
    )
    return {"rmsd_noise": noise, "rmsd_corrected": corrected}


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def study_results(folder: StudyFolder) -> StudyResult:
    """The table and figure data of a study, from the jobs finished so far.

    Columns of ``table`` by study:

    * ``size`` / ``epsilon``: the value (``size`` or ``epsilon``), then ``records``, the mean and
      standard deviation across records of each risk, ``rmsd``, ``max_abs_difference``,
      ``miss_rate`` (at the study's threshold t; nan when no record is above t),
      ``at_risk_model_seeded``, ``at_risk_traditional``, ``records_excluded``, ``rmsd_noise``
      (the RMSD the finite N_eval alone would give, see :func:`estimation_noise`) and
      ``rmsd_corrected`` (``sqrt(rmsd**2 - rmsd_noise**2)``, 0 when negative: an estimate of the
      RMSD between the risks' limits).
    * ``datasets``: one row per dataset D_k: ``dataset``, ``record_id``, both risks and their 95%
      DeLong bounds, ``difference`` (model-seeded minus traditional) and the record's
      ``outlier_score`` within D_k.
    * ``convergence``: one row per N_eval: ``n_eval``, ``repeats``, ``records``, and for each
      game: ``sd_<game>`` (the standard deviation of a record's risk over the repeats, averaged
      over records: attack training and evaluation together), ``max_sd_<game>`` (the largest
      over records), ``sd_same_attack_<game>`` (the standard deviation over disjoint blocks of
      N_eval runs within one repeat, averaged over records and repeats: the evaluation noise
      alone, with the attack fixed; nan when a repeat holds fewer than two blocks) and
      ``mean_<game>``; then ``hoeffding_half_width`` (Proposition 1 with N_eval/2 runs per class
      at the study's rho).
    """
    spec = folder.spec()
    jobs = plan_jobs(spec)
    done = [job for job in jobs if folder.job_done(job)]
    runs = {job.key: RunFolder(folder.path / "runs" / job.key) for job in done}
    t = spec.base.threshold
    if spec.study in ("size", "epsilon"):
        column = "size" if spec.study == "size" else "epsilon"
        rows, points = [], []
        for job in done:
            records = runs[job.key].records()
            value: float | int = int(job.value) if spec.study == "size" else job.value
            rows.append({column: value, **_risk_row(records, t), **_noise_row(runs[job.key], records)})
            part = records[["record_id", "risk_model_seeded", "risk_traditional", "difference"]].copy()
            part.insert(0, column, value)
            points.append(part)
        table = pd.DataFrame(rows, columns=[column, *_RISK_ROW_COLUMNS])
        point_frame = (
            pd.concat(points, ignore_index=True)
            if points
            else pd.DataFrame(
                columns=[column, "record_id", "risk_model_seeded", "risk_traditional", "difference"]
            )
        )
        return StudyResult(table, point_frame, len(done), len(jobs))
    if spec.study == "datasets":
        columns = [
            "risk_model_seeded",
            "risk_model_seeded_low",
            "risk_model_seeded_high",
            "risk_traditional",
            "risk_traditional_low",
            "risk_traditional_high",
            "difference",
            "outlier_score",
        ]
        rows = []
        for job in done:
            record = runs[job.key].records().iloc[0]
            rows.append(
                {"dataset": job.index + 1, "record_id": int(record["record_id"])}
                | {c: float(record[c]) for c in columns}
            )
        table = pd.DataFrame(rows, columns=["dataset", "record_id", *columns])
        return StudyResult(table, table.copy(), len(done), len(jobs))
    return _convergence_results(spec, done, runs, len(jobs))


_RISK_ROW_COLUMNS = (
    "records",
    "mean_model_seeded",
    "sd_model_seeded",
    "mean_traditional",
    "sd_traditional",
    "rmsd",
    "max_abs_difference",
    "miss_rate",
    "at_risk_model_seeded",
    "at_risk_traditional",
    "records_excluded",
    "rmsd_noise",
    "rmsd_corrected",
)


def _block_aucs(scores: np.ndarray, labels: np.ndarray, n_eval: int) -> list[float]:
    """AUCs of consecutive disjoint blocks of n_eval/2 'in' and n_eval/2 'out' runs.

    The first block is the evaluation with N_eval = ``n_eval`` (its first runs); the blocks are
    independent evaluations with the same attack, so their spread is the evaluation noise alone.
    """
    half = n_eval // 2
    ins, outs = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    blocks = min(len(ins), len(outs)) // half
    return [
        metrics.auc(scores[keep], labels[keep])
        for b in range(blocks)
        for keep in [np.r_[ins[b * half : (b + 1) * half], outs[b * half : (b + 1) * half]]]
    ]


def _mean_max(values: list[float]) -> tuple[float, float]:
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    return (float(v.mean()), float(v.max())) if v.size else (math.nan, math.nan)


def _convergence_results(
    spec: StudySpec, done: list[Job], runs: dict[str, RunFolder], n_jobs: int
) -> StudyResult:
    points = []
    within: dict[tuple[int, str], list[float]] = {}
    for job in done:
        run = runs[job.key]
        for record_id in spec.target_ids:
            data = run.load_target(record_id)
            for game, prefix in (("model_seeded", "ms"), ("traditional", "t")):
                scores, labels = data[f"{prefix}_scores"], data[f"{prefix}_labels"]
                for n in spec.n_evals:
                    blocks = _block_aucs(scores, labels, n)
                    points.append(
                        {
                            "n_eval": n,
                            "record_id": int(record_id),
                            "repeat": job.index,
                            "game": game,
                            "risk": blocks[0],
                        }
                    )
                    if len(blocks) > 1:
                        within.setdefault((n, game), []).append(float(np.std(blocks, ddof=1)))
    point_frame = pd.DataFrame(points, columns=["n_eval", "record_id", "repeat", "game", "risk"])
    rows = []
    for n in sorted(spec.n_evals):
        row: dict[str, Any] = {"n_eval": n, "repeats": len(done), "records": len(spec.target_ids)}
        part = point_frame.loc[point_frame["n_eval"] == n]
        for game in ("model_seeded", "traditional"):
            mine = part.loc[part["game"] == game]
            sds = mine.groupby("record_id")["risk"].std(ddof=1).tolist() if len(done) > 1 else []
            row[f"sd_{game}"], row[f"max_sd_{game}"] = _mean_max(sds)
            row[f"sd_same_attack_{game}"], _ = _mean_max(within.get((n, game), []))
            row[f"mean_{game}"] = float(mine["risk"].mean()) if len(mine) else math.nan
        row["hoeffding_half_width"] = metrics.hoeffding_half_width(n // 2, spec.rho)
        rows.append(row)
    columns = ["n_eval", "repeats", "records"]
    for game in ("model_seeded", "traditional"):
        columns += [f"sd_{game}", f"max_sd_{game}", f"sd_same_attack_{game}", f"mean_{game}"]
    table = pd.DataFrame(rows, columns=[*columns, "hoeffding_half_width"])
    return StudyResult(table, point_frame, len(done), n_jobs)


def write_outputs(folder: StudyFolder) -> StudyResult:
    """Write ``table.csv``, ``points.csv`` and ``figure.html`` from the finished jobs."""
    from privgame.csvsafe import csv_safe
    from privgame.study_figures import study_chart

    result = study_results(folder)
    table = csv_safe(result.table).to_csv(index=False, lineterminator="\n").encode()
    _write_checked(folder.path, "table.csv", table)
    points = csv_safe(result.points).to_csv(index=False, lineterminator="\n").encode()
    _write_checked(folder.path, "points.csv", points)
    chart = study_chart(folder.spec(), result)
    html = chart.figure.to_html(include_plotlyjs=True, full_html=True)
    _write_checked(folder.path, "figure.html", html.encode())
    return result
