"""A generator whose every fit takes a set time, for tests of progress and time budgets."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Self

import numpy as np

from privgame.data.schema import Schema
from privgame.generators import GENERATORS, register
from privgame.generators.marginals import MarginalsGenerator

NAME = "test_slow_fits"


class SlowFits(MarginalsGenerator):
    """The marginals generator, each fit waiting :attr:`seconds` first (and fitted afresh for
    every dataset: not deterministic, so that every dataset is a fit of its own)."""

    name = NAME
    deterministic_fit = False
    seconds = 0.0

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        time.sleep(self.seconds)
        return super().fit(X, schema, rng=rng)


@contextlib.contextmanager
def slow_generator(seconds: float) -> Iterator[str]:
    """Register :class:`SlowFits` with fits of ``seconds`` and yield its name; the registry forgets
    it afterwards. In-process runs only (``workers=1``)."""
    SlowFits.seconds = seconds
    register(SlowFits)
    try:
        yield NAME
    finally:
        GENERATORS.pop(NAME)
