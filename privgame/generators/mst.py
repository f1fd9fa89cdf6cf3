"""MST: differentially private synthetic data from a maximum spanning tree of two-way marginals
(McKenna, Miklau and Sheldon, "Winning the NIST Contest: A scalable and general approach to
differentially private synthetic data", Journal of Privacy and Confidentiality 2021).

The algorithm, as the paper gives it, on the discretised table (categorical codes as they are,
continuous columns in ``bins`` equal-width bins between the schema's public bounds, as Baynet):

1. **Budget.** ``(epsilon, delta)`` becomes a zCDP budget ``rho``
   (:func:`privgame.core.privacy.zcdp_rho`), spent in three equal thirds.
2. **One-way marginals.** Every column's counts are measured with Gaussian noise of standard
   deviation ``sigma * sqrt(d)``, ``sigma = sqrt(3 / (2 rho))`` (the ``d`` measurements together
   cost ``rho / 3``).
3. **Compression.** A column's values whose noisy count is below ``3 sigma sqrt(d)`` are merged into
   one cell (post-processing: it reads the noisy counts only). A merged cell is sampled back as a
   uniform draw among its values.
4. **Selection.** Each pair of columns is scored by the L1 distance between its true two-way
   counts and the counts the one-way measurements imply when the columns are independent (the
   pairs an independent model gets most wrong). ``d - 1`` rounds of the exponential mechanism,
   each with ``eps_em = sqrt(8 (rho / 3) / (d - 1))`` and score sensitivity 1, add the drawn pair
   unless it closes a cycle (Kruskal's rule): a spanning tree, at a cost of ``rho / 3``.
5. **Two-way marginals.** The ``d - 1`` chosen pairs are measured with Gaussian noise of
   standard deviation ``sigma * sqrt(d - 1)`` (``rho / 3``).
6. **Estimation and sampling.** The paper fits a graphical model to all measurements with
   Private-PGM. For a tree the model is the tree itself, so privgame estimates it directly
   instead (the ``mbi`` package would pull in JAX, several hundred megabytes, for this step):
   each column's counts are the inverse-variance average of its own measurement and the margins
   of its edges' measurements; each edge's table is projected onto those margins (the
   non-negative least-squares table with those margins, by Dykstra's projections, then raked);
   rows are drawn from the root down, each column from its conditional given its parent.

Neighbouring tables differ by one added or removed row (the paper's definition). The games swap
a record for another, which is two such steps; in zCDP terms the swap costs ``8 rho / 3``
(the measurements' L2 sensitivity becomes sqrt(2), the scores' sensitivity 2), from which
:attr:`MSTGenerator.metadata` gives the highest membership AUC any attack can reach
(:func:`privgame.core.privacy.auc_bound`). ``epsilon = inf`` measures without noise and takes the
heaviest tree exactly.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any, ClassVar, Self

import numpy as np

from privgame.core import privacy
from privgame.core.errors import ParameterError
from privgame.core.options import BINS, DELTA, EPSILON, GENERATOR_OPTIONS
from privgame.data.schema import Schema
from privgame.generators.base import SyntheticGenerator
from privgame.generators.bayesnet import _DP_NOTE_INFERRED, training_domain
from privgame.generators.registry import register

__all__ = ["MSTGenerator", "risk_cap", "swap_epsilon"]

# A two-way table larger than this is refused before any fitting.
_MAX_PAIR_CELLS = 4_000_000
# Raking a clipped edge table back to its margins: enough sweeps for the margins to agree to
# well under one row on tables of Adult's size.
_RAKING_SWEEPS = 50
# Dykstra's projection of a noisy edge table onto non-negative tables with given margins.
_DYKSTRA_SWEEPS = 500


def _pair_counts(a: np.ndarray, b: np.ndarray, card_a: int, card_b: int) -> np.ndarray:
    """The two-way count table of codes ``a`` and ``b``, shape (card_a, card_b)."""
    return np.bincount(a * card_b + b, minlength=card_a * card_b).reshape(card_a, card_b).astype(np.float64)


def _exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """Draw index ``i`` with probability proportional to ``exp(epsilon * scores[i] / 2)``
    (sensitivity 1); ``epsilon = inf`` takes the highest score (the first on ties)."""
    if math.isinf(epsilon):
        return int(np.argmax(scores))
    logits = epsilon / 2.0 * (scores - scores.max())
    weights = np.exp(logits)
    return int(rng.choice(len(scores), p=weights / weights.sum()))


def selection_weights(
    codes: list[np.ndarray], sizes: list[int], one_way: list[np.ndarray]
) -> dict[tuple[int, int], float]:
    """MST's score of every pair of columns ``(a, b)``, ``a < b``: the L1 distance between the
    pair's true counts (of ``codes``, each column's cells ``0 .. sizes[j] - 1``) and the counts
    the noisy one-way measurements imply when the two columns are independent. Adding or removing
    one row moves a score by at most 1."""
    d = len(codes)
    total = max(float(np.mean([m.sum() for m in one_way])), 1.0)
    shares = [np.clip(m, 0.0, None) / max(np.clip(m, 0.0, None).sum(), 1e-300) for m in one_way]
    return {
        (a, b): float(
            np.abs(
                _pair_counts(codes[a], codes[b], sizes[a], sizes[b]) - total * np.outer(shares[a], shares[b])
            ).sum()
        )
        for a in range(d)
        for b in range(a + 1, d)
    }


def spanning_tree(
    weights: dict[tuple[int, int], float], d: int, epsilon: float, rng: np.random.Generator
) -> list[tuple[int, int]]:
    """MST's selection: ``d - 1`` rounds, each drawing among the pairs that join two components
    by the exponential mechanism on their weights (budget ``epsilon`` a round), Kruskal's rule.

    Returns the chosen pairs ``(a, b)``, ``a < b``, in the order drawn.
    """
    component = list(range(d))

    def root(i: int) -> int:
        while component[i] != i:
            component[i] = component[component[i]]
            i = component[i]
        return i

    chosen: list[tuple[int, int]] = []
    pairs = sorted(weights)
    for _ in range(d - 1):
        open_pairs = [p for p in pairs if root(p[0]) != root(p[1])]
        pick = open_pairs[_exponential_mechanism(np.array([weights[p] for p in open_pairs]), epsilon, rng)]
        component[root(pick[0])] = root(pick[1])
        chosen.append(pick)
    return chosen


def _rake(table: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Scale a non-negative table towards row sums ``rows`` and column sums ``cols`` (iterative
    proportional fitting); a row or column of zeros takes the other margin's shape."""
    table = table.copy()
    for _ in range(_RAKING_SWEEPS):
        sums = table.sum(axis=1)
        table *= np.divide(rows, sums, out=np.zeros_like(rows), where=sums > 0)[:, None]
        empty = (sums <= 0) & (rows > 0)
        if empty.any():
            table[empty] = rows[empty, None] * (cols / max(cols.sum(), 1e-300))[None, :]
        sums = table.sum(axis=0)
        table *= np.divide(cols, sums, out=np.zeros_like(cols), where=sums > 0)[None, :]
        empty = (sums <= 0) & (cols > 0)
        if empty.any():
            table[:, empty] = cols[None, empty] * (rows / max(rows.sum(), 1e-300))[:, None]
    return table


def _to_margins(table: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The table closest to ``table`` (least squares) with margins ``rows`` and ``cols``."""
    r, c = table.shape
    row_gap = rows - table.sum(axis=1)
    col_gap = cols - table.sum(axis=0)
    total_gap = rows.sum() - table.sum()
    return table + row_gap[:, None] / c + col_gap[None, :] / r - total_gap / (r * c)


def _project(noisy: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The non-negative table closest to ``noisy`` (least squares) with margins ``rows`` and
    ``cols`` (which share one total): Dykstra's alternating projections onto the margins and onto
    the non-negative tables, which converge to the projection onto both, then raked so that the
    margins hold exactly. (Clipping the least-squares table at zero instead leaves the mass of
    every clipped cell spread over a sparse table: 33% more error than Private-PGM at epsilon 1
    on Adult, ``benchmarks/mst_estimation.py``.)"""
    x = noisy.astype(np.float64)
    p = np.zeros_like(x)
    q = np.zeros_like(x)
    for _ in range(_DYKSTRA_SWEEPS):
        y = _to_margins(x + p, rows, cols)
        p = x + p - y
        x_next = np.clip(y + q, 0.0, None)
        q = y + q - x_next
        if np.abs(x_next - x).max() < 1e-6 * max(float(rows.sum()), 1.0):
            x = x_next
            break
        x = x_next
    return _rake(x, rows, cols)


def estimate_tree(
    one_way: list[np.ndarray],
    one_way_variances: list[np.ndarray],
    two_way: dict[tuple[int, int], np.ndarray],
    two_way_variance: float,
) -> tuple[list[np.ndarray], dict[tuple[int, int], np.ndarray]]:
    """A consistent tree-structured estimate from noisy one-way and two-way count measurements.

    Each column's counts are the inverse-variance average of its own measurement (cell ``i`` of
    column ``j`` with variance ``one_way_variances[j][i]``) and of the margins of every measured
    pair that holds it (a margin cell sums the other column's cells, so its variance is their
    number times ``two_way_variance``), clipped at zero. Each pair's table is then the
    non-negative least-squares table with the two columns' counts as margins (:func:`_project`).
    Zero variances (no noise) weigh every measurement alike.

    Returns
    -------
    (counts, joints)
        Each column's estimated counts, and each measured pair's estimated table (keyed as given).
    """
    d = len(one_way)
    exact = two_way_variance == 0 or any(not np.all(v > 0) for v in one_way_variances)
    precision = [np.ones_like(v) if exact else 1.0 / v for v in one_way_variances]
    weighted = [one_way[j] * precision[j] for j in range(d)]
    for (a, b), table in two_way.items():
        rows, cols = table.shape
        for j, margin, other in ((a, table.sum(axis=1), cols), (b, table.sum(axis=0), rows)):
            p = 1.0 if exact else 1.0 / (other * two_way_variance)
            weighted[j] = weighted[j] + margin * p
            precision[j] = precision[j] + p
    counts = [np.clip(weighted[j] / precision[j], 0.0, None) for j in range(d)]
    total = max(float(np.mean([c.sum() for c in counts])), 1.0)
    shares = [c / c.sum() if c.sum() > 0 else np.full(len(c), 1.0 / len(c)) for c in counts]
    joints = {
        (a, b): _project(table, total * shares[a], total * shares[b]) for (a, b), table in two_way.items()
    }
    return counts, joints


@register
class MSTGenerator(SyntheticGenerator):
    """MST: a maximum spanning tree of noisy two-way marginals, under (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float, default 1.0
        The privacy budget (> 0); ``float('inf')`` measures without noise (no guarantee).
    delta : float, default 1e-9
        In (0, 1).
    bins : int, default 10
        Equal-width bins per continuous column, between the schema's bounds (>= 2).

    Notes
    -----
    The guarantee is for neighbouring tables that differ by one added or removed row, and needs a
    public domain: when the schema's categories or bounds were read off the private rows,
    :attr:`metadata` says so (``dp_guarantee`` is False).

    Attributes
    ----------
    edges_ : list of (int, int)
        The tree's pairs of used-column indices, in the order drawn.
    rho_ : float
        The zCDP budget spent (``nan`` when ``epsilon`` is infinite).
    noise_scale_ : float
        ``sigma`` (0 without noise).
    one_way_noise_, two_way_noise_ : float
        The standard deviation of the noise on each cell of a one-way and of a two-way marginal.
    selection_epsilon_ : float
        The exponential mechanism's budget in each round of the selection.
    counts_ : list of ndarray
        Each column's estimated counts, one per cell of its compressed domain (``groups_``).
    groups_ : list of list of ndarray
        Each column's cells: the codes (of the discretised column) each cell holds.
    """

    name: ClassVar[str] = "mst"
    label: ClassVar[str] = "MST (differentially private maximum spanning tree)"
    parameters = GENERATOR_OPTIONS["mst"]

    def __init__(
        self, epsilon: float = EPSILON.default, delta: float = DELTA.default, bins: int = BINS.default
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bins = bins

    # ------------------------------------------------------------------ fit

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        """Measure, select, measure again and estimate the tree from the encoded rows ``X``.

        Raises
        ------
        ParameterError
            For a bad ``epsilon``, ``delta`` or ``bins``, or more bins than training rows.
        SchemaError
            When ``X`` does not fit ``schema`` or a column has no usable domain.
        """
        epsilon, delta, bins = EPSILON.check(self.epsilon), DELTA.check(self.delta), BINS.check(self.bins)
        X, domain = training_domain(self.name, X, schema, bins)
        d = X.shape[1]
        cards = [int(c) for c in domain.cards]
        largest = max((cards[a] * cards[b] for a in range(d) for b in range(a + 1, d)), default=0)
        if largest > _MAX_PAIR_CELLS:
            raise ParameterError(
                f"a pair of columns spans {largest:,} cells; lower the bins or exclude columns with "
                "many categories."
            )
        codes = domain.discretise(X, schema)
        private = math.isfinite(epsilon)
        rho = privacy.zcdp_rho(epsilon, delta) if private else math.nan
        sigma = math.sqrt(3.0 / (2.0 * rho)) if private else 0.0

        # 2. one-way marginals, each with noise sigma * sqrt(d): together rho / 3.
        one_scale = sigma * math.sqrt(d)
        one_way = [
            np.bincount(codes[j], minlength=cards[j]) + rng.normal(0.0, 1.0, cards[j]) * one_scale
            for j in range(d)
        ]
        # 3. compression: values measured below 3 noise deviations share one cell.
        groups: list[list[np.ndarray]] = []
        maps: list[np.ndarray] = []
        measured: list[np.ndarray] = []
        variances: list[np.ndarray] = []
        for j in range(d):
            kept = np.flatnonzero(one_way[j] >= 3 * one_scale) if private else np.arange(cards[j])
            rest = np.setdiff1d(np.arange(cards[j]), kept)
            members = [np.array([v]) for v in kept] + ([rest] if len(rest) else [])
            mapping = np.empty(cards[j], dtype=np.int64)
            for cell, values in enumerate(members):
                mapping[values] = cell
            groups.append(members)
            maps.append(mapping)
            measured.append(np.array([one_way[j][values].sum() for values in members]))
            variances.append(np.array([len(values) * one_scale**2 for values in members]))
        small = [maps[j][codes[j]] for j in range(d)]
        sizes = [len(g) for g in groups]

        # 4. selection: the pairs an independent model of the noisy one-way counts gets most wrong.
        weights = selection_weights(small, sizes, measured)
        em_epsilon = math.sqrt(8.0 * (rho / 3.0) / (d - 1)) if private and d > 1 else math.inf
        edges = spanning_tree(weights, d, em_epsilon, rng)

        # 5. two-way marginals of the tree, each with noise sigma * sqrt(d - 1): rho / 3.
        two_scale = sigma * math.sqrt(max(d - 1, 1))
        noisy_edges = {
            (a, b): _pair_counts(small[a], small[b], sizes[a], sizes[b])
            + rng.normal(0.0, 1.0, (sizes[a], sizes[b])) * two_scale
            for a, b in edges
        }

        # 6. estimation: a consistent tree from every measurement.
        counts, joints = estimate_tree(measured, variances, noisy_edges, two_scale**2)
        nodes = [c / c.sum() if c.sum() > 0 else np.full(len(c), 1.0 / len(c)) for c in counts]

        # The tree from column 0 down: each column's parent and its conditional table.
        neighbours: dict[int, list[int]] = {j: [] for j in range(d)}
        for a, b in edges:
            neighbours[a].append(b)
            neighbours[b].append(a)
        order, parent = [0], {0: -1}
        for j in order:
            for k in sorted(neighbours[j]):
                if k not in parent:
                    parent[k] = j
                    order.append(k)
        conditionals: dict[int, np.ndarray] = {}
        for child in order[1:]:
            up = parent[child]
            joint = joints[(up, child)] if (up, child) in joints else joints[(child, up)].T
            sums = joint.sum(axis=1, keepdims=True)
            conditionals[child] = np.where(
                sums > 0, joint / np.where(sums > 0, sums, 1.0), nodes[child][None, :]
            )

        self.schema_ = schema
        self.domain_ = domain
        self.rho_ = rho
        self.noise_scale_ = sigma
        self.one_way_noise_ = one_scale
        self.two_way_noise_ = two_scale if d > 1 else 0.0
        self.selection_epsilon_ = em_epsilon
        self.counts_ = counts
        self.edges_ = [(int(a), int(b)) for a, b in edges]
        self.order_ = order
        self.parent_ = [int(parent[j]) for j in range(d)]
        self.root_shares_ = nodes[0]
        self.conditionals_ = conditionals
        self.groups_ = groups
        return self

    # ------------------------------------------------------------------ sample

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` encoded rows from the tree, root first.

        Returns
        -------
        ndarray of shape (n, len(schema.used)), float64
            Categorical columns hold codes, continuous ones numbers inside their bounds.
        """
        self._check_fitted()
        if not isinstance(n, Integral) or isinstance(n, bool) or n < 0:
            raise ParameterError(f"Cannot sample {n!r} rows: n must be a whole number >= 0.")
        n = int(n)
        d = len(self.order_)
        cells = np.empty((d, n), dtype=np.int64)
        root = self.order_[0]
        cells[root] = np.searchsorted(
            np.cumsum(self.root_shares_), rng.random(n) * self.root_shares_.sum(), side="right"
        )
        for child in self.order_[1:]:
            cdf = np.cumsum(self.conditionals_[child], axis=1)
            rows = cdf[cells[self.parent_[child]]]
            u = rng.random(n) * rows[:, -1]
            cells[child] = (rows <= u[:, None]).sum(axis=1)
        codes = np.empty((d, n), dtype=np.int64)
        for j in range(d):
            cells[j] = np.minimum(cells[j], len(self.groups_[j]) - 1)
            sizes = np.array([len(g) for g in self.groups_[j]])
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            flat = np.concatenate(self.groups_[j])
            pick = (rng.random(n) * sizes[cells[j]]).astype(
                np.int64
            )  # a merged cell: one of its values, uniformly
            codes[j] = flat[starts[cells[j]] + np.minimum(pick, sizes[cells[j]] - 1)]
        return self.domain_.values(codes, rng)

    @classmethod
    def risk_cap_for(cls, epsilon: float = 1.0, delta: float = 1e-9, **_: Any) -> float | None:
        """The highest membership AUC any attack can reach on any record at ``(epsilon, delta)``
        (:func:`risk_cap`), given a public domain; None without noise."""
        epsilon, delta = EPSILON.check(epsilon), DELTA.check(delta)
        return risk_cap(epsilon, delta) if math.isfinite(epsilon) else None

    # ------------------------------------------------------------------ what it keeps

    def marginal_sets(self) -> list[tuple[int, ...]]:
        """The marginals the fitted model keeps: the root alone, then each column with its parent
        (the column first), in sampling order. The marginal attack reads them."""
        self._check_fitted()
        root = self.order_[0]
        return [(root,)] + [(c, self.parent_[c]) for c in self.order_[1:]]

    def cell_codes(self, X: np.ndarray) -> np.ndarray:
        """The model's discretisation of encoded rows: shape (n, d), categorical codes as they are,
        continuous values as the model's bins."""
        self._check_fitted()
        return self.domain_.discretise(np.asarray(X, dtype=np.float64), self.schema_).T

    @property
    def metadata(self) -> dict[str, Any]:
        """The base facts plus, once fitted, the tree, the budget and what the guarantee bounds."""
        meta = super().metadata
        if not hasattr(self, "schema_"):
            return meta
        names = self.schema_.names
        epsilon, delta = float(self.epsilon), float(self.delta)
        meta["tree"] = [[names[a], names[b]] for a, b in self.edges_]
        meta["epsilon"] = epsilon
        meta["delta"] = delta
        meta["noise_scale"] = self.noise_scale_
        if not math.isfinite(epsilon):
            meta["dp_guarantee"] = False
            meta["dp_note"] = (
                "epsilon is infinite: nothing was measured with noise, so there is no "
                "differential-privacy guarantee."
            )
            return meta
        if not self.schema_.domain_public:
            meta["dp_guarantee"] = False
            meta["dp_note"] = _DP_NOTE_INFERRED.replace("epsilon-differential-privacy", "(epsilon, delta)")
            return meta
        swap = swap_epsilon(self.rho_, delta)
        bound = privacy.auc_bound(swap, delta)
        meta.update(rho=self.rho_, dp_guarantee=True, swap_epsilon=swap, dp_auc_bound=bound)
        meta["dp_note"] = (
            f"(epsilon, delta)-differential privacy with epsilon = {epsilon:g}, delta = {delta:g} "
            f"(rho = {self.rho_:.4g} zCDP) for one row added or removed, and the declared public domain. "
            f"The games swap a record for another, (epsilon = {swap:.3g}, delta = {delta:g}): no "
            f"membership attack's AUC can exceed {bound:.3f} for any record."
        )
        return meta


def risk_cap(epsilon: float, delta: float = 1e-9) -> float:
    """The highest membership AUC any attack can reach on any record against MST at
    ``(epsilon, delta)``, for the swap the games play (with a public domain)."""
    return privacy.auc_bound(swap_epsilon(privacy.zcdp_rho(epsilon, delta), delta), delta)


def swap_epsilon(rho: float, delta: float) -> float:
    """MST's epsilon for neighbours that swap one record (at the same ``delta``): the swap moves
    two cells of every marginal (L2 sensitivity sqrt(2): twice the measurements' rho) and the
    selection scores by up to 2 (four times its rho), so ``rho / 3 * (2 + 2 + 4) = 8 rho / 3``."""
    return privacy.zcdp_epsilon(8.0 * rho / 3.0, delta)
