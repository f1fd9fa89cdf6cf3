"""``python -m privgame report``: the summary of a finished run, at any threshold."""

from __future__ import annotations

import argparse
import json
from typing import Any

from privgame import metrics
from privgame.errors import ParameterError
from privgame.games.engine import require_done
from privgame.store import RunFolder

__all__ = ["add_parser", "format_summary", "run", "summary_at"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "report",
        help="print the summary of a run",
        description="Print a run's summary: records, RMSD, miss rate at t, records at risk, percentiles.",
    )
    parser.add_argument("run_dir")
    parser.add_argument("--threshold", type=float, help="high-risk threshold t (default: the run's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def summary_at(folder: RunFolder, threshold: float | None = None) -> dict[str, Any]:
    """The run's summary recomputed at ``threshold`` (the run's own by default)."""
    require_done(folder)
    spec = folder.spec()
    t = spec.threshold if threshold is None else threshold
    if not 0.0 <= t <= 1.0:
        raise ParameterError(f"The high-risk threshold t must be between 0 and 1; got {t}.")
    stored = folder.summary()
    records = folder.records()
    summary = metrics.summarize(
        records["risk_model_seeded"].to_numpy(float),
        records["risk_traditional"].to_numpy(float),
        threshold=t,
    )
    for key in (
        "generator",
        "generator_params",
        "sizes",
        "n_shadow",
        "n_eval",
        "generator_metadata",
        "queries",
    ):
        if key in stored:
            summary[key] = stored[key]
    summary["hoeffding_half_width_rho_0.05"] = stored.get("hoeffding_half_width_rho_0.05")
    summary["run_id"] = folder.run_id
    return summary


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def format_summary(summary: dict[str, Any]) -> str:
    """A readable, Table-1 style block of text."""
    t = summary.get("threshold")
    lines = [
        f"generator           {summary.get('generator')} {summary.get('generator_params') or ''}".rstrip(),
        f"records evaluated   {summary.get('records')}",
        f"RMSD                {_fmt(summary.get('rmsd'))}",
        f"miss rate (t={t})   {summary.get('miss_rate_text')}",
        f"at risk (R > t)     model-seeded {summary.get('at_risk_model_seeded')}, "
        f"traditional {summary.get('at_risk_traditional')}",
    ]
    for name, label in (
        ("model_seeded", "model-seeded risk"),
        ("traditional", "traditional risk"),
        ("abs_difference", "|R_MS - R_T|"),
    ):
        p = summary.get(f"percentiles_{name}")
        if p:
            lines.append(
                f"{label:<20}p10 {_fmt(p.get('p10'))}  p50 {_fmt(p.get('p50'))}  p90 {_fmt(p.get('p90'))}"
            )
    meta = summary.get("generator_metadata") or {}
    if meta.get("dp_note"):
        lines.append(f"note                {meta['dp_note']}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    summary = summary_at(RunFolder(args.run_dir), args.threshold)
    if args.json:
        print(json.dumps(summary, sort_keys=True, default=float))
    else:
        print(format_summary(summary))
    return 0
