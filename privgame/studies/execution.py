"""Running a study: the jobs' units in batches that keep every worker busy, resumable."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privgame.games.engine import CHUNK, Progress, record_results
from privgame.games.game import MODEL_SEEDED, SHARED_ROLES
from privgame.games.work import Context, evaluate_target, shared_chunk
from privgame.settings.executors import Cancelled, resolve_workers, run_calls, until_cancelled
from privgame.store.folders import (
    RunFolder,
    json_bytes,
    write_checked,
)
from privgame.studies.folder import StudyFolder
from privgame.studies.jobs import Job, _job_context, plan_jobs
from privgame.studies.results import FigureRenderer, write_outputs
from privgame.studies.spec import StudySpec, _json_safe

__all__ = ["execute_study"]

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
        write_checked(folder.path, "context.json", json_bytes(extra))
    deterministic = bool(getattr(ctx.new_generator(), "deterministic_fit", False))
    shared = []
    ms_in = MODEL_SEEDED.array("in")
    on_d = {ms_in, "shadow_in"}  # trained on D: one fit per chunk when the fit is deterministic
    for name, count in ((ctx.threat.shared_name, ctx.n_shadow // 2), (ms_in, ctx.n_eval // 2)):
        for start in range(0, count, CHUNK):
            stop = min(start + CHUNK, count)
            shared.append((name, start, stop, 1 if (name in on_d and deterministic) else stop - start))
    games = 3 if ctx.plays_traditional else 1
    return _Prepared(job, folder, ctx, targets, shared, ctx.n_shadow // 2 + games * (ctx.n_eval // 2))


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
    figure: FigureRenderer | None = None,
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
    figure : callable, optional
        Renders ``figure.html`` once every job is done (see :func:`write_outputs`); the command
        line passes :func:`privgame.outputs.study_figures.figure_html`. Without it the table and the
        figure's data are written, and no figure.

    Returns
    -------
    StudyFolder
        The same folder.
    """
    workers = resolve_workers(workers)
    with folder.claim():
        return _execute_study(folder, workers, scheduler, progress, cancel, figure)


def _execute_study(
    folder: StudyFolder,
    workers: int,
    scheduler: str | None,
    progress: Callable[[Progress], None] | None,
    cancel: Callable[[], bool] | None,
    figure: FigureRenderer | None,
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
        write_outputs(folder, figure)
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
                    ((i, name, start, fits), shared_chunk, (item.ctx, SHARED_ROLES[name], start, stop))
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
        shadow_out = item.folder.load_tables(item.ctx.threat.shared_name)
        ms_in = item.folder.load_tables(MODEL_SEEDED.array("in"))
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
