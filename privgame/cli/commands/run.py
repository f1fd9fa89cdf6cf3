"""``python -m privgame run``: audit records in both privacy games; ``resume``: finish a run."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import TYPE_CHECKING

from privgame.cli.commands._arguments import (
    add_attack_options,
    add_domain_option,
    add_generator_options,
    add_option,
    add_plugin_time_limit,
    generator_params,
)
from privgame.cli.commands._interrupt import execution_flags, interrupted, privgame_command
from privgame.cli.commands._progress import ProgressBar
from privgame.cli.terminal import terminal_safe
from privgame.core.defaults import (
    ATTACK_NAMES,
    DEFAULT_HOLDOUT,
    MISSING_POLICIES,
)
from privgame.core.errors import ParameterError
from privgame.core.options import (
    GENERATOR_OPTIONS,
    INFERENCE_THRESHOLD,
    SCREEN,
    SCREEN_OPTIONS,
    TARGET_SELECTION,
)
from privgame.core.parameters import (
    MAX_N_SHADOW,
    count_problem,
    seed_problem,
    threshold_problem,
)
from privgame.service import (
    MAX_N_EVAL,
    RunSpec,
    parse_ids,
)

if TYPE_CHECKING:
    from privgame.data import Dataset
    from privgame.games.estimate import Calibration, CostCheck
    from privgame.games.request import AuditRequest
    from privgame.generators import ContractReport
    from privgame.settings.setups import AuditInputs
    from privgame.store.folders import RunFolder

__all__ = ["add_parser", "run"]


def _holdout(text: str) -> float | int:
    """``--holdout``'s type: :func:`privgame.settings.setups.parse_holdout`, imported when it is given."""
    from privgame.service import parse_holdout

    return parse_holdout(text)


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "run",
        help="evaluate records in the traditional and model-seeded games",
        description=(
            "Train the TAPAS attack for each target record and measure its risk (ROC AUC) in the "
            "traditional and the model-seeded privacy game. Writes a run folder under --out."
        ),
    )
    add_run_options(parser)
    parser.set_defaults(handler=run)

    resume = subparsers.add_parser(
        "resume",
        help="finish an interrupted or cancelled run",
        description=(
            "Resume the run in RUN_DIR from its checkpoints; the results equal an uninterrupted run's."
        ),
    )
    resume.add_argument("run_dir", metavar="RUN_DIR", help="the run folder to finish")
    resume.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    add_plugin_time_limit(resume)
    resume.add_argument(
        "--scheduler",
        help="Dask scheduler tcp://HOST:PORT (default: $PRIVGAME_SCHEDULER when set, else local workers)",
    )
    resume.add_argument(
        "--resolve-to",
        type=int,
        metavar="E",
        help="once the run is finished, add runs to the records whose verdict is undecided, doubling "
        "N_eval each pass, until none is undecided or every record has E runs (as run --resolve-to; "
        "passes already made are kept)",
    )
    resume.add_argument("--quiet", action="store_true", help="no progress bar (default: shown)")
    resume.set_defaults(handler=run_resume)


def add_run_options(parser: argparse.ArgumentParser, *, planning: bool = False) -> None:
    """The options of ``run`` (the data, the set-up, the generator, the attack, the records): the
    ``plan`` command takes the same ones, and plans from them."""
    parser.add_argument(
        "--data", required=True, help="CSV or Parquet file: the table the release is trained on"
    )
    parser.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="drop",
        help="missing values: drop the row (default), or make them a category of their own",
    )
    parser.add_argument(
        "--drop-duplicates",
        action="store_true",
        help="keep one copy of each row repeated on the used columns, in --data and in --population "
        "(the filtering of Meeus et al.; default: off, the audit answers for the data as it is)",
    )
    add_generator_options(parser)
    add_domain_option(parser)
    setup = parser.add_argument_group(
        "set-up (default: release, D is the data the release is trained on)",
        "release: audit the release itself. The attacker's data D_aux and the reference records come "
        "from --population FILE, or else from a seeded holdout of --data that is not released. "
        "paper: the paper's research set-up, |D| rows drawn from an evaluation pool.",
    )
    setup.add_argument("--setup", choices=("release", "paper"), default="release", help="default: release")
    setup.add_argument(
        "--population",
        metavar="FILE",
        help="release: a second table with the same columns, playing the population the attacker "
        "knows; D is then the whole of --data",
    )
    setup.add_argument(
        "--holdout",
        type=_holdout,
        metavar="FRACTION|ROWS",
        help=f"release without --population: the share (default {DEFAULT_HOLDOUT}) or number of rows of "
        "--data held back to play the population; they are not released",
    )
    setup.add_argument(
        "--shadow-size",
        type=int,
        metavar="N",
        help="release: rows of each shadow dataset, drawn from D_aux without replacement (default: |D| "
        "rows, drawn with replacement when D_aux is smaller)",
    )
    setup.add_argument(
        "--aux-size",
        type=int,
        help="|D_aux|: rows the attacker holds (release: of the population, default two thirds of it; "
        "paper: of the table, default two thirds of it, rounded down to a multiple of 1,000 from "
        "10,000 rows on: 30,000 of Adult's 45,222 rows)",
    )
    setup.add_argument(
        "--size",
        type=int,
        help="paper: |D|, rows of the target dataset (default: a quarter of |D_eval|, at most 1,000 "
        "and at least 2; Adult: 1,000)",
    )
    setup.add_argument(
        "--eval-size",
        type=int,
        help="paper: |D_eval|, rows of the evaluation pool (default: the rest of the table; Adult: 15,222)",
    )
    targets = parser.add_argument_group(
        "records to audit (default: the audit plan, --outliers 20 --random 20)"
    )
    targets.add_argument(
        "--outliers",
        type=int,
        metavar="K",
        help="the K most outlying records of D: the worst case (default 20)",
    )
    targets.add_argument(
        "--random",
        type=int,
        metavar="M",
        help="M random records of D: an estimate of the share of all of D at risk (default 20)",
    )
    chosen = targets.add_mutually_exclusive_group()
    chosen.add_argument("--targets", type=int, metavar="K", help="instead of the plan: K records of D")
    chosen.add_argument("--target-ids", nargs="+", metavar="ID", help="instead of the plan: these record ids")
    chosen.add_argument("--all-targets", action="store_true", help="instead of the plan: every record of D")
    add_option(targets, TARGET_SELECTION)
    attack = parser.add_argument_group("attack and games")
    add_attack_options(
        attack,
        parser,
        attacker_text="The threat model the release is judged against: leave-one-out knows every record "
        "of D but the target (the worst case; plays the model-seeded game only), population knows a "
        "sample of the population and none of D (the paper's attacker; plays both games)",
    )
    attack.add_argument(
        "--attacks",
        default=None,
        metavar="LIST",
        help="the attacks tried on every record, the strongest on held-out shadow datasets kept: 'all' "
        f"(the release set-up's default; every one that applies to the generator) or a comma-separated "
        f"list of {', '.join(ATTACK_NAMES)} ('tapas' alone is the paper's attack and the paper "
        "set-up's default)",
    )
    attack.add_argument(
        "--games",
        choices=["both", "model-seeded"],
        default=None,
        help="games to play (default: both against the population attacker, model-seeded against "
        "the leave-one-out attacker, which cannot play the traditional game)",
    )
    attack.add_argument(
        "--traditional",
        default="pooled",
        metavar="pooled|per-target",
        help="how the traditional game's datasets are made: pooled (default) trains each generator "
        "once on a pool of datasets shared by every target, with the same per-target game; "
        "per-target trains every target's datasets separately",
    )
    screen = parser.add_argument_group(
        "the screen (every record of D)",
        "A screening pass gives every record of D a risk, an interval and a verdict, labelled "
        "'screened', from shadow fits shared by all records; the exact game then plays the audit "
        "plan and the top-screened records, and the random sample checks the screen.",
    )
    for option in SCREEN_OPTIONS:
        add_option(
            screen,
            option,
            default=None,  # not given: the set-up's (--screen) or the declaration's
            default_text="all in the release set-up, none in the paper's"
            if option is SCREEN
            else str(option.default),
        )
    inference = parser.add_argument_group(
        "attribute inference (per record)",
        "Name a secret column to play the inference game on the model-seeded runs: the attacker "
        "knows each audited record's other columns and predicts its secret from the synthetic data; "
        "a record's inference gain is how much more often it succeeds with the record in D than "
        "with it swapped out.",
    )
    inference.add_argument(
        "--secret",
        action="append",
        default=None,
        metavar="COLUMN",
        help="a secret column (repeat the flag for several)",
    )
    add_option(inference, INFERENCE_THRESHOLD, default=None, default_text=f"{INFERENCE_THRESHOLD.default:g}")
    attack.add_argument(
        "--resolve-to",
        type=int,
        metavar="E",
        help="after the first pass, add runs to the records whose verdict is undecided, doubling N_eval "
        "each pass, until none is undecided or every record has E runs",
    )
    attack.add_argument(
        "--i-know-its-large",
        action="store_true",
        help="run even when the estimated cost is over the limit (30 days of CPU time on this machine); "
        "without it such a run is refused before any work, with its estimate",
    )
    parser.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    add_plugin_time_limit(parser)
    parser.add_argument(
        "--scheduler",
        help="Dask scheduler tcp://HOST:PORT (default: $PRIVGAME_SCHEDULER when set, else local workers)",
    )
    parser.add_argument(
        "--out",
        help="folder that holds run folders (default: $PRIVGAME_RUNS when set, else runs/); the run "
        "folder's path is printed when the run starts",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    if not planning:
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print what the run would audit, its plan and its estimated time, and stop: nothing "
            "is written and no run starts",
        )


def request_from_args(args: argparse.Namespace) -> AuditRequest:
    """The :class:`~privgame.games.request.AuditRequest` the command-line arguments make (the
    generator's flags checked against the generator first)."""
    from privgame.service import AuditRequest

    return AuditRequest(
        data=args.data,
        missing=args.missing,
        domain=args.domain,
        drop_duplicates=bool(getattr(args, "drop_duplicates", False)),
        generator=args.generator,
        generator_params=generator_params(args),
        setup=args.setup,
        population=args.population,
        holdout=args.holdout,
        shadow_size=args.shadow_size,
        aux_size=args.aux_size,
        size=args.size,
        eval_size=args.eval_size,
        outliers=args.outliers,
        random=args.random,
        targets=args.targets,
        target_ids=parse_ids(args.target_ids) if args.target_ids else None,
        all_targets=bool(args.all_targets),
        target_selection=args.target_selection,
        n_shadow=args.n_shadow,
        n_eval=args.n_eval,
        classifier=args.classifier,
        attacker=args.attacker,
        attacks=args.attacks,
        games=args.games,
        traditional=args.traditional,
        screen=args.screen,
        confirm_top=args.confirm_top,
        screen_shadows=args.screen_shadows,
        secrets=tuple(args.secret or ()),
        inference_threshold=args.inference_threshold,
        threshold=args.threshold,
        seed=args.seed,
    )


def build_spec(args: argparse.Namespace) -> tuple[RunSpec, AuditInputs, Dataset]:
    """The run spec, the set-up's inputs and the dataset from the command-line arguments
    (:func:`privgame.games.request.prepare_request`, as the Python API prepares them)."""
    from privgame.service import prepare_request

    prepared = prepare_request(request_from_args(args))
    for which, flag in (("data", "--data"), ("population", "--population")):
        if which in prepared.dropped and not getattr(args, "quiet", False):
            print(
                f"note: --drop-duplicates dropped {prepared.dropped[which]:,} repeated row(s) of {flag}.",
                file=sys.stderr,
            )
    return prepared.spec, prepared.inputs, prepared.dataset


def _finish(folder: RunFolder, args: argparse.Namespace) -> int:
    state = folder.status().get("state")
    if state == "cancelled":
        print(f"cancelled; resume with: {_resume_command(folder, args)}", file=sys.stderr)
        return 3
    from privgame.service import run_summary

    summary = run_summary(folder)
    print(f"run folder: {folder.path}")
    from privgame.cli.commands.report import format_summary, wrapped

    print(wrapped(format_summary(summary)))
    return 0


def run(args: argparse.Namespace) -> int:
    from privgame.service import (
        check_launch,
        create_run,
        default_runs_root,
        resolve_workers,
        scheduler_address,
    )

    _check_settings(args)
    _check_resolve_to(args.resolve_to, args.n_eval)
    spec, inputs, dataset = build_spec(args)
    scheduler = scheduler_address(args.scheduler)
    workers = resolve_workers(args.workers)  # a bad --workers is refused before the run folder is written
    launch = check_launch(
        spec,
        inputs.table,
        workers=workers,
        scheduler=scheduler is not None,
        allow_large=args.dry_run or args.i_know_its_large,  # a dry run shows what is over the limit
    )
    if launch.plugin is not None and launch.calibration is not None:
        _print_plugin(spec, launch.plugin, launch.calibration, launch.cost.wall_seconds, workers)
    if args.dry_run:
        return _dry_run(spec, inputs, dataset, args, launch.cost)
    _print_cost(launch.cost, args)  # before anything is written
    folder = create_run(default_runs_root() if args.out is None else args.out, spec, inputs.table)
    print(f"run folder: {terminal_safe(str(folder.path), one_line=True)}", file=sys.stderr, flush=True)
    try:
        return _execute(folder, args, spec, inputs, dataset, scheduler, launch.estimate)
    except KeyboardInterrupt:
        return interrupted("run", folder.path, _resume_command(folder, args))


def _dry_run(
    spec: RunSpec,
    inputs: AuditInputs,
    dataset: Dataset,
    args: argparse.Namespace,
    cost: CostCheck,
) -> int:
    """Print what the run would audit, its plan and its estimate by part; write nothing."""
    from privgame.service import breakdown, build_context, describe_setup, plan_summary, resolve_workers

    workers = resolve_workers(args.workers)
    lines = ["dry run: nothing was written and no run started."]
    if dataset.dropped_rows:
        lines.append(f"{dataset.dropped_rows:,} rows with missing values would be dropped.")
    lines += describe_setup(spec, planned=True)
    _, targets = build_context(spec, inputs.table)
    lines.append(plan_summary(spec, len(targets), table=inputs.table)["text"])
    lines.append(f"estimated time: {cost.text}.")
    if cost.calibration is not None:
        parts = breakdown(spec, inputs.table, workers=workers, calibration=cost.calibration)
        lines.append(
            f"by part (CPU seconds): set-up {parts.setup:,.1f}, generator {parts.generator:,.1f} "
            f"({parts.total_fits:,} fits), features {parts.features:,.1f}, classifier "
            f"{parts.classifier:,.1f}, results {parts.results:,.1f}; worker start-up {parts.startup:,.1f} s "
            f"wall; the workers get {parts.parallel:.2f} cores."
        )
    if cost.over:
        lines.append(
            "this is over the limit (30 days of CPU time): a real run needs --i-know-its-large, or "
            "smaller settings (--n-shadow, --n-eval, fewer records)."
        )
    for line in lines:
        print(textwrap.fill(terminal_safe(line, one_line=True), width=100))
    return 0


def _check_settings(args: argparse.Namespace) -> None:
    """Refuse, all together and before the data is read, the settings that are wrong whatever
    the data (the same rules and words as the run spec's, :mod:`privgame.core.parameters`)."""
    problems = [threshold_problem(args.threshold), seed_problem(args.seed)]
    problems += [
        option.problem(getattr(args, option.name))
        for options in GENERATOR_OPTIONS.values()
        for option in options
        if getattr(args, option.name, None) is not None
    ]
    for name, most in (("n_shadow", MAX_N_SHADOW), ("n_eval", MAX_N_EVAL)):
        if getattr(args, name, None) is not None:
            problems.append(count_problem(name, getattr(args, name), most))
    found = [problem for problem in problems if problem is not None]
    if found:
        raise ParameterError("The run settings are not valid.", found)


def _check_resolve_to(resolve_to: int | None, n_eval: int | None) -> None:
    """Refuse an odd or too large ``--resolve-to``, and for a new run one not above ``--n-eval``.

    A resumed run passes ``n_eval`` None: its passes may already have raised the run's N_eval
    to ``--resolve-to``, which then asks for nothing more.
    """
    if resolve_to is None:
        return
    if n_eval is not None and (resolve_to % 2 or resolve_to <= n_eval or resolve_to > MAX_N_EVAL):
        raise ParameterError(
            f"--resolve-to must be an even number above --n-eval ({n_eval}) and at most "
            f"{MAX_N_EVAL:,}; got {resolve_to:,}."
        )
    if resolve_to % 2 or resolve_to < 4 or resolve_to > MAX_N_EVAL:
        raise ParameterError(
            f"--resolve-to must be an even number from 4 to {MAX_N_EVAL:,}; got {resolve_to:,}."
        )


def _resume_command(folder: RunFolder, args: argparse.Namespace) -> str:
    """The ``resume`` command that finishes what ``args`` asked for, ``--resolve-to`` passes included."""
    resolve = ["--resolve-to", str(args.resolve_to)] if getattr(args, "resolve_to", None) else []
    return privgame_command("resume", folder.path, *execution_flags(args), *resolve)


def _execute(
    folder: RunFolder,
    args: argparse.Namespace,
    spec: RunSpec,
    inputs: AuditInputs,
    dataset: Dataset,
    scheduler: str | None,
    estimate: float | None = None,
) -> int:
    """Run a created run folder to its end (and ``--resolve-to``), then print its summary.

    ``estimate`` (seconds) is shown as the time left until units have finished.
    """
    from privgame.service import execute, plan_summary

    if dataset.dropped_rows and not args.quiet:
        print(f"note: {dataset.dropped_rows:,} rows with missing values were dropped.", file=sys.stderr)
    if not args.quiet:
        from privgame.service import build_context, describe_setup

        for line in describe_setup(spec, planned=True):
            print(textwrap.fill(terminal_safe(line, one_line=True), width=100), file=sys.stderr)
        _, targets = build_context(spec, inputs.table)
        print(plan_summary(spec, len(targets), table=inputs.table)["text"], file=sys.stderr)
    execute(
        folder, workers=args.workers, scheduler=scheduler, progress=ProgressBar(args.quiet), estimate=estimate
    )
    return _resolve_and_finish(folder, args, scheduler)


def _print_cost(cost: CostCheck, args: argparse.Namespace) -> None:
    """Say the estimate (unless ``--quiet``), or that a run over the limit goes on because of
    ``--i-know-its-large`` (:func:`privgame.service.check_launch` refused it otherwise)."""
    if cost.over:
        print(
            f"warning: this run would take {cost.text}, over the limit; running it anyway "
            "(--i-know-its-large).",
            file=sys.stderr,
        )
    elif not args.quiet:
        print(f"estimated time: {cost.text}.", file=sys.stderr)


def _print_plugin(
    spec: RunSpec, report: ContractReport, calibration: Calibration, seconds: float, workers: int
) -> None:
    """Say that a plug-in follows the generator protocol, its timing and the run's estimate."""
    from privgame.service import cost_warning

    print(
        f"plug-in {spec.generator}: follows the generator protocol (one fit on {report.rows} rows took "
        f"{report.fit_seconds * 1000:,.1f} ms; one fit + sample on |D| = {spec.sizes['target']:,} rows "
        f"{calibration.fit_sample * 1000:,.1f} ms). Estimated time with {workers} workers: "
        f"{seconds / 60:,.1f} min.",
        file=sys.stderr,
    )
    warning = cost_warning(seconds)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)


def _resolve_and_finish(folder: RunFolder, args: argparse.Namespace, scheduler: str | None) -> int:
    """The ``--resolve-to`` passes, when asked for and the run is finished; then :func:`_finish`."""
    if args.resolve_to and folder.status().get("state") == "done" and not _resolve(folder, args, scheduler):
        print(f"cancelled; continue with: {_resume_command(folder, args)}", file=sys.stderr)
        return 3
    return _finish(folder, args)


def _resolve(folder: RunFolder, args: argparse.Namespace, scheduler: str | None) -> bool:
    """Extend the undecided records, doubling N_eval each pass, up to ``--resolve-to``.

    The passes start again from the run's N_eval, so after an interruption (``resume
    --resolve-to``) the same passes finish the work: a pass whose undecided records already have
    its runs is skipped, one cut short extends only the records it had not reached (their runs are
    checkpointed), and runs are indexed, so the results are those of passes never interrupted.

    Returns
    -------
    bool
        False when a pass was cancelled.
    """
    from privgame.cli.commands.extend import describe_pass
    from privgame.service import MODEL_SEEDED, extend, undecided_records

    scores = MODEL_SEEDED.array("scores")
    n = folder.spec().attack.n_eval
    target = args.resolve_to
    while n < target and (undecided := undecided_records(folder)):
        n = min(2 * n, target)
        if all(len(folder.load_target(r)[scores]) >= n for r in undecided):
            continue  # a pass made before an interruption
        # The cap was declared with the run, before any verdict was seen: off the ladder is fine.
        result = extend(
            folder,
            n,
            workers=args.workers,
            scheduler=scheduler,
            progress=ProgressBar(args.quiet),
            ladder=False,
        )
        if result.get("cancelled"):
            return False
        print(describe_pass(result), file=sys.stderr)
    return True


def run_resume(args: argparse.Namespace) -> int:
    from privgame.cli.commands.extend import describe_pass
    from privgame.service import RunFolder, execute, finish_extension, scheduler_address

    folder = RunFolder(args.run_dir)
    _check_resolve_to(args.resolve_to, None)
    print(f"run folder: {terminal_safe(str(folder.path), one_line=True)}", file=sys.stderr, flush=True)
    scheduler = scheduler_address(args.scheduler)
    try:
        # An extension cut short (Ctrl-C, kill -9) is finished first, as if never interrupted.
        finished = finish_extension(
            folder, workers=args.workers, scheduler=scheduler, progress=ProgressBar(args.quiet)
        )
        if finished is not None:
            print(describe_pass(finished), file=sys.stderr)
        execute(folder, workers=args.workers, scheduler=scheduler, progress=ProgressBar(args.quiet))
        return _resolve_and_finish(folder, args, scheduler)
    except KeyboardInterrupt:
        return interrupted("run", folder.path, _resume_command(folder, args))
