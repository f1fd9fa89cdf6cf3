"""``python -m privgame plan``: a plan that fits a time budget, and what each cut costs."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import textwrap

from privgame.cli.commands.run import _check_settings, add_run_options, build_spec
from privgame.cli.terminal import terminal_safe
from privgame.core.errors import ParameterError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "plan",
        help="propose the records and sizes of a run that fits a time budget on this machine",
        description=(
            "Estimate the run that `run` would make with the same options on this machine, and, while it "
            "is over --budget, cut one setting at a time (N_eval and the outlying and random records "
            "first, N_shadow last), saying what each cut gives up: the width of each record's interval, "
            "the width of the share's interval, the risk a weaker attacker misses (measured). Prints the "
            "`run` command of the plan that fits. Nothing is written."
        ),
    )
    add_run_options(parser, planning=True)
    parser.add_argument("--budget", type=float, metavar="MINUTES", help="the time the run may take")
    parser.add_argument(
        "--share-width",
        type=float,
        metavar="W",
        help="the widest the 95%% interval of the share of D at risk may be, whatever the random "
        "sample finds (sets the number of random records, e.g. 0.2 needs 100)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from privgame.service import plan_for_budget, plan_rows, resolve_workers

    _check_settings(args)
    if args.budget is not None and not (0 < args.budget * 60 < math.inf):
        raise ParameterError(
            f"--budget must be a positive number of minutes (at most about 10**306); got {args.budget:g}."
        )
    workers = resolve_workers(args.workers)
    spec, inputs, _ = build_spec(args)
    print("timing the generator, the features and the attack on this machine…", file=sys.stderr, flush=True)
    plan = plan_for_budget(
        spec,
        inputs.table,
        workers=workers,
        budget_seconds=None if args.budget is None else args.budget * 60,
        share_width=args.share_width,
    )
    rows = plan_rows(plan)
    print(
        f"{'':2}{'step':<16}{'K':>5}{'M':>6}{'N_shadow':>10}{'N_eval':>8}  {'estimate':<24}"
        f"{'risk ±':>8}{'missed':>8}{'share ±':>9}"
    )
    for row in rows:
        share = "—" if row["share interval up to"] is None else f"{row['share interval up to'] / 2:.3f}"
        print(
            f"{'>' if row['chosen'] else ' ':2}{row['step']:<16}{row['K']:>5}{row['M']:>6}"
            f"{row['N_shadow']:>10,}{row['N_eval']:>8,}  {row['estimate']:<24}"
            f"{row['risk ± (95%, at t)']:>8.3f}{row['risk missed (vs N_shadow 1,000)']:>8.3f}{share:>9}"
        )
    legend = (
        "risk ±: half-width of a record's 95% interval for a risk at t; missed: how much lower every "
        "risk reads with fewer shadow datasets than 1,000 (a bias the interval does not show; measured "
        "on Adult with Synthpop, REPRODUCTION.md 6.2); share ±: half the widest 95% interval of the "
        "share of D at risk that the random sample can give."
    )
    print(textwrap.fill(legend, width=100))
    for row in rows[1:]:
        print(textwrap.fill(f"{row['step']}: {row['gives up']}.", width=100, subsequent_indent="  "))
    print(textwrap.fill(terminal_safe(plan.text, one_line=True), width=100))
    if plan.chosen is not None:
        step = plan.steps[plan.chosen]
        print("run it with:")
        print(
            "  " + terminal_safe(_run_command(args, step.options(), getattr(args, "argv", [])), one_line=True)
        )
    return 0


def _run_command(args: argparse.Namespace, options: list[str], argv: list[str]) -> str:
    """``python -m privgame run`` with the options given to ``plan`` and the plan's sizes."""
    kept: list[str] = []
    skip = 0
    dropped = {"--budget", "--share-width", "--outliers", "--random", "--n-shadow", "--n-eval"}
    for arg in argv[1:]:
        if skip:
            skip -= 1
            continue
        name = arg.split("=", 1)[0]
        if name in dropped:
            skip = 0 if "=" in arg else 1
            continue
        kept.append(arg)
    if not argv or argv[0] != "plan":
        kept = ["--data", args.data, "--generator", args.generator]
    return shlex.join(["python", "-m", "privgame", "run", *kept, *options])
