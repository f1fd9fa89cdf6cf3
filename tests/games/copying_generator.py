"""A generator that copies chosen records into its sample, for tests of the games (a planted leak
of exactly those records)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Self

import numpy as np

from privgame.data.schema import Schema
from privgame.generators import GENERATORS, SyntheticGenerator, register


class CopiesChosenRecords(SyntheticGenerator):
    """Copies every training row equal to one of ``leaked`` into its sample; the rest of the
    sample is rows of ``public`` (none of D). A planted leak of exactly those records."""

    name = "test_copies_chosen"
    leaked: np.ndarray = np.empty((0, 0))
    public: np.ndarray = np.empty((0, 0))

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        hit = (X[:, None, :] == self.leaked[None, :, :]).all(axis=2).any(axis=1)
        self.copied_ = X[hit]
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        rest = self.public[rng.integers(0, len(self.public), size=n - len(self.copied_))]
        return np.concatenate([self.copied_, rest])[:n]


@contextlib.contextmanager
def copies_chosen(leaked: np.ndarray, public: np.ndarray) -> Iterator[str]:
    """Register :class:`CopiesChosenRecords` copying ``leaked`` (encoded rows) and otherwise
    sampling ``public``, and yield its name; the registry forgets it afterwards. In-process runs
    only (``workers=1``)."""
    CopiesChosenRecords.leaked, CopiesChosenRecords.public = leaked, public
    register(CopiesChosenRecords)
    try:
        yield CopiesChosenRecords.name
    finally:
        GENERATORS.pop(CopiesChosenRecords.name)
