"""``privgame schema PATH``: how privgame reads a table, column by column.

Shows each column's role (categorical, continuous or excluded), dtype, distinct and missing
values and the reason for a non-obvious role, plus the rows left after the missing-value policy,
the warnings (numbers that look like codes for a missing value, such as -9), and every problem
that stops an audit (exit status 2 when there is one).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from privgame.cli.terminal import json_text, terminal_safe
from privgame.core.defaults import MISSING_POLICIES

if TYPE_CHECKING:
    from privgame.data.dataset import Inspection

__all__ = ["add_parser", "report", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``schema`` sub-parser."""
    parser = subparsers.add_parser(
        "schema",
        help="show the role privgame gives each column of a table, and any problem",
        description=(
            "Read a CSV (optionally .gz) or Parquet file and show the role of each column "
            "(categorical, continuous or excluded), the rows left after the missing-value policy, "
            "and every problem that stops an audit (exit status 2)."
        ),
    )
    parser.add_argument("path", metavar="PATH", help="the table: .csv, .csv.gz or .parquet")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="drop",
        help="drop rows with a missing value in a used column (default), or make missing a "
        "category of its own in categorical columns",
    )
    parser.add_argument(
        "--role",
        action="append",
        default=[],
        type=_role_override,
        metavar="NAME=ROLE",
        help="force a column's role (categorical, continuous or excluded); repeat for more columns",
    )
    parser.set_defaults(handler=run)


def _role_override(text: str) -> tuple[str, str]:
    name, sep, role = text.rpartition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=ROLE (e.g. age=continuous), got {text!r}")
    return name.strip(), role.strip()


def _duplicate_rows(found: Inspection) -> int | None:
    from privgame.service import duplicate_rows

    return duplicate_rows(found)


def report(found: Inspection) -> dict[str, Any]:
    """The JSON form: exactly ``{"rows", "columns", "problems", "duplicate_rows"}``.

    ``rows`` counts the rows left after the missing-value policy (how many were dropped goes to
    stderr); each column gives ``name``, ``role``, ``dtype``, ``distinct`` (on the rows left),
    ``missing`` (in the file) and ``reason``; ``duplicate_rows`` counts the rows that repeat an
    earlier row on the used columns (``None`` when the table has problems).
    """
    keys = ("name", "role", "dtype", "distinct", "missing", "reason")
    return {
        "rows": len(found.prepared.table),
        "columns": [{k: c.to_dict()[k] for k in keys} for c in found.prepared.schema.columns],
        "problems": list(found.problems),
        "duplicate_rows": _duplicate_rows(found),
    }


def _human(found: Inspection) -> str:
    prepared = found.prepared
    header = ("name", "role", "dtype", "distinct", "missing", "reason")
    rows = [
        tuple(
            terminal_safe(cell, one_line=True)  # names and reasons come from the data
            for cell in (c.name, c.role, c.dtype, f"{c.distinct:,}", f"{c.missing:,}", c.reason or "")
        )
        for c in prepared.schema.columns
    ]
    widths = [max(len(str(r[j])) for r in [header, *rows]) for j in range(len(header))]
    right = {3, 4}

    def line(cells: tuple[str, ...]) -> str:
        parts = [
            cell.rjust(widths[j]) if j in right else cell.ljust(widths[j]) for j, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    policy = prepared.schema.missing_policy
    out = [
        f"{terminal_safe(found.source_name, one_line=True)}: {len(found.table.columns)} columns, "
        f"{len(found.table):,} rows in the file",
        f"rows: {len(prepared.table):,} used, dropped rows: {prepared.dropped_rows:,} "
        f"(missing-value policy: {policy})",
        "",
        line(header),
        *(line(r) for r in rows),
    ]
    if prepared.notes:
        out += ["", *(terminal_safe(note, one_line=True) for note in prepared.notes)]
    if found.warnings:
        out += ["", *(f"warning: {terminal_safe(w, one_line=True)}" for w in found.warnings)]
    repeated = _duplicate_rows(found)
    if repeated:
        out += [
            "",
            f"exact duplicates: {repeated:,} rows repeat an earlier row on the used columns. A record "
            "with a twin in the attacker's data is less unique than a membership attack assumes; "
            "`run --drop-duplicates` keeps one copy of each.",
        ]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Print the schema of ``args.path``; exit status 2 when the table has problems."""
    from privgame.service import inspect_dataset

    found = inspect_dataset(args.path, roles=dict(args.role) or None, missing_policy=args.missing)
    if args.json:
        print(json_text(report(found)))
        for note in found.prepared.notes:
            print(f"privgame: {terminal_safe(note, one_line=True)}", file=sys.stderr)
        for warning in found.warnings:
            print(f"privgame: warning: {terminal_safe(warning, one_line=True)}", file=sys.stderr)
    else:
        print(_human(found))
    if not found.problems:
        return 0
    if not args.json:
        name = terminal_safe(found.source_name, one_line=True)
        print(f"privgame: {name} cannot be used for an audit as it is:", file=sys.stderr)
        for problem in found.problems:
            print(f"  - {terminal_safe(problem, one_line=True)}", file=sys.stderr)
    return 2
