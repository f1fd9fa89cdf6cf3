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
