"""``python -m privgame compare``: runs of a remedy family side by side."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "format_table", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "compare",
        help="compare runs: verdicts, share at risk, RMSD, miss rate and utility",
        description=(
            "Print one row per run: its remedy, the verdict counts, the estimated share of D at risk, "
            "RMSD and miss rate (where both games ran) and the utility figures (where measured)."
        ),
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="finished runs' folders")
    parser.add_argument("--threshold", type=float, help="t for every run (default: each run's own)")
    parser.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="how to print the comparison (default: %(default)s)",
    )
    parser.set_defaults(handler=run)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "undefined" if value != value else f"{value:.3f}"  # NaN: e.g. no record at risk
    return str(value)


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table of :func:`privgame.analysis.compare.compare_runs` rows."""
    if not rows:
        return ""
    columns = list(rows[0])
    cells = [[_cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from privgame.service import RunFolder, compare_runs, csv_safe

    table = compare_runs([RunFolder(p) for p in args.run_dirs], args.threshold)
    if args.format == "csv":
        # Run folders are named by their owners: a name such as "=HYPERLINK(...)" is neutralised,
        # as in every CSV privgame writes.
        print(csv_safe(table).to_csv(index=False), end="")
    elif args.format == "json":
        print(table.to_json(orient="records", indent=2))
    else:
        print(format_table(table.to_dict(orient="records")))
    return 0
