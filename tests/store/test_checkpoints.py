"""Shared synthetic tables held column by column: exact, sliceable, and joined across chunks."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.core.errors import RunError
from privgame.core.seeding import stream
from privgame.store.checkpoints import SyntheticTables, shared_arrays, tables_from


def _mixed(m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Tables whose columns need each kind of dtype: codes, signed, wide whole numbers, float32,
    float64 and a negative zero."""
    columns = [
        rng.integers(0, 9, (m, n)),
        rng.integers(-100, 100, (m, n)),
        rng.integers(0, 1_500_000, (m, n)),
        rng.integers(0, 40_000, (m, n)) / 4.0,
        rng.normal(size=(m, n)),
        np.where(rng.random((m, n)) < 0.5, -0.0, 3.0),
    ]
    return np.stack(columns, axis=2).astype(np.float64)


def test_tables_give_back_every_table_bit_for_bit_in_less_memory() -> None:
    datasets = _mixed(7, 50, stream(0, 0, 0, 0))
    tables = SyntheticTables.of(datasets)
    assert len(tables) == 7 and tables.shape == datasets.shape
    assert tables.nbytes < datasets.nbytes
    assert [c.dtype for c in tables.columns][:3] == [np.uint8, np.int8, np.int32]
    for i in range(-7, 7):
        table = tables[i]
        assert table.dtype == np.float64 and table.flags.writeable
        assert np.array_equal(table.view(np.uint64), datasets[i].view(np.uint64))
    assert np.array_equal(np.asarray(tables).view(np.uint64), datasets.view(np.uint64))
    assert [t.tobytes() for t in tables] == [t.tobytes() for t in datasets]
    part = tables[2:5]
    assert isinstance(part, SyntheticTables) and len(part) == 3
    assert np.array_equal(np.asarray(part), datasets[2:5])
    with pytest.raises(IndexError, match="table 7 of 7"):
        tables[7]


def test_chunks_of_different_dtypes_join_exactly() -> None:
    rng = stream(0, 0, 0, 1)
    a = rng.integers(0, 200, (3, 20, 2)).astype(np.float64)  # uint8 columns
    b = a - 150.0  # int16 columns
    c = a + 0.5  # float32 columns
    joined = tables_from(iter([shared_arrays(a), shared_arrays(b), shared_arrays(c)]))
    assert np.array_equal(np.asarray(joined), np.concatenate([a, b, c]))
    old = {"datasets": a}  # a checkpoint as of old, one float64 array
    assert np.array_equal(np.asarray(tables_from([old, shared_arrays(b)])), np.concatenate([a, b]))
    with pytest.raises(RunError, match="no shared checkpoints"):
        tables_from([])
    with pytest.raises(RunError, match="2 and 3 columns"):
        tables_from([shared_arrays(a), shared_arrays(np.zeros((1, 20, 3)))])


def test_a_table_stack_needs_columns_of_one_shape() -> None:
    with pytest.raises(ValueError, match="one shape"):
        SyntheticTables((np.zeros((2, 3)), np.zeros((2, 4))))
    with pytest.raises(ValueError, match=r"\(m, n, d\)"):
        SyntheticTables.of(np.zeros((2, 3)))
