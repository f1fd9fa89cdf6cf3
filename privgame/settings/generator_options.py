"""A generator's parameters as a face gives them (the command line's flags, the pages' widgets, the
API's keywords), checked against the generator's declared options (:mod:`privgame.core.options`),
and the public domain file; below every face, with no argparse (the flags are made in
:mod:`privgame.cli.commands._arguments`)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from privgame.core.errors import ParameterError
from privgame.core.options import GENERATOR_OPTIONS, option_problems

if TYPE_CHECKING:
    from privgame.data import Dataset

__all__ = [
    "apply_domain",
    "check_generator_params",
    "given_generator_params",
]


def given_generator_params(name: str, given: Mapping[str, Any], pairs: Sequence[str] = ()) -> dict[str, Any]:
    """The generator parameters a face gave, checked against the generator.

    ``given`` holds the built-in options by name (None: not given), as the command line's flags
    (``--degree``, ``--epsilon``, ``--bins``, ``--min-leaf``, ...) read them; ``pairs`` the
    plug-in's ``KEY=VALUE`` texts, VALUE parsed as JSON when it parses (``3``, ``0.5``, ``true``,
    ``[1, 2]``) and kept as a string otherwise. A built-in generator takes only its own options,
    each within its declared range; a plug-in takes pairs only.

    Raises
    ------
    ParameterError
        For an unknown generator or a plug-in that cannot be loaded, or listing every option that
        does not fit the generator, every value out of its range and every malformed pair.
    """
    allowed = GENERATOR_OPTIONS.get(name)
    if allowed is None:
        from privgame.generators import resolve

        resolve(name)  # an unknown name or a broken plug-in fails here, with its own message
    flags = {option.name: option.flag for options in GENERATOR_OPTIONS.values() for option in options}
    params: dict[str, Any] = {}
    problems = []
    for key, value in given.items():
        if value is None:
            continue
        if allowed is None:
            problems.append(
                f"{flags[key]} applies to built-in generators only; pass plug-in parameters as "
                "--param KEY=VALUE."
            )
        elif key not in (option.name for option in allowed):
            problems.append(f"{flags[key]} does not apply to the {name} generator; remove it.")
        else:
            params[key] = value
    if pairs and allowed is not None:
        problems.append(
            f"--param applies to plug-in generators only; the {name} generator takes "
            f"{', '.join(option.flag for option in allowed) or 'no options'}."
        )
    elif pairs:
        params = _plugin_params(list(pairs), problems)
    if allowed is not None:
        problems += option_problems({option.name: option for option in allowed}, params)
    if problems:
        raise ParameterError("Some generator options do not fit the generator.", problems)
    return params


def check_generator_params(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters given by keyword (the Python API), checked against the generator: a built-in
    generator takes only its own options, each within its declared range; a plug-in takes any,
    which its constructor checks.

    Raises
    ------
    ParameterError
        For an unknown generator or a plug-in that cannot be loaded, or listing every parameter
        the built-in generator does not take and every value out of its range.
    """
    allowed = GENERATOR_OPTIONS.get(name)
    if allowed is None:
        from privgame.generators import resolve

        resolve(name)  # an unknown name or a broken plug-in fails here, with its own message
        return dict(params)
    names = [option.name for option in allowed]
    problems = [
        f"{key!r} is not a parameter of the {name} generator; it takes {', '.join(names) or 'none'}."
        for key in params
        if key not in names
    ]
    given = {key: value for key, value in params.items() if value is not None}
    problems += option_problems({option.name: option for option in allowed}, given)
    if problems:
        raise ParameterError("Some generator parameters do not fit the generator.", problems)
    return given


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
