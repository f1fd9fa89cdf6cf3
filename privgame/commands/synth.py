"""``python -m privgame synth``: write the synthetic table a data owner would publish."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from privgame.commands._options import (
    add_domain_option,
    add_generator_options,
    apply_domain,
    generator_params,
)
from privgame.data import decode, encode, load_dataset
from privgame.errors import ParameterError
from privgame.generators import create
from privgame.seeding import Role, stream

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
    parser.add_argument("--missing", choices=("drop", "category"), default="drop")
    parser.add_argument("-o", "--output", required=True, help="output CSV file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.rows < 1:
        raise ParameterError(f"--rows must be at least 1, got {args.rows}.")
    if args.seed < 0:
        raise ParameterError(f"--seed must be a non-negative integer, got {args.seed}.")
    dataset = apply_domain(load_dataset(args.data, missing_policy=args.missing), args.domain)
    generator = create(args.generator, **generator_params(args))
    X = encode(dataset.table, dataset.schema)
    rng = stream(args.seed, 0, Role.GENERATOR)
    synthetic = decode(generator.fit_sample(X, dataset.schema, args.rows, rng=rng), dataset.schema)
    Path(args.output).write_bytes(synthetic.to_csv(index=False, lineterminator="\n").encode())
    note = generator.metadata.get("dp_note")
    print(
        f"wrote {len(synthetic):,} synthetic rows from {args.generator} to {args.output}",
        file=sys.stderr,
    )
    if note:
        print(f"note: {note}", file=sys.stderr)
    if generator.leaks_training_data:
        print(
            "warning: the identity generator releases the training rows themselves.",
            file=sys.stderr,
        )
    return 0
