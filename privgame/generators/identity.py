"""The identity generator: releases its training rows. FOR TESTS AND SANITY CHECKS ONLY."""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.core.errors import ParameterError
from privgame.data.schema import Schema
from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import register

__all__ = ["IdentityGenerator"]


@register
class IdentityGenerator(SyntheticGenerator):
    """Returns its training rows in a random order: it leaks everything.

    Asked for more rows than it holds, it repeats them (every row as evenly as possible, the
    remainder drawn without replacement); asked for fewer, it samples without replacement. It
    exists to check that the attack and the games detect a total leak.
    """

    name = "identity"
    label = "Identity (leaks every record: tests only)"
    leaks_training_data = True
    deterministic_fit = True

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        if len(X) == 0:
            raise ParameterError("The identity generator needs at least one training row.")
        self.schema_ = schema
        self.rows_ = np.array(X, dtype=np.float64, copy=True)
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        self._check_fitted()
        if n < 0:
            raise ParameterError(f"Cannot sample {n} rows: n must be >= 0.")
        m = len(self.rows_)
        repeats, rest = divmod(n, m)
        index = np.concatenate([np.tile(np.arange(m), repeats), rng.permutation(m)[:rest]])
        return self.rows_[rng.permutation(index)]
