"""``SynthpopGenerator.refit_swap`` gives the model a fresh fit gives, bit for bit."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest

from privgame.core.errors import DataError, ParameterError
from privgame.data import encode, load_dataset
from privgame.data.schema import Column, Schema
from privgame.generators import _cart
from privgame.generators.synthpop import SynthpopGenerator

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult.csv.gz"


def forest_difference(a: _cart.Forest, b: _cart.Forest) -> str | None:
    """The first Forest field whose arrays differ (NaN equal to NaN), or None."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if (
            x.dtype != y.dtype
            or x.shape != y.shape
            or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
        ):
            return field.name
    return None


def model_difference(fresh: SynthpopGenerator, got: SynthpopGenerator) -> str | None:
    """What differs between two fitted models: forest arrays, visit order, metadata, samples."""
    name = forest_difference(fresh.forest_, got.forest_)
    if name is not None:
        return f"forest.{name}"
    if not np.array_equal(fresh.order_, got.order_):
        return "order_"
    if fresh.metadata != got.metadata:
        return "metadata"
    for m, seed in ((0, 0), (7, 1), (64, 2)):
        a = fresh.sample(m, rng=np.random.default_rng(seed))
        b = got.sample(m, rng=np.random.default_rng(seed))
        if not np.array_equal(a, b):
            return f"sample({m})"
    return None


def random_table(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, Schema]:
    """Mixed columns: few or many codes, small whole numbers (ties), one-decimal floats."""
    columns, data = [], []
    for c in range(d):
        kind = int(rng.integers(4))
        if kind in (0, 3):
            k = int(rng.integers(1, 5) if kind == 0 else rng.integers(2, 8))
            columns.append(Column(f"c{c}", "categorical", categories=tuple(range(k))))
            data.append(rng.integers(0, k, n).astype(float))
        elif kind == 1:
            columns.append(Column(f"c{c}", "continuous"))
            data.append(rng.integers(0, 4, n).astype(float))
        else:
            columns.append(Column(f"c{c}", "continuous"))
            data.append(np.round(rng.normal(size=n), 1))
    X = np.column_stack(data)
    if rng.random() < 0.3:  # repeated rows
        X = X[rng.integers(0, max(1, n // 3), n)]
    return X, Schema(tuple(columns))


def random_row(rng: np.random.Generator, X: np.ndarray, schema: Schema) -> np.ndarray:
    """A copy of a training row, or one with some cells changed (possibly to new values)."""
    row = X[rng.integers(len(X))].copy()
    if rng.random() < 0.3:
        return row
    for c, col in enumerate(schema.used):
        if rng.random() < 0.5:
            if col.categories is not None:
                row[c] = rng.integers(len(col.categories))
            elif rng.random() < 0.5:
                row[c] = np.round(rng.normal() * 2, 1)
            else:
                row[c] = X[rng.integers(len(X)), c]
    return row


def fresh_fit(
    params: dict, X: np.ndarray, schema: Schema, position: int, row: np.ndarray
) -> SynthpopGenerator:
    X2 = X.copy()
    X2[position] = row
    return SynthpopGenerator(**params).fit(X2, schema, rng=np.random.default_rng(0))


@pytest.fixture(params=[(0, 0), (0, 10**9), None], ids=["walk-cached", "walk-counted", "default"])
def small(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refit with every path node searched again (regrowth size 0) and every internal node's
    histograms cached or none, or with the default regrowth and cache sizes."""
    if request.param is not None:
        monkeypatch.setattr(_cart, "_REFIT_SMALL", request.param[0])
        monkeypatch.setattr(_cart, "_REFIT_CACHE", request.param[1])


@pytest.mark.usefixtures("small")
def test_refit_swap_equals_fresh_fit_on_random_tables() -> None:
    rng = np.random.default_rng(2024)
    for _ in range(60):
        n, d = int(rng.integers(2, 61)), int(rng.integers(1, 6))
        X, schema = random_table(rng, n, d)
        params = {
            "min_samples_leaf": int(rng.choice([1, 2, 5])),
            "categorical_splits": str(rng.choice(["onehot", "ordinal"])),
        }
        base = SynthpopGenerator(**params).fit(X, schema, rng=np.random.default_rng(0))
        for _ in range(4):
            position, row = int(rng.integers(n)), random_row(rng, X, schema)
            got = base.refit_swap(position, row, rng=np.random.default_rng(0))
            assert model_difference(fresh_fit(params, X, schema, position, row), got) is None, (params, n, d)


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema]:
    dataset = load_dataset(ADULT)
    return encode(dataset.table, dataset.schema), dataset.schema


@pytest.mark.usefixtures("small")
@pytest.mark.parametrize("splits", ["onehot", "ordinal"])
def test_refit_swap_equals_fresh_fit_on_adult(adult: tuple[np.ndarray, Schema], splits: str) -> None:
    X_all, schema = adult
    rng = np.random.default_rng(7)
    for n, min_leaf in ((300, 1), (1500, 5)):
        rows = rng.choice(len(X_all), n + 20, replace=False)
        X, pool = X_all[rows[:n]], X_all[rows[n:]]
        params = {"min_samples_leaf": min_leaf, "categorical_splits": splits}
        base = SynthpopGenerator(**params).fit(X, schema, rng=np.random.default_rng(0))
        for k in range(4):
            position, row = int(rng.integers(n)), pool[k]
            got = base.refit_swap(position, row, rng=np.random.default_rng(0))
            assert model_difference(fresh_fit(params, X, schema, position, row), got) is None, (n, k)


@pytest.mark.usefixtures("small")
def test_refit_swap_equals_fresh_fit_on_a_slice_with_a_sorted_list_predictor(
    adult: tuple[np.ndarray, Schema],
) -> None:
    """3,000 rows: fnlwgt has more distinct values than a histogram takes, so the refit moves
    its cached sorted lists, sorts rows or skips it; rows copied, edited or extreme."""
    X_all, schema = adult
    rng = np.random.default_rng(31)
    rows = rng.choice(len(X_all), 3_000, replace=False)
    X = X_all[rows]
    base = SynthpopGenerator().fit(X, schema, rng=np.random.default_rng(0))
    fnlwgt = [c.name for c in schema.used].index("fnlwgt")
    for k in range(10):
        position, row = int(rng.integers(len(X))), random_row(rng, X_all, schema)
        if k % 3 == 0:
            row[fnlwgt] = X[:, fnlwgt].max() + 1 + k  # a new largest value
        got = base.refit_swap(position, row, rng=np.random.default_rng(0))
        assert model_difference(fresh_fit(base.get_params(), X, schema, position, row), got) is None, k


def test_swapping_a_row_for_itself_or_a_duplicate(adult: tuple[np.ndarray, Schema]) -> None:
    X_all, schema = adult
    X = X_all[:400]
    base = SynthpopGenerator(min_samples_leaf=2).fit(X, schema, rng=np.random.default_rng(0))
    for position, row in ((5, X[5]), (5, X[6]), (0, X[399]), (399, X[0])):
        got = base.refit_swap(position, row.copy(), rng=np.random.default_rng(0))
        assert model_difference(fresh_fit(base.get_params(), X, schema, position, row), got) is None


def test_refits_leave_the_base_and_rng_untouched(adult: tuple[np.ndarray, Schema]) -> None:
    X_all, schema = adult
    X, pool = X_all[:500], X_all[500:540]
    base = SynthpopGenerator().fit(X, schema, rng=np.random.default_rng(0))
    before = dataclasses.replace(base.forest_)
    arrays = {f.name: getattr(base.forest_, f.name).copy() for f in dataclasses.fields(base.forest_)}
    for row in pool:
        rng = np.random.default_rng(3)
        state = rng.bit_generator.state
        model = base.refit_swap(17, row, rng=rng)
        assert rng.bit_generator.state == state  # fit draws nothing, so neither does a refit
        assert model is not base
        assert model.sample(5, rng=rng).shape == (5, X.shape[1])
    for name, value in arrays.items():
        assert np.array_equal(getattr(base.forest_, name), value, equal_nan=value.dtype.kind == "f"), name
    assert forest_difference(before, base.forest_) is None
    got = base.refit_swap(17, pool[0], rng=np.random.default_rng(0))  # refits after many still exact
    assert model_difference(fresh_fit(base.get_params(), X, schema, 17, pool[0]), got) is None
    again = got.refit_swap(3, pool[1], rng=np.random.default_rng(0))  # a refit model refits too
    X2 = X.copy()
    X2[17] = pool[0]
    assert model_difference(fresh_fit(base.get_params(), X2, schema, 3, pool[1]), again) is None


def test_small_tables_are_fitted_afresh_and_larger_ones_refitted(
    adult: tuple[np.ndarray, Schema], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below ``_REFIT_MIN_ROWS`` rows (where a refit costs more than a fit) ``refit_swap`` grows
    the forest afresh and builds no refit state; from it on it refits. Both are exact."""
    monkeypatch.undo()  # the default size (conftest.py sets it to 0 for the other tests)
    least = _cart._REFIT_MIN_ROWS
    assert least > 1
    X_all, schema = adult
    for n, refitted in ((least - 1, False), (least, True)):
        X = X_all[:n]
        base = SynthpopGenerator().fit(X, schema, rng=np.random.default_rng(0))
        for k, position in enumerate((0, n // 2, n - 1)):
            row = X_all[n + k]
            got = base.refit_swap(position, row, rng=np.random.default_rng(0))
            assert model_difference(fresh_fit(base.get_params(), X, schema, position, row), got) is None
            again = got.refit_swap(1, X_all[n + 5], rng=np.random.default_rng(0))  # and in turn
            X2 = X.copy()
            X2[position] = row
            assert model_difference(fresh_fit(base.get_params(), X2, schema, 1, X_all[n + 5]), again) is None
        assert (base._refit_state is not None) is refitted, n


def test_a_broken_refit_is_caught(adult: tuple[np.ndarray, Schema], monkeypatch: pytest.MonkeyPatch) -> None:
    """A refit whose root (a path node) gets its threshold one ulp off, or whose leaf values of
    one tree come in another order, is caught by the comparison."""
    X_all, schema = adult
    X, row = X_all[:600], X_all[600]
    real = _cart._refit_hist_tree  # Adult's trees are searched through histograms
    at = {name: i for i, name in enumerate(inspect.signature(real.py_func).parameters)}
    base = SynthpopGenerator(min_samples_leaf=1).fit(X, schema, rng=np.random.default_rng(0))
    fresh = fresh_fit(base.get_params(), X, schema, 11, row)
    assert model_difference(fresh, base.refit_swap(11, row, rng=np.random.default_rng(0))) is None

    def nudged_root(*args):
        out = real(*args)
        if args[at["j"]] == 3:  # tree 3's root
            threshold = args[at["threshold"]]
            threshold[args[at["base"]]] = np.nextafter(threshold[args[at["base"]]], np.inf)
        return out

    monkeypatch.setattr(_cart, "_refit_hist_tree", nudged_root)
    assert (
        model_difference(fresh, base.refit_swap(11, row, rng=np.random.default_rng(0))) == "forest.threshold"
    )

    def reversed_values(*args):
        out = real(*args)
        values = args[at["values"]]
        if args[at["j"]] == 3:
            values[:] = values[::-1].copy()
        return out

    monkeypatch.setattr(_cart, "_refit_hist_tree", reversed_values)
    assert (
        model_difference(fresh, base.refit_swap(11, row, rng=np.random.default_rng(0)))
        == "forest.leaf_values"
    )


def test_bad_inputs_raise() -> None:
    schema = Schema((Column("a", "categorical", categories=(0, 1, 2)), Column("b", "continuous")))
    X = np.array([[0.0, 1.5], [1.0, 2.0], [2.0, 0.5], [1.0, 1.0]])
    with pytest.raises(ParameterError, match="must be fitted before refit_swap"):
        SynthpopGenerator().refit_swap(0, X[0], rng=np.random.default_rng(0))
    base = SynthpopGenerator(min_samples_leaf=1).fit(X, schema, rng=np.random.default_rng(0))
    for position in (-1, 4, 1.0, True, "0"):
        with pytest.raises(ParameterError, match=r"position must be a training row index 0\.\.3"):
            base.refit_swap(position, X[0], rng=np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"has shape \(3,\) but the schema has 2 used columns"):
        base.refit_swap(0, np.zeros(3), rng=np.random.default_rng(0))
    with pytest.raises(DataError, match="does not fit the schema") as info:
        base.refit_swap(0, np.array([0.0, np.nan]), rng=np.random.default_rng(0))
    assert "missing or infinite" in str(info.value)
    for code in (3.0, -1.0, 0.5):
        with pytest.raises(DataError, match="does not fit the schema") as info:
            base.refit_swap(0, np.array([code, 1.0]), rng=np.random.default_rng(0))
        assert "not a category code 0..2" in str(info.value)
    assert (
        model_difference(
            fresh_fit(base.get_params(), X, schema, 2, X[0]),
            base.refit_swap(np.int64(2), X[0], rng=np.random.default_rng(0)),
        )
        is None
    )
