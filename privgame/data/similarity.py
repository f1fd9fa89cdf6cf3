"""Distance to closest record (DCR): how near a synthetic table lies to the rows it was trained on.

A synthetic table that copies, or nearly copies, its training rows discloses them. The measures
here compare the distances from synthetic rows to the training table ``train`` with those to a
``holdout`` table drawn from the same population but never shown to the generator: a generator
that generalises is no closer to ``train`` than to ``holdout``.

Distance
--------
Rows are compared with the Gower distance, the mean over the ``d`` columns of a per-column term:
for a categorical column 0 when the codes are equal and 1 otherwise; for a continuous column
``|a - b| / range``, where the range (max - min) is taken over every table of the comparison
(train, holdout and synthetic: :meth:`GowerEncoding.for_arrays`) and a column of zero range
contributes 0. Gower is the distance that SynthEval and SDMetrics use for their DCR metrics on
mixed tables; it works on the encoded codes directly (no one-hot columns, so a column with many
categories weighs no more than a binary one) and every term lies in [0, 1], so no column
dominates through its units.

Definitions followed
--------------------
* Record level (:func:`record_similarity`): each training row's DCR is its distance to the
  closest synthetic row; the holdout rows' DCRs are the reference distribution of a row the
  generator never saw, and a training row's p-value is its rank among them
  (:func:`dcr_p_values`), a conformal p-value: small when the row is unusually close to the
  synthetic table.
* Table level (:func:`table_similarity`), after the DCR share of mostlyai-qa and SDMetrics'
  ``DCROverfittingProtection``: train and holdout are cut to one size, each synthetic row is
  assigned to the one holding its closest record (ties count half), and the share assigned to
  ``train`` is expected to be 0.5. SDMetrics reports that share's complement as a score;
  ``DCRBaselineProtection`` instead compares median DCRs with those of uniformly random rows,
  a baseline not used here. The table result also gives low percentiles of the DCR and of the
  nearest neighbour distance ratio (NNDR, the closest distance over the second closest, as in
  mostlyai-qa and SynthEval) to each of train and holdout: a low NNDR marks a synthetic row that
  sits by one record rather than among several.

The share test
--------------
The share is tested with a one-sided permutation test of the train/holdout labels, not with a
binomial (sign) test over the synthetic rows. The sign test treats the synthetic rows as
independent trials with probability 1/2, but all of them are compared with the same train and
holdout tables, so given those tables the chance that a synthetic row is closer to train is not
1/2 but a random quantity around it. The count is then overdispersed: in simulations of tables
drawn from one distribution, with three synthetic rows per train row the sign test rejected at
level 0.05 in 6-9% of the replications, and with ten per train row in 13-28%. Under the null hypothesis
(the synthetic table does not depend on which rows were in train), the train and holdout rows
are exchangeable, so relabelling the pooled rows at random gives the share's exact null
distribution. A synthetic row's side depends only on the labels of its closest pooled records,
the set of rows at its smallest distance, so each relabelling costs one pass over these sets.

Edge cases, decided here and applied everywhere:

* Every table must have at least one row (``table_similarity``: at least two in each of train
  and holdout, for the NNDR), the encoding's number of columns, and finite values; anything else
  raises :class:`~privgame.core.errors.ParameterError` naming the table and the fix.
* ``k`` in :func:`nearest_distances` must lie in ``1 .. len(reference)``.
* NNDR of a synthetic row with two records at distance 0 (0/0) is 1: the nearest record is not
  set apart from the second, as for any ``d1 == d2 > 0``. With ``d1 = 0 < d2`` it is 0.
* A row outside the ranges of the encoding (one not passed to ``for_arrays``) can have a
  continuous term above 1; distances are not clipped.

Nothing here builds a query-by-reference distance matrix. Each query row scans the reference
in a compiled kernel (queries spread over the cores, unless the search is small), with the
reference sorted by its categorical codes, the columns most likely to differ first, and within
a run of equal codes (a leaf) by one continuous column, the pivot. A mismatch on the first
``l`` categorical columns that takes the partial distance to the current k-th best skips every
following row sharing those codes; within a leaf the rows are visited outward from the query's
pivot value until the pivot's term alone rules out the rest; and a row's scan stops once its
partial distance reaches the bound. The query's own leaf and its two neighbours in the sorted
order come first, which usually leaves a bound below one mismatch. Memory is linear in the
table sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike

from privgame.core.errors import ParameterError

__all__ = [
    "GowerEncoding",
    "RecordSimilarity",
    "TableSimilarity",
    "dcr_p_values",
    "nearest_distances",
    "record_similarity",
    "table_similarity",
]

DEFAULT_PERMUTATIONS = 999
"""Relabellings of the share's permutation test: p-values down to 1/1000."""

_TIE_CAP = 32
"""Most closest records kept per synthetic row for the share test. A row with more (rare: many
duplicates or a coarse table) counts one half in the observed and every relabelled statistic,
which keeps the test exact; under relabelling it would be one-sided with chance < 2**-31."""

_PARALLEL_PAIRS = 1_000_000
"""Searches over fewer query x reference pairs than this run in one thread."""

_PERMUTATION_CHUNK = 64
"""Relabellings drawn at once: bounds their uniforms to 64 x 8 bytes per pooled row."""


# --------------------------------------------------------------------------------------------
# The encoding
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GowerEncoding:
    """Column roles and scales of the Gower distance.

    Build it with :meth:`for_arrays` from every table of a comparison, so that the ranges of the
    continuous columns cover all of them.

    Attributes
    ----------
    is_categorical : ndarray of bool, shape (d,)
        True where a column holds categorical codes (``Schema.is_categorical``).
    scale : ndarray of float64, shape (d,)
        ``1 / range`` for a continuous column (0 when its range is 0), 1 for a categorical one.
        The Gower term of a continuous column is ``|a - b| * scale``.
    """

    is_categorical: np.ndarray
    scale: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        mask = np.asarray(self.is_categorical)
        if mask.ndim != 1 or mask.size == 0 or mask.dtype != np.bool_:
            raise ParameterError(
                "is_categorical must be a 1-D boolean array with one entry per column (at least "
                "one); pass Schema.is_categorical."
            )
        scale = np.asarray(self.scale, dtype=np.float64)
        if scale.shape != mask.shape:
            raise ParameterError(
                f"scale has shape {scale.shape} but is_categorical has {mask.size} columns; "
                "build the encoding with GowerEncoding.for_arrays."
            )
        if not np.all(np.isfinite(scale)) or np.any(scale < 0):
            raise ParameterError(
                "scale must hold finite numbers >= 0 (1 / range, or 0 for a constant column); "
                "build the encoding with GowerEncoding.for_arrays."
            )
        if np.any(scale[mask] != 1.0):
            raise ParameterError(
                "scale must be 1 for every categorical column (a mismatch counts 1); build the "
                "encoding with GowerEncoding.for_arrays."
            )
        mask, scale = mask.copy(), scale.copy()
        mask.setflags(write=False)
        scale.setflags(write=False)
        object.__setattr__(self, "is_categorical", mask)
        object.__setattr__(self, "scale", scale)

    @property
    def n_columns(self) -> int:
        """Number of columns ``d``."""
        return int(self.is_categorical.size)

    @classmethod
    def for_arrays(cls, is_categorical: ArrayLike, *arrays: np.ndarray) -> GowerEncoding:
        """The encoding whose continuous ranges span every row of ``arrays``.

        Parameters
        ----------
        is_categorical : array-like of bool, shape (d,)
            ``Schema.is_categorical``.
        *arrays : ndarray, shape (n_i, d)
            Encoded tables (``privgame.data.encode``): train, holdout and synthetic.

        Returns
        -------
        GowerEncoding

        Raises
        ------
        ParameterError
            For no table, no row in all of them, a table of another width, or a value that is
            not a finite number.
        """
        mask = np.asarray(is_categorical)
        flags = mask.dtype.kind == "b" or (mask.dtype.kind in "iu" and np.isin(mask, (0, 1)).all())
        if mask.ndim != 1 or mask.size == 0 or not flags:
            raise ParameterError(
                "is_categorical must be a 1-D boolean array with one entry per column (at least "
                "one); pass Schema.is_categorical."
            )
        mask = mask.astype(bool)
        if not arrays:
            raise ParameterError(
                "GowerEncoding.for_arrays needs the tables whose ranges it takes; pass train, "
                "holdout and synthetic."
            )
        tables = [
            _check_table(a, f"table {i + 1}", mask.size, allow_empty=True) for i, a in enumerate(arrays)
        ]
        rows = [t for t in tables if len(t)]
        if not rows:
            raise ParameterError(
                "Every table passed to GowerEncoding.for_arrays is empty, so the column ranges "
                "are undefined; pass at least one table with rows."
            )
        low = np.min([t.min(axis=0) for t in rows], axis=0)
        high = np.max([t.max(axis=0) for t in rows], axis=0)
        spread = high - low
        with np.errstate(divide="ignore", over="ignore"):
            inverse = np.where(spread > 0, 1.0 / np.where(spread > 0, spread, 1.0), 0.0)
        # A range whose inverse overflows (below about 1e-308) would make 0 * inf = nan terms: such
        # a column is compared as if constant. So is one whose range overflows (values near
        # +-1e308), whose inverse rounds to 0.
        inverse = np.where(np.isfinite(inverse), inverse, 0.0)
        return cls(mask, np.where(mask, 1.0, inverse))


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _check_table(array: ArrayLike, name: str, n_columns: int, *, allow_empty: bool = False) -> np.ndarray:
    """``array`` as a C-contiguous (n, n_columns) float64 array of finite values, or raise."""
    try:
        table = np.ascontiguousarray(array, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} must be an encoded numeric array (privgame.data.encode); it could not be read "
            f"as numbers ({exc})."
        ) from exc
    if table.ndim != 2 or table.shape[1] != n_columns:
        raise ParameterError(
            f"{name} has shape {table.shape} but the encoding has {n_columns} columns; pass an "
            f"array of shape (n_rows, {n_columns}) encoded with the same schema."
        )
    if not allow_empty and table.shape[0] == 0:
        raise ParameterError(f"{name} has no rows; pass a table with at least one row.")
    if not np.all(np.isfinite(table)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(table), axis=1)))
        raise ParameterError(
            f"{name} holds nan or infinite values in {bad} rows; drop or repair those rows before "
            "measuring distances."
        )
    return table


def _check_encoding(encoding: GowerEncoding) -> GowerEncoding:
    if not isinstance(encoding, GowerEncoding):
        raise ParameterError(
            f"encoding must be a GowerEncoding, got {type(encoding).__name__}; build one with "
            "GowerEncoding.for_arrays(schema.is_categorical, train, holdout, synthetic)."
        )
    return encoding


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}; pass e.g. "
            "numpy.random.default_rng(seed)."
        )
    return rng


# --------------------------------------------------------------------------------------------
# Nearest records
# --------------------------------------------------------------------------------------------


def nearest_distances(
    queries: np.ndarray, reference: np.ndarray, encoding: GowerEncoding, *, k: int = 1
) -> np.ndarray:
    """Gower distances from each query row to its ``k`` closest rows of ``reference``.

    Parameters
    ----------
    queries : ndarray, shape (n_queries, d)
        Encoded rows whose neighbours are sought.
    reference : ndarray, shape (n_reference, d)
        Encoded rows searched.
    encoding : GowerEncoding
        Column roles and scales, normally from :meth:`GowerEncoding.for_arrays` over both.
    k : int, default 1
        Number of neighbours, ``1 <= k <= n_reference``.

    Returns
    -------
    ndarray of float64, shape (n_queries, k)
        Row ``i`` holds the ``k`` smallest distances from ``queries[i]``, ascending. Equal rows
        are at distance 0, and a distance depends only on the two rows, so equal column terms
        give bit-identical distances whatever the tables.

    Raises
    ------
    ParameterError
        For an empty table, a width other than the encoding's, a nan or infinite value, or a
        ``k`` outside ``1 .. n_reference``.
    """
    encoding = _check_encoding(encoding)
    d = encoding.n_columns
    q = _check_table(queries, "queries", d)
    r = _check_table(reference, "reference", d)
    k = _check_k(k, len(r))
    distances, _, _ = _search(q, r, encoding, k, ties=0)
    return distances


def _check_k(k: int, n_reference: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ParameterError(f"k must be a whole number, got {k!r}; pass e.g. k=1.")
    if not 1 <= k <= n_reference:
        raise ParameterError(
            f"k={k} neighbours were asked for but the reference has {n_reference} rows; choose "
            f"k between 1 and {n_reference}."
        )
    return int(k)


def _search(
    queries: np.ndarray, reference: np.ndarray, encoding: GowerEncoding, k: int, *, ties: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The k smallest distances of each query and, when ``ties > 0``, its closest records.

    Returns the (n_queries, k) distances, the reference rows at each query's smallest distance
    (an (n_queries, ties) int64 array, at most ``ties`` of them, -1 padded) and how many rows lie
    at that distance (all of them, also beyond ``ties``).
    """
    is_cat = encoding.is_categorical
    cat_columns = np.flatnonzero(is_cat)
    cont_columns = np.flatnonzero(~is_cat)
    m, n = len(queries), len(reference)
    # Codes of the union, so that float codes compare exactly and a query's category missing from
    # the reference gets a code of its own.
    codes = np.empty((m + n, len(cat_columns)), dtype=np.int32)
    mismatch_chance = np.empty(len(cat_columns))
    for c, j in enumerate(cat_columns):
        values, inverse = np.unique(np.concatenate([queries[:, j], reference[:, j]]), return_inverse=True)
        codes[:, c] = inverse
        share = np.bincount(inverse[m:], minlength=len(values)) / n
        mismatch_chance[c] = 1.0 - float(np.dot(share, share)) if len(values) > 1 else -1.0
    # The columns most likely to differ come first: the scan of a far row then ends soonest, and
    # a mismatch on an early column skips the largest group of sorted rows. Columns with a single
    # code never differ and are left out of the scan.
    order = np.argsort(-mismatch_chance, kind="stable")
    codes = np.ascontiguousarray(codes[:, order[mismatch_chance[order] >= 0]])
    pattern = _pattern_ranks(codes)
    q_pattern, r_pattern = pattern[:m], pattern[m:]
    scale = np.ascontiguousarray(encoding.scale[cont_columns])
    r_cont = reference[:, cont_columns]
    pivot = _pivot_column(r_cont, scale)
    # Sorted by categorical pattern (a leaf: rows with equal codes), and within a leaf by the
    # pivot column, which bounds the distance of every row further along it from the query.
    r_order = (
        np.lexsort((r_cont[:, pivot], r_pattern))
        if len(cont_columns)
        else np.argsort(r_pattern, kind="stable")
    )
    r_pattern = r_pattern[r_order]
    r_cat = np.ascontiguousarray(codes[m:][r_order])
    r_cont = np.ascontiguousarray(r_cont[r_order])
    exact_lo = np.searchsorted(r_pattern, q_pattern, side="left")
    exact_hi = np.searchsorted(r_pattern, q_pattern, side="right")
    # The scan starts with the query's own leaf and the leaves on either side of it in the sorted
    # order, which share the longest run of leading codes with it.
    before = np.where(exact_lo > 0, r_pattern[np.maximum(exact_lo - 1, 0)], -1)
    after = np.where(exact_hi < n, r_pattern[np.minimum(exact_hi, n - 1)], -1)
    near_lo = np.where(exact_lo > 0, np.searchsorted(r_pattern, before, side="left"), exact_lo)
    near_hi = np.where(exact_hi < n, np.searchsorted(r_pattern, after, side="right"), exact_hi)
    totals = np.empty((m, k))
    tie_rows = np.full((m, ties), -1, dtype=np.int64)
    tie_counts = np.zeros(m, dtype=np.int64)
    # Waking the threads costs more than a small search saves, and on busy cores much more.
    kernel = _nearest_parallel if m * n >= _PARALLEL_PAIRS else _nearest_serial
    kernel(
        np.ascontiguousarray(codes[:m]),
        np.ascontiguousarray(queries[:, cont_columns]),
        (exact_lo, exact_hi, near_lo, near_hi),
        (r_cat, r_cont, np.ascontiguousarray(r_cont[:, pivot]) if len(cont_columns) else np.zeros(n),
         _skip_pointers(r_cat), scale),
        pivot, totals, tie_rows, tie_counts,
    )  # fmt: skip
    tie_rows = np.where(tie_rows >= 0, r_order[np.maximum(tie_rows, 0)], -1)
    return totals / encoding.n_columns, tie_rows, tie_counts


def _pattern_ranks(codes: np.ndarray) -> np.ndarray:
    """Each row's rank among the distinct rows of ``codes`` in lexicographic order."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64)
    keys = np.lexsort(codes.T[::-1])
    ranked = codes[keys]
    new = np.empty(len(codes), dtype=bool)
    new[:1] = True
    new[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    pattern = np.empty(len(codes), dtype=np.int64)
    pattern[keys] = np.cumsum(new) - 1
    return pattern


def _pivot_column(r_cont: np.ndarray, scale: np.ndarray) -> int:
    """The continuous column with the largest mean term between two reference rows (0 if none)."""
    if r_cont.shape[1] == 0 or len(r_cont) < 2:
        return 0
    n = len(r_cont)
    # Mean |a - b| over pairs from the sorted values: row i is the larger of i pairs, the smaller
    # of n - 1 - i.
    weights = 2.0 * np.arange(n) - (n - 1)
    spread = weights @ np.sort(r_cont, axis=0) * (2.0 / (n * (n - 1)))
    return int(np.argmax(spread * scale))


@njit(cache=True)
def _skip_pointers(r_cat):
    """``skip[i, l]``: the first row after ``i`` whose codes on columns ``0..l`` differ from row
    ``i``'s, in a table sorted on those columns (``n`` when there is none)."""
    n, c = r_cat.shape
    skip = np.empty((n, c), dtype=np.int64)
    after = np.full(c, n, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for level in range(c):
            skip[i, level] = after[level]
        first = c
        if i == 0:
            first = 0
        else:
            for level in range(c):
                if r_cat[i, level] != r_cat[i - 1, level]:
                    first = level
                    break
        for level in range(first, c):
            after[level] = i
    return skip


@njit(parallel=True, cache=True)
def _nearest_parallel(q_cat, q_cont, starts, reference, pivot, totals, tie_rows, tie_counts):
    """:func:`_nearest_query` for every query, spread over the cores."""
    for qi in prange(q_cat.shape[0]):
        _nearest_query(qi, q_cat, q_cont, starts, reference, pivot, totals, tie_rows, tie_counts)


@njit(cache=True)
def _nearest_serial(q_cat, q_cont, starts, reference, pivot, totals, tie_rows, tie_counts):
    """:func:`_nearest_query` for every query, in this thread."""
    for qi in range(q_cat.shape[0]):
        _nearest_query(qi, q_cat, q_cont, starts, reference, pivot, totals, tie_rows, tie_counts)


@njit(cache=True)
def _nearest_query(qi, q_cat, q_cont, starts, reference, pivot, totals, tie_rows, tie_counts):
    """Write query ``qi``'s k smallest Gower sums (``d`` times the distance) over the sorted
    reference into ``totals[qi]``, the first reference rows at the smallest sum into
    ``tie_rows[qi]`` (when it has columns) and their number into ``tie_counts[qi]``.

    A sum counts 1.0 per categorical mismatch and then adds the continuous terms in column order,
    so equal terms give equal sums bit for bit. Without ties a row is dropped once a lower bound
    of its sum reaches the k-th best; with ties wanted only once it exceeds it.
    """
    exact_lo, exact_hi, near_lo, near_hi = starts
    n = reference[0].shape[0]
    ties = tie_rows.shape[1]
    top = np.full(totals.shape[1], np.inf)
    rows = tie_rows[qi]
    qc, qx = q_cat[qi], q_cont[qi]
    count = 0
    if exact_hi[qi] > exact_lo[qi]:
        count = _leaf(qx, reference, pivot, exact_lo[qi], exact_hi[qi], 0.0, top, rows, count)
    count = _scan(
        qc, qx, reference, pivot, near_lo[qi], near_hi[qi], exact_lo[qi], exact_hi[qi], top, rows, count
    )
    count = _scan(qc, qx, reference, pivot, 0, n, near_lo[qi], near_hi[qi], top, rows, count)
    totals[qi] = top
    tie_counts[qi] = count
    # Rows kept before a closer one reset the count are stale.
    for e in range(min(count, ties), ties):
        rows[e] = -1


@njit(cache=True)
def _scan(qc, qx, reference, pivot, start, stop, hole_start, hole_stop, top, rows, count):
    """Visit the leaves from row ``start`` (a leaf's first row) to ``stop``, leaving out rows
    ``hole_start .. hole_stop - 1`` (whole leaves); return the number of rows at ``top[0]``."""
    r_cat, _, _, skip, _ = reference
    k = top.shape[0]
    c = r_cat.shape[1]
    strict = rows.shape[0] > 0
    n = r_cat.shape[0]
    i = start
    while i < stop:
        if hole_start <= i < hole_stop:
            i = hole_stop
            continue
        bound = top[k - 1]
        if not strict and bound == 0.0:
            break
        mismatches = 0.0
        dropped = False
        for level in range(c):
            if r_cat[i, level] != qc[level]:
                mismatches += 1.0
                if mismatches > bound or (not strict and mismatches == bound):
                    # Every later row sharing codes 0..level has as many mismatches so far.
                    i = skip[i, level]
                    dropped = True
                    break
        if dropped:
            continue
        end = skip[i, c - 1] if c > 0 else n
        count = _leaf(qx, reference, pivot, i, end, mismatches, top, rows, count)
        i = end
    return count


@njit(cache=True)
def _leaf(qx, reference, pivot, start, stop, mismatches, top, rows, count):
    """Visit the rows ``start .. stop - 1`` of one leaf (equal codes, ``mismatches`` with the
    query), nearest on the pivot column first, until the pivot's term alone rules out the rest."""
    _, r_cont, r_pivot, _, scale = reference
    k = top.shape[0]
    p = r_cont.shape[1]
    strict = rows.shape[0] > 0
    if p == 0:
        for i in range(start, stop):
            if not strict and top[k - 1] <= mismatches:
                break
            count = _offer(mismatches, i, top, rows, count)
        return count
    x = qx[pivot]
    s = scale[pivot]
    right = start + np.searchsorted(r_pivot[start:stop], x)
    left = right - 1
    while left >= start or right < stop:
        gap_left = x - r_pivot[left] if left >= start else np.inf
        gap_right = r_pivot[right] - x if right < stop else np.inf
        if gap_left <= gap_right:
            i = left
            left -= 1
            gap = gap_left
        else:
            i = right
            right += 1
            gap = gap_right
        bound = top[k - 1]
        # A lower bound of the sum of this row and of every row further from x on either side.
        low = mismatches + gap * s
        if low > bound or (not strict and low == bound):
            break
        total = mismatches
        dropped = False
        for j in range(p):
            total += abs(qx[j] - r_cont[i, j]) * scale[j]
            if total > bound or (not strict and total == bound):
                dropped = True
                break
        if not dropped:
            count = _offer(total, i, top, rows, count)
    return count


@njit(cache=True)
def _offer(total, i, top, rows, count):
    """Put row ``i`` with sum ``total`` among the k best and the closest rows; return the count."""
    k = top.shape[0]
    cap = rows.shape[0]
    if cap > 0 and total <= top[0]:
        if total < top[0]:
            count = 0
        if count < cap:
            rows[count] = i
        count += 1
    if total < top[k - 1]:
        place = k - 1
        while place > 0 and top[place - 1] > total:
            top[place] = top[place - 1]
            place -= 1
        top[place] = total
    return count


# --------------------------------------------------------------------------------------------
# Record level
# --------------------------------------------------------------------------------------------


def dcr_p_values(member_dcr: ArrayLike, nonmember_dcr: ArrayLike) -> np.ndarray:
    """How unusually close each member is, ranked among the non-members' distances.

    ``p_i = (1 + #{j : nonmember_dcr[j] <= member_dcr[i]}) / (1 + n_nonmember)``: the conformal
    p-value of the hypothesis that member ``i`` is as far from the synthetic table as a row the
    generator never saw. A tie counts against the member (``<=``), so when the member's distance
    is exchangeable with the non-members' (the synthetic table does not depend on it),
    ``P(p_i <= a) <= a`` for every ``a``, with equality at multiples of ``1 / (1 + n_nonmember)``
    when there are no ties. The smallest value, ``1 / (1 + n_nonmember)``, means closer than every
    non-member.

    Parameters
    ----------
    member_dcr : array-like of float, shape (n_member,)
        Distances of the training rows to the synthetic table (may be empty).
    nonmember_dcr : array-like of float, shape (n_nonmember,)
        Distances of the holdout rows to it (at least one).

    Returns
    -------
    ndarray of float64, shape (n_member,)

    Raises
    ------
    ParameterError
        For input that is not 1-D, a nan or infinite value, or no non-member.
    """
    members = _distance_vector(member_dcr, "member_dcr")
    others = _distance_vector(nonmember_dcr, "nonmember_dcr")
    if others.size == 0:
        raise ParameterError(
            "nonmember_dcr is empty, so no member can be ranked; pass the distances of at least "
            "one holdout row."
        )
    at_most = np.searchsorted(np.sort(others), members, side="right")
    return (1.0 + at_most) / (1.0 + others.size)


def _distance_vector(values: ArrayLike, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a 1-D array of distances ({exc}).") from exc
    if array.ndim != 1:
        raise ParameterError(f"{name} must be one-dimensional, got shape {array.shape}; pass one per row.")
    if not np.all(np.isfinite(array)):
        raise ParameterError(f"{name} holds nan or infinite values; pass finite distances.")
    return array


@dataclass(frozen=True, eq=False)
class RecordSimilarity:
    """Per-record DCRs of the training rows, with the holdout rows as their reference.

    Attributes
    ----------
    dcr : ndarray of float64, shape (n_train,)
        Each training row's Gower distance to its closest synthetic row.
    holdout_dcr : ndarray of float64, shape (n_holdout,)
        The same for each holdout row.
    p_value : ndarray of float64, shape (n_train,)
        ``dcr_p_values(dcr, holdout_dcr)``: small where a training row is closer to the synthetic
        table than holdout rows usually are.
    """

    dcr: np.ndarray
    holdout_dcr: np.ndarray
    p_value: np.ndarray


def record_similarity(
    train: np.ndarray, holdout: np.ndarray, synthetic: np.ndarray, encoding: GowerEncoding
) -> RecordSimilarity:
    """Each training row's distance to the synthetic table and its p-value against the holdout's.

    Parameters
    ----------
    train : ndarray, shape (n_train, d)
        The encoded rows the generator was fitted on.
    holdout : ndarray, shape (n_holdout, d)
        Encoded rows of the same population the generator never saw.
    synthetic : ndarray, shape (n_synthetic, d)
        The encoded synthetic table.
    encoding : GowerEncoding
        From ``GowerEncoding.for_arrays(schema.is_categorical, train, holdout, synthetic)``.

    Returns
    -------
    RecordSimilarity

    Raises
    ------
    ParameterError
        For an empty table, a width other than the encoding's, or a nan or infinite value.
    """
    encoding = _check_encoding(encoding)
    d = encoding.n_columns
    t = _check_table(train, "train", d)
    h = _check_table(holdout, "holdout", d)
    s = _check_table(synthetic, "synthetic", d)
    dcr = _search(t, s, encoding, 1, ties=0)[0][:, 0]
    holdout_dcr = _search(h, s, encoding, 1, ties=0)[0][:, 0]
    return RecordSimilarity(dcr=dcr, holdout_dcr=holdout_dcr, p_value=dcr_p_values(dcr, holdout_dcr))


# --------------------------------------------------------------------------------------------
# Table level
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableSimilarity:
    """Whether a synthetic table lies closer to its training rows than to unseen rows.

    Attributes
    ----------
    dcr_share : float
        Share of synthetic rows whose closest record is in train rather than in holdout (both cut
        to one size); a row with equally close records in both counts one half. About 0.5 for a
        generator that generalises, up to 1 for one that copies.
    share_p_value : float
        One-sided p-value of ``dcr_share > 0.5`` from a permutation test of the train/holdout
        labels (see the module docstring): the share of relabellings, the observed one included,
        whose share is at least the observed one.
    passes : bool
        ``share_p_value >= alpha``: no evidence at level ``alpha`` that the synthetic table is
        closer to train.
    alpha : float
        The level of the test.
    dcr_train_p5, dcr_holdout_p5 : float
        5th percentile over the synthetic rows of the distance to the closest train (holdout) row.
    nndr_train_p5, nndr_holdout_p5 : float
        5th percentile of the ratio of the closest to the second closest distance, to train
        (holdout); 0/0 counts 1.
    n_train, n_holdout, n_synthetic : int
        Rows used: train and holdout after cutting the larger to the size of the smaller.
    """

    dcr_share: float
    share_p_value: float
    passes: bool
    alpha: float
    dcr_train_p5: float
    dcr_holdout_p5: float
    nndr_train_p5: float
    nndr_holdout_p5: float
    n_train: int
    n_holdout: int
    n_synthetic: int

    def to_dict(self) -> dict[str, float | int | bool]:
        """The figures as JSON-ready Python scalars, in field order."""
        return {
            "dcr_share": float(self.dcr_share),
            "share_p_value": float(self.share_p_value),
            "passes": bool(self.passes),
            "alpha": float(self.alpha),
            "dcr_train_p5": float(self.dcr_train_p5),
            "dcr_holdout_p5": float(self.dcr_holdout_p5),
            "nndr_train_p5": float(self.nndr_train_p5),
            "nndr_holdout_p5": float(self.nndr_holdout_p5),
            "n_train": int(self.n_train),
            "n_holdout": int(self.n_holdout),
            "n_synthetic": int(self.n_synthetic),
        }


def table_similarity(
    train: np.ndarray,
    holdout: np.ndarray,
    synthetic: np.ndarray,
    encoding: GowerEncoding,
    *,
    rng: np.random.Generator,
    alpha: float = 0.05,
    n_permutations: int = DEFAULT_PERMUTATIONS,
) -> TableSimilarity:
    """The DCR share of a synthetic table, its test, and low percentiles of DCR and NNDR.

    Parameters
    ----------
    train, holdout, synthetic : ndarray, shape (n_i, d)
        Encoded tables as in :func:`record_similarity`. The larger of train and holdout is cut to
        the size of the smaller by a random subset (drawn from ``rng``), so that a synthetic row
        unrelated to both is as likely to be closer to either.
    encoding : GowerEncoding
        From ``GowerEncoding.for_arrays(schema.is_categorical, train, holdout, synthetic)``.
    rng : numpy.random.Generator
        Draws the subset and the relabellings of the test.
    alpha : float, default 0.05
        Level of the test, in (0, 1).
    n_permutations : int, default 999
        Relabellings of the permutation test; the p-value is a multiple of
        ``1 / (n_permutations + 1)``.

    Returns
    -------
    TableSimilarity

    Raises
    ------
    ParameterError
        For fewer than two rows in train or holdout (the NNDR needs two neighbours), an empty
        synthetic table, a width other than the encoding's, a nan or infinite value, ``alpha``
        outside (0, 1), ``n_permutations < 1`` or an ``rng`` that is not a Generator.
    """
    encoding = _check_encoding(encoding)
    rng = _check_rng(rng)
    d = encoding.n_columns
    t = _check_table(train, "train", d)
    h = _check_table(holdout, "holdout", d)
    s = _check_table(synthetic, "synthetic", d)
    alpha = _check_alpha(alpha)
    if (
        isinstance(n_permutations, bool)
        or not isinstance(n_permutations, int | np.integer)
        or n_permutations < 1
    ):
        raise ParameterError(
            f"n_permutations must be a whole number >= 1, got {n_permutations!r}; the default is 999."
        )
    size = min(len(t), len(h))
    if size < 2:
        raise ParameterError(
            f"train has {len(t)} rows and holdout {len(h)}; the table measures need at least two "
            "in each (the NNDR compares the two closest records). Pass larger tables."
        )
    if len(t) > size:
        t = t[np.sort(rng.choice(len(t), size=size, replace=False))]
    elif len(h) > size:
        h = h[np.sort(rng.choice(len(h), size=size, replace=False))]
    to_train, train_ties, train_counts = _search(s, t, encoding, 2, ties=_TIE_CAP)
    to_holdout, holdout_ties, holdout_counts = _search(s, h, encoding, 2, ties=_TIE_CAP)
    near_train, near_holdout = to_train[:, 0], to_holdout[:, 0]
    share = (
        np.count_nonzero(near_train < near_holdout) + 0.5 * np.count_nonzero(near_train == near_holdout)
    ) / len(s)
    p_value = _share_p_value(
        (near_train, train_ties, train_counts), (near_holdout, holdout_ties, holdout_counts), size, rng,
        int(n_permutations),
    )  # fmt: skip
    return TableSimilarity(
        dcr_share=float(share),
        share_p_value=p_value,
        passes=bool(p_value >= alpha),
        alpha=alpha,
        dcr_train_p5=float(np.percentile(near_train, 5)),
        dcr_holdout_p5=float(np.percentile(near_holdout, 5)),
        nndr_train_p5=float(np.percentile(_nndr(to_train), 5)),
        nndr_holdout_p5=float(np.percentile(_nndr(to_holdout), 5)),
        n_train=len(t),
        n_holdout=len(h),
        n_synthetic=len(s),
    )


def _check_alpha(alpha: float) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"alpha must be a number in (0, 1), got {alpha!r}; e.g. 0.05.") from exc
    if not (math.isfinite(value) and 0 < value < 1):
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha!r}; choose e.g. 0.05.")
    return value


def _nndr(distances: np.ndarray) -> np.ndarray:
    """Closest over second closest distance per row; 0/0 is 1 (two records equally close)."""
    first, second = distances[:, 0], distances[:, 1]
    return np.divide(first, second, out=np.ones_like(first), where=second > 0)


def _share_p_value(
    train: tuple[np.ndarray, np.ndarray, np.ndarray],
    holdout: tuple[np.ndarray, np.ndarray, np.ndarray],
    size: int,
    rng: np.random.Generator,
    n_permutations: int,
) -> float:
    """Permutation p-value of the share of synthetic rows closer to train.

    ``train`` and ``holdout`` each hold, per synthetic row, the smallest distance, the closest
    rows (``_TIE_CAP`` columns, -1 padded) and their number. The pool is the ``size`` train rows
    (ids ``0 .. size - 1``) and the ``size`` holdout rows (ids ``size ..``). A synthetic row's
    closest pooled records are its closest train rows, its closest holdout rows, or both when the
    two distances are equal; the row scores 2 when they are all labelled train, 0 when all
    holdout and 1 otherwise. A row with more than ``_TIE_CAP`` closest records scores 1 in every
    labelling.
    """
    near_train, train_ties, train_counts = train
    near_holdout, holdout_ties, holdout_counts = holdout
    holdout_ties = np.where(holdout_ties >= 0, holdout_ties + size, -1)
    use_train = near_train <= near_holdout
    use_holdout = near_holdout <= near_train
    n_closest = np.where(use_train, train_counts, 0) + np.where(use_holdout, holdout_counts, 0)
    kept = n_closest <= _TIE_CAP
    members = np.concatenate(
        [
            np.where((use_train & kept)[:, None], train_ties, -1),
            np.where((use_holdout & kept)[:, None], holdout_ties, -1),
        ],
        axis=1,
    )
    valid = members >= 0
    indptr = np.concatenate([[0], np.cumsum(valid.sum(axis=1))]).astype(np.int64)
    flat = members[valid]
    # Only the labels of pooled rows that are someone's closest record matter.
    touched, compact = np.unique(flat, return_inverse=True)
    compact = compact.astype(np.int64)
    fixed = int(np.count_nonzero(~kept))
    observed = _share_score(indptr, compact, touched < size) + fixed
    at_least = 0
    done = 0
    while done < n_permutations:
        rows = min(_PERMUTATION_CHUNK, n_permutations - done)
        scores = _share_scores(indptr, compact, rng.random((rows, len(touched))), size) + fixed
        at_least += int(np.count_nonzero(scores >= observed))
        done += rows
    return (1 + at_least) / (1 + n_permutations)


@njit(cache=True)
def _share_score(indptr, members, is_train):
    """Twice the number of synthetic rows closer to train, ties counting one half, for the closest
    records ``members[indptr[i]:indptr[i + 1]]`` of each row ``i`` (none: the row is left out)."""
    score = 0
    for i in range(indptr.shape[0] - 1):
        n_train = 0
        size = indptr[i + 1] - indptr[i]
        for e in range(indptr[i], indptr[i + 1]):
            if is_train[members[e]]:
                n_train += 1
        if size > 0:
            if n_train == size:
                score += 2
            elif n_train > 0:
                score += 1
    return score


@njit(cache=True)
def _share_scores(indptr, members, uniforms, size):
    """:func:`_share_score` under random relabellings, one per row of ``uniforms``.

    Only the ``u`` rows that are someone's closest record need a label. Under a uniformly random
    split of the ``2 * size`` pooled rows into two halves, these labels are drawn one after the
    other without replacement: row ``j`` is train with chance (train labels left) / (rows left).
    """
    n_perm, u = uniforms.shape
    out = np.empty(n_perm, dtype=np.int64)
    labels = np.empty(u, dtype=np.bool_)
    for b in range(n_perm):
        left_train = size
        for j in range(u):
            is_train = uniforms[b, j] * (2 * size - j) < left_train
            labels[j] = is_train
            if is_train:
                left_train -= 1
        out[b] = _share_score(indptr, members, labels)
    return out
