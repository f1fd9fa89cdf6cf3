"""``python -m privgame synth``: write the synthetic table a data owner would publish.

The table is written like every output (:func:`privgame.outputs.files.write_output`: owner-only,
atomically, never into a pipe or device) with spreadsheet-safe text cells
(:func:`privgame.core.csvsafe.csv_safe`).
"""

from __future__ import annotations

import argparse
import sys

from privgame.cli.commands._arguments import add_domain_option, add_generator_options, generator_params
from privgame.cli.terminal import terminal_safe
from privgame.core.defaults import MISSING_POLICIES
from privgame.core.errors import ParameterError
from privgame.settings.generator_options import apply_domain

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "synth",
        help="train a generator on a table and write a synthetic table",
        description="Train a generator on a table and write a synthetic table. Same seed, same bytes.",
    )
    parser.add_argument("--data", required=True, help="CSV or Parquet file")
    add_generator_options(parser)
    add_domain_option(parser)
    parser.add_argument("--rows", type=int, required=True, help="number of synthetic rows")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="drop",
        help="missing values: drop the row, or make them a category of their own (default: %(default)s)",
    )
    parser.add_argument(
        "-o", "--output", required=True, help="output CSV file (written owner-only, mode 0600)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.rows < 1:
        raise ParameterError(f"--rows must be at least 1, got {args.rows}.")
    if args.seed < 0:
        raise ParameterError(f"--seed must be a non-negative integer, got {args.seed}.")
    from privgame.service import (
        Role,
        check_output_path,
        create,
        csv_safe,
        decode,
        encode,
        load_dataset,
        stream,
        write_output,
    )

    check_output_path(args.output, what="the synthetic table")  # before any work
    dataset = apply_domain(load_dataset(args.data, missing_policy=args.missing), args.domain)
    generator = create(args.generator, **generator_params(args))
    X = encode(dataset.table, dataset.schema)
    rng = stream(args.seed, 0, Role.GENERATOR)
    synthetic = decode(generator.fit_sample(X, dataset.schema, args.rows, rng=rng), dataset.schema)
    # Spreadsheet-safe text cells (numbers stay numbers), owner-only: the identity generator, for
    # one, writes the private rows themselves.
    data = csv_safe(synthetic).to_csv(index=False, lineterminator="\n").encode("utf-8")
    out = write_output(args.output, data, what="the synthetic table")
    note = generator.metadata.get("dp_note")
    print(
        f"wrote {len(synthetic):,} synthetic rows from {args.generator} to "
        f"{terminal_safe(out, one_line=True)}",
        file=sys.stderr,
    )
    if note:
        print(f"note: {terminal_safe(note, one_line=True)}", file=sys.stderr)
    if generator.leaks_training_data:
        print(
            "warning: the identity generator releases the training rows themselves.",
            file=sys.stderr,
        )
    return 0
