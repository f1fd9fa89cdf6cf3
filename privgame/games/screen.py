"""The screen: a risk estimate, an interval and a verdict for every record of D, from shadow fits
that all records share.

The exact game (:mod:`privgame.games.work`) trains one attack per record on 2**d - 1 query
features: 13 CPU-seconds a record on Adult, 114 CPU-hours for all 31,655. The screen answers for
every record at the cost of a few hundred generator fits:

1. **Screening datasets.** Dataset ``k`` (``k < K``, ``K`` = ``ScreenSettings.shadows``) is D with
   a random share ``swap`` of its records swapped, in place, for reference records drawn from
   D_eval \\ D (the model-seeded game's 'out' records), the generator trained on it with its own
   stream ``stream(seed, 0, Role.SCREEN, k)``. A record is 'out' of the datasets it was swapped
   out of (about ``swap * K``) and 'in' the rest: the model-seeded game's two worlds, with the
   rest of D perturbed the same way in both.
2. **Statistics of every record at once.** Each synthetic table gives every record of D the seven
   counts of :mod:`privgame.attack.screening` (copies, cell, cells one column away, the nearest
   cell, rare values, pairs of cells, tails), plus the every-record statistics
   (:class:`~privgame.attack.base.RecordStatistics`) of each of the run's attacks that has them,
   such as the exact-values attack's counts of the record's exact values, one and two columns at a
   time (:func:`statistic_sets`).
3. **Every statistic calibrated on the record's own datasets.** Each statistic's AUC between
   the record's 'in' and 'out' datasets, with its logit DeLong interval, is a risk on the
   model-seeded risk's scale. The record's **screening risk** is its strongest statistic's, with
   an interval that holds for all of them together (:func:`screen_records`), and the same
   verdict rule (:func:`privgame.core.metrics.verdicts`).

The screening attack is not the exact game's: a few fixed counts, no trained classifier, and an
'out' world that swaps a share of D, not one record. Measured on Adult (REPRODUCTION.md, the
screen section) it is weaker than TAPAS on the most outlying records, whose signal TAPAS' 2**d
queries and forest find, and stronger on many ordinary ones: Synthpop draws continuous values from
its leaves' donors, so a record's own rare value (its ``fnlwgt``) comes back in the release only
when the record is in D; TAPAS' threshold queries cannot see that, the ``rare`` count does, and
where another record shares that value, the exact-values attack's ``values`` count of the record's
pairs of values does. Its *not at risk* holds only against its own statistics. So the exact game
confirms: the audit plan's records and the ``confirm_top`` top-screened records are played
exactly, the random sample checks
the screen (:func:`agreement`; a poor agreement turns every screened *not at risk* into
*undecided*), and the share of all of D at risk is the screen's corrected by the random sample
(:func:`privgame.core.metrics.screened_share`), valid however wrong the screen is.

Every dataset depends only on its index, so the screen is the same, byte for byte, whatever the
workers, their number or a resume.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privgame.attack import ATTACKS
from privgame.attack.base import RecordStatistics
from privgame.attack.screening import STATISTICS, ScreenCells
from privgame.core import metrics
from privgame.core.seeding import Role, stream
from privgame.games.work import d_key, synthesise

if TYPE_CHECKING:
    from privgame.games.work import Context
    from privgame.settings.run_spec import ScreenSettings

__all__ = [
    "SCREEN_COLUMNS",
    "agreement",
    "column_intervals",
    "confirm_top",
    "screen_chunk",
    "screen_records",
    "screen_rows",
    "screened_verdicts",
    "statistic_names",
    "statistic_sets",
    "statistic_words",
]

SHARED = 0

SCREEN_COLUMNS: tuple[str, ...] = (
    "record_id",
    "screen_risk",
    "screen_low",
    "screen_high",
    "screen_verdict",
    "screen_statistic",
    "screen_runs_in",
    "screen_runs_out",
    "outlier_score",
)
"""The columns of a run's ``screen.parquet``, one row per record of D (``outlier_score``: the
mean Gower distance to its 5 nearest records of D, :func:`privgame.settings.targets.outlier_scores`)."""

POOR_SPEARMAN = 0.5
"""Below this rank correlation between the screening and exact risks of the random sample (of at
least :data:`MIN_RANKED` records), the verdict sentence says that the two attacks rank the records
differently."""

MIN_RANKED = 10
"""Fewer random records than this say too little of a rank correlation to judge the screen by it
(a missed record still does)."""


def swapped_count(n: int, swap: float) -> int:
    """Records swapped out of each screening dataset: ``swap * n``, at least 1, at most ``n - 1``."""
    return int(min(max(1, round(swap * n)), max(1, n - 1)))


def screen_rows(ctx: Context, swap: float, index: int) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """The training rows of screening dataset ``index``, which positions of D were swapped out,
    and the stream the generator then trains and samples with.

    The reference records are drawn without replacement when D_eval \\ D holds enough of them.
    """
    rng = stream(ctx.seed, SHARED, Role.SCREEN, index)
    n = len(ctx.target)
    m = swapped_count(n, swap)
    positions = np.sort(rng.choice(n, size=m, replace=False))
    references = rng.choice(ctx.reference, size=m, replace=len(ctx.reference) < m)
    rows = np.array(ctx.target, copy=True)
    rows[positions] = references
    return rows, positions, rng


def statistic_sets(attacks: Sequence[str]) -> tuple[type[RecordStatistics], ...]:
    """The statistics the screen counts for a run with these attacks: its own cells
    (:class:`~privgame.attack.screening.ScreenCells`), then each attack's every-record statistics
    (:attr:`~privgame.attack.base.Attack.record_statistics`), in the attacks' order."""
    sets: list[type[RecordStatistics]] = [ScreenCells]
    for name in attacks:
        extra = ATTACKS[name].record_statistics if name in ATTACKS else None
        if extra is not None and extra not in sets:
            sets.append(extra)
    return tuple(sets)


def statistic_names(attacks: Sequence[str]) -> tuple[str, ...]:
    """The names of the screen's statistics for a run with these attacks, in the order of the
    rows of :func:`screen_chunk`'s ``stats``."""
    return tuple(name for kind in statistic_sets(attacks) for name in kind.names)


def statistic_words() -> dict[str, str]:
    """Every statistic the screen can use, in plain words (the screen's own and every registered
    attack's)."""
    words = dict(ScreenCells.words)
    for attack in ATTACKS.values():
        if attack.record_statistics is not None:
            words.update(attack.record_statistics.words)
    return words


def screen_chunk(ctx: Context, swap: float, start: int, stop: int) -> dict[str, np.ndarray]:
    """Screening datasets ``start .. stop - 1``: every record's statistics on each, and who was out.

    Returns
    -------
    dict of ndarray
        ``stats`` (stop - start, F, |D|) float32 (the F statistics of
        :func:`statistic_names`), D's records in D's order; ``out`` (stop - start, |D|) bool, True
        where the record was swapped out of that dataset; ``seconds`` (2,) in the generator and in
        the statistics.
    """
    counters = _counters(ctx)
    n = len(ctx.target)
    n_stats = sum(len(counter.names) for counter in counters)
    stats = np.empty((stop - start, n_stats, n), dtype=np.float32)
    out = np.zeros((stop - start, n), dtype=bool)
    clock = np.zeros(2)
    for k, index in enumerate(range(start, stop)):
        t0 = time.perf_counter()
        rows, positions, rng = screen_rows(ctx, swap, index)
        synthetic = synthesise(ctx, rows, rng)
        t1 = time.perf_counter()
        stats[k] = np.concatenate([counter.statistics(synthetic) for counter in counters])
        out[k, positions] = True
        clock += (t1 - t0, time.perf_counter() - t1)
    return {"stats": stats, "out": out, "seconds": clock}


_COUNTERS: dict[tuple[str, tuple[str, ...]], tuple[RecordStatistics, ...]] = {}


def _counters(ctx: Context) -> tuple[RecordStatistics, ...]:
    """The screen's statistics, prepared on D once per D and attacks in a process (keyed by a
    fingerprint of D's rows and schema, so another run's context never finds them)."""
    key = (d_key(ctx), tuple(ctx.attacks))
    if key not in _COUNTERS:
        _COUNTERS.clear()
        records = ctx.X[ctx.target]
        _COUNTERS[key] = tuple(
            kind.of(records, ctx.schema.is_categorical) for kind in statistic_sets(ctx.attacks)
        )
    return _COUNTERS[key]


def column_intervals(
    values: np.ndarray, is_in: np.ndarray, *, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The AUC and its interval (:func:`privgame.core.metrics.auc_ci`) of every column of
    ``values`` at once.

    Column ``i`` holds one record's statistic on each dataset and ``is_in[:, i]`` its membership;
    the result equals :func:`privgame.core.metrics.auc_ci` column by column (the tests check
    it), special cases included: ``(0.5, 0.5)`` when every value ties, the Wilson bound at an AUC
    of 0 or 1, ``nan`` with fewer than two 'in' or two 'out' datasets.

    Returns
    -------
    (auc, low, high) : ndarrays of shape (n,)
    """
    from scipy.stats import rankdata
    from scipy.stats import t as student

    values = np.asarray(values, dtype=np.float64)
    is_in = np.asarray(is_in, dtype=bool)
    n_in = is_in.sum(axis=0).astype(np.float64)
    n_out = is_in.shape[0] - n_in
    ranks = rankdata(values, axis=0, method="average")
    within_in = rankdata(np.where(is_in, values, np.nan), axis=0, method="average", nan_policy="omit")
    within_out = rankdata(np.where(is_in, np.nan, values), axis=0, method="average", nan_policy="omit")
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a class of one run: nan, as auc_ci
        auc = (np.where(is_in, ranks, 0.0).sum(axis=0) - n_in * (n_in + 1) / 2) / (n_in * n_out)
        # Placements: the share of the other class each run beats, ties counted 1/2.
        v10 = np.where(is_in, (ranks - within_in) / n_out, np.nan)
        v01 = np.where(is_in, np.nan, 1.0 - (ranks - within_out) / n_in)
        variance = np.maximum(
            0.0, np.nanvar(v10, axis=0, ddof=1) / n_in + np.nanvar(v01, axis=0, ddof=1) / n_out
        )
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    low = np.full(auc.shape, math.nan)
    high = np.full(auc.shape, math.nan)
    defined = (n_in >= 2) & (n_out >= 2)
    tied = defined & (variance == 0.0) & (auc == 0.5)
    low[tied] = high[tied] = 0.5
    edge = defined & ~tied & ((auc == 0.0) | (auc == 1.0))
    for i in np.flatnonzero(edge):
        low[i], high[i] = metrics.auc_ci(values[:, i], is_in[:, i].astype(np.int8), level=level)
    inner = defined & ~tied & ~edge
    a = auc[inner]
    spread = a * (1.0 - a)
    # auc_ci's guards, column by column: the discordant runs of the class with fewer give the
    # Student-t quantile, and below FEW_DISCORDANT (the high end: FEW_DISCORDANT_HIGH) the
    # interval spans the Wilson bound over min(n_in, n_out).
    above = a >= 0.5
    v10_in, v01_in = v10[:, inner], v01[:, inner]
    discordant = np.minimum(
        np.where(above, np.sum(v10_in < 1.0, axis=0), np.sum(v10_in > 0.0, axis=0)),
        np.where(above, np.sum(v01_in < 1.0, axis=0), np.sum(v01_in > 0.0, axis=0)),
    )
    quantile = student.ppf(NormalDist().cdf(z), np.maximum(discordant - 1, 1))
    half = quantile * np.sqrt(variance[inner] / (spread * spread))
    centre = np.log(a / (1.0 - a))
    low_in = 1.0 / (1.0 + np.exp(-(centre - half)))
    high_in = 1.0 / (1.0 + np.exp(-(centre + half)))
    trials = np.minimum(n_in, n_out)[inner]
    z2 = z * z
    middle = (a + z2 / (2 * trials)) / (1 + z2 / trials)
    width = z * np.sqrt(a * (1 - a) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    wilson_low, wilson_high = np.maximum(0.0, middle - width), np.minimum(1.0, middle + width)
    few = discordant < metrics.FEW_DISCORDANT
    low_in = np.where(few, np.minimum(low_in, wilson_low), low_in)
    high_in = np.where(discordant < metrics.FEW_DISCORDANT_HIGH, np.maximum(high_in, wilson_high), high_in)
    low[inner], high[inner] = low_in, high_in
    auc = np.where(defined, auc, math.nan)
    return auc, low, high


_RECORD_BLOCK = 2048

_BOUNDS = ("risk_model_seeded_low", "risk_model_seeded_high")


def screen_records(
    stats: np.ndarray,
    out: np.ndarray,
    record_ids: np.ndarray,
    threshold: float,
    *,
    names: Sequence[str] = STATISTICS,
) -> pd.DataFrame:
    """Every record's screening risk, interval and verdict from its statistics on the datasets.

    Each statistic's AUC and interval are measured on every dataset; the record's screening risk
    is the highest of its statistics' AUCs, and its interval runs from the highest low end to the
    highest high end of the statistics' intervals, each at the level that spends the first
    look's error (:func:`privgame.core.metrics.look_level`) equally over the statistics
    (Bonferroni). So *at risk* (some statistic's low end above t) is wrong with probability at
    most what one verdict's is, and *not at risk* (every statistic's high end at or below t) holds
    against every statistic at once. The point risk, a maximum of estimates, leans high: the
    screen errs towards risk.

    Parameters
    ----------
    stats : ndarray, shape (K, F, n)
        :func:`screen_chunk`'s statistics of every dataset, in index order.
    out : ndarray of bool, shape (K, n)
        Whether each record was swapped out of each dataset.
    record_ids : ndarray, shape (n,)
        D's record ids, in D's order.
    threshold : float
        The high-risk threshold t of the stored verdict (a report may read the interval at
        another).
    names : sequence of str
        The statistics' names (:func:`statistic_names`), one per row of ``stats``' second axis.

    Returns
    -------
    DataFrame
        :data:`SCREEN_COLUMNS`, one row per record, in D's order.
    """
    n_stats, n = stats.shape[1], stats.shape[2]
    if len(names) != n_stats:
        raise ValueError(f"{n_stats} statistics but {len(names)} names")
    is_in = ~np.asarray(out, dtype=bool)
    level = 1.0 - (1.0 - metrics.look_level(1)) / n_stats
    aucs, lows, highs = (np.empty((n_stats, n)) for _ in range(3))
    # Records in blocks: the ranks' temporaries stay a few MB whatever |D| (at 31,655 records and
    # 500 datasets, all at once they took about 1 GB per statistic).
    for start in range(0, n, _RECORD_BLOCK):
        block = slice(start, min(start + _RECORD_BLOCK, n))
        for f in range(n_stats):
            aucs[f, block], lows[f, block], highs[f, block] = column_intervals(
                stats[:, f, block], is_in[:, block], level=level
            )
    chosen = np.argmax(np.nan_to_num(aucs, nan=-1.0), axis=0)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a record with no 'out' dataset: all nan
        risk, low, high = np.nanmax(aucs, axis=0), np.nanmax(lows, axis=0), np.nanmax(highs, axis=0)
    runs_in = is_in.sum(axis=0)
    return pd.DataFrame(
        {
            "record_id": np.asarray(record_ids, dtype=np.int64),
            "screen_risk": risk,
            "screen_low": low,
            "screen_high": high,
            "screen_verdict": metrics.verdicts(low, high, threshold),
            "screen_statistic": np.asarray(names, dtype=object)[chosen],
            "screen_runs_in": runs_in.astype(np.int64),
            "screen_runs_out": (is_in.shape[0] - runs_in).astype(np.int64),
        }
    )


def screened_verdicts(screened: pd.DataFrame, threshold: float, *, trusted: bool = True) -> np.ndarray:
    """The screening verdicts at ``threshold``; with ``trusted`` False (the screen disagreed with the
    exact game, see :func:`agreement`) a screened *not at risk* reads *undecided*."""
    verdict = metrics.verdicts(
        screened["screen_low"].to_numpy(float), screened["screen_high"].to_numpy(float), threshold
    )
    if not trusted:
        verdict = np.where(verdict == "not at risk", "undecided", verdict)
    return verdict


def confirm_top(screened: pd.DataFrame, planned: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` records with the highest screening risk not already ``planned``, sorted by id.

    Ties go to the higher interval's low end, then the lower record id; records without a risk
    are never chosen.
    """
    if n <= 0 or screened.empty:
        return np.empty(0, dtype=np.int64)
    frame = screened.loc[~screened["record_id"].isin(np.asarray(planned, dtype=np.int64))]
    frame = frame.loc[frame["screen_risk"].notna()]
    order = np.lexsort(
        (
            frame["record_id"].to_numpy(np.int64),
            -np.nan_to_num(frame["screen_low"].to_numpy(float), nan=-1.0),
            -frame["screen_risk"].to_numpy(float),
        )
    )
    return np.sort(frame["record_id"].to_numpy(np.int64)[order[:n]])


def agreement(
    screened: pd.DataFrame, exact: pd.DataFrame, threshold: float, exact_verdicts: np.ndarray
) -> dict[str, Any]:
    """How the screen and the exact game agree on the records both judged (the random sample).

    Parameters
    ----------
    screened : DataFrame
        :func:`screen_records`' table.
    exact : DataFrame
        The exact game's records to compare with (``record_id``, ``risk_model_seeded``): the
        uniform random sample, the only unbiased check.
    threshold : float
    exact_verdicts : ndarray of str
        The exact game's verdicts of ``exact``'s rows at ``threshold``.

    Returns
    -------
    dict
        ``records`` (compared), ``spearman`` (rank correlation of the risks; None below 3
        records or without variation), ``confusion`` ({exact verdict: {screened verdict:
        count}}), ``disagree`` (records whose verdicts differ: id, both risks and verdicts),
        ``missed`` (records at risk in the exact game that the screen called *not at risk*),
        ``trusted`` (False when a record was missed: the screen's *not at risk* then does not
        stand), ``reason`` (why not, in words; "" when trusted), ``spearman_ceiling`` (about the
        highest rank correlation the exact risks' own estimation noise allows, the square root
        of their :func:`~privgame.core.metrics.reliability`; None when ``exact`` has no
        intervals or too few records), ``note`` (the rank correlation below
        :data:`POOR_SPEARMAN`, in words; "" otherwise). A weak rank correlation alone does
        not void the screen: the two attacks differ, and where the screen finds more than the
        exact game (a record's copied value, which TAPAS' queries do not see) its verdicts only
        err towards risk; what voids its *not at risk* is a record it missed.
    """
    from scipy.stats import spearmanr

    merged = exact[["record_id", "risk_model_seeded"]].merge(screened, on="record_id", how="inner")
    keep = merged["record_id"].isin(exact["record_id"]).to_numpy()
    order = {int(r): v for r, v in zip(exact["record_id"], exact_verdicts, strict=True)}
    merged = merged.loc[keep].reset_index(drop=True)
    ex = np.array([order[int(r)] for r in merged["record_id"]], dtype=object)
    sc = screened_verdicts(merged, threshold)
    risks = merged[["risk_model_seeded", "screen_risk"]].apply(pd.to_numeric, errors="coerce")
    valid = risks.notna().all(axis=1).to_numpy()
    rho: float | None = None
    if valid.sum() >= 3 and risks.loc[valid].nunique().min() > 1:
        value = float(spearmanr(risks.loc[valid, "risk_model_seeded"], risks.loc[valid, "screen_risk"])[0])
        rho = value if math.isfinite(value) else None
    confusion = {
        e: {s: int(np.count_nonzero((ex == e) & (sc == s))) for s in metrics.VERDICTS}
        for e in metrics.VERDICTS
    }
    differ = np.flatnonzero(ex != sc)
    disagree = [
        {
            "record_id": int(merged.loc[i, "record_id"]),
            "risk_model_seeded": _number(merged.loc[i, "risk_model_seeded"]),
            "verdict_model_seeded": str(ex[i]),
            "screen_risk": _number(merged.loc[i, "screen_risk"]),
            "screen_verdict": str(sc[i]),
        }
        for i in differ
    ]
    missed = [
        row["record_id"]
        for row in disagree
        if row["verdict_model_seeded"] == "at risk" and row["screen_verdict"] == "not at risk"
    ]
    reason = (
        f"{len(missed):,} record(s) of the random sample at risk in the exact game were screened not at risk"
        if missed
        else ""
    )
    ceiling = None
    if set(_BOUNDS) <= set(exact.columns):
        share = metrics.reliability(
            *(pd.to_numeric(exact[c], errors="coerce") for c in ("risk_model_seeded", *_BOUNDS))
        )
        ceiling = None if share is None else math.sqrt(share)
    note = ""
    if rho is not None and rho < POOR_SPEARMAN and valid.sum() >= MIN_RANKED:
        note = (
            "the screening and exact risks of the random sample rank alike only weakly: the two "
            "attacks find different records"
        )
        if ceiling is not None and ceiling < 1.0:
            note += (
                f", and the exact risks' own estimation noise alone would hold the rank correlation "
                f"to about {ceiling:.2f} (more evaluation runs, extend --n-eval, raise it)"
            )
    return {
        "records": len(merged),
        "spearman": rho,
        "spearman_ceiling": ceiling,
        "confusion": confusion,
        "disagree": disagree,
        "missed": missed,
        "trusted": not missed,
        "reason": reason,
        "note": note,
    }


def _number(value: Any) -> float | None:
    number = pd.to_numeric(value, errors="coerce")
    return float(number) if pd.notna(number) else None


def settings_text(settings: ScreenSettings) -> str:
    """The screen's set-up in one sentence."""
    return (
        f"on {settings.shadows:,} datasets, each D with "
        f"{settings.swap:.0%} of its records swapped for reference records"
    )


def summarise_screen(
    screened: pd.DataFrame,
    sample: pd.DataFrame,
    sample_verdicts: np.ndarray,
    threshold: float,
    *,
    level: float = 0.95,
) -> dict[str, Any]:
    """What the screen says of every record, how far the exact game bears it out, and the share
    of all of D at risk from both.

    Parameters
    ----------
    screened : DataFrame
        :func:`screen_records`' table (every record of D).
    sample : DataFrame
        The exact game's records of the uniform random sample (``record_id``,
        ``risk_model_seeded``); may be empty.
    sample_verdicts : ndarray of str
        Their exact verdicts at ``threshold``.
    threshold : float

    Returns
    -------
    dict
        ``records`` (screened), ``counts`` ({verdict: records}, after :func:`screened_verdicts`
        with the agreement's ``trusted``), ``agreement`` (:func:`agreement`, None without a
        sample), ``share`` ({``estimate``, ``low``, ``high``, ``sampled``, ``method``}; None
        without a sample), ``text`` (the sentence).
    """
    check = agreement(screened, sample, threshold, sample_verdicts) if len(sample) else None
    trusted = True if check is None else bool(check["trusted"])
    verdict = screened_verdicts(screened, threshold, trusted=trusted)
    counts = {v: int(np.count_nonzero(verdict == v)) for v in metrics.VERDICTS}
    share = None
    if check is not None and check["records"]:
        by_id = dict(zip(screened["record_id"].astype(int), verdict, strict=True))
        in_sample = [int(r) for r in sample["record_id"]]
        sample_screened = np.array([by_id.get(r, "undecided") for r in in_sample], dtype=object)
        exact = np.asarray(sample_verdicts, dtype=object)
        # A sampled record's verdict is the strongest attack's: at risk when either attack puts it
        # at risk, shown safe only when both do (so the union of the two tests' errors on the low end).
        at_risk = (exact == "at risk") | (sample_screened == "at risk")
        not_safe = (exact != "not at risk") | (sample_screened != "not at risk")
        estimate, low, high = metrics.screened_share(
            verdict == "at risk",
            verdict != "not at risk",
            at_risk,
            not_safe,
            sample_screened == "at risk",
            sample_screened != "not at risk",
            level=level,
            low_error=2 * metrics.VERDICT_ERROR,
        )
        share = {
            "estimate": estimate,
            "low": low,
            "high": high,
            "sampled": len(in_sample),
            "level": level,
            "method": "screen corrected by the random sample (prediction-powered)",
        }
    n = len(screened)
    text = (
        f"Screened, every one of the {n:,} records of D: {counts['at risk']:,} at risk, "
        f"{counts['undecided']:,} undecided, {counts['not at risk']:,} not at risk"
        + (
            f", {counts['attack failed']:,} where the screening attack failed"
            if counts["attack failed"]
            else ""
        )
        + f" (t = {threshold:g})."
    )
    if check is not None:
        agree = check["records"] - len(check["disagree"])
        rho = "n/a" if check["spearman"] is None else f"{check['spearman']:.2f}"
        text += (
            f" On the {check['records']:,} random records the exact game played, the screen's verdict "
            f"agrees on {agree:,} (Spearman {rho})."
        )
        if check.get("note"):
            text += f" Read the two apart: {check['note']}."
        if not trusted:
            text += (
                f" The agreement is poor ({check['reason']}), so no screened 'not at risk' stands: "
                "those records read undecided."
            )
    else:
        text += " No random record was played exactly, so nothing checks the screen: read it with care."
    return {"records": n, "counts": counts, "agreement": check, "share": share, "text": text}
