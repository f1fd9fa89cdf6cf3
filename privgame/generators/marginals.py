"""The independent-marginals baseline: every column from its own one-way marginal."""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.core.errors import ParameterError
from privgame.data.schema import Schema
from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import register

__all__ = ["MarginalsGenerator"]


@register
class MarginalsGenerator(SyntheticGenerator):
    """Samples each column independently from its empirical marginal.

    Categorical columns follow their category frequencies; continuous columns are a bootstrap of
    their observed values. Every association between columns is destroyed, which makes it the
    baseline against which the other generators' fidelity is judged.
    """

    name = "marginals"
    label = "Independent marginals (baseline)"
    deterministic_fit = True

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        if len(X) == 0:
            raise ParameterError("The marginals generator needs at least one training row.")
        self.schema_ = schema
        self.columns_ = [np.array(X[:, j], dtype=np.float64, copy=True) for j in range(X.shape[1])]
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        self._check_fitted()
        if n < 0:
            raise ParameterError(f"Cannot sample {n} rows: n must be >= 0.")
        out = np.empty((n, len(self.columns_)), dtype=np.float64)
        for j, values in enumerate(self.columns_):
            out[:, j] = values[rng.integers(0, len(values), size=n)]
        return out
