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
    every dataset: not deterministic, so that every dataset is a fit of its own); the first fit
    also computes for :attr:`compiling` seconds, as a fresh install compiles its kernels."""

    name = NAME
    deterministic_fit = False
    seconds = 0.0
    compiling = 0.0

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        if SlowFits.compiling:
            end = time.process_time() + SlowFits.compiling
            SlowFits.compiling = 0.0
            while time.process_time() < end:
                pass
        time.sleep(self.seconds)
        return super().fit(X, schema, rng=rng)


@contextlib.contextmanager
def slow_generator(seconds: float, compiling: float = 0.0) -> Iterator[str]:
    """Register :class:`SlowFits` with fits of ``seconds`` (the first ``compiling`` CPU seconds
    more) and yield its name; the registry forgets it afterwards. In-process runs only
    (``workers=1``)."""
    SlowFits.seconds, SlowFits.compiling = seconds, compiling
    register(SlowFits)
    try:
        yield NAME
    finally:
        GENERATORS.pop(NAME)
