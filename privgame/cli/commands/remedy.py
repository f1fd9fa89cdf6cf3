"""``python -m privgame remedy``: fix what an audit found in a new run, linked to its parent."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from privgame.cli.commands._arguments import add_plugin_time_limit
from privgame.cli.terminal import terminal_safe
from privgame.core.defaults import ATTACKERS, LEAVE_OUT_CHOICES, SAMPLE_CHOICES

if TYPE_CHECKING:
    from privgame.runs.remedy import Remedy
    from privgame.store.folders import RunFolder

__all__ = ["add_parser", "remedy_from_args", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "remedy",
        help="leave records out, generalise or coarsen, then re-audit in a new run",
        description=(
            "Make a new run from a finished one with one or more remedies, linked to it (its spec "
            "names the parent run and the remedies), and re-audit it. Leaving records out reuses "
            "the parent's shadow datasets and trained attacks, which do not depend on D; a "
            "generator or column change recomputes them. The re-audit's generator fits and time are "
            "estimated on this machine and printed before it starts (--dry-run prints them and stops). "
            "Compare the runs with `privgame compare`."
        ),
    )
    parser.add_argument("run_dir", help="a finished run's folder")
    parser.add_argument(
        "--leave-out",
        choices=list(LEAVE_OUT_CHOICES),
        help="take these records (model-seeded verdict at t) out of D: at-risk reads each record on "
        "its own (2.5%% each); at-risk-together only those at risk as a set (Holm, 2.5%% for all)",
    )
    parser.add_argument(
        "--screened",
        action="store_true",
        help="with --leave-out: also take out the records of D the run's screen gives that verdict "
        "(a record at risk by either attack is at risk); the re-audit then draws a fresh random sample",
    )
    parser.add_argument("--threshold", type=float, help="t for --leave-out (default: the run's)")
    parser.add_argument(
        "--generalise",
        metavar="min-leaf=N|epsilon=E|bins=B",
        help="a stronger generator setting (Synthpop, PrivBayes, Bayesian networks)",
    )
    parser.add_argument(
        "--private",
        type=float,
        metavar="EPSILON",
        help="train the release with MST, a differentially private generator, at this epsilon: the "
        "guarantee caps every record's risk (with a public domain, --domain on run), and the re-audit "
        "measures it beside the cap",
    )
    parser.add_argument(
        "--merge-rare",
        action="append",
        default=[],
        metavar="COLUMN[:MIN_COUNT]",
        help="merge the categories seen fewer than MIN_COUNT (10) times in D; repeatable",
    )
    parser.add_argument(
        "--bin",
        action="append",
        default=[],
        metavar="COLUMN:BINS",
        help="cut a continuous column into quantile bins; repeatable",
    )
    parser.add_argument(
        "--games",
        choices=["model-seeded", "both"],
        default="model-seeded",
        help="games the re-audit plays (default: model-seeded, which the verdict rests on)",
    )
    parser.add_argument(
        "--attacker",
        choices=list(ATTACKERS),
        default=None,
        help="the threat model of the re-audit (default: the parent's); leave-one-out knows every "
        "record of D but the target and plays the model-seeded game only",
    )
    parser.add_argument(
        "--sample",
        choices=list(SAMPLE_CHOICES),
        default="kept",
        help=(
            "with --leave-out, the re-audit's random sample: kept (the default: the parent's, minus the "
            "records taken out; no new attacks, a conservative share estimate) or fresh (a new uniform "
            "sample of the new D)"
        ),
    )
    parser.add_argument("--out", help="folder for the new run (default: beside the parent)")
    parser.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    add_plugin_time_limit(parser)
    parser.add_argument("--scheduler", help="Dask scheduler tcp://HOST:PORT (or $PRIVGAME_SCHEDULER)")
    parser.add_argument("--no-run", action="store_true", help="create the new run without running it")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the re-audit's generator fits and estimated time on this machine, then stop; "
        "nothing is written",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def remedy_from_args(args: argparse.Namespace) -> Remedy:
    """The :class:`~privgame.runs.remedy.Remedy` the command line asks for."""
    from privgame.service import Remedy, parse_bin, parse_generalise, parse_merge_rare

    return Remedy(
        leave_out=args.leave_out,
        threshold=args.threshold,
        generalise=parse_generalise(args.generalise) if args.generalise else None,
        merge_rare=tuple(parse_merge_rare(v) for v in args.merge_rare),
        bins=tuple(parse_bin(v) for v in args.bin),
        games=args.games,
        sample=args.sample,
        attacker=args.attacker,
        screened=args.screened,
        private=args.private,
    )


def run(args: argparse.Namespace) -> int:
    from privgame.service import (
        RunFolder,
        create_remedy,
        find_remedy,
        plan_remedy,
        threat,
    )

    parent = RunFolder(args.run_dir)
    remedy = remedy_from_args(args)
    planned = plan_remedy(parent, remedy)
    made = find_remedy(parent, planned[0], args.out)
    if made is not None:  # a remedy is made once, as on the Remedies page
        state = made.status().get("state", "created")
        if args.dry_run:
            print(
                f"dry run: nothing was written and no run started. This remedy of {parent.run_id} was made "
                f"before, as {made.run_id} ({state}); `remedy` without --dry-run "
                + ("finds its results." if made.is_done() else "finishes it from its checkpoints.")
            )
            return 0
        print(
            f"this remedy of {parent.run_id} was made before, as {made.run_id} ({state}): "
            + ("its results stand." if made.is_done() else "finishing it rather than starting another."),
            file=sys.stderr,
        )
        if made.is_done() or args.no_run:
            print(made.path)
            return 0
        return _execute(made, args)
    if args.dry_run:
        print(
            f"dry run: nothing was written and no run started. {_estimate(parent, remedy, planned, args)[0]}"
        )
        return 0
    estimate = None if args.no_run else _estimate(parent, remedy, planned, args)
    if estimate is not None and not args.quiet:
        print(estimate[0], file=sys.stderr, flush=True)
    folder, reuse = create_remedy(parent, remedy, args.out, planned=planned)
    spec = folder.spec()
    description = (spec.parent or {}).get("description", "")
    print(f"remedy of {parent.run_id}: {terminal_safe(description, one_line=True)}", file=sys.stderr)
    if reuse["attacks"] or reuse["shadow_out"]:
        print(
            f"reused from the parent: {reuse['attacks']} trained attacks and {reuse['shadow_out']} "
            "checkpoints of shadow datasets.",
            file=sys.stderr,
        )
    elif threat.create(spec.attack.attacker).remedy_note:
        print(threat.create(spec.attack.attacker).remedy_note, file=sys.stderr)
    else:
        print(
            "the generator, the columns or the attacker change: every shadow dataset and attack is "
            "recomputed.",
            file=sys.stderr,
        )
    from privgame.service import private_note

    note = private_note(spec)
    if note:
        print(f"private training: {note}", file=sys.stderr)
    sample = (spec.parent or {}).get("remedies", {}).get("sample")
    if sample == "kept":
        print(
            f"the re-audit keeps the parent's random sample ({len(spec.targets.sample_ids)} records after "
            "the leave-out); its share of D at risk is a conservative estimate (--sample fresh draws anew).",
            file=sys.stderr,
        )
    elif sample == "fresh" and args.sample == "kept":
        print(
            "the parent's random sample cannot be kept (it was itself kept from a parent run, or it is "
            "wholly left out): a fresh one is drawn.",
            file=sys.stderr,
        )
    if args.no_run:
        print(folder.path)
        return 0
    return _execute(folder, args, None if estimate is None else estimate[1])


def _estimate(
    parent: RunFolder, remedy: Remedy, planned: tuple[Any, Any, bool], args: argparse.Namespace
) -> tuple[str, float | None]:
    """The re-audit's estimate in words (with the warning of a run over a day), and its seconds
    (None when the generator could not be timed), as the Remedies page shows it."""
    from privgame.service import cost_warning, estimate_remedy, resolve_workers, scheduler_address

    workers = resolve_workers(args.workers)
    if not args.quiet:
        print("timing the generator on this machine for the estimate…", file=sys.stderr, flush=True)
    estimate = estimate_remedy(parent, remedy, workers=workers, planned=planned)
    where = " (on the Dask cluster it may take less)" if scheduler_address(args.scheduler) else ""
    text = f"estimated re-audit: {estimate.text}{where}."
    warning = cost_warning(estimate.seconds)
    if warning:
        text += f" warning: {warning}"
    seconds = estimate.seconds if math.isfinite(estimate.seconds) else None
    return terminal_safe(text, one_line=True), seconds


def _execute(folder: RunFolder, args: argparse.Namespace, estimate: float | None = None) -> int:
    from privgame.cli.commands._progress import ProgressBar
    from privgame.service import execute, scheduler_address

    execute(
        folder,
        workers=args.workers,
        scheduler=scheduler_address(args.scheduler),
        progress=ProgressBar(args.quiet),
        estimate=estimate,
    )
    state = folder.status().get("state")
    if state != "done":
        print(f"cancelled; finish it with: python -m privgame resume {folder.path}", file=sys.stderr)
        return 3
    print(folder.path)
    return 0
