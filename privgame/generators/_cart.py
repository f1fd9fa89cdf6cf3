"""A small, fast CART for the synthpop generator, compiled with numba.

One call grows every tree of a synthpop model: tree ``j`` predicts column ``j`` of an array
whose columns are already in visit order, from columns ``0 .. j-1``. Tree ``0`` has no
predictor, so it is a single leaf holding every row (sampling it is a bootstrap).

How a tree grows (the CART rules, as scikit-learn's ``DecisionTree*(min_samples_leaf=m)``):

* every predictor is sorted once (stable, so equal values keep their row order); each node owns
  the same range ``[start, end)`` of every predictor's sorted row list, and a split partitions
  those ranges stably, so they stay sorted without sorting again;
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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["Forest", "apply_tree", "best_split", "grow_forest", "grow_tree", "sample_forest"]


@dataclass(frozen=True)
class Forest:
    """The trees of one synthpop model, stored as flat node arrays.

    Attributes
    ----------
    feature : ndarray of int64
        Predictor (a column position in visit order) tested at each node; -1 at a leaf.
    threshold : ndarray of float64
        Rows with ``x <= threshold`` go to ``left``.
    left, right : ndarray of int64
        Global indices of the children; -1 at a leaf.
    lo, hi : ndarray of int64
        At a leaf, the range of ``leaf_values[j]`` holding its training values.
    roots : ndarray of int64
        The root node of tree ``j`` for each column ``j`` (in visit order).
    leaf_values : ndarray of float64, shape (d, n)
        Row ``j`` holds column ``j``'s training values, grouped by the leaf of tree ``j``.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    roots: np.ndarray
    leaf_values: np.ndarray

    @property
    def n_leaves(self) -> np.ndarray:
        """Number of leaves of each tree."""
        ends = np.append(self.roots[1:], len(self.left))
        is_leaf = self.left < 0
        return np.array([int(is_leaf[a:b].sum()) for a, b in zip(self.roots, ends, strict=True)])


@njit(cache=True)
def _center(y: np.ndarray) -> np.ndarray:
    # Shifting by a whole number keeps integer targets exact while keeping the squared sums of
    # large-valued columns (e.g. incomes) small enough to compare splits precisely.
    return y - np.round(np.mean(y))


@njit(cache=True)
def _midpoint(a: float, b: float) -> float:
    t = a / 2.0 + b / 2.0
    if t >= b:  # rounding can push the midpoint onto b, which must go right
        t = a
    return t


@njit(cache=True)
def _best_split(ords, xs, yc, yv, classify, ncls, k, s, e, min_leaf):
    """Best split of the node ``[s, e)``: ``(feature, position, proxy)``, feature -1 if none.

    ``position`` is the last index (in the feature's sorted range) that goes left.
    """
    m = e - s
    best_f = -1
    best_i = -1
    best = -np.inf
    if classify:
        tot = np.zeros(ncls, dtype=np.int64)
        for i in range(s, e):
            tot[yc[ords[0, i]]] += 1
        sq_tot = 0
        for c in range(ncls):
            sq_tot += tot[c] * tot[c]
        if sq_tot == m * m:  # a single class: pure
            return best_f, best_i, best
        cl = np.empty(ncls, dtype=np.int64)
        cr = np.empty(ncls, dtype=np.int64)
        for f in range(k):
            if xs[f, s] == xs[f, e - 1]:
                continue
            for c in range(ncls):
                cl[c] = 0
                cr[c] = tot[c]
            sq_l = 0
            sq_r = sq_tot
            for i in range(s, e - min_leaf):
                c = yc[ords[f, i]]
                sq_l += 2 * cl[c] + 1
                cl[c] += 1
                sq_r -= 2 * cr[c] - 1
                cr[c] -= 1
                n_l = i - s + 1
                if n_l < min_leaf or xs[f, i] == xs[f, i + 1]:
                    continue
                p = sq_l / n_l + sq_r / (m - n_l)
                if p > best:
                    best = p
                    best_f = f
                    best_i = i
    else:
        s_tot = 0.0
        y_min = np.inf
        y_max = -np.inf
        for i in range(s, e):
            v = yv[ords[0, i]]
            s_tot += v
            y_min = min(y_min, v)
            y_max = max(y_max, v)
        if y_min == y_max:  # a constant target: pure
            return best_f, best_i, best
        for f in range(k):
            if xs[f, s] == xs[f, e - 1]:
                continue
            s_l = 0.0
            for i in range(s, e - min_leaf):
                s_l += yv[ords[f, i]]
                n_l = i - s + 1
                if n_l < min_leaf or xs[f, i] == xs[f, i + 1]:
                    continue
                s_r = s_tot - s_l
                p = s_l * s_l / n_l + s_r * s_r / (m - n_l)
                if p > best:
                    best = p
                    best_f = f
                    best_i = i
    return best_f, best_i, best


@njit(cache=True)
def _grow_tree(X, orders, j, classify, ncls, min_leaf, base, feature, threshold, left, right, lo, hi):
    """Grow the tree of column ``j`` on columns ``0 .. j-1``; nodes from index ``base`` on.

    Returns the number of nodes and column ``j``'s values grouped by leaf.
    """
    n = X.shape[0]
    k = j
    if k == 0:
        feature[base] = -1
        left[base] = -1
        right[base] = -1
        threshold[base] = np.nan
        lo[base] = 0
        hi[base] = n
        return 1, X[:, j].copy()
    ords = np.empty((k, n), dtype=np.int64)
    xs = np.empty((k, n), dtype=np.float64)
    for f in range(k):
        for i in range(n):
            r = orders[f, i]
            ords[f, i] = r
            xs[f, i] = X[r, f]
    yc = np.zeros(n, dtype=np.int64)
    yv = np.zeros(n, dtype=np.float64)
    if classify:
        for i in range(n):
            yc[i] = np.int64(X[i, j])
    else:
        yv = _center(X[:, j].copy())
    goes_left = np.zeros(n, dtype=np.bool_)
    tmp_i = np.empty(n, dtype=np.int64)
    tmp_f = np.empty(n, dtype=np.float64)
    cap = 2 * (n // min_leaf) + 1  # a bound on the node count, hence on the stack depth
    st_s = np.empty(cap, dtype=np.int64)
    st_e = np.empty(cap, dtype=np.int64)
    st_node = np.empty(cap, dtype=np.int64)
    st_s[0] = 0
    st_e[0] = n
    st_node[0] = base
    top = 1
    count = 1
    while top > 0:
        top -= 1
        s = st_s[top]
        e = st_e[top]
        node = st_node[top]
        bf = -1
        bi = -1
        if e - s >= 2 * min_leaf:
            bf, bi, _ = _best_split(ords, xs, yc, yv, classify, ncls, k, s, e, min_leaf)
        if bf < 0:
            feature[node] = -1
            left[node] = -1
            right[node] = -1
            threshold[node] = np.nan
            lo[node] = s
            hi[node] = e
            continue
        feature[node] = bf
        threshold[node] = _midpoint(xs[bf, bi], xs[bf, bi + 1])
        lo[node] = s
        hi[node] = e
        for i in range(s, e):
            goes_left[ords[bf, i]] = i <= bi
        for f in range(k):
            if f == bf:
                continue
            w = s
            nr = 0
            for i in range(s, e):
                r = ords[f, i]
                if goes_left[r]:
                    ords[f, w] = r
                    xs[f, w] = xs[f, i]
                    w += 1
                else:
                    tmp_i[nr] = r
                    tmp_f[nr] = xs[f, i]
                    nr += 1
            for q in range(nr):
                ords[f, w + q] = tmp_i[q]
                xs[f, w + q] = tmp_f[q]
        mid = bi + 1
        left_node = base + count
        right_node = base + count + 1
        count += 2
        left[node] = left_node
        right[node] = right_node
        # Right first, so the left subtree is grown (and numbered) first.
        st_s[top] = mid
        st_e[top] = e
        st_node[top] = right_node
        st_s[top + 1] = s
        st_e[top + 1] = mid
        st_node[top + 1] = left_node
        top += 2
    values = np.empty(n, dtype=np.float64)
    for i in range(n):
        values[i] = X[ords[0, i], j]
    return count, values


@njit(cache=True)
def _grow_forest(X, orders, classify, ncls, min_leaf):
    n, d = X.shape
    per_tree = 2 * (n // min_leaf) + 1
    size = d * per_tree
    feature = np.empty(size, dtype=np.int64)
    threshold = np.empty(size, dtype=np.float64)
    left = np.empty(size, dtype=np.int64)
    right = np.empty(size, dtype=np.int64)
    lo = np.empty(size, dtype=np.int64)
    hi = np.empty(size, dtype=np.int64)
    roots = np.empty(d, dtype=np.int64)
    leaf_values = np.empty((d, n), dtype=np.float64)
    base = np.int64(0)
    for j in range(d):
        roots[j] = base
        count, values = _grow_tree(
            X,
            orders,
            j,
            classify[j],
            ncls[j],
            min_leaf,
            base,
            feature,
            threshold,
            left,
            right,
            lo,
            hi,
        )
        leaf_values[j] = values
        base += count
    return (
        feature[:base].copy(),
        threshold[:base].copy(),
        left[:base].copy(),
        right[:base].copy(),
        lo[:base].copy(),
        hi[:base].copy(),
        roots,
        leaf_values,
    )


@njit(cache=True)
def _sample(feature, threshold, left, right, lo, hi, roots, leaf_values, u):
    m, d = u.shape
    out = np.empty((m, d), dtype=np.float64)
    for i in range(m):
        for j in range(d):
            node = roots[j]
            while left[node] >= 0:
                node = left[node] if out[i, feature[node]] <= threshold[node] else right[node]
            size = hi[node] - lo[node]
            pos = min(np.int64(u[i, j] * size), size - 1)
            out[i, j] = leaf_values[j, lo[node] + pos]
    return out


@njit(cache=True)
def _apply(feature, threshold, left, right, root, P):
    out = np.empty(P.shape[0], dtype=np.int64)
    for i in range(P.shape[0]):
        node = root
        while left[node] >= 0:
            node = left[node] if P[i, feature[node]] <= threshold[node] else right[node]
        out[i] = node
    return out


def _orders(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T)


def _classes(X: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    return np.array(
        [int(X[:, j].max()) + 1 if categorical[j] and len(X) else 0 for j in range(X.shape[1])],
        dtype=np.int64,
    )


def grow_forest(X: np.ndarray, categorical: np.ndarray, min_samples_leaf: int) -> Forest:
    """Grow tree ``j`` of column ``j`` on columns ``0 .. j-1`` for every column of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        Training rows, columns already in visit order; categorical columns hold codes ``>= 0``.
    categorical : ndarray of bool, shape (d,)
        True where column ``j`` is categorical (classification tree), else regression.
    min_samples_leaf : int
        Minimum number of training rows in a leaf (>= 1).

    Returns
    -------
    Forest
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    categorical = np.asarray(categorical, dtype=np.bool_)
    arrays = _grow_forest(X, _orders(X), categorical, _classes(X, categorical), int(min_samples_leaf))
    return Forest(*arrays)


def grow_tree(P: np.ndarray, y: np.ndarray, categorical: bool, min_samples_leaf: int) -> Forest:
    """Grow the single tree of ``y`` on the predictors ``P`` (its root is ``roots[0]``)."""
    X = np.ascontiguousarray(np.column_stack([P, y]), dtype=np.float64)
    j = X.shape[1] - 1
    size = 2 * (len(X) // int(min_samples_leaf)) + 1
    feature = np.empty(size, dtype=np.int64)
    threshold = np.empty(size, dtype=np.float64)
    left = np.empty(size, dtype=np.int64)
    right = np.empty(size, dtype=np.int64)
    lo = np.empty(size, dtype=np.int64)
    hi = np.empty(size, dtype=np.int64)
    ncls = int(X[:, j].max()) + 1 if categorical else 0
    count, values = _grow_tree(
        X, _orders(X), j, bool(categorical), ncls, int(min_samples_leaf), np.int64(0),
        feature, threshold, left, right, lo, hi,
    )  # fmt: skip
    return Forest(
        feature[:count], threshold[:count], left[:count], right[:count], lo[:count], hi[:count],
        np.zeros(1, dtype=np.int64), values[None, :],
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
    orders = _orders(P)
    xs = np.ascontiguousarray(np.take_along_axis(P, orders.T, axis=0).T)
    if categorical:
        yc, yv, ncls = y.astype(np.int64), np.zeros(n), int(y.max()) + 1
    else:
        yc, yv, ncls = np.zeros(n, dtype=np.int64), _center(y.copy()), 0
    if n < 2 * min_samples_leaf or k == 0:
        return None
    f, i, proxy = _best_split(orders, xs, yc, yv, bool(categorical), ncls, k, 0, n, int(min_samples_leaf))
    if f < 0:
        return None
    return int(f), float(_midpoint(xs[f, i], xs[f, i + 1])), float(proxy)


def apply_tree(forest: Forest, j: int, P: np.ndarray) -> np.ndarray:
    """The leaf (global node index) of tree ``j`` that each row of ``P`` lands in."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    f = forest
    return _apply(f.feature, f.threshold, f.left, f.right, int(f.roots[j]), P)


def sample_forest(forest: Forest, u: np.ndarray) -> np.ndarray:
    """Synthesise one row per row of ``u`` (uniforms in [0, 1), shape (m, d)), in visit order.

    Column ``j`` of row ``i`` drops the row's columns ``0 .. j-1`` down tree ``j`` and takes the
    training value at position ``floor(u[i, j] * size)`` of the leaf it lands in.
    """
    f = forest
    u = np.ascontiguousarray(u, dtype=np.float64)
    return _sample(f.feature, f.threshold, f.left, f.right, f.lo, f.hi, f.roots, f.leaf_values, u)
