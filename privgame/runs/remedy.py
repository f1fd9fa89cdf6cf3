"""Remedies: fix what an audit found, in a new run linked to its parent, and compare the family.

A remedy run is an ordinary run folder whose spec carries its lineage (``RunSpec.parent``: the
parent's run id and folder, the remedies applied and a one-line description). Remedies combine:

*Leave records out* (``leave_out``)
    D without the records at risk at t (optionally also the undecided ones). The run's table is
    the parent's, unchanged, and the ids go to ``RunSpec.left_out``: record ids stay row numbers,
    D_aux and the reference records are the parent's, and the left-out records are in neither D
    nor D_eval, so neither the re-audit nor the release (:func:`privgame.outputs.release.make_release`)
    uses them. The re-audit plays the parent's audit plan on the new D: the outliers of the new
    D (the remaining outliers plus a fresh pick) and a random sample, by default the parent's
    (``sample="kept"``). The parent's sample without the records taken out is no longer a
    uniform sample of the new D (its records at risk are exactly the ones removed), so it is not
    read as one: it is a uniform sample of the records the remedy would not have taken out, and
    the records it would have taken out but the audit never sampled are counted as still at risk
    (:func:`privgame.core.metrics.kept_sample_share`, a conservative estimate: it never reads low).
    Its records keep their trained attacks, so the re-audit costs their model-seeded fits only.
    ``sample="fresh"`` draws a uniform random sample of the new D instead, from the same seeded
    stream (an unbiased estimate, at the cost of training the attacks of new records). A run
    whose own sample was kept, or whose sample was wholly taken out, draws a fresh one.

*Generalise* (``generalise``)
    A stronger generator setting: Synthpop's ``min_samples_leaf`` (``min-leaf=N``), PrivBayes'
    ``epsilon`` (``epsilon=E``), the Bayesian networks' ``bins`` (``bins=B``).

*Train privately* (``private``)
    The release trained by MST (:mod:`privgame.generators.mst`) at the given epsilon instead of
    the audited generator: differential privacy caps every record's risk, audited or not, at the
    bound the guarantee gives (with a public domain; :func:`privgame.games.audit.guarantee_answer`),
    and the re-audit measures the risk beside that cap.

*Coarsen* (``merge_rare``, ``bins``)
    Merge the categories of a column seen fewer than ``MIN_COUNT`` times in D into one, or cut a
    continuous column into quantile bins (categorical from then on). Rows keep their ids.

Every remedy keeps the parent's seed and table rows, so records audited by both runs are paired.

Speed. Shadow datasets and trained attacks depend only on D_aux, the seed, the generator, the
columns and the dataset sizes, never on D itself. A leave-out remedy keeps the parent's dataset
sizes (``Setup.synthetic_rows`` and ``Setup.shadow_size`` fixed at the parent's), so the parent's
shadow 'out' checkpoints and every trained attack (the meta-classifier in each target
checkpoint) are exactly those a fresh run of the remedy's spec would make; they are copied into
the new folder and the engine trains only the attacks of records the parent did not audit. A
generalise or coarsen remedy changes the generator or the columns, so its shadows and attacks
change too and are all recomputed. A re-audit plays the model-seeded game alone by default
(``games="model-seeded"``); the traditional game's results then read "not run".

Cost. :func:`estimate_remedy` counts the re-audit's generator fits and estimates its time before it
starts, with the functions that estimate a run on the Evaluate page
(:func:`privgame.games.estimate.calibrate` and :func:`privgame.games.estimate.breakdown`), less the
work the parent's copied checkpoints spare.

Stopped re-audits. A re-audit that was cancelled, failed or whose engine died is found again by
:func:`stopped_remedies` (every run beside the parent whose lineage names it), to be resumed from
its checkpoints; asking for the same remedy again finds it too (:func:`find_remedy`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.defaults import LEAVE_OUT_CHOICES, SAMPLE_CHOICES
from privgame.core.errors import ParameterError
from privgame.core.parameters import threshold_problem
from privgame.data import fingerprint_table
from privgame.data.schema import CATEGORICAL, CONTINUOUS, Column, Schema
from privgame.games.audit import group_masks, records_at
from privgame.games.estimate import Calibration, breakdown, calibrate, in_words, load_note
from privgame.games.plan import run_split
from privgame.games.preflight import create_run
from privgame.settings.run_spec import ATTACKERS, GAMES, RunSpec, TargetSelection
from privgame.store.folders import DAMAGED, RunFolder

__all__ = [
    "GENERALISE_PARAMS",
    "LEAVE_OUT",
    "LEAVE_OUT_WORDS",
    "PRIVATE_GENERATOR",
    "SAMPLE_CHOICES",
    "Remedy",
    "RemedyEstimate",
    "create_remedy",
    "describe",
    "draws_sample",
    "estimate_remedy",
    "family",
    "find_remedy",
    "generalise_choices",
    "kept_sample_ids",
    "leave_out_ids",
    "parse_bin",
    "parse_generalise",
    "parse_merge_rare",
    "plan_remedy",
    "private_note",
    "remedy_runs",
    "stopped_remedies",
]

LEAVE_OUT: dict[str, tuple[str, ...]] = dict(
    zip(
        LEAVE_OUT_CHOICES,
        (("at risk",), ("at risk", "undecided", "attack failed"), ("at risk",)),
        strict=True,
    )
)
"""The ``--leave-out`` choices and the model-seeded verdicts whose records each leaves out (a
record whose attack failed is not shown safe, so it goes with the undecided ones).
``at-risk-together`` reads the verdicts as a set: only the records at risk that Holm's test names
(:func:`privgame.games.audit.set_level`: the chance that any one of them is not at risk is at
most 2.5%), for an owner who would rather keep a record than drop it on a verdict that may be the
one false one among many; ``at-risk`` reads each record on its own (2.5% each), and leaving out a
record called at risk by mistake costs utility, not privacy."""

LEAVE_OUT_WORDS: dict[str, str] = {
    "at-risk": "at risk",
    "at-risk-and-undecided": "at risk or undecided",
    "at-risk-together": "at risk together (Holm, 2.5% for the whole set)",
}
"""How each ``--leave-out`` choice reads in a remedy's one-line description."""

GENERALISE_PARAMS: dict[str, str] = {"min-leaf": "min_samples_leaf", "epsilon": "epsilon", "bins": "bins"}
"""``--generalise`` names and the generator parameter each sets."""

PRIVATE_GENERATOR = "mst"
"""The generator ``--private EPSILON`` trains the release with: of the differentially private
generators here, the one that keeps most of the data (mean two-way total variation on Adult at
epsilon 1: 0.037, against PrivBayes' 0.067)."""

MERGED = "(rare)"
"""The category that rare categories are merged into."""


@dataclass(frozen=True)
class Remedy:
    """One or more remedies to apply to a finished run.

    Attributes
    ----------
    leave_out : {"at-risk", "at-risk-and-undecided"} or None
        Which records to take out of D (see :data:`LEAVE_OUT`).
    threshold : float or None
        t for the verdicts that choose the records; the parent's by default.
    generalise : tuple of (str, float) or None
        A ``--generalise`` name of :data:`GENERALISE_PARAMS` and its new value.
    merge_rare : tuple of (str, int)
        Columns whose categories seen fewer than the count in D are merged into :data:`MERGED`.
    bins : tuple of (str, int)
        Continuous columns cut into that many quantile bins.
    games : {"model-seeded", "both"}
        The games the re-audit plays.
    sample : {"kept", "fresh"}
        With ``leave_out``: keep the parent's random sample (minus the records taken out; a
        conservative share estimate, no new attacks) or draw a fresh one of the new D.
    attacker : str or None
        The threat model of the re-audit (:mod:`privgame.games.threat`); the parent's by default.
    screened : bool
        With ``leave_out``: take out too the records of D the parent's screen gives that verdict
        and the exact game did not play (:mod:`privgame.games.screen`). The re-audit then draws a
        fresh random sample: the parent's sample says nothing of records chosen by the screen.
    private : float or None
        Train the release with :data:`PRIVATE_GENERATOR` at this epsilon instead of the audited
        generator.
    """

    leave_out: str | None = None
    threshold: float | None = None
    generalise: tuple[str, float] | None = None
    merge_rare: tuple[tuple[str, int], ...] = ()
    bins: tuple[tuple[str, int], ...] = ()
    games: str = "model-seeded"
    sample: str = "kept"
    attacker: str | None = None
    screened: bool = False
    private: float | None = None

    def problems(self) -> list[str]:
        """Every problem with these settings that needs no run to see, one sentence each."""
        out: list[str] = []
        if self.leave_out is not None and self.leave_out not in LEAVE_OUT:
            out.append(f"--leave-out {self.leave_out!r} is unknown; use one of {list(LEAVE_OUT)}.")
        if self.threshold is not None and threshold_problem(self.threshold) is not None:
            out.append(str(threshold_problem(self.threshold)))
        if self.games not in GAMES:
            out.append(f"--games {self.games!r} is unknown; use 'model-seeded' or 'both'.")
        if self.attacker is not None and self.attacker not in ATTACKERS:
            out.append(f"--attacker {self.attacker!r} is unknown; use one of {list(ATTACKERS)}.")
        if self.sample not in SAMPLE_CHOICES:
            out.append(f"--sample {self.sample!r} is unknown; use one of {list(SAMPLE_CHOICES)}.")
        if self.screened and self.leave_out is None:
            out.append("--screened chooses records to leave out: give it with --leave-out.")
        if self.screened and self.leave_out == "at-risk-together":
            out.append(
                "--leave-out at-risk-together reads the exact game's verdicts as a set, and the "
                "screen's verdicts have no p-values to read; use --leave-out at-risk with --screened."
            )
        if self.private is not None:
            if not (isinstance(self.private, int | float) and math.isfinite(self.private) and self.private > 0):
                out.append(f"--private {self.private!r}: epsilon must be a positive number, e.g. --private 1.")
            if self.generalise is not None:
                out.append(
                    "--private replaces the generator, so --generalise has nothing to set; give one of them."
                )
        nothing = self.generalise is None and self.private is None and not self.merge_rare and not self.bins
        if self.leave_out is None and nothing:
            out.append("no remedy given; give --leave-out, --generalise, --private, --merge-rare or --bin.")
        return out


def parse_generalise(text: str) -> tuple[str, float]:
    """Parse ``min-leaf=N``, ``epsilon=E`` or ``bins=B``."""
    name, _, value = text.partition("=")
    name = name.strip()
    if name not in GENERALISE_PARAMS or not value.strip():
        raise ParameterError(
            f"--generalise {text!r} is not understood; give min-leaf=N (Synthpop), epsilon=E (PrivBayes) "
            "or bins=B (Bayesian networks)."
        )
    try:
        number = float(value)
    except ValueError:
        raise ParameterError(f"--generalise {text!r}: {value!r} is not a number.") from None
    if name != "epsilon":
        if not number.is_integer() or number < 1:
            raise ParameterError(f"--generalise {text!r}: {name} must be a whole number of at least 1.")
        return name, int(number)
    if not number > 0:
        raise ParameterError(f"--generalise {text!r}: epsilon must be above 0.")
    return name, number


MAX_COUNT = 1_000_000
"""The largest count ``--bin`` and ``--merge-rare`` accept (far above any useful one)."""


def _column_count(text: str, option: str, default: int | None) -> tuple[str, int]:
    name, sep, count = text.rpartition(":") if ":" in text else (text, "", "")
    if not sep:
        name = text
    if not name:
        raise ParameterError(f"{option} {text!r} names no column; give COLUMN{'[:N]' if default else ':N'}.")
    if not count:
        if default is None:
            raise ParameterError(f"{option} {text!r} gives no count; write it as COLUMN:N.")
        return name, default
    if not re.fullmatch(r"[0-9]+", count) or not 2 <= int(count) <= MAX_COUNT:
        raise ParameterError(f"{option} {text!r}: the count must be a whole number from 2 to {MAX_COUNT:,}.")
    return name, int(count)


def parse_merge_rare(text: str) -> tuple[str, int]:
    """Parse ``COLUMN[:MIN_COUNT]`` (the count defaults to 10)."""
    return _column_count(text, "--merge-rare", 10)


def parse_bin(text: str) -> tuple[str, int]:
    """Parse ``COLUMN:BINS``."""
    return _column_count(text, "--bin", None)


def leave_out_ids(parent: RunFolder, choice: str, threshold: float, *, screened: bool = False) -> list[int]:
    """The ids of the parent's audited records whose model-seeded verdict ``choice`` leaves out,
    and with ``screened`` the records of D whose screened verdict
    (:func:`privgame.games.audit.screen_verdicts`, with the run's agreement rule) it leaves out.

    Raises
    ------
    ParameterError
        For an unknown choice, a threshold outside [0, 1], or ``screened`` for a run without a screen.
    """
    if choice not in LEAVE_OUT:
        raise ParameterError(f"--leave-out {choice!r} is unknown; use one of {list(LEAVE_OUT)}.")
    records = records_at(parent.records(), threshold)
    if choice == "at-risk-together":
        from privgame.games.audit import set_level

        if screened:
            raise ParameterError(
                "--leave-out at-risk-together reads the exact game's verdicts as a set, and the "
                "screen's verdicts have no p-values to read; use --leave-out at-risk with --screened."
            )
        found = set_level(records, threshold)
        if found is None:
            raise ParameterError(
                f"Run {parent.run_id} was written before its records kept what a set-level reading "
                "needs; use --leave-out at-risk, or audit again."
            )
        return sorted(int(r) for r in found["holm_ids"])
    chosen = records["verdict_model_seeded"].astype(str).isin(LEAVE_OUT[choice])
    ids = {int(r) for r in records.loc[chosen, "record_id"]}
    if screened:
        ids |= set(screened_leave_out_ids(parent, choice, threshold))
    return sorted(ids)


def screened_leave_out_ids(parent: RunFolder, choice: str, threshold: float) -> list[int]:
    """The records of D whose screened verdict ``choice`` leaves out and whose exact verdict (where
    the exact game played them) does not: a record at risk by either attack is at risk.

    Raises
    ------
    ParameterError
        When the parent did not screen every record.
    """
    if not parent.has_screen():
        raise ParameterError(
            f"Run {parent.run_id} did not screen every record (it ran with --screen none), so --screened "
            "has no verdicts to use; drop --screened, or audit again with --screen all."
        )
    from privgame.games.audit import screen_verdicts

    screened = parent.screen()
    records = parent.records()
    verdict = screen_verdicts(records, parent.spec(), screened, threshold)
    exact = records_at(records, threshold)
    by_exact = exact.loc[exact["verdict_model_seeded"].astype(str).isin(LEAVE_OUT[choice]), "record_id"]
    chosen = np.isin(verdict, LEAVE_OUT[choice]) & ~screened["record_id"].isin(by_exact).to_numpy()
    return sorted(int(r) for r in screened.loc[chosen, "record_id"])


def describe(remedy: Remedy, left_out: Sequence[int], generator: str, *, by_screen: int = 0) -> str:
    """The remedy in one line, e.g. ``leave out 3 records at risk at t = 0.8; bin age into 4``;
    ``by_screen`` of the records left out were chosen by the screen's verdicts."""
    parts = []
    if remedy.leave_out is not None:
        what = LEAVE_OUT_WORDS[remedy.leave_out]
        which = f" ({by_screen:,} of them by the screen's verdicts)" if remedy.screened else ""
        parts.append(f"leave out {len(left_out)} record{'s' * (len(left_out) != 1)} {what}{which}")
    if remedy.generalise is not None:
        name, value = remedy.generalise
        parts.append(f"{generator} {GENERALISE_PARAMS[name]} = {value:g}")
    if remedy.private is not None:
        parts.append(f"train with {PRIVATE_GENERATOR} (differentially private) at epsilon = {remedy.private:g}")
    parts += [f"merge categories of {c} seen < {k} times" for c, k in remedy.merge_rare]
    parts += [f"bin {c} into {k}" for c, k in remedy.bins]
    return "; ".join(parts)


def _coarsened(
    table: pd.DataFrame, schema: Schema, d: np.ndarray, remedy: Remedy
) -> tuple[pd.DataFrame, Schema, list[str]]:
    """The table and schema with rare categories merged and continuous columns binned."""
    problems: list[str] = []
    names = {c.name: c for c in schema.used}
    out = table.copy()
    columns = list(schema.columns)
    for option, pairs, role in (
        ("--merge-rare", remedy.merge_rare, CATEGORICAL),
        ("--bin", remedy.bins, CONTINUOUS),
    ):
        for name, _ in pairs:
            col = names.get(name)
            if col is None:
                problems.append(f"{option}: {name!r} is not a used column; use one of {sorted(names)}.")
            elif col.role != role:
                problems.append(f"{option}: {name!r} is {col.role}; {option} needs a {role} column.")
    for name, n_bins in remedy.bins:
        if names.get(name) is not None and names[name].role == CONTINUOUS:
            distinct = int(pd.to_numeric(table[name].iloc[d], errors="coerce").nunique())
            if n_bins > distinct:
                problems.append(
                    f"--bin {name}:{n_bins:,}: D has only {distinct:,} distinct values of {name}, so at most "
                    f"{distinct:,} bins can differ; choose fewer bins (binning coarsens only with far fewer)."
                )
    if problems:
        return out, schema, problems
    for name, min_count in remedy.merge_rare:
        counts = out[name].iloc[d].value_counts()
        rare = set(counts[counts < min_count].index) | (set(out[name].unique()) - set(counts.index))
        if not rare:
            problems.append(f"--merge-rare {name}:{min_count}: no category of {name} is that rare in D.")
            continue
        values = out[name].astype(object).where(~out[name].isin(rare), MERGED)
        out[name] = values.astype(str)
    for name, n_bins in remedy.bins:
        numeric = pd.to_numeric(out[name], errors="coerce")
        edges = np.unique(np.quantile(numeric.iloc[d].to_numpy(float), np.linspace(0, 1, n_bins + 1)))
        edges[0], edges[-1] = -np.inf, np.inf
        codes = np.clip(np.searchsorted(edges, numeric.to_numpy(float), side="right") - 1, 0, len(edges) - 2)
        labels = [_bin_label(edges[i], edges[i + 1]) for i in range(len(edges) - 1)]
        out[name] = pd.Series([labels[c] for c in codes], index=out.index, dtype=object).astype(str)
    changed = {n for n, _ in remedy.merge_rare} | {n for n, _ in remedy.bins}
    for i, col in enumerate(columns):
        if col.name in changed:
            values = out[col.name]
            categories = tuple(sorted(pd.unique(values).tolist()))
            columns[i] = Column(
                name=col.name,
                role=CATEGORICAL,
                dtype=str(values.dtype),
                distinct=len(categories),
                missing=0,
                reason="coarsened by a remedy",
                categories=categories,
            )
    return out, replace(schema, columns=tuple(columns)), problems


def _bin_label(low: float, high: float) -> str:
    left = "-inf" if np.isinf(low) else f"{low:g}"
    right = "inf" if np.isinf(high) else f"{high:g}"
    return f"[{left}, {right})"


def plan_remedy(parent: RunFolder, remedy: Remedy) -> tuple[RunSpec, pd.DataFrame, bool]:
    """The remedy run's spec and table, and whether the parent's attacks are exactly valid.

    Raises
    ------
    ParameterError
        Listing every problem: bad settings, a parent not finished, an unknown column, nothing to
        leave out, or a generator without the parameter to generalise.
    """
    problems = remedy.problems()
    if problems:
        raise ParameterError("The remedy cannot be made.", problems)
    parent.require_done()
    spec = parent.spec()
    table = parent.load_table()
    t = spec.threshold if remedy.threshold is None else float(remedy.threshold)
    split = run_split(spec, len(table))
    schema = Schema.from_dict(spec.schema)
    left_out: list[int] = []
    by_screen = 0
    if remedy.leave_out is not None:
        left_out, by_screen = _left_out(parent, remedy, remedy.leave_out, t)
        widest = remedy.leave_out == "at-risk-and-undecided"
        if widest and left_out and left_out == _left_out(parent, remedy, "at-risk", t)[0]:
            # No undecided record among them: the same re-audit as "at-risk", written the same way,
            # so that asking for either finds the one already made (find_remedy).
            remedy = replace(remedy, leave_out="at-risk")
        if not left_out:
            problems.append(
                f"no audited record is {' or '.join(LEAVE_OUT[remedy.leave_out])} at t = {t:g}; there is "
                "nothing to leave out (choose a lower t, or another remedy)."
            )
        elif len(split.target) - len(left_out) < 2:
            problems.append("leaving these records out would leave D with fewer than 2 records.")
    params = dict(spec.generator_params)
    if remedy.generalise is not None:
        name, value = remedy.generalise
        key = GENERALISE_PARAMS[name]
        from privgame.generators import resolve

        cls = resolve(spec.generator)
        accepted = _init_params(cls)
        if key not in accepted:
            problems.append(
                f"--generalise {name}: the generator {spec.generator!r} has no parameter {key!r}; "
                "min-leaf is for synthpop, epsilon for privbayes and mst, bins for the Bayesian networks and mst."
            )
        else:
            problems += _not_stronger(name, value, params.get(key, _init_default(cls, key)))
        params[key] = value
    generator = spec.generator
    if remedy.private is not None:
        if spec.generator == PRIVATE_GENERATOR:
            problems += _not_stronger("epsilon", remedy.private, params.get("epsilon", 1.0))
        generator, params = PRIVATE_GENERATOR, {"epsilon": float(remedy.private)}
    new_table, new_schema, coarse_problems = _coarsened(table, schema, split.target, remedy)
    problems += coarse_problems
    if problems:
        raise ParameterError("The remedy cannot be made.", problems)
    same_inputs = new_table is table or new_table.equals(table)
    # The leave-one-out attacker knows D, which every remedy changes, so its shadow datasets and
    # attacks are D's own and are never reused; the population attacker's depend on D_aux only.
    from privgame.games import threat

    exact = (
        generator == spec.generator
        and params == dict(spec.generator_params)
        and not (remedy.merge_rare or remedy.bins)
        and (remedy.attacker or spec.attack.attacker) == spec.attack.attacker
        and not threat.create(spec.attack.attacker).knows_d
    )
    setup = spec.setup
    d_new = np.setdiff1d(split.target, np.asarray(left_out, dtype=np.int64))
    if left_out:
        # The parent's dataset sizes, so that its shadows and attacks stay exactly valid.
        setup = replace(
            setup,
            synthetic_rows=setup.synthetic_rows or len(split.target),
            shadow_size=setup.shadow_size or len(split.target),
        )
    setup = replace(
        setup,
        data_fingerprint=fingerprint_table(new_table.iloc[d_new].reset_index(drop=True))
        if setup.kind == "release"
        else setup.data_fingerprint,
    )
    targets = replace(spec.targets, sample_ids=())
    kept: dict[str, int] | None = None
    if left_out and remedy.sample == "kept" and not remedy.screened:
        targets, kept = _kept_sample(parent, spec, left_out)
    sizes = dict(spec.sizes)
    sizes["target"] -= len(left_out)
    sizes["eval"] -= len(left_out)
    lineage = {
        "run_id": parent.run_id,
        "path": str(parent.path),
        "root": (spec.parent or {}).get("root", parent.run_id),
        "description": describe(remedy, left_out, spec.generator, by_screen=by_screen),
        "remedies": {
            "leave_out": remedy.leave_out,
            "threshold": t,
            "generalise": list(remedy.generalise) if remedy.generalise else None,
            "merge_rare": [list(p) for p in remedy.merge_rare],
            "bins": [list(p) for p in remedy.bins],
            "games": remedy.games,
            "attacker": remedy.attacker or spec.attack.attacker,
            **({"screened": True} if remedy.screened else {}),
            **({"private": float(remedy.private)} if remedy.private is not None else {}),
            "sample": ("kept" if kept else "fresh") if left_out and draws_sample(spec) else None,
        },
    }
    if kept:
        lineage["kept_sample"] = kept
    new_spec = replace(
        spec,
        data_fingerprint=spec.data_fingerprint if same_inputs else fingerprint_table(new_table),
        schema=new_schema.to_dict(),
        sizes=sizes,
        generator=generator,
        generator_params=params,
        attack=replace(
            spec.attack,
            games=remedy.games,
            attacker=remedy.attacker or spec.attack.attacker,
            attacks=_attacks_for(spec, generator, params),
        ),
        targets=targets,
        setup=setup,
        left_out=tuple(sorted({*spec.left_out, *left_out})),
        parent=lineage,
    )
    return new_spec.validate(), new_table, exact


def private_note(spec: RunSpec) -> str | None:
    """For a remedy run trained privately (``--private``), what its guarantee needs and whether
    it holds; ``None`` for any other run."""
    epsilon = (spec.parent or {}).get("remedies", {}).get("private")
    if epsilon is None:
        return None
    if Schema.from_dict(spec.schema).domain_public:
        from privgame.generators.mst import risk_cap

        cap = risk_cap(float(epsilon), float(spec.generator_params.get("delta", 1e-9)))
        proves = (
            f"below t = {spec.threshold:g}, so it proves that no record of D is at risk"
            if cap < spec.threshold
            else f"not below t = {spec.threshold:g}, so it does not prove any record safe at t (a smaller epsilon lowers it)"
        )
        return (
            f"the domain was declared public, so MST's guarantee holds: at epsilon = {float(epsilon):g} "
            f"it caps every record's risk at {cap:.3f}, {proves}; the re-audit measures the risk beside it."
        )
    return (
        "the domain (categories and bounds) was read off the private data, so MST's guarantee does "
        "not hold and caps nothing: audit again with --domain FILE.json (the Data page's 'Public "
        "domain' section) for a proven cap; the re-audit still measures the risk."
    )


def _attacks_for(spec: RunSpec, generator: str, params: dict[str, Any]) -> tuple[str, ...]:
    """The re-audit's portfolio: the parent's, and on a new generator every attack that applies
    to it where the parent used every attack that applied to its own (a remedy never weakens the
    attacker, and MST's tree is what the marginal attack reads)."""
    attacks = tuple(spec.attack.attacks)
    if generator == spec.generator:
        return attacks
    from privgame.settings.attacks import resolve_attacks

    setup = spec.setup.kind
    everything = resolve_attacks("all", setup=setup, generator=spec.generator, params=spec.generator_params)
    if set(attacks) >= set(everything):
        return resolve_attacks("all", setup=setup, generator=generator, params=params)
    usable = resolve_attacks("all", setup=setup, generator=generator, params=params)
    return tuple(name for name in usable if name in attacks)


def _left_out(parent: RunFolder, remedy: Remedy, mode: str, t: float) -> tuple[list[int], int]:
    """The ids a leave-out of ``mode`` takes out of D, and how many of them only the screen chose."""
    left_out = leave_out_ids(parent, mode, t)
    if not remedy.screened:
        return left_out, 0
    # The screen is read once: its ids are those the exact verdicts did not choose.
    extra = screened_leave_out_ids(parent, mode, t)
    return sorted({*left_out, *extra}), len(extra)


def draws_sample(spec: RunSpec) -> bool:
    """Whether the run audits a random sample of D that is not all of D (``random``, or an audit
    plan with a random group): the runs whose leave-out re-audit can keep or redraw it."""
    return spec.targets.mode == "random" or (spec.targets.mode == "plan" and spec.targets.random > 0)


def kept_sample_ids(parent: RunFolder, left_out: Sequence[int]) -> list[int] | None:
    """The records of the parent's random sample that a leave-out of ``left_out`` keeps, or
    ``None`` when a re-audit cannot keep the sample and draws a fresh one: the parent has no
    uniform random sample of its D (no sample, or one kept from its own parent), or every
    sampled record is left out."""
    sampled = _uniform_sample(parent)
    if sampled is None:
        return None
    return sorted(set(sampled) - {int(r) for r in left_out}) or None


def _uniform_sample(parent: RunFolder) -> list[int] | None:
    """The parent's uniform random sample of its D (records with a defined risk), or ``None``."""
    spec = parent.spec()
    if not draws_sample(spec) or spec.targets.sample_ids:
        return None
    records = parent.records()
    risks = records["risk_model_seeded"].to_numpy(float)
    return [int(r) for r in records.loc[group_masks(records, spec)["random"] & ~np.isnan(risks), "record_id"]]


def _kept_sample(
    parent: RunFolder, spec: RunSpec, left_out: list[int]
) -> tuple[TargetSelection, dict[str, int] | None]:
    """The remedy's audit plan with the parent's random sample kept, and what the share estimate
    needs of that sample; the plan with a fresh sample and ``None`` where it cannot be kept."""
    sampled = _uniform_sample(parent) or []
    removed = set(left_out)
    kept = sorted(set(sampled) - removed)
    if not kept:
        return replace(spec.targets, sample_ids=()), None
    outliers = spec.targets.outliers if spec.targets.mode == "plan" else 0
    targets = TargetSelection.plan(outliers=outliers, random=len(kept))
    info = {
        "records_in_d": int(spec.sizes["target"]),
        "sampled": len(sampled),
        "removable": sum(r in removed for r in sampled),
        "left_out": len(left_out),
    }
    return replace(targets, sample_ids=tuple(kept)), info


_STRONGER_WHEN = {"min-leaf": "larger", "epsilon": "smaller", "bins": "smaller"}
"""Which way each ``--generalise`` setting protects more: larger leaves, a smaller privacy budget,
fewer bins."""


def _not_stronger(name: str, value: float, audited: Any) -> list[str]:
    """A problem when ``value`` does not protect more than the audited run's setting: such a
    'remedy' fits the data as closely or more closely, and would only be read as a fix."""
    if not isinstance(audited, (int, float)) or isinstance(audited, bool):
        return []
    way = _STRONGER_WHEN[name]
    if (value > audited) if way == "larger" else (value < audited):
        return []
    return [
        f"--generalise {name}={value:g} is not a remedy: the audited run used {name} {audited:g}, and "
        f"only a {way} value protects more; give a {way} value, or audit that setting with a new "
        "`privgame run`."
    ]


def generalise_choices(spec: RunSpec) -> dict[str, tuple[Any, float]]:
    """The ``--generalise`` settings the run's generator has, each with the audited value and a
    first stronger value to suggest (twice the leaf size, half the budget, half the bins).

    Returns
    -------
    dict
        ``{name: (audited value or None, suggestion)}`` in the order of :data:`GENERALISE_PARAMS`;
        empty for a generator with none of them.
    """
    from privgame.generators import resolve

    cls = resolve(spec.generator)
    accepted = _init_params(cls)
    out: dict[str, tuple[Any, float]] = {}
    for name, key in GENERALISE_PARAMS.items():
        if key not in accepted:
            continue
        audited = spec.generator_params.get(key, _init_default(cls, key))
        number = isinstance(audited, (int, float)) and not isinstance(audited, bool)
        if name == "min-leaf":
            suggestion: float = 2 * int(audited) if number else 20
        elif name == "epsilon":
            suggestion = audited / 2 if number and math.isfinite(audited) else 1.0
        else:
            suggestion = max(2, int(audited) // 2) if number else 5
        out[name] = (audited, suggestion)
    return out


def _init_default(cls: type, key: str) -> Any:
    import inspect

    parameter = inspect.signature(cls.__init__).parameters.get(key)
    return None if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def _init_params(cls: type) -> set[str]:
    import inspect

    return set(inspect.signature(cls.__init__).parameters) - {"self"}


def find_remedy(parent: RunFolder, spec: RunSpec, root: str | Path | None = None) -> RunFolder | None:
    """The run under ``root`` (beside the parent by default) made for the same remedy of the same
    parent, i.e. with the same spec (package versions aside), or None.

    A remedy is made once: asking for it again (a second click, a reload) finds this run, to be
    followed, resumed or read, instead of starting a duplicate that would compete for the cores.
    """
    wanted = {**spec.to_dict(), "versions": None}
    folder_root = Path(root) if root is not None else parent.path.parent
    for path in sorted(folder_root.iterdir()) if folder_root.is_dir() else []:
        if not path.is_dir() or path.is_symlink() or path == parent.path:
            continue
        try:
            other = RunFolder(path).spec()
        except ValueError:  # not a run folder, or a damaged one
            continue
        if other.parent is not None and {**other.to_dict(), "versions": None} == wanted:
            return RunFolder(path)
    return None


def create_remedy(
    parent: RunFolder,
    remedy: Remedy,
    root: str | Path | None = None,
    *,
    planned: tuple[RunSpec, pd.DataFrame, bool] | None = None,
) -> tuple[RunFolder, dict[str, Any]]:
    """Create the remedy run's folder (not yet executed), with the parent's reusable checkpoints.

    Parameters
    ----------
    parent : RunFolder
        A finished run.
    remedy : Remedy
    root : path, optional
        Where the new run folder goes; beside the parent by default.
    planned : tuple, optional
        What :func:`plan_remedy` returned for this parent and remedy, when the caller has it.

    Returns
    -------
    folder : RunFolder
        The new run, ready for :func:`privgame.games.engine.execute`.
    reuse : dict
        ``shadow_out`` (shared checkpoints copied), ``attacks`` (trained attacks copied) and
        ``exact`` (whether anything could be reused: False when the generator or columns change).
    """
    spec, table, exact = plan_remedy(parent, remedy) if planned is None else planned
    folder = create_run(root if root is not None else parent.path.parent, spec, table)
    reuse: dict[str, Any] = {"exact": exact, "shadow_out": 0, "attacks": 0}
    parent_spec = parent.spec()
    # The parent's shared 'out' datasets were made with its own |D| rows: valid when the remedy keeps it.
    sizes_kept = (spec.setup.synthetic_rows or spec.sizes["target"]) == (
        parent_spec.setup.synthetic_rows or parent_spec.sizes["target"]
    )
    if exact and sizes_kept:
        plan = parent.unit_plan()
        if plan is not None:
            folder.write_unit_plan(plan)
            for start in parent.shared_starts("shadow_out"):
                if parent.shared_done("shadow_out", start):
                    folder.save_shared("shadow_out", start, parent.load_shared_chunk("shadow_out", start))
                    reuse["shadow_out"] += 1
        for record_id in parent.finished_targets():
            if record_id in spec.left_out:
                continue
            folder.save_attack(record_id, parent.load_target(record_id)["classifier"])
            reuse["attacks"] += 1
    folder.write_status(remedy_reuse=reuse)
    return folder, reuse


def family(folder: RunFolder) -> list[RunFolder]:
    """Every run beside ``folder`` that shares its family root (the run remedies started from),
    the root first, then in the order they were made (folder names start with the time)."""
    root = (folder.spec().parent or {}).get("root", folder.run_id)
    members = []
    for path in sorted(p for p in folder.path.parent.iterdir() if p.is_dir() and not p.is_symlink()):
        try:
            other = RunFolder(path)
            other_root = (other.spec().parent or {}).get("root", other.run_id)
        except ValueError:
            continue
        if other_root == root:
            members.append(other)
    members.sort(key=lambda f: (f.run_id != root, f.run_id))
    return members


def remedy_runs(parent: RunFolder) -> list[RunFolder]:
    """The remedy runs made from ``parent`` (beside it, their lineage naming it), oldest first."""
    return [m for m in family(parent) if (m.spec().parent or {}).get("run_id") == parent.run_id]


STOPPED_STATES = ("cancelled", "failed", DAMAGED)
"""States of a re-audit that ended before its results: it is resumed from its checkpoints."""


def stopped_remedies(parent: RunFolder) -> list[RunFolder]:
    """The remedy runs of ``parent`` whose re-audit stopped before its end, oldest first.

    Cancelled, failed or damaged re-audits, and those left 'created', 'queued' or 'running' by an
    engine that died or never started (:meth:`~privgame.store.status.StatusFolder.status_is_stale`).
    A re-audit under way or finished is not among them. Each can be resumed from its checkpoints
    (``python -m privgame resume RUN_DIR``, or the same ``remedy`` command again).
    """
    stopped = []
    for child in remedy_runs(parent):
        state = child.status().get("state", "created")
        if state in STOPPED_STATES or (state in ("created", "queued", "running") and child.status_is_stale()):
            stopped.append(child)
    return stopped


@dataclass(frozen=True)
class RemedyEstimate:
    """What a remedy's re-audit will cost on this machine, counted before it starts.

    Attributes
    ----------
    fits : int
        Generator fits the re-audit makes: its plan's, less those the parent's copied checkpoints spare.
    reused_fits : int
        Generator fits of the plan that the parent's checkpoints spare (0 when nothing is reused).
    seconds : float
        Estimated wall-clock seconds with ``workers`` processes (nan when the generator could not
        be timed).
    workers : int
        The worker processes the time is for.
    calibration : Calibration or None
        The timings the estimate was made from (None when the generator could not be timed).
    """

    fits: int
    reused_fits: int
    seconds: float
    workers: int
    calibration: Calibration | None = None

    @property
    def text(self) -> str:
        """The estimate in one sentence, e.g. ``4,201 generator fits, about 25.3 minutes with 2
        worker processes``."""
        reused = f" ({self.reused_fits:,} more reused from the parent run)" if self.reused_fits else ""
        noun = "process" if self.workers == 1 else "processes"
        if not math.isfinite(self.seconds):
            return (
                f"{self.fits:,} generator fits{reused}; no time estimate (the generator could not be timed)"
            )
        text = f"{self.fits:,} generator fits{reused}, {in_words(self.seconds)}"
        text += f" with {self.workers} worker {noun}"
        note = load_note(self.calibration, self.workers) if self.calibration is not None else None
        return f"{text}; {note}" if note else text


def estimate_remedy(
    parent: RunFolder,
    remedy: Remedy,
    *,
    workers: int,
    calibration: Calibration | None = None,
    planned: tuple[RunSpec, pd.DataFrame, bool] | None = None,
) -> RemedyEstimate:
    """The generator fits and the time of the remedy's re-audit, before anything is written.

    The same estimate as a run's on the Evaluate page and ``privgame run``
    (:func:`privgame.games.estimate.breakdown` on the remedy's spec and table), less what the
    parent's checkpoints that :func:`create_remedy` copies spare: the 'in' shadow datasets, their
    features and the trained attack of every audited record whose attack is reused, and the
    shared 'out' shadow datasets.

    Parameters
    ----------
    parent : RunFolder
        A finished run.
    remedy : Remedy
    workers : int
        Worker processes the re-audit will use.
    calibration : Calibration, optional
        A calibration of the remedy's spec made earlier; measured now when not given (seconds).
    planned : tuple, optional
        What :func:`plan_remedy` returned for this parent and remedy, when the caller has it.

    Raises
    ------
    ParameterError
        For a remedy that cannot be made (see :func:`plan_remedy`).
    """
    from privgame.core.errors import PrivgameError
    from privgame.games.context import build_context, plan_summary

    spec, table, exact = plan_remedy(parent, remedy) if planned is None else planned
    workers = max(1, int(workers))
    _, targets = build_context(spec, table)
    attacks, shared = _reused_work(parent, spec, exact, [int(r) for r in targets])
    half_shadow = spec.attack.n_shadow // 2
    reused_fits = attacks * half_shadow + shared
    try:
        cal = calibration if calibration is not None else calibrate(spec, table, workers=workers)
        parts = breakdown(spec, table, workers=workers, calibration=cal)
    except PrivgameError:
        raise
    except Exception:  # the estimate is advice: a generator that cannot be timed fails in the run
        total = int(plan_summary(spec, len(targets), table=table)["total_fits"])
        return RemedyEstimate(max(0, total - reused_fits), reused_fits, float("nan"), workers)
    shadow = cal.fit_sample if cal.shadow_fit_sample is None else cal.shadow_fit_sample
    parts = replace(
        parts,
        generator=max(0.0, parts.generator - reused_fits * shadow),
        features=max(0.0, parts.features - attacks * spec.attack.n_shadow * cal.features),
    )
    return RemedyEstimate(max(0, parts.total_fits - reused_fits), reused_fits, parts.seconds, workers, cal)


def _reused_work(parent: RunFolder, spec: RunSpec, exact: bool, targets: list[int]) -> tuple[int, int]:
    """The trained attacks and the shared 'out' shadow fits :func:`create_remedy` copies from the
    parent for the remedy ``spec`` (nothing unless the parent's work is exactly valid)."""
    parent_spec = parent.spec()
    sizes_kept = (spec.setup.synthetic_rows or spec.sizes["target"]) == (
        parent_spec.setup.synthetic_rows or parent_spec.sizes["target"]
    )
    if not (exact and sizes_kept):
        return 0, 0
    finished = set(parent.finished_targets()) - set(spec.left_out)
    attacks = len(finished.intersection(targets))
    plan = parent.unit_plan()
    if plan is None:
        return attacks, 0
    half, size = spec.attack.n_shadow // 2, int(plan["shadow_out"])
    starts = [s for s in parent.shared_starts("shadow_out") if parent.shared_done("shadow_out", s)]
    return attacks, sum(max(0, min(s + size, half) - s) for s in starts)
