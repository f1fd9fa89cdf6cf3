"""The options of a study, declared once for the command line and the dashboard's Studies page.

:func:`add_study_parser` adds ``study`` and its sub-commands to the command line's parser;
:func:`study_arguments` parses a study's options as the command line does (the Studies page
starts a study through it, so it offers exactly the command line's options and defaults), and
:func:`build_study_spec` turns them into a :class:`~privgame.studies.StudySpec`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from privgame.core.defaults import (
    ATTACKERS,
    DEFAULT_DATASETS,
    DEFAULT_EPSILONS,
    DEFAULT_N_EVALS,
    DEFAULT_SIZES,
    EPSILON_GENERATORS,
    MISSING_POLICIES,
    STUDIES,
    STUDY_TITLES,
)
from privgame.core.errors import ParameterError
from privgame.core.parameters import argparse_type, parse_epsilon
from privgame.settings.generator_options import (
    add_domain_option,
    add_generator_options,
    apply_domain,
    generator_params,
)
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection, parse_ids

if TYPE_CHECKING:
    from privgame.data import Dataset
    from privgame.data.splits import Sizes
    from privgame.studies import StudySpec

__all__ = ["add_study_parser", "build_study_spec", "study_arguments"]


_epsilon = argparse_type(parse_epsilon)


_SIZE_HELP = (
    "|D|: rows of the target dataset (default: a quarter of |D_eval|, at most 1,000 and at least 2; "
    "Adult: 1,000)"
)


def _common(parser: argparse.ArgumentParser, *, targets: int | None, n_eval: bool = True) -> None:
    parser.add_argument("--data", required=True, help="CSV or Parquet file")
    add_domain_option(parser)
    parser.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="drop",
        help="missing values: drop the row, or make them a category of their own (default: %(default)s)",
    )
    sizes = parser.add_argument_group(
        "split (defaults follow the paper's Adult set-up, scaled to the table: Adult's 45,222 rows "
        "give |D_aux| = 30,000, |D_eval| = 15,222, |D| = 1,000)"
    )
    sizes.add_argument(
        "--aux-size",
        type=int,
        help="|D_aux|: rows the attacker holds (default: two thirds of the table, rounded down to "
        "a multiple of 1,000 from 10,000 rows on; Adult: 30,000)",
    )
    sizes.add_argument(
        "--eval-size",
        type=int,
        help="|D_eval|: rows of the evaluation pool (default: the rest of the table; Adult: 15,222)",
    )
    if targets is not None:
        group = parser.add_argument_group("target records")
        chosen = group.add_mutually_exclusive_group()
        chosen.add_argument(
            "--targets",
            type=int,
            default=targets,
            metavar="K",
            help=f"evaluate K records (default {targets})",
        )
        chosen.add_argument("--target-ids", nargs="+", metavar="ID", help="evaluate these record ids")
        group.add_argument(
            "--target-selection",
            choices=("random", "outliers"),
            default="random",
            help="with --targets: random records or the most outlying (default: %(default)s)",
        )
    attack = parser.add_argument_group("attack and games")
    attack.add_argument("--n-shadow", type=int, default=200, help="shadow datasets (default 200)")
    if n_eval:
        attack.add_argument("--n-eval", type=int, default=200, help="evaluation runs per game (default 200)")
    attack.add_argument(
        "--classifier",
        choices=("random_forest", "logistic"),
        default="random_forest",
        help="the attack's meta-classifier (default: %(default)s)",
    )
    attack.add_argument(
        "--attacker",
        choices=list(ATTACKERS),
        default="population",
        help="the threat model (default: population, the paper's, which plays both games); "
        "leave-one-out knows every record of D but the target and plays the model-seeded game only, "
        "so the study's traditional figures read 'not run'",
    )
    parser.add_argument("--threshold", type=float, default=0.8, help="high-risk threshold t (default 0.8)")
    parser.add_argument("--seed", type=int, default=0, help="the study's root seed (default 0)")
    _execution(parser)
    parser.add_argument(
        "--out",
        help="folder that holds run folders; the study goes to OUT/studies/ (default: $PRIVGAME_RUNS "
        "when set, else runs/)",
    )


def _execution(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    parser.add_argument(
        "--scheduler",
        help="Dask scheduler tcp://HOST:PORT (default: $PRIVGAME_SCHEDULER when set, else local workers)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_study_parser(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    *,
    handler: Callable[[argparse.Namespace], int] | None = None,
) -> None:
    """Add the ``study`` sub-parser and its sub-commands; ``handler`` runs a parsed command."""
    parser = subparsers.add_parser(
        "study",
        help="run one of the paper's studies (size, epsilon, datasets, convergence)",
        description=(
            "Run one of the paper's studies as a set of runs under OUT/studies/<id>/, ending with a "
            "table (table.csv) and a figure (figure.html). An interrupted study resumes with "
            "`study resume`. Every option of a study, with its default: `study NAME --help`."
        ),
    )
    sub = parser.add_subparsers(dest="study_command", metavar="NAME", required=True)

    size = sub.add_parser(
        "size",
        help=STUDY_TITLES["size"],
        description=(
            "RMSD and mean of both risks for the same K records in nested target datasets of growing "
            "size |D| (the paper's Fig. 3). The records are drawn from the smallest D."
        ),
    )
    add_generator_options(size)
    size.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(DEFAULT_SIZES),
        metavar="N",
        help=f"values of |D| (default {' '.join(map(str, DEFAULT_SIZES))})",
    )
    _common(size, targets=20)

    eps = sub.add_parser(
        "epsilon",
        help=STUDY_TITLES["epsilon"],
        description=(
            "Both risks of the same K records for PrivBayes (the paper's Fig. 4) or MST with each "
            "privacy budget epsilon, beside the cap each budget's guarantee proves (with a public "
            "domain). epsilon = inf adds no noise (for PrivBayes, the same as Baynet)."
        ),
    )
    group = eps.add_argument_group("generator (PrivBayes or MST)")
    group.add_argument(
        "--generator",
        choices=EPSILON_GENERATORS,
        default=EPSILON_GENERATORS[0],
        help="the differentially private generator whose budget varies (default: %(default)s)",
    )
    group.add_argument("--degree", type=int, help="PrivBayes: parents per column k (default 1)")
    group.add_argument("--bins", type=int, help="bins per continuous column (default 10)")
    eps.add_argument(
        "--epsilons",
        type=_epsilon,
        nargs="+",
        default=list(DEFAULT_EPSILONS),
        metavar="EPS",
        help="privacy budgets, numbers or inf (default inf 100 10 1)",
    )
    eps.add_argument("--size", type=int, help=_SIZE_HELP)
    _common(eps, targets=20)

    datasets = sub.add_parser(
        "datasets",
        help=STUDY_TITLES["datasets"],
        description=(
            "One record's model-seeded risk in K datasets drawn around it as in the traditional "
            "game, beside its traditional risk (the paper's Fig. 5)."
        ),
    )
    add_generator_options(datasets)
    datasets.add_argument(
        "--datasets",
        type=int,
        default=DEFAULT_DATASETS,
        metavar="K",
        help=f"datasets to draw (default {DEFAULT_DATASETS})",
    )
    datasets.add_argument(
        "--record-id", type=int, help="the record (a row of D_eval; default: a random record of D)"
    )
    datasets.add_argument(
        "--target-selection",
        choices=("random", "outliers"),
        default="random",
        help="without --record-id: a random record of D, or its most outlying one (default: %(default)s)",
    )
    datasets.add_argument("--size", type=int, help=_SIZE_HELP.replace("the target dataset", "each dataset"))
    _common(datasets, targets=None)

    conv = sub.add_parser(
        "convergence",
        help=STUDY_TITLES["convergence"],
        description=(
            "The standard deviation of both risks over repeated full evaluations with fresh seeds, "
            "for growing N_eval, beside the Hoeffding bound (the paper's Fig. 6 and Appendix C)."
        ),
    )
    add_generator_options(conv)
    conv.add_argument(
        "--n-evals",
        type=int,
        nargs="+",
        default=list(DEFAULT_N_EVALS),
        metavar="N",
        help="values of N_eval, even (default 100 200 ... 2000)",
    )
    conv.add_argument("--repeats", type=int, default=10, help="full evaluations per record (default 10)")
    conv.add_argument("--rho", type=float, default=0.2, help="Hoeffding failure probability (default 0.2)")
    conv.add_argument("--size", type=int, help=_SIZE_HELP)
    _common(conv, targets=10, n_eval=False)

    resume = sub.add_parser(
        "resume", help="finish an interrupted study", description="Resume a study folder."
    )
    resume.add_argument("study_dir", help="the study folder (OUT/studies/<id>)")
    _execution(resume)

    show = sub.add_parser(
        "show", help="print a study's table", description="Print a study's table and caption."
    )
    show.add_argument("study_dir", help="the study folder (OUT/studies/<id>)")
    show.add_argument("--json", action="store_true", help="print the table as JSON (one object per row)")

    png = sub.add_parser(
        "png",
        help="write a study's figure or a run's figures as PNG",
        description=(
            "Write PNG images (needs a headless Chromium): for a study folder its figure, for a run "
            "folder the four figures of the paper's Section 5 (Figs. 1a, 1b, 2a, 2b)."
        ),
    )
    png.add_argument("folder", help="a study folder or a finished run folder")
    png.add_argument("-o", "--output-dir", required=True, help="folder for the images")
    png.add_argument("--name", help="file name prefix (default: the folder's name)")
    png.add_argument("--threshold", type=float, help="high-risk threshold t of Fig. 1a (default: the run's)")
    png.add_argument("--width", type=int, default=1100, help="image width in pixels (default: %(default)s)")
    png.add_argument("--height", type=int, default=560, help="image height in pixels (default: %(default)s)")

    for p in (size, eps, datasets, conv, resume, show, png):
        p.set_defaults(handler=handler)


# --------------------------------------------------------------------------------------------


def _sizes(args: argparse.Namespace, n_rows: int, target: int) -> Sizes:
    from privgame.data.splits import Sizes, default_sizes

    base = default_sizes(n_rows)
    aux = base.aux if args.aux_size is None else args.aux_size
    if args.eval_size is not None:
        eval_size = args.eval_size
    else:
        eval_size = base.eval if args.aux_size is None else n_rows - aux
    return Sizes(aux=aux, eval=eval_size, target=target)


def study_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` (``["size", "--sizes", "200", ...]``) parsed as ``python -m privgame study`` parses it.

    The dashboard's Studies page starts a study through this, so it offers exactly the command
    line's options and defaults. ``--data`` and ``--out`` may be left out (the page has its own
    table and runs folder).

    Raises
    ------
    ParameterError
        With the command line's own message, for an option it would refuse.
    """
    # The command line's own `study` parser, built here alone (the CLI imports this module).
    parser = argparse.ArgumentParser(prog="privgame")
    add_study_parser(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    argv = list(argv)
    if argv and argv[0] in STUDIES:
        argv += [] if "--data" in argv else ["--data", "-"]
        argv += [] if "--out" in argv else ["--out", "-"]
    messages = io.StringIO()
    try:
        with contextlib.redirect_stderr(messages):
            return parser.parse_args(["study", *argv])
    except SystemExit as stop:
        said = messages.getvalue().strip().splitlines()
        reason = said[-1].split("error: ", 1)[-1] if said else "the options were refused"
        raise ParameterError(f"The study's options were refused: {reason}.") from stop


def build_study_spec(args: argparse.Namespace, dataset: Dataset | None = None) -> tuple[StudySpec, Dataset]:
    """The study spec and the dataset from the command-line arguments.

    ``dataset`` replaces ``--data`` (the dashboard passes the table loaded on its Data page).
    """
    from privgame.data import load_dataset
    from privgame.data.splits import default_sizes
    from privgame.studies import StudySpec

    name = args.study_command
    if dataset is None:
        dataset = apply_domain(
            load_dataset(args.data, missing_policy=args.missing), getattr(args, "domain", None)
        )
    n_rows = len(dataset.table)
    if name == "epsilon":
        generator = args.generator
        if generator != "privbayes" and args.degree is not None:
            raise ParameterError(
                f"--degree is PrivBayes' parents per column; {generator} has none, so remove it."
            )
        params = {k: getattr(args, k) for k in ("degree", "bins") if getattr(args, k) is not None}
    else:
        generator = args.generator
        params = generator_params(args)
    if name == "size":
        if not args.sizes:
            raise ParameterError("Give at least one dataset size with --sizes.")
        target = min(args.sizes)
    else:
        target = default_sizes(n_rows).target if args.size is None else args.size
    if name == "datasets":
        if args.record_id is not None:
            selection = TargetSelection(mode="ids", k=None, ids=(int(args.record_id),))
        else:
            selection = TargetSelection(mode=args.target_selection, k=1)
    elif args.target_ids:
        selection = TargetSelection(mode="ids", k=None, ids=parse_ids(args.target_ids))
    else:
        selection = TargetSelection(mode=args.target_selection, k=args.targets)
    n_eval = max(args.n_evals) if name == "convergence" and args.n_evals else getattr(args, "n_eval", 200)
    from privgame.games.threat import default_games

    base = RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=_sizes(args, n_rows, target).to_dict(),
        generator=generator,
        generator_params=params,
        attack=AttackSettings(
            n_shadow=args.n_shadow,
            n_eval=n_eval,
            classifier=args.classifier,
            attacker=args.attacker,
            games=default_games(args.attacker),
        ),
        targets=selection,
        threshold=args.threshold,
        seed=args.seed,
    )
    spec = StudySpec(
        study=name,
        base=base,
        sizes=tuple(args.sizes) if name == "size" else (),
        epsilons=tuple(args.epsilons) if name == "epsilon" else (),
        n_datasets=args.datasets if name == "datasets" else 0,
        n_evals=tuple(sorted(args.n_evals)) if name == "convergence" else (),
        repeats=args.repeats if name == "convergence" else 0,
        rho=args.rho if name == "convergence" else 0.2,
    ).validate()
    return spec, dataset
