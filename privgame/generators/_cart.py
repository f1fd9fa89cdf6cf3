"""A small, fast CART for the synthpop generator, compiled with numba.

One call grows every tree of a synthpop model: tree ``j`` predicts column ``j`` of an array
whose columns are already in visit order, from columns ``0 .. j-1``. Tree ``0`` has no
predictor, so it is a single leaf holding every row (sampling it is a bootstrap).

How a tree grows (the CART rules, as scikit-learn's ``DecisionTree*(min_samples_leaf=m)``):

* every predictor is sorted once (stable, so equal values keep their row order; by counting
  for whole numbers in a small range); each node owns the same range ``[start, end)`` of every
  predictor's sorted row list, and a split partitions those ranges stably, so they stay sorted
  without sorting again;
* a node is split when it holds at least ``2 m`` rows, is impure (two classes, or two distinct
  target values) and some predictor has a threshold between two distinct values with at least
  ``m`` rows on each side; there is no depth limit;
* the best split maximises ``sum_c n_Lc^2 / n_L + sum_c n_Rc^2 / n_R`` (Gini, classification) or
  ``S_L^2 / n_L + S_R^2 / n_R`` (squared error, regression; ``S`` the sums of the target);
  ties go to the first predictor, then the lowest threshold, so a tree is a deterministic
  function of the array;
* the threshold is the midpoint of the two neighbouring values and rows go left when
  ``x <= threshold``.

A leaf keeps the index range of its training rows, so drawing "a random training value of the
leaf" is one uniform draw per row. Categorical predictors are split as ordered integer codes.

Large nodes search faster, with the same result: a predictor with at most ``_MAX_BINS``
distinct values is searched through a histogram of the node (per distinct value: the row count,
and the class counts or the target sum), and only the node's rows are partitioned, not a sorted
list per predictor. A split builds the histograms of its smaller child and subtracts them from
the parent's to get the larger child's. Every candidate threshold is still visited in the same
order with the same counts, so the proxies and the chosen split are the ones of the sorted scan
bit for bit: class counts are whole numbers, and a regression tree uses histograms only when its
centred target is whole numbers whose sums stay below ``2**53`` (then every sum is exact in any
order); other regression trees keep the sorted scan everywhere. Once a node is small, its sorted
lists are rebuilt by a counting sort of its rows (exactly the stable order) and its subtree grows
from them. Children are numbered consecutively: the right child is always ``left + 1``.

A table that repeats rows (a bootstrap of a smaller table, as the release set-up's shadow
datasets drawn with replacement) grows its trees on its distinct rows, each counted as often as
it occurs: every count, class count and target sum is the one of the table itself (whole
numbers, exact in any order), so every split is the same; the node ranges and leaf values are
then laid out over the table's own rows, by column 0's value and then row, as the unweighted
growth lays them out. The forest is the same array for array, and so are its draws. Regression
targets that are not whole numbers (whose sums could round differently) grow unweighted.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit, types
from numba.extending import overload

__all__ = [
    "Forest",
    "RefitState",
    "apply_tree",
    "best_split",
    "check_cells",
    "grow_forest",
    "grow_tree",
    "refit_forest",
    "sample_forest",
]

# Histogram split search for predictors with at most this many distinct values; others keep
# their sorted row lists at every node.
_MAX_BINS = 512
# Trees grow on the distinct rows (each counted as often as it occurs) when at most this share
# of the rows is distinct: a bootstrap of a smaller table, as shadow datasets drawn with
# replacement, has about 28% distinct rows at 3.5 draws per row and grows about 3.5 times
# faster; above this share the deduplication costs more than it saves (measured on Adult).
_DISTINCT_SHARE = 0.8
# A node uses histograms when ``rows * predictors >= _HIST_COST * bins * (classes + 1)``: below
# that, scanning every bin costs more than scanning sorted row lists (tuned on Adult).
_HIST_COST = 0.02


@dataclass(frozen=True)
class Forest:
    """The trees of one synthpop model, stored as flat node arrays.

    Attributes
    ----------
    feature : ndarray of int64
        Predictor (a column position in visit order) tested at each node; -1 at a leaf.
    threshold, upper : ndarray of float64
        Rows with ``threshold < x <= upper`` go to ``right``, the others to ``left``; ``upper``
        is infinite for a threshold split and ``code + 0.5`` for a one-vs-rest split.
    left, right : ndarray of int64
        Global indices of the children (``right == left + 1``); -1 at a leaf.
    lo, hi : ndarray of int64
        At a leaf, the range of ``leaf_values[j]`` holding its training values.
    roots : ndarray of int64
        The root node of tree ``j`` for each column ``j`` (in visit order).
    leaf_values : ndarray of float64, shape (d, n)
        Row ``j`` holds column ``j``'s training values, grouped by the leaf of tree ``j``.
    """

    feature: np.ndarray
    threshold: np.ndarray
    upper: np.ndarray
    left: np.ndarray
    right: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    roots: np.ndarray
    leaf_values: np.ndarray

    @cached_property
    def nodes(self) -> np.ndarray:
        """The nodes packed for sampling, one 32-byte record each (see ``_NODE``)."""
        return _pack(self.feature, self.threshold, self.upper, self.left, self.lo, self.hi)

    @property
    def n_leaves(self) -> np.ndarray:
        """Number of leaves of each tree."""
        ends = np.append(self.roots[1:], len(self.left))
        is_leaf = self.left < 0
        return np.array([int(is_leaf[a:b].sum()) for a, b in zip(self.roots, ends, strict=True)])


# A node as the sampler reads it: what a step needs in one 32-byte record (half a cache line)
# instead of four arrays. A leaf points to itself (``left`` its own index, thresholds infinite,
# ``feature`` 0), so a step from a leaf stays there, and ``lo``/``size`` locate its training
# values; int32 fields hold every index of a table below 2**31 rows.
_NODE = np.dtype(
    [("threshold", "f8"), ("upper", "f8"), ("left", "i4"), ("feature", "i4"), ("lo", "i4"), ("size", "i4")],
    align=True,
)


def _pack(
    feature: np.ndarray,
    threshold: np.ndarray,
    upper: np.ndarray,
    left: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> np.ndarray:
    nodes = np.empty(len(left), dtype=_NODE)
    # One compiled pass through two views of the records: 10 times faster than a numpy pass
    # per field (2.4 against 0.2 ms for Adult's 75,000 nodes), which every refit model pays.
    floats, ints = nodes.view(np.float64).reshape(-1, 4), nodes.view(np.int32).reshape(-1, 8)
    _pack_into(floats, ints, feature, threshold, upper, left, lo, hi)
    return nodes


@njit(cache=True)
def _pack_into(floats, ints, feature, threshold, upper, left, lo, hi):
    for q in range(len(left)):
        leaf = left[q] < 0
        floats[q, 0] = np.inf if leaf else threshold[q]
        floats[q, 1] = np.inf if leaf else upper[q]
        ints[q, 4] = q if leaf else left[q]
        ints[q, 5] = 0 if leaf else feature[q]
        ints[q, 6] = lo[q]
        ints[q, 7] = hi[q] - lo[q]


# The record's fields as ``_pack_into`` writes them: two float64s, then four int32s.
assert _NODE.itemsize == 32 and [_NODE.fields[k][1] for k in _NODE.names] == [0, 8, 16, 20, 24, 28]


def _weight(wt, r):  # pragma: no cover - compiled through the overload below
    """How many times row ``r`` counts: ``wt[r]``, or 1 when ``wt`` is None (unweighted)."""
    return 1 if wt is None else wt[r]


@overload(_weight, inline="always")
def _weight_overload(wt, r):
    # Unweighted growth (``wt`` None) compiles to the constant 1, so it runs the unweighted
    # arithmetic itself, at its speed.
    if isinstance(wt, types.NoneType):
        return lambda wt, r: 1
    return lambda wt, r: wt[r]


@njit(cache=True)
def _midpoint(a: float, b: float) -> float:
    t = a / 2.0 + b / 2.0
    if t >= b:  # rounding can push the midpoint onto b, which must go right
        t = a
    return t


@njit(cache=True)
def _presort(X):
    """Every column's stable sort order ``(d, n)``, dense ranks ``(d, n)`` and distinct values.

    The distinct values of column ``f`` are ``uniq[uoff[f]:uoff[f + 1]]``, ascending. A column of
    whole numbers in a range of at most ``4 n`` values is sorted by counting, in linear time.
    """
    n, d = X.shape
    orders = np.empty((d, n), dtype=np.int64)
    rank = np.empty((d, n), dtype=np.int32)  # per column: a node's rows (ascending) read in order
    uniq = np.empty(n * d, dtype=np.float64)
    uoff = np.zeros(d + 1, dtype=np.int64)
    col = np.empty(n, dtype=np.float64)
    w = 0
    for f in range(d):
        whole = True
        low = np.inf
        high = -np.inf
        for i in range(n):
            v = X[i, f]
            col[i] = v
            whole = whole and v == np.floor(v)
            low = min(low, v)
            high = max(high, v)
        if n > 0 and whole and high - low <= 4 * n and max(-low, high) < 2.0**52:
            span = np.int64(high - low) + 1
            start = np.zeros(span + 1, dtype=np.int64)
            for i in range(n):
                start[np.int64(col[i] - low) + 1] += 1
            dense = np.empty(span, dtype=np.int64)
            for b in range(span):
                if start[b + 1] > 0:
                    uniq[w] = low + b
                    w += 1
                dense[b] = w - 1 - uoff[f]
                start[b + 1] += start[b]
            for i in range(n):
                b = np.int64(col[i] - low)
                orders[f, start[b]] = i
                start[b] += 1
                rank[f, i] = dense[b]
        else:
            order = np.argsort(col, kind="mergesort")
            for i in range(n):
                r = order[i]
                v = col[r]
                if i == 0 or v != uniq[w - 1]:
                    uniq[w] = v
                    w += 1
                orders[f, i] = r
                rank[f, r] = w - 1 - uoff[f]
        uoff[f + 1] = w
    return orders, rank, uniq[:w].copy(), uoff


@njit(cache=True)
def _integral_sums(yv, wt):
    # Sums of whole numbers below 2**53 are exact in any order, so histogram sums (per bin,
    # then cumulated) equal the row-by-row running sums of the sorted scan bit for bit.
    total = 0.0
    for i in range(len(yv)):
        v = yv[i]
        if v != np.floor(v):
            return False
        total += _weight(wt, i) * abs(v)
    return total < 2.0**53


@njit(cache=True)
def _scan_sorted(
    ords, rks, yc, yv, wt, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot, s_tot, cl, cr, best
):
    """Scan feature ``f``'s sorted rows of the node ``[s, e)`` (``m`` rows counting weights):
    ``(proxy, position)`` if better.

    Row ``r`` counts ``wt[r]`` times; every count and sum is the one of the array with each row
    repeated that many times (whole numbers, so exact), so the proxies are too.
    """
    best_i = -1
    n_l = 0
    # Unweighted, the right side keeps ``min_leaf`` rows by position; weighted, by count.
    stop = e - min_leaf if wt is None else e - 1
    if classify:
        for c in range(ncls):
            cl[c] = 0
            cr[c] = tot[c]
        sq_l = 0
        sq_r = sq_tot
        for i in range(s, stop):
            r = ords[f, i]
            c = yc[r]
            w = _weight(wt, r)
            sq_l += w * (2 * cl[c] + w)
            cl[c] += w
            sq_r -= w * (2 * cr[c] - w)
            cr[c] -= w
            n_l += w
            if wt is not None and n_l > m - min_leaf:
                break
            if n_l < min_leaf or rks[f, i] == rks[f, i + 1]:
                continue
            p = sq_l / n_l + sq_r / (m - n_l)
            if p > best:
                best = p
                best_i = i
    else:
        s_l = 0.0
        for i in range(s, stop):
            r = ords[f, i]
            w = _weight(wt, r)
            s_l += w * yv[r]
            n_l += w
            if wt is not None and n_l > m - min_leaf:
                break
            if n_l < min_leaf or rks[f, i] == rks[f, i + 1]:
                continue
            s_r = s_tot - s_l
            p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
            if p > best:
                best = p
                best_i = i
    return best, best_i


@njit(cache=True)
def _scan_onehot(
    ords, rks, uniq, uoff, yc, yv, wt, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot, s_tot, cl, best
):
    """Scan feature ``f``'s one-vs-rest splits on the sorted rows of the node ``[s, e)``.

    Each run of equal codes other than 0 (the reference category, which has no indicator) is a
    candidate: its rows go right, all others left. Returns ``(proxy, start, end)`` of the best
    run if it beats ``best``, else ``start`` -1. Rows count with their weights ``wt`` (see
    ``_scan_sorted``); ``m`` is the node's weighted row count.
    """
    best_a = -1
    best_b = -1
    a = s
    while a < e:
        value = rks[f, a]
        b = a + 1
        cnt = _weight(wt, ords[f, a])
        while b < e and rks[f, b] == value:
            cnt += _weight(wt, ords[f, b])
            b += 1
        n_l = m - cnt
        if uniq[uoff[f] + value] != 0.0 and cnt >= min_leaf and n_l >= min_leaf:
            if classify:
                for c in range(ncls):
                    cl[c] = 0
                sq_r = 0
                sq_l = sq_tot
                for i in range(a, b):
                    r = ords[f, i]
                    c = yc[r]
                    w = _weight(wt, r)
                    sq_l -= w * (2 * (tot[c] - cl[c]) - w)
                    sq_r += w * (2 * cl[c] + w)
                    cl[c] += w
                p = sq_l / n_l + sq_r / (m - n_l)
            else:
                s_r = 0.0
                for i in range(a, b):
                    r = ords[f, i]
                    s_r += _weight(wt, r) * yv[r]
                s_l = s_tot - s_r
                p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
            if p > best:
                best = p
                best_a = a
                best_b = b
        a = b
    return best, best_a, best_b


@njit(cache=True)
def _node_totals(ords, yc, yv, wt, classify, ncls, s, e, tot):
    """Class counts (into ``tot``), their sum of squares, the target sum and the weighted row
    count of the node; ``pure`` if unsplittable."""
    tot[:] = 0
    sq_tot = 0
    s_tot = 0.0
    m = 0
    pure = False
    if classify:
        for i in range(s, e):
            r = ords[0, i]
            tot[yc[r]] += _weight(wt, r)
            m += _weight(wt, r)
        for c in range(ncls):
            sq_tot += tot[c] * tot[c]
        pure = sq_tot == m * m  # a single class
    else:
        y_min = np.inf
        y_max = -np.inf
        for i in range(s, e):
            r = ords[0, i]
            v = yv[r]
            s_tot += _weight(wt, r) * v
            m += _weight(wt, r)
            y_min = min(y_min, v)
            y_max = max(y_max, v)
        pure = y_min == y_max  # a constant target
    return tot, sq_tot, s_tot, m, pure


@njit(cache=True)
def _best_split(ords, rks, uniq, uoff, yc, yv, wt, classify, ncls, k, s, e, min_leaf, onehot, tot, cl, cr):
    """Best split of the node ``[s, e)``: ``(feature, start, end, proxy)``, feature -1 if none.

    The rows at positions ``[start, end)`` of the feature's sorted range go right, the others
    left: ``end`` is ``e`` for a threshold split, and a run of one code for a one-vs-rest split
    (``onehot[feature]``). ``tot``, ``cl`` and ``cr`` are scratch arrays of ``max(ncls, 1)``
    integers, allocated once per tree rather than at every node.
    """
    best_f = -1
    best_a = -1
    best_b = -1
    best = -np.inf
    _, sq_tot, s_tot, m, pure = _node_totals(ords, yc, yv, wt, classify, ncls, s, e, tot)
    if pure:
        return best_f, best_a, best_b, best
    for f in range(k):
        if rks[f, s] == rks[f, e - 1]:
            continue
        if onehot[f]:
            p, a, b = _scan_onehot(
                ords, rks, uniq, uoff, yc, yv, wt, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot, s_tot,
                cl, best,
            )  # fmt: skip
        else:
            p, i = _scan_sorted(
                ords, rks, yc, yv, wt, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot, s_tot, cl, cr, best
            )
            a = i + 1 if i >= 0 else -1
            b = e
        if a >= 0:
            best = p
            best_f = f
            best_a = a
            best_b = b
    return best_f, best_a, best_b, best


@njit(cache=True)
def _partition(ords, rks, f, s, e, goes_left, tmp_o, tmp_k):
    """Stable partition of feature ``f``'s rows ``[s, e)``: those going left first."""
    w = s
    nr = 0
    for i in range(s, e):
        r = ords[f, i]
        x = rks[f, i]
        # both writes are safe (w <= i) and make the loop branch-free
        ords[f, w] = r
        rks[f, w] = x
        tmp_o[nr] = r
        tmp_k[nr] = x
        g = goes_left[r]
        w += g
        nr += 1 - g
    for q in range(nr):
        ords[f, w + q] = tmp_o[q]
        rks[f, w + q] = tmp_k[q]


@njit(cache=True)
def _partition_rows(rows, s, e, goes_left, tmp_i):
    w = s
    nr = 0
    for i in range(s, e):
        r = rows[i]
        rows[w] = r
        tmp_i[nr] = r
        g = goes_left[r]
        w += g
        nr += 1 - g
    for q in range(nr):
        rows[w + q] = tmp_i[q]


@njit(cache=True)
def _sort_by_rank(rank, rows, f, n_bins, s, e, ords, rks, count):
    """Counting sort of the rows ``rows[s:e]`` (in row order) by their rank in column ``f``.

    This gives ``ords[f, s:e]`` exactly as partitioning the presorted list would: by value,
    then by row.
    """
    for b in range(n_bins + 1):
        count[b] = 0
    for i in range(s, e):
        count[rank[f, rows[i]] + 1] += 1
    for b in range(n_bins):
        count[b + 1] += count[b]
    for i in range(s, e):
        r = rows[i]
        q = s + count[rank[f, r]]
        count[rank[f, r]] += 1
        ords[f, q] = r
        rks[f, q] = rank[f, r]


@njit(cache=True)
def _add_rows(hist, rows, s, e, boff, classify, yc, yv, wt, sign):
    """Add (``sign`` 1), subtract (-1) or clear (0) the rows ``rows[s:e]`` in ``hist``.

    Bin ``b`` of the binned predictors takes ``width`` cells from ``b * width``: the row count,
    then the count of each class or the sum of the target; ``boff[r, q]`` is the first cell of
    row ``r``'s bin in the ``q``-th binned predictor. Row ``r`` counts ``wt[r]`` times.
    """
    for i in range(s, e):
        r = rows[i]
        w = sign * _weight(wt, r)
        if classify:
            c = 1 + yc[r]
            for q in range(boff.shape[1]):
                b = boff[r, q]
                if sign == 0:
                    hist[b] = 0.0
                    hist[b + c] = 0.0
                else:
                    hist[b] += w
                    hist[b + c] += w
        else:
            v = w * yv[r]
            for q in range(boff.shape[1]):
                b = boff[r, q]
                if sign == 0:
                    hist[b] = 0.0
                    hist[b + 1] = 0.0
                else:
                    hist[b] += w
                    hist[b + 1] += v


@njit(cache=True)
def _move_rows(src, dst, rows, s, e, boff, classify, yc, yv, wt):
    """Move the rows ``rows[s:e]`` from the histograms ``src`` to ``dst``.

    One pass for what two calls of ``_add_rows`` do (add to ``dst``, subtract from ``src``),
    with the same float operations, so the counts and sums are the same bit for bit.
    """
    for i in range(s, e):
        r = rows[i]
        w = np.float64(_weight(wt, r))
        if classify:
            c = 1 + yc[r]
            for q in range(boff.shape[1]):
                b = boff[r, q]
                dst[b] += w
                dst[b + c] += w
                src[b] -= w
                src[b + c] -= w
        else:
            v = _weight(wt, r) * yv[r]
            for q in range(boff.shape[1]):
                b = boff[r, q]
                dst[b] += w
                dst[b + 1] += v
                src[b] -= w
                src[b + 1] -= v


@njit(cache=True)
def _release(pool, slot, free, n_free, rows, s, e, boff, classify, yc, yv, wt):
    """Zero the histograms of the node ``[s, e)`` in ``pool[slot]`` and free the slot."""
    if (e - s) * boff.shape[1] * 4 < pool.shape[1]:
        _add_rows(pool[slot], rows, s, e, boff, classify, yc, yv, wt, 0)
    else:
        pool[slot] = 0.0
    free[n_free] = slot
    return n_free + 1


@njit(cache=True)
def _grow_pool(pool):
    """Twice the slots; the new (zeroed) ones are free."""
    size = pool.shape[0]
    grown = np.zeros((2 * size, pool.shape[1]), dtype=np.float64)
    grown[:size] = pool
    free = np.empty(2 * size, dtype=np.int64)
    free[:size] = np.arange(size, 2 * size)
    return grown, free, size


@njit(cache=True)
def _scan_bins(
    hist, f, uoff, uniq, hoff, width, classify, ncls, m, tot, sq_tot, s_tot, min_leaf, one, fl, fr, best
):
    """Scan binned predictor ``f``'s histograms (see ``_hist_split``) for a split better than
    ``best``: ``(proxy, bin, rows going left)``, bin -1 if none is (for a threshold, the bin
    left of it; one-vs-rest (``one``), the code's bin).

    The same scan as ``_hist_split``'s over a binned predictor, for the refits; ``_hist_split``
    keeps its own copy because calling this from it made fits 7-9% slower (measured with
    ``benchmarks/ab.py``, compiled as a function or inlined).
    """
    best_lv = -1
    best_nl = 0
    if one:
        # One-vs-rest: the rows of one code go right, the others left; code 0 is the
        # reference category (it has no indicator), as one-hot encoding with drop-first.
        for v in range(uoff[f + 1] - uoff[f]):
            b = (hoff[f] + v) * width
            cnt = np.int64(hist[b])
            n_l = m - cnt
            if cnt < min_leaf or n_l < min_leaf or uniq[uoff[f] + v] == 0.0:
                continue
            if classify:
                sq_l = 0.0
                sq_r = 0.0
                for c in range(ncls):
                    h = hist[b + 1 + c]
                    sq_r += h * h
                    g = tot[c] - h
                    sq_l += g * g
                p = sq_l / n_l + sq_r / (m - n_l)
            else:
                s_r = hist[b + 1]
                s_l = s_tot - s_r
                p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
            if p > best:
                best = p
                best_lv = v
                best_nl = n_l
        return best, best_lv, best_nl
    n_l = 0
    prev = -1
    if classify:
        # Counts and sums of squared counts are whole numbers below 2**53, exact as floats,
        # so the proxy is the one the integer scan computes; floats let the class loop vectorise.
        for c in range(ncls):
            fl[c] = 0.0
            fr[c] = tot[c]
        sq_l = 0.0
        sq_r = np.float64(sq_tot)
        for v in range(uoff[f + 1] - uoff[f]):
            b = (hoff[f] + v) * width
            cnt = np.int64(hist[b])
            if cnt == 0:
                continue
            if n_l >= min_leaf:  # a threshold between bins ``prev`` and ``v``
                p = sq_l / n_l + sq_r / (m - n_l)
                if p > best:
                    best = p
                    best_lv = prev
                    best_nl = n_l
            for c in range(ncls):
                h = hist[b + 1 + c]
                sq_l += h * (2.0 * fl[c] + h)
                fl[c] += h
                sq_r -= h * (2.0 * fr[c] - h)
                fr[c] -= h
            n_l += cnt
            prev = v
            if n_l > m - min_leaf:
                break
    else:
        s_l = 0.0
        for v in range(uoff[f + 1] - uoff[f]):
            b = (hoff[f] + v) * width
            cnt = np.int64(hist[b])
            if cnt == 0:
                continue
            if n_l >= min_leaf:
                s_r = s_tot - s_l
                p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
                if p > best:
                    best = p
                    best_lv = prev
                    best_nl = n_l
            s_l += hist[b + 1]
            n_l += cnt
            prev = v
            if n_l > m - min_leaf:
                break
    return best, best_lv, best_nl


@njit(cache=True)
def _hist_split(
    rows, rank, uoff, uniq, ords, rks, yc, yv, wt, classify, ncls, k, s, e, min_leaf, binned, blist, hoff,
    hist, onehot, tot, cl, cr, fl, fr,
):  # fmt: skip
    """The split ``_best_split`` finds, from the node's histograms of the binned predictors
    (``tot``, ``cl``, ``cr``, ``fl``, ``fr``: per-tree scratch arrays of ``max(ncls, 1)``).

    ``hist`` holds, per bin, the row count and then either the class counts or the target sum
    (see ``_add_rows``).
    Returns ``(feature, left bin, right bin, rows going left, start, end)``: for a binned
    feature, the bins either side of the threshold (or, one-vs-rest, the bin of the code that
    goes right in both); for another, the positions ``[start, end)`` of its sorted list that go
    right (see ``_best_split``); feature -1 if no split.
    """
    width = ncls + 1 if classify else 2
    tot[:] = 0
    s_tot = 0.0
    m = 0
    y_min = np.inf
    y_max = -np.inf
    for i in range(s, e):
        r = rows[i]
        m += _weight(wt, r)
        if classify:
            tot[yc[r]] += _weight(wt, r)
        else:
            v = yv[r]
            s_tot += _weight(wt, r) * v
            y_min = min(y_min, v)
            y_max = max(y_max, v)
    sq_tot = 0
    if classify:
        for c in range(ncls):
            sq_tot += tot[c] * tot[c]
        if sq_tot == m * m:
            return -1, -1, -1, 0, -1, -1
    elif y_min == y_max:
        return -1, -1, -1, 0, -1, -1
    best = -np.inf
    best_f = -1
    best_lv = -1
    best_nl = 0
    best_a = -1
    best_b = -1
    for f in range(k):
        if not binned[f]:
            if rks[f, s] == rks[f, e - 1]:
                continue
            if onehot[f]:
                p, a, b = _scan_onehot(
                    ords, rks, uniq, uoff, yc, yv, wt, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot,
                    s_tot, cl, best,
                )  # fmt: skip
            else:
                p, i = _scan_sorted(
                    ords, rks, yc, yv, wt, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot, s_tot, cl, cr,
                    best,
                )  # fmt: skip
                a = i + 1 if i >= 0 else -1
                b = e
            if a >= 0:
                best = p
                best_f = f
                best_a = a
                best_b = b
            continue
        if onehot[f]:
            # One-vs-rest: the rows of one code go right, the others left; code 0 is the
            # reference category (it has no indicator), as one-hot encoding with drop-first.
            for v in range(uoff[f + 1] - uoff[f]):
                b = (hoff[f] + v) * width
                cnt = np.int64(hist[b])
                n_l = m - cnt
                if cnt < min_leaf or n_l < min_leaf or uniq[uoff[f] + v] == 0.0:
                    continue
                if classify:
                    sq_l = 0.0
                    sq_r = 0.0
                    for c in range(ncls):
                        h = hist[b + 1 + c]
                        sq_r += h * h
                        g = tot[c] - h
                        sq_l += g * g
                    p = sq_l / n_l + sq_r / (m - n_l)
                else:
                    s_r = hist[b + 1]
                    s_l = s_tot - s_r
                    p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
                if p > best:
                    best = p
                    best_f = f
                    best_lv = v
                    best_nl = n_l
            continue
        n_l = 0
        prev = -1
        if classify:
            # Counts and sums of squared counts are whole numbers below 2**53, exact as floats,
            # so the proxy is the one the integer scan computes; floats let the class loop vectorise.
            for c in range(ncls):
                fl[c] = 0.0
                fr[c] = tot[c]
            sq_l = 0.0
            sq_r = np.float64(sq_tot)
            for v in range(uoff[f + 1] - uoff[f]):
                b = (hoff[f] + v) * width
                cnt = np.int64(hist[b])
                if cnt == 0:
                    continue
                if n_l >= min_leaf:  # a threshold between bins ``prev`` and ``v``
                    p = sq_l / n_l + sq_r / (m - n_l)
                    if p > best:
                        best = p
                        best_f = f
                        best_lv = prev
                        best_nl = n_l
                for c in range(ncls):
                    h = hist[b + 1 + c]
                    sq_l += h * (2.0 * fl[c] + h)
                    fl[c] += h
                    sq_r -= h * (2.0 * fr[c] - h)
                    fr[c] -= h
                n_l += cnt
                prev = v
                if n_l > m - min_leaf:
                    break
        else:
            s_l = 0.0
            for v in range(uoff[f + 1] - uoff[f]):
                b = (hoff[f] + v) * width
                cnt = np.int64(hist[b])
                if cnt == 0:
                    continue
                if n_l >= min_leaf:
                    s_r = s_tot - s_l
                    p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
                    if p > best:
                        best = p
                        best_f = f
                        best_lv = prev
                        best_nl = n_l
                s_l += hist[b + 1]
                n_l += cnt
                prev = v
                if n_l > m - min_leaf:
                    break
    if best_f < 0 or not binned[best_f]:
        return best_f, -1, -1, 0, best_a, best_b
    if onehot[best_f]:
        return best_f, best_lv, best_lv, best_nl, -1, -1
    best_rv = best_lv + 1
    while hist[(hoff[best_f] + best_rv) * width] == 0:
        best_rv += 1
    return best_f, best_lv, best_rv, best_nl, -1, -1


@njit(cache=True)
def _grow_tree(
    X, orders, rank, uoff, uniq, j, classify, ncls, min_leaf, onehot, base, feature, threshold, upper, left,
    right, lo, hi, wt, centre,
):  # fmt: skip
    """Grow the tree of column ``j`` on columns ``0 .. j-1``; nodes from index ``base`` on.

    Predictor ``f`` is split by thresholds, or one-vs-rest (a code against the others) where
    ``onehot[f]``. Row ``r`` counts ``wt[r]`` times (see ``_grow_forest``); a regression
    target is centred by subtracting ``centre``.

    Returns the number of nodes and the rows grouped by leaf (each leaf's range ``[lo, hi)``),
    within a leaf by column 0's value, then by row.
    """
    n = X.shape[0]
    k = j
    if k == 0:
        feature[base] = -1
        left[base] = -1
        right[base] = -1
        threshold[base] = np.nan
        upper[base] = np.nan
        lo[base] = 0
        hi[base] = n
        return 1, np.arange(n)
    yc = np.zeros(n, dtype=np.int32)
    yv = np.zeros(n, dtype=np.float64)
    if classify:
        for i in range(n):
            yc[i] = np.int64(X[i, j])
    else:
        for i in range(n):
            yv[i] = X[i, j] - centre
    # Large nodes search the predictors with few distinct values through histograms and keep
    # only their rows (in row order); the others keep sorted row lists at every node. A node
    # below the size where histograms pay off gets every sorted list (a counting sort) and its
    # whole subtree grows from sorted lists.
    binned = np.zeros(k, dtype=np.bool_)
    hoff = np.zeros(k, dtype=np.int64)
    n_bins = 0
    if classify or _integral_sums(yv, wt):
        for f in range(k):
            if uoff[f + 1] - uoff[f] <= _MAX_BINS:
                binned[f] = True
                hoff[f] = n_bins
                n_bins += uoff[f + 1] - uoff[f]
    blist = np.flatnonzero(binned)
    width = ncls + 1 if classify else 2
    hist_from = _HIST_COST * n_bins * width
    use_hist = n_bins > 0 and n * k >= hist_from
    # Each row's first histogram cell in each binned predictor, computed once per tree: the
    # histogram updates read this compact table (it stays in cache) instead of the wider ranks.
    # (int32 suffices: a histogram of 2**31 cells would need 16 GiB per node.)
    boff = np.empty((n if use_hist else 0, len(blist)), dtype=np.int32)
    for q in range(len(blist)):
        f = blist[q]
        for i in range(boff.shape[0]):
            boff[i, q] = (hoff[f] + rank[f, i]) * width
    # Each pending histogram node owns a slot of ``pool``; a split builds the smaller child's
    # histograms and turns the parent's into the larger child's by subtracting, so each level
    # reads only the rows of the smaller children. Free slots are kept zeroed.
    pool = np.zeros((8 if use_hist else 0, n_bins * width), dtype=np.float64)
    free = np.arange(pool.shape[0])
    n_free = pool.shape[0]
    # Predictor f's sorted list: its rows ``ords[f]`` and their dense ranks ``rks[f]`` (equal
    # ranks are equal values; the value is ``uniq[uoff[f] + rank]``). Ranks instead of values and
    # int32 instead of int64 (every table has fewer than 2**31 rows) halve the bytes that the
    # scans and partitions move: 8% faster at 31,655 rows, the same trees.
    ords = np.empty((k, n), dtype=np.int32)
    rks = np.empty((k, n), dtype=np.int32)
    for f in range(k):
        if use_hist and binned[f]:
            continue
        for i in range(n):
            r = orders[f, i]
            ords[f, i] = r
            rks[f, i] = rank[f, r]
    rows = np.arange(n)
    count = np.empty(_MAX_BINS + 1, dtype=np.int64)
    # Scratch for the split searches, allocated once per tree: an allocation at every node was
    # a measurable share of a small node's search.
    tot = np.empty(max(ncls, 1), dtype=np.int64)
    cl = np.empty_like(tot)
    cr = np.empty_like(tot)
    fl = np.empty(len(tot), dtype=np.float64)
    fr = np.empty(len(tot), dtype=np.float64)
    goes_left = np.zeros(n, dtype=np.bool_)
    tmp_i = np.empty(n, dtype=np.int64)
    tmp_o = np.empty(n, dtype=np.int32)
    tmp_k = np.empty(n, dtype=np.int32)
    total = 0
    for i in range(n):
        total += _weight(wt, i)
    cap = _node_bound(n, total, min_leaf)  # a bound on the node count, hence on the stack depth
    st_s = np.empty(cap, dtype=np.int64)
    st_e = np.empty(cap, dtype=np.int64)
    st_w = np.empty(cap, dtype=np.int64)  # the node's rows counting weights
    st_node = np.empty(cap, dtype=np.int64)
    st_slot = np.empty(cap, dtype=np.int64)
    st_s[0] = 0
    st_e[0] = n
    st_w[0] = total
    st_node[0] = base
    st_slot[0] = -1
    if use_hist:
        n_free -= 1
        st_slot[0] = free[n_free]
        _add_rows(pool[st_slot[0]], rows, 0, n, boff, classify, yc, yv, wt, 1)
    top = 1
    count_nodes = 1
    while top > 0:
        top -= 1
        s = st_s[top]
        e = st_e[top]
        m = st_w[top]
        node = st_node[top]
        slot = st_slot[top]
        in_hist = slot >= 0
        bf = -1
        ra = -1
        rb = -1
        lv = -1
        rv = -1
        n_l = 0
        if m >= 2 * min_leaf:
            if in_hist:
                bf, lv, rv, n_l, ra, rb = _hist_split(
                    rows, rank, uoff, uniq, ords, rks, yc, yv, wt, classify, ncls, k, s, e, min_leaf, binned,
                    blist, hoff, pool[slot], onehot, tot, cl, cr, fl, fr,
                )  # fmt: skip
            else:
                bf, ra, rb, _ = _best_split(
                    ords, rks, uniq, uoff, yc, yv, wt, classify, ncls, k, s, e, min_leaf, onehot, tot, cl, cr
                )  # fmt: skip
        lo[node] = s
        hi[node] = e
        if bf < 0:
            if in_hist:
                n_free = _release(pool, slot, free, n_free, rows, s, e, boff, classify, yc, yv, wt)
                if binned[0]:  # the leaf's values are stored in column 0's order
                    _sort_by_rank(rank, rows, 0, uoff[1] - uoff[0], s, e, ords, rks, count)
            feature[node] = -1
            left[node] = -1
            right[node] = -1
            threshold[node] = np.nan
            upper[node] = np.nan
            continue
        feature[node] = bf
        # Rows with threshold < x <= upper go right: x > threshold for a threshold split, and
        # x == code (whole-number codes) for a one-vs-rest split.
        upper[node] = np.inf
        # ``mid`` is where the left child's rows end; ``n_l`` counts them with their weights.
        if ra < 0 and onehot[bf]:
            code = uniq[uoff[bf] + lv]
            threshold[node] = code - 0.5
            upper[node] = code + 0.5
            mid = s + n_l
            for i in range(s, e):
                r = rows[i]
                goes_left[r] = rank[bf, r] != lv
            if wt is not None:  # ``n_l`` counts weights: count the rows
                mid = s + np.sum(goes_left[rows[s:e]])
        elif ra < 0:
            threshold[node] = _midpoint(uniq[uoff[bf] + lv], uniq[uoff[bf] + rv])
            mid = s + n_l
            for i in range(s, e):
                r = rows[i]
                goes_left[r] = rank[bf, r] <= lv
            if wt is not None:
                mid = s + np.sum(goes_left[rows[s:e]])
        else:
            value = uniq[uoff[bf] + rks[bf, ra]]
            if onehot[bf]:
                threshold[node] = value - 0.5
                upper[node] = value + 0.5
            else:
                threshold[node] = _midpoint(uniq[uoff[bf] + rks[bf, ra - 1]], value)
            mid = e - (rb - ra)
            for i in range(s, e):
                goes_left[ords[bf, i]] = i < ra or i >= rb
            n_l = mid - s
            if wt is not None:
                n_l = m
                for i in range(ra, rb):
                    n_l -= wt[ords[bf, i]]
        left_slot = -1
        right_slot = -1
        if in_hist:
            _partition_rows(rows, s, e, goes_left, tmp_i)
            for f in range(k):
                if (f != bf or onehot[f]) and not binned[f]:
                    _partition(ords, rks, f, s, e, goes_left, tmp_o, tmp_k)
            small_left = mid - s <= e - mid
            ss, se = (s, mid) if small_left else (mid, e)
            if (e - s - (se - ss)) * k < hist_from:  # neither child uses histograms
                n_free = _release(pool, slot, free, n_free, rows, s, e, boff, classify, yc, yv, wt)
            else:
                small_slot = -1
                if (se - ss) * k >= hist_from:
                    if n_free == 0:
                        pool, free, n_free = _grow_pool(pool)
                    n_free -= 1
                    small_slot = free[n_free]
                    _move_rows(pool[slot], pool[small_slot], rows, ss, se, boff, classify, yc, yv, wt)
                else:
                    _add_rows(pool[slot], rows, ss, se, boff, classify, yc, yv, wt, -1)
                left_slot, right_slot = (small_slot, slot) if small_left else (slot, small_slot)
            for cs, ce, cw, child_slot in ((s, mid, n_l, left_slot), (mid, e, m - n_l, right_slot)):
                if child_slot >= 0:
                    continue
                splittable = cw >= 2 * min_leaf
                for f in blist:
                    if splittable or f == 0:
                        _sort_by_rank(rank, rows, f, uoff[f + 1] - uoff[f], cs, ce, ords, rks, count)
        else:
            for f in range(k):
                if f != bf or onehot[f]:  # a threshold split leaves its own list sorted
                    _partition(ords, rks, f, s, e, goes_left, tmp_o, tmp_k)
        left_node = base + count_nodes
        right_node = base + count_nodes + 1
        count_nodes += 2
        left[node] = left_node
        right[node] = right_node
        # Right first, so the left subtree is grown (and numbered) first.
        st_s[top] = mid
        st_e[top] = e
        st_w[top] = m - n_l
        st_node[top] = right_node
        st_slot[top] = right_slot
        st_s[top + 1] = s
        st_e[top + 1] = mid
        st_w[top + 1] = n_l
        st_node[top + 1] = left_node
        st_slot[top + 1] = left_slot
        top += 2
    return count_nodes, ords[0].astype(np.int64)


@njit(cache=True)
def _node_bound(n, total, min_leaf):
    # A bound on a tree's nodes: every leaf holds at least one row and, counting weights,
    # ``min_leaf`` rows (a root leaf aside).
    return 2 * max(min(n, total // min_leaf), 1) + 1


@njit(cache=True)
def _centres(X, categorical):
    """What each column's regression target is centred by (see ``_column_centre``)."""
    centres = np.zeros(X.shape[1], dtype=np.float64)
    for j in range(X.shape[1]):
        if not categorical[j]:
            centres[j] = _column_centre(X[:, j], -1, 0.0)
    return centres


@njit(cache=True)
def _column_centre(column, p, new):
    """The centre of ``column`` with entry ``p`` set to ``new`` (``p`` -1: as it is): its mean,
    rounded to a multiple of a power of two ``q`` between 1/128 and 1/64 of its range (1 below
    a range of 128).

    Shifting by a whole number keeps integer targets exact while keeping the squared sums of
    large-valued columns (e.g. incomes) small enough to compare splits precisely. The coarse
    grid keeps the centre when one row changes (the mean moves by at most range / n, about a
    128th of ``q`` at 31,655 rows), so a one-row refit of the tree keeps its walk instead of
    regrowing it (``refit_forest``). The sum runs in row order, as in a fit.
    """
    n = len(column)
    if n == 0:
        return 0.0
    total = 0.0
    low = np.inf
    high = -np.inf
    for i in range(n):
        v = new if i == p else column[i]
        total += v
        low = min(low, v)
        high = max(high, v)
    q = 1.0
    while q * 128.0 <= high - low:
        q *= 2.0
    return np.round(total / n / q) * q


@njit(cache=True)
def _column_swapped(column, categorical, p, w):
    """A column's class count (categorical), centre and whether its centred values are whole
    numbers with an exact sum (``_integral_sums``), with entry ``p`` set to ``w``: what a fit
    computes, read in place."""
    n = len(column)
    if categorical:
        top = w
        for i in range(n):
            if i != p:
                top = max(top, column[i])
        return np.int64(top) + 1, 0.0, False
    c = _column_centre(column, p, w)
    total = 0.0
    for i in range(n):
        v = (w if i == p else column[i]) - c
        if v != np.floor(v):
            return 0, c, False
        total += abs(v)
    return 0, c, total < 2.0**53


@njit(cache=True)
def _column_stats(cols, categorical, centres):
    """What ``_swapped_columns`` updates instead of reading a column again, per column: the
    count of its largest code (categorical); its lowest and highest value and their counts,
    its sum in row order, the sum of its absolute values, its count of values that are not
    whole numbers and the sum of its absolute centred values."""
    d, n = cols.shape
    out = np.zeros((d, 8), dtype=np.float64)
    for j in range(d):
        column = cols[j]
        if n == 0:
            continue
        low = column.min()
        high = column.max()
        out[j, 0] = low
        out[j, 1] = high
        for i in range(n):
            v = column[i]
            out[j, 2] += v == low
            out[j, 3] += v == high
            out[j, 4] += v
            out[j, 5] += abs(v)
            out[j, 6] += v != np.floor(v)
            out[j, 7] += abs(v - centres[j])
    return out


@njit(cache=True)
def _swapped_columns(cols, categorical, p, new, ncls, centres, stats):
    """``_column_swapped`` for every column of ``cols`` (column by column) with row ``p`` set to
    ``new``, from the old array's class counts, centres and ``_column_stats``: a column is read
    again only where the row held its only extreme value or its mean lies too near a rounding
    boundary for the running sum to decide it."""
    d, n = cols.shape
    ncls2 = np.zeros(d, dtype=np.int64)
    centres2 = np.zeros(d, dtype=np.float64)
    integral2 = np.zeros(d, dtype=np.bool_)
    eps = np.finfo(np.float64).eps
    for j in range(d):
        o = cols[j, p]
        w = new[j]
        low, high, n_low, n_high, total, absolute, fractional, centred = stats[j]
        exact = n == 0
        if categorical[j]:
            top = ncls[j] - 1
            if w > top:
                ncls2[j] = np.int64(w) + 1
            elif o == top and n_high == 1 and w < top:
                exact = True
            else:
                ncls2[j] = ncls[j]
        else:
            if (o == low and n_low == 1 and w > low) or (o == high and n_high == 1 and w < high):
                exact = True
            else:
                q = 1.0
                while q * 128.0 <= max(high, w) - min(low, w):
                    q *= 2.0
                x = (total - o + w) / n / q
                # A sum in row order is within n * eps * sum(|v|) of the exact one.
                slack = 4.0 * (n + 2) * eps * (absolute + abs(w)) / n / q + 1e-12 * abs(x)
                fraction = x - np.floor(x)
                if abs(fraction - 0.5) <= slack + 1e-9:
                    exact = True
                else:
                    c = (np.floor(x) + (1.0 if fraction > 0.5 else 0.0)) * q
                    centres2[j] = c
                    whole = fractional - (o != np.floor(o)) + (w != np.floor(w)) == 0
                    if whole and c == centres[j] and centred < 2.0**52:
                        integral2[j] = centred - abs(o - c) + abs(w - c) < 2.0**53
                    elif whole:
                        exact = True  # whole numbers, but their centred sum is not tracked
        if exact:
            ncls2[j], centres2[j], integral2[j] = _column_swapped(cols[j], categorical[j], p, w)
    return ncls2, centres2, integral2


@njit(cache=True)
def _grow_forest(X, orders, rank, uoff, uniq, classify, ncls, min_leaf, onehot, wt, centres):
    """Every tree of ``X`` (rows counted ``wt`` times); the node arrays, roots and each tree's
    rows grouped by leaf (``perms``, shape (d, n))."""
    n, d = X.shape
    total = 0
    for i in range(n):
        total += _weight(wt, i)
    per_tree = _node_bound(n, total, min_leaf)
    size = d * per_tree
    feature = np.empty(size, dtype=np.int64)
    threshold = np.empty(size, dtype=np.float64)
    upper = np.empty(size, dtype=np.float64)
    left = np.empty(size, dtype=np.int64)
    right = np.empty(size, dtype=np.int64)
    lo = np.empty(size, dtype=np.int64)
    hi = np.empty(size, dtype=np.int64)
    roots = np.empty(d, dtype=np.int64)
    perms = np.empty((d, n), dtype=np.int64)
    base = np.int64(0)
    for j in range(d):
        roots[j] = base
        count, perm = _grow_tree(
            X, orders, rank, uoff, uniq, j, classify[j], ncls[j], min_leaf, onehot, base, feature, threshold,
            upper, left, right, lo, hi, wt, centres[j],
        )  # fmt: skip
        perms[j] = perm
        base += count
    return (
        feature[:base].copy(),
        threshold[:base].copy(),
        upper[:base].copy(),
        left[:base].copy(),
        right[:base].copy(),
        lo[:base].copy(),
        hi[:base].copy(),
        roots,
        perms,
    )


@njit(cache=True)
def _leaf_values(X, perms):
    """Column ``j``'s training values in tree ``j``'s leaf order, for every ``j``."""
    n, d = X.shape
    values = np.empty((d, n), dtype=np.float64)
    for j in range(d):
        for i in range(n):
            values[j, i] = X[perms[j, i], j]
    return values


@njit(cache=True)
def _dedup(X):
    """The distinct rows of ``X``: ``(first, inverse, counts)``.

    ``first`` holds the first row of each distinct row, in order of appearance; row ``r`` of
    ``X`` equals row ``first[inverse[r]]``, which appears ``counts[inverse[r]]`` times.
    """
    n, d = X.shape
    size = 2
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    bits = X.view(np.uint64)
    n_u = 0
    for r in range(n):
        h = np.uint64(0xCBF29CE484222325)
        for f in range(d):
            h = (h ^ bits[r, f]) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(29)
        slot = h & mask
        while True:
            u = table[slot]
            if u < 0:
                table[slot] = n_u
                first[n_u] = r
                counts[n_u] = 1
                inverse[r] = n_u
                n_u += 1
                break
            q = first[u]
            same = True
            for f in range(d):
                if X[q, f] != X[r, f]:
                    same = False
                    break
            if same:
                counts[u] += 1
                inverse[r] = u
                break
            slot = (slot + np.uint64(1)) & mask
    return first[:n_u].copy(), inverse, counts[:n_u].copy()


@njit(cache=True)
def _expand(X, inverse, wt, rank0, n_rank0, roots, left, lo, hi, perms):
    """From a forest grown on distinct rows (weights ``wt``) to the forest of ``X`` itself.

    Node ranges ``lo``/``hi`` become ranges of ``X``'s rows (in place) and each leaf gets the
    rows of ``X`` whose distinct row it holds, ordered as the unweighted growth orders them: by
    column 0's value, then by row (tree 0, with no predictor, keeps row order). Returns the
    leaf values, shape (d, len(X)).
    """
    n, d = X.shape
    n_u = len(wt)
    # Rows of X by column 0's value, then row: a counting sort on the distinct rows' ranks.
    start = np.zeros(n_rank0 + 1, dtype=np.int64)
    for r in range(n):
        start[rank0[inverse[r]] + 1] += 1
    for b in range(n_rank0):
        start[b + 1] += start[b]
    by_col0 = np.empty(n, dtype=np.int64)
    for r in range(n):
        b = rank0[inverse[r]]
        by_col0[start[b]] = r
        start[b] += 1
    in_order = np.arange(n)
    values = np.empty((d, n), dtype=np.float64)
    cum = np.empty(n_u + 1, dtype=np.int64)
    leaf_of = np.empty(n_u, dtype=np.int64)
    ptr = np.empty(len(left), dtype=np.int64)
    for j in range(d):
        cum[0] = 0
        for q in range(n_u):
            cum[q + 1] = cum[q] + wt[perms[j, q]]
        end = roots[j + 1] if j + 1 < d else len(left)
        for node in range(roots[j], end):
            if left[node] < 0:
                for q in range(lo[node], hi[node]):
                    leaf_of[perms[j, q]] = node
                ptr[node] = cum[lo[node]]
            lo[node] = cum[lo[node]]
            hi[node] = cum[hi[node]]
        order = in_order if j == 0 else by_col0
        for r in order:
            node = leaf_of[inverse[r]]
            values[j, ptr[node]] = X[r, j]
            ptr[node] += 1
    return values


@njit(inline="always")
def _step(nodes, out, i, at):
    """The node a walk of row ``i`` at node ``at`` goes to next (``at`` itself at a leaf)."""
    # Unsigned indices (all are >= 0 here): numba wraps every signed index for Python's
    # negative indexing, which cost a fifth of the sampler (30 against 24 ms at 31,655 rows).
    node = nodes[np.uint64(at)]
    x = out[np.uint64(i), np.uint64(node.feature)]
    return node.left + (np.int64(x > node.threshold) & np.int64(x <= node.upper))


@njit(inline="always")
def _draw_leaf(nodes, leaf_values, u, out, i, j, at):
    """Row ``i``'s value of column ``j``: the training value of leaf ``at`` that ``u`` picks."""
    node = nodes[np.uint64(at)]
    ui, uj = np.uint64(i), np.uint64(j)
    pos = min(np.int64(u[ui, uj] * node.size), node.size - 1)
    out[ui, uj] = leaf_values[uj, np.uint64(node.lo + pos)]


@njit(inline="always")
def _lane(nodes, leaf_values, u, out, j, root, m, i, at, nxt, busy):
    """One step of the row walking down tree ``j`` in a lane: row ``i`` at node ``at`` (``i``
    -1: the lane is idle). A row at its leaf takes its value and hands the lane to row ``nxt``.
    Returns the lane's row and node, the next row to start and the number of busy lanes."""
    if i < 0:
        return i, at, nxt, busy
    step = _step(nodes, out, i, at)
    if step != at:
        return i, step, nxt, busy
    _draw_leaf(nodes, leaf_values, u, out, i, j, at)
    if nxt < m:
        return nxt, root, nxt + 1, busy
    return -1, root, nxt, busy - 1


@njit(cache=True)
def _sample(nodes, roots, leaf_values, u):
    m, d = u.shape
    out = np.empty((m, d), dtype=np.float64)
    # One tree at a time, so its nodes stay in cache, and eight rows walked at once, each in
    # scalars of its own: their steps are independent, so the processor overlaps their loads.
    # A row that reaches its leaf hands its lane to the next row at once, so no lane waits for
    # the deepest of a group. A step has no branch (the right child is always left + 1, the
    # side is computed with ``&``) and a leaf steps to itself.
    # (Measured on Adult at 31,655 rows, in one process: 31 against 37 ms for four rows walked
    # in lockstep until the deepest reached its leaf, 24 ms since ``_step`` indexes unsigned;
    # ten to sixteen lanes were no faster than eight. Earlier: four positions in a small array
    # instead of scalars were 1.6 times slower, and packing each node's fields in one record was
    # 15-20% faster than reading four arrays. Tried since: two levels a step, both children
    # loaded at once, 41 ms; rows partitioned node by node instead of walked, 28 ms.)
    for j in range(d):
        root = roots[j]
        i0, i1, i2, i3 = (
            (0 if m > 0 else -1),
            (1 if m > 1 else -1),
            (2 if m > 2 else -1),
            (3 if m > 3 else -1),
        )
        i4, i5, i6, i7 = (
            (4 if m > 4 else -1),
            (5 if m > 5 else -1),
            (6 if m > 6 else -1),
            (7 if m > 7 else -1),
        )
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = root
        nxt = busy = min(8, m)
        while busy > 0:
            i0, a0, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i0, a0, nxt, busy)
            i1, a1, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i1, a1, nxt, busy)
            i2, a2, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i2, a2, nxt, busy)
            i3, a3, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i3, a3, nxt, busy)
            i4, a4, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i4, a4, nxt, busy)
            i5, a5, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i5, a5, nxt, busy)
            i6, a6, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i6, a6, nxt, busy)
            i7, a7, nxt, busy = _lane(nodes, leaf_values, u, out, j, root, m, i7, a7, nxt, busy)
    return out


@njit(cache=True)
def _apply(feature, threshold, upper, left, right, root, P):
    out = np.empty(P.shape[0], dtype=np.int64)
    for i in range(P.shape[0]):
        node = root
        while left[node] >= 0:
            x = P[i, feature[node]]
            node = right[node] if threshold[node] < x <= upper[node] else left[node]
        out[i] = node
    return out


def check_cells(X: np.ndarray, categorical: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which columns of ``X`` hold only finite values, and which categorical ones hold a value
    that is not a code ``0 .. sizes[j] - 1`` (a whole number in range), in one pass.

    Returns
    -------
    finite, not_codes : ndarray of bool, shape (d,)
        ``not_codes[j]`` is False for a continuous column and for a column with a non-finite
        value (report that first).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    categorical = np.ascontiguousarray(categorical, dtype=np.bool_)
    return _check_cells(X, categorical, np.asarray(sizes, dtype=np.float64))


@njit(cache=True)
def _check_cells(X, categorical, sizes):
    n, d = X.shape
    finite = np.ones(d, dtype=np.bool_)
    not_codes = np.zeros(d, dtype=np.bool_)
    for i in range(n):
        for j in range(d):
            v = X[i, j]
            if not np.isfinite(v):
                finite[j] = False
            elif categorical[j] and (v < 0 or v >= sizes[j] or v != np.floor(v)):
                not_codes[j] = True
    return finite, not_codes & finite


def _classes(X: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    return np.array(
        [int(X[:, j].max()) + 1 if categorical[j] and len(X) else 0 for j in range(X.shape[1])],
        dtype=np.int64,
    )


def grow_forest(
    X: np.ndarray,
    categorical: np.ndarray,
    min_samples_leaf: int,
    onehot: np.ndarray | None = None,
    *,
    distinct: bool | None = None,
) -> Forest:
    """Grow tree ``j`` of column ``j`` on columns ``0 .. j-1`` for every column of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        Training rows, columns already in visit order; categorical columns hold codes ``>= 0``.
    categorical : ndarray of bool, shape (d,)
        True where column ``j`` is categorical (classification tree), else regression.
    min_samples_leaf : int
        Minimum number of training rows in a leaf (>= 1).
    onehot : ndarray of bool, shape (d,), optional
        True where predictor ``j`` (a categorical column of whole-number codes) is split one
        code against the others, as one-hot indicators with code 0 as the dropped reference;
        elsewhere, and by default everywhere, predictors are split by thresholds.
    distinct : bool, optional
        Grow the trees on the distinct rows of ``X``, each counted as often as it occurs (see
        ``_DISTINCT_SHARE``). The forest is the same either way, array for array; ``None`` (the
        default) does so when ``X`` repeats enough rows for it to pay. It is ignored where it
        could change a split: a regression column whose centred values are not whole numbers
        summing below ``2**53``.

    Returns
    -------
    Forest
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    categorical = np.asarray(categorical, dtype=np.bool_)
    onehot = _onehot(onehot, X.shape[1])
    ncls = _classes(X, categorical)
    centres = _centres(X, categorical)
    if distinct is not False and len(X):
        first, inverse, counts = _dedup(X)
        wanted = distinct or len(first) <= _DISTINCT_SHARE * len(X)
        if wanted and _exact_with_weights(X[first], categorical, centres, counts):
            U = X[first]
            orders, rank, uniq, uoff = _presort(U)
            *nodes, roots, perms = _grow_forest(
                U, orders, rank, uoff, uniq, categorical, ncls, int(min_samples_leaf), onehot, counts, centres
            )
            feature, threshold, upper, left, right, lo, hi = nodes
            values = _expand(X, inverse, counts, rank[0], uoff[1] - uoff[0], roots, left, lo, hi, perms)
            return Forest(feature, threshold, upper, left, right, lo, hi, roots, values)
    orders, rank, uniq, uoff = _presort(X)
    *nodes, roots, perms = _grow_forest(
        X, orders, rank, uoff, uniq, categorical, ncls, int(min_samples_leaf), onehot, None, centres
    )  # fmt: skip
    return Forest(*nodes, roots, _leaf_values(X, perms))


def _exact_with_weights(
    U: np.ndarray, categorical: np.ndarray, centres: np.ndarray, counts: np.ndarray
) -> bool:
    """Whether weighted sums of every regression target (after the first column) are exact."""
    for j in range(1, U.shape[1]):
        if not categorical[j] and not _integral_sums(U[:, j] - centres[j], counts):
            return False
    return True


def _onehot(onehot: np.ndarray | None, d: int) -> np.ndarray:
    if onehot is None:
        return np.zeros(d, dtype=np.bool_)
    return np.ascontiguousarray(onehot, dtype=np.bool_)


def grow_tree(
    P: np.ndarray,
    y: np.ndarray,
    categorical: bool,
    min_samples_leaf: int,
    onehot: np.ndarray | None = None,
) -> Forest:
    """Grow the single tree of ``y`` on the predictors ``P`` (its root is ``roots[0]``).

    ``onehot`` marks the predictors split one code against the others (see ``grow_forest``).
    """
    X = np.ascontiguousarray(np.column_stack([P, y]), dtype=np.float64)
    j = X.shape[1] - 1
    flags = np.zeros(j + 1, dtype=np.bool_)
    flags[:j] = _onehot(onehot, j)
    size = int(_node_bound(len(X), len(X), int(min_samples_leaf)))
    feature = np.empty(size, dtype=np.int64)
    threshold = np.empty(size, dtype=np.float64)
    upper = np.empty(size, dtype=np.float64)
    left = np.empty(size, dtype=np.int64)
    right = np.empty(size, dtype=np.int64)
    lo = np.empty(size, dtype=np.int64)
    hi = np.empty(size, dtype=np.int64)
    ncls = int(X[:, j].max()) + 1 if categorical else 0
    orders, rank, uniq, uoff = _presort(X)
    count, perm = _grow_tree(
        X, orders, rank, uoff, uniq, j, bool(categorical), ncls, int(min_samples_leaf), flags, np.int64(0),
        feature, threshold, upper, left, right, lo, hi, None, _centres(X[:, j:], np.zeros(1, np.bool_))[0],
    )  # fmt: skip
    return Forest(
        feature[:count], threshold[:count], upper[:count], left[:count], right[:count], lo[:count],
        hi[:count], np.zeros(1, dtype=np.int64), X[perm, j][None, :],
    )  # fmt: skip


def best_split(
    P: np.ndarray, y: np.ndarray, categorical: bool, min_samples_leaf: int
) -> tuple[int, float, float] | None:
    """The root split the trees would choose for ``y`` on ``P``.

    Returns
    -------
    (feature, threshold, proxy) or None
        ``None`` when the rows cannot be split (pure target, or no valid threshold).
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, k = P.shape
    orders, rank, uniq, uoff = _presort(P)
    ords = orders.astype(np.int32)
    rks = np.take_along_axis(rank, orders, axis=1).astype(np.int32)
    if categorical:
        yc, yv, ncls = y.astype(np.int64), np.zeros(n), int(y.max()) + 1
    else:
        yc, yv, ncls = np.zeros(n, dtype=np.int64), y - _centres(y[:, None], np.zeros(1, np.bool_))[0], 0
    if n < 2 * min_samples_leaf or k == 0:
        return None
    thresholds_only = np.zeros(k, dtype=np.bool_)
    tot, cl, cr = (np.empty(max(ncls, 1), dtype=np.int64) for _ in range(3))
    f, a, _, proxy = _best_split(
        ords, rks, uniq, uoff, yc, yv, None, bool(categorical), ncls, k, 0, n, int(min_samples_leaf),
        thresholds_only, tot, cl, cr,
    )  # fmt: skip
    if f < 0:
        return None
    return int(f), float(_midpoint(uniq[uoff[f] + rks[f, a - 1]], uniq[uoff[f] + rks[f, a]])), float(proxy)


def apply_tree(forest: Forest, j: int, P: np.ndarray) -> np.ndarray:
    """The leaf (global node index) of tree ``j`` that each row of ``P`` lands in."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    f = forest
    return _apply(f.feature, f.threshold, f.upper, f.left, f.right, int(f.roots[j]), P)


def sample_forest(forest: Forest, u: np.ndarray) -> np.ndarray:
    """Synthesise one row per row of ``u`` (uniforms in [0, 1), shape (m, d)), in visit order.

    Column ``j`` of row ``i`` drops the row's columns ``0 .. j-1`` down tree ``j`` and takes the
    training value at position ``floor(u[i, j] * size)`` of the leaf it lands in.
    """
    f = forest
    u = np.ascontiguousarray(u, dtype=np.float64)
    return _sample(f.nodes, f.roots, f.leaf_values, u)


# --------------------------------------------------------------------------- one-row refits
#
# ``refit_forest`` gives the forest of ``X`` with one row replaced, array for array the one
# ``grow_forest`` grows on it, from the forest of ``X``. A node whose rows hold neither the
# row's old nor its new version has the same rows, so the same split and subtree: it is copied.
# Along the paths of the two versions the split is searched again (histograms of the old root,
# updated by the row, then split as ``_grow_tree`` splits them); where it is the same the walk
# goes on, where it changes (or the node is small) the subtree is grown afresh from its rows.
# Node numbers, ranges and leaf values are laid out as ``_grow_tree`` lays them out.

# Nodes of at most this many rows on a path are grown afresh instead of searched and walked:
# below it a fresh subtree costs less than a search over every histogram bin.
_REFIT_SMALL = 96

# Below this many training rows ``SynthpopGenerator.refit_swap`` grows the forest afresh: the
# refit's fixed costs (a histogram search over every bin of a path node) then exceed a fresh
# fit's (Adult, ``benchmarks/refit.py``, two draws of D: refit / fit 1.07 and 1.23 at 1,000
# rows, the paper's |D|; 0.88 at 1,250; 0.71 and 0.78 at 2,000).
_REFIT_MIN_ROWS = 1200

# Internal nodes of more than this many rows keep their histograms in the refit state (about
# 21 MB at Adult's 31,655 rows): a path node's histograms are then its old ones moved by the
# changed row instead of its rows' (or its sibling's) counted again.
_REFIT_CACHE = 1024

# The cached nodes also keep their sorted lists of the predictors not binned, up to this many
# bytes per tree (17 MB in all for Adult's fnlwgt at 31,655 rows); beyond it a searched node
# sorts its rows.
_REFIT_LISTS_BYTES = 64 * 2**20

_EVAL = 0  # a node holding the row (old or new version): search its split again
_COPY = 1  # a node holding neither: its subtree is the old one


@njit(cache=True)
def _leaf_perms(X, order0, feature, threshold, upper, left, lo, roots):
    """Each tree's training rows grouped by leaf, in leaf-value order (``perms``, shape (d, n)).

    Rows are dropped down each tree in column 0's order (then by row), which is the order of
    the rows within a leaf.
    """
    n, d = X.shape
    perms = np.empty((d, n), dtype=np.int64)
    for i in range(n):
        perms[0, i] = i
    ptr = lo.copy()
    for j in range(1, d):
        for i in range(n):
            r = order0[i]
            node = roots[j]
            while left[node] >= 0:
                x = X[r, feature[node]]
                node = left[node] + np.int64(threshold[node] < x <= upper[node])
            perms[j, ptr[node]] = r
            ptr[node] += 1
    return perms


@njit(cache=True)
def _subtree_last(left):
    """The largest node index in each node's subtree (children have larger indices)."""
    last = np.arange(len(left))
    for q in range(len(left) - 1, -1, -1):
        if left[q] >= 0:
            last[q] = max(last[left[q]], last[left[q] + 1])
    return last


@njit(cache=True)
def _targets(column, classify, centre):
    """A tree's targets from its column: the class codes (classification) or the values less
    ``centre`` (regression); the other array is zeros."""
    n = len(column)
    yc = np.zeros(n, dtype=np.int32)
    yv = np.zeros(n, dtype=np.float64)
    if classify:
        for i in range(n):
            yc[i] = np.int64(column[i])
    else:
        for i in range(n):
            yv[i] = column[i] - centre
    return yc, yv


@njit(cache=True)
def _swap_ranks(rank, uniq, uoff, p, new):
    """Dense-rank tables of the array with row ``p`` set to ``new``.

    A new value is inserted among the distinct values (ranks above it shift by one); a value
    that loses its last row is kept, as a bin no row holds (every search skips empty bins, and
    thresholds join values the node holds). Returns ``rank2, uniq2, uoff2, ins`` with ``ins[f]``
    the rank of an inserted value of column ``f`` (``2**62`` if none).
    """
    d, n = rank.shape
    ins = np.full(d, 2**62, dtype=np.int64)
    at = np.empty(d, dtype=np.int64)
    uoff2 = np.zeros(d + 1, dtype=np.int64)
    for f in range(d):
        u = uniq[uoff[f] : uoff[f + 1]]
        a = np.searchsorted(u, new[f])
        at[f] = a
        if a == len(u) or u[a] != new[f]:
            ins[f] = a
        uoff2[f + 1] = uoff2[f] + len(u) + (1 if ins[f] < 2**62 else 0)
    uniq2 = np.empty(uoff2[d], dtype=np.float64)
    rank2 = rank.copy()
    for f in range(d):
        u = uniq[uoff[f] : uoff[f + 1]]
        w = uoff2[f]
        for v in range(len(u)):
            if v == ins[f]:
                uniq2[w] = new[f]
                w += 1
            uniq2[w] = u[v]
            w += 1
        if ins[f] == len(u):
            uniq2[w] = new[f]
        if ins[f] < 2**62:
            a = ins[f]
            for r in range(n):
                if rank2[f, r] >= a:
                    rank2[f, r] += 1
        rank2[f, p] = at[f]
    return rank2, uniq2, uoff2, ins


@njit(cache=True)
def _swap_orders(orders, rank2, p, need):
    """The sorted row lists (by value, then row) and their ranks of the features ``need``, after
    row ``p`` changed: the old order with ``p`` moved to its new place."""
    d, n = orders.shape
    ords = np.empty((d, n), dtype=np.int32)
    rks = np.empty((d, n), dtype=np.int32)
    for f in range(d):
        if not need[f]:
            continue
        kp = rank2[f, p]
        w = 0
        placed = False
        for i in range(n):
            r = orders[f, i]
            if r == p:
                continue
            if not placed and (rank2[f, r] > kp or (rank2[f, r] == kp and r > p)):
                ords[f, w] = p
                rks[f, w] = kp
                w += 1
                placed = True
            ords[f, w] = r
            rks[f, w] = rank2[f, r]
            w += 1
        if not placed:
            ords[f, w] = p
            rks[f, w] = kp
    return ords, rks


@njit(cache=True)
def _same_float(a, b):
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@njit(cache=True)
def _pure_rows(rows, s, e, classify, yc, yv):
    for i in range(s + 1, e):
        if classify:
            if yc[rows[i]] != yc[rows[s]]:
                return False
        elif yv[rows[i]] != yv[rows[s]]:
            return False
    return True


@njit(cache=True)
def _regrow(
    X2, rows, s, e, j, classify, ncls, min_leaf, onehot, centre, nid, counter, feature, threshold, upper,
    left, right, lo, hi, values,
):  # fmt: skip
    """Grow the subtree of the node with rows ``rows[s:e]`` (ascending) afresh, as node ``nid``
    with its descendants numbered from ``counter``; returns the next free number."""
    size = e - s
    sub = np.empty((size, j + 1), dtype=np.float64)
    for i in range(size):
        for c in range(j + 1):
            sub[i, c] = X2[rows[s + i], c]
    orders, rank, uniq, uoff = _presort(sub)
    cap = _node_bound(size, size, min_leaf)
    f_s = np.empty(cap, dtype=np.int64)
    t_s = np.empty(cap, dtype=np.float64)
    u_s = np.empty(cap, dtype=np.float64)
    l_s = np.empty(cap, dtype=np.int64)
    r_s = np.empty(cap, dtype=np.int64)
    lo_s = np.empty(cap, dtype=np.int64)
    hi_s = np.empty(cap, dtype=np.int64)
    count, perm = _grow_tree(
        sub, orders, rank, uoff, uniq, j, classify, ncls, min_leaf, onehot, np.int64(0), f_s, t_s, u_s,
        l_s, r_s, lo_s, hi_s, None, centre,
    )  # fmt: skip
    shift = counter - 1
    for q in range(count):
        t = nid if q == 0 else q + shift
        feature[t] = f_s[q]
        threshold[t] = t_s[q]
        upper[t] = u_s[q]
        if l_s[q] >= 0:
            left[t] = l_s[q] + shift
            right[t] = l_s[q] + 1 + shift
        else:
            left[t] = -1
            right[t] = -1
        lo[t] = lo_s[q] + s
        hi[t] = hi_s[q] + s
    for i in range(size):
        values[s + i] = X2[rows[s + perm[i]], j]
    return counter + count - 1


# A path node keeps its split, unsearched, when its best split beats every other candidate (and
# leaving the node unsplit) by more than one swap can change their proxies. A proxy is a sum of
# two children's terms ``sq / n`` (``sq`` the sum of squared class counts) or ``s**2 / n`` (``s``
# the sum of the centred targets). Adding a row of class ``a`` to a child of ``n`` rows changes
# its term by ``(2 n_a + 1 - sq / n) / (n + 1)``, within [-1, 1] since ``n_a**2 / n <= sq / n <=
# n``; adding a target ``y`` changes it by ``(n (2 m y - m**2) + y**2) / (n + 1)`` with ``m`` the
# child's mean, within ``3 Y**2`` when ``|y|, |m| <= Y``; removing a row undoes an addition. The
# differences between proxies of one node do not depend on the centring, so ``Y`` is half the
# target's range (old and new values). So ``ops`` row changes (1 or 2) move a gap between two
# proxies by at most ``2 * ops * bound``: a larger gap cannot close
# (``tests/generators/test_cart_margins.py``). The candidates a changed row can create or validate
# are counted too: every split with both sides of at least ``min_leaf - 1`` rows competes. The
# rest is checked at the refit: the split's children keep ``min_leaf`` rows, and its threshold
# (the midpoint of the two values either side) keeps its two values.

# Per node: the gap; the values either side of the threshold and their row counts; the best
# proxy of a predictor searched by sorted lists (+inf when the split is on one); whether the
# node holds at least three distinct targets (so one removed row cannot leave it pure); its
# lowest and highest centred target (a regression tree's bound is then the node's own).
_MARGIN_FIELDS = 9


@njit(cache=True)
def _scan_margin(
    cells, gval, nv, width, classify, ncls, m, tot, sq_tot, s_tot, min_leaf, one, star, th, fl, fr, res
):
    """Scan one predictor's groups of equal values (``cells``: per group, its row count then
    its class counts or target sum; ``gval``: their values, ascending) for candidate splits of a
    node of ``m`` rows. ``res`` holds the best split's proxy (when ``star`` and its threshold is
    ``th``), the best other proxy, the values either side and their counts."""
    relax = min_leaf - 1
    if one:
        for v in range(nv):
            b = v * width
            cnt = cells[b]
            n_l = m - cnt
            if cnt == 0 or gval[v] == 0.0 or cnt < relax or n_l < max(relax, 1):
                continue
            if classify:
                sq_l = 0.0
                sq_r = 0.0
                for c in range(ncls):
                    h = cells[b + 1 + c]
                    sq_r += h * h
                    g = tot[c] - h
                    sq_l += g * g
                p = sq_l / n_l + sq_r / cnt
            else:
                s_r = cells[b + 1]
                s_l = s_tot - s_r
                p = s_l * s_l / n_l + s_r * s_r / cnt
            if star and cnt >= min_leaf and n_l >= min_leaf and _same_float(gval[v] - 0.5, th):
                res[0] = p
                res[2] = gval[v]
                res[3] = gval[v]
                res[4] = m
                res[5] = m
            elif p > res[1]:
                res[1] = p
        return
    n_l = 0.0
    prev = -1
    c_prev = 0.0
    sq_l = 0.0
    sq_r = np.float64(sq_tot)
    s_l = 0.0
    if classify:
        for c in range(ncls):
            fl[c] = 0.0
            fr[c] = tot[c]
    for v in range(nv):
        b = v * width
        cnt = cells[b]
        if cnt == 0:
            continue
        if prev >= 0:
            n_r = m - n_l
            if n_l >= relax and n_r >= relax:
                if classify:
                    p = sq_l / n_l + sq_r / n_r
                else:
                    s_r = s_tot - s_l
                    p = s_l * s_l / n_l + s_r * s_r / n_r
                if (
                    star
                    and n_l >= min_leaf
                    and n_r >= min_leaf
                    and _same_float(_midpoint(gval[prev], gval[v]), th)
                ):
                    res[0] = p
                    res[2] = gval[prev]
                    res[3] = gval[v]
                    res[4] = c_prev
                    res[5] = cnt
                elif p > res[1]:
                    res[1] = p
        if classify:
            for c in range(ncls):
                h = cells[b + 1 + c]
                sq_l += h * (2.0 * fl[c] + h)
                fl[c] += h
                sq_r -= h * (2.0 * fr[c] - h)
                fr[c] -= h
        else:
            s_l += cells[b + 1]
        n_l += cnt
        prev = v
        c_prev = cnt


@njit(cache=True)
def _tree_margins(
    X, orders, rank, uniq, uoff, j, classify, ncls, centre, min_leaf, onehot, binned, hoff, feature,
    threshold, upper, left, root, last, small, margins, cache_index, cache, lists, loff,
):  # fmt: skip
    """The margins (see above) of tree ``j``'s splits of more than ``small`` rows, into
    ``margins`` (shape (``_MARGIN_FIELDS``, nodes), the fields listed above; the split's fields
    only when ``min_leaf >= 2``); and the histograms of the nodes with a row of ``cache``
    (``cache_index[node] >= 0``), with their sorted lists of the predictors not binned
    (``lists[t, loff[row]:loff[row + 1]]`` for the ``t``-th, when ``lists`` has room).
    Nodes are walked from the root, their rows partitioned as grown."""
    n = X.shape[0]
    if left[root] < 0 or n <= small:
        return
    k = j
    yc, yv = _targets(X[:, j], classify, centre)
    width = ncls + 1 if classify else 2
    n_cells = hoff[k] * width
    hist = np.zeros(n_cells, dtype=np.float64)
    gcells = np.zeros(n * width, dtype=np.float64)
    gval = np.empty(n, dtype=np.float64)
    ords = np.empty((k, n), dtype=np.int32)
    rks = np.empty((k, n), dtype=np.int32)
    for f in range(k):
        if not binned[f]:
            for i in range(n):
                r = orders[f, i]
                ords[f, i] = r
                rks[f, i] = rank[f, r]
    rows = np.arange(n)
    goes_left = np.zeros(n, dtype=np.bool_)
    tmp_i = np.empty(n, dtype=np.int64)
    tmp_o = np.empty(n, dtype=np.int32)
    tmp_k = np.empty(n, dtype=np.int32)
    tot = np.zeros(max(ncls, 1), dtype=np.int64)
    fl = np.empty(max(ncls, 1), dtype=np.float64)
    fr = np.empty(max(ncls, 1), dtype=np.float64)
    res = np.empty(6, dtype=np.float64)
    res_nb = np.empty(6, dtype=np.float64)
    cap = last[root] - root + 2
    st_q = np.empty(cap, dtype=np.int64)
    st_s = np.empty(cap, dtype=np.int64)
    st_e = np.empty(cap, dtype=np.int64)
    st_q[0] = root
    st_s[0] = 0
    st_e[0] = n
    top = 1
    while top > 0:
        top -= 1
        q = st_q[top]
        s = st_s[top]
        e = st_e[top]
        m = e - s
        tot[:] = 0
        s_tot = 0.0
        y_lo = np.inf
        y_hi = -np.inf
        first_y = yv[rows[s]]
        second_y = first_y
        third = False
        for i in range(s, e):
            r = rows[i]
            if classify:
                tot[yc[r]] += 1
            else:
                s_tot += yv[r]
                y = yv[r]
                y_lo = min(y_lo, y)
                y_hi = max(y_hi, y)
                if second_y == first_y and y != first_y:
                    second_y = y
                elif y != first_y and y != second_y:
                    third = True
        margins[6, q] = 1.0 if third else 0.0
        if not classify:
            margins[7, q] = y_lo
            margins[8, q] = y_hi
        sq_tot = 0
        for c in range(ncls):
            sq_tot += tot[c] * tot[c]
        hist[:] = 0.0
        for i in range(s, e):
            r = rows[i]
            for f in range(k):
                if binned[f]:
                    b = (hoff[f] + rank[f, r]) * width
                    hist[b] += 1.0
                    if classify:
                        hist[b + 1 + yc[r]] += 1.0
                    else:
                        hist[b + 1] += yv[r]
        if cache_index[q] >= 0:
            ci = cache_index[q]
            cache[ci] = hist
            if lists.shape[1] > 0:
                t = 0
                for f in range(k):
                    if not binned[f]:
                        lists[t, loff[ci] : loff[ci + 1]] = ords[f, s:e]
                        t += 1
        bf = feature[q]
        one = upper[q] != np.inf
        res[0] = -np.inf
        res[1] = -np.inf
        res[2] = np.nan
        res[3] = np.nan
        res[4] = 0.0
        res[5] = 0.0
        nb_max = -np.inf
        for f in range(k if min_leaf >= 2 else 0):
            nv = uoff[f + 1] - uoff[f]
            if binned[f]:
                cells = hist[hoff[f] * width : (hoff[f] + nv) * width]
                values = uniq[uoff[f] : uoff[f + 1]]
            else:
                g = -1
                for i in range(s, e):
                    r = ords[f, i]
                    if g < 0 or rks[f, i] != rks[f, i - 1]:
                        g += 1
                        gval[g] = uniq[uoff[f] + rks[f, i]]
                        for c in range(width):
                            gcells[g * width + c] = 0.0
                    gcells[g * width] += 1.0
                    if classify:
                        gcells[g * width + 1 + yc[r]] += 1.0
                    else:
                        gcells[g * width + 1] += yv[r]
                nv = g + 1
                cells = gcells
                values = gval
            into = res if binned[f] else res_nb
            if not binned[f]:
                res_nb[0] = -np.inf
                res_nb[1] = -np.inf
            _scan_margin(
                cells, values, nv, width, classify, ncls, np.float64(m), tot, sq_tot, s_tot, min_leaf,
                onehot[f], f == bf and one == onehot[f], threshold[q], fl, fr, into,
            )  # fmt: skip
            if not binned[f]:
                nb_max = max(nb_max, res_nb[1])
                res[1] = max(res[1], res_nb[1])
                if res_nb[0] > -np.inf:
                    nb_max = np.inf
                    for c in range(6):
                        if c != 1:
                            res[c] = res_nb[c]
        if min_leaf >= 2:
            margins[5, q] = nb_max
        p0 = sq_tot / m if classify else s_tot * s_tot / m
        rival = max(res[1], p0)
        if res[0] > -np.inf:
            margins[0, q] = res[0] - rival - 1e-9 * (abs(res[0]) + abs(rival)) - 1e-9
            for c in range(4):
                margins[1 + c, q] = res[2 + c]
        # The children, their rows partitioned as the split sends them.
        mid = s
        for i in range(s, e):
            r = rows[i]
            g = not (threshold[q] < X[r, bf] <= upper[q])
            goes_left[r] = g
            mid += g
        _partition_rows(rows, s, e, goes_left, tmp_i)
        for f in range(k):
            if not binned[f]:
                _partition(ords, rks, f, s, e, goes_left, tmp_o, tmp_k)
        c = left[q]
        for child, cs, ce in ((c + 1, mid, e), (c, s, mid)):
            if left[child] >= 0 and ce - cs > small:
                st_q[top] = child
                st_s[top] = cs
                st_e[top] = ce
                top += 1


@njit(cache=True)
def _load_hist(
    out, hist, rank, rank2, p, blist, hoff, hoff2, uoff, ins, width, classify, old_y, new_y, in_old, in_new
):
    """A node's histograms after row ``p`` changed, into ``out`` (every cell written), from its
    old ones ``hist``: bins move to the dense ranks ``rank2`` (an inserted value's bin starts
    empty); the row's old version leaves the node if it was in it (``in_old``, class or centred
    target ``old_y``), its new one enters if it is (``in_new``)."""
    for f in blist:
        nv = uoff[f + 1] - uoff[f]
        a = hoff[f] * width
        b = hoff2[f] * width
        cut = min(ins[f], nv) * width
        out[b : b + cut] = hist[a : a + cut]
        if ins[f] < nv + 1:
            out[b + cut : b + cut + width] = 0.0
            b += width
        out[b + cut : b + nv * width] = hist[a + cut : a + nv * width]
        if in_old:
            vo = rank[f, p]
            bo = (hoff2[f] + vo + (1 if vo >= ins[f] else 0)) * width
            out[bo] -= 1.0
            if classify:
                out[bo + 1 + np.int64(old_y)] -= 1.0
            else:
                out[bo + 1] -= old_y
        if in_new:
            bn = (hoff2[f] + rank2[f, p]) * width
            out[bn] += 1.0
            if classify:
                out[bn + 1 + np.int64(new_y)] += 1.0
            else:
                out[bn + 1] += new_y


@njit(inline="always")
def _node_bound_shift(o, classify, bound, shift, margins, new_y, in_new):
    """The bound (see above) and the centring shift for path node ``o``: a regression node's
    from its own targets' range (old, and the new row's if it enters), where the margins hold
    it; else the tree's."""
    if classify or np.isnan(margins[7, o]):
        return bound, shift
    lo = margins[7, o]
    hi = margins[8, o]
    if in_new:
        lo = min(lo, new_y)
        hi = max(hi, new_y)
    half = (hi - lo) / 2.0
    return 3.0 * half * half, (hi + lo) / 2.0


@njit(inline="always")
def _keeps_split(
    o, size, in_old, in_new, small, min_leaf, bound, margins, o_feature, o_upper, o_left, o_lo, o_hi, old_row,
    new_row,
):  # fmt: skip
    """Whether path node ``o`` (``size`` rows after the swap) keeps its old split unsearched."""
    if min_leaf < 2 or size <= small or o_left[o] < 0:
        return False
    ops = np.int64(in_old) + np.int64(in_new)
    if not margins[0, o] > 2.0 * ops * bound:
        return False
    c = o_left[o]
    if o_hi[c] - o_lo[c] <= min_leaf or o_hi[c + 1] - o_lo[c + 1] <= min_leaf:
        return False
    if o_upper[o] == np.inf:
        f = o_feature[o]
        if in_old:
            v = old_row[f]
            if (v == margins[1, o] and margins[3, o] <= 1.0) or (v == margins[2, o] and margins[4, o] <= 1.0):
                return False
        if in_new and margins[1, o] < new_row[f] < margins[2, o]:
            return False
    return True


@njit(cache=True)
def _copy_subtree(
    o, nid, s, counter, o_feature, o_threshold, o_upper, o_left, o_lo, o_hi, last, o_values, feature,
    threshold, upper, left, right, lo, hi, values,
):  # fmt: skip
    """Copy old node ``o``'s subtree (its rows unchanged) as node ``nid`` at position ``s``, its
    descendants numbered from ``counter``; returns the next free number."""
    size = o_hi[o] - o_lo[o]
    dpos = s - o_lo[o]
    feature[nid] = o_feature[o]
    threshold[nid] = o_threshold[o]
    upper[nid] = o_upper[o]
    lo[nid] = s
    hi[nid] = s + size
    if o_left[o] < 0:
        left[nid] = -1
        right[nid] = -1
    else:
        first = o_left[o]
        shift = counter - first
        left[nid] = counter
        right[nid] = counter + 1
        for q in range(first, last[o] + 1):
            t = q + shift
            feature[t] = o_feature[q]
            threshold[t] = o_threshold[q]
            upper[t] = o_upper[q]
            if o_left[q] >= 0:
                left[t] = o_left[q] + shift
                right[t] = o_left[q] + 1 + shift
            else:
                left[t] = -1
                right[t] = -1
            lo[t] = o_lo[q] + dpos
            hi[t] = o_hi[q] + dpos
        counter += last[o] - first + 1
    values[s : s + size] = o_values[o_lo[o] : o_hi[o]]
    return counter


@njit(cache=True)
def _leaf_swapped(
    o, nid, s, e, in_new, p, j, X2, o_lo, o_hi, o_perm, feature, threshold, upper, left, right, lo, hi, values
):
    """Old leaf ``o``, still a leaf, as node ``nid`` at ``[s, e)``: its old rows without the
    changed row's old version, with the new one placed by column 0's value, then row."""
    feature[nid] = -1
    left[nid] = -1
    right[nid] = -1
    threshold[nid] = np.nan
    upper[nid] = np.nan
    lo[nid] = s
    hi[nid] = e
    w = s
    placed = not in_new
    key = X2[p, 0]
    for i in range(o_lo[o], o_hi[o]):
        r = o_perm[i]
        if r == p:
            continue
        if not placed and (X2[r, 0] > key or (X2[r, 0] == key and r > p)):
            values[w] = X2[p, j]
            w += 1
            placed = True
        values[w] = X2[r, j]
        w += 1
    if not placed:
        values[w] = X2[p, j]


@njit(cache=True)
def _node_rows(o_perm, a, b, p, in_new, rows, s, ascending):
    """Write a path node's rows into ``rows[s:]``: its old rows ``o_perm[a:b]`` without row
    ``p``, then ``p`` if its new version is in the node (ascending if asked)."""
    w = s
    for i in range(a, b):
        r = o_perm[i]
        if r != p:
            rows[w] = r
            w += 1
    if in_new:
        rows[w] = p
        w += 1
    if ascending:
        rows[s:w].sort()


@njit(cache=True)
def _swap_list(old, a, b, p, in_new, rank2, ords, rks, s):
    """A path node's sorted list of one predictor (rows by value, then row; dense ranks
    ``rank2``) into ``ords[s:]``/``rks[s:]``, from its old list ``old[a:b]``: row ``p``'s old
    version out, its new one (if in the node) in at its place."""
    kp = rank2[p]
    w = s
    placed = not in_new
    for i in range(a, b):
        r = old[i]
        if r == p:
            continue
        kr = rank2[r]
        if not placed and (kr > kp or (kr == kp and r > p)):
            ords[w] = p
            rks[w] = kp
            w += 1
            placed = True
        ords[w] = r
        rks[w] = kr
        w += 1
    if not placed:
        ords[w] = p
        rks[w] = kp


@njit(cache=True)
def _hist_rows_swapped(hist, rows, s, e, rank_t, ins, rank2, p, blist, hoff2, width, classify, yc, yv):
    """Add the rows ``rows[s:e]`` to ``hist`` (see ``_add_rows``), binned by the dense ranks of
    the array with row ``p`` changed: the old ranks ``rank_t`` (row by row) moved up where a
    value was inserted below (``ins``), and ``rank2`` for row ``p``."""
    for i in range(s, e):
        r = rows[i]
        for f in blist:
            if r == p:
                k = rank2[f, p]
            else:
                k = rank_t[r, f]
                k += 1 if k >= ins[f] else 0
            b = (hoff2[f] + k) * width
            hist[b] += 1.0
            if classify:
                hist[b + 1 + yc[r]] += 1.0
            else:
                hist[b + 1] += yv[r]


@njit(cache=True)
def _refit_hist_tree(
    X2, cols, p, old_row, j, classify, ncls, min_leaf, onehot, centre, small, rank, rank2, rank_t, uniq2,
    uoff, uoff2, ins, binned, hoff, hoff2, n_cells, cache_index, cache, o_feature, o_threshold, o_upper,
    o_left, o_lo, o_hi, o_root, last, o_perm, o_values, values, margins, bound, lists, loff, shift, base,
    feature, threshold, upper, left, right, lo, hi,
):  # fmt: skip
    """``_refit_tree`` for a tree searched through histograms: nodes are written into the
    forest's arrays from ``base`` on, and the next free index is returned. A searched path
    node's histograms are its old ones moved by the changed row where ``cache`` holds them,
    else counted from its rows; its totals come from the histograms; the predictors searched by
    sorted lists are skipped where their best old proxy (``margins[5]``) cannot reach the best
    histogram split: a proxy moves by at most ``bound`` per changed row when the target is
    centred at ``centre + shift`` (see ``_keeps_split``), and by that plus what re-centring
    moves the node's proxies by otherwise.

    No rows are walked: a path node's rows are its old ones (``o_perm``) with the changed row
    moved, read only where needed (a node counted from its rows, grown afresh or a leaf); its
    sorted lists, where searched, are its old ones with the row moved (``lists[t]`` from
    ``loff[cache_index[node]]`` for the ``t``-th predictor searched by sorted lists, where
    cached) or its rows sorted."""
    n = X2.shape[0]
    k = j
    yc, yv = _targets(cols[j], classify, centre)  # the old array's columns, each contiguous
    yc[p] = np.int64(X2[p, j]) if classify else 0
    yv[p] = 0.0 if classify else X2[p, j] - centre
    width = ncls + 1 if classify else 2
    cap = _node_bound(n, n, min_leaf)
    blist = np.flatnonzero(binned[:k])
    sorted_f = np.flatnonzero(~binned[:k])
    rows = np.empty(n, dtype=np.int64)
    ords = np.empty((k, n), dtype=np.int32)
    rks = np.empty((k, n), dtype=np.int32)
    keys = np.empty(n, dtype=np.int64)
    hist = np.zeros(n_cells, dtype=np.float64)
    tot = np.zeros(max(ncls, 1), dtype=np.int64)
    cl = np.empty_like(tot)
    cr = np.empty_like(tot)
    fl = np.empty(len(tot), dtype=np.float64)
    fr = np.empty(len(tot), dtype=np.float64)
    new_row = X2[p]
    old_y = old_row[j] if classify else old_row[j] - centre
    new_y = new_row[j] if classify else new_row[j] - centre
    f0 = blist[0]
    depth = cap + 2
    st_kind = np.empty(depth, dtype=np.int64)
    st_old = np.empty(depth, dtype=np.int64)
    st_nid = np.empty(depth, dtype=np.int64)
    st_s = np.empty(depth, dtype=np.int64)
    st_in_old = np.empty(depth, dtype=np.bool_)
    st_in_new = np.empty(depth, dtype=np.bool_)
    st_kind[0] = _EVAL
    st_old[0] = o_root
    st_nid[0] = base
    st_s[0] = 0
    st_in_old[0] = True
    st_in_new[0] = True
    top = 1
    counter = base + 1
    while top > 0:
        top -= 1
        kind = st_kind[top]
        o = st_old[top]
        nid = st_nid[top]
        s = st_s[top]
        in_old = st_in_old[top]
        in_new = st_in_new[top]
        if kind == _COPY:
            counter = _copy_subtree(
                o, nid, s, counter, o_feature, o_threshold, o_upper, o_left, o_lo, o_hi, last, o_values,
                feature, threshold, upper, left, right, lo, hi, values,
            )  # fmt: skip
            continue
        size = o_hi[o] - o_lo[o] - np.int64(in_old) + np.int64(in_new)
        e = s + size
        old_leaf = o_left[o] < 0
        if old_leaf or size <= small or size < 2 * min_leaf:
            _node_rows(o_perm, o_lo[o], o_hi[o], p, in_new, rows, s, True)
            if old_leaf and (size < 2 * min_leaf or _pure_rows(rows, s, e, classify, yc, yv)):
                _leaf_swapped(
                    o, nid, s, e, in_new, p, j, X2, o_lo, o_hi, o_perm, feature, threshold, upper, left,
                    right, lo, hi, values,
                )  # fmt: skip
            else:
                counter = _regrow(
                    X2, rows, s, e, j, classify, ncls, min_leaf, onehot, centre, nid, counter, feature,
                    threshold, upper, left, right, lo, hi, values,
                )  # fmt: skip
            continue
        ops = np.int64(in_old) + np.int64(in_new)
        b_node, shift_node = _node_bound_shift(o, classify, bound, shift, margins, new_y, in_new)
        keep = _keeps_split(
            o, size, in_old, in_new, small, min_leaf, b_node, margins, o_feature, o_upper, o_left, o_lo, o_hi,
            old_row, new_row,
        )  # fmt: skip
        same = keep
        have_rows = False
        th = o_threshold[o]
        up = o_upper[o]
        if not keep:
            if cache_index[o] >= 0:
                _load_hist(
                    hist, cache[cache_index[o]], rank, rank2, p, blist, hoff, hoff2, uoff, ins, width,
                    classify, old_y, new_y, in_old, in_new,
                )  # fmt: skip
            else:
                _node_rows(o_perm, o_lo[o], o_hi[o], p, in_new, rows, s, False)
                have_rows = True
                hist[:] = 0.0
                _hist_rows_swapped(
                    hist, rows, s, e, rank_t, ins, rank2, p, blist, hoff2, width, classify, yc, yv
                )
            # The node's totals from the histograms of one predictor.
            tot[:] = 0
            s_tot = 0.0
            for v in range(uoff2[f0 + 1] - uoff2[f0]):
                b = (hoff2[f0] + v) * width
                if classify:
                    for c in range(ncls):
                        tot[c] += np.int64(hist[b + 1 + c])
                else:
                    s_tot += hist[b + 1]
            m = size
            sq_tot = 0
            for c in range(ncls):
                sq_tot += tot[c] * tot[c]
            if classify:
                pure = sq_tot == m * m
            elif margins[6, o] == 1.0:
                pure = False  # three distinct targets before one row left: two at least remain
            else:
                if not have_rows:
                    _node_rows(o_perm, o_lo[o], o_hi[o], p, in_new, rows, s, False)
                    have_rows = True
                pure = _pure_rows(rows, s, e, classify, yc, yv)
            bf = -1
            lv = -1
            ra = -1
            n_left = 0
            best = -np.inf
            if not pure:
                for f in blist:
                    pv, v, nl = _scan_bins(
                        hist, f, uoff2, uniq2, hoff2, width, classify, ncls, m, tot, sq_tot, s_tot, min_leaf,
                        onehot[f], fl, fr, best,
                    )  # fmt: skip
                    if v >= 0:
                        best = pv
                        bf = f
                        lv = v
                        n_left = nl
                # A proxy centred at ``centre`` is the one centred at ``centre + shift`` plus
                # ``2 shift s_tot - shift**2 m`` (the node's target sum and size); the old node's
                # sum is the new one with the row's versions moved back.
                moved = 0.0
                if not classify:
                    old_s = s_tot + (old_y if in_old else 0.0) - (new_y if in_new else 0.0)
                    moved = 2.0 * shift_node * (s_tot - old_s) - shift_node * shift_node * (
                        np.int64(in_new) - np.int64(in_old)
                    )
                reach = margins[5, o] + ops * b_node + moved
                skip = (
                    min_leaf >= 2
                    and not np.isnan(margins[5, o])
                    and reach + 1e-9 * (abs(reach) + abs(best)) + 1e-9 < best
                )
                if len(sorted_f) and not skip:
                    ci = cache_index[o]
                    for t in range(len(sorted_f)):
                        f = sorted_f[t]
                        if ci >= 0 and lists.shape[1] > 0:
                            _swap_list(
                                lists[t], loff[ci], loff[ci + 1], p, in_new, rank2[f], ords[f], rks[f], s
                            )
                        else:
                            # The node's rows sorted by value, then row.
                            if not have_rows:
                                _node_rows(o_perm, o_lo[o], o_hi[o], p, in_new, rows, s, False)
                                have_rows = True
                            for i in range(s, e):
                                keys[i] = np.int64(rank2[f, rows[i]]) * n + rows[i]
                            keys[s:e].sort()
                            for i in range(s, e):
                                ords[f, i] = keys[i] % n
                                rks[f, i] = keys[i] // n
                        if rks[f, s] == rks[f, e - 1]:
                            continue
                        # Earlier predictors win ties, as in the search over all of them in order.
                        floor = np.nextafter(best, -np.inf) if f < bf else best
                        if onehot[f]:
                            pv, a, _ = _scan_onehot(
                                ords, rks, uniq2, uoff2, yc, yv, None, classify, ncls, f, s, e, m, min_leaf,
                                tot, sq_tot, s_tot, cl, floor,
                            )  # fmt: skip
                        else:
                            pv, i = _scan_sorted(
                                ords, rks, yc, yv, None, classify, ncls, f, s, e, m, min_leaf, tot, sq_tot,
                                s_tot, cl, cr, floor,
                            )  # fmt: skip
                            a = i + 1 if i >= 0 else -1
                        if a >= 0:
                            best = pv
                            bf = f
                            ra = a
                            n_left = a - s
            th = np.nan
            up = np.inf
            same = bf >= 0 and bf == o_feature[o]
            if same:
                if ra < 0 and onehot[bf]:
                    code = uniq2[uoff2[bf] + lv]
                    th = code - 0.5
                    up = code + 0.5
                elif ra < 0:
                    rv = lv + 1
                    while hist[(hoff2[bf] + rv) * width] == 0:
                        rv += 1
                    th = _midpoint(uniq2[uoff2[bf] + lv], uniq2[uoff2[bf] + rv])
                else:
                    value = uniq2[uoff2[bf] + rks[bf, ra]]
                    if onehot[bf]:
                        th = value - 0.5
                        up = value + 0.5
                    else:
                        th = _midpoint(uniq2[uoff2[bf] + rks[bf, ra - 1]], value)
                if not (_same_float(th, o_threshold[o]) and _same_float(up, o_upper[o])):
                    # A threshold that moved within the gap it splits (the row entered it or
                    # held one of its ends) parts the other rows as before when as many of them
                    # go left (the rows at or below a threshold are nested sets): the subtree
                    # below is then walked like one with the same split, not grown afresh.
                    first = o_left[o]
                    new_left = np.int64(in_new and not th < new_row[bf])
                    old_left = np.int64(in_old and not o_threshold[o] < old_row[bf])
                    same = (
                        up == np.inf
                        and o_upper[o] == np.inf
                        and n_left - new_left == o_hi[first] - o_lo[first] - old_left
                    )
        if not same:
            _node_rows(o_perm, o_lo[o], o_hi[o], p, in_new, rows, s, True)
            counter = _regrow(
                X2, rows, s, e, j, classify, ncls, min_leaf, onehot, centre, nid, counter, feature, threshold,
                upper, left, right, lo, hi, values,
            )  # fmt: skip
            continue
        bf = o_feature[o]
        feature[nid] = bf
        threshold[nid] = th
        upper[nid] = up
        lo[nid] = s
        hi[nid] = e
        first = o_left[o]
        old_goes_left = not (o_threshold[o] < old_row[bf] <= o_upper[o])
        new_goes_left = not (th < new_row[bf] <= up)
        l_old = in_old and old_goes_left
        r_old = in_old and not old_goes_left
        l_new = in_new and new_goes_left
        r_new = in_new and not new_goes_left
        mid = s + o_hi[first] - o_lo[first] - np.int64(l_old) + np.int64(l_new)
        left[nid] = counter
        right[nid] = counter + 1
        # Right first, so the left subtree is numbered first.
        st_kind[top] = _EVAL if r_old or r_new else _COPY
        st_old[top] = first + 1
        st_nid[top] = counter + 1
        st_s[top] = mid
        st_in_old[top] = r_old
        st_in_new[top] = r_new
        st_kind[top + 1] = _EVAL if l_old or l_new else _COPY
        st_old[top + 1] = first
        st_nid[top + 1] = counter
        st_s[top + 1] = s
        st_in_old[top + 1] = l_old
        st_in_new[top + 1] = l_new
        counter += 2
        top += 2
    return counter


@njit(cache=True)
def _refit_tree(
    X2, cols2, p, old_row, j, classify, ncls, min_leaf, onehot, centre, small, uniq2, uoff2, ord2, rks2,
    o_feature, o_threshold, o_upper, o_left, o_lo, o_hi, o_root, last, o_perm, o_values, values, margins,
    bound, base, feature, threshold, upper, left, right, lo, hi,
):  # fmt: skip
    """Tree ``j`` of ``X2`` (the old array with row ``p`` changed from ``old_row``) from its old
    tree, for a tree searched by sorted lists only (as ``_grow_tree`` does when its target is
    not made of whole numbers); writes its leaf values into ``values`` and its nodes into the
    forest's arrays from ``base`` on, and returns the next free index. ``ord2``/``rks2`` hold
    every predictor's sorted list of the root; ``cols2`` is ``X2`` column by column.
    ``margins`` and ``bound`` decide which path nodes keep their split unsearched (see
    ``_keeps_split``).
    """
    n = X2.shape[0]
    k = j
    yc, yv = _targets(cols2[j], classify, centre)  # contiguous columns: a column of X2 is slower
    cap = _node_bound(n, n, min_leaf)
    rows = np.arange(n)
    ords = np.empty((k, n), dtype=np.int32)
    rks = np.empty((k, n), dtype=np.int32)
    for f in range(k):
        ords[f] = ord2[f]
        rks[f] = rks2[f]
    tot = np.empty(max(ncls, 1), dtype=np.int64)
    cl = np.empty_like(tot)
    cr = np.empty_like(tot)
    goes_left = np.zeros(n, dtype=np.bool_)
    tmp_i = np.empty(n, dtype=np.int64)
    tmp_o = np.empty(n, dtype=np.int32)
    tmp_k = np.empty(n, dtype=np.int32)
    new_row = X2[p]
    # Every pending node is a child of a node on the paths, one per level at most.
    depth = cap + 2
    st_kind = np.empty(depth, dtype=np.int64)
    st_old = np.empty(depth, dtype=np.int64)
    st_nid = np.empty(depth, dtype=np.int64)
    st_s = np.empty(depth, dtype=np.int64)
    st_e = np.empty(depth, dtype=np.int64)
    st_in_old = np.empty(depth, dtype=np.bool_)
    st_in_new = np.empty(depth, dtype=np.bool_)
    st_kind[0] = _EVAL
    st_old[0] = o_root
    st_nid[0] = base
    st_s[0] = 0
    st_e[0] = n
    st_in_old[0] = True
    st_in_new[0] = True
    top = 1
    counter = base + 1
    while top > 0:
        top -= 1
        kind = st_kind[top]
        o = st_old[top]
        nid = st_nid[top]
        s = st_s[top]
        e = st_e[top]
        in_old = st_in_old[top]
        in_new = st_in_new[top]
        if kind == _COPY:
            counter = _copy_subtree(
                o, nid, s, counter, o_feature, o_threshold, o_upper, o_left, o_lo, o_hi, last, o_values,
                feature, threshold, upper, left, right, lo, hi, values,
            )  # fmt: skip
            continue
        size = e - s
        old_leaf = o_left[o] < 0
        if old_leaf or size <= small or size < 2 * min_leaf:
            if old_leaf and (size < 2 * min_leaf or _pure_rows(rows, s, e, classify, yc, yv)):
                _leaf_swapped(
                    o, nid, s, e, in_new, p, j, X2, o_lo, o_hi, o_perm, feature, threshold, upper, left,
                    right, lo, hi, values,
                )  # fmt: skip
            else:
                counter = _regrow(
                    X2, rows, s, e, j, classify, ncls, min_leaf, onehot, centre, nid, counter, feature,
                    threshold, upper, left, right, lo, hi, values,
                )  # fmt: skip
            continue
        keep = _keeps_split(
            o, size, in_old, in_new, small, min_leaf, bound, margins, o_feature, o_upper, o_left, o_lo, o_hi,
            old_row, new_row,
        )  # fmt: skip
        if not keep:
            bf, ra, _, _ = _best_split(
                ords, rks, uniq2, uoff2, yc, yv, None, classify, ncls, k, s, e, min_leaf, onehot, tot, cl, cr
            )  # fmt: skip
            same = bf >= 0 and bf == o_feature[o]
            if same:
                value = uniq2[uoff2[bf] + rks[bf, ra]]
                if onehot[bf]:
                    th = value - 0.5
                    up = value + 0.5
                else:
                    th = _midpoint(uniq2[uoff2[bf] + rks[bf, ra - 1]], value)
                    up = np.inf
                same = _same_float(th, o_threshold[o]) and _same_float(up, o_upper[o])
            if not same:
                counter = _regrow(
                    X2, rows, s, e, j, classify, ncls, min_leaf, onehot, centre, nid, counter, feature,
                    threshold, upper, left, right, lo, hi, values,
                )  # fmt: skip
                continue
        bf = o_feature[o]
        th = o_threshold[o]
        up = o_upper[o]
        feature[nid] = bf
        threshold[nid] = th
        upper[nid] = up
        lo[nid] = s
        hi[nid] = e
        by = cols2[bf]
        mid = s
        for i in range(s, e):
            r = rows[i]
            g = not (th < by[r] <= up)
            goes_left[r] = g
            mid += g
        _partition_rows(rows, s, e, goes_left, tmp_i)
        for f in range(k):
            if f != bf or onehot[f]:  # a threshold split leaves its own list sorted
                _partition(ords, rks, f, s, e, goes_left, tmp_o, tmp_k)
        first = o_left[o]
        old_goes_left = not (th < old_row[bf] <= up)
        new_goes_left = not (th < new_row[bf] <= up)
        l_old = in_old and old_goes_left
        r_old = in_old and not old_goes_left
        l_new = in_new and new_goes_left
        r_new = in_new and not new_goes_left
        left[nid] = counter
        right[nid] = counter + 1
        # Right first, so the left subtree is numbered first.
        st_kind[top] = _EVAL if r_old or r_new else _COPY
        st_old[top] = first + 1
        st_nid[top] = counter + 1
        st_s[top] = mid
        st_e[top] = e
        st_in_old[top] = r_old
        st_in_new[top] = r_new
        st_kind[top + 1] = _EVAL if l_old or l_new else _COPY
        st_old[top + 1] = first
        st_nid[top + 1] = counter
        st_s[top + 1] = s
        st_e[top + 1] = mid
        st_in_old[top + 1] = l_old
        st_in_new[top + 1] = l_new
        counter += 2
        top += 2
    return counter


class RefitState:
    """What one-row refits of a forest start from, built once and shared by every refit.

    Holds its own copy of the training array (columns in visit order), its presort, each tree's
    rows grouped by leaf, each node's last descendant, each split's margin and the histograms
    and sorted lists of the largest nodes. A refit changes one row of the copy while it runs
    and puts it back, under ``lock``; nothing else here changes after it is built.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        The training rows the forest was grown on, columns in visit order.
    forest : Forest
        The forest ``grow_forest`` grew on ``X``.
    categorical, onehot : ndarray of bool, shape (d,)
        As given to ``grow_forest``.
    min_samples_leaf : int
        As given to ``grow_forest``.
    """

    def __init__(
        self,
        X: np.ndarray,
        forest: Forest,
        categorical: np.ndarray,
        onehot: np.ndarray,
        min_samples_leaf: int,
    ) -> None:
        # A copy of its own: refits set one row of it for their time (see ``refit_forest``).
        self.X = np.array(X, dtype=np.float64, order="C", copy=True)
        self.lock = threading.Lock()
        self.forest = forest
        self.categorical = np.asarray(categorical, dtype=np.bool_)
        self.onehot = _onehot(onehot, self.X.shape[1])
        self.min_leaf = int(min_samples_leaf)
        self.orders, self.rank, self.uniq, self.uoff = _presort(self.X)
        self.cols = np.ascontiguousarray(self.X.T)  # column by column
        self.rank_t = np.ascontiguousarray(self.rank.T)  # row by row
        f = forest
        self.perms = _leaf_perms(
            self.X, self.orders[0], f.feature, f.threshold, f.upper, f.left, f.lo, f.roots
        )
        self.last = _subtree_last(f.left)
        self.ncls = _classes(self.X, self.categorical)
        self.centres = _centres(self.X, self.categorical)
        self.column_stats = _column_stats(self.cols, self.categorical, self.centres)
        counts = np.diff(self.uoff)
        self.binned = counts <= _MAX_BINS
        self.hoff = np.concatenate([[0], np.cumsum(np.where(self.binned, counts, 0))]).astype(np.int64)
        self.integral = np.array(
            [
                self.categorical[j] or bool(_integral_sums(self.X[:, j] - self.centres[j], None))
                for j in range(len(counts))
            ]
        )
        # Each split's margin (see ``_keeps_split``); the histograms of each tree's internal
        # nodes of more than ``_REFIT_CACHE`` rows (row ``cache_index[node]`` of ``caches[j]``),
        # for the trees that may be searched through histograms.
        self.margins = np.full((_MARGIN_FIELDS, len(f.left)), np.nan)
        self.margins[0] = -np.inf
        self.cache_index = np.full(len(f.left), -1, dtype=np.int64)
        self.caches: list[np.ndarray] = [np.zeros((0, 0))]
        self.lists: list[np.ndarray] = [np.zeros((0, 0), dtype=np.int32)]
        self.loffs: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        small, above = int(_REFIT_SMALL), int(_REFIT_CACHE)
        sizes = f.hi - f.lo
        for j in range(1, len(counts)):
            root, last = int(f.roots[j]), int(self.last[f.roots[j]])
            width = int(self.ncls[j]) + 1 if self.categorical[j] else 2
            cached = np.zeros(0, dtype=np.int64)
            if self.integral[j] and self.binned[:j].any():
                nodes = np.arange(root, last + 1)
                cached = nodes[(f.left[nodes] >= 0) & (sizes[nodes] > above)]
            self.cache_index[cached] = np.arange(len(cached))
            self.caches.append(np.zeros((len(cached), int(self.hoff[j]) * width)))
            loff = np.concatenate([[0], np.cumsum(sizes[cached])]).astype(np.int64)
            n_sorted = int((~self.binned[:j]).sum())
            room = int(loff[-1]) if n_sorted * int(loff[-1]) * 4 <= _REFIT_LISTS_BYTES else 0
            self.lists.append(np.zeros((n_sorted, room), dtype=np.int32))
            self.loffs.append(loff)
            if self.min_leaf >= 2 or len(cached):
                _tree_margins(
                    self.X, self.orders, self.rank, self.uniq, self.uoff, j, bool(self.categorical[j]),
                    int(self.ncls[j]), float(self.centres[j]), self.min_leaf, self.onehot, self.binned,
                    self.hoff, f.feature, f.threshold, f.upper, f.left, root, self.last, min(small, above),
                    self.margins, self.cache_index, self.caches[j], self.lists[j], self.loffs[j],
                )  # fmt: skip

    def swapped(self, position: int, row: np.ndarray) -> np.ndarray:
        """The training array with row ``position`` set to ``row`` (a new array)."""
        with self.lock:
            X2 = self.X.copy()
        X2[int(position)] = row
        return X2


def refit_forest(state: RefitState, position: int, row: np.ndarray) -> Forest:
    """The forest ``grow_forest`` grows on ``state.X`` with row ``position`` set to ``row``.

    Parameters
    ----------
    state : RefitState
        The forest and training array to start from (not changed).
    position : int
        The row replaced, ``0 <= position < n``.
    row : ndarray of shape (d,), float64
        Its new values, columns in visit order (finite; valid codes where categorical).

    Returns
    -------
    Forest
        The forest, array for array the one grown afresh (``state.swapped`` gives its training
        array).
    """
    p = int(position)
    new = np.ascontiguousarray(row, dtype=np.float64)
    with state.lock:
        # The kernels read the swapped array: the state's own, with the row set for the time of
        # the refit (a copy of it cost about 0.4 ms a refit at Adult's size).
        X2 = state.X
        old = X2[p].copy()
        if np.array_equal(old.view(np.uint64), new.view(np.uint64)):
            return state.forest
        X2[p] = new
        try:
            return _refit_forest(state, X2, p, old, new)
        finally:
            X2[p] = old


def _refit_forest(state: RefitState, X2: np.ndarray, p: int, old: np.ndarray, new: np.ndarray) -> Forest:
    n, d = X2.shape
    f = state.forest
    categorical = state.categorical
    ncls2, centres2, integral2 = _swapped_columns(
        state.cols, categorical, p, new, state.ncls, state.centres, state.column_stats
    )
    rank2, uniq2, uoff2, ins = _swap_ranks(state.rank, state.uniq, state.uoff, p, new)
    nb2 = np.diff(uoff2)
    hoff2 = np.concatenate([[0], np.cumsum(np.where(state.binned, nb2, 0))]).astype(np.int64)
    # How each tree is refitted: 0 grown afresh (its centre or class count changed, which can
    # change splits anywhere), 1 through histograms, 2 by sorted lists only.
    modes = np.zeros(d, dtype=np.int64)
    need = np.zeros(d, dtype=np.bool_)
    for j in range(1, d):
        if categorical[j]:
            if ncls2[j] != state.ncls[j]:
                continue
            exact = True
        else:
            if centres2[j] != state.centres[j]:
                continue
            exact = bool(state.integral[j]) and bool(integral2[j])
        hist = exact and bool(state.binned[:j].any())
        modes[j] = 1 if hist else 2
        if not hist:
            need[:j] = True
    ord2, rks2 = _swap_orders(state.orders, rank2, p, need)
    cols2 = np.ascontiguousarray(X2.T) if (modes == 2).any() else state.cols
    small = int(_REFIT_SMALL)
    values = np.empty((d, n), dtype=np.float64)
    values[0] = state.cols[0]
    values[0, p] = new[0]
    # Every tree's nodes go into one set of arrays, as ``_grow_forest`` lays them out.
    cap = d * _node_bound(n, n, state.min_leaf)
    feature = np.empty(cap, dtype=np.int64)
    threshold = np.empty(cap, dtype=np.float64)
    upper = np.empty(cap, dtype=np.float64)
    left = np.empty(cap, dtype=np.int64)
    right = np.empty(cap, dtype=np.int64)
    lo = np.empty(cap, dtype=np.int64)
    hi = np.empty(cap, dtype=np.int64)
    nodes = (feature, threshold, upper, left, right, lo, hi)
    roots = np.zeros(d, dtype=np.int64)
    feature[0], threshold[0], upper[0], left[0], right[0], lo[0], hi[0] = -1, np.nan, np.nan, -1, -1, 0, n
    base = 1
    everything = np.arange(n)
    for j in range(1, d):
        roots[j] = base
        classify = bool(categorical[j])
        if modes[j] == 0:
            base = _regrow(
                X2, everything, 0, n, j, classify, int(ncls2[j]), state.min_leaf, state.onehot,
                float(centres2[j]), base, base + 1, *nodes, values[j],
            )  # fmt: skip
            continue
        n_cells = int(hoff2[j]) * (int(ncls2[j]) + 1 if classify else 2)
        centre = float(centres2[j])
        shift = 0.0
        if classify:
            bound = 1.0
        else:
            low, high = state.column_stats[j, :2]
            low, high = min(low, new[j]), max(high, new[j])
            bound = 3.0 * ((high - low) / 2.0) ** 2
            shift = (low + high) / 2.0 - centre
        if modes[j] == 1:
            base = _refit_hist_tree(
                X2, state.cols, p, old, j, classify, int(ncls2[j]), state.min_leaf, state.onehot, centre,
                small, state.rank, rank2, state.rank_t, uniq2, state.uoff, uoff2, ins, state.binned,
                state.hoff, hoff2, n_cells, state.cache_index, state.caches[j], f.feature, f.threshold,
                f.upper, f.left, f.lo, f.hi, int(f.roots[j]), state.last, state.perms[j], f.leaf_values[j],
                values[j], state.margins, bound, state.lists[j], state.loffs[j], shift, base, *nodes,
            )  # fmt: skip
        else:
            base = _refit_tree(
                X2, cols2, p, old, j, classify, int(ncls2[j]), state.min_leaf, state.onehot, centre, small,
                uniq2, uoff2, ord2, rks2, f.feature, f.threshold, f.upper, f.left, f.lo, f.hi,
                int(f.roots[j]), state.last, state.perms[j], f.leaf_values[j], values[j], state.margins,
                bound, base, *nodes,
            )  # fmt: skip
    for a in nodes:
        # Shrunk in place (the allocator gives the tail back without moving the head): a copy
        # of the first ``base`` entries cost about 0.6 ms a refit at Adult's size.
        a.resize(base, refcheck=False)
    return Forest(feature, threshold, upper, left, right, lo, hi, roots, values)
