"""Counting-query features of a synthetic dataset relative to one target record.

A query is a non-empty subset ``S`` of the used columns. Its answer on a synthetic dataset is the
number of rows ``r`` that agree with the target ``x`` on ``S``: ``r[j] == x[j]`` for every
categorical column ``j`` in ``S`` and ``r[j] >= x[j]`` for every continuous column ``j`` in ``S``
(the threshold queries Meeus et al. added to TAPAS, so continuous columns carry signal too).

For tables with at most ``max_exact_columns`` used columns every one of the ``2**d - 1`` subsets is
a query. All answers come from one pass over the rows: each row's per-column agreement with ``x``
is a ``d``-bit pattern, the patterns are histogrammed into ``2**d`` bins, and a superset-sum
(zeta) transform turns the histogram into the answer of every subset at once, in one compiled
kernel. Wider tables use, as TAPAS does, a seeded random sample of subsets of orders 1 to 3 that
are counted directly.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from privgame.core.errors import ParameterError

__all__ = ["DEFAULT_MAX_EXACT_COLUMNS", "DEFAULT_N_RANDOM", "QuerySet"]

DEFAULT_MAX_EXACT_COLUMNS = 20
DEFAULT_N_RANDOM = 20_000
SAMPLED_ORDERS = (1, 2, 3)
_PAD = -1
# Bounds the (subsets x row bitset) block of the sampled path to about 16 MB.
_BLOCK_CELLS = 1 << 24


@dataclass(frozen=True, eq=False)
class QuerySet:
    """The counting queries used as attack features for one table layout.

    Build it with :meth:`for_schema`; the features of a dataset are then :meth:`features`.

    Attributes
    ----------
    is_categorical : ndarray of bool, shape (d,)
        True where a used column is categorical (equality query), False where it is continuous
        (``>=`` query).
    exact : bool
        True when every non-empty subset of the columns is a query; feature ``i - 1`` is then the
        subset with bitmask ``i`` (bit ``j`` set = column ``j`` used), for ``i = 1 .. 2**d - 1``.
    subsets : ndarray of int64, shape (q, 3), or None
        For the sampled path, the column indices of each query in increasing order, padded with
        ``-1``; sorted by order, then lexicographically. None when ``exact``.
    max_exact_columns : int
        The widest table that gets every subset.
    n_random : int
        The number of sampled subsets asked for (fewer when fewer exist).
    """

    is_categorical: np.ndarray
    exact: bool
    subsets: np.ndarray | None
    max_exact_columns: int = DEFAULT_MAX_EXACT_COLUMNS
    n_random: int = DEFAULT_N_RANDOM

    @classmethod
    def for_schema(
        cls,
        is_categorical: np.ndarray | Sequence[bool],
        *,
        max_exact_columns: int = DEFAULT_MAX_EXACT_COLUMNS,
        n_random: int = DEFAULT_N_RANDOM,
        rng: np.random.Generator | None = None,
    ) -> QuerySet:
        """Choose the queries for a table whose used columns have these roles.

        Parameters
        ----------
        is_categorical : array-like of bool, shape (d,)
            ``Schema.is_categorical``.
        max_exact_columns : int, default 20
            Tables with at most this many columns get all ``2**d - 1`` subsets. Each dataset's
            features then take ``4 * 2**d`` bytes (128 KiB for 15 columns, 4 MiB for 20).
        n_random : int, default 20,000
            For wider tables, how many distinct subsets of orders 1 to 3 to sample (all of them
            when there are fewer).
        rng : numpy.random.Generator, optional
            Draws the sampled subsets; required only when the table is wider than
            ``max_exact_columns``.

        Returns
        -------
        QuerySet

        Raises
        ------
        ParameterError
            For an empty column list, a negative ``max_exact_columns``, ``n_random < 1``, or a
            wide table without ``rng``.
        """
        mask = np.array(is_categorical, dtype=bool).reshape(-1)
        if np.ndim(is_categorical) != 1 or mask.size == 0:
            raise ParameterError(
                "The attack needs at least one used column: pass Schema.is_categorical, a 1-D "
                "boolean mask with one entry per used column."
            )
        if max_exact_columns < 0:
            raise ParameterError(
                f"max_exact_columns must be >= 0, got {max_exact_columns}; the default is 20."
            )
        if n_random < 1:
            raise ParameterError(f"n_random must be >= 1, got {n_random}; the default is 20,000.")
        mask.setflags(write=False)
        d = mask.size
        if d <= max_exact_columns:
            return cls(mask, True, None, int(max_exact_columns), int(n_random))
        if rng is None:
            raise ParameterError(
                f"The table has {d} used columns, more than max_exact_columns={max_exact_columns}, "
                "so the queries are a random sample: pass rng (e.g. privgame.core.seeding.stream(root, "
                "target, Role.QUERIES)) or raise max_exact_columns."
            )
        subsets = _sample_subsets(d, int(n_random), rng)
        subsets.setflags(write=False)
        return cls(mask, False, subsets, int(max_exact_columns), int(n_random))

    @property
    def n_columns(self) -> int:
        """Number of used columns ``d``."""
        return int(self.is_categorical.size)

    @property
    def n_features(self) -> int:
        """Number of queries, i.e. the length of a feature vector."""
        if self.exact:
            return (1 << self.n_columns) - 1
        assert self.subsets is not None
        return int(self.subsets.shape[0])

    def describe(self) -> dict[str, Any]:
        """A JSON-ready record of the queries, for a run's metadata."""
        out: dict[str, Any] = {
            "kind": "all subsets" if self.exact else "sampled subsets",
            "exact": self.exact,
            "n_columns": self.n_columns,
            "n_features": self.n_features,
            "max_exact_columns": self.max_exact_columns,
            "categorical_query": "equal to the target",
            "continuous_query": "greater than or equal to the target",
        }
        if not self.exact:
            assert self.subsets is not None
            orders = (self.subsets != _PAD).sum(axis=1)
            out["n_random"] = self.n_random
            out["orders"] = {str(k): int((orders == k).sum()) for k in SAMPLED_ORDERS}
            out["subsets_sha256"] = hashlib.sha256(
                np.ascontiguousarray(self.subsets, dtype="<i8").tobytes()
            ).hexdigest()
        return out

    def features(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The answers of every query on one synthetic dataset.

        Parameters
        ----------
        synthetic : ndarray, shape (n, d)
            An encoded synthetic dataset.
        target : ndarray, shape (d,)
            The encoded target record.

        Returns
        -------
        ndarray of float32, shape (n_features,)
            Row counts, in the order described in the class docstring.
        """
        target = self._check_target(target)
        if self.exact:
            # Contiguous arguments, so that every call runs the one compiled (and warmed) kernel.
            synthetic = np.ascontiguousarray(self._check_synthetic(synthetic))
            return _subset_counts(synthetic, np.ascontiguousarray(target), self.is_categorical)
        matches = self._matches(synthetic, target)
        assert self.subsets is not None
        return _sampled_counts(matches, self.subsets).astype(np.float32)

    def features_batch(self, datasets: Sequence[np.ndarray], target: np.ndarray) -> np.ndarray:
        """:meth:`features` of each dataset, stacked.

        Returns
        -------
        ndarray of float32, shape (len(datasets), n_features)
        """
        target = self._check_target(target)
        out = np.empty((len(datasets), self.n_features), dtype=np.float32)
        for i, data in enumerate(datasets):
            out[i] = self.features(data, target)
        return out

    def _check_target(self, target: np.ndarray) -> np.ndarray:
        target = np.asarray(target, dtype=np.float64)
        if target.shape != (self.n_columns,):
            raise ParameterError(
                f"The target record has shape {target.shape} but the queries were built for "
                f"{self.n_columns} used columns; pass one encoded row of shape ({self.n_columns},)."
            )
        return target

    def _check_synthetic(self, synthetic: np.ndarray) -> np.ndarray:
        synthetic = np.asarray(synthetic, dtype=np.float64)
        if synthetic.ndim != 2 or synthetic.shape[1] != self.n_columns:
            raise ParameterError(
                f"A synthetic dataset has shape {synthetic.shape} but the queries were built for "
                f"{self.n_columns} used columns; pass an encoded array of shape (n, "
                f"{self.n_columns})."
            )
        return synthetic

    def _matches(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        synthetic = self._check_synthetic(synthetic)
        return np.where(self.is_categorical, synthetic == target, synthetic >= target)


@njit(cache=True)
def _subset_counts(synthetic, target, is_categorical):
    """Float32 counts for subset bitmasks ``1 .. 2**d - 1`` of an (n, d) dataset, in one pass.

    Rows are histogrammed by their agreement pattern; then ``_superset_sums`` makes each mask
    count the rows whose pattern is one of its supersets.
    """
    n, d = synthetic.shape
    size = 1 << d
    counts = np.zeros(size, dtype=np.int64)
    for i in range(n):
        pattern = 0
        for j in range(d):
            v = synthetic[i, j]
            agrees = v == target[j] if is_categorical[j] else v >= target[j]
            pattern |= np.int64(agrees) << j
        counts[pattern] += 1
    _superset_sums(counts)
    out = np.empty(size - 1, dtype=np.float32)
    for mask in range(1, size):
        out[mask - 1] = counts[mask]
    return out


@njit(cache=True)
def _superset_sums(counts):
    """In place: ``counts[mask]`` becomes the sum of ``counts`` over the supersets of ``mask``.

    For each bit, every mask without it adds the count of the same mask with it. Bits 0-2 are
    done together on each run of 8 counts, in registers, because their runs are too short for
    the loop to vectorise (4 times faster at 15 columns than one bit at a time).
    """
    size = len(counts)
    bit = 1
    if size >= 8:
        for b in range(0, size, 8):
            c0, c1, c2, c3 = counts[b], counts[b + 1], counts[b + 2], counts[b + 3]
            c4, c5, c6, c7 = counts[b + 4], counts[b + 5], counts[b + 6], counts[b + 7]
            c0, c2, c4, c6 = c0 + c1, c2 + c3, c4 + c5, c6 + c7  # bit 0
            c0, c1, c4, c5 = c0 + c2, c1 + c3, c4 + c6, c5 + c7  # bit 1
            c0, c1, c2, c3 = c0 + c4, c1 + c5, c2 + c6, c3 + c7  # bit 2
            counts[b], counts[b + 1], counts[b + 2], counts[b + 3] = c0, c1, c2, c3
            counts[b + 4], counts[b + 5], counts[b + 6], counts[b + 7] = c4, c5, c6, c7
        bit = 8
    while bit < size:
        for block in range(0, size, 2 * bit):
            low = counts[block : block + bit]
            high = counts[block + bit : block + 2 * bit]
            for t in range(bit):
                low[t] += high[t]
        bit *= 2


def _sampled_counts(matches: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Counts for each padded row of ``subsets`` from the (n, d) agreement matrix."""
    n, d = matches.shape
    # Each column becomes a bitset over the rows (64 rows per word), so a query is the popcount
    # of the AND of at most three bitsets. A padding index points at an extra all-ones column.
    columns = np.concatenate([matches, np.ones((n, 1), dtype=bool)], axis=1).T
    n_bytes = -(-max(n, 1) // 64) * 8
    packed = np.zeros((d + 1, n_bytes), dtype=np.uint8)
    packed[:, : -(-n // 8)] = np.packbits(columns, axis=1)
    words = packed.view(np.uint64)
    index = np.where(subsets == _PAD, d, subsets)
    out = np.empty(len(index), dtype=np.int64)
    step = max(1, _BLOCK_CELLS // (8 * words.shape[1]))
    for start in range(0, len(index), step):
        block = index[start : start + step]
        hit = words[block[:, 0]]
        for k in range(1, block.shape[1]):
            hit &= words[block[:, k]]
        out[start : start + step] = _popcount(hit).sum(axis=1)
    return out


_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Number of set bits of each uint64, as int64."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(words).astype(np.int64)
    as_bytes = words.view(np.uint8).reshape(*words.shape, 8)
    return _BYTE_POPCOUNT[as_bytes].sum(axis=-1, dtype=np.int64)


def _sample_subsets(d: int, n_random: int, rng: np.random.Generator) -> np.ndarray:
    """Distinct column subsets of orders 1..3, about equally many of each order."""
    totals = [math.comb(d, k) for k in SAMPLED_ORDERS]
    wanted = _share(n_random, totals)
    blocks = []
    for k, total, m in zip(SAMPLED_ORDERS, totals, wanted, strict=True):
        if m == 0:
            continue
        ranks = np.sort(rng.choice(total, size=m, replace=False)) if m < total else np.arange(m)
        cols = _unrank(np.asarray(ranks, dtype=np.int64), d, k)
        block = np.full((m, len(SAMPLED_ORDERS)), _PAD, dtype=np.int64)
        block[:, :k] = cols
        order = np.lexsort(cols.T[::-1])
        blocks.append(block[order])
    return np.concatenate(blocks, axis=0)


def _share(n: int, totals: list[int]) -> list[int]:
    """Split ``n`` across orders as evenly as their sizes allow."""
    wanted = [0] * len(totals)
    left = n
    open_orders = [i for i, t in enumerate(totals) if t > 0]
    while left > 0 and open_orders:
        each, extra = divmod(left, len(open_orders))
        still_open = []
        for rank, i in enumerate(open_orders):
            give = min(each + (1 if rank < extra else 0), totals[i] - wanted[i])
            wanted[i] += give
            left -= give
            if wanted[i] < totals[i]:
                still_open.append(i)
        open_orders = still_open
    return wanted


def _unrank(ranks: np.ndarray, d: int, k: int) -> np.ndarray:
    """Combinations of ``k`` of ``range(d)`` from their colexicographic ranks, ascending columns."""
    out = np.empty((len(ranks), k), dtype=np.int64)
    rest = ranks.copy()
    for pos in range(k, 0, -1):
        # The largest c with comb(c, pos) <= rest is the pos-th smallest column.
        table = np.array([math.comb(c, pos) for c in range(d)], dtype=np.int64)
        c = np.searchsorted(table, rest, side="right") - 1
        out[:, pos - 1] = c
        rest = rest - table[c]
    return out
