"""The run engine: plan -> units -> executor -> run store.

``execute(folder)`` runs (or resumes) the run held in a run folder:

1. shared units make the shadow 'out' datasets and the model-seeded 'in' datasets in chunks;
2. one unit per target record trains its attack and plays both games;
3. the results are assembled into ``records``, ``scores`` and ``summary``.

Every finished unit is checkpointed in the folder, so an interrupted run resumes where it stopped
and ends with the same results. Progress (units, generator fits, ETA) goes to a callback and to
``status.json``; a cancel (callback or ``cancel`` file) stops the run after the units in flight.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privgame import metrics
from privgame.data.encoding import encode
from privgame.data.schema import Schema
from privgame.data.splits import Sizes, check_sizes, split_indices
from privgame.errors import RunError
from privgame.execution import default_workers, describe_executor, run_calls
from privgame.games.plan import count_fits
from privgame.games.work import Context, evaluate_target, shared_chunk
from privgame.seeding import Role
from privgame.spec import RunSpec
from privgame.store import RunFolder
from privgame.targets import outlier_scores, select_targets

__all__ = ["CHUNK", "Progress", "build_context", "execute", "plan_summary", "record_results"]

CHUNK = 16
_SHARED_ROLES = {"shadow_out": Role.SHADOW_OUT, "ms_in": Role.MS_IN}


@dataclass(frozen=True)
class Progress:
    """Where a run stands.

    Attributes
    ----------
    phase : str
        ``"shared"``, ``"targets"``, ``"results"`` or ``"done"``.
    done, total : int
        Units finished and in all (checkpointed units from an earlier attempt count as done).
    fits_done, fits_total : int
        Generator fits finished and in all; the ETA is based on fits per second.
    elapsed : float
        Seconds since this attempt started.
    eta : float or None
        Estimated seconds left, once a unit has finished in this attempt.
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


class _Cancelled(Exception):
    pass


def build_context(spec: RunSpec, table: pd.DataFrame) -> tuple[Context, np.ndarray]:
    """The worker context and the sorted record ids of the targets, from a spec and its table."""
    schema = Schema.from_dict(spec.schema)
    X = encode(table, schema)
    sizes = Sizes(**spec.sizes)
    check_sizes(len(table), sizes)
    split = split_indices(len(table), sizes, spec.seed)
    ctx = Context(
        X=X,
        schema=schema,
        aux=split.aux,
        eval_pool=split.eval,
        target=split.target,
        reference=split.reference,
        generator=spec.generator,
        generator_params=dict(spec.generator_params),
        n_shadow=spec.attack.n_shadow,
        n_eval=spec.attack.n_eval,
        classifier=spec.attack.classifier,
        max_exact_columns=spec.attack.max_exact_columns,
        seed=spec.seed,
    )
    targets = select_targets(spec.targets, split.target, X, schema, seed=spec.seed)
    return ctx, targets


def plan_summary(spec: RunSpec, n_targets: int) -> dict[str, Any]:
    """The cost of a plan: generator fits, shared and per target."""
    from privgame.generators import GENERATORS

    deterministic = bool(getattr(GENERATORS[spec.generator], "deterministic_fit", False))
    fits = count_fits(n_targets, spec.attack.n_shadow, spec.attack.n_eval, deterministic_fit=deterministic)
    return {
        "total_fits": fits.total_fits,
        "shared_fits": fits.shared_fits,
        "fits_per_target": fits.fits_per_target,
        "n_targets": n_targets,
        "text": fits.describe(),
    }


def execute(
    folder: RunFolder,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RunFolder:
    """Run or resume the run in ``folder``.

    Parameters
    ----------
    folder : RunFolder
    workers : int, optional
        Local worker processes; every core by default.
    scheduler : str, optional
        A Dask scheduler address; when given, units run on that cluster.
    progress : callable, optional
        Called with a :class:`Progress` after every finished unit.
    cancel : callable, optional
        Polled between units; returning True stops the run (state ``cancelled``; resumable).

    Returns
    -------
    RunFolder
        The same folder, now holding the results (or the checkpoints so far, if cancelled).
    """
    workers = workers or default_workers()
    spec = folder.spec()
    folder.clear_cancel()
    started = time.time()
    try:
        ctx, targets = build_context(spec, folder.load_table())
    except Exception as exc:
        folder.write_status(state="failed", error=str(exc))
        raise
    half_shadow, half_eval = spec.attack.n_shadow // 2, spec.attack.n_eval // 2
    deterministic = bool(getattr(ctx.new_generator(), "deterministic_fit", False))

    shared_units: list[tuple[str, int, int, int]] = []  # (role name, start, stop, fits)
    for name, count in (("shadow_out", half_shadow), ("ms_in", half_eval)):
        for start in range(0, count, CHUNK):
            stop = min(start + CHUNK, count)
            fits = 1 if (name == "ms_in" and deterministic) else stop - start
            shared_units.append((name, start, stop, fits))
    fits_per_target = half_shadow + 3 * half_eval
    total_units = len(shared_units) + len(targets)
    fits_total = sum(u[3] for u in shared_units) + fits_per_target * len(targets)
    done_units = 0
    fits_done = 0
    fits_done_now = 0

    def report(phase: str) -> None:
        elapsed = time.time() - started
        eta = None
        if fits_done_now > 0:
            eta = elapsed / fits_done_now * (fits_total - fits_done)
        state = Progress(phase, done_units, total_units, fits_done, fits_total, elapsed, eta)
        folder.write_status(
            state="running" if phase != "done" else "done",
            phase=phase,
            done_units=done_units,
            total_units=total_units,
            fits_done=fits_done,
            fits_total=fits_total,
            eta=eta,
        )
        if progress is not None:
            progress(state)

    def cancelled() -> bool:
        return folder.cancel_requested() or (cancel is not None and cancel())

    folder.write_status(
        state="running",
        pid=os.getpid(),
        started=started,
        error=None,
        n_targets=len(targets),
        target_ids=[int(t) for t in targets],
        **describe_executor(workers, scheduler),
    )
    try:
        todo = []
        for name, start, stop, fits in shared_units:
            if folder.shared_done(name, start):
                done_units += 1
                fits_done += fits
            else:
                todo.append(((name, start, fits), shared_chunk, (ctx, _SHARED_ROLES[name], start, stop)))
        report("shared")
        shared_seconds = float(folder.status().get("shared_seconds") or 0.0)
        for (name, start, fits), datasets, seconds in _consume(
            run_calls(todo, workers=workers, scheduler=scheduler), cancelled
        ):
            folder.save_shared(name, start, datasets)
            shared_seconds += seconds
            folder.write_status(shared_seconds=shared_seconds)
            done_units += 1
            fits_done += fits
            fits_done_now += fits
            report("shared")

        shadow_out = folder.load_shared("shadow_out")
        ms_in = folder.load_shared("ms_in")
        todo = []
        for record_id in targets:
            if folder.target_done(int(record_id)):
                done_units += 1
                fits_done += fits_per_target
            else:
                todo.append((int(record_id), evaluate_target, (ctx, int(record_id), shadow_out, ms_in)))
        report("targets")
        for record_id, result, _ in _consume(
            run_calls(todo, workers=workers, scheduler=scheduler), cancelled
        ):
            folder.save_target(record_id, result)
            done_units += 1
            fits_done += fits_per_target
            fits_done_now += fits_per_target
            report("targets")
        del shadow_out, ms_in
    except _Cancelled:
        folder.write_status(state="cancelled", finished=time.time())
        return folder
    except Exception as exc:
        folder.write_status(state="failed", error=f"{type(exc).__name__}: {exc}", finished=time.time())
        raise

    report("results")
    records, scores, summary = record_results(folder, ctx, targets, spec)
    folder.write_results(records, scores, summary)
    timings = np.sum([folder.load_target(int(t))["timings"] for t in targets], axis=0)
    folder.write_status(
        state="done",
        phase="done",
        finished=time.time(),
        seconds=time.time() - started,
        unit_seconds={
            "generator": float(timings[0]),
            "features": float(timings[1]),
            "classifier": float(timings[2]),
            "targets_total": float(timings[3]),
        },
    )
    if progress is not None:
        progress(
            Progress("done", total_units, total_units, fits_total, fits_total, time.time() - started, 0.0)
        )
    return folder


def _consume(results, cancelled: Callable[[], bool]):  # type: ignore[no-untyped-def]
    """Yield results until a cancel is requested, then close the executor's iterator."""
    try:
        for item in results:
            yield item
            if cancelled():
                raise _Cancelled
    finally:
        results.close()


RISK_COLUMNS = (
    "risk_model_seeded",
    "risk_model_seeded_low",
    "risk_model_seeded_high",
    "risk_traditional",
    "risk_traditional_low",
    "risk_traditional_high",
    "difference",
)


def record_results(
    folder: RunFolder, ctx: Context, targets: np.ndarray, spec: RunSpec
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Assemble per-record risks, every score, and the summary from the target checkpoints.

    ``difference`` is ``risk_model_seeded - risk_traditional``: positive when the traditional
    game underestimates the record's risk in this dataset. The bounds are 95% DeLong intervals.
    """
    table = folder.load_table()
    rows: list[dict[str, Any]] = []
    score_frames = []
    target_positions = {int(r): i for i, r in enumerate(ctx.target)}
    outlier = outlier_scores(ctx.X[ctx.target], ctx.schema)
    for record_id in targets:
        rid = int(record_id)
        data = folder.load_target(rid)
        row: dict[str, Any] = {"record_id": rid}
        row.update(table.iloc[rid].to_dict())
        for game, prefix in (("ms", "risk_model_seeded"), ("t", "risk_traditional")):
            scores, labels = data[f"{game}_scores"], data[f"{game}_labels"]
            low, high = metrics.auc_ci(scores, labels)
            row[prefix] = metrics.auc(scores, labels)
            row[f"{prefix}_low"] = low
            row[f"{prefix}_high"] = high
            row[f"{prefix}_tpr_at_fpr_0.01"] = metrics.tpr_at_fpr(scores, labels, 0.01)
            row[f"{prefix}_tpr_at_fpr_0.1"] = metrics.tpr_at_fpr(scores, labels, 0.1)
            n_runs = len(labels)
            score_frames.append(
                pd.DataFrame(
                    {
                        "record_id": np.full(n_runs, rid, dtype=np.int64),
                        "game": "model_seeded" if game == "ms" else "traditional",
                        "label": labels.astype(np.int8),
                        "index": np.arange(n_runs, dtype=np.int64),
                        "score": scores.astype(np.float64),
                    }
                )
            )
        row["difference"] = row["risk_model_seeded"] - row["risk_traditional"]
        row["outlier_score"] = float(outlier[target_positions[rid]])
        rows.append(row)
    records = pd.DataFrame(rows)
    scores_df = pd.concat(score_frames, ignore_index=True)
    summary = metrics.summarize(
        records["risk_model_seeded"].to_numpy(float),
        records["risk_traditional"].to_numpy(float),
        threshold=spec.threshold,
    )
    summary["hoeffding_half_width_rho_0.05"] = metrics.hoeffding_half_width(spec.attack.n_eval // 2, 0.05)
    summary["generator"] = spec.generator
    summary["generator_params"] = spec.to_dict()["generator_params"]
    summary["sizes"] = dict(spec.sizes)
    summary["n_shadow"] = spec.attack.n_shadow
    summary["n_eval"] = spec.attack.n_eval
    summary["generator_metadata"] = _generator_metadata(ctx)
    summary["queries"] = ctx.queries().describe()
    return records, scores_df, summary


def _generator_metadata(ctx: Context) -> dict[str, Any]:
    """The metadata of the generator fitted on D (e.g. whether a DP guarantee holds)."""
    from privgame.seeding import stream

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
    from privgame.store import create_run

    spec.validate()
    folder = create_run(root, spec, table)
    return execute(folder, **kwargs)


def require_done(folder: RunFolder) -> None:
    """Raise a clear error unless the run finished."""
    state = folder.status().get("state")
    if state != "done" or not folder.has_results():
        raise RunError(
            f"Run {folder.run_id} is {state}; results exist only once it is done "
            f"(resume it with: python -m privgame resume {folder.path})."
        )
