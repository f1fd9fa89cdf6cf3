"""The refit's list and row moves (``_cart._swap_list``, ``_cart._node_rows``) against sorting."""

from __future__ import annotations

import numpy as np

from privgame.generators import _cart


def test_swap_list_equals_sorting_the_nodes_rows() -> None:
    rng = np.random.default_rng(3)
    for _ in range(500):
        n = int(rng.integers(2, 40))
        rank2 = rng.integers(0, int(rng.integers(1, 8)), size=n).astype(np.int32)  # ties
        p = int(rng.integers(n))
        in_old, in_new = bool(rng.integers(2)), bool(rng.integers(2))
        members = [r for r in range(n) if r != p and rng.random() < 0.6]
        old_rank = rank2.copy()
        old_rank[p] = rng.integers(0, 8)  # the row's old value, wherever it sorted
        old_rows = members + ([p] if in_old else [])
        old_list = np.array(sorted(old_rows, key=lambda r: (old_rank[r], r)), dtype=np.int32)
        want = sorted(members + ([p] if in_new else []), key=lambda r: (rank2[r], r))
        s = int(rng.integers(0, 5))
        ords = np.full(s + len(want) + 3, -7, dtype=np.int32)
        rks = np.full_like(ords, -7)
        padded = np.concatenate([np.zeros(2, np.int32), old_list])
        _cart._swap_list(padded, 2, 2 + len(old_list), p, in_new, rank2, ords, rks, s)
        assert list(ords[s : s + len(want)]) == want
        assert list(rks[s : s + len(want)]) == [rank2[r] for r in want]
        assert (ords[:s] == -7).all() and (ords[s + len(want) :] == -7).all()


def test_node_rows_moves_the_changed_row() -> None:
    rng = np.random.default_rng(4)
    for _ in range(300):
        n = int(rng.integers(2, 30))
        p = int(rng.integers(n))
        perm = rng.permutation(n)
        a, b = sorted(rng.integers(0, n + 1, size=2))
        in_new = bool(rng.integers(2))
        old = list(perm[a:b])
        want = [r for r in old if r != p] + ([p] if in_new else [])
        rows = np.full(n + 4, -1, dtype=np.int64)
        _cart._node_rows(perm, a, b, p, in_new, rows, 3, True)
        assert list(rows[3 : 3 + len(want)]) == sorted(want)
        _cart._node_rows(perm, a, b, p, in_new, rows, 3, False)
        assert sorted(rows[3 : 3 + len(want)]) == sorted(want)


def test_swapped_columns_equal_reading_every_column_again() -> None:
    """The running class counts, centres and exactness flags of a swapped array equal the
    ones computed from the array itself, on columns made to hit the edge cases: a row holding
    the only extreme, means on a rounding boundary, fractions, huge values."""
    rng = np.random.default_rng(5)
    for _ in range(400):
        n = int(rng.integers(1, 30))
        kinds = rng.integers(0, 5, size=6)
        categorical = kinds == 0
        cols = np.empty((6, n))
        for j, kind in enumerate(kinds):
            if kind == 0:
                cols[j] = rng.integers(0, int(rng.integers(1, 5)), n)
            elif kind == 1:
                cols[j] = rng.integers(-3, 4, n)
            elif kind == 2:
                cols[j] = np.round(rng.normal(size=n), 1)
            elif kind == 3:
                cols[j] = rng.integers(0, 2, n) * float(rng.choice([1.0, 2.0**40, 1e6 + 0.5]))
            else:
                cols[j] = rng.choice([0.5, 1.5, 2.5], n)  # means on rounding boundaries
        p = int(rng.integers(n))
        new = cols[:, int(rng.integers(n))].copy()
        for j in range(6):
            if rng.random() < 0.5:
                new[j] = rng.choice([cols[j].min() - 1, cols[j].max() + 1, cols[j, p], 0.5, 3.0])
                if categorical[j]:
                    new[j] = abs(np.floor(new[j]))
        ncls = np.array([int(c.max()) + 1 if cat else 0 for c, cat in zip(cols, categorical, strict=True)])
        centres = _cart._centres(np.ascontiguousarray(cols.T), categorical)
        stats = _cart._column_stats(cols, categorical, centres)
        fast = _cart._swapped_columns(cols, categorical, p, new, ncls, centres, stats)
        slow = [_cart._column_swapped(cols[j], categorical[j], p, new[j]) for j in range(6)]
        for j in range(6):
            assert fast[0][j] == slow[j][0], (j, "ncls")
            assert fast[1][j] == slow[j][1], (j, "centre")
            if not categorical[j] and slow[j][1] == centres[j]:
                assert fast[2][j] == slow[j][2], (j, "integral")
