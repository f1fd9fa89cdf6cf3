"""Choosing target records, scoring how outlying they are, and finding their neighbours.

Distances are Gower distances on the encoded rows: the mean over used columns of a per-column
distance, 0/1 mismatch for a categorical column and ``|a - b| / range`` for a continuous one
(range from the schema's bounds; 0 when the column is constant). A record's *outlier score* is its
mean Gower distance to its ``k`` nearest other records in the target dataset D (default k = 5):
a record whose closest neighbours are far away is rare in D, the kind of record membership
inference attacks single out.
"""

from __future__ import annotations

import numpy as np

from privgame.data.schema import Schema
from privgame.errors import ParameterError
from privgame.seeding import Role, stream
from privgame.spec import TargetSelection

__all__ = ["gower_distances", "nearest_neighbours", "outlier_scores", "select_targets"]


def _ranges(schema: Schema, X: np.ndarray) -> np.ndarray:
    ranges = np.zeros(len(schema.used))
    for j, col in enumerate(schema.used):
        if col.role == "continuous":
            lo = col.lower if col.lower is not None else float(np.min(X[:, j]))
            hi = col.upper if col.upper is not None else float(np.max(X[:, j]))
            ranges[j] = max(hi - lo, 0.0)
    return ranges


def gower_distances(rows: np.ndarray, others: np.ndarray, schema: Schema) -> np.ndarray:
    """Gower distances between every row of ``rows`` and every row of ``others``.

    Returns
    -------
    ndarray of shape (len(rows), len(others)), values in [0, 1]
    """
    is_cat = schema.is_categorical
    ranges = _ranges(schema, others)
    total = np.zeros((len(rows), len(others)))
    for j in range(rows.shape[1]):
        a = rows[:, j][:, None]
        b = others[:, j][None, :]
        if is_cat[j]:
            total += a != b
        elif ranges[j] > 0:
            total += np.minimum(np.abs(a - b) / ranges[j], 1.0)
    return total / max(rows.shape[1], 1)


def outlier_scores(X_target: np.ndarray, schema: Schema, *, k: int = 5, chunk: int = 512) -> np.ndarray:
    """Mean Gower distance of each row of D to its ``k`` nearest other rows of D."""
    n = len(X_target)
    if n < 2:
        return np.zeros(n)
    k = min(k, n - 1)
    scores = np.empty(n)
    for start in range(0, n, chunk):
        block = gower_distances(X_target[start : start + chunk], X_target, schema)
        rows = np.arange(block.shape[0])
        block[rows, start + rows] = np.inf  # a record is not its own neighbour
        scores[start : start + chunk] = np.sort(np.partition(block, k - 1, axis=1)[:, :k], axis=1).mean(
            axis=1
        )
    return scores


def nearest_neighbours(
    x: np.ndarray, X_target: np.ndarray, schema: Schema, *, k: int = 5, exclude: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``X_target`` of the ``k`` rows nearest to ``x``, and their distances.

    ``exclude`` is a position to leave out (the record itself). Ties are broken by position.
    """
    d = gower_distances(x[None, :], X_target, schema)[0]
    if exclude is not None:
        d[exclude] = np.inf
    order = np.lexsort((np.arange(len(d)), d))[: min(k, len(d) - (exclude is not None))]
    return order, d[order]


def select_targets(
    selection: TargetSelection, target_ids: np.ndarray, X: np.ndarray, schema: Schema, *, seed: int
) -> np.ndarray:
    """The record ids to evaluate, sorted.

    Parameters
    ----------
    selection : TargetSelection
    target_ids : ndarray
        The record ids (rows of the prepared table) that make up D.
    X : ndarray
        The encoded prepared table (all rows).
    schema : Schema
    seed : int
        The run's root seed; the random choice uses ``stream(seed, 0, Role.TARGETS)``.
    """
    target_ids = np.asarray(target_ids, dtype=np.int64)
    n = len(target_ids)
    if selection.mode == "all":
        return np.sort(target_ids)
    if selection.mode == "ids":
        members = set(target_ids.tolist())
        missing = [i for i in selection.ids if i not in members]
        if missing:
            raise ParameterError(
                f"Record ids {missing[:10]} are not in the target dataset D; pick ids listed in D "
                "(see the run's data page or `privgame report`), or choose another selection."
            )
        return np.sort(np.asarray(selection.ids, dtype=np.int64))
    k = int(selection.k or 0)
    if k > n:
        raise ParameterError(
            f"Cannot evaluate {k} records: the target dataset D has only {n}; lower k or raise |D|."
        )
    if selection.mode == "random":
        rng = stream(seed, 0, Role.TARGETS)
        return np.sort(rng.choice(target_ids, size=k, replace=False))
    scores = outlier_scores(X[target_ids], schema)
    order = np.lexsort((target_ids, -scores))
    return np.sort(target_ids[order[:k]])
