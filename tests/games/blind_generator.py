"""A generator that ignores its training data, for tests of the games (no record can be at risk)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Self

import numpy as np

from privgame.data.schema import Schema
from privgame.generators import GENERATORS, SyntheticGenerator, register

NAME = "test_ignores_data"


class IgnoresItsData(SyntheticGenerator):
    """Samples each column of a fixed public table independently, whatever it is trained on."""

    name = NAME
    public: np.ndarray = np.empty((0, 0))

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        self.schema_ = schema
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        columns = [col[rng.integers(0, len(col), size=n)] for col in self.public.T]
        return np.stack(columns, axis=1)


@contextlib.contextmanager
def blind_generator(public: np.ndarray) -> Iterator[str]:
    """Register :class:`IgnoresItsData` sampling ``public`` (encoded rows) and yield its name;
    the registry forgets it afterwards. In-process runs only (``workers=1``)."""
    IgnoresItsData.public = public
    register(IgnoresItsData)
    try:
        yield NAME
    finally:
        GENERATORS.pop(NAME)
