"""Every registered attack: the interface's contract, and a planted signal each one finds (and
one an attack that cannot see it does not)."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.attack import (
    ATTACKS,
    Attack,
    AttackContext,
    Portfolio,
    applicable,
    attack_names,
    create,
    parse_attacks,
)
from privgame.attack.distance import column_scales, distances
from privgame.core.defaults import ATTACK_NAMES
from privgame.core.errors import ParameterError
from privgame.core.metrics import auc
from privgame.data.schema import CATEGORICAL, Column, Schema
from privgame.generators import create as create_generator

D_CONT, D_CAT, LEVELS = 3, 3, 5
M = 300  # rows of a synthetic table
SCHEMA = Schema(
    [Column(f"x{j}", "continuous", lower=-4.0, upper=4.0) for j in range(D_CONT)]
    + [Column(f"c{j}", CATEGORICAL, categories=tuple("abcde")) for j in range(D_CAT)]
)


def population(rng: np.random.Generator, rows: int) -> np.ndarray:
    """Independent columns: continuous N(0, 1) clipped to the bounds, categorical uniform."""
    cont = np.clip(rng.normal(size=(rows, D_CONT)), -4, 4)
    return np.column_stack([cont, rng.integers(0, LEVELS, size=(rows, D_CAT))]).astype(np.float64)


def context(generator: str = "baynet", seed: int = 0) -> AttackContext:
    rng = np.random.default_rng(1000 + seed)
    return AttackContext(
        schema=SCHEMA,
        reference=population(rng, 2000),
        generator=create_generator(generator),
        n=M,
        seed=seed,
    )


TARGET = np.array([0.31, -0.77, 1.13, 2.0, 4.0, 1.0])


def _copies(rng: np.random.Generator, table: np.ndarray) -> None:
    table[0] = TARGET


def _bump(rng: np.random.Generator, table: np.ndarray) -> None:
    k = 20
    table[:k, :D_CONT] = TARGET[:D_CONT] + rng.normal(scale=0.35, size=(k, D_CONT))
    table[:k, D_CONT:] = TARGET[D_CONT:]
    table[:k, :D_CONT] += np.where(table[:k, :D_CONT] == TARGET[:D_CONT], 1e-3, 0.0)


def _values(rng: np.random.Generator, table: np.ndarray) -> None:
    # Two rows hold the target's exact values in two continuous columns, the rest anything.
    table[:2, 0], table[:2, 1] = TARGET[0], TARGET[1]


def _cell(rng: np.random.Generator, table: np.ndarray) -> None:
    # Rows in the target's bins of the first two continuous columns (Baynet's 20 bins of [-4, 4]),
    # never at its exact values.
    width = 8.0 / 20
    for j in (0, 1):
        low = -4.0 + np.floor((TARGET[j] + 4.0) / width) * width
        table[:15, j] = low + rng.uniform(0.05, 0.95, 15) * width


def _query(rng: np.random.Generator, table: np.ndarray) -> None:
    # Rows that agree with the target on all three categorical columns (a 1-in-125 combination).
    table[:4, D_CONT:] = TARGET[D_CONT:]


SIGNALS = {"closest": _copies, "density": _bump, "values": _values, "marginal": _cell, "tapas": _query}


def tables(plant, rng: np.random.Generator, count: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``count`` 'in' tables with the signal planted and ``count`` 'out' tables without it."""
    ins = []
    for _ in range(count):
        table = population(rng, M)
        plant(rng, table)
        ins.append(table)
    return ins, [population(rng, M) for _ in range(count)]


def eval_auc(attack: Attack, plant, seed: int) -> float:
    """Train on 100 + 100 shadow tables, score 60 + 60 fresh ones; the AUC on the fresh ones."""
    rng = np.random.default_rng(seed)
    attack.train(*tables(plant, rng, 100), TARGET, rng=np.random.default_rng(seed + 1))
    ins, outs = tables(plant, rng, 60)
    scores = attack.score([*ins, *outs])
    return auc(scores, np.repeat([1, 0], 60))


# -- the contract, for every registered attack ------------------------------------------------


def test_the_registry_holds_the_declared_attacks_in_order() -> None:
    assert attack_names() == ATTACK_NAMES
    assert set(ATTACKS) == set(ATTACK_NAMES)


@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_every_attack_keeps_the_contract(name: str) -> None:
    attack = create(name)
    assert attack.name == name and attack.title and attack.description
    with pytest.raises(ParameterError, match="prepare"):
        attack.features(population(np.random.default_rng(0), 5), TARGET)
    attack.prepare(context())
    rng = np.random.default_rng(3)
    first = attack.features(population(rng, M), TARGET)
    second = attack.features(population(rng, 17), TARGET)
    assert first.dtype == np.float32 and first.ndim == 1 and first.shape == second.shape
    assert np.isfinite(first).all() and np.isfinite(second).all()
    table = population(rng, M)
    np.testing.assert_array_equal(attack.features(table, TARGET), attack.features(table.copy(), TARGET))
    np.testing.assert_array_equal(
        attack.features_batch([table, table], TARGET)[1], attack.features(table, TARGET)
    )
    with pytest.raises(ParameterError, match="shape"):
        attack.features(table[:, :2], TARGET)
    with pytest.raises(ParameterError, match="trained"):
        create(name).prepare(context()).score([table])
    assert attack.describe()["attack"] == name


@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_every_attack_finds_the_signal_planted_for_it(name: str) -> None:
    attack = create(name).prepare(context())
    assert eval_auc(attack, SIGNALS[name], seed=11) >= 0.85


@pytest.mark.parametrize(
    ("blind", "signal"),
    [
        ("values", "marginal"),  # no exact value is shared: only the generator's bins see it
        ("tapas", "values"),  # >= queries cannot tell two rows with the exact values
        ("closest", "values"),  # two shared columns of six do not bring a row near
    ],
)
def test_an_attack_that_cannot_see_a_signal_does_not(blind: str, signal: str) -> None:
    attack = create(blind).prepare(context())
    assert eval_auc(attack, SIGNALS[signal], seed=12) <= 0.7


@pytest.mark.parametrize("signal", list(SIGNALS))
def test_the_portfolio_finds_every_signal(signal: str) -> None:
    portfolio = Portfolio([create(name) for name in ATTACK_NAMES]).prepare(context())
    rng = np.random.default_rng(21)
    ins, outs = tables(SIGNALS[signal], rng, 100)
    features = portfolio.features_batch([*ins, *outs], TARGET)
    chosen = portfolio.fit(features, np.repeat([1, 0], 100), root=0, key=1)
    assert set(chosen.held_out) == set(ATTACK_NAMES)
    # The best on held-out shadows, or TAPAS when the best beats it by no more than noise.
    assert chosen.held_out[chosen.name] == max(chosen.held_out.values()) or chosen.name == "tapas"
    ins, outs = tables(SIGNALS[signal], rng, 60)
    scores = chosen.score(portfolio.features_batch([*ins, *outs], TARGET))
    assert auc(scores, np.repeat([1, 0], 60)) >= 0.85
    halves = chosen.score_halves(portfolio.features_batch(ins, TARGET))
    assert halves is not None and halves.shape == (2, 60)


def test_the_marginal_attack_applies_to_marginal_generators_only() -> None:
    assert applicable(ATTACK_NAMES, create_generator("baynet")) == ATTACK_NAMES
    assert applicable(ATTACK_NAMES, create_generator("privbayes", epsilon=1.0)) == ATTACK_NAMES
    assert "marginal" not in applicable(ATTACK_NAMES, create_generator("synthpop"))


def test_parse_attacks_names_every_unknown_one() -> None:
    assert parse_attacks("all") == ATTACK_NAMES
    assert parse_attacks("closest, tapas") == ("tapas", "closest")
    with pytest.raises(ParameterError, match=r"unknown 'lira', 'x'.*tapas, values"):
        parse_attacks("tapas,lira,x")
    with pytest.raises(ParameterError, match="no attack named"):
        parse_attacks(" , ")
    with pytest.raises(ParameterError, match="Unknown attack 'lira'"):
        create("lira")


def test_the_portfolio_refuses_features_it_did_not_make() -> None:
    portfolio = Portfolio([create("closest"), create("density")]).prepare(context())
    with pytest.raises(ParameterError, match="features"):
        portfolio.fit(np.zeros((4, 3)), np.array([1, 1, 0, 0]), root=0, key=1)
    with pytest.raises(ParameterError, match="at least one attack"):
        Portfolio([])


def test_tapas_is_kept_unless_another_attack_beats_it_by_more_than_noise() -> None:
    portfolio = Portfolio([create(name) for name in ("tapas", "closest")])
    labels = np.repeat([1, 0], 100)
    # One standard error of a difference of two AUCs near 0.6 from 100 + 100 datasets is ~0.055.
    assert (
        portfolio.attacks[portfolio._prefer_tapas(1, {"tapas": 0.60, "closest": 0.63}, labels)].name
        == "tapas"
    )
    assert (
        portfolio.attacks[portfolio._prefer_tapas(1, {"tapas": 0.60, "closest": 0.75}, labels)].name
        == "closest"
    )
    assert portfolio._prefer_tapas(1, {"tapas": float("nan"), "closest": 0.61}, labels) == 1
    alone = Portfolio([create("closest"), create("density")])
    assert alone._prefer_tapas(1, {"closest": 0.6, "density": 0.61}, labels) == 1


def reference_gaps(
    synthetic: np.ndarray, target: np.ndarray, scales: np.ndarray, categorical: np.ndarray
) -> np.ndarray:
    """The (m, d) gap matrix, slowly: each cell on its own."""
    out = np.zeros(synthetic.shape)
    for i, row in enumerate(synthetic):
        for j, value in enumerate(row):
            out[i, j] = float(value != target[j]) if categorical[j] else abs(value - target[j]) / scales[j]
    return out


def test_distances_equal_the_sums_of_the_gap_matrix() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        m, d = rng.integers(0, 50), rng.integers(1, 9)
        categorical = rng.random(d) < 0.5
        rows = rng.integers(0, 4, (m, d)).astype(float) + rng.random((m, d)) * ~categorical
        target = rows[0] if m and rng.random() < 0.5 else rng.integers(0, 4, d).astype(float)
        scales = column_scales(rng.normal(size=(30, d)) * 3, categorical)
        matrix = reference_gaps(rows, target, scales, categorical)
        both = distances(rows, target, scales, categorical)
        np.testing.assert_allclose(both.l1, matrix.sum(axis=1), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(both.squared, (matrix**2).sum(axis=1), rtol=1e-12, atol=1e-12)
        assert np.array_equal(both.l1 == 0, matrix.sum(axis=1) == 0)


def test_the_portfolio_gives_each_distance_attack_its_own_features() -> None:
    ctx = context()
    pair = Portfolio([create("closest"), create("density")]).prepare(ctx)
    alone = [create(name).prepare(ctx) for name in ("closest", "density")]
    rng = np.random.default_rng(3)
    table = ctx.reference[rng.integers(0, len(ctx.reference), 60)]
    target = ctx.reference[0]
    expected = np.concatenate([attack.features(table, target) for attack in alone])
    assert np.array_equal(pair.features(table, target), expected)
