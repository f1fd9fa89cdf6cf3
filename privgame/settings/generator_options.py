"""Command-line options shared by the commands and the pages (generator choice and its parameters,
the domain file, the plug-in time limit): declared once, below both faces."""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from privgame.core.errors import ParameterError
from privgame.core.parameters import argparse_type, read_epsilon

if TYPE_CHECKING:
    from privgame.data import Dataset

__all__ = [
    "add_domain_option",
    "add_generator_options",
    "add_plugin_time_limit",
    "apply_domain",
    "builtin_parameters",
    "check_generator_params",
    "generator_params",
]

_PARAMS_BY_GENERATOR: dict[str, tuple[str, ...]] = {
    "synthpop": ("min_samples_leaf", "categorical_splits"),
    "baynet": ("degree", "bins"),
    "privbayes": ("degree", "epsilon", "bins"),
    "mst": ("epsilon", "delta", "bins"),
    "marginals": (),
    "identity": (),
}
_FLAGS = {
    "degree": "--degree",
    "epsilon": "--epsilon",
    "delta": "--delta",
    "bins": "--bins",
    "min_samples_leaf": "--min-leaf",
    "categorical_splits": "--categorical-splits",
}


def builtin_parameters(name: str) -> tuple[str, ...]:
    """The parameters the command line, the pages and the API offer for the built-in generator
    ``name``; empty for a plug-in (or a built-in without any)."""
    return _PARAMS_BY_GENERATOR.get(name, ())


_epsilon = argparse_type(read_epsilon)  # its range is checked with the other settings


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"give a positive number of seconds, not {text!r}")
    return value


def add_plugin_time_limit(parser: argparse.ArgumentParser) -> None:
    """Add ``--plugin-time-limit`` (read by :func:`privgame.cli.main.main` for the whole command)."""
    from privgame.core.defaults import PLUGIN_TIME_LIMIT_SECONDS, PLUGIN_TIME_LIMIT_SETTING

    parser.add_argument(
        "--plugin-time-limit",
        type=_seconds,
        metavar="SECONDS",
        help=(
            "stop a plug-in generator's fit or sample that runs longer than this, and fail the run "
            f"with a clear error (default ${PLUGIN_TIME_LIMIT_SETTING} when set, else "
            f"{PLUGIN_TIME_LIMIT_SECONDS:.0f})"
        ),
    )


def add_generator_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--generator`` and the generator parameters to ``parser``."""
    group = parser.add_argument_group("generator")
    group.add_argument(
        "--generator",
        required=True,
        help=(
            "synthpop, baynet, privbayes, mst, marginals, identity (leaks every record: tests only), "
            "a plug-in class module.path:ClassName (importable from here), or the name of an "
            "installed plug-in (entry point in the group privgame.generators)"
        ),
    )
    group.add_argument("--degree", type=int, help="Baynet/PrivBayes: parents per column k (default 1)")
    group.add_argument(
        "--epsilon", type=_epsilon, help="PrivBayes/MST: privacy budget epsilon > 0, or inf (default 1.0)"
    )
    group.add_argument(
        "--delta", type=float, help="MST: delta of its (epsilon, delta) guarantee, in (0, 1) (default 1e-9)"
    )
    group.add_argument(
        "--bins", type=int, help="Baynet/PrivBayes/MST: bins per continuous column (default 10)"
    )
    group.add_argument(
        "--min-leaf",
        dest="min_samples_leaf",
        type=int,
        help="Synthpop: records per tree leaf (default 5)",
    )
    group.add_argument(
        "--categorical-splits",
        dest="categorical_splits",
        choices=("onehot", "ordinal"),
        help="Synthpop: split categorical predictors one category against the others (onehot, as "
        "hazy's synthpop in the paper; the default) or by thresholds on their codes (ordinal)",
    )
    group.add_argument(
        "--param",
        dest="plugin_params",
        action="append",
        metavar="KEY=VALUE",
        help="plug-in generators: a constructor parameter, VALUE read as JSON when it parses (repeatable)",
    )


def generator_params(args: argparse.Namespace) -> dict[str, Any]:
    """The generator parameters given on the command line, checked against the generator.

    Built-in generators take their own options (``--degree``, ``--epsilon``, ``--bins``,
    ``--min-leaf``, ``--categorical-splits``); plug-in generators take ``--param KEY=VALUE``
    only, VALUE parsed as JSON when it parses (``3``, ``0.5``, ``true``, ``[1, 2]``) and kept as
    a string otherwise.

    Raises
    ------
    ParameterError
        For an unknown generator or a plug-in that cannot be loaded, or listing every option that
        does not fit the generator and every malformed ``--param``.
    """
    name = args.generator
    allowed = _PARAMS_BY_GENERATOR.get(name)
    pairs: list[str] = getattr(args, "plugin_params", None) or []
    if allowed is None:
        from privgame.generators import resolve

        resolve(name)  # an unknown name or a broken plug-in fails here, with its own message
    params: dict[str, Any] = {}
    problems = []
    for key, flag in _FLAGS.items():
        value = getattr(args, key, None)
        if value is None:
            continue
        if allowed is None:
            problems.append(
                f"{flag} applies to built-in generators only; pass plug-in parameters as --param KEY=VALUE."
            )
        elif key not in allowed:
            problems.append(f"{flag} does not apply to the {name} generator; remove it.")
        else:
            params[key] = value
    if pairs and allowed is not None:
        problems.append(
            f"--param applies to plug-in generators only; the {name} generator takes "
            f"{', '.join(_FLAGS[key] for key in allowed) or 'no options'}."
        )
    elif pairs:
        params = _plugin_params(pairs, problems)
    if problems:
        raise ParameterError("Some generator options do not fit the generator.", problems)
    return params


def check_generator_params(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters given by keyword (the Python API), checked against the generator: a built-in
    generator takes only its own (their values are checked with the run spec); a plug-in takes
    any, which its constructor checks.

    Raises
    ------
    ParameterError
        For an unknown generator or a plug-in that cannot be loaded, or listing every parameter
        the built-in generator does not take.
    """
    allowed = _PARAMS_BY_GENERATOR.get(name)
    if allowed is None:
        from privgame.generators import resolve

        resolve(name)  # an unknown name or a broken plug-in fails here, with its own message
        return dict(params)
    problems = [
        f"{key!r} is not a parameter of the {name} generator; it takes {', '.join(allowed) or 'none'}."
        for key in params
        if key not in allowed
    ]
    if problems:
        raise ParameterError("Some generator parameters do not fit the generator.", problems)
    return {key: value for key, value in params.items() if value is not None}


def _plugin_params(pairs: list[str], problems: list[str]) -> dict[str, Any]:
    """``--param KEY=VALUE`` pairs as keyword arguments; a problem for each malformed one."""
    from privgame.core.jsonlimits import check_limits

    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            problems.append(
                f"--param {pair!r} is not KEY=VALUE with KEY a Python name; write e.g. --param jitter=0.1."
            )
        elif key in params:
            problems.append(f"--param {key} is given twice; keep one.")
        else:
            try:
                check_limits(text, what=f"--param {key}")
            except ParameterError as error:
                problems.append(error.summary)
                continue
            try:
                params[key] = json.loads(text)
            except ValueError:
                params[key] = text  # a bare word such as --param method=cart
    return params


def add_domain_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--domain FILE.json``: public bounds and categories (needed for PrivBayes' guarantee)."""
    parser.add_argument(
        "--domain",
        metavar="FILE.json",
        help=(
            'public domain: {"bounds": {"age": [17, 90]}, "categories": {"race": ["A", "B"]}}; '
            "PrivBayes' differential-privacy guarantee holds only when every column's domain is public"
        ),
    )


def apply_domain(dataset: Dataset, path: str | None) -> Dataset:
    """The dataset with the public domain from ``path`` declared in its schema (if given).

    See :func:`privgame.data.parse_domain` and :func:`privgame.data.declare_domain`. The file
    must be a regular file (not a pipe or a device) and is read no further than
    :data:`privgame.data.domain.MAX_DOMAIN_BYTES` (+1 byte, to see that it is over).

    Raises
    ------
    ParameterError
        For a path that cannot be read or is not a regular file, or a domain that
        :func:`~privgame.data.parse_domain` refuses.
    """
    from privgame.data import declare_domain, parse_domain
    from privgame.data.domain import MAX_DOMAIN_BYTES

    if not path:
        return dataset
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ParameterError(
                    f"--domain {path} is not a regular file (a folder, pipe or device); give a JSON file."
                )
            text = handle.read(MAX_DOMAIN_BYTES + 1)
    except OSError as exc:
        raise ParameterError(
            f"--domain {path} cannot be read ({exc.strerror or exc}); check the path."
        ) from None
    try:
        domain = parse_domain(text)
    except ParameterError as error:
        raise ParameterError(f"--domain {path}: {error.summary}", error.problems) from None
    return declare_domain(dataset, domain)
