"""``python -m privgame utility``: a run's utility beside its privacy, measured and stored."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from privgame.cli.terminal import json_text, terminal_safe
from privgame.core.defaults import UTILITY_SAMPLES as DEFAULT_SAMPLES

if TYPE_CHECKING:
    from privgame.store.folders import RunFolder

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "utility",
        help="measure how much of the data a run's synthetic data keeps",
        description=(
            "Fit the run's generator on D several times and compare each synthetic sample with D: "
            "fidelity (total variation distance per column), pairwise associations (Cramér's V, "
            "correlation ratio, |Pearson's r|), and downstream use (a model trained on synthetic data "
            "and scored on the real holdout, beside the same model trained on D). Each figure is "
            "given as mean ± sd over the samples, and stored in the run folder (utility.json)."
        ),
    )
    parser.add_argument("run_dir", help="a run folder")
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help=f"synthetic samples for the spread, 2 to 100 (default: {DEFAULT_SAMPLES})",
    )
    parser.add_argument(
        "--target-column",
        help="the column the downstream model predicts (default: the last categorical column)",
    )
    parser.add_argument(
        "--family",
        action="store_true",
        help="measure every run of RUN_DIR's remedy family that has no figures for the target column "
        "yet (RUN_DIR included), so that compare and the privacy-utility chart show them all; the "
        "target column defaults to the one the family was measured with",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from privgame.service import RunFolder, Schema, default_target_column, measure_utility, utility_lines

    folder = RunFolder(args.run_dir)
    if args.family:
        return _family(folder, args)
    if args.target_column is None:
        chosen = default_target_column(Schema.from_dict(folder.spec().schema))
        if chosen is not None:
            print(
                f"no --target-column given: predicting {chosen!r}, the last categorical column.",
                file=sys.stderr,
            )
    report = measure_utility(folder, samples=args.samples, target_column=args.target_column)
    if args.json:
        print(json_text(report.to_dict(), sort_keys=True, indent=2))
        return 0
    _print_lines(utility_lines(report))
    return 0


def _print_lines(lines: list[str]) -> None:
    for line in lines:
        print(textwrap.fill(terminal_safe(line, one_line=True), width=100, subsequent_indent="  "))


def _family(folder: RunFolder, args: argparse.Namespace) -> int:
    from privgame.service import family, family_target_column, measure_utility, unmeasured, utility_lines

    members = family(folder)
    target = args.target_column or family_target_column(members)
    todo = unmeasured(members, target)
    print(
        f"family of {len(members)} run(s); {len(todo)} to measure, predicting {target!r}.",
        file=sys.stderr,
    )
    reports = {}
    for member in todo:
        print(f"measuring {member.run_id} ...", file=sys.stderr)
        reports[member.run_id] = measure_utility(member, samples=args.samples, target_column=target)
    if args.json:
        print(json_text({k: v.to_dict() for k, v in reports.items()}, sort_keys=True, indent=2))
        return 0
    for run_id, report in reports.items():
        print(f"{run_id}:")
        _print_lines(utility_lines(report))
    return 0
