"""``python -m privgame release``: the synthetic release of an audited run, and its release card."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from privgame.cli.terminal import terminal_safe
from privgame.core.parameters import argparse_type, parse_epsilon

_epsilon = argparse_type(parse_epsilon)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "release",
        help="train the audited generator on the audited data and write the synthetic release",
        description=(
            "Train the audited generator, with the audited parameters, on exactly the audited D, and "
            "write the synthetic table and its release card (<file>.card.json: fingerprints, generator, "
            "audit plan and verdict). Refused when the table or the generator settings given here "
            "differ from the audited ones. Same run and seed, same bytes."
        ),
    )
    parser.add_argument("run_dir", help="a finished audit's run folder")
    parser.add_argument("-o", "--output", required=True, help="the synthetic CSV file to write")
    parser.add_argument("--rows", type=int, help="synthetic rows (default: |D|)")
    parser.add_argument("--seed", type=int, help="the release's seed (default: the run's seed)")
    check = parser.add_argument_group("checks (optional): refuse the release unless these match the audit")
    check.add_argument("--data", help="the table you mean to release from: it must be the audited one")
    check.add_argument(
        "--missing", choices=("drop", "category"), help="with --data: as given to run (default: the run's)"
    )
    check.add_argument("--generator", help="the generator you mean to release with")
    check.add_argument("--degree", type=int, help="Baynet/PrivBayes: parents per column k")
    check.add_argument("--epsilon", type=_epsilon, help="PrivBayes: privacy budget epsilon, or inf")
    check.add_argument("--delta", type=float, help="MST: delta of its (epsilon, delta) guarantee")
    check.add_argument("--bins", type=int, help="Baynet/PrivBayes/MST: bins per continuous column")
    check.add_argument("--min-leaf", dest="min_samples_leaf", type=int, help="Synthpop: records per leaf")
    check.add_argument(
        "--categorical-splits",
        dest="categorical_splits",
        choices=("onehot", "ordinal"),
        help="Synthpop: how categorical predictors are split (default: the audited run's)",
    )
    parser.add_argument(
        "--threshold", type=float, help="high-risk threshold t of the card's verdict (default: the run's)"
    )
    parser.add_argument(
        "--accept-risk",
        action="store_true",
        help="release although audited records are at risk at t (refused without it); the card records it",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from privgame.service import (
        RunFolder,
        check_output_paths,
        columns_not_released_text,
        load_dataset,
        make_release,
        write_release,
    )

    # Before the generator is trained: never over the table checked against or into a run folder.
    folder = RunFolder(args.run_dir)
    spec = folder.spec()
    check_output_paths(args.output, inputs=[args.data, args.run_dir], audited_name=spec.data_name)
    data = None
    if args.data:
        data = load_dataset(
            args.data, missing_policy=args.missing or spec.schema.get("missing_policy", "drop")
        )
    params: dict[str, Any] = {
        key: getattr(args, key)
        for key in ("degree", "epsilon", "delta", "bins", "min_samples_leaf", "categorical_splits")
        if getattr(args, key) is not None
    }
    release = make_release(
        folder,
        rows=args.rows,
        seed=args.seed,
        data=data,
        generator=args.generator,
        generator_params=params,
        threshold=args.threshold,
        accept_risk=args.accept_risk,
    )
    table_path, card = write_release(release, args.output)
    print(
        f"wrote {len(release.table):,} synthetic rows to {terminal_safe(table_path, one_line=True)} "
        f"and the release card to {terminal_safe(card, one_line=True)}"
    )
    print(textwrap.fill(release.card["verdict"], width=100), file=sys.stderr)
    left_out = columns_not_released_text(folder.spec())
    if left_out:
        print(textwrap.fill(terminal_safe(left_out), width=100), file=sys.stderr)
    return 0
