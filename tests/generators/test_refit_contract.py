"""One contract for exact one-row refits, run over every registered generator that has one.

``base.refit_swap(position, row, rng=rng)`` must return what a fresh fit on the base's training
rows with row ``position`` replaced by ``row`` returns with the same ``rng``: the same synthetic
data bit for bit, and ``rng`` left in the same state. The engine relies on it to refit the
model-seeded game's 'out' datasets and the leave-one-out attacker's shadow datasets from the
model on D (:func:`privgame.games.work.synthesise_swapped`), so a run's results do not depend on
whether a generator has the method.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, encode, load_dataset
from privgame.data.schema import Schema
from privgame.generators import GENERATORS, available, create
from privgame.generators.base import SyntheticGenerator

WITH_REFIT = [name for name in available() if callable(getattr(GENERATORS[name], "refit_swap", None))]
SETTINGS: dict[str, list[dict[str, Any]]] = {
    "synthpop": [{}, {"min_samples_leaf": 1}, {"categorical_splits": "ordinal", "min_samples_leaf": 2}],
    "baynet": [{}, {"degree": 2, "bins": 4}],
    "privbayes": [{"epsilon": 1.0}, {"epsilon": 0.1, "degree": 2}],
}


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema]:
    dataset = load_dataset(BUNDLED_ADULT)
    return encode(dataset.table.iloc[:1200].reset_index(drop=True), dataset.schema), dataset.schema


def refit_mismatches(
    name: str, params: dict[str, Any], X: np.ndarray, schema: Schema, swaps: list[tuple[int, np.ndarray]]
) -> list[str]:
    """Every way ``refit_swap`` of the generator ``name`` differs from a fresh fit, on ``swaps``."""
    base = create(name, **params).fit(X, schema, rng=stream(1, 0))
    before = base.sample(50, rng=stream(1, 1))
    problems = []
    for k, (position, row) in enumerate(swaps):
        swapped = X.copy()
        swapped[position] = row
        fresh_rng, refit_rng = stream(2, k), stream(2, k)
        fresh = create(name, **params).fit(swapped, schema, rng=fresh_rng)
        refit = base.refit_swap(position, row, rng=refit_rng)
        if fresh_rng.bit_generator.state != refit_rng.bit_generator.state:
            problems.append(f"swap {k}: the fit and the refit drew differently from rng")
        n = len(X) if k % 2 else 17
        if fresh.sample(n, rng=fresh_rng).tobytes() != refit.sample(n, rng=refit_rng).tobytes():
            problems.append(f"swap {k} (row {position}): the samples differ")
    if base.sample(50, rng=stream(1, 1)).tobytes() != before.tobytes():
        problems.append("the base model changed")
    return problems


def _swaps(
    X: np.ndarray, outside: np.ndarray, rng: np.random.Generator, count: int
) -> list[tuple[int, np.ndarray]]:
    swaps = [(0, X[0].copy()), (len(X) - 1, X[3].copy())]  # a row for itself; a duplicate of another
    for _ in range(count):
        swaps.append((int(rng.integers(len(X))), outside[int(rng.integers(len(outside)))].copy()))
    return swaps


def test_at_least_the_built_in_generators_refit() -> None:
    assert {"synthpop", "baynet", "privbayes"} <= set(WITH_REFIT)


@pytest.mark.parametrize("name", WITH_REFIT)
def test_refit_swap_equals_a_fresh_fit_on_adult_slices(adult: tuple[np.ndarray, Schema], name: str) -> None:
    X, schema = adult
    rng = np.random.default_rng(11)
    for params in SETTINGS.get(name, [{}]):
        for n in (40, 300):
            rows = X[:n].copy()
            rows[n // 2] = rows[1]  # a repeated row in D
            swaps = _swaps(rows, X[n:], rng, 6)
            assert refit_mismatches(name, params, rows, schema, swaps) == [], (params, n)


@pytest.mark.parametrize("name", WITH_REFIT)
def test_refit_swap_equals_a_fresh_fit_on_tables_drawn_with_ties(
    adult: tuple[np.ndarray, Schema], name: str
) -> None:
    # Rows drawn with replacement from a few: many ties and repeated rows, one-row leaves.
    X, schema = adult
    rng = np.random.default_rng(12)
    for trial in range(4):
        rows = X[rng.integers(0, 25, size=60)]
        swaps = _swaps(rows, X[100:], rng, 4)
        params = SETTINGS.get(name, [{}])[trial % len(SETTINGS.get(name, [{}]))]
        assert refit_mismatches(name, params, rows, schema, swaps) == [], (params, trial)


class _BrokenRefit:
    """A generator whose refit swaps the wrong row: the contract's check must see it."""

    def __init__(self, inner: SyntheticGenerator) -> None:
        self.inner = inner

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> _BrokenRefit:
        self.inner.fit(X, schema, rng=rng)
        self.n_ = len(X)
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        return self.inner.sample(n, rng=rng)

    def refit_swap(self, position: int, row: np.ndarray, *, rng: np.random.Generator) -> SyntheticGenerator:
        return self.inner.refit_swap((position + 1) % self.n_, row, rng=rng)  # type: ignore[attr-defined]


def test_the_check_catches_a_refit_that_swaps_the_wrong_row(
    adult: tuple[np.ndarray, Schema], monkeypatch: pytest.MonkeyPatch
) -> None:
    X, schema = adult
    me = sys.modules[__name__]
    real = create
    monkeypatch.setattr(me, "create", lambda name, **params: _BrokenRefit(real(name, **params)))
    swaps = _swaps(X[:200], X[200:], np.random.default_rng(3), 4)
    assert me.refit_mismatches("synthpop", {}, X[:200], schema, swaps)
