"""The generator registry: a dict of name -> class, with ``register``.

``available`` and ``GENERATORS`` list the built-in generators only; :mod:`privgame.generators.factory`
creates a generator by name, built-in or plug-in.
"""

from __future__ import annotations

import os

from privgame.generators.base import SyntheticGenerator

__all__ = ["DEVELOPER_SETTING", "GENERATORS", "available", "offered", "register"]

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
