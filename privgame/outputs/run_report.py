"""What a run's results are turned into for people: the high-risk list, safe exports, a record's
profile and a self-contained HTML report.

* :func:`high_risk` lists the records whose model-seeded risk exceeds the high-risk threshold.
* :func:`to_bytes` writes a table as CSV, JSON or Parquet. CSV is always passed through
  :func:`csv_safe` first: a spreadsheet would run a cell that starts with ``=``, ``+``, ``-`` or
  ``@`` as a formula, and the cells come from user data (CSV injection).
* :func:`record_profile` sets a record's values beside the target dataset's typical values and
  lists its nearest neighbours in D.
* :func:`html_report` writes one HTML page holding the run's settings, the Table-1 style summary
  and the four charts of Section 5 of the paper, with plotly.js inlined: it opens offline and
  loads nothing from the network.
"""

from __future__ import annotations

import html
import io
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from privgame.core import metrics
from privgame.core.csvsafe import csv_safe, neutralise_cell
from privgame.core.defaults import EXPORT_FORMATS, NOT_RUN
from privgame.core.errors import ParameterError, RunError
from privgame.core.numbers import number_text
from privgame.core.parameters import check_threshold
from privgame.core.records import normalise_records, value_columns, value_name
from privgame.data.encoding import encode
from privgame.data.schema import CATEGORICAL, Schema
from privgame.games.audit import (
    OUT_WORLD_TEXT,
    guarantee_answer,
    not_played_reason,
    proven_answer,
    records_at,
)
from privgame.games.game import GAMES, TRADITIONAL, Game, played
from privgame.games.inference import verdict_columns
from privgame.games.plan import run_split
from privgame.settings.targets import nearest_neighbours
from privgame.store.folders import RunFolder

__all__ = [
    "EXPORT_FORMATS",
    "EXPORT_TABLES",
    "RESULT_COLUMNS",
    "RISK_DECIMALS",
    "csv_safe",
    "export_table",
    "high_risk",
    "html_report",
    "neutralise_cell",
    "record_profile",
    "to_bytes",
]

_GAME_PREFIXES = tuple(game.column() for game in GAMES)
_RISK_SUFFIXES = ("", "_low", "_high", "_tpr_at_fpr_0.01", "_tpr_at_fpr_0.1")
RESULT_COLUMNS: tuple[str, ...] = (
    "record_id",
    *(p + s for p in _GAME_PREFIXES for s in _RISK_SUFFIXES),
    "difference",
    "outlier_score",
)
"""Columns of a run's records table that are results, not the record's own values."""

_HIGH_RISK_LEAD = (
    "record_id",
    "audit_group",
    "risk_model_seeded",
    "risk_model_seeded_low",
    "risk_model_seeded_high",
    "risk_traditional",
    "risk_traditional_low",
    "risk_traditional_high",
    "difference",
    "missed_by_traditional",
    "verdict_model_seeded",
    "verdict_traditional",
)
_REPORT_HIGH_RISK_ROWS = 50

RISK_DECIMALS = 4
"""Decimals of the risks, their bounds and their difference in CSV and JSON exports."""

EXPORT_TABLES: tuple[str, ...] = ("high-risk", "records")
"""The tables :func:`export_table` makes."""


# --------------------------------------------------------------------------------------------
# High-risk records
# --------------------------------------------------------------------------------------------


def high_risk(records: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """The records at high risk in the model-seeded game, riskiest first.

    Parameters
    ----------
    records : DataFrame
        A run's per-record results (:meth:`privgame.store.folders.RunFolder.records`).
    threshold : float
        The high-risk threshold ``t``, strictly between 0.5 and 1.

    Returns
    -------
    DataFrame
        The records *at risk* at ``t``: their model-seeded verdict (the interval lies above
        t; :func:`privgame.core.metrics.verdicts`), the one meaning of "at risk" in every output.
        Sorted by ``risk_model_seeded`` in descending order (ties by ``record_id``), with a fresh
        index. Columns: ``record_id``, ``audit_group``, the model-seeded risk and its bounds, the
        traditional risk and its bounds, ``difference``, ``missed_by_traditional`` (the
        traditional game does not put the record at risk), the verdicts, then every other column
        of ``records`` (TPR at low FPR, outlier score, the record's values ``value:<name>``) in
        their order. A run that played the inference game (:mod:`privgame.games.inference`) also
        lists the records at risk of inference, and says of each what it is at risk of
        (``at_risk_of``: "membership", "inference of <column>", or both).

    Raises
    ------
    ParameterError
        If ``records`` lacks the risk columns or ``t`` is outside [0, 1].
    """
    t = check_threshold(threshold)
    out = _with_missed(records, t)
    if "verdict_model_seeded" in out.columns:
        membership = (out["verdict_model_seeded"].astype(str) == "at risk").to_numpy()
    else:  # a table written before verdicts existed
        membership = out["risk_model_seeded"].to_numpy(np.float64) > t
    inference = _inference_at_risk(out)
    keep = membership | np.any(np.stack(list(inference.values()) or [np.zeros(len(out), bool)]), axis=0)
    if inference:
        reasons = [
            "; ".join(
                (["membership"] if membership[i] else [])
                + [f"inference of {secret}" for secret, mask in inference.items() if mask[i]]
            )
            for i in range(len(out))
        ]
        out = out.assign(at_risk_of=reasons)
        first = [c for c in ("record_id", "audit_group", "at_risk_of") if c in out.columns]
        out = out[first + [c for c in out.columns if c not in first]]
    out = out.loc[keep]
    return out.sort_values(
        ["risk_model_seeded", "record_id"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)


def _inference_at_risk(records: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per secret column, which records the inference game puts at risk (none when not played)."""
    out: dict[str, np.ndarray] = {}
    for column in verdict_columns(list(records.columns)):
        tail = column.removeprefix("verdict_inference")
        names = records.get(f"inference_secret{tail}")
        secret = str(names.iloc[0]) if names is not None and len(names) else tail.lstrip("_") or "secret"
        out[secret] = (records[column].astype(str) == "at risk").to_numpy()
    return out


def _with_missed(records: pd.DataFrame, t: float) -> pd.DataFrame:
    """``records_at(records, t)`` with ``missed_by_traditional``, the result columns first.

    ``missed_by_traditional`` is true for a record at risk (its model-seeded verdict) that the
    traditional game does not put at risk (its traditional verdict is not *at risk*). Tables
    written before verdicts existed compare the point risks with t instead.
    """
    missing = [c for c in ("record_id", "risk_model_seeded", "risk_traditional") if c not in records.columns]
    if missing:
        raise ParameterError(
            f"The records table lacks the columns {missing}; pass the table of a finished run "
            "(RunFolder.records())."
        )
    out = records_at(records, t)
    ms = pd.to_numeric(out["risk_model_seeded"], errors="coerce").to_numpy(np.float64)
    tr = pd.to_numeric(out["risk_traditional"], errors="coerce").to_numpy(np.float64)
    out["risk_model_seeded"] = ms
    if "verdict_traditional" in out.columns and len(out) and (out["verdict_traditional"] == "not run").all():
        # A re-audit without the traditional game: it missed nothing and caught nothing.
        out["missed_by_traditional"] = pd.Series(["not run"] * len(out), index=out.index, dtype=object)
    elif "verdict_model_seeded" in out.columns and "verdict_traditional" in out.columns:
        out["missed_by_traditional"] = (out["verdict_model_seeded"].astype(str) == "at risk") & (
            out["verdict_traditional"].astype(str) != "at risk"
        )
    else:
        out["missed_by_traditional"] = (np.nan_to_num(ms, nan=-1.0) > t) & ~(tr > t)
    lead = [c for c in _HIGH_RISK_LEAD if c in out.columns]
    return out[lead + [c for c in out.columns if c not in lead]]


def export_table(records: pd.DataFrame, what: str, threshold: float) -> pd.DataFrame:
    """The table of one export of a run: the CLI's ``export`` and the Export page both use it.

    Parameters
    ----------
    records : DataFrame
        A run's per-record results (:meth:`privgame.store.folders.RunFolder.records`).
    what : {"high-risk", "records"}
        ``high-risk``: :func:`high_risk`. ``records``: every evaluated record in the run's order,
        with its verdicts at ``threshold`` and ``missed_by_traditional``.
    threshold : float
        The high-risk threshold ``t``, strictly between 0.5 and 1.

    Returns
    -------
    DataFrame
        Both tables have the same columns in the same order: ``record_id``, ``audit_group``,
        the risks and their bounds, ``difference``, ``missed_by_traditional``, the verdicts,
        then the other columns of ``records`` in their order (the values last).

    Raises
    ------
    ParameterError
        For another ``what``, a ``t`` outside [0, 1], or a table without the risk columns.
    """
    if what == "high-risk":
        return high_risk(records, threshold)
    if what == "records":
        return _with_missed(records, check_threshold(threshold)).reset_index(drop=True)
    raise ParameterError(f"Unknown table {what!r}; use one of {list(EXPORT_TABLES)}.")


# --------------------------------------------------------------------------------------------
# Safe exports
# --------------------------------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


def _rounded_risks(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its risk, bound and difference columns rounded to :data:`RISK_DECIMALS`."""
    risky = [
        c
        for c in df.columns
        if (str(c).startswith((*_GAME_PREFIXES, "screen_")) or c == "difference")
        and pd.api.types.is_float_dtype(df[c])
    ]
    if not risky:
        return df
    out = df.copy()
    out[risky] = out[risky].round(RISK_DECIMALS)
    return out


def to_bytes(df: pd.DataFrame, fmt: str) -> bytes:
    """Serialise a table for download.

    Parameters
    ----------
    df : DataFrame
        The table (its index is not written).
    fmt : {"csv", "csv-excel", "json", "parquet"}
        ``csv``: UTF-8, ``,``-separated, ``\\n`` line ends, always neutralised with
        :func:`csv_safe`. ``csv-excel``: the same for spreadsheets set to a European locale: a
        UTF-8 byte-order mark (so accents survive), ``;`` between cells and a decimal comma.
        ``json``: a list of one object per row (pandas' ``records`` orient), UTF-8, with
        ``null`` for missing or non-finite numbers. In these three the risks, their bounds and
        their difference are rounded to :data:`RISK_DECIMALS` decimals; other numbers are
        exact. ``parquet``: pyarrow, every number exact.

    Returns
    -------
    bytes

    Raises
    ------
    ParameterError
        If ``fmt`` is not one of the formats.
    """
    if fmt in ("csv", "csv-excel", "json"):
        df = _rounded_risks(df)
    if fmt == "csv":
        return csv_safe(df).to_csv(index=False, lineterminator="\n").encode("utf-8")
    if fmt == "csv-excel":
        text = csv_safe(df).to_csv(index=False, lineterminator="\r\n", sep=";", decimal=",")
        return text.encode("utf-8-sig")
    if fmt == "json":
        rows = [{str(k): _json_value(v) for k, v in row.items()} for row in df.to_dict(orient="records")]
        return json.dumps(rows, ensure_ascii=False, allow_nan=False).encode("utf-8")
    if fmt == "parquet":
        buffer = io.BytesIO()
        df.to_parquet(buffer, index=False)
        return buffer.getvalue()
    raise ParameterError(f"Unknown export format {fmt!r}; use one of {list(EXPORT_FORMATS)}.")


# --------------------------------------------------------------------------------------------
# One record beside the target dataset
# --------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def record_profile(folder: RunFolder, record_id: int, *, k: int = 5) -> dict[str, Any]:
    """A record's values beside the target dataset D's typical values, and its neighbours in D.

    Parameters
    ----------
    folder : RunFolder
        The run.
    record_id : int
        The record (a row number of the run's prepared table); it must belong to D.
    k : int, default 5
        Number of nearest neighbours.

    Returns
    -------
    dict
        ``record_id``; ``target_size`` (``|D|``); ``columns``: a DataFrame with one row per used
        column: ``column``, ``role``, ``value`` (the record's), ``typical`` (the most common
        category in D, ties going to the first category, or the median of D), ``typical_is``
        ("most common" or "median"), ``share_same`` (share of D with the record's category;
        ``nan`` for a continuous column), ``percentile`` (percentile rank of the record's value
        in D, 0-100, ties counted half; ``nan`` for a categorical column) and ``rarity`` (that
        number in words); ``neighbours``: a DataFrame of the ``k`` records of D nearest to it
        (Gower distance, see :mod:`privgame.settings.targets`) with ``record_id``, ``distance`` and their
        values in the used columns; ``risks``: the record's row of the run's results as a dict
        when it was evaluated, else ``None``.

    Raises
    ------
    ParameterError
        If ``record_id`` is not a whole number, or the record is not in D.
    RunError
        If the folder is not a readable run.
    """
    if isinstance(record_id, bool) or not isinstance(record_id, int | np.integer):
        raise ParameterError(f"record_id must be a whole number, got {record_id!r}.")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ParameterError(f"k must be a whole number of at least 1, got {k!r}.")
    rid = int(record_id)
    spec = folder.spec()
    table = folder.load_table()
    schema = Schema.from_dict(spec.schema)
    target = run_split(spec, len(table)).target
    positions = np.flatnonzero(target == rid)
    if positions.size == 0:
        raise ParameterError(
            f"Record {rid} is not in the target dataset D of run {folder.run_id}; pick one of "
            "the records of D (for example an evaluated record from the results)."
        )
    position = int(positions[0])
    d_table = table.iloc[target].reset_index(drop=True)
    X = encode(d_table, schema)
    rows: list[dict[str, Any]] = []
    for j, col in enumerate(schema.used):
        value = _plain(d_table.iloc[position][col.name])
        x = X[:, j]
        if col.role == CATEGORICAL:
            counts = np.bincount(x.astype(np.int64), minlength=len(col.categories or ()))
            typical = _plain((col.categories or ())[int(np.argmax(counts))])
            share = float(np.mean(x == x[position]))
            rows.append(
                {
                    "column": col.name,
                    "role": col.role,
                    "value": value,
                    "typical": typical,
                    "typical_is": "most common",
                    "share_same": share,
                    "percentile": math.nan,
                    "rarity": f"{share:.1%} of D share this value",
                }
            )
        else:
            below = float(np.count_nonzero(x < x[position]))
            same = float(np.count_nonzero(x == x[position]))
            percentile = 100.0 * (below + 0.5 * same) / len(x)
            median = float(np.median(x))
            rows.append(
                {
                    "column": col.name,
                    "role": col.role,
                    "value": value,
                    # A whole-number median reads as one (37, not 37.0), like the value beside it.
                    "typical": int(median) if col.integer and median.is_integer() else median,
                    "typical_is": "median",
                    "share_same": math.nan,
                    "percentile": percentile,
                    "rarity": f"percentile {percentile:.0f} of D",
                }
            )
    columns = pd.DataFrame(rows)
    order, distances = nearest_neighbours(X[position], X, schema, k=int(k), exclude=position)
    neighbours = d_table.iloc[order][schema.names].reset_index(drop=True)
    neighbours.insert(0, "distance", distances)
    neighbours.insert(0, "record_id", target[order].astype(np.int64))
    risks = None
    if folder.has_results():
        records = folder.records()
        mine = records.loc[records["record_id"] == rid]
        if not mine.empty:
            risks = {c: _plain(mine.iloc[0][c]) for c in RESULT_COLUMNS if c in mine.columns}
    return {
        "record_id": rid,
        "target_size": len(target),
        "columns": columns,
        "neighbours": neighbours,
        "risks": risks,
    }


# --------------------------------------------------------------------------------------------
# The HTML report
# --------------------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 1100px; padding: 0 1rem; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd;
     padding-bottom: 0.2rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.92rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.55rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.caption { color: #333; font-size: 0.95rem; max-width: 60rem; }
.note { background: #fff6e0; border-left: 4px solid #E69F00; padding: 0.5rem 0.8rem; }
.muted { color: #666; font-size: 0.9rem; }
.wide { overflow-x: auto; max-width: 100%; }
td { overflow-wrap: anywhere; max-width: 28rem; }
.share { background: #eef5fb; border-left: 4px solid #0072B2; padding: 0.5rem 0.8rem; }
.verdict { font-size: 1.05rem; background: #f4f4f4; border-left: 4px solid #1a1a1a;
           padding: 0.6rem 0.9rem; }
td.values { font-size: 0.85rem; }
td.num { white-space: nowrap; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _value_text(value: Any) -> str:
    value = _plain(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _kv_table(rows: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th scope='row'>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<div class='wide'><table>{body}</table></div>"


def _spec_rows(folder: RunFolder) -> list[tuple[str, Any]]:
    spec = folder.spec()
    params = json.dumps(spec.to_dict()["generator_params"], sort_keys=True)
    return [
        ("run", folder.run_id),
        ("data", spec.data_name),
        ("set-up", _setup_cell(spec)),
        ("data fingerprint (SHA-256)", spec.data_fingerprint),
        ("generator", spec.generator),
        ("generator parameters", params),
        ("|D_aux| (auxiliary data)", spec.sizes.get("aux")),
        ("|D_eval| (evaluation pool)", spec.sizes.get("eval")),
        ("|D| (target dataset)", spec.sizes.get("target")),
        ("target records", _plan_text(spec)),
        ("N_shadow (shadow datasets)", spec.attack.n_shadow),
        ("N_eval (runs per game)", spec.attack.n_eval),
        ("attack classifier", spec.attack.classifier),
        (
            "traditional game",
            "pooled (one dataset pool serves every record)"
            if spec.attack.traditional == "pooled"
            else "per record",
        ),
        ("seed", spec.seed),
        ("versions", ", ".join(f"{k} {v}" for k, v in sorted(spec.versions.items()))),
    ]


def _plan_text(spec: Any) -> str:
    """The records the run chose to audit, in words."""
    targets = spec.targets
    if targets.mode == "plan" and targets.sample_ids:
        return (
            f"the audit plan: the {targets.outliers} most outlying records of D and the {targets.random} "
            "records kept from the parent run's random sample"
        )
    if targets.mode == "plan":
        return (
            f"the audit plan: the {targets.outliers} most outlying records of D and {targets.random} "
            "random records of D"
        )
    if targets.mode == "ids":
        return f"ids {', '.join(str(i) for i in targets.ids)}"
    if targets.mode == "all":
        return "every record of D"
    return f"{targets.k} records, {targets.mode}"


def _setup_cell(spec: Any) -> str:
    setup = spec.setup
    if setup.kind != "release":
        return "paper (research): D drawn at random from an evaluation pool"
    if setup.population == "table":
        name = f" ({setup.population_name})" if setup.population_name else ""
        return f"release: D is the whole table; the population is a second table{name}"
    return "release: D is the table less a holdout, which plays the population and is not released"


# What the audited groups say, for the report's table of audit groups.
_GROUP_NOTES = {
    "outlier": ("Records picked for being unusual. Not a random sample, so not in the share."),
    "random": "A uniform random sample of D: the estimate of the share of all of D at risk.",
    "chosen": "Records chosen by the user: neither the most outlying nor a random sample.",
}


def _screen_section(screen: Mapping[str, Any]) -> str:
    """Every record of D, screened: the sentence, the agreement table and the records that disagree."""
    parts = ["<h2>Every record of D (screened)</h2>", f"<p>{_e(screen['text'])}</p>"]
    check = screen.get("agreement")
    if check and check.get("records"):
        from privgame.core.metrics import VERDICTS

        head = "".join(f"<th>screened: {_e(v)}</th>" for v in VERDICTS)
        rows = "".join(
            f"<tr><th>exact: {_e(e)}</th>" + "".join(f"<td>{row[v]}</td>" for v in VERDICTS) + "</tr>"
            for e, row in check["confusion"].items()
            if any(row.values())
        )
        parts.append(
            "<p class='muted'>How the screen and the exact game agree on the random records (the only "
            "unbiased check):</p>"
            f"<table><tr><th></th>{head}</tr>{rows}</table>"
        )
        if check.get("disagree"):
            items = "".join(
                f"<li>record {d['record_id']}: exact {_e(d['verdict_model_seeded'])}, screened "
                f"{_e(d['screen_verdict'])}</li>"
                for d in check["disagree"][:20]
            )
            parts.append(f"<p class='muted'>Where they disagree:</p><ul>{items}</ul>")
    return "".join(parts)


def _audit_section(records: pd.DataFrame, audit: Mapping[str, Any], t: float) -> str:
    """What was audited (the set-up in words), the share of D at risk, and the audit groups apart."""
    from privgame.games.audit import GROUP_LABELS

    lines = list(audit.get("setup_text") or [])
    parts = ["<h2>What was audited</h2>"]
    parts += [f"<p>{_e(line)}</p>" for line in lines[:1]]
    parts += [f"<p class='muted'>{_e(line)}</p>" for line in lines[1:]]
    share = audit.get("share_at_risk")
    if share:
        parts.append(f"<p class='share'><strong>Share of D at risk.</strong> {_e(share['text'])}</p>")
    else:
        parts.append(
            "<p class='share'>No uniform random sample of D was audited, so the share of all of D at "
            "risk is not estimated.</p>"
        )
    groups = dict(audit.get("groups") or {})
    if "audit_group" in records.columns:
        chosen = records["audit_group"].astype(str) == "chosen"
        if chosen.any():
            verdict = records_at(records.loc[chosen], t)["verdict_model_seeded"].astype(str)
            groups["chosen"] = {"records": int(chosen.sum()), "at_risk": int((verdict == "at risk").sum())}
    rows = [
        (name, groups[name])
        for name in ("outlier", "random", "chosen")
        if groups.get(name, {}).get("records")
    ]
    if rows:
        head = "".join(
            f"<th scope='col'>{_e(h)}</th>"
            for h in ("audit group", "records audited", f"at risk (interval above t={t:g})", "")
        )
        body = "".join(
            f"<tr><th scope='row'>{_e(GROUP_LABELS.get(name, name))}</th>"
            f"<td class='num'>{_e(group['records'])}</td><td class='num'>{_e(group['at_risk'])}</td>"
            f"<td>{_e(_GROUP_NOTES[name])}</td></tr>"
            for name, group in rows
        )
        parts.append(
            f"<div class='wide'><table class='groups'><thead><tr>{head}</tr></thead><tbody>{body}"
            "</tbody></table></div>"
        )
        if groups.get("outlier", {}).get("records") and groups.get("random", {}).get("records"):
            parts.append(
                "<p class='muted'>A record can be in both groups; it is counted in each. The share "
                "estimate uses the random sample only.</p>"
            )
    return "\n".join(parts)


def _release_card_section(folder: RunFolder, t: float) -> str:
    """The release card of this run's default release (|D| rows, the run's seed), as a table."""
    from privgame.outputs.release import release_card

    spec = folder.spec()
    card = release_card(folder, rows=int(spec.sizes["target"]), seed=int(spec.seed), threshold=t)
    data, generator, audit = card["data"], card["generator"], card["audit"]
    at_risk_ids = audit.get("at_risk_record_ids") or []
    rows: list[tuple[str, Any]] = [
        ("privgame version", card.get("privgame_version")),
        ("run", card.get("run_id")),
        ("data", data.get("name")),
        (
            "set-up",
            data.get("setup") + (f", population: {data['population']}" if data.get("population") else ""),
        ),
        ("D: rows", data.get("d_rows")),
        ("D: fingerprint (SHA-256)", data.get("d_fingerprint") or "not recorded (paper set-up)"),
    ]
    if data.get("population_rows") is not None:
        rows += [
            ("population: rows", data.get("population_rows")),
            ("population: fingerprint (SHA-256)", data.get("population_fingerprint") or "not recorded"),
        ]
    if data.get("population_name"):
        rows.append(("population table", data["population_name"]))
    rows += [
        ("run table: fingerprint (SHA-256)", data.get("run_table_fingerprint")),
        ("generator", generator.get("name")),
        ("generator parameters", json.dumps(generator.get("params") or {}, sort_keys=True)),
        ("audit plan", _plan_text(spec)),
        ("N_shadow, N_eval", f"{audit.get('n_shadow')}, {audit.get('n_eval')}"),
        ("high-risk threshold t", f"{audit.get('threshold'):g}"),
        ("records audited", audit.get("records_audited")),
        *(
            [("verdicts, record by record", ", ".join(f"{n:,} {v}" for v, n in audit["verdicts"].items()))]
            if audit.get("verdicts")
            else []
        ),
        ("records at risk (their verdict), model-seeded game", audit.get("at_risk_model_seeded")),
        ("records at risk, ids", ", ".join(str(i) for i in at_risk_ids) or "none"),
        ("release: rows, seed", f"{card['release']['rows']:,} rows, seed {card['release']['seed']}"),
        ("verdict", card.get("verdict")),
    ]
    return "\n".join(
        [
            "<h2>Release card</h2>",
            "<p class='caption'>What a release of this audit records about itself, for a release of "
            "|D| rows with the run's seed. <code>python -m privgame release RUN_DIR -o synthetic.csv</code> "
            "(or the Release page) writes the synthetic data with this card beside it, adding the "
            "SHA-256 of the CSV.</p>",
            _kv_table(rows),
            f"<p class='muted'>{_e(card.get('note') or '')}</p>",
        ]
    )


def _miss_rate_cell(summary: Mapping[str, Any]) -> str:
    if summary.get("miss_rate") is None:
        return "undefined (no record has model-seeded risk above t)"
    return (
        f"{summary['miss_rate']:.3f} ({summary['missed']} of the {summary['at_risk']} records "
        "with model-seeded risk above t)"
    )


def _pct(p: Mapping[str, Any] | None) -> str:
    p = p or {}
    return "  ".join(f"{k} {number_text(p.get(k))}" for k in ("p10", "p50", "p90"))


def _summary_rows(
    summary: Mapping[str, Any], stored: Mapping[str, Any], *, traditional: bool = True
) -> list[tuple[str, Any]]:
    t = summary["threshold"]
    if not traditional:
        return [
            ("records evaluated", summary["records"]),
            ("high-risk threshold t", f"{t:g}"),
            ("records at risk (their verdict), model-seeded game", summary.get("at_risk_model_seeded")),
            (f"risk above t={t:g} (point estimates), model-seeded game", summary.get("above_t_model_seeded")),
            ("mean risk, model-seeded game", number_text(summary.get("mean_model_seeded"))),
            ("risk percentiles, model-seeded game", _pct(summary.get("percentiles_model_seeded"))),
            (
                "attack's training noise at t (sd, from two half attacks)",
                number_text(summary.get("attack_training_sd_at_t")),
            ),
            (
                "attack's AUC on its own shadow datasets (mean, out of bag)",
                number_text(summary.get("attack_shadow_auc_mean")),
            ),
            (
                "traditional game, RMSD and miss rate",
                f"not run ({not_played_reason(str(summary.get('attacker', 'population')))})",
            ),
        ]
    rows: list[tuple[str, Any]] = [
        ("records evaluated", summary["records"]),
    ]
    if summary.get("records_excluded"):
        rows.append(("records with an undefined risk (left out)", summary["records_excluded"]))
    rows += [
        ("high-risk threshold t", f"{t:g}"),
        ("RMSD between the risks", number_text(summary.get("rmsd"))),
        (f"miss rate at t={t:g}", _miss_rate_cell(summary)),
        ("records at risk (their verdict), model-seeded game", summary.get("at_risk_model_seeded")),
        ("records at risk (their verdict), traditional game", summary.get("at_risk_traditional")),
        (f"risk above t={t:g} (point estimates), model-seeded game", summary.get("above_t_model_seeded")),
        (f"risk above t={t:g} (point estimates), traditional game", summary.get("above_t_traditional")),
        ("mean risk, model-seeded game", number_text(summary.get("mean_model_seeded"))),
        ("mean risk, traditional game", number_text(summary.get("mean_traditional"))),
        ("risk percentiles, model-seeded game", _pct(summary.get("percentiles_model_seeded"))),
        ("risk percentiles, traditional game", _pct(summary.get("percentiles_traditional"))),
        (
            "attack's training noise at t (sd, from two half attacks)",
            number_text(summary.get("attack_training_sd_at_t")),
        ),
        (
            "attack's AUC on its own shadow datasets (mean, out of bag)",
            number_text(summary.get("attack_shadow_auc_mean")),
        ),
        ("percentiles of |R_MS − R_T|", _pct(summary.get("percentiles_abs_difference"))),
        ("largest |R_MS − R_T|", number_text(summary.get("max_abs_difference"))),
    ]
    share = summary.get("share_abs_difference_above")
    rows.append(
        (
            f"share of records with |R_MS − R_T| > {summary['difference_cutoff']:g}",
            "undefined" if share is None else f"{share:.1%}",
        )
    )
    half = stored.get("hoeffding_half_width_rho_0.05")
    if half is not None:
        rows.append(("Hoeffding half-width of a risk (95%)", number_text(half)))
    twins = stored.get("twins")
    if isinstance(twins, Mapping):
        rows.append(
            (
                "records with an exact twin (in D / in the population / audited)",
                f"{twins.get('in_d', 0):,} / {twins.get('in_population', 0):,} / "
                f"{twins.get('audited_in_population', 0):,}",
            )
        )
    return rows


def _high_risk_table(records: pd.DataFrame, t: float) -> str:
    listed = high_risk(normalise_records(records), t)
    if listed.empty:
        return f"<p>No record is at risk at t={t:g}: no model-seeded interval lies above it.</p>"
    shown = listed.head(_REPORT_HIGH_RISK_ROWS)
    from privgame.games.audit import GROUP_LABELS

    with_group = "audit_group" in shown.columns
    values = value_columns(shown)
    headers = [
        "record",
        *(["audit group"] if with_group else []),
        "risk, model-seeded (95% CI)",
        "risk, traditional (95% CI)",
        "missed by traditional",
        *(["the record's values"] if values else []),
    ]
    head = "".join(f"<th scope='col'>{_e(h)}</th>" for h in headers)

    def risk(row: pd.Series, game: Game) -> str:
        if row.get(game.verdict_column) == NOT_RUN:
            return NOT_RUN
        low, high = row.get(game.column("low")), row.get(game.column("high"))
        text = number_text(row[game.column()])
        if low is not None and high is not None:
            text += f" [{number_text(low)}, {number_text(high)}]"
        return text

    body = []
    for _, row in shown.iterrows():
        cells = [
            f"<td class='num'>{_e(int(row['record_id']))}</td>",
            *(
                [f"<td>{_e(GROUP_LABELS.get(str(row['audit_group']), str(row['audit_group'])))}</td>"]
                if with_group
                else []
            ),
            *(f"<td class='num'>{_e(risk(row, game))}</td>" for game in GAMES),
            f"<td>{_e(_missed_cell(row['missed_by_traditional']))}</td>",
            # One cell for the record's values, name: value per line, so that a wide table fits
            # the page (a column per value ran off its right edge).
            *(
                [
                    "<td class='values'>"
                    + "<br>".join(f"{_e(value_name(c))}: {_e(_value_text(row[c]))}" for c in values)
                    + "</td>"
                ]
                if values
                else []
            ),
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = ""
    if len(listed) > len(shown):
        note = (
            f"<p class='muted'>Showing the {len(shown)} riskiest of {len(listed)} records; export "
            "the full list with <code>python -m privgame export RUN_DIR --what high-risk</code>."
            "</p>"
        )
    return (
        f"<div class='wide'><table class='high-risk'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>{note}"
    )


def _missed_cell(value: Any) -> str:
    return value if isinstance(value, str) else number_text(bool(value))


def _similarity_paragraph(similarity: Mapping[str, Any] | None) -> str:
    if not similarity:
        return ""
    return f"<p class='verdict'><strong>Similarity checks.</strong> {_e(similarity['text'])}</p>"


def _anonymity_section(folder: RunFolder) -> str:
    """anonymeter's three risks of the release, once measured (``privgame anonymity``)."""
    from privgame.analysis.anonymity import anonymity_lines

    try:
        lines = anonymity_lines(folder.read_anonymity())
    except (RunError, KeyError, TypeError, ValueError):
        return ""
    if not lines:
        return ""
    items = "".join(f"<li>{_e(line)}</li>" for line in lines)
    return (
        "<h2>The three risks regulators name (anonymeter)</h2><p class='muted'>Singling out, "
        "linkability and inference, the criteria of the Article 29 Working Party's Opinion 05/2014, "
        "measured for the whole table by anonymeter; the per-record games above and below are "
        f"privgame's.</p><ul>{items}</ul>"
    )


def _inference_section(inference: Mapping[str, Any] | None, records: pd.DataFrame) -> str:
    """The attribute-inference game's sentences and its records at risk (nothing when not played)."""
    from privgame.games.inference import inference_texts

    texts = inference_texts(inference)
    if not texts:
        return ""
    items = "".join(f"<li>{_e(text)}</li>" for text in texts)
    rows = []
    for column in verdict_columns(list(records.columns)):
        tail = column.removeprefix("verdict_inference")
        at_risk = records.loc[records[column].astype(str) == "at risk"]
        for _, row in at_risk.iterrows():
            rows.append(
                f"<tr><td>{int(row['record_id'])}</td><td>{_e(str(row[f'inference_secret{tail}']))}</td>"
                f"<td>{_e(str(row[f'secret_value{tail}']))}</td><td>{row[f'inference_gain{tail}']:+.2f} "
                f"[{row[f'inference_low{tail}']:+.2f}, {row[f'inference_high{tail}']:+.2f}]</td>"
                f"<td>{row[f'inference_in{tail}']:.0%} / {row[f'inference_out{tail}']:.0%}</td></tr>"
            )
    table = (
        "<table><tr><th>record</th><th>secret</th><th>its value</th><th>gain [interval]</th>"
        "<th>named, in / out</th></tr>" + "".join(rows) + "</table>"
        if rows
        else ""
    )
    return (
        "<h2>Attribute inference (per record)</h2><p class='muted'>The attacker knows each audited "
        "record's other columns and infers its secret from the release. A record's gain is how much "
        "more often it succeeds with the record in D than with it swapped for a reference record; "
        "the same 'in' and 'out' runs as the membership game.</p>"
        f"<ul>{items}</ul>{table}"
    )


def html_report(folder: RunFolder, threshold: float | None = None) -> str:
    """A self-contained HTML page reporting a finished run.

    Parameters
    ----------
    folder : RunFolder
        A finished run.
    threshold : float, optional
        The high-risk threshold ``t``, strictly between 0.5 and 1; the run's own by default.

    Returns
    -------
    str
        One HTML document: what was audited (the set-up in words,
        :func:`privgame.games.audit.describe_setup`),
        the share of all of D at risk estimated from the random sample and the audit groups kept
        apart (the most outlying records are never in the share), the run's
        settings (set-up, generator and parameters, sizes, N_shadow, N_eval, seed, data
        fingerprint), the Table-1 style summary at ``t``, the generator's differential-privacy note
        when it has one, Figures 1a, 1b, 2a and 2b with their captions, the high-risk records with
        their audit group, and the release card of a release of |D| rows with the run's seed
        (:func:`privgame.outputs.release.release_card`: fingerprints, generator, plan, verdict). plotly.js
        is inlined once, so the page works offline and references nothing on the network. Every
        text that comes from the user or the data is HTML-escaped.

    Raises
    ------
    RunError
        If the run has not finished.
    ParameterError
        If ``t`` is outside [0, 1].
    """
    from privgame.games.audit import audit_summary, similarity_answer

    folder.require_done(what="a report exists")
    spec = folder.spec()
    from privgame.outputs import figures  # plotly: only the HTML report needs it, not every command

    t = spec.threshold if threshold is None else check_threshold(threshold)
    records = folder.records()
    stored = folder.summary()
    screened = folder.screen() if folder.has_screen() else None
    audit = audit_summary(records, spec, t, screened=screened)
    both = TRADITIONAL in played(spec.attack.games)
    summary = metrics.summarize(
        records["risk_model_seeded"].to_numpy(np.float64),
        records["risk_traditional"].to_numpy(np.float64),
        threshold=t,
        traditional=both,
    )
    # The figures compare the two games: a run without the traditional game has nothing to draw.
    charts = (
        [
            figures.risk_scatter(records, t),
            figures.difference_histogram(records),
            figures.miss_rate_chart(records, current=t),
            figures.risk_cdfs(records),
        ]
        if both
        else []
    )
    config = {"displaylogo": False, "responsive": True}
    chart_html = []
    for i, chart in enumerate(charts):
        div = chart.figure.to_html(
            full_html=False,
            include_plotlyjs=(i == 0),
            config=config,
            div_id=f"chart-{i + 1}",
            default_height=f"{chart.figure.layout.height or 480}px",
        )
        chart_html.append(
            f"<section><h2>{_e(chart.title)}</h2><div class='chart'>{div}</div>"
            f"<p class='caption'>{_e(chart.caption)}</p></section>"
        )
    similarity = similarity_answer(records_at(records, t), stored.get("similarity"), spec, t)
    similarity_chart = ""
    if similarity and similarity.get("table") is not None and "dcr_p_value" in records.columns:
        alpha = float(similarity.get("alpha", 0.05))
        chart = figures.similarity_chart(records_at(records, t), t, alpha=alpha)
        div = chart.figure.to_html(
            full_html=False,
            include_plotlyjs=not charts,
            config=config,
            div_id="chart-similarity",
            default_height=f"{chart.figure.layout.height or 480}px",
        )
        similarity_chart = (
            f"<section><h2>{_e(chart.title)}</h2><div class='chart'>{div}</div>"
            f"<p class='caption'>{_e(chart.caption)}</p></section>"
        )
    screen_html = ""
    if screened is not None and audit.get("screen"):
        from privgame.games.screen_table import screen_table

        chart = figures.screen_scatter(screen_table(folder, t), t)
        div = chart.figure.to_html(
            full_html=False,
            include_plotlyjs=not charts and not similarity_chart,
            config=config,
            div_id="chart-screen",
            default_height=f"{chart.figure.layout.height or 480}px",
        )
        screen_html = _screen_section(audit["screen"]) + (
            f"<div class='chart'>{div}</div><p class='caption'>{_e(chart.caption)}</p>"
        )
    meta = stored.get("generator_metadata") or {}
    dp_note = meta.get("dp_note") if isinstance(meta, Mapping) else None
    note_html = f"<p class='note'>{_e(dp_note)}</p>" if dp_note else ""
    guarantee = guarantee_answer(meta if isinstance(meta, Mapping) else None, t)
    if guarantee is not None:
        note_html += f"<p class='note'>{_e(guarantee['text'])}</p>"
    verdict = proven_answer(audit["answer"]["text"], guarantee)
    title = f"privgame report: run {folder.run_id}"
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class='verdict'><strong>Verdict.</strong> {_e(verdict)}</p>",
        f"<p class='muted'>{_e(audit['set_level']['text'])}</p>" if audit.get("set_level") else "",
        f"<p class='muted'>{_e(OUT_WORLD_TEXT)}</p>",
        _similarity_paragraph(similarity),
        _inference_section(stored.get("inference"), records),
        _anonymity_section(folder),
        "<p class='muted'>Per-record membership-inference risk (ROC AUC of the TAPAS attack) "
        "in the model-seeded game, which measures the risk of releasing synthetic data made "
        "from this very dataset D, and in the traditional game, which averages over datasets.</p>",
        _audit_section(records, audit, t),
        screen_html,
        "<h2>Run settings</h2>",
        _kv_table(_spec_rows(folder)),
        "<h2>Summary</h2>",
        note_html,
        _kv_table(_summary_rows(summary, stored, traditional=both)),
        f"<p class='caption'>{_e(summary['miss_rate_text'])}</p>",
        *chart_html,
        ""
        if both
        else "<p class='note'>The traditional game was not run "
        f"({_e(not_played_reason(str(summary.get('attacker', 'population'))))}), so the figures "
        "comparing the two games are not drawn.</p>",
        similarity_chart,
        f"<h2>Records at risk (model-seeded interval above t={t:g})</h2>",
        _high_risk_table(records, t),
        _release_card_section(folder, t),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)
