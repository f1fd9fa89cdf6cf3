"""The bounds behind the refit's unsearched splits (``_cart._keeps_split``) hold, and matter.

A path node keeps its old split without a search when no candidate can overtake it: adding or
removing one row moves a child's term of the split proxy by at most 1 (class counts) or
``3 Y**2`` (targets and child mean within ``[-Y, Y]``). These tests check the two bounds on
random children, and that a refit which ignores them is caught by the comparison with a fresh
fit.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from test_synthpop_refit import fresh_fit, model_difference

from privgame.data import encode, load_dataset
from privgame.generators import _cart
from privgame.generators.synthpop import SynthpopGenerator

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult.csv.gz"


def class_term(counts: np.ndarray) -> float:
    return float((counts.astype(float) ** 2).sum() / counts.sum())


def test_one_row_moves_a_class_term_by_at_most_one() -> None:
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(20_000):
        k = int(rng.integers(1, 6))
        counts = rng.integers(0, int(rng.choice([2, 5, 50])), size=k)
        if counts.sum() == 0:
            counts[0] = 1
        c = int(rng.integers(k))
        added = counts.copy()
        added[c] += 1
        worst = max(worst, abs(class_term(added) - class_term(counts)))
        if counts[c] > 0 and counts.sum() > 1:
            removed = counts.copy()
            removed[c] -= 1
            worst = max(worst, abs(class_term(removed) - class_term(counts)))
    assert worst <= 1.0 + 1e-12
    assert worst > 0.9  # the bound is nearly reached: a pure child gaining a row of its class


def test_one_row_moves_a_target_term_by_at_most_three_y_squared() -> None:
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(20_000):
        n = int(rng.integers(1, 40))
        y = rng.uniform(-1.0, 1.0, size=n) * rng.choice([1.0, 0.01])
        y[: int(rng.integers(0, n + 1))] = rng.choice([-1.0, 1.0])  # extremes are the worst case
        new = float(rng.choice([-1.0, 1.0, rng.uniform(-1, 1)]))
        before = y.sum() ** 2 / n
        worst = max(worst, abs((y.sum() + new) ** 2 / (n + 1) - before))
        if n > 1:
            worst = max(worst, abs(y[1:].sum() ** 2 / (n - 1) - before))
    assert worst <= 3.0 + 1e-12
    assert worst > 2.5


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, object]:
    dataset = load_dataset(ADULT)
    return encode(dataset.table, dataset.schema), dataset.schema


def test_a_refit_without_the_bound_is_caught(adult, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the bound set to 0, a split is kept whenever it led before the swap: some refits
    then differ from a fresh fit, and the comparison says so (the real bound passes)."""
    X_all, schema = adult
    rng = np.random.default_rng(5)
    rows = rng.choice(len(X_all), 2_600, replace=False)
    X, pool = X_all[rows[:2_500]], X_all[rows[2_500:]]
    base = SynthpopGenerator().fit(X, schema, rng=np.random.default_rng(0))
    swaps = [(int(rng.integers(len(X))), pool[k]) for k in range(12)]
    for position, row in swaps[:4]:
        got = base.refit_swap(position, row, rng=np.random.default_rng(0))
        assert model_difference(fresh_fit(base.get_params(), X, schema, position, row), got) is None
    real = _cart._refit_hist_tree
    at = list(inspect.signature(real.py_func).parameters).index("bound")

    def unbounded(*args):
        args = list(args)
        args[at] = 0.0
        return real(*args)

    monkeypatch.setattr(_cart, "_refit_hist_tree", unbounded)
    differ = [
        model_difference(
            fresh_fit(base.get_params(), X, schema, position, row),
            base.refit_swap(position, row, rng=np.random.default_rng(0)),
        )
        for position, row in swaps
    ]
    assert any(d is not None for d in differ), differ
