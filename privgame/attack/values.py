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
"""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.attack.base import Attack, AttackContext, register

__all__ = ["ExactValuesAttack"]

MAX_PAIR_COLUMNS = 40
"""Wider tables get single columns only (a pair of each of d columns is d (d + 1) / 2 features)."""


def shared_counts(rows: np.ndarray, target: np.ndarray, pairs: bool) -> np.ndarray:
    """The rows equal to ``target`` on each column (``pairs``: on each pair of columns, the diagonal
    being the single columns), as the upper triangle of a (d, d) matrix read row by row, or
    shape (d,) without pairs."""
    equal = (np.asarray(rows, dtype=np.float64) == np.asarray(target, dtype=np.float64)).astype(np.float32)
    if not pairs:
        return equal.sum(axis=0, dtype=np.float64)
    counts = equal.T @ equal
    return counts[np.triu_indices(counts.shape[0])].astype(np.float64)


@register
class ExactValuesAttack(Attack):
    """Equality queries of orders 1 and 2 on the raw values, against the population's counts."""

    name = "values"
    title = "exact values"
    description = "how many synthetic rows share the record's exact values, one or two columns at a time"

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
