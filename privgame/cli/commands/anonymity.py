"""``python -m privgame anonymity``: anonymeter's three risks of a run's release, measured and stored."""

from __future__ import annotations

import argparse
import textwrap

from privgame.cli.terminal import json_text, terminal_safe

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "anonymity",
        help="measure the three risks regulators name (singling out, linkability, inference) with anonymeter",
        description=(
            "Sample the release the run audits and measure, with anonymeter, the three risks by which "
            "the Article 29 Working Party judges anonymisation: singling out, linkability and "
            "inference. Each is the attacks' success on records of D beyond their success on records "
            "outside D (the control set), with a 95% interval, for the whole table. Stored in the run "
            "folder (anonymity.json) and shown by report, the HTML report, the release card and the "
            "Results page. Needs anonymeter: pip install --no-deps -r requirements-anonymeter.txt"
        ),
    )
    parser.add_argument("run_dir", help="a run folder")
    parser.add_argument(
        "--attacks",
        type=int,
        default=None,
        metavar="N",
        help="records attacked by each evaluator (default 1,000; at most the control set's size)",
    )
    parser.add_argument(
        "--secret",
        action="append",
        default=None,
        metavar="COLUMN",
        help="a column the inference evaluator infers (repeatable; default: the run's --secret "
        "columns, else its last categorical column)",
    )
    parser.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from privgame.service import (
        DEFAULT_ANONYMITY_ATTACKS,
        RunFolder,
        anonymity_lines,
        measure_anonymity,
        resolve_workers,
    )

    report = measure_anonymity(
        RunFolder(args.run_dir),
        n_attacks=DEFAULT_ANONYMITY_ATTACKS if args.attacks is None else args.attacks,
        secrets=args.secret,
        workers=resolve_workers(args.workers),
    )
    if args.json:
        print(json_text(report.to_dict(), sort_keys=True, indent=2))
        return 0
    for line in anonymity_lines(report):
        print(textwrap.fill(terminal_safe(line, one_line=True), width=100, subsequent_indent="  "))
    return 0
