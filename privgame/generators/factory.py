"""Generators by name: built-in ones from the registry, plug-ins wrapped in their guard.

``create`` and ``is_known`` accept built-in names and plug-in names (``module.path:ClassName`` or
an entry point of the group ``privgame.generators``, see :mod:`privgame.generators.plugins`).
"""

from __future__ import annotations

from typing import Any

from privgame.core.errors import ParameterError
from privgame.generators.base import SyntheticGenerator
from privgame.generators.plugins import PluginGenerator, resolve
from privgame.generators.registry import GENERATORS

__all__ = ["create", "is_known"]


def is_known(name: str) -> bool:
    """Whether ``name`` is a built-in generator or a plug-in that can be loaded.

    A plug-in name is resolved for this, which imports its module.
    """
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
    cls = resolve(name)
    try:
        generator = cls(**params)
    except TypeError as exc:
        raise ParameterError(f"Bad parameters for generator {name!r}: {exc}.") from None
    if cls not in GENERATORS.values():  # privgame's own classes, however named, are trusted
        generator = PluginGenerator(generator, name=name)
    return generator
