"""The generator registry: a dict of name -> class, with ``register`` and ``create``."""

from __future__ import annotations

from typing import Any

from privgame.errors import ParameterError
from privgame.generators.base import SyntheticGenerator

__all__ = ["GENERATORS", "available", "create", "register"]

GENERATORS: dict[str, type[SyntheticGenerator]] = {}


def register(cls: type[SyntheticGenerator]) -> type[SyntheticGenerator]:
    """Add a generator class under its ``name`` (usable as a class decorator)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    GENERATORS[cls.name] = cls
    return cls


def available() -> list[str]:
    """Registered generator names, in registration order."""
    return list(GENERATORS)


def create(name: str, **params: Any) -> SyntheticGenerator:
    """Build the generator registered as ``name`` with ``params``.

    Raises
    ------
    ParameterError
        For an unknown name, or a parameter the generator does not take.
    """
    try:
        cls = GENERATORS[name]
    except KeyError:
        raise ParameterError(f"Unknown generator {name!r}; choose one of {', '.join(available())}.") from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ParameterError(f"Bad parameters for generator {name!r}: {exc}.") from None
