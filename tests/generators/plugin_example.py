"""An example plug-in generator for privgame: every column is resampled on its own."""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.data.schema import Schema


class IndependentBootstrap:
    """Draws each column independently from its training values: associations are not kept.

    ``jitter`` adds Gaussian noise of ``jitter`` standard deviations to the continuous columns.
    """

    label = "Independent bootstrap (example plug-in)"
    deterministic_fit = True  # fit only stores the data; all randomness is in sample

    def __init__(self, jitter: float = 0.0) -> None:
        self.jitter = jitter

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        if not self.jitter >= 0:
            raise ValueError(f"jitter must be >= 0, not {self.jitter!r}")
        self.X_ = np.array(X, dtype=np.float64)
        self.categorical_ = schema.is_categorical
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        rows = rng.integers(0, len(self.X_), size=(n, self.X_.shape[1]))
        out = np.take_along_axis(self.X_, rows, axis=0)
        noise = rng.normal(size=out.shape) * self.jitter * self.X_.std(axis=0)
        out += np.where(self.categorical_, 0.0, noise)
        # Clipping keeps every value inside the training range, hence inside the schema's domain.
        return np.clip(out, self.X_.min(axis=0), self.X_.max(axis=0))
