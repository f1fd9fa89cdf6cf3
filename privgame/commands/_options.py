"""Command-line options shared by several commands (generator choice and its parameters)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from privgame.data import Dataset, declare_domain, parse_domain
from privgame.errors import ParameterError

__all__ = ["add_domain_option", "add_generator_options", "apply_domain", "generator_params"]

_PARAMS_BY_GENERATOR: dict[str, tuple[str, ...]] = {
    "synthpop": ("min_samples_leaf",),
    "baynet": ("degree", "bins"),
    "privbayes": ("degree", "epsilon", "bins"),
    "marginals": (),
    "identity": (),
}


def _epsilon(text: str) -> float:
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"epsilon must be a number or 'inf', not {text!r}") from None


def add_generator_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--generator`` and the generator parameters to ``parser``."""
    group = parser.add_argument_group("generator")
    group.add_argument(
        "--generator",
        required=True,
        help="synthpop, baynet, privbayes, marginals, or identity (leaks every record: tests only)",
    )
    group.add_argument("--degree", type=int, help="Baynet/PrivBayes: parents per column k (default 1)")
    group.add_argument("--epsilon", type=_epsilon, help="PrivBayes: privacy budget epsilon > 0, or inf")
    group.add_argument("--bins", type=int, help="Baynet/PrivBayes: bins per continuous column (default 10)")
    group.add_argument(
        "--min-leaf",
        dest="min_samples_leaf",
        type=int,
        help="Synthpop: records per tree leaf (default 5)",
    )


def generator_params(args: argparse.Namespace) -> dict[str, Any]:
    """The generator parameters given on the command line, checked against the generator."""
    name = args.generator
    allowed = _PARAMS_BY_GENERATOR.get(name)
    if allowed is None:
        from privgame.generators import available

        raise ParameterError(f"Unknown generator {name!r}; choose one of {', '.join(available())}.")
    params: dict[str, Any] = {}
    problems = []
    for key in ("degree", "epsilon", "bins", "min_samples_leaf"):
        value = getattr(args, key, None)
        if value is None:
            continue
        if key not in allowed:
            flag = "--min-leaf" if key == "min_samples_leaf" else f"--{key}"
            problems.append(f"{flag} does not apply to the {name} generator; remove it.")
        else:
            params[key] = value
    if problems:
        raise ParameterError("Some generator options do not fit the generator.", problems)
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

    See :func:`privgame.data.parse_domain` and :func:`privgame.data.declare_domain`.
    """
    if not path:
        return dataset
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise ParameterError(
            f"--domain {path} cannot be read ({exc.strerror or exc}); check the path."
        ) from None
    try:
        domain = parse_domain(text)
    except ParameterError as error:
        raise ParameterError(f"--domain {path}: {error.summary}", error.problems) from None
    return declare_domain(dataset, domain)
