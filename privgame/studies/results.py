"""A study's table and the numbers behind its figure, from its finished jobs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from privgame.core import metrics
from privgame.games.game import GAME_KEYS, GAMES, TRADITIONAL, played
from privgame.store.folders import RunFolder, write_checked
from privgame.studies.folder import StudyFolder, StudyResult
from privgame.studies.jobs import Job, plan_jobs
from privgame.studies.spec import StudySpec

__all__ = ["FigureRenderer", "estimation_noise", "study_results", "write_outputs"]

# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def _risk_row(records: pd.DataFrame, threshold: float, *, played: bool = True) -> dict[str, Any]:
    ms = records["risk_model_seeded"].to_numpy(np.float64)
    tr = records["risk_traditional"].to_numpy(np.float64)
    # A study against the leave-one-out attacker plays the model-seeded game alone (``played``
    # False): the traditional figures and the comparison are then not run.
    summary = metrics.summarize(ms, tr, threshold=threshold, traditional=played)
    keep = ~(np.isnan(ms) | np.isnan(tr)) if played else ~np.isnan(ms)

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
        "above_t_model_seeded": summary["above_t_model_seeded"],
        "above_t_traditional": summary["above_t_traditional"],
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
        A run's scores (:meth:`privgame.store.folders.RunFolder.scores`).

    Returns
    -------
    dict
        ``noise_model_seeded``, ``noise_traditional`` (standard deviations, AUC units) and
        ``rmsd_noise``; nan when no record has both classes in both halves.
    """
    out: dict[str, float] = {}
    for game in GAME_KEYS:
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
      ``above_t_model_seeded``, ``above_t_traditional``, ``records_excluded``, ``rmsd_noise``
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
            risks = _risk_row(records, t, played=TRADITIONAL in played(spec.base.attack.games))
            rows.append({column: value, **risks, **_noise_row(runs[job.key], records)})
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
    "above_t_model_seeded",
    "above_t_traditional",
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
            for game in GAMES:
                scores, labels = data[game.array("scores")], data[game.array("labels")]
                for n in spec.n_evals:
                    blocks = _block_aucs(scores, labels, n)
                    points.append(
                        {
                            "n_eval": n,
                            "record_id": int(record_id),
                            "repeat": job.index,
                            "game": game.key,
                            "risk": blocks[0],
                        }
                    )
                    if len(blocks) > 1:
                        within.setdefault((n, game.key), []).append(float(np.std(blocks, ddof=1)))
    point_frame = pd.DataFrame(points, columns=["n_eval", "record_id", "repeat", "game", "risk"])
    rows = []
    for n in sorted(spec.n_evals):
        row: dict[str, Any] = {"n_eval": n, "repeats": len(done), "records": len(spec.target_ids)}
        part = point_frame.loc[point_frame["n_eval"] == n]
        for key in GAME_KEYS:
            mine = part.loc[part["game"] == key]
            sds = mine.groupby("record_id")["risk"].std(ddof=1).tolist() if len(done) > 1 else []
            row[f"sd_{key}"], row[f"max_sd_{key}"] = _mean_max(sds)
            row[f"sd_same_attack_{key}"], _ = _mean_max(within.get((n, key), []))
            row[f"mean_{key}"] = float(mine["risk"].mean()) if len(mine) else math.nan
        row["hoeffding_half_width"] = metrics.hoeffding_half_width(n // 2, spec.rho)
        rows.append(row)
    columns = ["n_eval", "repeats", "records"]
    for game in GAME_KEYS:
        columns += [f"sd_{game}", f"max_sd_{game}", f"sd_same_attack_{game}", f"mean_{game}"]
    table = pd.DataFrame(rows, columns=[*columns, "hoeffding_half_width"])
    return StudyResult(table, point_frame, len(done), n_jobs)


FigureRenderer = Callable[[StudySpec, StudyResult], str]
"""Makes a study's ``figure.html`` page from its settings and results (e.g.
:func:`privgame.outputs.study_figures.figure_html`)."""


def write_outputs(folder: StudyFolder, figure: FigureRenderer | None = None) -> StudyResult:
    """Write ``table.csv`` and ``points.csv`` from the finished jobs, and ``figure.html`` when asked.

    Parameters
    ----------
    folder : StudyFolder
        The study.
    figure : callable, optional
        Renders the figure page; without it no ``figure.html`` is written (the studies do not
        depend on a plotting library: the caller, above them, brings one).

    Returns
    -------
    StudyResult
        What was written.
    """
    from privgame.core.csvsafe import csv_safe

    result = study_results(folder)
    table = csv_safe(result.table).to_csv(index=False, lineterminator="\n").encode()
    write_checked(folder.path, "table.csv", table)
    points = csv_safe(result.points).to_csv(index=False, lineterminator="\n").encode()
    write_checked(folder.path, "points.csv", points)
    if figure is not None:
        write_checked(folder.path, "figure.html", figure(folder.spec(), result).encode())
    return result
