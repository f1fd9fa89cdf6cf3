"""Baynet and PrivBayes: synthetic data from a Bayesian network of bounded degree.

Both generators work on a discretised copy of the table. A categorical column keeps its integer
codes, whose domain is ``Column.categories``; a continuous column is cut into ``bins``
equal-width bins between ``Column.lower`` and ``Column.upper``. Both domains come from the schema,
never from the rows being fitted.

The network is learned greedily (GreedyBayes, Zhang et al., "PrivBayes", SIGMOD 2014 / TODS
2017). A root column is drawn at random; then, step by step, one unchosen column (the child) is
added together with a parent set of ``min(degree, number chosen so far)`` already chosen columns.
Every (child, parent set) pair is a candidate. Baynet takes the candidate with the highest mutual
information; PrivBayes draws one with the exponential mechanism.

Conditional probability tables come from counts of each child with its parents. The first
``degree`` columns of the order have as parents every column before them, so their tables are
marginals of the joint table of column ``degree`` and its parents (this is how PrivBayes gets away
with ``d - degree`` noisy tables). Sampling is ancestral; a continuous value is drawn uniformly
inside its sampled bin.

PrivBayes splits ``epsilon`` in two halves:

* structure: each of the ``d - 1`` greedy steps runs the exponential mechanism with budget
  ``epsilon / 2 / (d - 1)``, drawing candidate ``c`` with probability proportional to
  ``exp(eps_step * I_c / (2 * S_c))``. ``S_c`` is the sensitivity of mutual information in bits
  for ``n`` rows (Lemma 1 of the PrivBayes paper): when the child or the parent set has a domain
  of exactly two values, ``S = log2(n) / n + (n - 1) / n * log2(n / (n - 1))``; otherwise the
  general form ``S = 2 / n * log2((n + 1) / 2) + (n - 1) / n * log2((n + 1) / (n - 1))``.
  ``I_c / S_c`` changes by at most 1 when one row is replaced, so each step is
  ``eps_step``-differentially private.
* tables: Laplace noise of scale ``2 * (d - degree) / (epsilon / 2)`` is added to every cell of
  the ``d - degree`` joint count tables (child and parents). Replacing one row moves two counts of
  a table by one, hence the factor 2. Negative counts become zero and each parent configuration is
  renormalised; a configuration whose counts are all zero gets the uniform distribution.

The guarantee is for neighbouring tables of the same size ``n`` (one row replaced), and only when
the domain (categories and bounds) is public, i.e. declared rather than read off the data.
``epsilon = inf`` gives exactly Baynet: same draws, same structure, same tables.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from itertools import combinations
from numbers import Integral
from typing import Any, ClassVar, Self

import numpy as np
from numba import njit

from privgame.core import privacy
from privgame.core.errors import DataError, ParameterError, SchemaError
from privgame.core.options import BINS, DEGREE, EPSILON, GENERATOR_OPTIONS
from privgame.data.schema import CATEGORICAL, Schema
from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import register

__all__ = ["BaynetGenerator", "PrivBayesGenerator"]

# A joint table (child and parents) larger than this is refused before any fitting.
_MAX_TABLE_CELLS = 10_000_000

_DP_NOTE_INFERRED = (
    "The domain (categories and bounds) was read off the private data, so the "
    "epsilon-differential-privacy guarantee does not hold. Declare the public categories and "
    "bounds for it to hold: --domain FILE.json on the command line, or the Data page's "
    "'Public domain' section."
)


# --------------------------------------------------------------------------- domain


_NOT_FINITE = 1
_NOT_A_CODE = 2


@njit(cache=True)
def _codes(
    X: np.ndarray,
    is_cat: np.ndarray,
    cards: np.ndarray,
    lower: np.ndarray,
    scale: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """Write the codes ``(d, n)`` of the rows ``X`` into ``out``; a status per column.

    A categorical value must be a whole number in ``0 .. cards - 1``; a continuous one becomes
    the bin ``floor((x - lower) * scale)`` clipped to ``0 .. cards - 1`` (bin 0 when ``scale``
    is 0). The status is 0, ``_NOT_A_CODE`` or ``_NOT_FINITE`` (which wins).
    """
    n, d = X.shape
    status = np.zeros(d, dtype=np.int64)
    for i in range(n):
        for j in range(d):
            v = X[i, j]
            if not np.isfinite(v):
                status[j] = _NOT_FINITE
            elif is_cat[j]:
                if v >= 0 and v < cards[j] and v == np.floor(v):
                    out[j, i] = np.int64(v)
                elif status[j] == 0:
                    status[j] = _NOT_A_CODE
            elif scale[j] > 0:
                top = np.float64(cards[j] - 1)
                out[j, i] = np.int64(min(max(np.floor((v - lower[j]) * scale[j]), 0.0), top))
            else:
                out[j, i] = 0
    return status


_FILL_BLOCK = 256


@njit(cache=True)
def _fill_rows(
    codes: np.ndarray,
    u: np.ndarray,
    slot: np.ndarray,
    lower: np.ndarray,
    step: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    integer: np.ndarray,
    rounding: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    out: np.ndarray,
) -> None:
    """Rows ``out (n, d)`` from codes ``(d, n)``.

    Column ``j`` is categorical where ``slot[j] < 0``: its code is its value. Otherwise ``q =
    slot[j]`` indexes its parameters and its uniforms ``u[q]``: the value is uniform inside bin
    ``b``, ``lower + (b + u) * step``, clipped to ``[lo, hi]``; an ``integer`` column takes the
    whole number ``starts[q, b] + floor(u * count)`` of its bin, with ``count = counts[q, b]``,
    or the rounded uniform value when the bin holds none; ``rounding`` rounds always.
    """
    d, n = codes.shape
    # Blocks of rows small enough to stay in cache, one column at a time within a block: the
    # column's branch and parameters are hoisted out of its loop (about 20% faster than cell by
    # cell along each row, measured on Adult at 31,655 rows).
    for b0 in range(0, n, _FILL_BLOCK):
        b1 = min(n, b0 + _FILL_BLOCK)
        for j in range(d):
            q = slot[j]
            column = codes[j]
            if q < 0:
                for i in range(b0, b1):
                    out[i, j] = column[i]
                continue
            uq = u[q]
            low, width, floor_, ceiling = lower[q], step[q], lo[q], hi[q]
            if integer[q]:
                first, count_of = starts[q], counts[q]
                for i in range(b0, b1):
                    b = column[i]
                    x = low + (np.float64(b) + uq[i]) * width
                    count = count_of[b]
                    if count > 0:
                        x = np.float64(first[b]) + min(np.floor(uq[i] * count), np.float64(count - 1))
                    else:
                        x = np.rint(x)
                    out[i, j] = min(max(x, floor_), ceiling)
            else:
                rounds = rounding[q]
                for i in range(b0, b1):
                    x = low + (np.float64(column[i]) + uq[i]) * width
                    if rounds:
                        x = np.rint(x)
                    out[i, j] = min(max(x, floor_), ceiling)


def _bin_of(lower: float, upper: float, bins: int, x: np.ndarray | float) -> np.ndarray:
    """The bin of continuous values ``x`` between ``lower`` and ``upper`` (``_codes``'s rule)."""
    width = upper - lower
    if width <= 0:
        return np.zeros(np.shape(x), dtype=np.int64)
    scaled = np.floor((np.asarray(x, dtype=np.float64) - lower) * (bins / width))
    return np.clip(scaled, 0, bins - 1).astype(np.int64)


_EXACT_INTEGERS = 2.0**53
"""Beyond it floats do not hold every whole number and the bins' int64 starts would overflow: an
integer column whose bounds reach it is sampled like a continuous one and rounded."""


@functools.lru_cache(maxsize=256)
def _integer_bins(lower: float, upper: float, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """See :meth:`_Domain.integer_bins` (cached: every fit of a run has the same domain)."""
    lo, hi = math.ceil(lower), math.floor(upper)
    edges = lower + np.arange(bins) * ((upper - lower) / bins)
    # the first whole number of bin b lies within one of ceil(edge_b); look two either side
    candidates = np.clip(np.ceil(edges)[:, None] + np.arange(-2, 3), lo, hi + 1)
    reaches = (_bin_of(lower, upper, bins, candidates) >= np.arange(bins)[:, None]) | (candidates > hi)
    starts = np.empty(bins + 1, dtype=np.int64)
    starts[:bins] = np.where(reaches, candidates, hi + 1).min(axis=1)
    starts[bins] = hi + 1
    starts[:bins] = np.minimum.accumulate(starts[:bins][::-1])[::-1]
    first, counts = starts[:bins], np.diff(starts)
    first.flags.writeable = False
    counts.flags.writeable = False
    return first, counts


def training_domain(name: str, X: np.ndarray, schema: Schema, bins: int) -> tuple[np.ndarray, _Domain]:
    """The training rows as float64 and the binned domain of a generator that discretises them
    (Baynet, PrivBayes, MST), after the checks they share.

    Raises
    ------
    SchemaError
        For a schema without used columns, rows that do not fit it, or a column without a usable
        domain.
    ParameterError
        For no training rows, or more bins than training rows.
    """
    X = np.asarray(X, dtype=np.float64)
    d = len(schema.used)
    if d == 0:
        raise SchemaError(f"The {name} generator needs at least one used column.")
    if X.ndim != 2 or X.shape[1] != d:
        raise SchemaError(
            f"The training array has shape {X.shape} but the schema has {d} used columns; "
            "encode the table with privgame.data.encoding.encode."
        )
    n = X.shape[0]
    if n == 0:
        raise ParameterError(f"The {name} generator needs at least one training row.")
    domain = _Domain(schema, bins)
    if (~domain.is_cat).any() and bins > n:
        raise ParameterError(
            f"bins={bins} is more than the {n} training rows; use at most bins={n} (or more training rows)."
        )
    return X, domain


class _Domain:
    """Cardinality of every used column after discretisation, and the continuous bounds."""

    def __init__(self, schema: Schema, bins: int) -> None:
        used = schema.used
        d = len(used)
        self.is_cat = np.zeros(d, dtype=bool)
        self.cards = np.zeros(d, dtype=np.int64)
        self.lower = np.full(d, np.nan)
        self.upper = np.full(d, np.nan)
        self.integer = np.zeros(d, dtype=bool)
        problems: list[str] = []
        for j, col in enumerate(used):
            if col.role == CATEGORICAL:
                self.is_cat[j] = True
                self.cards[j] = len(col.categories or ())
                if self.cards[j] == 0:
                    problems.append(
                        f"column {col.name!r}: has no categories; declare them in the public domain "
                        "(--domain FILE.json, or the Data page's 'Public domain' section)."
                    )
                continue
            self.cards[j] = bins
            lo, hi = col.lower, col.upper
            if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
                problems.append(
                    f"column {col.name!r}: needs finite bounds lower <= upper, got ({lo}, {hi}); "
                    "declare them in the public domain (--domain FILE.json, or the Data page's "
                    "'Public domain' section)."
                )
                continue
            self.lower[j], self.upper[j] = float(lo), float(hi)
            self.integer[j] = col.integer
        if problems:
            raise SchemaError("The schema does not give every column a usable domain.", problems)

    def discretise(self, X: np.ndarray, schema: Schema) -> np.ndarray:
        """Codes of shape ``(d, n)``: categorical codes as they are, continuous values as bins.

        Continuous values outside the bounds fall into the first or last bin.
        """
        n, d = X.shape
        codes = np.empty((d, n), dtype=np.int64)
        problems: list[str] = []
        names = schema.names
        width = self.upper - self.lower
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(~self.is_cat & (width > 0), self.cards / width, 0.0)
        status = _codes(np.ascontiguousarray(X), self.is_cat, self.cards, self.lower, scale, codes)
        for j in range(d):
            if status[j] == _NOT_FINITE:
                problems.append(f"column {names[j]!r}: holds missing or infinite values; drop those rows.")
            elif status[j] == _NOT_A_CODE:
                problems.append(
                    f"column {names[j]!r}: codes must be whole numbers in "
                    f"0..{self.cards[j] - 1}; "
                    "encode the table with privgame.data.encoding.encode."
                )
        if problems:
            raise SchemaError("The training array does not fit its schema.", problems)
        return codes

    def integer_bins(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """For an integer column: the first whole number of each bin and how many it holds.

        Drawing among these numbers (rather than rounding a uniform draw) keeps every value in
        its sampled bin, so the binned marginals survive sampling. Read-only arrays, shared by
        every domain with the same bounds and bins.
        """
        return _integer_bins(float(self.lower[j]), float(self.upper[j]), int(self.cards[j]))

    def values(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Encoded rows ``(n, d)`` from codes ``(d, n)``; a bin becomes a uniform draw inside it.

        Integer columns draw a whole number of the bin uniformly; a bin holding none gets the
        nearest whole number inside the bounds.
        """
        d, n = codes.shape
        out = np.empty((n, d), dtype=np.float64)
        continuous = np.flatnonzero(~self.is_cat)
        m = len(continuous)
        u = rng.random((m, n))
        bins = int(self.cards[continuous].max()) if m else 1
        slot = np.full(d, -1, dtype=np.int64)
        slot[continuous] = np.arange(m)
        step = np.empty(m)
        lo, hi = np.empty(m), np.empty(m)
        starts = np.zeros((m, bins), dtype=np.int64)
        counts = np.zeros((m, bins), dtype=np.int64)
        integer = np.zeros(m, dtype=np.bool_)
        rounding = np.zeros(m, dtype=np.bool_)
        for q, j in enumerate(continuous):
            lo[q], hi[q] = self.lower[j], self.upper[j]
            step[q] = (hi[q] - lo[q]) / self.cards[j]
            if self.integer[j] and max(abs(lo[q]), abs(hi[q])) < _EXACT_INTEGERS:
                ilo, ihi = math.ceil(lo[q]), math.floor(hi[q])
                if ilo <= ihi:  # a whole number exists inside the bounds
                    first, count = self.integer_bins(j)
                    starts[q, : len(first)], counts[q, : len(count)] = first, count
                    integer[q] = True
                    lo[q], hi[q] = float(ilo), float(ihi)
                else:
                    rounding[q] = True
        _fill_rows(
            codes, u, slot, self.lower[continuous], step, starts, counts, integer, rounding, lo, hi, out
        )  # fmt: skip
        return out


# --------------------------------------------------------------------------- mutual information


def _dense_configs(codes: np.ndarray, cards: np.ndarray, cols: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """Index each row's configuration of ``cols`` densely: ``(ids, number of ids)``.

    Only configurations present in the rows get an id, so tables built on them stay small.
    """
    n = codes.shape[1]
    if not cols:
        return np.zeros(n, dtype=np.int64), 1
    if len(cols) == 1:
        # a column's own codes are already small: absent values just count zero
        return codes[cols[0]], int(cards[cols[0]])
    ids = codes[cols[0]]
    size = int(cards[cols[0]])
    for c in cols[1:]:
        if size * int(cards[c]) > 2**40:  # keep the mixed-radix index far from overflow
            _, ids = np.unique(ids, return_inverse=True)
            size = int(ids.max()) + 1
        ids = ids * cards[c] + codes[c]
        size *= int(cards[c])
    if size <= 16 * n + 1024:
        seen = np.bincount(ids, minlength=size) > 0
        remap = np.cumsum(seen) - 1
        return remap[ids], int(remap[-1]) + 1
    _, ids = np.unique(ids, return_inverse=True)
    return ids, int(ids.max()) + 1


@njit(cache=True)
def _child_config_counts(
    codes: np.ndarray,
    children: np.ndarray,
    config: np.ndarray,
    n_configs: int,
    offsets: np.ndarray,
    size: int,
) -> np.ndarray:
    """Counts of (child value, parent configuration) for every child, child ``t``'s from ``offsets[t]``."""
    counts = np.zeros(size, dtype=np.int64)
    for t in range(children.shape[0]):
        row = codes[children[t]]
        base = offsets[t]
        for r in range(config.shape[0]):
            counts[base + row[r] * n_configs + config[r]] += 1
    return counts


@functools.lru_cache(maxsize=8)
def _clogc(n: int) -> np.ndarray:
    """``c * log2(c)`` for ``c = 0 .. n`` (read-only; the same for every table of ``n`` rows)."""
    counts = np.arange(n + 1, dtype=np.float64)
    table = counts * np.log2(np.maximum(counts, 1.0))
    table.flags.writeable = False
    return table


@njit(cache=True)
def _marginal_counts(
    codes: np.ndarray, cards: np.ndarray, narrow: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of every code of every column ``(d, max(cards))`` and each column's largest code
    (-1 without rows); copies the codes into ``narrow`` on the way when it has their shape."""
    d, n = codes.shape
    counts = np.zeros((d, max(cards.max(), 1) if d else 1), dtype=np.int64)
    tops = np.full(d, -1, dtype=np.int64)
    copy = narrow.shape == codes.shape
    for j in range(d):
        column = codes[j]
        row = counts[j]
        top = -1
        for r in range(n):
            v = column[r]
            row[v] += 1
            top = max(top, v)
            if copy:
                narrow[j, r] = v
        tops[j] = top
    return counts, tops


class _MutualInformation:
    """Mutual information in bits between columns and parent sets, from counts.

    With ``S(table) = sum of c * log2(c)`` over a count table, every entropy is
    ``log2(n) - S / n``, so ``I(X; P) = log2(n) - (S(X) + S(P) - S(X, P)) / n``. The joint counts of
    every child with one parent set come from a single ``bincount``.
    """

    def __init__(self, codes: np.ndarray, cards: np.ndarray) -> None:
        self.codes = codes
        self.cards = cards
        self.n = codes.shape[1]
        self.clogc = _clogc(self.n)
        self.log2n = math.log2(self.n) if self.n else 0.0
        # Each column's counts as ``np.bincount`` gives them (up to its largest code), from one pass.
        # The counting kernel reads every child's codes at each step: narrow codes read faster.
        small = len(cards) > 0 and cards.max() <= 256
        narrow = np.empty(codes.shape if small else (0, 0), dtype=np.uint8)
        marginal, tops = _marginal_counts(codes, cards, narrow)
        self.narrow = narrow if small else codes
        self.marginal, self.tops = marginal, tops
        self.s_marginal = np.array([self.clogc[marginal[j, : tops[j] + 1]].sum() for j in range(len(tops))])

    def scores(self, parents: tuple[int, ...], children: np.ndarray) -> np.ndarray:
        """``I(child; parents)`` for every column index in ``children`` (disjoint from parents)."""
        if len(children) == 0:
            return np.zeros(0)
        if not parents or self.n == 0:
            return np.zeros(len(children))
        config, n_configs = _dense_configs(self.codes, self.cards, parents)
        if len(parents) == 1:  # the same bincount, hence the same sum, as the marginal's
            s_parents = self.s_marginal[parents[0]]
        else:
            s_parents = self.clogc[np.bincount(config)].sum()
        sizes = self.cards[children] * n_configs
        offsets = np.zeros(len(children), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        counts = _child_config_counts(self.narrow, children, config, n_configs, offsets, int(sizes.sum()))
        s_joint = np.add.reduceat(self.clogc[counts], offsets)
        mi = self.log2n - (self.s_marginal[children] + s_parents - s_joint) / self.n
        return np.maximum(mi, 0.0)


def _mi_sensitivity(n: int, binary: bool) -> float:
    """Sensitivity (bits) of mutual information for ``n`` rows, PrivBayes Lemma 1.

    ``binary`` when the child or the parent set has a domain of exactly two values.
    """
    if n <= 1:
        return 0.0
    if binary:
        return math.log2(n) / n + (n - 1) / n * math.log2(n / (n - 1))
    return 2 / n * math.log2((n + 1) / 2) + (n - 1) / n * math.log2((n + 1) / (n - 1))


# --------------------------------------------------------------------------- structure


def _learn_network(
    codes: np.ndarray | None,
    cards: np.ndarray,
    degree: int,
    rng: np.random.Generator,
    epsilon: float = math.inf,
    mi: _MutualInformation | _SwappedMutualInformation | None = None,
) -> tuple[list[int], list[tuple[int, ...]]]:
    """GreedyBayes: the column order and each column's parents (in order of choice).

    With a finite ``epsilon`` (the whole budget; half of it is spent here) each step draws a
    candidate with the exponential mechanism; otherwise it takes the highest mutual information
    (first candidate on ties). ``mi`` scores the candidates (by default from ``codes``; a refit
    passes one that updates cached counts instead of counting the rows).
    """
    if mi is None:
        mi = _MutualInformation(codes, cards)
    d, n = len(cards), mi.n
    private = math.isfinite(epsilon)
    eps_step = epsilon / 2 / (d - 1) if private and d > 1 else 0.0
    child_binary = cards == 2
    sens_binary, sens_general = _mi_sensitivity(n, True), _mi_sensitivity(n, False)

    root = int(rng.integers(d))
    order, parents = [root], [()]
    unchosen = np.ones(d, dtype=bool)
    unchosen[root] = False
    sets: list[tuple[int, ...]] = []
    rows: list[np.ndarray] = []
    binary_sets: list[bool] = []
    for _ in range(d - 1):
        t = len(order)
        size = min(degree, t)
        if t <= degree or size == 0:
            # the single parent set is everything chosen so far: a new set at each step
            sets, rows, binary_sets = [], [], []
            new_sets = [tuple(order[:size])]
        else:
            new_sets = [(*combo, order[-1]) for combo in combinations(order[:-1], size - 1)]
        children = np.flatnonzero(unchosen)
        for parent_set in new_sets:
            row = np.full(d, -np.inf)
            row[children] = mi.scores(parent_set, children)
            sets.append(parent_set)
            rows.append(row)
            binary_sets.append(math.prod(int(cards[p]) for p in parent_set) == 2)
        table = np.array(rows)
        table[:, ~unchosen] = -np.inf
        if private:
            binary = np.array(binary_sets)[:, None] | child_binary[None, :]
            sensitivity = np.where(binary, sens_binary, sens_general)
            quality = np.divide(table, sensitivity, out=np.zeros_like(table), where=sensitivity > 0)
            quality[:, ~unchosen] = -np.inf
            logits = eps_step * quality / 2
            weights = np.exp(logits - logits.max()).ravel()
            cumulative = np.cumsum(weights)
            flat = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
            flat = min(flat, len(cumulative) - 1)
            while weights[flat] == 0:  # only reachable through rounding at the very end
                flat -= 1
        else:
            flat = int(np.argmax(table))
        s, child = divmod(flat, d)
        order.append(int(child))
        parents.append(sets[s])
        unchosen[child] = False
    return order, parents


# --------------------------------------------------------------------------- tables


def _joint_counts(codes: np.ndarray, cards: np.ndarray, cols: tuple[int, ...]) -> np.ndarray:
    """Counts of every configuration of ``cols`` (first column most significant), flat."""
    size = math.prod(int(cards[c]) for c in cols)
    return _count_configs(codes, cards, np.array(cols, dtype=np.int64), size)


@njit(cache=True)
def _count_configs(codes: np.ndarray, cards: np.ndarray, cols: np.ndarray, size: int) -> np.ndarray:
    # One pass over the rows, without the index array of a bincount; integer increments (a
    # float's add is slower, and small tables hit the same cell again and again).
    counts = np.zeros(size, dtype=np.int64)
    index = np.zeros(codes.shape[1], dtype=np.int64)
    for c in cols:
        card = cards[c]
        column = codes[c]
        for r in range(codes.shape[1]):
            index[r] = index[r] * card + column[r]
    for r in range(codes.shape[1]):
        counts[index[r]] += 1
    return counts.astype(np.float64)


def _normalise(counts: np.ndarray, uniform_fallback: bool) -> np.ndarray:
    """Rows of ``counts`` (configurations x child values) as distributions.

    An all-zero row gets the child's marginal (the column sums), or the uniform distribution
    when ``uniform_fallback`` or when the marginal is all zero too.
    """
    totals = counts.sum(axis=1)
    empty = totals <= 0
    if empty.any():
        k = counts.shape[1]
        fill = np.full(k, 1.0 / k)
        if not uniform_fallback:
            marginal = counts.sum(axis=0)
            if marginal.sum() > 0:
                fill = marginal / marginal.sum()
        counts = counts.copy()
        counts[empty] = fill
        totals = np.where(empty, 1.0, totals)
    return counts / totals[:, None]


def _conditional_tables(
    codes: np.ndarray | None,
    cards: np.ndarray,
    order: list[int],
    parents: list[tuple[int, ...]],
    degree: int,
    noise_scale: float,
    rng: np.random.Generator,
    uniform_fallback: bool,
    counter: Callable[[tuple[int, ...]], np.ndarray] | None = None,
) -> list[np.ndarray]:
    """One table per position of ``order``: shape (parent configurations, child values).

    The joint tables of positions ``k .. d-1`` (``k = min(degree, d - 1)``) are counted, get
    Laplace noise of ``noise_scale`` (when positive) and are clipped at zero; the tables of the
    first ``k`` positions are marginals of the joint table at position ``k``, whose parents are
    exactly the first ``k`` columns. ``counter(cols)`` gives a joint table as
    :func:`_joint_counts` does (by default from ``codes``).
    """
    d = len(order)
    k = min(degree, d - 1)
    tables: list[np.ndarray] = [np.empty(0)] * d
    for i in range(k, d):
        cols = (*parents[i], order[i])
        counts = _joint_counts(codes, cards, cols) if counter is None else counter(cols)
        if noise_scale > 0:
            counts += rng.laplace(0.0, noise_scale, size=counts.size)
            np.maximum(counts, 0.0, out=counts)
        if i == k:
            joint = counts.reshape([int(cards[c]) for c in cols])
            for j in range(k):
                marginal = joint.sum(axis=tuple(range(j + 1, k + 1)))
                tables[j] = _normalise(marginal.reshape(-1, int(cards[order[j]])), uniform_fallback)
        tables[i] = _normalise(counts.reshape(-1, int(cards[order[i]])), uniform_fallback)
    return tables


def _sampling_cdfs(tables: list[np.ndarray]) -> list[np.ndarray]:
    """Each table's rows as cumulative distributions, row ``r`` shifted by ``r``, flattened.

    The result is non-decreasing, so one ``searchsorted`` of ``config + u`` samples every row.
    """
    cdfs = []
    for table in tables:
        cum = np.cumsum(table, axis=1)
        np.minimum(cum, 1.0, out=cum)
        cum[:, -1] = 1.0
        cum += np.arange(table.shape[0], dtype=np.float64)[:, None]
        cdfs.append(cum.ravel())
    return cdfs


# Buckets per row of a sampling table in the guide (see ``_guides``): a power of two, so that
# ``g / GUIDE`` and ``u * GUIDE`` are exact.
GUIDE = 64


@njit(cache=True)
def _guides(cdf: np.ndarray, k: int, out: np.ndarray) -> None:
    """The guide table of one shifted cdf (``_sampling_cdfs``) with ``k`` entries per row.

    ``out[c * GUIDE + g]`` is how many entries of row ``c`` are at most ``c + g / GUIDE``. For a
    uniform ``u`` in bucket ``g = floor(u * GUIDE)``, ``c + u >= c + g / GUIDE`` (rounding is
    monotone), so those entries are at most ``c + u`` too: the draw's count starts there
    (the indexed search of Chen and Asau), and with ``GUIDE`` buckets it seldom moves far.
    """
    rows = cdf.shape[0] // k
    for c in range(rows):
        s = 0
        for g in range(GUIDE):
            v = np.float64(c) + g / GUIDE
            while s < k and cdf[c * k + s] <= v:
                s += 1
            out[c * GUIDE + g] = s


@njit(inline="always")
def _guided_draw(cdfs, guides, start, guide_start, k, c, u):
    """The value drawn for configuration ``c`` with uniform ``u`` (see ``_draw``)."""
    # Unsigned indices (all are >= 0): numba wraps signed ones for negative indexing.
    v = np.float64(c) + u
    row = start + c * k
    below = guides[np.uint64(guide_start + c * GUIDE + np.int64(u * GUIDE))]
    while below < k and cdfs[np.uint64(row + below)] <= v:
        below += 1
    return min(below, k - 1)


@njit(cache=True)
def _draw(
    cards: np.ndarray,
    order: np.ndarray,
    parent_flat: np.ndarray,
    parent_ends: np.ndarray,
    cdfs: np.ndarray,
    cdf_ends: np.ndarray,
    guides: np.ndarray,
    u: np.ndarray,
    out: np.ndarray,
) -> None:
    """Ancestral sampling into ``out``: column ``order[i]`` from its cdf (``_sampling_cdfs``).

    Each value is the index ``np.searchsorted(cdf, config + u, side="right")`` would give,
    clipped into the row of the parent configuration ``config``: the row's entries never
    decrease and those before the row are at most ``config``, so it is the number of the row's
    entries at most ``config + u`` (clipped to ``k - 1`` when all ``k`` are). The count starts
    from the row's guide (``_guides``; ``guides`` holds each position's guide after those of the
    positions before it) and steps on while the next entry is at most ``config + u``.
    """
    n = out.shape[1]
    guide_start = 0
    for i in range(order.shape[0]):
        col = order[i]
        k = cards[col]
        start = cdf_ends[i]
        first, last = parent_ends[i], parent_ends[i + 1]
        ui = u[i]
        drawn = out[col]
        if last - first == 1:
            # One parent (every column after the root at degree 1): its codes are the
            # configurations; this loop, without the inner one, is about a third faster.
            parent = out[parent_flat[first]]
            for r in range(n):
                drawn[r] = _guided_draw(cdfs, guides, start, guide_start, k, parent[r], ui[r])
        else:
            for r in range(n):
                c = 0
                for q in range(first, last):
                    p = parent_flat[q]
                    c = c * cards[p] + out[p, r]
                drawn[r] = _guided_draw(cdfs, guides, start, guide_start, k, c, ui[r])
        guide_start += (cdf_ends[i + 1] - start) // k * GUIDE


class _Sampler:
    """A fitted network's sampling tables, flattened once for ``_draw``."""

    def __init__(
        self, cards: np.ndarray, order: list[int], parents: list[tuple[int, ...]], cdfs: list[np.ndarray]
    ) -> None:
        self.cards = np.asarray(cards, dtype=np.int64)
        self.order = np.array(order, dtype=np.int64)
        self.parent_flat = np.array([p for ps in parents for p in ps], dtype=np.int64)
        self.parent_ends = np.cumsum([0] + [len(ps) for ps in parents], dtype=np.int64)
        self.cdf_ends = np.cumsum([0] + [len(c) for c in cdfs], dtype=np.int64)
        self.cdfs = np.concatenate(cdfs) if cdfs else np.zeros(0)
        parts = []
        for i, cdf in enumerate(cdfs):
            k = int(self.cards[order[i]])
            part = np.empty(len(cdf) // k * GUIDE, dtype=np.int32)  # counts <= k: int32 reads faster
            _guides(cdf, k, part)
            parts.append(part)
        self.guides = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Codes ``(d, n)`` drawn column by column in order (one uniform per row and column)."""
        out = np.empty((len(self.cards), n), dtype=np.int64)  # every column is drawn
        u = rng.random((len(self.order), n))
        _draw(
            self.cards, self.order, self.parent_flat, self.parent_ends, self.cdfs, self.cdf_ends,
            self.guides, u, out,
        )  # fmt: skip
        return out


def _ancestral_sample(
    cards: np.ndarray,
    order: list[int],
    parents: list[tuple[int, ...]],
    cdfs: list[np.ndarray],
    n: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Codes ``(d, n)`` drawn column by column in ``order`` (one uniform per row and column)."""
    return _Sampler(cards, order, parents, cdfs).draw(n, rng)


# --------------------------------------------------------------------------- one-row refits

# The count blocks a model keeps for its one-row refits (see ``_RefitState.block``) hold at most
# this many cells in all (8 bytes each); a parent set beyond it is counted from the rows instead.
_REFIT_CACHE_CELLS = 8_000_000


def _config_index(row: np.ndarray, cards: np.ndarray, cols: tuple[int, ...]) -> int:
    """The mixed-radix index of ``row``'s configuration of ``cols`` (first column most significant)."""
    index = 0
    for c in cols:
        index = index * int(cards[c]) + int(row[c])
    return index


@njit(cache=True)
def _swap_keys(
    keys: np.ndarray, pcounts: np.ndarray, dense: bool, old: int, new: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """A parent set's configurations after one row moves from configuration ``old`` to ``new``.

    ``keys`` are the sorted configurations (mixed-radix indices) present before, with counts
    ``pcounts``; with ``dense`` only present ones are listed, so ``old`` leaves when its last row
    goes and ``new`` enters when absent. Returns the new keys, the old position of each (-1 for
    ``new`` entering), their counts, and the new positions of ``old`` (-1 when it left) and ``new``.
    """
    nb = keys.shape[0]
    ko = np.searchsorted(keys, old)
    kw = np.searchsorted(keys, new)
    insert = kw == nb or keys[kw] != new
    remove = dense and old != new and pcounts[ko] == 1
    m = nb + (1 if insert else 0) - (1 if remove else 0)
    new_keys = np.empty(m, dtype=np.int64)
    source = np.empty(m, dtype=np.int64)
    counts = np.empty(m, dtype=np.int64)
    k = 0
    for b in range(nb + 1):
        if insert and b == kw:
            new_keys[k], source[k], counts[k] = new, -1, 0
            k += 1
        if b == nb:
            break
        if remove and b == ko:
            continue
        new_keys[k], source[k], counts[k] = keys[b], b, pcounts[b]
        k += 1
    ko_new = -1 if remove else np.searchsorted(new_keys, old)
    kw_new = np.searchsorted(new_keys, new)
    if ko_new >= 0:
        counts[ko_new] -= 1
    counts[kw_new] += 1
    return new_keys, source, counts, ko_new, kw_new


@njit(cache=True)
def _swap_counts(
    blocks: np.ndarray,
    starts: np.ndarray,
    nb: int,
    source: np.ndarray,
    children: np.ndarray,
    cards: np.ndarray,
    old_row: np.ndarray,
    new_row: np.ndarray,
    ko: int,
    kw: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of (child value, parent configuration) after the swap, as ``_child_config_counts``
    lays them out, and the offset of each child's.

    Child ``c``'s counts before the swap are ``blocks[starts[c] + v * nb + b]`` for value ``v``
    and old configuration ``b``; ``source`` (``_swap_keys``) maps the new configurations onto
    them; the old row leaves cell ``(old_row[c], ko)`` (none when ``ko`` is -1: that column left
    with it) and the new row enters ``(new_row[c], kw)``.
    """
    m = source.shape[0]
    offsets = np.zeros(children.shape[0], dtype=np.int64)
    size = 0
    for t in range(children.shape[0]):
        offsets[t] = size
        size += cards[children[t]] * m
    out = np.empty(size, dtype=np.int64)
    for t in range(children.shape[0]):
        c = children[t]
        base, off = starts[c], offsets[t]
        for v in range(cards[c]):
            src, dst = base + v * nb, off + v * m
            for k in range(m):
                s = source[k]
                out[dst + k] = blocks[src + s] if s >= 0 else 0
        if ko >= 0:
            out[off + old_row[c] * m + ko] -= 1
        out[off + new_row[c] * m + kw] += 1
    return out, offsets


class _Block:
    """One parent set's counts on the training rows, with every other column as child."""

    def __init__(
        self, codes: np.ndarray, narrow: np.ndarray, cards: np.ndarray, parents: tuple[int, ...]
    ) -> None:
        d = len(cards)
        self.dense = len(parents) > 1  # as ``_dense_configs``: one column keeps all its codes
        if self.dense:
            full = np.zeros(codes.shape[1], dtype=np.int64)
            for c in parents:
                full = full * cards[c] + codes[c]
            self.keys, ids = np.unique(full, return_inverse=True)
            self.keys = self.keys.astype(np.int64)
            ids = ids.astype(np.int64)
        else:
            self.keys = np.arange(int(cards[parents[0]]), dtype=np.int64)
            ids = codes[parents[0]].astype(np.int64)
        self.pcounts = np.bincount(ids, minlength=len(self.keys)).astype(np.int64)
        children = np.array([j for j in range(d) if j not in parents], dtype=np.int64)
        sizes = cards[children] * len(self.keys)
        offsets = np.zeros(len(children), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        self.starts = np.full(d, -1, dtype=np.int64)
        self.starts[children] = offsets
        self.counts = _child_config_counts(narrow, children, ids, len(self.keys), offsets, int(sizes.sum()))


class _RefitState:
    """What one-row refits of a fitted model start from: the training rows' codes, their counts
    per column, and (built on first use, then shared by every refit) each parent set's
    :class:`_Block`.

    ``codes`` may be given as ``(source, position, row)``: ``source``'s codes with one column
    replaced, copied only when first needed.
    """

    def __init__(
        self,
        codes: np.ndarray | tuple[_RefitState, int, np.ndarray],
        cards: np.ndarray,
        marginal: np.ndarray,
        tops: np.ndarray,
        s_marginal: np.ndarray,
        n: int,
    ) -> None:
        self._codes = codes
        self.cards = cards
        self.n = n
        self.marginal, self.tops, self.s_marginal = marginal, tops, s_marginal
        self.blocks: dict[tuple[int, ...], _Block | None] = {}
        self.cells = 0

    @property
    def codes(self) -> np.ndarray:
        """The codes ``(d, n)`` of the training rows (uint8 when every domain fits in one)."""
        if isinstance(self._codes, tuple):
            source, position, row = self._codes
            codes = source.codes.copy()
            codes[:, position] = row
            self._codes = codes
        return self._codes

    def block(self, parents: tuple[int, ...]) -> _Block | None:
        """The parent set's counts (built now if new), or None when they would not fit the cache."""
        if parents not in self.blocks:
            size = sum(int(c) for j, c in enumerate(self.cards) if j not in parents)
            configs = math.prod(int(self.cards[p]) for p in parents)
            if self.cells + size * min(configs, self.n) > _REFIT_CACHE_CELLS:
                self.blocks[parents] = None
            else:
                codes = self.codes
                wide = codes if codes.dtype == np.int64 else codes.astype(np.int64)
                block = _Block(wide, codes, self.cards, parents)
                self.cells += block.counts.size
                self.blocks[parents] = block
        return self.blocks[parents]


class _SwappedMutualInformation:
    """:class:`_MutualInformation` of a model's training rows with one row replaced, computed from
    the counts of :class:`_RefitState` updated by that row, not from the rows.

    Every score comes from count arrays equal to those the fresh computation builds, summed in
    the same way, so the results are the same floats.
    """

    def __init__(self, state: _RefitState, position: int, old_row: np.ndarray, new_row: np.ndarray) -> None:
        self.state = state
        self.position = position
        self.old_row, self.new_row = old_row, new_row
        self.cards = state.cards
        self.n = state.n
        self.clogc = _clogc(self.n)
        self.log2n = math.log2(self.n) if self.n else 0.0
        marginal, tops = state.marginal.copy(), state.tops.copy()
        s_marginal = state.s_marginal.copy()
        for j in np.flatnonzero(old_row != new_row):
            marginal[j, old_row[j]] -= 1
            marginal[j, new_row[j]] += 1
            tops[j] = np.flatnonzero(marginal[j])[-1]
            s_marginal[j] = self.clogc[marginal[j, : tops[j] + 1]].sum()
        self.marginal, self.tops, self.s_marginal = marginal, tops, s_marginal
        self._swaps: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray, int, int]] = {}
        self._rows: _MutualInformation | None = None

    def _swap(
        self, parents: tuple[int, ...], block: _Block
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        if parents not in self._swaps:
            old = _config_index(self.old_row, self.cards, parents)
            new = _config_index(self.new_row, self.cards, parents)
            if block.dense:
                self._swaps[parents] = _swap_keys(block.keys, block.pcounts, True, old, new)
            else:  # every code keeps its place; only the parent's counts move (not read here)
                self._swaps[parents] = (block.keys, block.keys, block.pcounts, old, new)
        return self._swaps[parents]

    def _from_rows(self) -> _MutualInformation:
        """The fresh computation on the swapped rows, for parent sets beyond the cache."""
        if self._rows is None:
            codes = self.state.codes.astype(np.int64)
            codes[:, self.position] = self.new_row
            self._rows = _MutualInformation(codes, self.cards)
        return self._rows

    def scores(self, parents: tuple[int, ...], children: np.ndarray) -> np.ndarray:
        """``I(child; parents)`` for every column index in ``children`` (disjoint from parents)."""
        if len(children) == 0:
            return np.zeros(0)
        if not parents or self.n == 0:
            return np.zeros(len(children))
        block = self.state.block(parents)
        if block is None:
            return self._from_rows().scores(parents, children)
        _, source, pcounts, ko, kw = self._swap(parents, block)
        # one parent: the marginal's sum, as the fresh computation takes it
        s_parents = self.s_marginal[parents[0]] if len(parents) == 1 else self.clogc[pcounts].sum()
        counts, offsets = _swap_counts(
            block.counts, block.starts, len(block.keys), source, children, self.cards,
            self.old_row, self.new_row, ko, kw,
        )  # fmt: skip
        s_joint = np.add.reduceat(self.clogc[counts], offsets)
        mi = self.log2n - (self.s_marginal[children] + s_parents - s_joint) / self.n
        return np.maximum(mi, 0.0)

    def joint_counts(self, cols: tuple[int, ...]) -> np.ndarray:
        """:func:`_joint_counts` of the swapped rows: counts of every configuration of ``cols``."""
        *parent_list, child = cols
        parents = tuple(parent_list)
        card = int(self.cards[child])
        if not parents:
            return self.marginal[child, :card].astype(np.float64)
        block = self.state.block(parents)
        if block is None:
            return _joint_counts(self._from_rows().codes, self.cards, cols)
        keys, source, _, ko, kw = self._swap(parents, block)
        counts, _ = _swap_counts(
            block.counts, block.starts, len(block.keys), source, np.array([child], dtype=np.int64),
            self.cards, self.old_row, self.new_row, ko, kw,
        )  # fmt: skip
        table = np.zeros((math.prod(int(self.cards[p]) for p in parents), card), dtype=np.int64)
        table[keys] = counts.reshape(card, len(keys)).T
        return table.ravel().astype(np.float64)


# --------------------------------------------------------------------------- generators


class _BayesNetBase(SyntheticGenerator):
    """Shared fitting and sampling of Baynet and PrivBayes."""

    degree: int
    bins: int

    def _fit(self, X: np.ndarray, schema: Schema, rng: np.random.Generator, epsilon: float) -> None:
        degree = DEGREE.check(self.degree)
        bins = BINS.check(self.bins)
        X, domain = training_domain(self.name, X, schema, bins)
        d, n = X.shape[1], X.shape[0]
        k = min(degree, d - 1)
        largest = math.prod(sorted((int(c) for c in domain.cards), reverse=True)[: k + 1])
        if largest > _MAX_TABLE_CELLS:
            raise ParameterError(
                f"degree={degree} can need a table of {largest:,} cells (child and parents); "
                "lower the degree or the bins, or exclude columns with many categories."
            )
        codes = domain.discretise(X, schema)
        mi = _MutualInformation(codes, domain.cards)
        self._learn(schema, domain, codes, mi, degree, epsilon, rng)
        self._refit: _RefitState | None = _RefitState(
            mi.narrow, domain.cards, mi.marginal, mi.tops, mi.s_marginal, n
        )

    def _learn(
        self,
        schema: Schema,
        domain: _Domain,
        codes: np.ndarray | None,
        mi: _MutualInformation | _SwappedMutualInformation,
        degree: int,
        epsilon: float,
        rng: np.random.Generator,
        counter: Callable[[tuple[int, ...]], np.ndarray] | None = None,
    ) -> None:
        """Learn the network and its tables from ``mi``'s scores and the counts (of ``codes``, or
        ``counter``'s), drawing from ``rng`` in the fit's order, and set the fitted attributes."""
        d = len(domain.cards)
        order, parents = _learn_network(codes, domain.cards, degree, rng, epsilon, mi)
        private = math.isfinite(epsilon)
        noise_scale = 2 * (d - min(degree, d - 1)) / (epsilon / 2) if private else 0.0
        tables = _conditional_tables(
            codes, domain.cards, order, parents, degree, noise_scale, rng, private, counter
        )
        self.schema_ = schema
        self.domain_ = domain
        self.order_ = order
        self.parents_ = parents
        self.tables_ = tables
        self.noise_scale_ = noise_scale
        self.sampler_ = _Sampler(domain.cards, order, parents, _sampling_cdfs(tables))
        self._fit_params = self.get_params()

    def _epsilon(self) -> float:
        """The privacy budget of a fit (infinite: none)."""
        return math.inf

    def refit_swap(self, position: int, row: np.ndarray, *, rng: np.random.Generator) -> Self:
        """The model fitted afresh on its training rows with row ``position`` replaced by ``row``.

        Returns exactly what ``type(self)(**self.get_params()).fit(X2, schema, rng=rng)`` returns,
        with ``X2`` the training rows with ``X2[position] = row``: the same network, the same
        tables and the same draws from ``rng``, so samples drawn next are the same too. The count
        tables are updated by the one row instead of counted again; the network is learned and
        the noise drawn from them as a fit does. ``self`` is unchanged (it keeps the counts of
        the parent sets it has met, to reuse them).

        Parameters
        ----------
        position : int
            The training row to replace, ``0 .. n - 1``.
        row : ndarray of shape (len(schema.used),)
            The encoded row to put in its place.
        rng : numpy.random.Generator
            The fresh fit's stream.

        Returns
        -------
        A new fitted generator of the same class and parameters.

        Raises
        ------
        ParameterError
            When the model is not fitted, was copied or unpickled (which drops its training
            counts), has had its parameters changed since the fit, or ``position`` is out of range.
        DataError
            When ``row`` is not one encoded row of the schema (a :class:`SchemaError` when a value
            is missing, infinite or not a category code).
        """
        if not hasattr(self, "schema_"):
            raise ParameterError(
                f"The {self.name} generator must be fitted before refit_swap; call fit first."
            )
        state: _RefitState | None = getattr(self, "_refit", None)
        if state is None:
            raise ParameterError(
                f"This {self.name} model holds no training counts (a copied or unpickled model drops "
                "them); fit it again before refit_swap."
            )
        params = self.get_params()
        if params != self._fit_params:
            raise ParameterError(
                f"The parameters changed since the fit ({self._fit_params} then, {params} now); fit "
                "again before refit_swap."
            )
        n, d = state.n, len(state.cards)
        if not isinstance(position, Integral) or isinstance(position, bool) or not 0 <= position < n:
            raise ParameterError(
                f"position must be a whole number in 0..{n - 1} (the training row to replace), got "
                f"{position!r}; pass the row's index in the training array."
            )
        try:
            values = np.asarray(row, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(
                f"row must be one encoded row of {d} numbers, got {row!r}; encode it with "
                "privgame.data.encoding.encode."
            ) from exc
        if values.shape != (d,):
            raise DataError(
                f"row must have shape ({d},), one value per used column, got shape {values.shape}; "
                "pass one row of the encoded table, e.g. X[i]."
            )
        domain: _Domain = self.domain_
        try:
            new_row = domain.discretise(values[None, :], self.schema_)[:, 0]
        except SchemaError as exc:
            raise SchemaError("The row to swap in does not fit the schema.", exc.problems) from exc
        old_row = state.codes[:, int(position)].astype(np.int64)
        degree, epsilon = DEGREE.check(self.degree), self._epsilon()
        mi = _SwappedMutualInformation(state, int(position), old_row, new_row)
        new = type(self)(**params)
        new._learn(self.schema_, domain, None, mi, degree, epsilon, rng, mi.joint_counts)
        new._refit = _RefitState(
            (state, int(position), new_row), domain.cards, mi.marginal, mi.tops, mi.s_marginal, n
        )
        return new

    def __getstate__(self) -> dict[str, Any]:
        # The training rows' codes (kept for refit_swap) must not travel with a model: a pickled
        # PrivBayes model would carry its training data past the privacy guarantee.
        state = dict(self.__dict__)
        state.pop("_refit", None)
        return state

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` encoded rows by ancestral sampling of the fitted network.

        Parameters
        ----------
        n : int
            Number of rows (>= 0).
        rng : numpy.random.Generator
            The only source of randomness.

        Returns
        -------
        ndarray of shape (n, len(schema.used)), float64
            Categorical columns hold codes, continuous ones numbers inside their bounds.
        """
        self._check_fitted()
        if not isinstance(n, Integral) or isinstance(n, bool) or n < 0:
            raise ParameterError(f"Cannot sample {n!r} rows: n must be a whole number >= 0.")
        domain: _Domain = self.domain_
        codes = self.sampler_.draw(int(n), rng)
        return domain.values(codes, rng)

    @property
    def network(self) -> list[dict[str, Any]]:
        """The fitted network in sampling order: each column with its parents (by name)."""
        self._check_fitted()
        names = self.schema_.names
        return [
            {"column": names[c], "parents": [names[p] for p in ps]}
            for c, ps in zip(self.order_, self.parents_, strict=True)
        ]

    def marginal_sets(self) -> list[tuple[int, ...]]:
        """The marginals the fitted model keeps: each column with its parents (the column first),
        by used-column index, in sampling order. The marginal attack reads them
        (:mod:`privgame.attack.marginal`)."""
        self._check_fitted()
        return [(int(c), *(int(p) for p in ps)) for c, ps in zip(self.order_, self.parents_, strict=True)]

    def cell_codes(self, X: np.ndarray) -> np.ndarray:
        """The model's discretisation of encoded rows: shape (n, d), categorical codes as they are,
        continuous values as the model's bins."""
        self._check_fitted()
        return self.domain_.discretise(np.asarray(X, dtype=np.float64), self.schema_).T

    @property
    def metadata(self) -> dict[str, Any]:
        """The base facts plus, once fitted, the network."""
        meta = super().metadata
        if hasattr(self, "schema_"):
            meta["network"] = self.network
        return meta


@register
class BaynetGenerator(_BayesNetBase):
    """A Bayesian network learned greedily by mutual information, without privacy.

    Parameters
    ----------
    degree : int, default 1
        Maximum number of parents of each column (>= 0; 0 makes every column independent).
    bins : int, default 10
        Equal-width bins per continuous column, between the schema's bounds (>= 2).

    Notes
    -----
    The root column is drawn from ``rng``; then the (child, parent set) pair of highest mutual
    information is added until every column is in the network. A parent configuration never
    seen in training falls back to the child's marginal.
    """

    name: ClassVar[str] = "baynet"
    label: ClassVar[str] = "Baynet (Bayesian network)"
    parameters = GENERATOR_OPTIONS["baynet"]

    def __init__(self, degree: int = DEGREE.default, bins: int = BINS.default) -> None:
        self.degree = degree
        self.bins = bins

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        """Learn the network and its tables from the encoded rows ``X``.

        Raises
        ------
        ParameterError
            For a bad ``degree`` or ``bins``, or more bins than training rows.
        SchemaError
            When ``X`` does not fit ``schema`` or a column has no usable domain.
        """
        self._fit(X, schema, rng, math.inf)
        return self


@register
class PrivBayesGenerator(_BayesNetBase):
    """PrivBayes: Baynet under epsilon-differential privacy.

    Parameters
    ----------
    degree : int, default 1
        Maximum number of parents of each column (>= 0).
    epsilon : float, default 1.0
        The privacy budget (> 0): half chooses the network with the exponential mechanism, half
        pays Laplace noise on the count tables. ``float('inf')`` gives exactly Baynet.
    bins : int, default 10
        Equal-width bins per continuous column, between the schema's bounds (>= 2).

    Notes
    -----
    The guarantee needs a public domain: when the schema's categories or bounds were read off
    the private rows, :attr:`metadata` says so (``dp_guarantee`` is False).
    """

    name: ClassVar[str] = "privbayes"
    label: ClassVar[str] = "PrivBayes (differentially private Bayesian network)"
    parameters = GENERATOR_OPTIONS["privbayes"]
    without_noise: ClassVar[str] = "Baynet"

    def __init__(
        self, degree: int = DEGREE.default, epsilon: float = EPSILON.default, bins: int = BINS.default
    ) -> None:
        self.degree = degree
        self.epsilon = epsilon
        self.bins = bins

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        """Learn the network and its noisy tables from the encoded rows ``X``.

        Raises
        ------
        ParameterError
            For a bad ``degree``, ``epsilon`` or ``bins``, or more bins than training rows.
        SchemaError
            When ``X`` does not fit ``schema`` or a column has no usable domain.
        """
        self._fit(X, schema, rng, self._epsilon())
        return self

    def _epsilon(self) -> float:
        return EPSILON.check(self.epsilon)

    @classmethod
    def risk_cap_for(cls, epsilon: float = 1.0, **_: Any) -> float | None:
        """The highest membership AUC any attack can reach on any record at ``epsilon`` (one row
        replaced: the swap the games play), given a public domain; None without noise."""
        epsilon = EPSILON.check(epsilon)
        return privacy.auc_bound(epsilon) if math.isfinite(epsilon) else None

    @property
    def metadata(self) -> dict[str, Any]:
        """The base facts plus, once fitted, whether the differential-privacy guarantee holds."""
        meta = super().metadata
        if not hasattr(self, "schema_"):
            return meta
        epsilon = float(self.epsilon)
        meta["epsilon"] = epsilon
        meta["noise_scale"] = self.noise_scale_
        if not math.isfinite(epsilon):
            meta["dp_guarantee"] = False
            meta["dp_note"] = (
                "epsilon is infinite: no noise was added and the network was chosen exactly as "
                "Baynet does, so there is no differential-privacy guarantee."
            )
        elif not self.schema_.domain_public:
            meta["dp_guarantee"] = False
            meta["dp_note"] = _DP_NOTE_INFERRED
        else:
            bound = self.risk_cap_for(epsilon)
            meta["dp_guarantee"] = True
            meta["dp_auc_bound"] = bound
            meta["dp_note"] = (
                f"epsilon-differential privacy with epsilon = {epsilon:g} (half for the network "
                "structure, half for the count tables), for neighbouring tables of the same size "
                "(one row replaced, the swap the games play) and the declared public domain: no "
                f"membership attack's AUC can exceed {bound:.3f} for any record."
            )
        return meta
