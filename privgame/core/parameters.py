"""The settings a person gives, each declared once: its constraint, its message and its parser.

The command line, the pages and the run spec all check the high-risk threshold t, the seed, ε and
the counts N_shadow and N_eval through these functions, so each setting has one rule and one
message wherever it is given. Each ``*_problem`` function returns the problem as one sentence (or
None); each ``check_*`` function raises it; :func:`argparse_type` turns a parser into an argparse
``type``. This module imports nothing of privgame but its errors, so every layer can use it.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, TypeVar

from privgame.core.errors import ParameterError

__all__ = [
    "MAX_N_EVAL",
    "MAX_N_SHADOW",
    "argparse_type",
    "check_threshold",
    "count_problem",
    "epsilon_problem",
    "parse_epsilon",
    "read_epsilon",
    "seed_problem",
    "threshold_problem",
]

MAX_N_SHADOW = 100_000
"""The most shadow datasets a run may train its attack on (a hard limit, refused before any work)."""
MAX_N_EVAL = 100_000
"""The most evaluation runs a record may get in one game (a hard limit, refused before any work)."""

_T = TypeVar("_T")


def threshold_problem(value: Any, *, numbers_only: bool = False) -> str | None:
    """The problem with ``value`` as the high-risk threshold t, or None for a number strictly
    between 0.5 and 1 (text that reads as one too, unless ``numbers_only``).

    Both ends are refused: at t = 1 no interval lies above t, so every record would read "not at
    risk" and a release gate would pass whatever the attack found; at t <= 0.5 an attack no better
    than a coin would put records at risk.
    """
    number = None if numbers_only and isinstance(value, str) else _number(value)
    if number is not None and 0.5 < number < 1.0:
        return None
    return (
        "the high-risk threshold t must be a number between 0.5 and 1, both excluded (0.5 is a coin "
        f"toss, 1 a certain identification; the paper uses 0.8); got {value!r}."
    )


def check_threshold(value: Any) -> float:
    """``value`` as the high-risk threshold t.

    Raises
    ------
    ParameterError
        For anything but a number strictly between 0.5 and 1 (text that reads as one is accepted).
    """
    problem = threshold_problem(value)
    if problem is not None:
        raise ParameterError(problem[0].upper() + problem[1:])
    return float(value)


def seed_problem(value: Any) -> str | None:
    """The problem with ``value`` as a root seed, or None for a non-negative whole number."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    return f"the seed must be a whole number of 0 or more; got {value!r}."


def count_problem(name: str, value: Any, most: int) -> str | None:
    """The problem with ``value`` as ``name`` (``n_shadow`` or ``n_eval``), or None for an even
    whole number from 4 to ``most`` (half the datasets are 'in', half 'out')."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 4 or value % 2:
        return f"{name} must be an even integer of at least 4 (half 'in', half 'out'); got {value!r}."
    if value > most:
        return (
            f"{name} must be at most {most:,}, a hard limit (each one costs generator fits for every "
            f"target; the paper uses 1,000 and 200); got {value:,}."
        )
    return None


def epsilon_problem(value: Any) -> str | None:
    """The problem with ``value`` as a privacy budget ε, or None for a positive number (``inf``:
    no noise)."""
    number = _number(value, allow_infinite=True)
    if number is not None and number > 0:
        return None
    return f"epsilon must be a positive number, or inf for no noise; got {value!r}."


def read_epsilon(text: str) -> float:
    """ε from text as a number, ``inf``, ``infinity`` or ``∞`` (no noise), not yet checked against
    :func:`epsilon_problem`: the command line reads ``--epsilon`` so and checks it with the other
    settings, naming every problem at once.

    Raises
    ------
    ParameterError
        For text that is not a number.
    """
    cleaned = str(text).strip().lower()
    if cleaned in ("inf", "infinity", "∞", "+inf"):
        return math.inf
    value = _number(cleaned, allow_infinite=False)
    if value is None:
        raise ParameterError(f"Epsilon must be a positive number, or inf for no noise; got {text!r}.")
    return value


def parse_epsilon(text: str) -> float:
    """ε from text: a positive number, or ``inf``, ``infinity`` or ``∞`` for no noise.

    Raises
    ------
    ParameterError
        For anything else.
    """
    cleaned = str(text).strip().lower()
    value: Any = (
        math.inf if cleaned in ("inf", "infinity", "∞", "+inf") else _number(cleaned, allow_infinite=False)
    )
    problem = epsilon_problem(text if value is None else value) if value is not None else None
    if value is None:
        problem = f"epsilon must be a positive number, or inf for no noise; got {text!r}."
    if problem is not None:
        raise ParameterError(problem[0].upper() + problem[1:])
    return float(value)


def argparse_type(parse: Callable[[str], _T]) -> Callable[[str], _T]:
    """``parse`` as an argparse ``type``: its :class:`ParameterError` becomes argparse's own error
    (exit status 2, the message after ``error:``)."""

    def parsed(text: str) -> _T:
        try:
            return parse(text)
        except ParameterError as error:
            raise argparse.ArgumentTypeError(error.summary[0].lower() + error.summary[1:]) from None

    parsed.__name__ = getattr(parse, "__name__", "value")
    return parsed


def _number(value: Any, *, allow_infinite: bool = False) -> float | None:
    """``value`` as a float (text included), or None when it is not a number, NaN, a bool, or
    infinite unless ``allow_infinite``."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number) or (math.isinf(number) and not allow_infinite):
        return None
    return number
