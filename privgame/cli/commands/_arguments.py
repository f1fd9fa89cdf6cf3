"""Command-line arguments made from the options' declarations (:mod:`privgame.core.options`).

Every flag of a declared option (a generator's parameters, the attack's settings) is generated here
from its :class:`~privgame.core.options.Option`: its type, its help and its default come from the
declaration, so ``--help``, the dashboard's widgets and the Python API's checks say the same.
The commands share the generator, domain and plug-in time-limit flags through this module.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from privgame.core.options import (
    ATTACKER,
    CLASSIFIER,
    GENERATOR_OPTIONS,
    N_EVAL,
    N_SHADOW,
    SEED,
    THRESHOLD,
    Option,
)
from privgame.core.parameters import argparse_type

__all__ = [
    "add_attack_options",
    "add_domain_option",
    "add_generator_options",
    "add_option",
    "add_plugin_time_limit",
    "clause",
    "generator_params",
]


_OWN: Any = object()


def add_option(
    group: argparse._ActionsContainer,
    option: Option,
    *,
    default: Any = _OWN,
    text: str | None = None,
    default_text: str | None = None,
) -> None:
    """Add ``option``'s flag to ``group``: its type read by :meth:`Option.read` (or its choices),
    its help the declaration's (or ``text``) followed by the default.

    ``default`` is what the command takes when the flag is not given: the option's own by default,
    or another (None: "not given", filled in later from the set-up); ``default_text`` says it in
    words where it is not a value.
    """
    value = option.default if default is _OWN else default
    shown = default_text or ("inf" if isinstance(value, float) and math.isinf(value) else str(value))
    words = clause(text or option.help)
    kwargs: dict[str, Any] = {"dest": option.name, "default": value, "help": f"{words} (default {shown})"}
    if option.kind == "choice":
        kwargs["choices"] = option.choices
    else:
        kwargs["type"] = argparse_type(option.read)
        kwargs["metavar"] = option.flag.lstrip("-").upper()
    group.add_argument(option.flag, **kwargs)


def clause(sentence: str) -> str:
    """A declaration's help sentence as the clause ``--help`` shows: no full stop, and a first
    word that is not a name (``PrivBayes``, ``MST``) in lower case."""
    first = sentence.split(" ", 1)[0]
    if first[1:] == first[1:].lower():
        sentence = sentence[0].lower() + sentence[1:]
    return sentence.rstrip(".")


def _users(option: Option) -> str:
    """The built-in generators that take ``option``, by name: ``"baynet/privbayes"``."""
    return "/".join(name for name, options in GENERATOR_OPTIONS.items() if option in options)


def add_generator_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--generator``, every built-in generator's parameters (one flag each, from their
    declarations) and ``--param KEY=VALUE`` for plug-ins to ``parser``."""
    group = parser.add_argument_group("generator")
    group.add_argument(
        "--generator",
        required=True,
        help=(
            f"{', '.join(name for name in GENERATOR_OPTIONS if name != 'identity')}, identity (leaks "
            "every record: tests only), a plug-in class module.path:ClassName (importable from here), "
            "or the name of an installed plug-in (entry point in the group privgame.generators)"
        ),
    )
    declared: dict[str, Option] = {}
    for options in GENERATOR_OPTIONS.values():
        declared.update({option.name: option for option in options})
    for option in declared.values():
        add_option(
            group,
            option,
            default=None,  # not given: the generator's own, once the generator is known
            text=f"{_users(option)}: {clause(option.help)}",
            default_text=str(option.default),
        )
    group.add_argument(
        "--param",
        dest="plugin_params",
        action="append",
        metavar="KEY=VALUE",
        help="plug-in generators: a constructor parameter, VALUE read as JSON when it parses (repeatable)",
    )


def generator_params(args: argparse.Namespace) -> dict[str, Any]:
    """The generator parameters given on the command line, checked against the generator (see
    :func:`privgame.settings.generator_options.given_generator_params`).

    Raises
    ------
    ParameterError
        For an unknown generator or a plug-in that cannot be loaded, or listing every option that
        does not fit the generator and every malformed ``--param``.
    """
    from privgame.settings.generator_options import given_generator_params

    given = {
        option.name: getattr(args, option.name, None)
        for options in GENERATOR_OPTIONS.values()
        for option in options
    }
    return given_generator_params(args.generator, given, getattr(args, "plugin_params", None) or ())


def add_attack_options(
    attack: argparse._ActionsContainer,
    parser: argparse._ActionsContainer,
    *,
    n_shadow: int = N_SHADOW.default,
    n_eval: bool = True,
    attacker: str | None = None,
    attacker_text: str | None = None,
    seed_text: str | None = None,
) -> None:
    """Add the attack's settings to ``attack`` (``--n-shadow``, ``--n-eval``, ``--classifier``,
    ``--attacker``) and t and the seed to ``parser``, from their declarations: ``run`` and every
    study take the same flags, with the defaults given here (``attacker`` None: the set-up's)."""
    add_option(attack, N_SHADOW, default=n_shadow)
    if n_eval:
        add_option(attack, N_EVAL)
    add_option(attack, CLASSIFIER)
    add_option(
        attack,
        ATTACKER,
        default=attacker,
        text=attacker_text,
        default_text=None if attacker else "the set-up's: leave-one-out to release, population for the paper",
    )
    add_option(parser, THRESHOLD)
    add_option(parser, SEED, text=seed_text)


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


def add_domain_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--domain FILE.json``: public bounds and categories (needed for the DP guarantees)."""
    parser.add_argument(
        "--domain",
        metavar="FILE.json",
        help=(
            'public domain: {"bounds": {"age": [17, 90]}, "categories": {"race": ["A", "B"]}}; '
            "PrivBayes' and MST's differential-privacy guarantees hold only when every column's "
            "domain is public"
        ),
    )
