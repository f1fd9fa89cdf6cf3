"""``python -m privgame extend``: more evaluation runs where the verdict is still undecided."""

from __future__ import annotations

import argparse
import sys

from privgame.cli.commands._arguments import add_plugin_time_limit
from privgame.cli.commands._interrupt import execution_flags, interrupted, privgame_command
from privgame.cli.commands._progress import ProgressBar
from privgame.cli.terminal import terminal_safe
from privgame.core.errors import ParameterError
from privgame.service import MAX_N_EVAL, parse_ids

__all__ = ["add_parser", "describe_pass", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "extend",
        help="add evaluation runs to the records whose verdict is undecided",
        description=(
            "Add evaluation runs, in both games, to records of a finished run, up to --n-eval runs per "
            "game, rounded to the nearest doubling of the records' runs (200 -> 1,000 asked gives "
            "800), so that a number chosen after seeing the verdicts keeps their error; each doubling "
            "counts one look. Every run already made is reused and nothing is trained twice; "
            "extending every record gives the runs of a run started with that many."
        ),
    )
    parser.add_argument("run_dir", help="a finished run's folder")
    parser.add_argument(
        "--n-eval",
        type=int,
        required=True,
        help="evaluation runs per game wanted (even), rounded to the nearest doubling of the records' runs",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--undecided-only",
        action="store_true",
        help="extend the records whose 95%% interval contains t (the default)",
    )
    chosen.add_argument("--all", action="store_true", help="extend every audited record")
    chosen.add_argument("--record-ids", nargs="+", metavar="ID", help="extend these records")
    parser.add_argument(
        "--threshold", type=float, help="t for choosing undecided records (default: the run's)"
    )
    parser.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    add_plugin_time_limit(parser)
    parser.add_argument(
        "--scheduler",
        help="Dask scheduler tcp://HOST:PORT (default: $PRIVGAME_SCHEDULER when set, else local workers)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def describe_pass(result: dict[str, object]) -> str:
    """One line: how many records got runs, and how many of the undecided ones it resolved."""
    extended = result["extended"]
    resolved = result["resolved"]
    left = result["undecided_after"]
    asked = result.get("requested")
    rounded = (
        f" ({asked} asked, rounded to the doubling ladder so the verdicts keep their error)"
        if asked is not None and asked != result["n_eval"]
        else ""
    )
    return (
        f"N_eval {result['n_eval']}{rounded}: {len(extended)} records got more runs, "  # type: ignore[arg-type]
        f"{len(resolved)} resolved, {len(left)} still undecided."  # type: ignore[arg-type]
    )


def _again(path: object, args: argparse.Namespace, record_ids: list[int] | None) -> str:
    """The ``extend`` command that goes on where this one stopped (nothing is trained twice).

    ``record_ids`` are the records read from ``--record-ids``; before they are read (an interrupt
    that early), the command repeats the option as it was given.
    """
    chosen: list[object] = []
    if args.all:
        chosen = ["--all"]
    elif record_ids or args.record_ids:
        chosen = ["--record-ids", *(record_ids or args.record_ids)]
    if args.threshold is not None:
        chosen += ["--threshold", args.threshold]
    return privgame_command("extend", path, "--n-eval", args.n_eval, *chosen, *execution_flags(args))


def run(args: argparse.Namespace) -> int:
    if args.n_eval > MAX_N_EVAL:
        raise ParameterError(f"--n-eval must be at most {MAX_N_EVAL:,}, a hard limit; got {args.n_eval:,}.")
    path: object = args.run_dir
    record_ids: list[int] | None = None
    # From the first line on: loading the engine and the run's records takes seconds, and an
    # interrupt there must say how to go on as well as one during the runs.
    try:
        from privgame.service import RunFolder, extend, scheduler_address

        folder = RunFolder(args.run_dir)
        path = folder.path
        if args.all:
            record_ids = [int(r) for r in folder.records()["record_id"]]
        elif args.record_ids:
            record_ids = list(parse_ids(args.record_ids))
        print(f"run folder: {terminal_safe(str(folder.path), one_line=True)}", file=sys.stderr, flush=True)
        result = extend(
            folder,
            args.n_eval,
            record_ids=record_ids,
            threshold=args.threshold,
            workers=args.workers,
            scheduler=scheduler_address(args.scheduler),
            progress=ProgressBar(args.quiet),
        )
        if result.get("cancelled"):
            print(f"cancelled; run it again to finish: {_again(path, args, record_ids)}", file=sys.stderr)
            return 3
        print(describe_pass(result))
    except KeyboardInterrupt:
        return interrupted("run", path, _again(path, args, record_ids))
    return 0
