"""The screen's per-record statistics: the hashed fast path against a row-by-row reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privgame.attack.screening import STATISTICS, ScreenCells, screen_statistics
from privgame.core.errors import ParameterError


def reference_statistics(cells: ScreenCells, synthetic: np.ndarray) -> np.ndarray:
    """The four statistics, one record and one synthetic row at a time."""
    records = cells.records
    codes_r, codes_s = cells.codes(records), cells.codes(synthetic)
    d = records.shape[1]
    out = np.zeros((len(STATISTICS), len(records)))
    for i in range(len(records)):
        exact = cell = near = 0
        rare = pairs = tail = 0.0
        for k in range(len(synthetic)):
            exact += int(np.array_equal(records[i], synthetic[k]))
            differ = int(np.count_nonzero(codes_r[i] != codes_s[k]))
            cell += differ == 0
            near += differ <= 1
        closest = 0 if cell else (-1 if near else -2)
        for j in range(d):
            in_d = sum(records[r, j] == records[i, j] for r in range(len(records)))
            rare += sum(synthetic[k, j] == records[i, j] for k in range(len(synthetic))) / in_d
            if not cells.is_categorical[j]:
                above_d = sum(records[r, j] >= records[i, j] for r in range(len(records)))
                tail += sum(synthetic[k, j] >= records[i, j] for k in range(len(synthetic))) / above_d
            for m in range(j + 1, d):
                same = codes_r[i, [j, m]]
                in_d = sum(np.array_equal(codes_r[r, [j, m]], same) for r in range(len(records)))
                found = sum(np.array_equal(codes_s[k, [j, m]], same) for k in range(len(synthetic)))
                pairs += found / in_d
        out[:, i] = (exact, cell, near, closest, rare, pairs, tail)
    return out


@st.composite
def tables(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = draw(st.integers(1, 5))
    is_cat = np.array(draw(st.lists(st.booleans(), min_size=d, max_size=d)))
    n, m = draw(st.integers(1, 12)), draw(st.integers(0, 15))

    def column(j: int, size: int) -> list[float]:
        if is_cat[j]:
            return draw(st.lists(st.integers(0, 2).map(float), min_size=size, max_size=size))
        pool = draw(st.lists(st.floats(-3, 3, allow_nan=False, width=32), min_size=1, max_size=5))
        return draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))

    records = np.array([column(j, n) for j in range(d)], dtype=np.float64).T.reshape(n, d)
    synthetic = np.array([column(j, m) for j in range(d)], dtype=np.float64).T.reshape(m, d)
    return records, synthetic, is_cat


@settings(max_examples=150, deadline=None)
@given(tables(), st.integers(2, 5))
def test_statistics_match_the_row_by_row_reference(case, bins):
    records, synthetic, is_cat = case
    cells = ScreenCells.of(records, is_cat, bins=bins)
    fast = screen_statistics(cells, synthetic)
    np.testing.assert_allclose(fast, reference_statistics(cells, synthetic), rtol=1e-6)


def test_a_copied_record_is_counted_and_a_far_one_is_not():
    records = np.array([[0.0, 1.0, 10.0], [1.0, 0.0, 50.0], [2.0, 2.0, 90.0]])
    cells = ScreenCells.of(records, np.array([True, True, False]), bins=2)
    synthetic = np.array([[0.0, 1.0, 10.0], [0.0, 1.0, 10.0], [1.0, 1.0, 50.0]])
    stats = dict(zip(STATISTICS, screen_statistics(cells, synthetic), strict=True))
    assert stats["exact"].tolist() == [2, 0, 0]
    assert stats["closest"].tolist() == [0, -1, -2]


def test_bad_shapes_are_named():
    with pytest.raises(ParameterError, match="used columns"):
        ScreenCells.of(np.zeros((0, 2)), np.array([True, True]))
    with pytest.raises(ParameterError, match="at least 2 bins"):
        ScreenCells.of(np.zeros((3, 2)), np.array([True, True]), bins=1)
    cells = ScreenCells.of(np.zeros((3, 2)), np.array([True, True]))
    with pytest.raises(ParameterError, match=r"shape \(m, 2\)"):
        screen_statistics(cells, np.zeros((4, 3)))


def test_pairs_of_near_identifiers_are_left_out_when_their_cells_would_not_fit(monkeypatch) -> None:
    import privgame.attack.screening as screening

    rng = np.random.default_rng(0)
    records = np.stack([np.arange(50.0), np.arange(50.0) % 3, rng.integers(0, 2, 50).astype(float)], axis=1)
    mask = np.array([True, True, True])
    assert len(ScreenCells.of(records, mask).pairs) == 3
    monkeypatch.setattr(screening, "MAX_PAIR_CELLS", 100)  # (51 x 4) and (51 x 3) cells do not fit
    cells = ScreenCells.of(records, mask)
    assert cells.pairs.tolist() == [[1, 2]]
    assert screen_statistics(cells, records).shape == (len(STATISTICS), 50)
