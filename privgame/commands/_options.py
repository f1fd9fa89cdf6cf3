"""Command-line options shared by several commands (generator choice and its parameters)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from privgame.errors import ParameterError

__all__ = ["add_generator_options", "generator_params"]

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
