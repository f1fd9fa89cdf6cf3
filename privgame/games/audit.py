"""What a run audited, in words, and the share of all of D at risk.

Pure functions of a run's spec and its per-record results, shared by the engine (the stored
summary), ``python -m privgame report``, the HTML report, the release card and the pages, so
that all of them say the same thing.

"At risk" has one meaning everywhere: the record's verdict (:func:`privgame.core.metrics.verdicts`),
whose interval lies above t. The share of all of D at risk is a bracket built from the verdicts
of the uniform random sample of D (audit group ``random``): its low end from the records at risk,
its high end from every record not shown safe (:func:`privgame.core.metrics.share_bracket`). The most
outlying records are chosen for being unusual, so they never enter it. A leave-out remedy that
kept its parent's random sample reads it with :func:`privgame.core.metrics.kept_sample_share`: a
conservative bracket, since that sample is no longer uniform over the new D.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privgame.core import metrics
from privgame.core.defaults import NOT_RUN
from privgame.core.errors import RunError
from privgame.core.parameters import check_threshold
from privgame.games.game import GAMES, MODEL_SEEDED, TRADITIONAL, Game, played
from privgame.settings.run_spec import RunSpec

if TYPE_CHECKING:
    from privgame.store.folders import RunFolder

__all__ = [
    "GROUP_LABELS",
    "NOT_RUN",
    "answer",
    "attack_counts",
    "attacker_text",
    "attacks_text",
    "audit_summary",
    "describe_setup",
    "group_masks",
    "kept_sample",
    "miss_rate_caveat",
    "not_played_reason",
    "record_similarity_text",
    "records_at",
    "run_summary",
    "screen_verdicts",
    "share_at_risk",
    "share_text",
    "similarity_answer",
    "threshold_guide",
    "traditional_text",
    "training_sd_at",
]

GROUP_LABELS: dict[str, str] = {
    "outlier": "most outlying",
    "random": "random sample (share estimate)",
    "outlier+random": "most outlying, and in the random sample",
    "chosen": "chosen by you",
    "screened": "top of the screen, confirmed by the exact game",
}
"""Plain words for the values of the ``audit_group`` column of ``records``."""


def _n(value: int) -> str:
    return f"{value:,}"


def describe_setup(spec: RunSpec, *, planned: bool = False) -> list[str]:
    """What the run audited (``planned``: will audit, before it starts), in sentences for the
    pages, ``report`` and the release card.

    Says where D and the population come from, how the attacker's shadow datasets are drawn
    (and that a population smaller than D gives a weaker attacker), what a small reference
    pool means for the traditional game, and whether every record is screened.
    """
    lines = [*_setup_lines(spec, planned=planned), attacks_text(spec)]
    if spec.screen.on:
        from privgame.games.screen import settings_text

        verb = "will be" if planned else "was"
        lines.append(
            f"Every record of D {verb} screened ({settings_text(spec.screen)}); the exact game "
            f"confirms the {spec.screen.confirm_top:,} top-screened records beside the records chosen, and "
            "its random records check the screen."
        )
    return lines


def _setup_lines(spec: RunSpec, *, planned: bool) -> list[str]:
    """:func:`describe_setup` without the screen."""
    sizes, setup = spec.sizes, spec.setup
    n_d, aux, eval_ = sizes["target"], sizes["aux"], sizes["eval"]
    reference = eval_ - n_d
    if setup.kind != "release":
        return [
            f"Paper set-up (for research): D is {_n(n_d)} rows drawn at random from an evaluation pool "
            f"of {_n(eval_)} rows, and the attacker knows {_n(aux)} other rows (D_aux). It audits a "
            "random dataset of that size, not the release you will publish; use the release set-up "
            "for that.",
            traditional_text(spec, planned=planned),
        ]
    from privgame.games import threat

    if threat.create(spec.attack.attacker).knows_d:
        where = (
            f"A second table{f' ({setup.population_name})' if setup.population_name else ''} of "
            f"{_n(setup.population_rows)} rows plays the population"
            if setup.population == "table"
            else f"{_n(setup.population_rows)} rows are held back to play the population; they are not "
            "released"
        )
        trained = "all " if setup.population == "table" else "these "
        return [
            f"The release is trained on {trained}{_n(n_d)} rows. {where}. {_n(reference)} of its rows "
            "are the reference records that take an audited record's place in D.",
            attacker_text(spec),
            traditional_text(spec, planned=planned),
        ]
    if setup.population == "table":
        name = f" ({setup.population_name})" if setup.population_name else ""
        lines = [
            f"The release is trained on all {_n(n_d)} rows of the table. A second table{name} of "
            f"{_n(setup.population_rows)} rows plays the population: the attacker knows {_n(aux)} of "
            f"its rows (D_aux) and the other {_n(reference)} are the reference records."
        ]
    else:
        lines = [
            f"The release is trained on these {_n(n_d)} rows. {_n(setup.population_rows)} rows are "
            f"held back to play the population; they are not released. The attacker knows {_n(aux)} "
            f"of them (D_aux) and the other {_n(reference)} are the reference records."
        ]
    lines.append(attacker_text(spec))
    shadow_rows = n_d if setup.shadow_size is None else setup.shadow_size
    how = "with replacement" if setup.shadow_replace else "without replacement"
    lines.append(
        f"Each of the attacker's shadow datasets has {_n(shadow_rows)} rows drawn from D_aux {how}"
        + (" (|D| rows, as in the paper)." if setup.shadow_size is None else " (--shadow-size).")
    )
    if aux < n_d:
        lines.append(
            f"D_aux ({_n(aux)} rows) is smaller than D ({_n(n_d)} rows), so this attacker is weaker "
            "than the paper's, whose population dwarfs D: the risks found are likely lower than an "
            "attacker with more data would reach. The leave-one-out attacker (--attacker "
            "leave-one-out), who knows every other record of D, is the worst case a release should be "
            "judged against."
        )
    if reference < n_d and TRADITIONAL in played(spec.attack.games):
        overlap = n_d / eval_
        lines.append(
            f"The traditional game draws its datasets of {_n(n_d)} rows from D plus the "
            f"{_n(reference)} reference records ({_n(eval_)} rows), so about {overlap:.0%} of each "
            "of its datasets is D itself. Its datasets differ little from D, and the gap between "
            "the two games is narrower than in the paper's set-up, where D is a small part of the pool."
        )
    lines.append(traditional_text(spec, planned=planned))
    return lines


def attacks_text(spec: RunSpec) -> str:
    """Which attacks a record's risk comes from, and what "not at risk" then means, in sentences."""
    from privgame.settings.attacks import attack_words

    words = attack_words()
    names = spec.attack.attacks
    shadows = f"{spec.attack.n_shadow:,} shadow datasets"
    if tuple(names) == ("tapas",):
        tried = f"Each record is attacked with {words['tapas'][0]} (the paper's attack), trained on {shadows}"
    else:
        listed = ", ".join(words[name][0] for name in names if name in words)
        tried = (
            f"Each record is attacked with {len(names)} attacks ({listed}), each trained on the same "
            f"{shadows}; its risk is that of the one that told the attacker's own held-out shadow "
            "datasets apart best"
        )
    return (
        f"{tried}. 'Not at risk' is a lower bound: these attacks, with this much training, failed to "
        "find the record; a stronger attack might not."
    )


def attack_counts(records: pd.DataFrame) -> dict[str, int]:
    """How many records each attack scored (the ``attack`` column; ``tapas`` for runs without it)."""
    if "attack" not in records:
        return {"tapas": len(records)} if len(records) else {}
    counts = records["attack"].fillna("tapas").value_counts()
    return {str(name): int(count) for name, count in counts.items()}


def attacker_text(spec: RunSpec) -> str:
    """Who the attack plays (the run's threat model, :mod:`privgame.games.threat`), in one sentence."""
    from privgame.games.threat import create

    return create(spec.attack.attacker).in_setup


def not_played_reason(attacker: str) -> str:
    """Why a run against ``attacker`` that played the model-seeded game alone did not play the
    traditional game: the attacker cannot, or the run is a re-audit that chose not to."""
    from privgame.games.threat import create

    return create(attacker).no_traditional or "this re-audit played the model-seeded game alone"


def traditional_text(spec: RunSpec, *, planned: bool = False) -> str:
    """How the run played the traditional game (pooled, per target, or not at all), in one sentence;
    with ``planned``, how it will play it (before the run starts)."""
    was, drew, was_not = ("will be", "will draw", "will not be") if planned else ("was", "drew", "was not")
    if TRADITIONAL not in played(spec.attack.games):
        return f"The traditional game {was_not} played: {not_played_reason(spec.attack.attacker)}."
    if spec.attack.traditional == "pooled":
        return (
            f"The traditional game {was} pooled: one seeded sequence of datasets drawn from the "
            "evaluation pool serves every audited record, and each record's game is exactly the one it "
            "would play alone (only different records' estimates become correlated)."
        )
    return f"The traditional game {drew} datasets of its own for each audited record."


def group_masks(records: pd.DataFrame, spec: RunSpec) -> dict[str, np.ndarray]:
    """Boolean masks over ``records`` for the outlier group and the random sample.

    Runs written before audit groups existed have no ``audit_group`` column; their groups follow
    from the target selection (``random`` and ``all`` are random samples of D).
    """
    n = len(records)
    if "audit_group" in records.columns:
        group = records["audit_group"].astype(str).to_numpy()
        masks = {
            "outlier": np.isin(group, ("outlier", "outlier+random")),
            "random": np.isin(group, ("random", "outlier+random")),
        }
        if (group == "screened").any():
            masks["screened"] = group == "screened"
        return masks
    mode = spec.targets.mode
    return {
        "outlier": np.full(n, mode == "outliers"),
        "random": np.full(n, mode in ("random", "all")),
    }


def _verdicts(records: pd.DataFrame, threshold: float, game: Game = MODEL_SEEDED) -> np.ndarray:
    """The verdict of every record in ``game`` at ``threshold``, read from its stored interval."""
    return metrics.verdicts(
        pd.to_numeric(records[game.column("low")], errors="coerce").to_numpy(float),
        pd.to_numeric(records[game.column("high")], errors="coerce").to_numpy(float),
        threshold,
    )


def share_at_risk(
    records: pd.DataFrame,
    spec: RunSpec,
    threshold: float,
    *,
    level: float = 0.95,
    screened: pd.DataFrame | None = None,
) -> dict[str, Any] | None:
    """The share of all of D at risk, bracketed by the random sample's verdicts.

    The low end rests on the sampled records *at risk*, the high end on those not shown safe
    (*at risk*, *undecided* or *attack failed*), each with its one-sided Clopper-Pearson bound
    corrected for the verdicts' own errors (:func:`privgame.core.metrics.share_bracket`), so the share
    means what a verdict means. A leave-out remedy that kept its parent's sample reads it with
    :func:`privgame.core.metrics.kept_sample_share` the same way.

    Returns
    -------
    dict or None
        ``None`` when the run has no random sample. Otherwise ``records_in_d`` (|D|),
        ``sampled`` (sampled records with a defined risk), ``at_risk``, ``undecided`` and
        ``attack_failed`` (verdicts among them), ``low`` and ``high`` (the bracket), ``census``
        (every record of D audited), ``level``, ``method``, ``threshold``, ``text``. With
        ``screened`` (the run screened every record, :mod:`privgame.games.screen`) the bracket is
        the screen's share corrected by the sample (:func:`privgame.core.metrics.screened_share`),
        ``method`` "screen", with ``screened_at_risk`` and ``screened_not_safe`` too.
    """
    sample = _random_sample(records, spec)
    if sample.empty:
        return None
    verdict = _verdicts(sample, threshold)
    at_risk = int(np.count_nonzero(verdict == "at risk"))
    undecided = int(np.count_nonzero(verdict == "undecided"))
    failed = int(np.count_nonzero(verdict == "attack failed"))
    not_safe = at_risk + undecided + failed
    m = len(sample)
    n_d = int(spec.sizes["target"])
    census = spec.targets.mode == "all" or m >= n_d
    kept = kept_sample(spec)
    method = "census" if census else "Clopper-Pearson"
    extra: dict[str, Any] = {}
    if kept is not None and not census:
        counts = {
            "records_in_d": int(kept["records_in_d"]),
            "sampled": int(kept["sampled"]),
            "removable": int(kept["removable"]),
            "left_out": int(kept["left_out"]),
            "kept": m,
            "level": level,
            "verdict_error": metrics.VERDICT_ERROR,
        }
        _, low, _ = metrics.kept_sample_share(**counts, kept_at_risk=at_risk)
        _, _, high = metrics.kept_sample_share(**counts, kept_at_risk=not_safe)
        method = "kept sample"
        unsampled = int(kept["removable"]) / int(kept["sampled"]) * int(kept["records_in_d"]) - int(
            kept["left_out"]
        )
        extra["unsampled_removable"] = max(0, round(unsampled))
    elif screened is not None and not census:
        screen = _screen_summary(records, spec, screened, threshold, level=level)
        low, high = screen["share"]["low"], screen["share"]["high"]
        method = "screen"
        extra["screened_at_risk"] = screen["counts"]["at risk"]
        extra["screened_not_safe"] = screen["records"] - screen["counts"]["not at risk"]
        n_d = screen["records"]
    else:
        low, high = metrics.share_bracket(at_risk, not_safe, m, level=level)
    out = {
        "records_in_d": n_d,
        "sampled": m,
        "at_risk": at_risk,
        "undecided": undecided,
        "attack_failed": failed,
        "low": low,
        "high": high,
        "census": census,
        "level": level,
        "method": method,
        "threshold": threshold,
        **extra,
    }
    out["text"] = share_text(out)
    return out


def _random_sample(records: pd.DataFrame, spec: RunSpec) -> pd.DataFrame:
    """The records of the uniform random sample whose risk is defined (the share's sample)."""
    sample = records.loc[group_masks(records, spec)["random"]]
    return sample.loc[pd.to_numeric(sample["risk_model_seeded"], errors="coerce").notna()]


def _screen_summary(
    records: pd.DataFrame, spec: RunSpec, screened: pd.DataFrame, threshold: float, *, level: float = 0.95
) -> dict[str, Any]:
    """:func:`privgame.games.screen.summarise_screen` of a run, checked on its random sample."""
    from privgame.games.screen import summarise_screen

    sample = _random_sample(records, spec)
    return summarise_screen(screened, sample, _verdicts(sample, threshold), threshold, level=level)


def screen_verdicts(
    records: pd.DataFrame, spec: RunSpec, screened: pd.DataFrame, threshold: float
) -> np.ndarray:
    """Every screened record's verdict at ``threshold``, read with the run's agreement rule: when the
    screen missed a random record the exact game puts at risk, no screened *not at risk* stands
    (:func:`privgame.games.screen.summarise_screen`). In ``screened``'s order."""
    from privgame.games.screen import screened_verdicts

    summary = _screen_summary(records, spec, screened, threshold)
    trusted = summary["agreement"] is None or bool(summary["agreement"]["trusted"])
    return screened_verdicts(screened, threshold, trusted=trusted)


def kept_sample(spec: RunSpec) -> dict[str, Any] | None:
    """What a leave-out remedy that kept its parent's random sample recorded of that sample, or
    ``None`` for a run whose random sample was drawn (see :func:`privgame.core.metrics.kept_sample_share`).
    """
    kept = (spec.parent or {}).get("kept_sample")
    if not kept or not spec.targets.sample_ids:
        return None
    return dict(kept)


def _pct(value: float) -> str:
    pct = 100 * value
    if pct == 0 or pct >= 10 or math.isclose(pct, round(pct)):
        return f"{pct:.0f}%"
    return f"{pct:.1f}%"


def share_text(share: Mapping[str, Any]) -> str:
    """One sentence, e.g. "between 2% and 31% of the 31,655 records are at risk (95%) ..."."""
    n_d = _n(int(share["records_in_d"]))
    t = f"t = {share['threshold']:g}"
    bracket = f"between {_pct(share['low'])} and {_pct(share['high'])} of the {n_d} records are at risk"
    found = f"{share['at_risk']:,} at risk, {share['undecided']:,} undecided"
    if share.get("attack_failed"):
        found += f", {share['attack_failed']:,} where the attack failed"
    if share["census"]:
        return (
            f"{bracket.capitalize()} (95%): every record was audited, and {found} of {share['sampled']:,} "
            f"({t}; the bracket allows for the verdicts' own errors)."
        )
    if share.get("method") == "screen":
        return (
            f"{bracket.capitalize()} (95%): every record was screened "
            f"({share['screened_at_risk']:,} at risk, {share['screened_not_safe']:,} not shown safe), "
            f"corrected by the exact verdicts of {share['sampled']:,} records of a uniform random sample "
            f"({found}; {t})."
        )
    if share.get("method") == "kept sample":
        return (
            f"{bracket.capitalize()} (95%): of the {share['sampled']:,} records kept from the parent run's "
            f"random sample, {found}; the parent's estimated {share['unsampled_removable']:,} records that "
            f"the remedy would have left out but the audit never sampled count as still at risk ({t})."
        )
    return (
        f"{bracket.capitalize()} (95%): of {share['sampled']:,} records of a uniform random sample, "
        f"{found} ({t}; the low end counts the records at risk, the high end every record not shown "
        "safe)."
    )


def _share_clause(share: Mapping[str, Any]) -> str:
    """The share as a clause of the verdict sentence."""
    return (
        f"between {_pct(share['low'])} and {_pct(share['high'])} of all {share['records_in_d']:,} "
        "records are at risk (95%)"
    )


def _knows(spec: RunSpec) -> str:
    """The run's attacker in plain words, to follow "against"."""
    from privgame.games.threat import describe

    return describe(spec.attack.attacker)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def answer(
    records: pd.DataFrame, spec: RunSpec, threshold: float, *, screened: pd.DataFrame | None = None
) -> dict[str, Any]:
    """One answer for the release: the verdict counts, the share, the traditional game.

    Each record's verdict (:func:`privgame.core.metrics.verdicts`) reads its model-seeded risk's
    interval at the level of its look: *at risk* when the interval lies above t, *not at risk*
    when at or below t, *attack failed* when at or below 0.5 (never counted as safe), *undecided*
    otherwise. The share (:func:`share_at_risk`) is bracketed by the same verdicts. The
    traditional game "flags" a record when its own interval is above t.

    Returns
    -------
    dict
        ``counts`` ({verdict: records}), ``audited``, ``traditional_flags`` (of the records at
        risk, how many the traditional game flags), ``text`` (the sentence, e.g. "2 records at
        risk, 1 undecided, 37 not at risk of 40 audited against an attacker who knows every
        other record (t = 0.8); between 1% and 21% of all 31,655 records are at risk (95%).").
    """
    ms = _verdicts(records, threshold)
    tr = _verdicts(records, threshold, TRADITIONAL)
    counts = {v: int(np.count_nonzero(ms == v)) for v in metrics.VERDICTS}
    at_risk = ms == "at risk"
    flagged = int(np.count_nonzero(at_risk & (tr == "at risk")))
    text = (
        f"{_plural(counts['at risk'], 'record', 'records')} at risk, {counts['undecided']:,} undecided, "
        f"{counts['not at risk']:,} not at risk"
        + (f", {counts['attack failed']:,} where the attack failed" if counts["attack failed"] else "")
        + f" of {len(records):,} audited against {_knows(spec)} (t = {threshold:g})"
    )
    share = share_at_risk(records, spec, threshold, screened=screened)
    if share is not None:
        text += f"; {_share_clause(share)}"
    text += "."
    if screened is not None:
        text += " " + _screen_summary(records, spec, screened, threshold)["text"]
    n = counts["at risk"]
    if TRADITIONAL not in played(spec.attack.games):
        text += f" The traditional game was not run ({not_played_reason(spec.attack.attacker)})."
        return {"counts": counts, "audited": len(records), "traditional_flags": None, "text": text}
    if n:
        text += f" The traditional game flags {flagged:,} of {'this one' if n == 1 else f'these {n:,}'}."
    return {"counts": counts, "audited": len(records), "traditional_flags": flagged, "text": text}


def similarity_answer(
    records: pd.DataFrame, figures: Mapping[str, Any] | None, spec: RunSpec, threshold: float
) -> dict[str, Any] | None:
    """The release's similarity checks beside the attack's verdicts, in one sentence.

    ``figures`` are the run's stored similarity figures (:mod:`privgame.games.closeness`): the
    whole-table DCR share test of the audited release and, per audited record, its DCR p-value
    (the ``dcr_p_value`` column of ``records``). A record is *close* when its p-value is at or
    below the figures' ``alpha``: the release holds a row nearer to it than to all but that share
    of non-members.

    Returns
    -------
    dict or None
        None for a run measured before the checks existed. Otherwise the figures and
        ``audited``, ``close`` (audited records that are close), ``at_risk`` (records at risk),
        ``at_risk_not_close`` (at risk, yet no closer to the release than a typical
        non-member: what the similarity test cannot see), ``close_not_at_risk`` and ``text``.
    """
    if not figures:
        return None
    out = {key: value for key, value in figures.items() if key != "records"}
    table = figures.get("table")
    if not isinstance(table, Mapping):
        reason = figures.get("error")
        out["text"] = (
            f"The similarity checks of the release could not be run ({reason})."
            if reason
            else "The similarity checks need records outside D to compare the release with; this run "
            "has none."
        )
        return out
    alpha = float(figures.get("alpha", 0.05))
    p_values = (
        records["dcr_p_value"].to_numpy(float) if "dcr_p_value" in records else np.full(len(records), np.nan)
    )
    at_risk = _verdicts(records, threshold) == "at risk"
    close = p_values <= alpha
    k, m = int(np.count_nonzero(at_risk)), int(np.count_nonzero(at_risk & ~close))
    out.update(
        audited=len(records),
        close=int(np.count_nonzero(close)),
        at_risk=k,
        at_risk_not_close=m,
        close_not_at_risk=int(np.count_nonzero(close & ~at_risk)),
    )
    # Never "passes" beside exact copies: a record of D found whole in the release fails it.
    copies = int(np.count_nonzero(records["dcr"].to_numpy(float) == 0)) if "dcr" in records else 0
    out["copies"] = copies
    copied = f"; {copies:,} audited records appear in the release exactly" if copies else ""
    test = (
        f"The similarity test {'passes' if table['passes'] and not copies else 'fails'} "
        f"({_pct(float(table['dcr_share']))} of the release's rows are closer to D than to non-members, "
        f"p = {float(table['share_p_value']):.2g}{copied})"
    )
    if k == 0:
        out["text"] = f"{test}; the attack finds no audited record at risk (t = {threshold:g})."
        return out
    are = "is" if k == 1 else "are"
    tail = (
        f"{'it is no' if k == 1 else 'none of them is' if m == k else f'{m:,} of them are no'} closer to "
        "the release than a typical "
        f"non-member (DCR p-value above {alpha:g}), so the similarity test cannot see "
        f"{'it' if k == 1 else 'them'}"
        if m
        else f"the similarity test finds {'it' if k == 1 else 'each of them'} close to the release too"
    )
    out["text"] = (
        f"{test} while {k:,} of the {len(records):,} audited records {are} at risk against "
        f"{_knows(spec)} (t = {threshold:g}); {tail}."
    )
    return out


def threshold_guide(
    threshold: float = 0.8, thresholds: tuple[float, ...] = (0.6, 0.7, 0.8, 0.9)
) -> dict[str, Any]:
    """What a high-risk threshold t means in terms a data owner can judge.

    For each t, the attacker's true-positive rate at a false-positive rate of 1% and 10% for a
    record whose risk is exactly t (:func:`privgame.core.metrics.binormal_tpr`), and the attacker's
    precision at 1% false positives when half of its guesses concern members (the game's own
    balance): ``TPR / (TPR + FPR)``.

    Parameters
    ----------
    threshold : float
        The t the paragraph speaks of (in [0.5, 1)).
    thresholds : tuple of float
        The other t of the table.

    Returns
    -------
    dict
        ``rows`` (one dict per t, ``threshold`` among them: ``t``, ``tpr_at_fpr_0.01``,
        ``tpr_at_fpr_0.1``, ``precision_at_fpr_0.01``) and ``text``, a paragraph.
    """
    rows = []
    for t in sorted({*thresholds, float(threshold)}):
        low, high = metrics.binormal_tpr(t, 0.01), metrics.binormal_tpr(t, 0.1)
        rows.append(
            {
                "t": t,
                "tpr_at_fpr_0.01": low,
                "tpr_at_fpr_0.1": high,
                "precision_at_fpr_0.01": low / (low + 0.01),
            }
        )
    example = next(row for row in rows if row["t"] == float(threshold))
    text = (
        "A record's risk is the attack's AUC: how often, given one release trained with the record and "
        "one without, the attack ranks the one with it higher (0.5 is a coin toss). A record at "
        f"t = {example['t']:g} is one the attack can pick out in about "
        f"{example['tpr_at_fpr_0.01']:.0%} of the releases that hold it while raising a false alarm in "
        f"1% of those that do not (in {example['tpr_at_fpr_0.1']:.0%} at 10% false alarms): an attacker "
        f"who acts only on its surest guesses is right about {example['precision_at_fpr_0.01']:.0%} of "
        "them. Choose as t the highest risk your office accepts for one person: a lower t calls more "
        "records at risk."
    )
    return {"rows": rows, "text": text}


def record_similarity_text(dcr: float, p_value: float, verdict: str, *, alpha: float = 0.05) -> str | None:
    """One record's similarity figures in a sentence, beside its verdict (None without figures).

    >>> record_similarity_text(0.04, 0.31, "at risk")  # doctest: +NORMALIZE_WHITESPACE
    "The release's closest row to this record is at Gower distance 0.04; 31% of non-members have
    one at least as close (DCR p-value 0.31), so the similarity test does not see this record,
    while the attack finds it at risk."
    """
    if not (math.isfinite(dcr) and math.isfinite(p_value)):
        return None
    lead = (
        f"The release's closest row to this record is at Gower distance {dcr:.3g}; {_pct(p_value)} of "
        f"non-members have one at least as close (DCR p-value {p_value:.2g}), so the similarity test "
    )
    close = p_value <= alpha
    if verdict == "at risk":
        return lead + (
            "flags this record too, and the attack finds it at risk."
            if close
            else "does not see this record, while the attack finds it at risk."
        )
    if close:
        return lead + f"flags this record, although the attack's verdict is {verdict}."
    return lead + f"does not flag this record either (the attack's verdict: {verdict})."


def records_at(records: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """A copy of a run's per-record results with the verdicts recomputed at ``threshold``.

    ``records.parquet`` holds each record's three-way verdict at the run's own threshold; a page
    or an export at another t must not show those. Risks and intervals do not depend on t and
    are kept. A table without interval columns (written before verdicts existed) is returned
    unchanged.

    Raises
    ------
    ParameterError
        For a threshold outside [0, 1].
    """
    check_threshold(threshold)
    out = records.copy()
    for game in GAMES:
        column, low, high = game.verdict_column, game.column("low"), game.column("high")
        if column in out.columns and (out[column].astype(str) == "not run").all():
            continue  # a game the run did not play has no verdict at any t
        if low in out.columns and high in out.columns:
            out[column] = _verdicts(out, float(threshold), game)
    return out


def miss_rate_caveat(missed: int, at_risk: int) -> dict[str, Any] | None:
    """The miss rate's 95% Clopper-Pearson interval, and a caveat when it rests on few records.

    Returns
    -------
    dict or None
        ``None`` when no record is at risk (the miss rate is undefined). Otherwise ``low``,
        ``high`` and ``caveat``: a sentence when fewer than 5 records are at risk, else ``None``.
    """
    if at_risk < 1:
        return None
    low, high = metrics.binomial_interval(missed, at_risk)
    caveat = None
    if at_risk < 5:
        caveat = (
            f"The miss rate rests on {_plural(at_risk, 'record', 'records')} at risk only: its 95% "
            f"interval runs from {low:.2f} to {high:.2f}, so it says little."
        )
    return {"low": low, "high": high, "caveat": caveat}


def audit_summary(
    records: pd.DataFrame, spec: RunSpec, threshold: float, *, screened: pd.DataFrame | None = None
) -> dict[str, Any]:
    """The audit's part of a run's summary: set-up, plan, groups and the share at risk.

    Returns
    -------
    dict
        ``setup`` (kind, population source, sizes, shadow drawing), ``setup_text`` (the sentences
        of :func:`describe_setup`), ``audit_plan``, ``groups`` (records per group, and the records
        at risk and not at risk in each: their verdicts), and ``share_at_risk`` (see :func:`share_at_risk`,
        ``None`` without a sample); with ``screened``, ``screen``
        (:func:`privgame.games.screen.summarise_screen`) and ``share_at_risk_sample`` (the
        bracket of the sample alone).
    """
    masks = group_masks(records, spec)
    verdict = _verdicts(records, threshold)
    high, safe = verdict == "at risk", verdict == "not at risk"
    plays_traditional = TRADITIONAL in played(spec.attack.games)
    traditional = int(np.count_nonzero(_verdicts(records, threshold, TRADITIONAL) == "at risk"))
    setup = spec.setup
    targets = spec.targets
    extra: dict[str, Any] = {}
    if screened is not None:
        extra["screen"] = _screen_summary(records, spec, screened, threshold)
        extra["share_at_risk_sample"] = share_at_risk(records, spec, threshold)
    return extra | {
        "attacker": spec.attack.attacker,
        "attacker_text": _knows(spec),
        "setup": {
            "kind": setup.kind,
            "population": setup.population,
            "population_name": setup.population_name,
            "data_rows": setup.data_rows,
            "population_rows": setup.population_rows,
            "shadow_size": setup.shadow_size,
            "shadow_replace": setup.shadow_replace,
        },
        "setup_text": describe_setup(spec),
        "audit_plan": {
            "mode": targets.mode,
            "outliers": targets.outliers if targets.mode == "plan" else None,
            "random": targets.random if targets.mode == "plan" else None,
        },
        "groups": {
            name: {
                "records": int(mask.sum()),
                "at_risk": int((mask & high).sum()),
                "not_at_risk": int((mask & safe).sum()),
                **_group_set_counts(records, threshold, mask),
            }
            for name, mask in masks.items()
        },
        "set_level": set_level(records, threshold),
        "share_at_risk": share_at_risk(records, spec, threshold, screened=screened),
        "attack_shadow_auc_mean": _mean_of(records, "attack_shadow_auc"),
        "attacks": list(spec.attack.attacks),
        "attack_counts": attack_counts(records),
        "attack_still_learning": int(records["attack_still_learning"].fillna(False).astype(bool).sum())
        if "attack_still_learning" in records
        else 0,
        # At risk = the verdict, in both games (the paper's point counts are above_t_*).
        "at_risk_model_seeded": int(np.count_nonzero(high)),
        "at_risk_traditional": traditional if plays_traditional else None,
        "answer": answer(records, spec, threshold, screened=screened),
        "miss_rate_interval": miss_rate_caveat(*_missed(records, threshold)),
    }


OUT_WORLD_TEXT = (
    "In the 'out' runs the record is swapped for a reference record drawn at random from the "
    'population outside D, not for the record that would hide it best: "not at risk" says that '
    "this attack could not tell the record's presence from that of a typical other record. That is "
    "weaker than differential privacy, whose guarantee holds against the worst neighbouring dataset."
)
"""What the model-seeded game's 'out' world is, in words for the pages and the report."""

SET_FDR = 0.05
"""The expected share of false "at risk" verdicts that Benjamini-Hochberg allows among the named."""


def at_risk_p_values(records: pd.DataFrame, threshold: float) -> np.ndarray | None:
    """Each record's :func:`privgame.core.metrics.at_risk_p_value` at ``threshold``; None for a
    run written before the records kept their variance (``risk_model_seeded_variance``)."""
    variance_column, discordant_column = MODEL_SEEDED.column("variance"), MODEL_SEEDED.column("discordant")
    if variance_column not in records.columns or discordant_column not in records.columns:
        return None

    def numbers(column: str, default: float) -> np.ndarray:
        if column not in records.columns:
            return np.full(len(records), default)
        return pd.to_numeric(records[column], errors="coerce").fillna(default).to_numpy(float)

    return np.array(
        [
            metrics.at_risk_p_value(
                float(value),
                float(variance),
                threshold,
                discordant=int(discordant),
                n=max(1, int(n_eval) // 2),
                extra_variance=float(extra),
                look=max(1, int(look)),
            )
            for value, variance, discordant, n_eval, extra, look in zip(
                records[MODEL_SEEDED.column()].to_numpy(float),
                records[variance_column].to_numpy(float),
                numbers(discordant_column, 0.0),
                numbers("n_eval", 2.0),
                numbers("attack_training_variance", 0.0),
                numbers("looks", 1.0),
                strict=True,
            )
        ],
        dtype=np.float64,
    )


def set_level(records: pd.DataFrame, threshold: float) -> dict[str, Any] | None:
    """The verdicts read as a set: what one false "at risk" among many would cost, and the
    records that stay at risk under a set-level control.

    Each record's verdict errs with probability at most :data:`~privgame.core.metrics.VERDICT_ERROR`
    (2.5%), so among ``m`` records judged one by one at most ``2.5% m`` false "at risk" verdicts are
    expected, whichever of them are truly at risk. Of the records at risk, those that Holm's test
    names (:func:`privgame.core.metrics.holm`, at 2.5%) are at risk together: the chance that any
    of them is not is at most 2.5%. Those that Benjamini-Hochberg names
    (:func:`privgame.core.metrics.benjamini_hochberg`, at :data:`SET_FDR`) hold at most 5% false
    ones in expectation. Both read the p-values of :func:`at_risk_p_values`.

    Returns
    -------
    dict or None
        None for a run written before the records kept their variance. Otherwise ``judged``
        (records with a risk), ``at_risk``, ``expected_false_at_most``, ``holm`` and ``bh``
        (records each names), ``holm_ids`` and ``bh_ids``, and ``text``.
    """
    p = at_risk_p_values(records, threshold)
    if p is None:
        return None
    judged = int(np.count_nonzero(np.isfinite(records[MODEL_SEEDED.column()].to_numpy(float))))
    at_risk = int(np.count_nonzero(_verdicts(records, threshold) == "at risk"))
    named_holm, named_bh = metrics.holm(p), metrics.benjamini_hochberg(p, SET_FDR)
    ids = records["record_id"].to_numpy()
    expected = metrics.VERDICT_ERROR * judged
    text = (
        f"Read as a set: of {judged:,} records judged one by one, at most {expected:.1f} false "
        f'"at risk" {"verdict is" if expected <= 1 else "verdicts are"} expected (2.5% each).'
    )
    if at_risk:
        text += (
            f" Of the {at_risk:,} at risk, {int(named_holm.sum()):,} are at risk together (Holm: the "
            f"chance that any of them is not is at most 2.5%), and {int(named_bh.sum()):,} with at "
            f"most {SET_FDR:.0%} of them false in expectation (Benjamini-Hochberg)."
        )
    return {
        "judged": judged,
        "at_risk": at_risk,
        "expected_false_at_most": expected,
        "holm": int(named_holm.sum()),
        "bh": int(named_bh.sum()),
        "holm_ids": [int(i) for i in ids[named_holm]],
        "bh_ids": [int(i) for i in ids[named_bh]],
        "text": text,
    }


def _group_set_counts(records: pd.DataFrame, threshold: float, mask: np.ndarray) -> dict[str, Any]:
    """A group's records at risk together (Holm within the group), for "k of K at risk"."""
    p = at_risk_p_values(records, threshold)
    if p is None or not mask.any():
        return {}
    return {"at_risk_holm": int(metrics.holm(p[mask]).sum())}


def training_sd_at(variance: float, threshold: float) -> float:
    """The standard deviation the attack's training adds to a risk at ``threshold``.

    ``variance`` is on the logit scale (:func:`privgame.core.metrics.training_variance`); by the delta
    method it is ``sqrt(variance) * t * (1 - t)`` on the AUC scale at an AUC of t.
    """
    return math.sqrt(max(0.0, variance)) * threshold * (1.0 - threshold)


def _mean_of(records: pd.DataFrame, column: str) -> float | None:
    """The mean of a column's defined values, or None (JSON has no nan) without any."""
    if column not in records.columns:
        return None
    values = pd.to_numeric(records[column], errors="coerce").dropna()
    return float(values.mean()) if len(values) else None


def _missed(records: pd.DataFrame, threshold: float) -> tuple[int, int]:
    found = metrics.miss_rate(
        records["risk_model_seeded"].to_numpy(float), records["risk_traditional"].to_numpy(float), threshold
    )
    return found.missed, found.at_risk


_STORED_KEYS = (
    "twins",
    "inference",
    "verdict_rule",
    "attack_training_variance",
    "games",
    "generator",
    "generator_params",
    "sizes",
    "n_shadow",
    "n_eval",
    "generator_metadata",
    "queries",
    "hoeffding_half_width_rho_0.05",
)


def run_summary(folder: RunFolder, threshold: float | None = None) -> dict[str, Any]:
    """A finished run's summary recomputed at ``threshold`` (the run's own by default).

    The across-record metrics of :func:`privgame.core.metrics.summarize`, the audit's part
    (:func:`audit_summary`), the run's stored facts (generator, sizes, attack) and ``run_id``.

    Raises
    ------
    RunError
        When the run is not finished.
    ParameterError
        For a threshold outside [0, 1].
    """
    folder.require_done()
    spec = folder.spec()
    t = spec.threshold if threshold is None else threshold
    t = check_threshold(t)
    stored = folder.summary()
    records = folder.records()
    summary = metrics.summarize(
        records["risk_model_seeded"].to_numpy(float),
        records["risk_traditional"].to_numpy(float),
        threshold=t,
        traditional=TRADITIONAL in played(spec.attack.games),
    )
    summary.update({key: stored[key] for key in _STORED_KEYS if key in stored})
    summary.update(audit_summary(records, spec, t, screened=folder.screen() if folder.has_screen() else None))
    training = summary.get("attack_training_variance")
    if isinstance(training, int | float):
        summary["attack_training_sd_at_t"] = training_sd_at(float(training), t)
    summary["passes"] = list(folder.status().get("extensions") or [])
    summary["similarity"] = similarity_answer(records, stored.get("similarity"), spec, t)
    guarantee = guarantee_answer(summary.get("generator_metadata"), t)
    if guarantee is not None:
        summary["guarantee"] = guarantee
        summary["answer"] = {**summary["answer"], "text": proven_answer(summary["answer"]["text"], guarantee)}
    with contextlib.suppress(RunError):  # a damaged file is reported where it is measured again
        anonymity = folder.read_anonymity()
        if anonymity is not None:
            summary["anonymity"] = anonymity
    summary["run_id"] = folder.run_id
    return summary


def proven_answer(text: str, guarantee: Mapping[str, Any] | None) -> str:
    """The verdict sentence ``text``, led by what a guarantee proves when its cap lies below t
    (:func:`guarantee_answer`): every record of D, audited or not, is then not at risk."""
    if not guarantee or not guarantee.get("proves_not_at_risk"):
        return text
    return (
        f"No record of D can be at risk: the generator's differential-privacy guarantee caps every "
        f"record's risk at {guarantee['bound']:.3f}, below t (a proof, given a public domain). "
        f"Measured: {text}"
    )


def guarantee_answer(metadata: Mapping[str, Any] | None, threshold: float) -> dict[str, Any] | None:
    """What a differentially private generator's guarantee proves at ``threshold``: ``None``
    unless the generator's metadata gives the highest AUC any attack can reach
    (``dp_auc_bound``, e.g. MST's with a public domain).

    Returns
    -------
    dict or None
        ``bound``, ``proves_not_at_risk`` (the bound lies below ``threshold``: no record of D
        can be at risk, whatever the attack) and ``text``.
    """
    if not isinstance(metadata, Mapping) or not metadata.get("dp_guarantee"):
        return None
    bound = metadata.get("dp_auc_bound")
    if not isinstance(bound, int | float) or not math.isfinite(bound):
        return None
    proves = bool(bound < threshold)
    text = f"The generator's differential-privacy guarantee caps every record's risk at {bound:.3f}, " + (
        f"below t = {threshold:g}: no record of D can be at risk, whatever the attack; this is "
        "a proof, not a measurement, and holds only if the declared domain is public and the "
        "generator is the one audited."
        if proves
        else f"not below t = {threshold:g}: the guarantee alone does not rule out a record at "
        "risk, so the verdicts rest on the measurement (a smaller epsilon lowers the cap)."
    )
    return {"bound": float(bound), "proves_not_at_risk": proves, "text": text}
