"""The ``study`` command's arguments, made from the options' declarations, and the
:class:`~privgame.studies.request.StudyRequest` they ask for.

:func:`add_study_parser` adds ``study`` and its sub-commands to the command line's parser;
:func:`study_arguments` parses a study's flags as the command line does; :func:`study_request`
turns them into the request that the dashboard's Studies page builds from its widgets.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING

from privgame.cli.commands._arguments import (
    add_attack_options,
    add_domain_option,
    add_generator_options,
    add_option,
    clause,
    generator_params,
)
from privgame.core.defaults import (
    EPSILON_GENERATORS,
    MISSING_POLICIES,
    STUDIES,
    STUDY_TITLES,
)
from privgame.core.errors import ParameterError
from privgame.core.options import BINS, DEGREE, TARGET_SELECTION
from privgame.core.parameters import argparse_type
from privgame.studies.request import (
    DEFAULT_REPEATS,
    DEFAULT_RHO,
    STUDY_N_SHADOW,
    STUDY_TARGETS,
    VARIED,
    StudyRequest,
    prepare_study,
)

if TYPE_CHECKING:
    from privgame.data import Dataset
    from privgame.studies import StudySpec

__all__ = ["add_study_parser", "build_study_spec", "study_arguments", "study_request"]


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
            default=None,
            metavar="K",
            help=f"evaluate K records (default {targets})",
        )
        chosen.add_argument("--target-ids", nargs="+", metavar="ID", help="evaluate these record ids")
        add_option(group, TARGET_SELECTION)
    attack = parser.add_argument_group("attack and games")
    add_attack_options(
        attack,
        parser,
        n_shadow=STUDY_N_SHADOW,
        n_eval=n_eval,
        attacker=StudyRequest.attacker,
        attacker_text="The threat model: population knows a sample of the population and none of D "
        "(the paper's; plays both games); leave-one-out knows every record of D but the target and "
        "plays the model-seeded game only, so the study's traditional figures read 'not run'",
        seed_text="The study's root seed",
    )
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
    _add_varied(size, "size", "N")
    _common(size, targets=STUDY_TARGETS["size"])

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
    add_option(
        group,
        DEGREE,
        default=None,
        text="PrivBayes: " + clause(DEGREE.help),
        default_text=str(DEGREE.default),
    )
    add_option(group, BINS, default=None, default_text=str(BINS.default))
    _add_varied(eps, "epsilon", "EPS")
    eps.add_argument("--size", type=int, help=_SIZE_HELP)
    _common(eps, targets=STUDY_TARGETS["epsilon"])

    datasets = sub.add_parser(
        "datasets",
        help=STUDY_TITLES["datasets"],
        description=(
            "One record's model-seeded risk in K datasets drawn around it as in the traditional "
            "game, beside its traditional risk (the paper's Fig. 5)."
        ),
    )
    add_generator_options(datasets)
    _add_varied(datasets, "datasets", "K")
    datasets.add_argument(
        "--record-id", type=int, help="the record (a row of D_eval; default: a random record of D)"
    )
    add_option(
        datasets, TARGET_SELECTION, text="Without --record-id: a random record of D, or its most outlying one"
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
    _add_varied(conv, "convergence", "N")
    conv.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"full evaluations per record (default {DEFAULT_REPEATS})",
    )
    conv.add_argument(
        "--rho",
        type=float,
        default=DEFAULT_RHO,
        help=f"Hoeffding failure probability (default {DEFAULT_RHO})",
    )
    conv.add_argument("--size", type=int, help=_SIZE_HELP)
    _common(conv, targets=STUDY_TARGETS["convergence"], n_eval=False)

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


def _add_varied(parser: argparse.ArgumentParser, study: str, metavar: str) -> None:
    """The flag of the values ``study`` varies, from their declaration (:data:`VARIED`): each value
    read as the Studies page reads it, the default the request's."""
    field, label, read, several = VARIED[study]
    default = getattr(StudyRequest(study=study), field)  # type: ignore[arg-type]
    words = [("inf" if v == math.inf else f"{v:g}") for v in (default if several else [default])]
    shown = " ".join(words if len(words) <= 6 else [*words[:3], "...", words[-1]])
    parser.add_argument(
        "--" + field.replace("_", "-"),
        type=argparse_type(read),
        nargs="+" if several else None,
        default=list(default) if several else default,
        metavar=metavar,
        help=f"{clause(label)} (default {shown})",
    )


def study_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` (``["size", "--sizes", "200", ...]``) parsed as ``python -m privgame study`` parses it.

    ``--data`` and ``--out`` may be left out (a test reads back the command the Studies page shows).

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


def study_request(args: argparse.Namespace) -> StudyRequest:
    """The request that the parsed ``study NAME ...`` flags ask for.

    Raises
    ------
    ParameterError
        For generator options that do not fit the generator.
    """
    given = {f.name: getattr(args, f.name) for f in fields(StudyRequest) if hasattr(args, f.name)}
    given["study"] = args.study_command
    given["generator_params"] = generator_params(args)
    for name in ("target_ids", "sizes", "epsilons", "n_evals"):
        if given.get(name) is not None:
            given[name] = tuple(given[name])
        else:
            given.pop(name, None)
    if given.get("target_ids"):
        from privgame.service import parse_ids

        given["target_ids"] = parse_ids(list(given["target_ids"]))
    return StudyRequest(**{key: value for key, value in given.items() if value is not None})


def build_study_spec(args: argparse.Namespace, dataset: Dataset | None = None) -> tuple[StudySpec, Dataset]:
    """The study spec and the dataset from the command-line arguments.

    ``dataset`` replaces ``--data`` (a test passes a table it holds).
    """
    from privgame.service import apply_domain, load_dataset

    if dataset is None:
        dataset = apply_domain(
            load_dataset(args.data, missing_policy=args.missing), getattr(args, "domain", None)
        )
    return prepare_study(study_request(args), dataset), dataset
