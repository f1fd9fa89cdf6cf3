"""``python -m privgame report``: the summary of a finished run, at any threshold."""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING, Any

from privgame.cli.terminal import json_text, terminal_safe
from privgame.core.defaults import NOT_RUN
from privgame.service import number_text

if TYPE_CHECKING:
    pass

__all__ = ["add_parser", "format_summary", "run", "wrapped"]


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


def _attack_lines(summary: dict[str, Any]) -> list[str]:
    """How much the attack's own training moves a risk, and how it did on its own shadow datasets."""
    lines = []
    sd = summary.get("attack_training_sd_at_t")
    if isinstance(sd, int | float):
        lines.append(
            f"attack noise        training moves a risk at t by about {sd:.3f} (sd; two attacks trained "
            "on halves of the shadow datasets), and the intervals include it"
        )
    counts = summary.get("attack_counts") or {}
    if len(summary.get("attacks") or ()) > 1 and counts:
        kept = ", ".join(f"{name} {count:,}" for name, count in sorted(counts.items(), key=lambda kv: -kv[1]))
        lines.append(
            f"attacks             {', '.join(summary['attacks'])}; the strongest on held-out shadow "
            f"datasets scored each record ({kept} records)"
        )
    learning = summary.get("attack_still_learning") or 0
    if learning:
        lines.append(
            f"still learning      on {learning:,} record(s) the attack beat its halves by more than "
            "training noise: their intervals' high ends are raised by that gain (more --n-shadow settles it)"
        )
    shadow = summary.get("attack_shadow_auc_mean")
    if isinstance(shadow, int | float):
        lines.append(
            f"attack on shadows   mean AUC {shadow:.3f} on its own held-out shadow datasets, "
            f"{number_text(summary.get('mean_model_seeded'))} on the real evaluation runs"
        )
    return lines


def _interval(found: dict[str, Any] | None) -> str:
    return f" 95% interval {found['low']:.2f}–{found['high']:.2f}." if found else ""


def _screen_lines(summary: dict[str, Any]) -> list[str]:
    """The screen of every record: its verdicts, how the exact game bears it out, the top confirmed."""
    screen = summary.get("screen")
    if not screen:
        return []
    counts = screen["counts"]
    lines = [
        f"screened            every one of the {screen['records']:,} records: {counts['at risk']:,} at risk, "
        f"{counts['undecided']:,} undecided, {counts['not at risk']:,} not at risk, "
        f"{counts['attack failed']:,} where the screening attack failed (labelled 'screened')"
    ]
    check = screen.get("agreement")
    if check:
        rho = "n/a" if check["spearman"] is None else f"{check['spearman']:.2f}"
        if check["spearman"] is not None and check.get("spearman_ceiling") is not None:
            rho += f" (the exact risks' noise allows about {check['spearman_ceiling']:.2f})"
        table = "; ".join(
            f"exact {e}: " + ", ".join(f"{n} screened {s}" for s, n in row.items() if n)
            for e, row in check["confusion"].items()
            if any(row.values())
        )
        lines.append(
            f"screen vs exact     on {check['records']:,} random records: Spearman {rho}; {table}"
            + (
                ""
                if check["trusted"]
                else f". POOR: {check['reason']}; screened 'not at risk' reads undecided"
            )
        )
        if check["disagree"]:
            shown = ", ".join(
                f"{d['record_id']} (exact {d['verdict_model_seeded']}, screened {d['screen_verdict']})"
                for d in check["disagree"][:10]
            )
            more = f" and {len(check['disagree']) - 10:,} more" if len(check["disagree"]) > 10 else ""
            lines.append(f"disagree            {shown}{more}")
    top = (summary.get("groups") or {}).get("screened")
    if top and top.get("records"):
        lines.append(
            f"top screened        {top['at_risk']} of the {top['records']} top-screened records are at risk "
            f"in the exact game, {top['not_at_risk']} not at risk"
        )
    return lines


def format_summary(summary: dict[str, Any]) -> str:
    """A readable, Table-1 style block of text, each line free of control characters."""
    t = summary.get("threshold")
    found = summary.get("answer")
    lines = [f"answer              {found['text']}"] if found else []
    set_level = summary.get("set_level")
    if set_level:
        lines.append(f"read as a set       {set_level['text']}")
    lines += [
        f"audited             {line}" if i == 0 else f"                    {line}"
        for i, line in enumerate(summary.get("setup_text") or [])
    ]
    from privgame.service import TRADITIONAL, played  # the games load numpy: not at --help

    both = TRADITIONAL in played(summary.get("games", "both"))
    lines += [
        f"attacker            {summary.get('attacker', 'population')}: "
        f"{summary.get('attacker_text') or 'an attacker who knows a sample of the population, not D'}",
        f"generator           {summary.get('generator')} {summary.get('generator_params') or ''}".rstrip(),
        f"records evaluated   {summary.get('records')}",
        *_attack_lines(summary),
        f"RMSD                {number_text(summary.get('rmsd')) if both else NOT_RUN}",
        f"miss rate (t={t})   {summary.get('miss_rate_text')}{_interval(summary.get('miss_rate_interval'))}",
        f"at risk (verdict)   model-seeded {summary.get('at_risk_model_seeded')}, "
        f"traditional {summary.get('at_risk_traditional') if both else NOT_RUN}",
        f"risk above t        model-seeded {summary.get('above_t_model_seeded')}, "
        f"traditional {summary.get('above_t_traditional') if both else NOT_RUN} (point estimates, "
        "as the paper counts them; not verdicts)",
    ]
    for name, label in (
        ("model_seeded", "model-seeded risk"),
        ("traditional", "traditional risk"),
        ("abs_difference", "|R_MS - R_T|"),
    ):
        p = summary.get(f"percentiles_{name}")
        if not both and name != "model_seeded":
            from privgame.service import not_played_reason

            reason = not_played_reason(str(summary.get("attacker", "population")))
            lines.append(f"{label:<20}{NOT_RUN} ({reason})")
        elif p:
            lines.append(
                f"{label:<20}" + "  ".join(f"{k} {number_text(p.get(k))}" for k in ("p10", "p50", "p90"))
            )
    caveat = (summary.get("miss_rate_interval") or {}).get("caveat")
    if caveat:
        lines.append(f"caveat              {caveat}")
    groups = summary.get("groups") or {}
    if groups.get("outlier", {}).get("records"):
        g = groups["outlier"]
        lines.append(
            f"most outlying       {g['at_risk']} of {g['records']} at risk (not a "
            "random sample, so not in the estimate)"
        )
    share = summary.get("share_at_risk")
    if share:
        lines.append(f"share at risk       {share['text']}")
    lines += _screen_lines(summary)
    for i, step in enumerate(summary.get("passes") or [], start=1):
        lines.append(
            f"extension {i:<10}N_eval {step['n_eval']}: {len(step['extended'])} records got more runs, "
            f"{len(step['resolved'])} resolved, {step['undecided']} still undecided"
        )
    threshold = summary.get("threshold")
    if isinstance(threshold, int | float) and 0.5 <= threshold <= 1:
        from privgame.service import threshold_guide

        lines.append(f"what t means        {threshold_guide(float(threshold))['text']}")
    similarity = summary.get("similarity")
    if similarity:
        lines.append(f"similarity test     {similarity['text']}")
    from privgame.service import anonymity_lines, inference_texts

    for i, text in enumerate(inference_texts(summary.get("inference"))):
        lines.append(f"{'inference' if i == 0 else '':<20}{text}")
    for i, text in enumerate(anonymity_lines(summary.get("anonymity"))):
        lines.append(f"{'three risks' if i == 0 else '':<20}{text}")
    twins = summary.get("twins")
    if twins:
        lines.append(
            f"exact twins         {twins['in_d']:,} record(s) of D have one in D, {twins['in_population']:,} "
            f"in the population ({twins['audited_in_population']:,} audited): such a record is less "
            "unique than the attack assumes"
        )
    meta = summary.get("generator_metadata") or {}
    if meta.get("dp_note"):
        lines.append(f"note                {meta['dp_note']}")
    if summary.get("guarantee"):
        lines.append(f"guarantee           {summary['guarantee']['text']}")
    # Each line is one line: a name from the data (the file's, a column's) cannot break it.
    return "\n".join(terminal_safe(line, one_line=True) for line in lines)


def wrapped(text: str) -> str:
    """Long lines wrapped at 100 columns, continued under the value column."""
    return "\n".join(
        textwrap.fill(line, width=100, subsequent_indent=" " * 20) if len(line) > 100 else line
        for line in text.splitlines()
    )


def run(args: argparse.Namespace) -> int:
    from privgame.service import RunFolder, run_summary

    summary = run_summary(RunFolder(args.run_dir), args.threshold)
    if args.json:
        print(json_text(summary, sort_keys=True, default=float))
    else:
        print(wrapped(format_summary(summary)))
    return 0
