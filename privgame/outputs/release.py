"""The release: the audited generator, with the audited parameters, trained on exactly the audited D.

:func:`make_release` refuses to release when anything differs from the audit: a run that is not
finished, a run table whose D no longer has the audited fingerprint, a table the owner names
(``data``) that is not the audited one, or generator settings that differ from the audited ones.
It then fits the generator on D with the stream ``(seed, 0, Role.RELEASE)`` and samples the
synthetic table, so the same run and seed always give the same bytes.

The *release card* (``<file>.card.json``) records what the release is and what its audit found:
the fingerprints of D and of the population part, the generator and its parameters, the run id,
the set-up and the audit plan, the verdict at the threshold, and privgame's version.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.csvsafe import csv_safe
from privgame.core.errors import ParameterError, ReleaseError
from privgame.core.parameters import check_threshold
from privgame.core.seeding import Role, stream
from privgame.data import Dataset, decode, encode, fingerprint_table, prepare_table
from privgame.data.schema import Schema
from privgame.games.audit import audit_summary, describe_setup, records_at, run_summary
from privgame.games.plan import run_split
from privgame.games.threat import describe
from privgame.generators import create
from privgame.outputs.files import check_output_path, write_output
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import RunFolder, json_bytes

__all__ = [
    "NOT_SAFE",
    "Release",
    "card_path",
    "check_output_paths",
    "columns_not_released",
    "columns_not_released_text",
    "make_release",
    "max_release_rows",
    "not_safe_ids",
    "release_card",
    "verdict_text",
    "write_release",
]

CARD_SUFFIX = ".card.json"


@dataclass(frozen=True, eq=False)
class Release:
    """A synthetic table and its release card.

    Attributes
    ----------
    table : DataFrame
        The synthetic rows (the used columns; excluded columns such as identifiers are never
        released).
    card : dict
        The release card (see :func:`release_card`).
    csv : bytes
        The table as written: UTF-8 CSV, ``\\n`` line ends, spreadsheet-safe text cells.
    """

    table: pd.DataFrame
    card: dict[str, Any]
    csv: bytes


def _table_differences(audited: pd.DataFrame, given: pd.DataFrame) -> list[str]:
    """What differs between the audited table and the one given, in sentences."""
    out: list[str] = []
    a_cols, g_cols = [str(c) for c in audited.columns], [str(c) for c in given.columns]
    if missing := [c for c in a_cols if c not in g_cols]:
        out.append(f"columns removed since the audit: {missing}.")
    if added := [c for c in g_cols if c not in a_cols]:
        out.append(f"columns added since the audit: {added}.")
    if len(audited) != len(given):
        out.append(f"the table has {len(given):,} rows; the audited one had {len(audited):,}.")
    common = [c for c in a_cols if c in g_cols]
    if common:
        a_rows = pd.util.hash_pandas_object(audited[common].astype(str), index=False)
        g_rows = pd.util.hash_pandas_object(given[common].astype(str), index=False)
        only_given = int((~g_rows.isin(set(a_rows.to_numpy()))).sum())
        only_audited = int((~a_rows.isin(set(g_rows.to_numpy()))).sum())
        if only_given or only_audited:
            out.append(
                f"{only_given:,} rows of the table are not in the audited data, and {only_audited:,} "
                "audited rows are not in the table."
            )
        elif not out:
            out.append("the same rows, in a different order or with different value types.")
    return out


def _generator_differences(
    spec: RunSpec, generator: str | None, params: Mapping[str, Any] | None
) -> list[str]:
    out: list[str] = []
    if generator is not None and generator != spec.generator:
        out.append(f"the generator is {generator!r}; the audit used {spec.generator!r}.")
    for key, value in dict(params or {}).items():
        audited = spec.generator_params.get(key)
        same = audited == value or (
            isinstance(audited, float) and isinstance(value, float) and math.isclose(audited, value)
        )
        if not same:
            shown = "its default" if key not in spec.generator_params else repr(audited)
            out.append(f"{key} = {value!r}; the audit used {shown}.")
    return out


def _audited_d(folder: RunFolder, spec: RunSpec) -> tuple[pd.DataFrame, np.ndarray]:
    table = folder.load_table()
    problems = []
    if fingerprint_table(table) != spec.data_fingerprint:
        problems.append("the run's stored table no longer has the audited fingerprint.")
    d = run_split(spec, len(table)).target
    recorded = spec.setup.data_fingerprint
    if recorded is not None and fingerprint_table(table.iloc[d].reset_index(drop=True)) != recorded:
        problems.append("the audited D recomputed from the run's table has a different fingerprint.")
    if problems:
        raise ReleaseError(
            f"Run {folder.run_id} cannot be released: its data changed after the audit. Audit the "
            "data again.",
            problems,
        )
    return table, d


def _check_data(spec: RunSpec, table: pd.DataFrame, d: np.ndarray, data: Dataset) -> None:
    """Refuse unless ``data`` is the table that was audited (its D part, with a population)."""
    schema = Schema.from_dict(spec.schema)
    names = [c.name for c in schema.columns]
    given = data.table
    if set(names) <= {str(c) for c in given.columns}:
        given = prepare_table(given[names], schema).table
    if spec.setup.kind == "release" and spec.setup.population == "table":
        audited = table.iloc[d].reset_index(drop=True)
        expected = spec.setup.data_fingerprint
    else:
        audited = table
        expected = spec.data_fingerprint
    if fingerprint_table(given) == expected:
        return
    raise ReleaseError(
        f"{data.source_name} is not the table that was audited, so the audit says nothing about a "
        "release trained on it. Audit this table, or release from the audited one.",
        _table_differences(audited, given) or ["its contents differ from the audited table."],
    )


def make_release(
    folder: RunFolder,
    *,
    rows: int | None = None,
    seed: int | None = None,
    data: Dataset | None = None,
    generator: str | None = None,
    generator_params: Mapping[str, Any] | None = None,
    threshold: float | None = None,
    accept_risk: bool = False,
) -> Release:
    """Train the audited generator on the audited D and sample the synthetic release.

    Parameters
    ----------
    folder : RunFolder
        A finished audit.
    rows : int, optional
        Synthetic rows; |D| by default.
    seed : int, optional
        The release's seed; the run's root seed by default.
    data : Dataset, optional
        The table the owner means to release from; refused unless it is the audited one.
    generator, generator_params : optional
        Settings the owner means to release with; refused unless they are the audited ones.
    threshold : float, optional
        The high-risk threshold of the card's verdict; the run's by default.
    accept_risk : bool, default False
        Release although audited records are at risk at that threshold. Without it such a
        release is refused, naming the records and the fix; with it the card records the choice.

    Raises
    ------
    RunError
        When the run is not finished.
    ReleaseError
        When the table or the generator settings differ from the audited ones, listing each
        difference; or when records are at risk and ``accept_risk`` is not given.
    ParameterError
        For rows below 1 or a negative seed.
    """
    folder.require_done()
    spec = folder.spec()
    problems = _generator_differences(spec, generator, generator_params)
    if problems:
        raise ReleaseError(
            "The generator settings differ from the audited ones, so the audit says nothing about "
            "this release. Release with the audited settings, or audit the new ones.",
            problems,
        )
    table, d = _audited_d(folder, spec)
    if data is not None:
        _check_data(spec, table, d, data)
    # A leave-out remedy audited releases of its parent's size (``synthetic_rows``).
    n = (spec.setup.synthetic_rows or len(d)) if rows is None else rows
    seed = spec.seed if seed is None else seed
    bad = []
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        bad.append(f"--rows must be a whole number of at least 1; got {n!r}.")
    elif n > (most := max_release_rows(len(table.columns))):
        bad.append(
            f"--rows {n:,} would need more memory than this machine has; ask for at most {most:,} rows "
            "(or release in parts with different --seed values)."
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        bad.append(f"--seed must be a non-negative whole number; got {seed!r}.")
    if bad:
        raise ParameterError("The release settings are not valid.", bad)
    t = spec.threshold if threshold is None else check_threshold(threshold)
    unsafe = not_safe_ids(folder, t)
    at_risk = [r for verdict, ids in unsafe.items() for r in ids]
    if at_risk and not accept_risk:
        undecided = bool(unsafe.get("undecided"))
        leave_out = "at-risk-and-undecided" if undecided else "at-risk"
        decide = (
            f"; or decide the undecided ones with more runs: python -m privgame extend {folder.path} "
            "--n-eval N"
            if undecided
            else ""
        )
        inferred = bool(unsafe.get(INFERENCE_AT_RISK) or unsafe.get(INFERENCE_UNDECIDED))
        raise ReleaseError(
            f"{len(at_risk):,} {'' if unsafe.get(SCREENED_AT_RISK) else 'audited '}"
            f"record{'s are' if len(at_risk) > 1 else ' is'} not shown safe at "
            f"t = {t:g} ({_counted(unsafe)}): this release may let the audit's attacker single "
            f"{'them' if len(at_risk) > 1 else 'it'} out"
            + (" or infer a secret" if inferred else "")
            + ". Nothing was written.",
            [
                *(f"{verdict}: {_ids(ids)}." for verdict, ids in unsafe.items() if ids),
                f"fix them first: python -m privgame remedy {folder.path} --leave-out {leave_out} (or "
                f"generalise), then release the remedy's run{decide}.",
                *(
                    [
                        "for a secret: generalise it (remedy --merge-rare COLUMN:N, or --bin COLUMN:K), or "
                        "train the release privately (remedy --private EPSILON); or decide the undecided "
                        "ones with more runs (extend --n-eval N)."
                    ]
                    if inferred
                    else []
                ),
                "or release anyway, knowingly: --accept-risk (the Release page's confirmation); the "
                "release card records that you did.",
            ],
        )
    schema = Schema.from_dict(spec.schema)
    X = encode(table, schema)
    model = create(spec.generator, **spec.generator_params)
    synthetic = decode(model.fit_sample(X[d], schema, n, rng=stream(seed, 0, Role.RELEASE)), schema)
    csv = csv_safe(synthetic).to_csv(index=False, lineterminator="\n").encode("utf-8")
    card = release_card(
        folder,
        rows=n,
        seed=seed,
        csv_sha256=hashlib.sha256(csv).hexdigest(),
        metadata=dict(model.metadata),
        threshold=threshold,
    )
    # Whether the owner released knowingly with records not shown safe (None: every one was).
    card["audit"]["risk_accepted"] = (
        {"accepted": True, "run_id": folder.run_id, "not_shown_safe": {v: len(i) for v, i in unsafe.items()}}
        if at_risk
        else None
    )
    return Release(table=synthetic, card=card, csv=csv)


NOT_SAFE: tuple[str, ...] = ("at risk", "undecided", "attack failed")
"""The verdicts that do not show a record safe: a release with any of them asks for a yes."""


def not_safe_ids(folder: RunFolder, threshold: float) -> dict[str, list[int]]:
    """The ids of a finished run's records at ``threshold`` by verdict, for each verdict that does
    not show a record safe (:data:`NOT_SAFE`); in a run that played the inference game, also the
    other records at risk of inference or undecided for it on some secret
    (:data:`INFERENCE_AT_RISK`, :data:`INFERENCE_UNDECIDED`); in a run that screened every record,
    also ``screened at risk``: the other records the screen puts at risk."""
    raw = folder.records()
    records = records_at(raw, threshold)
    verdict = records["verdict_model_seeded"].astype(str)
    out = {v: sorted(int(r) for r in records.loc[verdict == v, "record_id"]) for v in NOT_SAFE}
    # A run that played the inference game: the records not shown safe of having a secret
    # inferred, among those membership shows safe.
    counted = {r for ids in out.values() for r in ids}
    from privgame.games.inference import verdict_columns

    inference = verdict_columns(list(records.columns))
    for key, verdicts in ((INFERENCE_AT_RISK, ("at risk",)), (INFERENCE_UNDECIDED, ("undecided",))):
        if inference:
            flagged = records[inference].astype(str).isin(verdicts).any(axis=1)
            out[key] = sorted(int(r) for r in records.loc[flagged, "record_id"] if int(r) not in counted)
            counted |= set(out[key])
    if folder.has_screen():
        from privgame.games.audit import screen_verdicts

        screened = folder.screen()
        flagged = screen_verdicts(raw, folder.spec(), screened, threshold) == "at risk"
        counted = {r for ids in out.values() for r in ids}
        out[SCREENED_AT_RISK] = sorted(
            int(r) for r in screened.loc[flagged, "record_id"] if int(r) not in counted
        )
    return out


SCREENED_AT_RISK = "screened at risk"
"""The key of :func:`not_safe_ids` for the records only the screen judged, and put at risk."""
INFERENCE_AT_RISK = "at risk of inference"
"""The key of :func:`not_safe_ids` for the records membership shows safe, at risk of inference."""
INFERENCE_UNDECIDED = "undecided for inference"
"""The key of :func:`not_safe_ids` for the records membership shows safe, undecided for inference."""


def _ids(ids: list[int]) -> str:
    shown = ", ".join(str(r) for r in ids[:20]) + (", ..." if len(ids) > 20 else "")
    return f"record{'s' if len(ids) > 1 else ''} {shown}"


def _counted(unsafe: Mapping[str, list[int]]) -> str:
    return ", ".join(f"{len(ids):,} {verdict}" for verdict, ids in unsafe.items() if ids)


def verdict_text(summary: Mapping[str, Any]) -> str:
    """The release's one-sentence answer (see :func:`privgame.games.audit.answer`)."""
    found = summary.get("answer")
    if found:
        return str(found["text"])
    at_risk, audited = summary.get("at_risk_model_seeded", 0), summary.get("records", 0)
    return f"{at_risk} of {audited} audited records are at risk."


def columns_not_released(spec: RunSpec) -> list[dict[str, str]]:
    """The columns of the owner's table that the released file leaves out, each with why.

    The generator is trained on the used columns only: identifier-like columns (unique on every
    row), constant ones (a single value) and the columns the owner excluded are never generated,
    so the release does not have them. The card, the Release page and ``release`` say so.

    Returns
    -------
    list of dict
        ``{"name", "reason"}`` in the table's order.
    """
    return [
        {"name": str(column["name"]), "reason": str(column.get("reason") or "excluded")}
        for column in spec.schema.get("columns", [])
        if column.get("role") == "excluded"
    ]


def columns_not_released_text(spec: RunSpec) -> str | None:
    """One sentence naming the columns the release leaves out and why, or None when none is."""
    left = columns_not_released(spec)
    if not left:
        return None
    named = "; ".join(f"{c['name']} ({c['reason']})" for c in left)
    return (
        f"The released file leaves out {len(left)} column(s) of the table, which the generator "
        f"is not trained on: {named}."
    )


def release_card(
    folder: RunFolder,
    *,
    rows: int,
    seed: int,
    csv_sha256: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    threshold: float | None = None,
) -> dict[str, Any]:
    """The release card: what was released, from what, with which audit and verdict.

    Returns
    -------
    dict
        JSON-ready: ``privgame_version``, ``run_id``, ``release`` (rows, seed, the CSV's
        SHA-256), ``generator`` (name, parameters, metadata), ``data`` (fingerprints and rows of
        D and of the population part, the set-up in words), ``audit`` (plan, attack settings,
        threshold, records and groups at risk, the share estimate) and ``verdict`` (a sentence).
    """
    from privgame import _version

    spec = folder.spec()
    t = spec.threshold if threshold is None else float(threshold)
    summary = run_summary(folder, t)
    setup = spec.setup
    records = folder.records()
    screened = folder.screen() if folder.has_screen() else None
    audit = audit_summary(records, spec, t, screened=screened)

    return {
        "privgame_version": _version.__version__,
        "run_id": folder.run_id,
        "release": {"rows": rows, "seed": seed, "csv_sha256": csv_sha256},
        "remedy_of": dict(spec.parent) if spec.parent else None,
        "generator": {
            "name": spec.generator,
            "params": spec.to_dict()["generator_params"],
            "metadata": dict(metadata or {}),
        },
        "data": {
            "name": spec.data_name,
            "setup": setup.kind,
            "population": setup.population,
            "population_name": setup.population_name,
            "d_rows": spec.sizes["target"],
            "left_out": list(spec.left_out),
            "d_fingerprint": setup.data_fingerprint,
            "population_rows": setup.population_rows if setup.kind == "release" else None,
            "population_fingerprint": setup.population_fingerprint,
            "run_table_fingerprint": spec.data_fingerprint,
            "in_words": describe_setup(spec),
            "columns_not_released": columns_not_released(spec),
        },
        "audit": {
            "plan": audit["audit_plan"],
            "attacker": spec.attack.attacker,
            "attacker_in_words": describe(spec.attack.attacker),
            "n_shadow": spec.attack.n_shadow,
            "n_eval": spec.attack.n_eval,
            "threshold": t,
            "records_audited": summary.get("records"),
            "at_risk_model_seeded": summary.get("at_risk_model_seeded"),
            "at_risk_traditional": summary.get("at_risk_traditional"),
            "groups": audit["groups"],
            "share_at_risk": audit["share_at_risk"],
            # Every record of D screened: its verdicts, the agreement with the exact game on the
            # random sample, and the ids it screens at risk (None: a run without the screen).
            "screen": _screen_of_release(audit.get("screen"), screened, records, spec, t),
            "verdicts": audit["answer"]["counts"],
            # The verdicts read as a set: Holm's and Benjamini-Hochberg's records at risk (None: a
            # run from before the records kept their variance).
            "set_level": audit.get("set_level"),
            # A differentially private generator's cap on every record's risk (None: no proven cap).
            "guarantee": summary.get("guarantee"),
            "traditional_flags": audit["answer"]["traditional_flags"],
            # The release's similarity checks beside the attack (None: a run from before them).
            "similarity": _similarity_of_release(summary.get("similarity"), rows=rows, seed=seed),
            # The per-record attribute-inference game (None: no secret column was named).
            "inference": _inference_of_release(summary.get("inference")),
            # anonymeter's three risks of the release, once measured (None: not measured).
            "anonymity": summary.get("anonymity"),
            # "model-seeded": the traditional game was not run, so its figures above are null.
            "games": spec.attack.games,
            # The records whose verdict is "at risk", as every output counts them.
            "at_risk_record_ids": [
                int(r)
                for r in records_at(records, t).loc[
                    lambda frame: frame["verdict_model_seeded"].astype(str) == "at risk", "record_id"
                ]
            ],
        },
        "verdict": verdict_text(summary),
        "note": (
            "The verdict is this attack's (TAPAS) success against this release's generator and data, "
            f"played by {describe(spec.attack.attacker)} and "
            "measured by the model-seeded game: an estimate, not a guarantee. A record is at risk when "
            "its risk's interval lies above t, not at risk when it lies at or below t, undecided when "
            "it contains t, and the attack failed when it lies at or below 0.5 (a failed attack is "
            "never read as safety). Each interval's 5% error is spent over the record's looks, so it "
            "holds however often more runs were added; records are tested one by one."
        ),
    }


def _inference_of_release(inference: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The release card's part on attribute inference: per secret, the verdicts, the largest gain,
    the records at risk and the aggregate gap, and the sentences the report prints."""
    if not inference:
        return None
    from privgame.games.inference import inference_texts

    return {
        "secrets": list(inference.get("secrets") or ()),
        "threshold": inference.get("threshold"),
        "by_secret": inference.get("by_secret"),
        "aggregate": inference.get("aggregate"),
        "text": inference_texts(inference),
    }


def _screen_of_release(
    screen: Mapping[str, Any] | None, screened: Any, records: Any, spec: Any, threshold: float
) -> dict[str, Any] | None:
    """The release card's part on the screen of every record."""
    if screen is None or screened is None:
        return None
    from privgame.games.audit import screen_verdicts
    from privgame.games.screen import settings_text

    check = screen.get("agreement") or None
    verdict = screen_verdicts(records, spec, screened, threshold)
    return {
        "settings": {
            "shadows": spec.screen.shadows,
            "swap": spec.screen.swap,
            "confirm_top": spec.screen.confirm_top,
        },
        "in_words": settings_text(spec.screen),
        "records": screen["records"],
        "verdicts": screen["counts"],
        "agreement": None if check is None else {k: v for k, v in check.items() if k != "disagree"},
        "disagree": None if check is None else check["disagree"],
        "text": screen["text"],
        "at_risk_record_ids": [int(r) for r in screened.loc[verdict == "at risk", "record_id"]],
    }


def _similarity_of_release(
    similarity: Mapping[str, Any] | None, *, rows: int, seed: int
) -> dict[str, Any] | None:
    """The audit's similarity figures for the card, saying whether they were measured on this
    very release (the run's seed and rows) or on the release the run audits by default."""
    if not similarity:
        return None
    out = dict(similarity)
    measured = (similarity.get("seed"), similarity.get("synthetic_rows"))
    out["measured_on_this_release"] = measured == (seed, rows)
    if not out["measured_on_this_release"] and similarity.get("table") is not None:
        out["text"] = (
            f"{similarity['text']} (measured on the release sampled with the run's seed "
            f"{measured[0]} and {measured[1]:,} rows, not on this one.)"
        )
    return out


def card_path(output: str | os.PathLike[str]) -> Path:
    """``synthetic.csv`` -> ``synthetic.card.json``."""
    path = Path(output)
    return path.with_name(path.stem + CARD_SUFFIX)


def write_release(release: Release, output: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write the synthetic table and its card next to it, owner-readable only (0600), atomically.

    Both go through :func:`privgame.outputs.files.write_output`: each path must be a new path or an
    existing regular file (never a folder, pipe or device), in a folder that exists.

    Returns
    -------
    (Path, Path)
        The table's path and the card's.

    Raises
    ------
    ParameterError
        When either path is refused; nothing is written then.
    """
    path = Path(output)
    card = card_path(path)
    check_output_paths(path)
    card_data = {**release.card, "release": {**release.card["release"], "file": path.name}}
    write_output(path, release.csv, what="the release")
    write_output(card, json_bytes(card_data), what="the release card")
    return path, card


def check_output_paths(
    output: str | os.PathLike[str],
    *,
    inputs: Sequence[str | os.PathLike[str] | None] = (),
    audited_name: str | None = None,
) -> None:
    """Refuse a release path (or its card's) that is not a new path or a regular file, that is one
    of the release's ``inputs`` (the table it is checked against, the run folder), or that lies
    inside a run folder, where it could replace the run's checksummed files.

    Raises
    ------
    ParameterError
        See :func:`privgame.outputs.files.check_output_path`; and for an output that is an input or lies
        inside a run folder, naming it and the fix.
    """
    path = Path(output)
    sources = [Path(p).resolve() for p in inputs if p is not None]
    for what, target in (("the release", path), ("the release card", card_path(path))):
        resolved = target.resolve()
        for source in sources:
            if resolved == source or source in resolved.parents:
                raise ParameterError(
                    f"Cannot write {what} to {target}: it is {'' if resolved == source else 'inside '}"
                    f"{source}, which the release reads; writing there would replace it. Give a file "
                    "name outside the data and the run folder."
                )
    if audited_name and path.name == audited_name and path.exists():
        raise ParameterError(
            f"Cannot write the release to {path}: a file there has the name of the audited table "
            f"({audited_name}), which the release would replace. Give another file name (or move "
            "that file away first if it is not the audited table)."
        )
    check_output_path(path, what="the release")
    check_output_path(card_path(path), what="the release card")


RELEASE_BYTES_PER_CELL = 64
"""Memory a release needs per synthetic cell, about: the encoded table, the decoded one and its CSV."""


def max_release_rows(columns: int, *, memory: int | None = None) -> int:
    """The most synthetic rows a release of ``columns`` columns may ask for: half of the
    machine's memory (``memory`` bytes; the physical memory by default) at
    :data:`RELEASE_BYTES_PER_CELL` bytes a cell."""
    if memory is None:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(1, int(memory // 2 // (RELEASE_BYTES_PER_CELL * max(1, columns))))
