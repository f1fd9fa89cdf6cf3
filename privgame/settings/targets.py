"""Choosing target records, scoring how outlying they are, and finding their neighbours.

Distances are Gower distances on the encoded rows: the mean over used columns of a per-column
distance, 0/1 mismatch for a categorical column and ``|a - b| / range`` for a continuous one
(range from the schema's bounds; 0 when the column is constant). A record's *outlier score* is its
mean Gower distance to its ``k`` nearest other records in the target dataset D (default k = 5):
a record whose closest neighbours are far away is rare in D, the kind of record membership
inference attacks single out.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict

import numpy as np

from privgame.core.errors import ParameterError
from privgame.core.seeding import Role, stream
from privgame.data.schema import Schema
from privgame.data.similarity import GowerEncoding, nearest_distances
from privgame.settings.run_spec import TargetSelection

__all__ = [
    "AUDIT_GROUPS",
    "audit_groups",
    "gower_distances",
    "nearest_neighbours",
    "outlier_scores",
    "select_targets",
]

AUDIT_GROUPS: tuple[str, ...] = ("outlier", "random", "chosen")
"""The groups a record can be audited in: the most outlying records of D (never a random
sample), a uniform random sample of D (the share estimate), or records the user chose."""


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


def outlier_scores(
    X_target: np.ndarray, schema: Schema, *, k: int = 5, positions: np.ndarray | None = None
) -> np.ndarray:
    """Mean Gower distance of rows of D to their ``k`` nearest other rows of D.

    Compiled, and exact: the nearest rows are found by :func:`privgame.data.similarity.nearest_distances`
    (the same Gower distance as :func:`gower_distances`, whose terms never exceed 1 within the
    schema's bounds), which skips rows that cannot be among the ``k`` nearest, so a table of 30,000
    rows takes about a second.

    Parameters
    ----------
    X_target : ndarray
        The encoded rows of D.
    schema : Schema
    k : int, default 5
        Neighbours averaged over (at most ``len(D) - 1``).
    positions : ndarray of int, optional
        Score only these rows of D (positions in ``X_target``); every row by default.

    Returns
    -------
    ndarray
        One score per row of D, or per position asked for.
    """
    n = len(X_target)
    queries = np.arange(n) if positions is None else np.asarray(positions, dtype=np.int64)
    if n < 2:
        return np.zeros(len(queries))
    k = min(k, n - 1)
    X = np.ascontiguousarray(X_target, dtype=np.float64)
    is_cat = np.asarray(schema.is_categorical, dtype=np.bool_)
    ranges = _ranges(schema, X)
    scale = np.where(is_cat, 1.0, np.divide(1.0, ranges, out=np.zeros_like(ranges), where=ranges > 0))
    encoding = GowerEncoding(is_categorical=is_cat, scale=scale)
    # The k + 1 nearest rows of D include the row itself, at distance 0: drop one zero, whichever
    # row it belongs to (an exact twin's 0 counts the same).
    nearest = nearest_distances(X[queries], X, encoding, k=k + 1)
    return nearest[:, 1:].mean(axis=1)


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


def audit_groups(
    selection: TargetSelection, target_ids: np.ndarray, X: np.ndarray, schema: Schema, *, seed: int
) -> dict[str, np.ndarray]:
    """The records to evaluate, by audit group (see :data:`AUDIT_GROUPS`), each sorted.

    ``plan`` gives the ``outliers`` most outlying records of D (ties broken by record id) and a
    uniform random sample of ``random`` records of *all* of D, drawn independently of the
    outliers, so the sample stays unbiased even when it contains an outlier; ``random`` gives
    the sample alone, ``all`` every record of D as the sample (a census), ``outliers`` the
    outliers alone and ``ids`` the chosen records.

    Parameters
    ----------
    selection : TargetSelection
    target_ids : ndarray
        The record ids (rows of the prepared table) that make up D.
    X : ndarray
        The encoded prepared table (all rows).
    schema : Schema
    seed : int
        The run's root seed; the random sample uses ``stream(seed, 0, Role.TARGETS)``.

    Raises
    ------
    ParameterError
        When a group asks for more records than D has, or a chosen id is not in D.
    """
    target_ids = np.asarray(target_ids, dtype=np.int64)
    n = len(target_ids)
    if selection.mode == "all":
        return {"random": np.sort(target_ids)}
    if selection.mode == "ids":
        members = set(target_ids.tolist())
        missing = [i for i in selection.ids if i not in members]
        if missing:
            raise ParameterError(
                f"Record ids {missing[:10]} are not in the target dataset D; pick ids listed in D "
                "(see the run's data page or `privgame report`), or choose another selection."
            )
        return {"chosen": np.sort(np.asarray(selection.ids, dtype=np.int64))}
    if selection.mode == "plan":
        wanted = {"outlier": int(selection.outliers), "random": int(selection.random)}
        flags = {"outlier": "--outliers", "random": "--random"}
    else:
        wanted = {"outlier" if selection.mode == "outliers" else "random": int(selection.k or 0)}
        flags = {"outlier": "--targets", "random": "--targets"}  # the flag the owner gave
    too_many = [f"{flags[g]} {k}" for g, k in wanted.items() if k > n]
    if too_many:
        raise ParameterError(
            f"Cannot audit {' and '.join(too_many)} records: D has only {n:,}; ask for fewer records."
        )
    groups: dict[str, np.ndarray] = {}
    if wanted.get("outlier"):
        scores = _scores_of_d(X[target_ids], schema)
        order = np.lexsort((target_ids, -scores))
        groups["outlier"] = np.sort(target_ids[order[: wanted["outlier"]]])
    if selection.mode == "plan" and selection.sample_ids:
        kept = np.asarray(selection.sample_ids, dtype=np.int64)
        missing = np.setdiff1d(kept, target_ids)
        if missing.size:
            raise ParameterError(
                f"Record ids {missing[:10].tolist()} of the fixed random sample are not in the target "
                "dataset D; a kept sample must come from D (remake the remedy from its parent run)."
            )
        groups["random"] = np.sort(kept)
    elif wanted.get("random"):
        rng = stream(seed, 0, Role.TARGETS)
        groups["random"] = np.sort(rng.choice(target_ids, size=wanted["random"], replace=False))
    return groups


_SCORES: OrderedDict[str, np.ndarray] = OrderedDict()
_SCORES_LOCK = threading.Lock()
_SCORES_KEPT = 4


def _scores_of_d(X_target: np.ndarray, schema: Schema) -> np.ndarray:
    """:func:`outlier_scores` of every row of D, remembered for the last few tables.

    The dashboard's Evaluate page, the time estimate and the engine each pick the audit plan
    from the same D; the scores cost seconds at tens of thousands of rows, so they are computed
    once per (rows, schema). The key is a digest of the encoded rows and the schema, so a change
    in either gives fresh scores.
    """
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr((X_target.shape, X_target.dtype.str)).encode())
    digest.update(np.ascontiguousarray(X_target).tobytes())
    digest.update(json.dumps(schema.to_dict(), sort_keys=True, default=str).encode())
    key = digest.hexdigest()
    with _SCORES_LOCK:
        if key in _SCORES:
            _SCORES.move_to_end(key)
            return _SCORES[key].copy()
    scores = outlier_scores(X_target, schema)
    with _SCORES_LOCK:
        _SCORES[key] = scores.copy()
        while len(_SCORES) > _SCORES_KEPT:
            _SCORES.popitem(last=False)
    return scores


def select_targets(
    selection: TargetSelection, target_ids: np.ndarray, X: np.ndarray, schema: Schema, *, seed: int
) -> np.ndarray:
    """The record ids to evaluate, sorted: every group of :func:`audit_groups` together.

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
    groups = audit_groups(selection, target_ids, X, schema, seed=seed)
    return np.unique(np.concatenate([*groups.values(), np.empty(0, dtype=np.int64)])).astype(np.int64)
