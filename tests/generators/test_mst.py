"""MST: the paper's procedure (budget, noise, selection, estimation) checked step by step against
slow, obvious references, and its guarantee's bound."""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import declared

from privgame.attack.marginal import MarginalAttack
from privgame.core import privacy
from privgame.core.errors import ParameterError
from privgame.core.seeding import stream
from privgame.data.encoding import encode
from privgame.data.schema import Schema, infer_schema
from privgame.generators import create
from privgame.generators.bayesnet import _Domain
from privgame.generators.mst import MSTGenerator, spanning_tree, swap_epsilon

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult.csv.gz"
COLUMNS = ["workclass", "education", "marital-status", "relationship", "race", "gender"]


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema]:
    """5,000 Adult rows of six categorical columns, encoded, with their schema."""
    table = pd.read_csv(ADULT, na_values=["?"]).dropna()[COLUMNS].sample(5000, random_state=0)
    schema = infer_schema(table)
    return encode(table, schema), schema


def _root(parent: list[int], i: int) -> int:
    while parent[i] != i:
        i = parent[i]
    return i


def _heaviest_tree_by_enumeration(weights: dict[tuple[int, int], float], d: int) -> set[tuple[int, int]]:
    """Every set of d - 1 pairs without a cycle, the heaviest kept (slow, obvious)."""
    best, chosen = -math.inf, set()
    for edges in combinations(sorted(weights), d - 1):
        parent = list(range(d))
        acyclic = True
        for a, b in edges:
            ra, rb = _root(parent, a), _root(parent, b)
            if ra == rb:
                acyclic = False
                break
            parent[ra] = rb
        total = sum(weights[e] for e in edges)
        if acyclic and total > best:
            best, chosen = total, set(edges)
    return chosen


def test_without_noise_the_selection_is_the_heaviest_spanning_tree() -> None:
    rng = stream(3, 0)
    for _ in range(20):
        d = 6
        weights = {pair: float(w) for pair, w in zip(combinations(range(d), 2), rng.random(15), strict=True)}
        assert set(spanning_tree(weights, d, math.inf, rng)) == _heaviest_tree_by_enumeration(weights, d)


def test_the_selection_draws_by_the_exponential_mechanism() -> None:
    # Three columns: the first round draws among three pairs
    # with probabilities proportional to exp(eps * w / 2).
    weights = {(0, 1): 0.0, (0, 2): 1.0, (1, 2): 3.0}
    epsilon = 1.0
    draws = [spanning_tree(weights, 3, epsilon, stream(5, k))[0] for k in range(6000)]
    expected = np.exp(epsilon / 2 * np.array([0.0, 1.0, 3.0]))
    expected /= expected.sum()
    seen = np.array([draws.count(p) for p in sorted(weights)]) / len(draws)
    assert np.abs(seen - expected).max() < 4 * math.sqrt(0.25 / len(draws))


def test_the_budget_is_spent_in_three_thirds(adult: tuple[np.ndarray, Schema]) -> None:
    X, schema = adult
    d = X.shape[1]
    for epsilon, delta in ((0.5, 1e-9), (1.0, 1e-6), (8.0, 1e-9)):
        model = MSTGenerator(epsilon=epsilon, delta=delta).fit(X, schema, rng=stream(1, 0))
        rho = privacy.zcdp_rho(epsilon, delta)
        assert model.rho_ == rho
        # Gaussian measurements of sensitivity 1 cost 1 / (2 s^2) each; the exponential mechanism eps^2 / 8.
        one = d / (2 * model.one_way_noise_**2)
        two = (d - 1) / (2 * model.two_way_noise_**2)
        selection = (d - 1) * model.selection_epsilon_**2 / 8
        assert one == pytest.approx(rho / 3) and two == pytest.approx(rho / 3)
        assert selection == pytest.approx(rho / 3)


def test_a_one_way_measurement_carries_the_declared_noise() -> None:
    # One column, 200 rows in each of two values: no edge, no compression, the estimate is the
    # measurement itself; 600 fits.
    table = pd.DataFrame({"c": ["a"] * 200 + ["b"] * 200})
    schema = declared(infer_schema(table))
    X = encode(table, schema)
    errors = []
    for k in range(600):
        model = MSTGenerator(epsilon=2.0).fit(X, schema, rng=stream(7, k))
        errors.append(model.counts_[0] - 200.0)
    spread = np.std(np.array(errors), axis=0, ddof=1)
    expected = math.sqrt(3 / (2 * privacy.zcdp_rho(2.0, 1e-9)))
    assert model.one_way_noise_ == pytest.approx(expected)
    # The standard deviation of 600 draws errs by 2.9% (one standard error): 12% is four of them,
    # and still far below the 41% of a noise scale off by a factor of sqrt(2).
    assert np.all(np.abs(spread / expected - 1) < 0.12), spread / expected


def test_without_noise_the_tree_s_marginals_come_back(adult: tuple[np.ndarray, Schema]) -> None:
    X, schema = adult
    model = MSTGenerator(epsilon=math.inf).fit(X, schema, rng=stream(2, 0))
    synthetic = model.sample(200_000, rng=stream(2, 1))
    domain = _Domain(schema, 10)
    real, fake = domain.discretise(X, schema), domain.discretise(synthetic, schema)
    for a, b in model.edges_:
        size = int(domain.cards[a] * domain.cards[b])
        p = np.bincount(real[a] * domain.cards[b] + real[b], minlength=size) / len(X)
        q = np.bincount(fake[a] * domain.cards[b] + fake[b], minlength=size) / len(synthetic)
        assert 0.5 * np.abs(p - q).sum() < 0.02, (a, b)
    for j in range(X.shape[1]):  # every column's own marginal too
        p = np.bincount(real[j], minlength=domain.cards[j]) / len(X)
        q = np.bincount(fake[j], minlength=domain.cards[j]) / len(synthetic)
        assert 0.5 * np.abs(p - q).sum() < 0.01


def test_a_small_budget_merges_rare_values_and_samples_them_back_uniformly(
    adult: tuple[np.ndarray, Schema],
) -> None:
    X, schema = adult
    model = MSTGenerator(epsilon=0.05).fit(X, schema, rng=stream(4, 0))
    merged = [(j, g) for j, groups in enumerate(model.groups_) for g in groups if len(g) > 1]
    assert merged, "at epsilon 0.05 some rare value falls below three noise deviations"
    j, values = max(merged, key=lambda item: len(item[1]))
    synthetic = model.sample(100_000, rng=stream(4, 1))
    drawn = synthetic[:, j].astype(int)
    counts = np.array([(drawn == v).sum() for v in values])
    assert counts.sum() > 0
    expected = counts.sum() / len(values)
    assert np.abs(counts - expected).max() < 5 * math.sqrt(expected) + 1


def test_the_guarantee_bounds_every_attack_and_needs_a_public_domain(
    adult: tuple[np.ndarray, Schema],
) -> None:
    X, schema = adult
    inferred = MSTGenerator(epsilon=1.0).fit(X, schema, rng=stream(1, 0)).metadata
    assert inferred["dp_guarantee"] is False and "read off the private data" in inferred["dp_note"]
    meta = MSTGenerator(epsilon=1.0).fit(X, declared(schema), rng=stream(1, 0)).metadata
    assert meta["dp_guarantee"] is True
    swap = swap_epsilon(meta["rho"], 1e-9)
    # The swap the games play costs less than the group-privacy 2 epsilon, more than one step.
    assert 1.0 < swap < 2.0
    assert meta["dp_auc_bound"] == privacy.auc_bound(swap, 1e-9)
    assert f"{meta['dp_auc_bound']:.3f}" in meta["dp_note"]
    noiseless = MSTGenerator(epsilon=math.inf).fit(X, declared(schema), rng=stream(1, 0)).metadata
    assert noiseless["dp_guarantee"] is False and "dp_auc_bound" not in noiseless


def test_the_marginal_attack_reads_mst_s_tree(adult: tuple[np.ndarray, Schema]) -> None:
    X, schema = adult
    model = create("mst").fit(X, schema, rng=stream(1, 0))
    assert MarginalAttack.applies_to(model)
    sets = model.marginal_sets()
    assert len(sets) == X.shape[1] and sets[0] == (model.order_[0],)
    assert {tuple(sorted(s)) for s in sets[1:]} == {tuple(sorted(e)) for e in model.edges_}
    assert model.cell_codes(X[:3]).shape == (3, X.shape[1])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"delta": 0.0}, "delta must be a number strictly between 0 and 1"),
        ({"delta": 1.0}, "delta must be a number strictly between 0 and 1"),
        ({"epsilon": 0}, "epsilon must be a positive number"),
        ({"bins": 1}, "bins must be a whole number >= 2"),
    ],
)
def test_bad_parameters_are_named(
    adult: tuple[np.ndarray, Schema], params: dict[str, float], message: str
) -> None:
    X, schema = adult
    with pytest.raises(ParameterError, match=message):
        MSTGenerator(**params).fit(X, schema, rng=stream(0))
