"""``python -m privgame run``: audit records in both privacy games; ``resume``: finish a run."""

from __future__ import annotations

import argparse
import sys

from privgame.commands._options import (
    add_domain_option,
    add_generator_options,
    apply_domain,
    generator_params,
)
from privgame.commands._progress import ProgressBar
from privgame.data import load_dataset
from privgame.data.splits import Sizes, check_sizes, default_sizes
from privgame.execution import scheduler_address
from privgame.games.engine import execute, plan_summary
from privgame.spec import AttackSettings, RunSpec, TargetSelection, parse_ids
from privgame.store import RunFolder, create_run

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "run",
        help="evaluate records in the traditional and model-seeded games",
        description=(
            "Train the TAPAS attack for each target record and measure its risk (ROC AUC) in the "
            "traditional and the model-seeded privacy game. Writes a run folder under --out."
        ),
    )
    parser.add_argument("--data", required=True, help="CSV or Parquet file")
    parser.add_argument("--missing", choices=("drop", "category"), default="drop")
    add_generator_options(parser)
    add_domain_option(parser)
    sizes = parser.add_argument_group("sizes (defaults follow the paper's Adult set-up, scaled to the table)")
    sizes.add_argument("--size", type=int, help="|D|: rows of the target dataset")
    sizes.add_argument("--aux-size", type=int, help="|D_aux|: rows the attacker holds")
    sizes.add_argument(
        "--eval-size", type=int, help="|D_eval|: rows of the evaluation pool (D is drawn from it)"
    )
    targets = parser.add_argument_group("target records")
    chosen = targets.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--targets", type=int, metavar="K", help="evaluate K records of D")
    chosen.add_argument("--target-ids", nargs="+", metavar="ID", help="evaluate these record ids")
    chosen.add_argument("--all-targets", action="store_true", help="evaluate every record of D")
    targets.add_argument("--target-selection", choices=("random", "outliers"), default="random")
    attack = parser.add_argument_group("attack and games")
    attack.add_argument("--n-shadow", type=int, default=200, help="shadow datasets (default 200)")
    attack.add_argument("--n-eval", type=int, default=200, help="evaluation runs per game (default 200)")
    attack.add_argument("--classifier", choices=("random_forest", "logistic"), default="random_forest")
    parser.add_argument("--threshold", type=float, default=0.8, help="high-risk threshold t (default 0.8)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    parser.add_argument("--scheduler", help="Dask scheduler tcp://HOST:PORT (or $PRIVGAME_SCHEDULER)")
    parser.add_argument("--out", required=True, help="folder that holds run folders")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)

    resume = subparsers.add_parser(
        "resume",
        help="finish an interrupted or cancelled run",
        description=(
            "Resume the run in RUN_DIR from its checkpoints; the results equal an uninterrupted run's."
        ),
    )
    resume.add_argument("run_dir")
    resume.add_argument("--workers", type=int)
    resume.add_argument("--scheduler")
    resume.add_argument("--quiet", action="store_true")
    resume.set_defaults(handler=run_resume)


def _sizes(args: argparse.Namespace, n_rows: int) -> Sizes:
    """Defaults scaled to the table; ``--aux-size`` alone gives D_eval the remaining rows."""
    base = default_sizes(n_rows)
    aux = base.aux if args.aux_size is None else args.aux_size
    if args.eval_size is not None:
        eval_size = args.eval_size
    else:
        eval_size = base.eval if args.aux_size is None else n_rows - aux
    sizes = Sizes(aux=aux, eval=eval_size, target=base.target if args.size is None else args.size)
    check_sizes(n_rows, sizes)
    return sizes


def build_spec(args: argparse.Namespace) -> tuple[RunSpec, object]:
    """The run spec and the dataset from the command-line arguments."""
    dataset = apply_domain(load_dataset(args.data, missing_policy=args.missing), args.domain)
    if args.all_targets:
        selection = TargetSelection(mode="all", k=None)
    elif args.target_ids:
        selection = TargetSelection(mode="ids", k=None, ids=parse_ids(args.target_ids))
    else:
        selection = TargetSelection(mode=args.target_selection, k=args.targets)
    spec = RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=_sizes(args, len(dataset.table)).to_dict(),
        generator=args.generator,
        generator_params=generator_params(args),
        attack=AttackSettings(n_shadow=args.n_shadow, n_eval=args.n_eval, classifier=args.classifier),
        targets=selection,
        threshold=args.threshold,
        seed=args.seed,
    ).validate()
    return spec, dataset


def _finish(folder: RunFolder, args: argparse.Namespace) -> int:
    state = folder.status().get("state")
    if state == "cancelled":
        print(f"cancelled; resume with: python -m privgame resume {folder.path}", file=sys.stderr)
        return 3
    summary = folder.summary()
    print(f"run folder: {folder.path}")
    from privgame.commands.report import format_summary

    print(format_summary(summary))
    return 0


def run(args: argparse.Namespace) -> int:
    spec, dataset = build_spec(args)
    scheduler = scheduler_address(args.scheduler)
    folder = create_run(args.out, spec, dataset.table)  # type: ignore[attr-defined]
    if dataset.dropped_rows and not args.quiet:  # type: ignore[attr-defined]
        print(
            f"note: {dataset.dropped_rows:,} rows with missing values were dropped.",
            file=sys.stderr,
        )  # type: ignore[attr-defined]
    if not args.quiet:
        from privgame.games.engine import build_context

        _, targets = build_context(spec, dataset.table)  # type: ignore[attr-defined]
        print(plan_summary(spec, len(targets))["text"], file=sys.stderr)
    execute(folder, workers=args.workers, scheduler=scheduler, progress=ProgressBar(args.quiet))
    return _finish(folder, args)


def run_resume(args: argparse.Namespace) -> int:
    folder = RunFolder(args.run_dir)
    execute(
        folder,
        workers=args.workers,
        scheduler=scheduler_address(args.scheduler),
        progress=ProgressBar(args.quiet),
    )
    return _finish(folder, args)
