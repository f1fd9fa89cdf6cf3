"""The exact-values attack: how many synthetic rows share the target's exact values, in each
column and each pair of columns, against how often the population shares them.

TAPAS' counting queries compare continuous columns with ``>=``, so a generator that copies a
record's continuous values (Synthpop's CART leaves draw observed values) leaves a trace they cannot
see: the number of synthetic rows holding the record's exact age *and* exact weight. These are
equality queries of orders 1 and 2 on the raw values, each count set against the count expected
from the attacker's reference data: the features are ``log((c + 1/2) / (e + 1/2))`` with ``c`` the
synthetic rows equal to the target on the column (or pair) and ``e`` the rows expected there, the
reference's share times the table's rows. A value rare in the population weighs most, as a density
ratio on each marginal would have it (DOMIAS' idea, on the raw marginals).

Its face in the screen (:class:`ExactValueCounts`) counts the same columns and pairs for every
record of D at once: a record whose rare value another record of D shares (Adult's ``fnlwgt`` is
shared by two to six records for about one record in five) is still alone in D on that value *and*
its age, and only the pair count sees it come back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
from numba import njit

from privgame.attack.base import Attack, AttackContext, RecordStatistics, register
from privgame.core.errors import ParameterError

__all__ = ["ExactValueCounts", "ExactValuesAttack"]

MAX_PAIR_COLUMNS = 40
"""Wider tables get single columns only (a pair of each of d columns is d (d + 1) / 2 features)."""

MAX_PAIR_ENTRIES = 1 << 22
"""The most (record, column or pair) entries :class:`ExactValueCounts` keeps (about 100 MB); past
it, the single columns and then the pairs with the most distinct values in D (the most
identifying) are kept."""


def shared_counts(rows: np.ndarray, target: np.ndarray, pairs: bool) -> np.ndarray:
    """The rows equal to ``target`` on each column (``pairs``: on each pair of columns, the diagonal
    being the single columns), as the upper triangle of a (d, d) matrix read row by row, or
    shape (d,) without pairs."""
    equal = (np.asarray(rows, dtype=np.float64) == np.asarray(target, dtype=np.float64)).astype(np.float32)
    if not pairs:
        return equal.sum(axis=0, dtype=np.float64)
    counts = equal.T @ equal
    return counts[np.triu_indices(counts.shape[0])].astype(np.float64)


@dataclass(frozen=True, eq=False)
class ExactValueCounts(RecordStatistics):
    """The screen's exact-value count of every record of D on one synthetic table.

    ``values`` is, summed over every column and every pair of columns, the synthetic rows holding
    the record's exact values there, each count divided by the *square* of the number of records
    of D that hold them: a value or pair the record alone holds counts fully, one it shares with
    ``c - 1`` others counts ``1 / c**2`` a row. The square is measured, not derived: on Adult
    (REPRODUCTION.md 9.5) the plain ``1 / c`` of :mod:`privgame.attack.screening`'s ``rare``
    let the hundred common pairs, whose counts swing with the rest of D, drown the few the record
    alone holds. Build it with :meth:`of`.

    Attributes
    ----------
    pairs : ndarray of int64, shape (P, 2)
        The columns counted: ``(j, j)`` for column ``j`` alone, ``(j, k)`` for a pair; every one,
        unless :data:`MAX_PAIR_ENTRIES` cuts them.
    values : tuple of ndarray
        Each column's distinct values in D, sorted.
    cards : ndarray of int64, shape (d,)
        How many there are.
    index : ndarray of int64, shape (n, d)
        Each record's value in each column, as its place in ``values``.
    weights : ndarray of float64, shape (P, n)
        1 / (records of D with the record's key on that column or pair) ** 2, records in D's order.
    """

    names: ClassVar[tuple[str, ...]] = ("values",)
    words: ClassVar[dict[str, str]] = {
        "values": "rows with its exact values, one and two columns at a time, its rarest counting most"
    }

    pairs: np.ndarray
    values: tuple[np.ndarray, ...]
    cards: np.ndarray
    index: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, records: np.ndarray, is_categorical: np.ndarray) -> Self:
        X = np.asarray(records, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ParameterError(
                f"The exact-value counts need D as an (n, d) array with n >= 1; got {X.shape}."
            )
        X = X + 0.0  # -0.0 is 0.0
        n, d = X.shape
        values = tuple(np.unique(X[:, j]) for j in range(d))
        cards = np.array([len(v) for v in values], dtype=np.int64)
        index = np.stack([np.searchsorted(values[j], X[:, j]) for j in range(d)], axis=1).astype(np.int64)
        pairs = np.array([(j, k) for j in range(d) for k in range(j, d)], dtype=np.int64).reshape(-1, 2)
        keys = [index[:, j] * cards[k] + index[:, k] for j, k in pairs]
        most = max(1, MAX_PAIR_ENTRIES // n)
        if len(pairs) > most:
            alone = pairs[:, 0] == pairs[:, 1]
            distinct = np.array([len(np.unique(key)) for key in keys])
            ranked = np.lexsort((-distinct, ~alone))  # single columns first, then the most distinct
            keep = np.sort(ranked[:most])
            pairs, keys = pairs[keep], [keys[i] for i in keep]
        weights = np.empty((len(pairs), n), dtype=np.float64)
        for p, key in enumerate(keys):
            _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
            weights[p] = 1.0 / counts[inverse].astype(np.float64) ** 2
        return cls(pairs, values, cards, index, weights)

    def statistics(self, synthetic: np.ndarray) -> np.ndarray:
        synthetic = np.asarray(synthetic, dtype=np.float64)
        d = len(self.values)
        if synthetic.ndim != 2 or synthetic.shape[1] != d:
            raise ParameterError(
                f"A synthetic table has shape {synthetic.shape} but D has {d} used columns; pass an "
                f"encoded array of shape (m, {d})."
            )
        synthetic = synthetic + 0.0
        index = np.empty(synthetic.shape, dtype=np.int64)
        for j, known in enumerate(self.values):
            place = np.searchsorted(known, synthetic[:, j])
            hit = (place < len(known)) & (known[np.minimum(place, len(known) - 1)] == synthetic[:, j])
            index[:, j] = np.where(hit, place, -1)
        sizes = _key_sizes(self.pairs, self.cards)
        dense = sizes[sizes <= DENSE_KEYS]
        counts = np.zeros(int(dense.max()) if len(dense) else 0, dtype=np.int32)
        total = _pair_sums(index, self.index, self.pairs, self.cards, self.weights, counts)
        return total.reshape(1, -1).astype(np.float32)


DENSE_KEYS = 1 << 23
"""A column or pair with at most this many possible keys is counted in an array indexed by key
(one pass over the table, one look-up per record); a larger one by sorting the table's keys and
searching each record's. On Adult every column and pair is counted densely (the largest key space,
``fnlwgt`` x ``capital-gain``, is 2.5 million): the statistic takes 72 ms a table against 215 ms when
every pair was sorted and merged (REPRODUCTION.md 10.8)."""


def _key_sizes(pairs: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """How many keys each column (``j == k``: its values) or pair (the product) can take."""
    j, k = pairs[:, 0], pairs[:, 1]
    return np.where(j == k, cards[j], cards[j] * cards[k])


@njit(cache=True)
def _pair_sums(index, d_index, pairs, cards, weights, counts):
    """For each record, the sum over the columns and pairs of (synthetic rows with its key) x its
    weight; a synthetic value D does not hold (index -1) matches no record. ``counts`` is a zeroed
    array as long as the largest key space counted densely (it is left zeroed). The additions to
    each record come in the pairs' order, whichever way a pair is counted."""
    n = d_index.shape[0]
    m = index.shape[0]
    out = np.zeros(n, dtype=np.float64)
    keys = np.empty(m, dtype=np.int64)
    for p in range(pairs.shape[0]):
        j, k = pairs[p, 0], pairs[p, 1]
        size = cards[j] if j == k else cards[j] * cards[k]
        found = 0
        for i in range(m):
            a = index[i, j]
            b = index[i, k]
            if a >= 0 and b >= 0:
                keys[found] = a if j == k else a * cards[k] + b
                found += 1
        if size <= counts.shape[0]:
            for i in range(found):
                counts[keys[i]] += 1
            for r in range(n):
                key = d_index[r, j] if j == k else d_index[r, j] * cards[k] + d_index[r, k]
                count = counts[key]
                if count:
                    out[r] += count * weights[p, r]
            for i in range(found):
                counts[keys[i]] = 0
        else:
            table = np.sort(keys[:found])
            for r in range(n):
                key = d_index[r, j] if j == k else d_index[r, j] * cards[k] + d_index[r, k]
                count = np.searchsorted(table, key, side="right") - np.searchsorted(table, key, side="left")
                if count:
                    out[r] += count * weights[p, r]
    return out


@register
class ExactValuesAttack(Attack):
    """Equality queries of orders 1 and 2 on the raw values, against the population's counts."""

    name = "values"
    title = "exact values"
    description = "how many synthetic rows share the record's exact values, one or two columns at a time"
    record_statistics = ExactValueCounts

    def prepare(self, context: AttackContext) -> Self:
        super().prepare(context)
        self._reference = np.asarray(context.reference, dtype=np.float64)
        self.pairs_ = len(context.schema.used) <= MAX_PAIR_COLUMNS
        return self

    def _expected_share(self, target: np.ndarray) -> np.ndarray:
        def compute() -> np.ndarray:
            return shared_counts(self._reference, target, self.pairs_) / max(len(self._reference), 1)

        return self._per_target(target, compute)

    def features(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        synthetic, target = self._check_table(synthetic, target)
        counted = shared_counts(synthetic, target, self.pairs_)
        expected = self._expected_share(target) * len(synthetic)
        return np.log((counted + 0.5) / (expected + 0.5)).astype(np.float32)
