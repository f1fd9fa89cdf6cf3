"""The run engine: plan -> units -> executor -> run store.

``execute(folder)`` runs (or resumes) the run held in a run folder:

1. shared units make the shared shadow datasets (see :mod:`privgame.games.threat`) and the
   model-seeded 'in' datasets in chunks; in
   the pooled traditional game (:mod:`privgame.games.pool`, the default), pool units train the
   generator once on each pool dataset some target uses and compute the targets' features there,
   alongside the shared units;
2. one unit per target record trains its attack and plays both games (reading its pooled
   traditional features, or training a generator per run in the per-target game);
3. the results are assembled into ``records``, ``scores`` and ``summary``.

Every finished unit is checkpointed in the folder, so an interrupted run resumes where it stopped
and ends with the same results. Progress (units, generator fits as they finish, ETA) goes to a
callback and to ``status.json`` after each unit and at least every few seconds
(:mod:`privgame.games.live`); a cancel (callback or ``cancel`` file) stops the run after the
units in flight.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from math import nan
from typing import Any

import numpy as np
import pandas as pd

from privgame.core import metrics
from privgame.core.defaults import NOT_RUN
from privgame.core.errors import RunError, WorkerLostError
from privgame.core.seeding import Role, stream
from privgame.games import live, pool
from privgame.games.closeness import similarity_of
from privgame.games.context import (
    CHUNK,
    build_audit,
    build_context,
    plan_summary,
    union_of_groups,
)
from privgame.games.estimate import time_left
from privgame.games.game import GAMES, MODEL_SEEDED, SHARED_ROLES, TRADITIONAL
from privgame.games.game import played as played_games
from privgame.games.inference import add_verdicts, inference_summary, record_inference
from privgame.games.work import (
    Context,
    chosen_attack,
    evaluate_target,
    extend_target,
    fit_ms_in_model,
    looks_of,
    shared_chunk,
)
from privgame.settings.executors import (
    Cancelled,
    batch_size,
    default_workers,
    describe_executor,
    resolve_workers,
    run_calls,
    until_cancelled,
)
from privgame.settings.run_spec import RunSpec
from privgame.settings.targets import outlier_scores
from privgame.store.folders import RunFolder

__all__ = [
    "CHUNK",
    "NOT_RUN",
    "Progress",
    "build_audit",
    "build_context",
    "execute",
    "extend",
    "finish_extension",
    "plan_summary",
    "record_results",
]


# The model-seeded game's shared 'in' datasets (the generator on D) and a target's scores in it.
_MS_IN = MODEL_SEEDED.array("in")
_MS_SCORES = MODEL_SEEDED.array("scores")
_ON_D = ("shadow_in", _MS_IN)
"""Shared roles whose datasets are the generator on D (one deterministic fit serves them all)."""
_MAX_CHUNK_BYTES = 64 * 2**20
_PROBE_SECONDS = 1.0


@dataclass(frozen=True)
class Progress:
    """Where a run stands.

    Attributes
    ----------
    phase : str
        ``"shared"``, ``"targets"``, ``"results"`` or ``"done"``.
    done, total : int
        Units finished and in all: shared chunks plus one per target, even when several targets
        are evaluated by one task (checkpointed units from an earlier attempt count as done).
    fits_done, fits_total : int
        Generator fits finished and in all, those finished by units still running included (see
        :mod:`privgame.games.live`); never fewer than the last report's.
    elapsed : float
        Seconds since this attempt started.
    eta : float or None
        Estimated seconds left (:func:`privgame.games.estimate.time_left`): the run's estimate
        until its units start, then the measured pace of its fits since they started, the
        estimate counting for the first few; None without an estimate until two fits are done.
    """

    phase: str
    done: int
    total: int
    fits_done: int
    fits_total: int
    elapsed: float
    eta: float | None

    @property
    def fraction(self) -> float:
        """Share of generator fits done, in [0, 1]."""
        return self.fits_done / self.fits_total if self.fits_total else 1.0


def execute(
    folder: RunFolder,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    estimate: float | None = None,
) -> RunFolder:
    """Run or resume the run in ``folder``.

    Parameters
    ----------
    folder : RunFolder
    workers : int, optional
        Local worker processes; every core by default (``-1``: every core, ``-2``: all but one).
    scheduler : str, optional
        A Dask scheduler address; when given, units run on that cluster.
    progress : callable, optional
        Called with a :class:`Progress` after every finished unit, and whenever
        :data:`privgame.games.live.HEARTBEAT_SECONDS` pass without one (then from a thread of its
        own, never two calls at once), so that the fits done and the time left keep moving.
    cancel : callable, optional
        Polled between units; returning True stops the run (state ``cancelled``; resumable).
    estimate : float, optional
        The run's estimated seconds (:func:`privgame.games.estimate.estimate_seconds`), kept in
        ``status.json``: the time left shown before the units start, and the pace the measured
        one starts from (see :func:`privgame.games.estimate.time_left`).

    Returns
    -------
    RunFolder
        The same folder, now holding the results (or the checkpoints so far, if cancelled).

    Raises
    ------
    RunError
        When another process is running the run (see :meth:`privgame.store.status.StatusFolder.claim`),
        or the run's files are damaged.
    """
    workers = resolve_workers(workers)
    # A finished run whose extension was cut short: resuming it means finishing that extension.
    if finish_extension(folder, workers=workers, scheduler=scheduler, progress=progress, cancel=cancel):
        return folder
    with _claim(folder):
        if estimate is not None:
            folder.write_status(estimate_seconds=float(estimate))
        return _execute(folder, workers=workers, scheduler=scheduler, progress=progress, cancel=cancel)


def finish_extension(
    folder: RunFolder,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[str, Any] | None:
    """Finish the extension of a finished run that was cut short (Ctrl-C, kill -9), if any.

    Returns
    -------
    dict or None
        What :func:`extend` returns, or None when no extension was pending.
    """
    pending = _interrupted_extension(folder)
    if pending is None:
        return None
    return extend(
        folder,
        int(pending["n_eval"]),
        record_ids=[int(r) for r in pending["record_ids"]],
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        cancel=cancel,
        ladder=False,  # its rung was chosen when it started
    )


def _interrupted_extension(folder: RunFolder) -> dict[str, Any] | None:
    """The extension a finished run was given and did not finish, or None.

    ``_extend_runs`` records its request (``status.json``'s ``extension``) before it starts and
    clears it when it ends; Ctrl-C leaves the run ``done`` with the request kept, kill -9 leaves it
    ``running`` with no engine holding the folder. Either way the results of before still stand,
    the runs added so far are checkpointed, and finishing the request gives the uninterrupted
    result. A run found in the second state is marked ``done`` again here.
    """
    status = folder.status()
    pending = status.get("extension")
    if not isinstance(pending, dict) or status.get("state") not in ("done", "running"):
        return None  # a failed extension is resumed like any failed run
    if not folder.has_results() or folder.is_running():
        return None
    if status.get("state") == "running":
        folder.write_status(state="done", phase="done", extension_interrupted=time.time())
    return pending


@dataclass
class _Units:
    """What a run's units are, once planned: the shared chunks and pool blocks to make, the
    targets still waiting, the model fitted on D, and the fits each unit makes."""

    sizes: dict[str, int]
    model: Any
    model_fits: int
    shared: list[tuple[str, int, int, int]]  # (role name, start, stop, fits)
    shared_done: list[bool]  # which of them are checkpointed already
    pool_plan: pool.PoolPlan | None
    catalogue: dict[str, pool.CatalogueEntry]
    pool_units: list[tuple[str, np.ndarray, int]]  # (checkpoint name, pairs, fits)
    waiting: list[int]
    attacks: dict[int, np.ndarray]  # a remedy's re-audit reuses its parent's (privgame.runs.remedy)
    half_shadow: int
    half_eval: int
    plays_traditional: bool

    def fits_of(self, record_id: int) -> int:
        """Generator fits of one target's unit."""
        shadow = 0 if record_id in self.attacks else self.half_shadow
        if not self.plays_traditional:
            return shadow + self.half_eval
        if self.pool_plan is None:
            return shadow + 3 * self.half_eval
        return shadow + self.half_eval + self.pool_plan.extra_fits(record_id)


class _Ledger:
    """The one progress writer of a run's steps: the units and fits done and to do, the time left,
    written to the status and told to ``progress`` after each unit and at least every
    ``live.HEARTBEAT_SECONDS`` (from the heartbeat's thread; one report at a time: the lock)."""

    def __init__(
        self,
        folder: RunFolder,
        progress: Callable[[Progress], None] | None,
        started: float,
        *,
        done_units: int,
        total_units: int,
        fits_done: int,
        fits_total: int,
        estimated: float | None = None,
    ) -> None:
        self.folder, self.progress, self.started = folder, progress, started
        self.done_units, self.total_units = done_units, total_units
        self.fits_done, self.fits_total = fits_done, fits_total
        self.fits_done_now = 0  # fits this call made
        self.shown = fits_done  # the fits last reported: never fewer
        self.current = "shared"
        self.estimated = estimated  # seconds the work left was estimated to take (None: no estimate)
        self.work_started: float | None = None
        self.work_estimate: float | None = None  # the estimate's seconds for the units, once they start
        self.beat = live.Heartbeat(lambda: self.report(self.current))

    def start_work(self) -> None:
        """The units start now (the workers are warm): the time left counts from here."""
        with self.beat.lock:
            self.work_started = time.time()
            spent = self.work_started - self.started
            if self.estimated is not None and self.estimated - spent > 0:
                self.work_estimate = self.estimated - spent

    def add(self, fits: int) -> None:
        """One unit of ``fits`` fits is done (call it holding :attr:`beat`'s lock)."""
        self.done_units += 1
        self.fits_done += fits
        self.fits_done_now += fits

    def report(self, phase: str) -> None:
        """Write the status and tell ``progress``."""
        with self.beat.lock:
            self.current = phase
            now = time.time()
            elapsed = now - self.started
            made = self.fits_done_now + self.beat.in_flight()
            self.shown = max(self.shown, min(self.fits_total, self.fits_done - self.fits_done_now + made))
            if self.work_started is None:
                eta = None if self.estimated is None else max(0.0, self.estimated - elapsed)
            else:
                eta = time_left(
                    elapsed=now - self.work_started,
                    done=made,
                    total=self.fits_total - (self.fits_done - self.fits_done_now),
                    estimate=self.work_estimate,
                )
            state = Progress(
                phase, self.done_units, self.total_units, self.shown, self.fits_total, elapsed, eta
            )
            self.folder.write_status(
                state="running" if phase != "done" else "done",
                phase=phase,
                done_units=self.done_units,
                total_units=self.total_units,
                fits_done=self.shown,
                fits_total=self.fits_total,
                eta=eta,
            )
            self.beat.touch()
            if self.progress is not None:
                self.progress(state)


def _execute(
    folder: RunFolder,
    *,
    workers: int,
    scheduler: str | None,
    progress: Callable[[Progress], None] | None,
    cancel: Callable[[], bool] | None,
) -> RunFolder:
    """:func:`execute` on a folder this process has claimed: the audit and its screen, the units'
    plan, the shared units, the targets and the results, one step each, with one progress writer."""
    spec = folder.spec()
    folder.clear_cancel()
    started = time.time()
    prepared = _prepare_audit(folder, spec, workers, scheduler, progress, cancel, started)
    if prepared is None:
        return folder  # cancelled during the screen
    ctx, groups, targets = prepared
    folder.write_status(
        state="running",
        pid=os.getpid(),
        started=started,
        error=None,
        n_targets=len(targets),
        target_ids=[int(t) for t in targets],
        audit_groups={name: [int(t) for t in ids] for name, ids in groups.items()},
        **describe_executor(workers, scheduler),
    )
    try:
        units = _plan_units(folder, ctx, spec, targets)
    except Exception as exc:
        _failed(folder, exc)
        raise
    waiting = set(units.waiting)
    ledger = _Ledger(
        folder,
        progress,
        started,
        # The model on D was fitted (or every chunk sampling it is checkpointed) when planned.
        done_units=len(units.catalogue)
        + sum(units.shared_done)
        + sum(int(r) not in waiting for r in targets),
        total_units=len(units.shared) + len(units.catalogue) + len(units.pool_units) + len(targets),
        fits_done=units.model_fits
        + sum(e.fits for e in units.catalogue.values())
        + sum(unit[3] for unit, done in zip(units.shared, units.shared_done, strict=True) if done)
        + sum(units.fits_of(int(r)) for r in targets if int(r) not in waiting),
        fits_total=units.model_fits
        + sum(u[3] for u in units.shared)
        + sum(e.fits for e in units.catalogue.values())
        + sum(u[2] for u in units.pool_units)
        + sum(units.fits_of(int(r)) for r in targets),
    )
    estimated = folder.status().get("estimate_seconds")
    if isinstance(estimated, (int, float)):  # a resumed run has only its share of the work left
        ledger.estimated = (
            float(estimated) * (ledger.fits_total - ledger.fits_done) / max(1, ledger.fits_total)
        )

    def cancelled() -> bool:
        return folder.cancel_requested() or (cancel is not None and cancel())

    try:
        # The heartbeat ends before the status says how the units ended (a beat would say "running").
        with ledger.beat:
            ledger.report("shared")
            _warm_workers(ctx, workers, scheduler)
            ledger.start_work()
            _run_shared_units(folder, ctx, units, ledger, workers, scheduler, cancelled)
            _run_targets(folder, ctx, units, ledger, workers, scheduler, cancelled)
    except Cancelled:
        folder.write_status(state="cancelled", finished=time.time())
        return folder
    except Exception as exc:
        _failed(folder, exc)
        raise
    return _write_results(folder, ctx, spec, targets, groups, units, ledger)


def _prepare_audit(
    folder: RunFolder,
    spec: RunSpec,
    workers: int,
    scheduler: str | None,
    progress: Callable[[Progress], None] | None,
    cancel: Callable[[], bool] | None,
    started: float,
) -> tuple[Context, dict[str, np.ndarray], np.ndarray] | None:
    """The audit's context, its groups of records and the records played (after the screen, when
    it is on, adds its top records); None when the screen was cancelled."""
    try:
        ctx, groups = build_audit(spec, folder.load_table())
    except Exception as exc:
        _failed(folder, exc, with_type=False)
        raise
    if spec.screen.on:
        try:
            groups = _screen_and_confirm(
                folder, ctx, spec, groups, workers, scheduler, progress, cancel, started
            )
        except Cancelled:
            folder.write_status(state="cancelled", finished=time.time())
            return None
        except Exception as exc:
            _failed(folder, exc)
            raise
    return ctx, groups, union_of_groups(groups)


def _plan_units(folder: RunFolder, ctx: Context, spec: RunSpec, targets: np.ndarray) -> _Units:
    """The run's units: the model on D (fitted now), the shared chunks, the pool's blocks (what is
    not checkpointed yet) and the targets still waiting."""
    half_shadow, half_eval = spec.attack.n_shadow // 2, spec.attack.n_eval // 2
    shadow_name = ctx.threat.shared_name
    deterministic = bool(getattr(ctx.new_generator(), "deterministic_fit", False))
    pool_plan: pool.PoolPlan | None = None
    catalogue: dict[str, pool.CatalogueEntry] = {}
    pool_units: list[tuple[str, np.ndarray, int]] = []
    waiting = [int(r) for r in targets if not folder.target_done(int(r))]
    sizes = _unit_plan(folder, ctx, len(targets))
    on_d = [(_MS_IN, start) for start in range(0, half_eval, sizes[_MS_IN])]
    if ctx.threat.shared_on_d:
        on_d += [(shadow_name, start) for start in range(0, half_shadow, sizes["shadow_out"])]
    model, model_fits, chunk_fits = _ms_in_model(ctx, deterministic, on_d, folder)
    if spec.attack.traditional == "pooled" and ctx.plays_traditional:
        pool_plan = pool.plan_pool(ctx, targets, spec.attack.n_eval)
        folder.write_status(pool=pool.describe_pool(pool_plan))
        catalogue = pool.pool_catalogue(folder)
        missing = pool.missing_pairs(pool_plan.pairs(waiting), catalogue)
        for block in _pool_blocks(folder, ctx, missing):
            pool_units.append((pool.unit_name(block), block, int(np.unique(block[:, 0]).size)))
    shared: list[tuple[str, int, int, int]] = []
    # The unit plan's "shadow_out" sizes the chunks of the shared shadow datasets, whichever
    # threat model's they are.
    for name, count, size in (
        (shadow_name, half_shadow, sizes["shadow_out"]),
        (_MS_IN, half_eval, sizes[_MS_IN]),
    ):
        for start in range(0, count, size):
            stop = min(start + size, count)
            shared.append((name, start, stop, chunk_fits(start, stop) if name in _ON_D else stop - start))
    return _Units(
        sizes=sizes,
        model=model,
        model_fits=model_fits,
        shared=shared,
        shared_done=[folder.shared_done(name, start) for name, start, _, _ in shared],
        pool_plan=pool_plan,
        catalogue=catalogue,
        pool_units=pool_units,
        waiting=waiting,
        attacks={r: a for r in waiting if (a := folder.load_attack(r)) is not None},
        half_shadow=half_shadow,
        half_eval=half_eval,
        plays_traditional=ctx.plays_traditional,
    )


def _run_shared_units(
    folder: RunFolder,
    ctx: Context,
    units: _Units,
    ledger: _Ledger,
    workers: int,
    scheduler: str | None,
    cancelled: Callable[[], bool],
) -> None:
    """Make the shared chunks and the pool's blocks not checkpointed yet, on the workers."""
    todo: list[tuple[Any, Callable[..., Any], tuple[Any, ...]]] = []
    for (name, start, stop, fits), done in zip(units.shared, units.shared_done, strict=True):
        if not done:
            args = (ctx, SHARED_ROLES[name], start, stop) + ((units.model,) if name in _ON_D else ())
            todo.append(((name, start, fits), shared_chunk, args))
    # Pool units need only the context too: they run alongside the shared units.
    todo += [(("pool", unit, fits), pool.pool_unit, (ctx, pairs)) for unit, pairs, fits in units.pool_units]
    shared_seconds = float(folder.status().get("shared_seconds") or 0.0)
    beat = ledger.beat
    with beat.counting(todo, [key[2] for key, _, _ in todo]) as tally:
        for key, result, seconds in until_cancelled(
            run_calls(tally.calls, workers=workers, scheduler=scheduler, shared=[ctx]), cancelled
        ):
            with beat.lock:
                name, start, fits = tally.finished(key)
                if name == "pool":
                    folder.save_pool(start, result)
                    units.catalogue[start] = pool.catalogue_entry(result)
                else:
                    folder.save_shared(name, start, result)
                    shared_seconds += seconds
                    folder.write_status(shared_seconds=shared_seconds)
                ledger.add(fits)
                ledger.report("shared")


def _run_targets(
    folder: RunFolder,
    ctx: Context,
    units: _Units,
    ledger: _Ledger,
    workers: int,
    scheduler: str | None,
    cancelled: Callable[[], bool],
) -> None:
    """Play both games on every waiting target, in waves of the pool's runs, on the workers."""
    shadow_out = folder.load_tables(ctx.threat.shared_name)[: units.half_shadow]
    # An extended run holds more model-seeded 'in' datasets than this spec plays.
    ms_in = folder.load_tables(_MS_IN)[: units.half_eval]
    per_unit = units.sizes["targets"]
    requests = dict.fromkeys(units.waiting, (0, units.half_eval))
    target_waves = (
        [units.waiting] if units.pool_plan is None else pool.waves(units.pool_plan, requests, units.catalogue)
    )
    ledger.report("targets")
    beat = ledger.beat
    for group in target_waves:
        runs: dict[int, pool.TraditionalRuns] = {}
        if units.pool_plan is not None:
            runs = pool.gather(folder, units.pool_plan, {r: requests[r] for r in group}, units.catalogue)
        calls = [
            (
                tuple(batch),
                _evaluate_targets,
                (
                    ctx,
                    tuple(batch),
                    shadow_out,
                    ms_in,
                    tuple(runs.get(r) for r in batch),
                    tuple(units.attacks.get(r) for r in batch),
                ),
            )
            for batch in (group[i : i + per_unit] for i in range(0, len(group), per_unit))
        ]
        with beat.counting(calls, [sum(units.fits_of(r) for r in key) for key, _, _ in calls]) as tally:
            for key, results, _ in until_cancelled(
                run_calls(tally.calls, workers=workers, scheduler=scheduler, shared=[ctx, shadow_out, ms_in]),
                cancelled,
            ):
                with beat.lock:
                    tally.finished(key)
                    for record_id, result in results:
                        folder.save_target(record_id, result)
                        ledger.add(units.fits_of(record_id))
                    ledger.report("targets")
        del runs


def _write_results(
    folder: RunFolder,
    ctx: Context,
    spec: RunSpec,
    targets: np.ndarray,
    groups: dict[str, np.ndarray],
    units: _Units,
    ledger: _Ledger,
) -> RunFolder:
    """Read every target's checkpoint into the run's results, then say it is done."""
    try:
        with ledger.beat:
            ledger.report("results")
            records, scores, summary = record_results(folder, ctx, targets, spec, groups=groups)
            folder.write_results(records, scores, summary)
        timings = np.sum([folder.load_target(int(t))["timings"] for t in targets], axis=0)
        pool_timings = np.sum([e.timings for e in units.catalogue.values()] or [np.zeros(3)], axis=0)
    except Exception as exc:  # e.g. a full disk while the results are written
        _failed(folder, exc)
        raise
    folder.write_status(
        state="done",
        phase="done",
        finished=time.time(),
        seconds=time.time() - ledger.started,
        # Fits this call made (not those checkpointed before it, nor a reused parent's).
        fits_made=ledger.fits_done_now + (units.model_fits if units.model is not None else 0),
        # Pool units' generator and feature seconds count with the targets' (they are their runs).
        unit_seconds={
            "generator": float(timings[0] + pool_timings[0]),
            "features": float(timings[1] + pool_timings[1]),
            "classifier": float(timings[2]),
            "targets_total": float(timings[3]),
            "pool_total": float(pool_timings[2]),
        },
    )
    if ledger.progress is not None:
        total = ledger.total_units
        ledger.progress(
            Progress(
                "done", total, total, ledger.fits_total, ledger.fits_total, time.time() - ledger.started, 0.0
            )
        )
    return folder


def _screen_and_confirm(
    folder: RunFolder,
    ctx: Context,
    spec: RunSpec,
    groups: dict[str, np.ndarray],
    workers: int,
    scheduler: str | None,
    progress: Callable[[Progress], None] | None,
    cancel: Callable[[], bool] | None,
    started: float,
) -> dict[str, np.ndarray]:
    """Screen every record of D (:mod:`privgame.games.screen_pass`), then add the top-screened
    records not already planned to the audit groups as ``screened``, for the exact game."""
    from privgame.games.screen import confirm_top
    from privgame.games.screen_pass import screen_pass

    folder.write_status(state="running", pid=os.getpid(), started=started, error=None, phase="screen")

    def report(phase: str, done: int, total: int, eta: float | None) -> None:
        folder.write_status(phase=phase, screen_done=done, screen_total=total, eta=eta)
        if progress is not None:
            progress(Progress(phase, done, total, done, total, time.time() - started, eta))

    screened = screen_pass(
        folder,
        ctx,
        spec,
        workers=workers,
        scheduler=scheduler,
        report=report,
        cancelled=lambda: folder.cancel_requested() or (cancel is not None and cancel()),
    )
    extra = confirm_top(screened, union_of_groups(groups), spec.screen.confirm_top)
    return {**groups, "screened": extra} if extra.size else dict(groups)


def undecided_records(folder: RunFolder, threshold: float | None = None) -> list[int]:
    """Record ids whose model-seeded verdict is *undecided* at ``threshold`` (the run's by default)."""
    records = folder.records()
    t = folder.spec().threshold if threshold is None else threshold
    verdict = metrics.verdicts(
        records["risk_model_seeded_low"].to_numpy(float), records["risk_model_seeded_high"].to_numpy(float), t
    )
    return [int(r) for r in records.loc[verdict == "undecided", "record_id"]]


def extend(
    folder: RunFolder,
    n_eval: int,
    *,
    record_ids: list[int] | None = None,
    threshold: float | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    ladder: bool = True,
) -> dict[str, Any]:
    """Add evaluation runs, in both games, to some records of a finished run, up to ``n_eval``.

    ``n_eval`` goes to the nearest rung of the doubling ladder from the records' runs
    (:func:`privgame.games.ladder.ladder_n_eval`: 200 -> 1,000 asked gives 800), so that a number
    chosen after seeing the verdicts keeps their error; each doubling counts one look.

    Every run already made is reused and nothing is trained twice: each target's meta-classifier
    is kept in its checkpoint, and runs are indexed, so run ``i`` of a game is the same whether it
    was played first or added later. Extending every record of a run from N to ``n_eval``
    therefore gives exactly the results of the run started at ``n_eval`` (byte for byte); the
    spec then records ``n_eval``. Extending only some records leaves the spec as it is, and
    ``records`` says how many runs each record has (``n_eval`` column).

    Parameters
    ----------
    folder : RunFolder
        A finished run.
    n_eval : int
        Evaluation runs per game wanted (even).
    record_ids : list of int, optional
        The records to extend; by default those *undecided* at ``threshold`` (see
        :func:`undecided_records`).
    threshold : float, optional
        For the default choice of records; the run's threshold by default.
    ladder : bool, default True
        False takes ``n_eval`` as it is: for the steps of ``run --resolve-to``, whose cap was
        declared with the run, before any verdict was seen.

    Returns
    -------
    dict
        ``n_eval`` (the rung), ``requested``, ``extended`` (record ids that got runs),
        ``undecided_before`` and ``undecided_after`` (at ``threshold``), ``resolved`` (records no
        longer undecided).

    Raises
    ------
    RunError
        When the run is not finished.
    ParameterError
        For an odd or too small ``n_eval``, a threshold t not strictly between 0.5 and 1, or
        records that were not audited.
    """
    from privgame.core.errors import ParameterError
    from privgame.core.parameters import check_threshold

    if threshold is not None:
        threshold = check_threshold(threshold)  # before anything is read or redone
    _interrupted_extension(folder)  # a run whose last extension was killed is done again
    folder.require_done()
    spec = folder.spec()
    t = spec.threshold if threshold is None else threshold
    if isinstance(n_eval, bool) or not isinstance(n_eval, int) or n_eval < 4 or n_eval % 2:
        raise ParameterError(f"--n-eval must be an even whole number of at least 4; got {n_eval!r}.")
    audited = [int(r) for r in folder.records()["record_id"]]
    before = undecided_records(folder, t)
    chosen = before if record_ids is None else [int(r) for r in record_ids]
    if unknown := sorted(set(chosen) - set(audited)):
        raise ParameterError(
            f"Records {unknown[:10]} were not audited in run {folder.run_id}; extend audited records only."
        )
    requested = n_eval
    if ladder and chosen:
        from privgame.games.ladder import ladder_n_eval

        n_eval = ladder_n_eval(min(len(folder.load_target(r)[_MS_SCORES]) for r in chosen), n_eval)
    todo = [r for r in chosen if len(folder.load_target(r)[_MS_SCORES]) < n_eval]
    result: dict[str, Any] = {
        "n_eval": n_eval,
        "requested": requested,
        "extended": todo,
        "undecided_before": before,
    }
    completed = True
    try:
        if todo:
            with _claim(folder):
                # Kept until the extension ends, so that an interrupted one can be finished.
                folder.write_status(extension={"n_eval": n_eval, "record_ids": chosen})
                try:
                    completed = _extend_runs(
                        folder, spec, n_eval, todo, resolve_workers(workers), scheduler, progress, cancel
                    )
                except KeyboardInterrupt:
                    # The results of before still stand: the run is done, its extension pending.
                    folder.write_status(state="done", phase="done", extension_interrupted=time.time())
                    raise
                folder.write_status(extension=None)
    finally:
        # The dashboard's request (privgame.runs.background.launch_extend) ends with this call.
        if folder.status().get("extending"):
            folder.write_status(extending=None)
    if not completed:
        result.update(undecided_after=before, resolved=[], cancelled=True)
        return result
    after = undecided_records(folder, t)
    result.update(undecided_after=after, resolved=sorted(set(before) - set(after)))
    passes = list(folder.status().get("extensions") or [])
    passes.append({k: result[k] for k in ("n_eval", "extended", "resolved")} | {"undecided": len(after)})
    folder.write_status(extensions=passes)
    return result


def _extend_runs(
    folder: RunFolder,
    spec: RunSpec,
    n_eval: int,
    todo: list[int],
    workers: int | None,
    scheduler: str | None,
    progress: Callable[[Progress], None] | None,
    cancel: Callable[[], bool] | None,
) -> bool:
    """Make the missing shared 'in' datasets, add runs to ``todo``, and write the results again.

    Returns False when cancelled (the run keeps its results of before), else True.
    """

    workers = workers or default_workers()
    folder.clear_cancel()
    started = time.time()
    wider = replace(spec, attack=replace(spec.attack, n_eval=n_eval))
    table = folder.load_table()
    ctx, groups = build_audit(wider, table)
    recorded = folder.status().get("audit_groups")
    if isinstance(recorded, dict):
        groups = {k: np.asarray(v, dtype=np.int64) for k, v in recorded.items()}
    targets = np.asarray(folder.records()["record_id"], dtype=np.int64)
    half = n_eval // 2
    made = len(folder.load_tables(_MS_IN))
    chunk = int((folder.unit_plan() or folder.status().get("unit_plan") or {}).get(_MS_IN) or CHUNK)
    deterministic = bool(getattr(ctx.new_generator(), "deterministic_fit", False))
    shared = [(start, min(start + chunk, half)) for start in range(made, half, chunk)]
    previous = {r: folder.load_target(r) for r in todo}
    done_runs = {r: len(previous[r][_MS_SCORES]) // 2 for r in todo}
    pooled = spec.attack.traditional == "pooled" and ctx.plays_traditional
    pool_plan = pool.plan_pool(ctx, todo, n_eval) if pooled else None

    def fits_of(record_id: int) -> int:
        """Generator fits of one target's new runs."""
        new_runs = half - done_runs[record_id]
        if not ctx.plays_traditional:
            return new_runs
        if pool_plan is None:
            return 3 * new_runs
        return new_runs + pool_plan.extra_fits(record_id, done_runs[record_id])

    catalogue: dict[str, pool.CatalogueEntry] = {}
    pool_units: list[tuple[str, np.ndarray, int]] = []
    if pool_plan is not None:
        catalogue = pool.pool_catalogue(folder)
        needed = np.concatenate(
            [pool_plan.pairs([r], done_runs[r]) for r in todo] or [np.empty((0, 2), dtype=np.int64)]
        )
        for block in _pool_blocks(folder, ctx, pool.missing_pairs(needed, catalogue)):
            pool_units.append((pool.unit_name(block), block, int(np.unique(block[:, 0]).size)))
    model, model_fits, chunk_fits = _ms_in_model(ctx, deterministic, [(_MS_IN, a) for a, _ in shared], folder)
    fits_total = (
        model_fits
        + sum(chunk_fits(a, b) for a, b in shared)
        + sum(u[2] for u in pool_units)
        + sum(fits_of(r) for r in todo)
    )
    ledger = _Ledger(
        folder,
        progress,
        started,
        done_units=0,
        total_units=len(shared) + len(pool_units) + len(todo),
        fits_done=model_fits,
        fits_total=fits_total,
    )
    beat, report = ledger.beat, ledger.report

    def cancelled() -> bool:
        return folder.cancel_requested() or (cancel is not None and cancel())

    folder.write_status(
        state="running", pid=os.getpid(), started=started, error=None, **describe_executor(workers, scheduler)
    )
    try:
        with beat:
            calls: list[tuple[Any, Callable[..., Any], tuple[Any, ...]]] = [
                ((_MS_IN, a, chunk_fits(a, b)), shared_chunk, (ctx, MODEL_SEEDED.in_role, a, b, model))
                for a, b in shared
                if not folder.shared_done(_MS_IN, a)
            ]
            calls += [
                (("pool", unit, fits), pool.pool_unit, (ctx, pairs)) for unit, pairs, fits in pool_units
            ]
            report("shared")
            _warm_workers(ctx, workers, scheduler)
            ledger.start_work()
            with beat.counting(calls, [key[2] for key, _, _ in calls]) as tally:
                for key, result, _ in until_cancelled(
                    run_calls(tally.calls, workers=workers, scheduler=scheduler, shared=[ctx]), cancelled
                ):
                    with beat.lock:
                        name, a, fits = tally.finished(key)
                        if name == "pool":
                            folder.save_pool(a, result)
                            catalogue[a] = pool.catalogue_entry(result)
                        else:
                            folder.save_shared(_MS_IN, a, result)
                        ledger.add(fits)
                        report("shared")
            ms_in = folder.load_tables(_MS_IN)[:half]
            requests = {r: (done_runs[r], half) for r in todo}
            target_waves = [todo] if pool_plan is None else pool.waves(pool_plan, requests, catalogue)
            report("targets")
            for group in target_waves:
                runs: dict[int, pool.TraditionalRuns] = {}
                if pool_plan is not None:
                    runs = pool.gather(folder, pool_plan, {r: requests[r] for r in group}, catalogue)
                calls = [
                    (r, extend_target, (ctx, r, previous[r], ms_in[done_runs[r] :], runs.get(r)))
                    for r in group
                ]
                with beat.counting(calls, [fits_of(r) for r in group]) as tally:
                    for key, extended, _ in until_cancelled(
                        run_calls(tally.calls, workers=workers, scheduler=scheduler, shared=[ctx, ms_in]),
                        cancelled,
                    ):
                        with beat.lock:
                            r = tally.finished(key)
                            folder.save_target(r, extended)
                            ledger.add(fits_of(r))
                            report("targets")
    except Cancelled:
        # The results of before the extension still stand; the runs added so far are kept in the
        # checkpoints and reused by the next extension.
        folder.write_status(state="done", phase="done", extension_cancelled=time.time())
        return False
    except Exception as exc:
        _failed(folder, exc)
        raise
    try:
        with beat:
            report("results")
            runs = {int(r): len(folder.load_target(int(r))[_MS_SCORES]) for r in targets}
            final = wider if all(n == n_eval for n in runs.values()) else spec
            if final is wider:
                folder.write_spec(wider)
            records, scores, summary = record_results(folder, ctx, targets, final, groups=groups)
            folder.write_results(records, scores, summary)
    except Exception as exc:  # e.g. a full disk while the results are written
        _failed(folder, exc)
        raise
    folder.write_status(state="done", phase="done", finished=time.time())
    return True


def _warm_workers(ctx: Context, workers: int, scheduler: str | None) -> None:
    """Compile the generator's kernels here before several local workers start (see warmup)."""
    if scheduler is None and workers > 1:
        from privgame.games.warmup import warm_up

        warm_up(ctx)


def _evaluate_targets(
    ctx: Context,
    record_ids: tuple[int, ...],
    shadow_out: np.ndarray,
    ms_in: np.ndarray,
    traditional: tuple[pool.TraditionalRuns | None, ...] | None = None,
    attacks: tuple[np.ndarray | None, ...] | None = None,
) -> list[tuple[int, dict[str, np.ndarray]]]:
    """One task: :func:`~privgame.games.work.evaluate_target` for each of a few targets."""
    runs = traditional or (None,) * len(record_ids)
    trained = attacks or (None,) * len(record_ids)
    return [
        (rid, evaluate_target(ctx, rid, shadow_out, ms_in, t, a))
        for rid, t, a in zip(record_ids, runs, trained, strict=True)
    ]


def _ms_in_model(
    ctx: Context, deterministic: bool, chunks: list[tuple[str, int]], folder: RunFolder
) -> tuple[Any, int, Callable[[int, int], int]]:
    """The model on D that the shared chunks ``(role name, start)`` trained on D sample (the
    model-seeded 'in' datasets, and the leave-one-out attacker's shared shadow 'in' datasets),
    and their fits.

    A deterministic fit on D is made once, here, when a chunk is still to be made: the single fit
    the plan counts (:func:`~privgame.games.plan.count_fits`); it is counted, without fitting,
    when every chunk is checkpointed. A model that cannot be sent to workers falls back to one
    fit per chunk, and a generator whose fit is not deterministic fits one model per dataset.

    Returns
    -------
    model : SyntheticGenerator or None
        Handed to every chunk (None: each chunk fits its own).
    model_fits : int
        Fits counted for ``model`` (0 or 1).
    chunk_fits : callable
        ``(start, stop) -> fits`` of one chunk.
    """
    if not deterministic or not chunks:
        return None, 0, lambda start, stop: stop - start
    if all(folder.shared_done(name, start) for name, start in chunks):
        return None, 1, lambda start, stop: 0
    model = fit_ms_in_model(ctx)
    if model is None:
        return None, 0, lambda start, stop: 1
    return model, 1, lambda start, stop: 0


def _pool_blocks(folder: RunFolder, ctx: Context, pairs: np.ndarray) -> list[np.ndarray]:
    """The pool units for ``pairs``, sized from the timed generator fit and one feature row."""
    if not len(pairs):
        return []
    recorded = folder.status().get("unit_plan") or {}
    fit = recorded.get("fit_seconds")
    sample = recorded.get("sample_seconds")
    if not isinstance(fit, (int, float)) or not isinstance(sample, (int, float)):
        fit, sample = _probe_generator(ctx)
    queries = ctx.featuriser()
    x = ctx.X[int(pairs[0, 1])]
    queries.features(ctx.X[ctx.target], x)  # a warm-up absorbs one-off costs
    t0 = time.perf_counter()
    queries.features(ctx.X[ctx.target], x)
    feature_seconds = time.perf_counter() - t0
    return pool.blocks(
        pairs,
        dataset_seconds=float(fit) + float(sample),
        pair_seconds=feature_seconds,
        row_bytes=4 * queries.n_features,
    )


def _unit_plan(folder: RunFolder, ctx: Context, n_targets: int) -> dict[str, int]:
    """How much work each task of the run gets: datasets per shared chunk, targets per task.

    Sized from the cost of one generator fit and sample on D, timed here, so that a task takes
    about :data:`~privgame.settings.executors.MIN_UNIT_SECONDS` (see
    :func:`~privgame.settings.executors.batch_size`).
    The plan is written once, before the first checkpoint, to the checksummed ``plan.json``, and
    read from there on resume: the shared checkpoints are named by chunk, so a resumed run must use
    the plan they were made with. A run started before ``plan.json`` existed has its plan in
    ``status.json`` (``unit_plan``), which is moved to ``plan.json``. Shared checkpoints without
    either cannot be matched to a plan, and checkpoints that do not start where the plan's chunks
    start were made with another plan: both are refused (a :class:`RunError` naming the fix),
    never mixed.

    Returns
    -------
    dict
        ``shadow_out`` and ``ms_in`` (datasets per shared chunk) and ``targets`` (targets per task).

    Raises
    ------
    RunError
        When ``plan.json`` is damaged, or the checkpoints do not fit the plan.
    """
    keys = ("shadow_out", _MS_IN, "targets")
    half = {"shadow_out": ctx.n_shadow // 2, _MS_IN: ctx.n_eval // 2}
    plan = folder.unit_plan()
    if plan is None:
        recorded = folder.status().get("unit_plan")
        if isinstance(recorded, dict) and all(
            isinstance(recorded.get(k), int) and recorded[k] >= 1 for k in keys
        ):
            plan = {k: int(recorded[k]) for k in keys}  # a run started before plan.json existed
        elif any((folder.path / "shared").glob("*.npz")):
            raise RunError(
                f"Run {folder.run_id} has checkpoints of shared datasets but no unit plan (plan.json), "
                "so they cannot be matched to their units; delete "
                f"{folder.path / 'shared'} and resume the run, which makes them again (the targets' "
                f"checkpoints are kept): python -m privgame resume {folder.path}"
            )
        else:
            plan = _new_unit_plan(folder, ctx, n_targets)
        plan = {**plan, **{f"{k}_count": v for k, v in half.items()}}
        folder.write_unit_plan(plan)
    for role, count in half.items():
        # Chunks past the count the plan was made for were added by `extend`, which sizes its own.
        made_for = min(count, int(plan.get(f"{role}_count") or count))
        expected = set(range(0, made_for, int(plan[role])))
        # The plan's "shadow_out" sizes the shared shadow chunks of either threat model.
        stored = ctx.threat.shared_name if role == "shadow_out" else role
        strays = [s for s in folder.shared_starts(stored) if s < made_for and s not in expected]
        if strays:
            raise RunError(
                f"The checkpoints of the shared datasets {role!r} of run {folder.run_id} do not fit its "
                f"unit plan (plan.json: {plan[role]} datasets per chunk; a chunk starts at dataset "
                f"{strays[0]}): they were made with another plan. Delete {folder.path / 'shared'} and "
                f"resume the run, which makes them again: python -m privgame resume {folder.path}"
            )
    return {k: int(plan[k]) for k in keys}


def _new_unit_plan(folder: RunFolder, ctx: Context, n_targets: int) -> dict[str, int]:
    """A unit plan sized from a timed fit and sample on D (recorded in ``status.json`` too)."""
    fit_seconds, sample_seconds = _probe_generator(ctx)
    one_fit = fit_seconds + sample_seconds
    deterministic = bool(getattr(ctx.new_generator(), "deterministic_fit", False))
    half_shadow, half_eval = ctx.n_shadow // 2, ctx.n_eval // 2
    max_datasets = max(1, _MAX_CHUNK_BYTES // max(1, ctx.n * ctx.X.shape[1] * 8))
    plan = {
        "shadow_out": batch_size(
            sample_seconds if deterministic and ctx.threat.shared_on_d else one_fit,
            half_shadow,
            max_items=max_datasets,
        ),
        _MS_IN: batch_size(sample_seconds if deterministic else one_fit, half_eval, max_items=max_datasets),
        # Counting only the generator fits underestimates a target (features and the classifier
        # come on top), so targets share a unit only in runs with many of them.
        "targets": batch_size((half_shadow + 3 * half_eval) * one_fit, n_targets, floor_seconds=0.0),
    }
    folder.write_status(unit_plan={**plan, "fit_seconds": fit_seconds, "sample_seconds": sample_seconds})
    return plan


def _probe_generator(ctx: Context) -> tuple[float, float]:
    """Seconds one fit on D and one sample of |D| rows take (the fastest of up to three tries).

    A warm-up fit on a few rows first absorbs one-off costs (imports, JIT compilation), which
    would otherwise make a fast generator look slow; a slow generator is timed only once.
    """
    rows = ctx.X[ctx.target]
    rng = stream(ctx.seed, 0, Role.GENERATOR)
    with contextlib.suppress(Exception):  # a generator may refuse so few rows; the fits below tell
        ctx.new_generator().fit(rows[:50], ctx.schema, rng=rng).sample(10, rng=rng)
    best_fit = best_sample = float("inf")
    spent = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        generator = ctx.new_generator().fit(rows, ctx.schema, rng=rng)
        t1 = time.perf_counter()
        generator.sample(ctx.n, rng=rng)
        t2 = time.perf_counter()
        best_fit, best_sample = min(best_fit, t1 - t0), min(best_sample, t2 - t1)
        spent += t2 - t0
        if spent >= _PROBE_SECONDS:
            break
    return best_fit, best_sample


@contextlib.contextmanager
def _claim(folder: RunFolder) -> Iterator[None]:
    """Hold ``folder`` for this process (one engine per folder); clear temporary files a killed
    engine left. The claim is a lock the kernel drops with its holder (see
    :meth:`privgame.store.status.StatusFolder.claim`), so a dead engine, or a PID reused after a reboot,
    never blocks a resume."""
    with folder.claim():
        for leftover in folder.path.rglob(".*.tmp"):
            with contextlib.suppress(OSError):
                leftover.unlink()
        yield


def _failed(folder: RunFolder, error: BaseException, *, with_type: bool = True) -> None:
    """Record that the run failed with ``error``, which the caller raises (a lost worker's then
    names the run folder to resume); a status that cannot be written (a full disk) does not hide
    ``error``."""
    if isinstance(error, WorkerLostError):
        error.name_run_folder(shlex.quote(str(folder.path)))
    message = f"{type(error).__name__}: {error}" if with_type else str(error)
    with contextlib.suppress(Exception):
        folder.write_status(state="failed", error=message, finished=time.time())


def _group_of(record_id: int, groups: dict[str, np.ndarray]) -> str:
    member = [
        name for name in ("outlier", "random", "chosen", "screened") if record_id in set(groups.get(name, ()))
    ]
    return "+".join(member) if member else "chosen"


def record_results(
    folder: RunFolder,
    ctx: Context,
    targets: np.ndarray,
    spec: RunSpec,
    *,
    groups: dict[str, np.ndarray] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Assemble per-record risks, every score, and the summary from the target checkpoints.

    ``difference`` is ``risk_model_seeded - risk_traditional``: positive when the traditional
    game underestimates the record's risk in this dataset. The bounds are logit DeLong
    intervals at the level of the record's look (:func:`privgame.core.metrics.look_level`: 95% spent
    over every look; ``looks`` counts them), widened by the attack's training noise
    (:func:`privgame.core.metrics.training_variance` of the half attacks' AUCs, pooled over the run's
    records when the results are first written and kept by later extensions, so that a record
    nobody looked at again keeps its interval; the summary's ``attack_training_variance``, on the
    logit scale, and ``attack_training_sd_at_t``, what it means for a risk at t), or by the
    record's own half attacks' gap where that is larger
    (:func:`privgame.core.metrics.record_training_variance`; the record's
    ``attack_training_variance``).
    ``attack_learning_gain`` is how much the attack gained (logit AUC) over its two half attacks,
    and ``attack_still_learning`` whether that is more than training noise
    (:func:`privgame.core.metrics.learning_gain`): the model-seeded interval's high end is then
    raised by the gain (:func:`~privgame.core.metrics.learning_bound`), so that an attack that had
    not finished learning calls no record "not at risk" on the strength of its shortfall.
    ``attack`` names the attack that scored the record's runs (the portfolio's choice on held-out
    shadow datasets, :mod:`privgame.attack.portfolio`; ``tapas`` alone otherwise), and
    ``attack_shadow_auc`` its held-out AUC on its own shadow datasets (out of bag for a forest).
    The record's own values are in the columns ``value:<name>`` (see :mod:`privgame.core.records`),
    apart from privgame's columns whatever the data's columns are named.
    ``audit_group`` says why a record was audited (see :data:`privgame.games.audit.GROUP_LABELS`);
    ``groups`` are the audit groups of :func:`build_audit` (every target counts as chosen when
    they are not given).
    """
    from privgame.core.records import value_column
    from privgame.games.audit import audit_summary, similarity_answer, training_sd_at

    groups = {"chosen": np.asarray(targets)} if groups is None else groups
    table = folder.load_table()
    rows: list[dict[str, Any]] = []
    score_frames = []
    target_positions = {int(r): i for i, r in enumerate(ctx.target)}
    outlier = outlier_scores(
        ctx.X[ctx.target], ctx.schema, positions=np.array([target_positions[int(t)] for t in targets])
    )
    games: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
    halves: list[tuple[float, float]] = []
    for position, record_id in enumerate(targets):
        rid = int(record_id)
        data = folder.load_target(rid)
        row: dict[str, Any] = {"record_id": rid, "audit_group": _group_of(rid, groups)}
        looks = looks_of(data)
        played: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        games.append(played)
        ms_labels = data[MODEL_SEEDED.array("labels")]
        half = data.get(MODEL_SEEDED.array("half_scores"))
        halves.append(
            (metrics.auc(half[0], ms_labels), metrics.auc(half[1], ms_labels))
            if half is not None and len(half[0]) == len(ms_labels)
            else (nan, nan)
        )
        # The record's own values, each under value:<name>, so no data column can replace a result.
        row.update({value_column(name): value for name, value in table.iloc[rid].to_dict().items()})
        for game in GAMES:
            scores, labels = data[game.array("scores")], data[game.array("labels")]
            if len(labels) == 0:  # the traditional game was not played (a remedy's re-audit)
                row.update({game.column(): nan, game.column("low"): nan, game.column("high"): nan})
                row.update({game.column("tpr_at_fpr_0.01"): nan, game.column("tpr_at_fpr_0.1"): nan})
                continue
            played[game.key] = (scores, labels)
            row[game.column()] = metrics.auc(scores, labels)
            row[game.column("tpr_at_fpr_0.01")] = metrics.tpr_at_fpr(scores, labels, 0.01)
            row[game.column("tpr_at_fpr_0.1")] = metrics.tpr_at_fpr(scores, labels, 0.1)
            n_runs = len(labels)
            score_frames.append(
                pd.DataFrame(
                    {
                        "record_id": np.full(n_runs, rid, dtype=np.int64),
                        "game": game.key,
                        "label": labels.astype(np.int8),
                        "index": np.arange(n_runs, dtype=np.int64),
                        "score": scores.astype(np.float64),
                    }
                )
            )
        row["n_eval"] = len(ms_labels)
        row["looks"] = looks
        row["attack"] = chosen_attack(data)
        row["attack_shadow_auc"] = float(data.get("shadow_auc", nan))
        row["difference"] = row[MODEL_SEEDED.column()] - row[TRADITIONAL.column()]
        row["outlier_score"] = float(outlier[position])
        if spec.inference.on and "inferred" in data:
            row.update(_record_inference(ctx, rid, data["inferred"], looks))
        rows.append(row)
    training = _training_variance(folder, halves)
    half_a_aucs, half_b_aucs = (np.array([pair[i] for pair in halves], dtype=np.float64) for i in (0, 1))
    # Each record's interval is widened by the larger of the run's pooled noise and its own; a
    # gain is learning when it beats the typical record's noise.
    own = metrics.record_training_variance(half_a_aucs, half_b_aucs, training)
    typical = metrics.training_variance(half_a_aucs, half_b_aucs, quantile=0.5)
    by_key = {game.key: game for game in GAMES}
    for row, played, (half_a, half_b), extra in zip(rows, games, halves, own, strict=True):
        level = metrics.look_level(int(row["looks"]))
        row["attack_training_variance"] = float(extra)
        for key, (scores, labels) in played.items():
            bounds = metrics.auc_ci(scores, labels, level=level, extra_variance=float(extra))
            row[by_key[key].column("low")], row[by_key[key].column("high")] = bounds
            if key == MODEL_SEEDED.key:  # what its verdict at another t, read as a set, needs
                variance, discordant = metrics.auc_variance(scores, labels)
                row[MODEL_SEEDED.column("variance")] = variance
                row[MODEL_SEEDED.column("discordant")] = discordant
        # "Not at risk" only from an attack that has stopped learning: where the attack beat its
        # halves by more than training noise, the high end is raised by that gain.
        gain, learning = metrics.learning_gain(row[MODEL_SEEDED.column()], half_a, half_b, typical)
        row["attack_learning_gain"] = gain
        row["attack_still_learning"] = learning
        if learning:
            high = MODEL_SEEDED.column("high")
            row[high] = metrics.learning_bound(row[high], gain)
    records = pd.DataFrame(rows)
    for game in GAMES:
        records[game.verdict_column] = metrics.verdicts(
            records[game.column("low")].to_numpy(float),
            records[game.column("high")].to_numpy(float),
            spec.threshold,
        )
        if game not in played_games(spec.attack.games):
            records[game.verdict_column] = NOT_RUN
    if spec.inference.on:
        add_verdicts(records, spec.inference.secrets, spec.inference.threshold)
    similarity = _similarity(folder, ctx, spec, targets)
    figures = similarity.get("records") or {}
    records["dcr"] = [figures.get(str(int(r)), [nan, nan])[0] for r in records["record_id"]]
    records["dcr_p_value"] = [figures.get(str(int(r)), [nan, nan])[1] for r in records["record_id"]]
    scores_df = pd.concat(score_frames, ignore_index=True)
    summary = metrics.summarize(
        records[MODEL_SEEDED.column()].to_numpy(float),
        records[TRADITIONAL.column()].to_numpy(float),
        threshold=spec.threshold,
        traditional=TRADITIONAL in played_games(spec.attack.games),
    )
    summary["hoeffding_half_width_rho_0.05"] = metrics.hoeffding_half_width(spec.attack.n_eval // 2, 0.05)
    summary["verdict_rule"] = metrics.VERDICT_RULE
    summary["attack_training_variance"] = training
    summary["attack_training_sd_at_t"] = training_sd_at(training, spec.threshold)
    summary["generator"] = spec.generator
    summary["generator_params"] = spec.to_dict()["generator_params"]
    summary["sizes"] = dict(spec.sizes)
    summary["n_shadow"] = spec.attack.n_shadow
    summary["n_eval"] = spec.attack.n_eval
    summary["games"] = spec.attack.games
    summary["attacker"] = spec.attack.attacker
    summary["generator_metadata"] = _generator_metadata(ctx)
    summary["queries"] = ctx.queries().describe()
    summary["twins"] = _twins(ctx, targets)
    summary["similarity"] = similarity_answer(records, similarity, spec, spec.threshold)
    if spec.inference.on:
        summary["inference"] = {
            **inference_summary(records, spec.inference.secrets, spec.inference.threshold),
            "aggregate": similarity.get("inference") or {},
        }
    screened = folder.screen() if folder.has_screen() else None
    summary.update(audit_summary(records, spec, spec.threshold, screened=screened))
    return records, scores_df, summary


def _record_inference(ctx: Context, record_id: int, inferred: np.ndarray, looks: int) -> dict[str, Any]:
    """A record's inference columns (:func:`privgame.games.inference.record_inference`)."""
    attacks = ctx.secret_attacks()
    truth = [int(a.classes(ctx.X[record_id : record_id + 1, a.secret])[0]) for a in attacks]
    names = ctx.inference_attacks
    if inferred.shape[-1] != len(names):  # stored by an earlier version with fewer attacks
        names = names[: inferred.shape[-1]]
    return record_inference(
        inferred, truth, secrets=ctx.secrets, attacks=attacks, schema=ctx.schema, looks=looks, names=names
    )


def _similarity(folder: RunFolder, ctx: Context, spec: RunSpec, targets: np.ndarray) -> dict[str, Any]:
    """The audited release's similarity checks (:mod:`privgame.games.closeness`), or, when the
    release cannot be sampled, why not: a side check never costs the audit its results."""
    try:
        return similarity_of(folder, ctx.X, ctx.schema, spec, ctx.target, np.asarray(targets))
    except Exception as exc:  # a side check: its reason is shown instead of its figures
        return {"table": None, "records": {}, "error": f"{type(exc).__name__}: {exc}"}


def _training_variance(folder: RunFolder, halves: list[tuple[float, float]]) -> float:
    """The attack's training variance: the one the run's results were first written with, else
    pooled from the half attacks' AUCs of every record (:func:`privgame.core.metrics.training_variance`)."""
    try:
        stored = folder.summary().get("attack_training_variance")
    except RunError:  # no results yet: this is their first writing
        stored = None
    if isinstance(stored, int | float) and math.isfinite(stored) and stored >= 0:
        return float(stored)
    a = np.array([pair[0] for pair in halves], dtype=np.float64)
    b = np.array([pair[1] for pair in halves], dtype=np.float64)
    return metrics.training_variance(a, b)


def _twins(ctx: Context, targets: np.ndarray) -> dict[str, Any]:
    """Records with an exact twin in D and in the population (see :mod:`privgame.data.duplicates`)."""
    from privgame.data.duplicates import count_twins, has_twin, row_keys

    keys = row_keys(ctx.X)
    population = np.union1d(ctx.aux, ctx.reference)
    audited = np.asarray(targets, dtype=np.int64)
    counts = count_twins(keys, ctx.target, population, audited)
    return {
        "in_d": counts.in_d,
        "in_population": counts.in_population,
        "audited_in_population": counts.audited_in_population,
        "audited_with_population_twin": [int(r) for r in audited[has_twin(keys, audited, population)]],
        "audited_with_twin_in_d": [int(r) for r in audited[has_twin(keys, audited, ctx.target)]],
        "sentence": counts.sentence(),
    }


def _generator_metadata(ctx: Context) -> dict[str, Any]:
    """The metadata of the generator fitted on D (e.g. whether a DP guarantee holds)."""
    from privgame.core.seeding import stream

    generator = ctx.new_generator().fit(
        ctx.X[ctx.target], ctx.schema, rng=stream(ctx.seed, 0, Role.GENERATOR)
    )
    return dict(generator.metadata)


def start_run(
    root: str | os.PathLike[str],
    spec: RunSpec,
    table: pd.DataFrame,
    **kwargs: Any,
) -> RunFolder:
    """Create a run folder for ``spec`` and execute it (see :func:`execute` for ``kwargs``)."""
    from privgame.games.preflight import create_run

    spec.validate()
    folder = create_run(root, spec, table)
    return execute(folder, **kwargs)
