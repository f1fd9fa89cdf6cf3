"""The generator registry: a dict of name -> class, with ``register`` and ``create``.

``create`` and ``is_known`` also accept plug-in names (``module.path:ClassName`` or an entry point
of the group ``privgame.generators``, see :mod:`privgame.generators.plugins`); ``available`` and
``GENERATORS`` list the built-in generators only.
"""

from __future__ import annotations

from typing import Any

from privgame.errors import ParameterError
from privgame.generators.base import SyntheticGenerator

__all__ = ["GENERATORS", "available", "create", "is_known", "register"]

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

    A plug-in that does not subclass :class:`SyntheticGenerator` comes wrapped in a
    :class:`~privgame.generators.plugins.PluginGenerator`, so every generator offers the same
    interface (``fit_sample``, ``metadata``, ...).

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
    if not isinstance(generator, SyntheticGenerator):
        generator = PluginGenerator(generator, name=name)
    return generator
