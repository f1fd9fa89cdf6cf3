"""The generator registry: a dict of name -> class, with ``register`` and ``create``.

``create`` and ``is_known`` also accept plug-in names (``module.path:ClassName`` or an entry point
of the group ``privgame.generators``, see :mod:`privgame.generators.plugins`); ``available`` and
``GENERATORS`` list the built-in generators only.
"""

from __future__ import annotations

import os
from typing import Any

from privgame.errors import ParameterError
from privgame.generators.base import SyntheticGenerator

__all__ = ["DEVELOPER_SETTING", "GENERATORS", "available", "create", "is_known", "offered", "register"]

DEVELOPER_SETTING = "PRIVGAME_DEVELOPER"
"""Environment variable that, set to ``1``, offers the generators meant for tests on the pages."""

GENERATORS: dict[str, type[SyntheticGenerator]] = {}


def register(cls: type[SyntheticGenerator]) -> type[SyntheticGenerator]:
    """Add a generator class under its ``name`` (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    GENERATORS[cls.name] = cls
    return cls


def available() -> list[str]:
    """Registered (built-in) generator names, in registration order."""
    return list(GENERATORS)


def offered() -> list[str]:
    """The built-in generators a data owner is offered (the dashboard's choice).

    A generator that releases its training data (``leaks_training_data``: the identity generator,
    a yardstick for tests) is left out unless the developer setting ``PRIVGAME_DEVELOPER=1`` is on;
    the command line still runs it when asked for by name.
    """
    developer = os.environ.get(DEVELOPER_SETTING, "").strip() == "1"
    return [name for name, cls in GENERATORS.items() if developer or not cls.leaks_training_data]


def is_known(name: str) -> bool:
    """Whether ``name`` is a built-in generator or a plug-in that can be loaded.

    A plug-in name is resolved for this, which imports its module.
    """
    from privgame.generators.plugins import resolve

    try:
        resolve(name)
    except ParameterError:
        return False
    return True


def create(name: str, **params: Any) -> SyntheticGenerator:
    """Build the generator ``name`` (built-in or plug-in) with ``params``.

    A plug-in comes wrapped in a :class:`~privgame.generators.plugins.PluginGenerator`, whether or
    not it subclasses :class:`SyntheticGenerator`, so every generator offers the same interface
    (``fit_sample``, ``metadata``, ...) and every plug-in output is checked.

    Raises
    ------
    ParameterError
        For an unknown name or a plug-in that cannot be loaded, or a parameter the generator does
        not take.
    """
    from privgame.generators.plugins import PluginGenerator, resolve

    cls = resolve(name)
    try:
        generator = cls(**params)
    except TypeError as exc:
        raise ParameterError(f"Bad parameters for generator {name!r}: {exc}.") from None
    if cls not in GENERATORS.values():  # privgame's own classes, however named, are trusted
        generator = PluginGenerator(generator, name=name)
    return generator
