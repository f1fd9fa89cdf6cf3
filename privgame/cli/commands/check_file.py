"""``python -m privgame check-file``: the similarity checks of a synthetic file made elsewhere."""

from __future__ import annotations

import argparse
import json
import textwrap

from privgame.cli.terminal import json_text, terminal_safe
from privgame.core.errors import ParameterError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "check-file",
        help="similarity checks of a synthetic file made elsewhere (no generator needed)",
        description=(
            "Compare a synthetic file with the table it was made from (D) and a holdout of real "
            "records that are not in D: each record's distance to its closest synthetic record (DCR, "
            "Gower distance) and how unusual that closeness is among the holdout's records (its "
            "p-value), the DCR share test (synthetic rows closer to D than to the holdout) and the "
            "DCR and NNDR percentiles. Without the generator no attack can be played, so no record "
            "is called safe: this check finds copies, not risk."
        ),
    )
    parser.add_argument("--data", required=True, help="D: the table the synthetic file was made from")
    parser.add_argument("--synthetic", required=True, help="the synthetic file, with D's columns")
    parser.add_argument("--holdout", required=True, help="real records of the same population, not in D")
    parser.add_argument(
        "-o",
        "--output",
        help="write one row per record of D (record_id, the row's position in --data from 0; dcr; "
        "dcr_p_value) to this CSV file",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the share test's subsample (default 0)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from privgame.service import check_file, check_output_path, file_check_lines

    if args.seed < 0:
        raise ParameterError(f"--seed must be a non-negative whole number; got {args.seed}.")
    if args.output is not None:
        _check_output(args.output, [args.data, args.synthetic, args.holdout])
        check_output_path(args.output, what="the per-record table")
    check = check_file(args.data, args.synthetic, args.holdout, seed=args.seed)
    if args.output is not None:
        from privgame.service import csv_safe, write_output

        data = csv_safe(check.records).to_csv(index=False, lineterminator="\n").encode("utf-8")
        write_output(args.output, data, what="the per-record table")
    if args.json:
        figures = {
            "table": check.table.to_dict(),
            "records": len(check.records),
            "close": check.close,
            "lines": file_check_lines(check),
        }
        print(json_text(json.loads(json.dumps(figures))))
        return 0
    for line in file_check_lines(check):
        print(textwrap.fill(terminal_safe(line, one_line=True), width=100))
    if args.output is not None:
        print(terminal_safe(f"Wrote {len(check.records):,} rows to {args.output}.", one_line=True))
    return 0


def _check_output(output: str, inputs: list[str]) -> None:
    """Refuse to write over one of the files the check reads."""
    from pathlib import Path

    target = Path(output).resolve()
    for source in inputs:
        if Path(source).resolve() == target:
            raise ParameterError(
                f"Cannot write the per-record table to {output}: it is {source}, which the check reads; "
                "writing there would replace it. Give another file name."
            )
