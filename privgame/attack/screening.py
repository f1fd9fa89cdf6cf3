"""Per-record membership statistics of every record of D on one synthetic table, in one pass.

The exact game attacks one record at a time with 2**d - 1 counting queries and a trained
meta-classifier. The screen (:mod:`privgame.games.screen`) needs a statistic of *every* record of
D on each synthetic table at once, so it counts the synthetic rows near each record with a few
hashed cells instead:

=============  ===================================================================================
statistic      the number of synthetic rows that ...
=============  ===================================================================================
``exact``      equal the record on every column (raw values): a copied record
``cell``       fall in the record's cell, continuous columns cut into quantile bins of D
``near``       fall in a cell that differs from the record's in at most one column (the sum over
               the columns of the cell counts with that column left out, minus ``d - 1`` times
               ``cell``, so a row in the record's own cell counts once)
``closest``    minus the distance, in cells, to the nearest synthetic row: 0 when one shares the
               record's cell, -1 when one is a column away, -2 otherwise
``rare``       share the record's exact value in a column, each column's count divided by the
               number of records of D with that value (a rare value weighs most)
``pairs``      share the record's cells in two columns, each of the d (d - 1) / 2 pairs' count
               divided by the number of records of D in that cell
``tail``       are at least the record's value in a continuous column, each column's count divided
               by the number of records of D that are (TAPAS' threshold queries, one column each)
=============  ===================================================================================

Each is larger when the synthetic data is closer to the record, so a larger value reads as
"more likely a member". The first four count the cells TAPAS' highest-order queries count, made
for all records with one sort of the synthetic rows' keys per cell shape; the last three are its
lowest-order queries weighed by how rare the record's value is in D, a density ratio of the
synthetic data over D on each marginal (DOMIAS' idea, on the marginals), where an outlier's signal
lies: its whole cell is empty in every synthetic table, in or out.

A row's key is the XOR of a 64-bit hash of each of its column values (Zobrist hashing), so the key
of a cell with column ``j`` left out is the row's key XOR the hash of its value in column ``j``:
``d + 2`` sorts of ``n`` keys count every statistic. Two different cells share a key with
probability about ``2**-64`` per pair (a few in 10**10 at |D| = 31,655), which moves a count by
one; the reference implementation in the tests compares rows value by value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from privgame.attack.base import RecordStatistics
from privgame.core.errors import ParameterError

__all__ = ["DEFAULT_BINS", "STATISTICS", "ScreenCells", "screen_statistics"]

STATISTICS: tuple[str, ...] = ("exact", "cell", "near", "closest", "rare", "pairs", "tail")
"""The screen's statistics, in the order of :func:`screen_statistics`' rows."""

STATISTIC_WORDS: dict[str, str] = {
    "exact": "copies of the whole record",
    "cell": "rows in the record's cell",
    "near": "rows at most one column away from its cell",
    "closest": "how close the nearest row comes",
    "rare": "rows with its rare values, column by column",
    "pairs": "rows sharing its cell in pairs of columns",
    "tail": "rows at or above its values, column by column",
}
"""Each statistic in plain words, for the pages and the reports."""

DEFAULT_BINS = 16
"""Quantile bins of each continuous column of D."""

MAX_PAIR_CELLS = 1 << 24
"""The most cells the ``pairs`` statistic counts in, over every pair of columns (64 MB of counts)."""

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 values: a fixed, well-spread 64-bit hash."""
    z = values.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def _value_hashes(values: np.ndarray, column: int, salt: int) -> np.ndarray:
    """A 64-bit hash of each float value of one column (its bits, salted by column and kind; -0.0
    is 0.0, as ``==`` has it)."""
    bits = (np.ascontiguousarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    with np.errstate(over="ignore"):
        seed = np.uint64((column + 1) * 0x100000001B3 + salt) * _GOLDEN
        return _mix(bits ^ seed)


@dataclass(frozen=True, eq=False)
class ScreenCells(RecordStatistics):
    """The cells the screen counts in, fixed by D: quantile bins of its continuous columns, and
    what every count needs of D, worked out once: the screen's own statistics, which it uses
    whatever the run's attacks.

    Build it with :meth:`of`; :meth:`statistics` (:func:`screen_statistics`) then counts one
    synthetic table.

    Attributes
    ----------
    is_categorical : ndarray of bool, shape (d,)
    edges : tuple of ndarray
        For each continuous column, the inner bin edges (empty for a categorical column).
    records : ndarray, shape (n, d)
        D's encoded rows, the records every statistic is about.
    pairs : ndarray of int64, shape (P, 2)
        The column pairs of the ``pairs`` statistic: every pair, but those whose cells would pass
        :data:`MAX_PAIR_CELLS` (the largest first).
    value_weights : ndarray of float64, shape (n, d)
        1 / (records of D with the record's exact value in each column).
    pair_weights : ndarray of float64, shape (n, P)
        1 / (records of D in the record's cell of each pair of columns).
    tail_weights : ndarray of float64, shape (n, d)
        1 / (records of D at or above the record's value in each continuous column); 0 in the
        categorical columns.
    """

    is_categorical: np.ndarray
    edges: tuple[np.ndarray, ...]
    records: np.ndarray
    pairs: np.ndarray
    value_weights: np.ndarray
    pair_weights: np.ndarray
    tail_weights: np.ndarray
    _values: tuple[np.ndarray, ...]  # each column's distinct values in D, sorted
    _value_index: np.ndarray  # (n, d): each record's value's place among them
    _cell_values: tuple[np.ndarray, ...]  # each column's distinct cells in D, sorted
    _cards: np.ndarray  # cells per column, the last one "not a cell of D"
    _record_codes: np.ndarray  # (n, d) int64
    _offsets: np.ndarray  # where each pair's cells start in one flat count array
    _total: int  # cells of every pair together
    _sorted_keys: tuple[np.ndarray, ...]  # D's keys of each cell shape, sorted
    _key_order: tuple[np.ndarray, ...]  # and the records' order that sorts them

    names: ClassVar[tuple[str, ...]] = STATISTICS
    words: ClassVar[dict[str, str]] = STATISTIC_WORDS

    @classmethod
    def of(cls, records: np.ndarray, is_categorical: np.ndarray, *, bins: int = DEFAULT_BINS) -> ScreenCells:
        """The cells of D (``records``, encoded) with ``bins`` quantile bins per continuous column.

        Raises
        ------
        ParameterError
            For an empty D, a column mask of another width, or fewer than 2 bins.
        """
        X = np.asarray(records, dtype=np.float64)
        mask = np.asarray(is_categorical, dtype=bool).reshape(-1)
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] != mask.size:
            raise ParameterError(
                f"The screen needs D as an (n, d) array with n >= 1 and d = {mask.size} used columns; "
                f"got shape {X.shape}."
            )
        if bins < 2:
            raise ParameterError(f"The screen needs at least 2 bins per continuous column; got {bins}.")
        X = np.ascontiguousarray(X + 0.0)  # -0.0 is 0.0
        X.setflags(write=False)
        n, d = X.shape
        quantiles = np.linspace(0, 1, bins + 1)[1:-1]
        edges = tuple(
            np.empty(0) if mask[j] else np.unique(np.quantile(X[:, j], quantiles)) for j in range(d)
        )
        values = tuple(np.unique(X[:, j]) for j in range(d))
        value_index = np.stack([np.searchsorted(values[j], X[:, j]) for j in range(d)], axis=1).reshape(n, d)
        per_value = [np.bincount(value_index[:, j], minlength=len(values[j])) for j in range(d)]
        value_counts = np.stack([per_value[j][value_index[:, j]] for j in range(d)], axis=1).reshape(n, d)
        at_or_above = np.stack([_at_or_above(per_value[j])[value_index[:, j]] for j in range(d)], axis=1)
        tail_weights = np.where(mask, 0.0, 1.0 / at_or_above.reshape(n, d))
        pairs = np.array([(j, k) for j in range(d) for k in range(j + 1, d)], dtype=np.int64).reshape(-1, 2)
        raw_codes = _bin_codes(X, mask, edges)
        cell_values = tuple(np.unique(raw_codes[:, j]) for j in range(d))
        record_codes = (
            np.stack([np.searchsorted(cell_values[j], raw_codes[:, j]) for j in range(d)], axis=1)
            .astype(np.int64)
            .reshape(n, d)
        )
        cards = np.array([len(v) + 1 for v in cell_values], dtype=np.int64)
        sizes = cards[pairs[:, 0]] * cards[pairs[:, 1]]
        # The pairs' cells share one count array; pairs of near-identifier columns (whose values
        # the rare count already covers) are left out, the largest first, so that it stays small.
        fits = np.cumsum(np.sort(sizes)) <= MAX_PAIR_CELLS
        keep = np.sort(np.argsort(sizes, kind="stable")[fits])
        pairs, sizes = pairs[keep], sizes[keep]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        pair_counts = _pair_cell_counts(record_codes, record_codes, cards, offsets, int(sizes.sum()), pairs)
        keys = _row_keys(X, mask, edges)
        order = tuple(np.argsort(k, kind="stable") for k in keys)
        return cls(
            mask,
            edges,
            X,
            pairs,
            1.0 / value_counts,
            1.0 / pair_counts,
            tail_weights,
            values,
            value_index,
            cell_values,
            cards,
            record_codes,
            offsets,
            int(sizes.sum()),
            tuple(k[o] for k, o in zip(keys, order, strict=True)),
            order,
        )

    def statistics(self, synthetic: np.ndarray) -> np.ndarray:
        """:func:`screen_statistics` of one encoded synthetic table: shape (7, n)."""
        return screen_statistics(self, synthetic)

    def codes(self, rows: np.ndarray) -> np.ndarray:
        """Each row's cell, column by column: categories as they are, continuous values as bins."""
        return _bin_codes(np.asarray(rows, dtype=np.float64), self.is_categorical, self.edges)

    def _cell_codes(self, rows: np.ndarray) -> np.ndarray:
        """Each row's cell as D's cell numbers (0 .. card - 2; card - 1 for a cell D does not have)."""
        raw = self.codes(rows)
        out = np.empty(raw.shape, dtype=np.int64)
        for j in range(raw.shape[1]):
            known = self._cell_values[j]
            place = np.searchsorted(known, raw[:, j])
            hit = (place < len(known)) & (known[np.minimum(place, len(known) - 1)] == raw[:, j])
            out[:, j] = np.where(hit, place, self._cards[j] - 1)
        return out


def _at_or_above(counts: np.ndarray) -> np.ndarray:
    """For counts per sorted distinct value, the count at or above each value."""
    return np.cumsum(counts[::-1])[::-1]


def _bin_codes(rows: np.ndarray, is_categorical: np.ndarray, edges: tuple[np.ndarray, ...]) -> np.ndarray:
    out = np.array(rows, dtype=np.float64, copy=True) + 0.0
    for j, cut in enumerate(edges):
        if not is_categorical[j]:
            out[:, j] = np.searchsorted(cut, rows[:, j], side="right")
    return out


def _row_keys(
    rows: np.ndarray, is_categorical: np.ndarray, edges: tuple[np.ndarray, ...]
) -> list[np.ndarray]:
    """The keys of each cell shape: exact rows, cells, then cells with column 0, 1, ... left out."""
    d = rows.shape[1]
    exact = np.zeros(len(rows), dtype=np.uint64)
    for j in range(d):
        exact ^= _value_hashes(rows[:, j], j, 0)
    codes = _bin_codes(rows, is_categorical, edges)
    parts = np.empty(rows.shape, dtype=np.uint64)
    for j in range(d):
        parts[:, j] = _value_hashes(codes[:, j], j, 1)
    cell = np.bitwise_xor.reduce(parts, axis=1) if d else np.zeros(len(rows), dtype=np.uint64)
    return [exact, cell, *(cell ^ parts[:, j] for j in range(d))]


@njit(cache=True)
def _pair_table(table, cards, offsets, total, pairs):
    """How many of ``table``'s rows fall in each cell of each column pair, in one flat array."""
    counts = np.zeros(total, dtype=np.int32)
    for i in range(table.shape[0]):
        for p in range(pairs.shape[0]):
            j, k = pairs[p, 0], pairs[p, 1]
            counts[offsets[p] + table[i, j] * cards[k] + table[i, k]] += 1
    return counts


@njit(cache=True)
def _pair_cell_counts(table, records, cards, offsets, total, pairs):
    """(n, P) counts of ``table``'s rows in each record's cell of each column pair."""
    counts = _pair_table(table, cards, offsets, total, pairs)
    out = np.empty((records.shape[0], pairs.shape[0]), dtype=np.int64)
    for i in range(records.shape[0]):
        for p in range(pairs.shape[0]):
            j, k = pairs[p, 0], pairs[p, 1]
            out[i, p] = counts[offsets[p] + records[i, j] * cards[k] + records[i, k]]
    return out


@njit(cache=True)
def _weighted_pair_sum(table, records, cards, offsets, total, pairs, weights):
    """For each record, the sum over the column pairs of (``table``'s rows in its cell) x weight."""
    counts = _pair_table(table, cards, offsets, total, pairs)
    out = np.zeros(records.shape[0], dtype=np.float64)
    for i in range(records.shape[0]):
        acc = 0.0
        for p in range(pairs.shape[0]):
            j, k = pairs[p, 0], pairs[p, 1]
            acc += counts[offsets[p] + records[i, j] * cards[k] + records[i, k]] * weights[i, p]
        out[i] = acc
    return out


@njit(cache=True)
def _merge_counts(table_sorted, wanted_sorted, order, out):
    """``out[order[k]]`` = how many of ``table_sorted`` equal ``wanted_sorted[k]`` (both sorted)."""
    i = 0
    n = table_sorted.shape[0]
    last_key = np.uint64(0)
    last_count = -1
    for k in range(wanted_sorted.shape[0]):
        w = wanted_sorted[k]
        if last_count >= 0 and w == last_key:
            out[order[k]] = last_count
            continue
        while i < n and table_sorted[i] < w:
            i += 1
        j = i
        while j < n and table_sorted[j] == w:
            j += 1
        last_key, last_count = w, j - i
        out[order[k]] = last_count


def screen_statistics(cells: ScreenCells, synthetic: np.ndarray) -> np.ndarray:
    """The statistics of :data:`STATISTICS` of every record of D on one synthetic table.

    Parameters
    ----------
    cells : ScreenCells
        D and its cells.
    synthetic : ndarray, shape (m, d)
        An encoded synthetic table.

    Returns
    -------
    ndarray of float32, shape (7, n)
        One row per statistic, one column per record of D, in D's order.

    Raises
    ------
    ParameterError
        For a synthetic table of another width.
    """
    synthetic = np.asarray(synthetic, dtype=np.float64)
    n, d = cells.records.shape
    if synthetic.ndim != 2 or synthetic.shape[1] != d:
        raise ParameterError(
            f"A synthetic table has shape {synthetic.shape} but D has {d} used columns; pass an "
            f"encoded array of shape (m, {d})."
        )
    synthetic = synthetic + 0.0  # -0.0 is 0.0
    counted = []
    for keys, wanted, order in zip(
        _row_keys(synthetic, cells.is_categorical, cells.edges),
        cells._sorted_keys,
        cells._key_order,
        strict=True,
    ):
        out = np.empty(n, dtype=np.int64)
        _merge_counts(np.sort(keys), wanted, order, out)
        counted.append(out)
    exact, cell = counted[0], counted[1]
    near = np.sum(counted[2:], axis=0) - (d - 1) * cell if d else cell
    closest = np.where(cell > 0, 0, np.where(near > 0, -1, -2))
    rare = np.zeros(n)
    tail = np.zeros(n)
    for j in range(d):
        values = cells._values[j]
        place = np.searchsorted(values, synthetic[:, j])
        hit = (place < len(values)) & (values[np.minimum(place, len(values) - 1)] == synthetic[:, j])
        in_table = np.bincount(place[hit], minlength=len(values))
        rare += in_table[cells._value_index[:, j]] * cells.value_weights[:, j]
        if not cells.is_categorical[j]:
            # A row is at or above D's k-th distinct value when more than k of them are <= it.
            below_or_at = np.searchsorted(values, synthetic[:, j], side="right")
            above = _at_or_above(np.bincount(below_or_at, minlength=len(values) + 1))[1:]
            tail += above[cells._value_index[:, j]] * cells.tail_weights[:, j]
    pairs = _weighted_pair_sum(
        cells._cell_codes(synthetic),
        cells._record_codes,
        cells._cards,
        cells._offsets,
        cells._total,
        cells.pairs,
        cells.pair_weights,
    )
    return np.stack([exact, cell, near, closest, rare, pairs, tail]).astype(np.float32)
