"""The per-record attribute-inference game, read from the model-seeded game's own runs.

The data owner names one or more *secret* columns. In every model-seeded run of an audited record
x (the 'in' runs: the generator on D; the 'out' runs: on D with x swapped for a reference record),
the inference attacks of :mod:`privgame.attack.inference` predict x's secret from the synthetic
table and x's other columns (:meth:`privgame.games.work.Context.inferred`). The record's
**inference gain** is how much more often the release lets an attacker name x's secret with x in D
than without it: beyond what the rest of the population lets it infer (the control the 'out' runs
give).

Three attacks run on every table, four for the leave-one-out attacker (``nearest``, ``bayes``,
``prior``, ``reconstruction``: :mod:`privgame.attack.inference`). Each attack is compared with
itself across the two worlds, and the record's gain is the largest: ``max_a (p_in(a) -
max(p_out(a), p_out(prior)))``. The floor ``p_out(prior)`` is the success of guessing the
population's usual value without the record: no attack is credited with a success that needs no
record. Without that floor, an attack that the record's rare values merely sway towards the usual
value showed a gain under a release that links a secret to nothing (0.14 for two records of 20
under independent marginals, whose secret was the usual value). Another attack's success without
the record is *not* a floor: one that names a record's secret there by chance (the reconstruction
attack's systematic guess, right for a quarter of the records of a four-valued secret) hid two of
ten records that a copying release leaked, when the gain was the best attack with the record
over the best without it.

The interval is :func:`privgame.core.gains.best_gain_interval` at the record's look level
(:func:`privgame.core.metrics.look_level`, as the membership verdict's): simultaneous one-sided
Wilson bounds on every attack's rate in each world, so no attack is chosen on the runs it is
scored on and the error holds whatever the attacks' correlation. The verdict is *at risk* when
the low end clears the inference threshold, *not at risk* when the high end is at or below it.
The attacks are not trained, so no training noise widens the interval.

The traditional, aggregate view is :func:`aggregate_gap`: one release, the attack's accuracy on
records of D minus on records outside it (a memorisation gap over the table, as the literature
reports it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privgame.attack.inference import INFERENCE_ATTACKS, SecretAttack
from privgame.core import metrics
from privgame.core.gains import best_gain_interval, gain_interval, gain_verdicts
from privgame.data.schema import CATEGORICAL, Schema

__all__ = [
    "AGGREGATE_ATTACKS",
    "AGGREGATE_RECORDS",
    "add_verdicts",
    "aggregate_gap",
    "class_label",
    "inference_columns",
    "inference_summary",
    "inference_texts",
    "record_inference",
    "record_inference_texts",
    "sensitive_columns",
    "suffix",
    "verdict_columns",
]

AGGREGATE_ATTACKS: tuple[str, ...] = ("nearest", "bayes")
"""The attacks of the aggregate view: ``prior`` names the same value for every record, so its
member/non-member gap is the difference of the two samples' base rates, not memorisation."""
AGGREGATE_RECORDS = 1_000
"""The aggregate view compares the attack's accuracy on at most this many records of D and as
many records outside it."""


_SENSITIVE = re.compile(
    r"income|salary|wage|earning|pay|wealth|debt|diagnos|disease|illness|health|medical|condition|"
    r"treatment|drug|hiv|pregnan|disab|race|ethnic|religio|belief|sex|gender|marital|orientation|"
    r"politic|union|criminal|convict|offen[cs]e|biometric|genetic",
    re.IGNORECASE,
)


def sensitive_columns(schema: Schema) -> list[str]:
    """The used columns whose names look sensitive (GDPR Article 9's special categories, income,
    health): what the dashboard proposes as secrets. A proposal only; the data owner decides."""
    return [c.name for c in schema.used if c.distinct >= 2 and _SENSITIVE.search(c.name)]


def suffix(secrets: Sequence[str], secret: str) -> str:
    """The column suffix of ``secret``'s results: none for a single secret, ``_<name>`` for several."""
    return "" if len(secrets) == 1 else f"_{secret}"


def verdict_columns(columns: Sequence[str]) -> list[str]:
    """The inference verdict columns among a records table's ``columns`` (one per secret)."""
    return [c for c in columns if c == "verdict_inference" or c.startswith("verdict_inference_")]


def inference_columns(secrets: Sequence[str]) -> list[str]:
    """The records table's inference columns, in order."""
    names = [
        "inference_gain",
        "inference_low",
        "inference_high",
        "verdict_inference",
        "inference_attack",
        "inference_attack_out",
        "inference_in",
        "inference_out",
        "inferred_in",
        "inferred_out",
        "secret_value",
        "inference_secret",
    ]
    return [f"{name}{suffix(secrets, s)}" for s in secrets for name in names]


def class_label(attack: SecretAttack, schema: Schema, value: int) -> str:
    """A secret class as people read it: the category, or a continuous secret's bin."""
    column = schema.used[attack.secret]
    if column.role == CATEGORICAL:
        categories = list(column.categories or ())
        return str(categories[value]) if 0 <= value < len(categories) else str(value)
    edges = attack.secret_edges if attack.secret_edges is not None else np.empty(0)
    low = "-inf" if value == 0 else f"{edges[value - 1]:g}"
    high = "inf" if value >= len(edges) else f"{edges[value]:g}"
    return f"[{low}, {high})"


def _most_frequent(values: np.ndarray) -> int:
    counts = np.bincount(values.astype(np.int64))
    return int(counts.argmax()) if len(counts) else -1


def record_inference(
    inferred: np.ndarray,
    truth: Sequence[int],
    *,
    secrets: Sequence[str],
    attacks: Sequence[SecretAttack],
    schema: Schema,
    looks: int,
    names: Sequence[str] = INFERENCE_ATTACKS,
) -> dict[str, Any]:
    """One record's inference results, as records-table columns.

    Parameters
    ----------
    inferred : ndarray of shape (runs, secrets, attacks)
        What each attack named as each secret in each model-seeded run: the 'in' runs, then as
        many 'out' runs (the checkpoint's ``inferred``).
    truth : sequence of int
        The record's secret class for each secret (:meth:`SecretAttack.classes`).
    looks : int
        The record's look (its interval's level, :func:`privgame.core.metrics.look_level`).
    names : sequence of str
        The attacks, in the order of ``inferred``'s last axis
        (:func:`privgame.attack.inference.inference_attacks`).
    """
    half = len(inferred) // 2
    level = metrics.look_level(int(looks))
    row: dict[str, Any] = {}
    for s, (secret, attack) in enumerate(zip(secrets, attacks, strict=True)):
        tail = suffix(secrets, secret)
        hits = inferred[:, s, :] == truth[s]
        hits_in, hits_out = hits[:half].sum(axis=0), hits[half:].sum(axis=0)
        n_out = len(inferred) - half
        floor = list(names).index("prior") if "prior" in names else None
        gain, low, high, best_in, best_out = best_gain_interval(
            hits_in, half, hits_out, n_out, floor=floor, level=level
        )
        row[f"inference_gain{tail}"] = gain
        row[f"inference_low{tail}"] = low
        row[f"inference_high{tail}"] = high
        row[f"inference_attack{tail}"] = names[best_in]
        row[f"inference_attack_out{tail}"] = names[best_out]
        row[f"inference_in{tail}"] = float(hits_in[best_in]) / half if half else math.nan
        row[f"inference_out{tail}"] = float(hits_out[best_out]) / n_out if n_out else math.nan
        row[f"inferred_in{tail}"] = class_label(attack, schema, _most_frequent(inferred[:half, s, best_in]))
        row[f"inferred_out{tail}"] = class_label(attack, schema, _most_frequent(inferred[half:, s, best_out]))
        row[f"secret_value{tail}"] = class_label(attack, schema, int(truth[s]))
        row[f"inference_secret{tail}"] = secret
    return row


def record_inference_texts(row: Mapping[str, Any], secrets: Sequence[str], threshold: float) -> list[str]:
    """For one audited record (a row of the records table), one sentence per secret: its value,
    what the attack named in each world, the gain and the verdict."""
    out = []
    for secret in secrets:
        tail = suffix(secrets, secret)
        gain = row.get(f"inference_gain{tail}")
        if gain is None or not math.isfinite(float(gain)):
            continue
        out_attack = row.get(f"inference_attack_out{tail}", row[f"inference_attack{tail}"])
        out.append(
            f"'{secret}' (its value: {row[f'secret_value{tail}']}): with the record in D, the "
            f"{row[f'inference_attack{tail}']} attack named it in {float(row[f'inference_in{tail}']):.0%} of "
            f"the releases (its most frequent answer: {row[f'inferred_in{tail}']}); with the record "
            f"swapped out, the best attack ({out_attack}) in {float(row[f'inference_out{tail}']):.0%} "
            f"({row[f'inferred_out{tail}']}). "
            f"Gain {float(gain):+.2f} [{float(row[f'inference_low{tail}']):+.2f}, "
            f"{float(row[f'inference_high{tail}']):+.2f}]: {row[f'verdict_inference{tail}']} "
            f"(threshold {threshold:g})."
        )
    return out


def add_verdicts(records: pd.DataFrame, secrets: Sequence[str], threshold: float) -> pd.DataFrame:
    """``records`` with ``verdict_inference`` (suffixed per secret) from its intervals."""
    for secret in secrets:
        tail = suffix(secrets, secret)
        low, high = f"inference_low{tail}", f"inference_high{tail}"
        if low not in records.columns:
            continue
        records[f"verdict_inference{tail}"] = gain_verdicts(
            pd.to_numeric(records[low], errors="coerce").to_numpy(float),
            pd.to_numeric(records[high], errors="coerce").to_numpy(float),
            threshold,
        )
    return records


def inference_summary(records: pd.DataFrame, secrets: Sequence[str], threshold: float) -> dict[str, Any]:
    """The run's inference figures per secret: verdict counts, the mean and largest gain."""
    out: dict[str, Any] = {"threshold": float(threshold), "secrets": list(secrets), "by_secret": {}}
    for secret in secrets:
        tail = suffix(secrets, secret)
        column = f"verdict_inference{tail}"
        if column not in records.columns:
            continue
        gains = pd.to_numeric(records[f"inference_gain{tail}"], errors="coerce")
        verdicts = records[column].astype(str)
        out["by_secret"][secret] = {
            "verdicts": {v: int((verdicts == v).sum()) for v in ("at risk", "undecided", "not at risk")},
            "mean_gain": float(gains.mean()) if gains.notna().any() else None,
            "max_gain": float(gains.max()) if gains.notna().any() else None,
            "at_risk_ids": [int(r) for r in records.loc[verdicts == "at risk", "record_id"]],
        }
    return out


def inference_texts(summary: Mapping[str, Any] | None) -> list[str]:
    """One sentence per secret, for every face: the per-record verdicts, the largest gain, and the
    aggregate member/non-member gap beside them (empty when the run played no inference game)."""
    if not summary:
        return []
    out = []
    aggregate = summary.get("aggregate") or {}
    for secret, figures in (summary.get("by_secret") or {}).items():
        counts = figures["verdicts"]
        audited = sum(counts.values())
        largest = figures.get("max_gain")
        text = (
            f"'{secret}': {counts['at risk']} of the {audited} audited records are at risk of having it "
            f"inferred (gain above {summary['threshold']:g}), {counts['undecided']} undecided, "
            f"{counts['not at risk']} not at risk"
            + (f"; the largest gain is {largest:+.2f}" if largest is not None else "")
            + "."
        )
        gaps = aggregate.get(secret) or {}
        if gaps:
            name, gap = max(gaps.items(), key=lambda item: item[1]["gap"])
            text += (
                f" Averaged over the table ({name} attack, {gap['n_members']:,} records of D against "
                f"{gap['n_nonmembers']:,} outside it), the release names it for {gap['members']:.1%} of "
                f"members and {gap['nonmembers']:.1%} of non-members: a gap of {100 * gap['gap']:+.1f} "
                f"points [{100 * gap['low']:+.1f}, {100 * gap['high']:+.1f}] (the traditional view, an "
                "average over records)."
            )
        out.append(text)
    return out


def aggregate_gap(
    attack: SecretAttack,
    synthetic: np.ndarray,
    members: np.ndarray,
    nonmembers: np.ndarray,
    *,
    rng: np.random.Generator,
    limit: int = AGGREGATE_RECORDS,
) -> dict[str, dict[str, float]]:
    """The traditional, aggregate view: each attack's accuracy on records of D (``members``,
    encoded rows) minus on records outside D (``nonmembers``), with a 95% interval.

    At most ``limit`` records of each are drawn with ``rng``. Returns, per attack,
    ``{"members": accuracy, "nonmembers": accuracy, "gap", "low", "high", "n_members", "n_nonmembers"}``.
    """
    members = np.asarray(members, dtype=np.float64)
    nonmembers = np.asarray(nonmembers, dtype=np.float64)
    if len(members) > limit:
        members = members[np.sort(rng.choice(len(members), limit, replace=False))]
    if len(nonmembers) > limit:
        nonmembers = nonmembers[np.sort(rng.choice(len(nonmembers), limit, replace=False))]
    out: dict[str, dict[str, float]] = {}
    if len(members) == 0 or len(nonmembers) == 0:
        return out
    hit_in = attack.correct(synthetic, members)
    hit_out = attack.correct(synthetic, nonmembers)
    for a, name in enumerate(INFERENCE_ATTACKS):
        if name not in AGGREGATE_ATTACKS:
            continue
        k1, k0 = int(hit_in[a].sum()), int(hit_out[a].sum())
        gap, low, high = gain_interval(k1, len(members), k0, len(nonmembers))
        out[name] = {
            "members": k1 / len(members),
            "nonmembers": k0 / len(nonmembers),
            "gap": gap,
            "low": low,
            "high": high,
            "n_members": len(members),
            "n_nonmembers": len(nonmembers),
        }
    return out
