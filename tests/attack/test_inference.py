"""The attribute-inference attacks (privgame.attack.inference): the vectorised predictions against
slow, obvious references on random tables, and the refusals of columns that cannot be secrets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgame.attack.inference import BAYES_PRIOR_WEIGHT, SecretAttack, secret_problems
from privgame.core.errors import ParameterError
from privgame.core.seeding import Role, stream
from privgame.data.encoding import encode
from privgame.data.schema import infer_schema


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n),
            "b": rng.choice(["p", "q"], n),
            "age": rng.integers(18, 90, n).astype(float) + rng.random(n).round(1),
            "secret": rng.choice(["s0", "s1", "s2", "s3"], n),
            "income": rng.normal(50.0, 20.0, n),
        }
    )


def _nearest_reference(attack: SecretAttack, synthetic: np.ndarray, x: np.ndarray) -> int:
    best, rows = np.inf, []
    for row in synthetic:
        d = 0.0
        for k, j in enumerate(attack.known):
            if attack.categorical[k]:
                d += float(row[j] != x[j])
            else:
                d += abs(row[j] - x[j]) / attack.scale[k]
        if d < best - 1e-12:
            best, rows = d, [row]
        elif abs(d - best) <= 1e-12:
            rows.append(row)
    counts = np.zeros(attack.n_classes)
    for row in rows:
        counts[attack.classes(np.array([row[attack.secret]]))[0]] += 1
    return int(np.argmax(counts))


def _bayes_reference(attack: SecretAttack, synthetic: np.ndarray, x: np.ndarray) -> int:
    labels = attack.classes(synthetic[:, attack.secret])
    levels = attack._levels(synthetic)
    target = attack._levels(x[None, :])[0]
    n, k, m = len(synthetic), attack.n_classes, BAYES_PRIOR_WEIGHT
    best, chosen = -np.inf, -1
    for c in range(k):
        in_class = labels == c
        score = np.log((in_class.sum() + 1) / (n + k))
        for col in range(len(attack.known)):
            v = attack.known_levels[col]
            share = ((levels[:, col] == target[col]).sum() + 1) / (n + v)
            hits = (levels[in_class, col] == target[col]).sum()
            score += np.log((hits + m * share) / (in_class.sum() + m))
        if score > best + 1e-12:
            best, chosen = score, c
    return chosen


@pytest.mark.parametrize("secret", ["secret", "income", "a"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_fast_predictions_match_the_slow_references(secret: str, seed: int) -> None:
    rng = stream(seed, 0, Role.QUERIES, 46)
    table = _table(rng, 300)
    schema = infer_schema(table)
    X = encode(table, schema)
    attack = SecretAttack.prepare(schema, secret, X[:150])
    synthetic, targets = X[150:260], X[260:]
    nearest = attack.predict_nearest(synthetic, targets)
    bayes = attack.predict_bayes(synthetic, targets)
    assert list(nearest) == [_nearest_reference(attack, synthetic, x) for x in targets]
    assert list(bayes) == [_bayes_reference(attack, synthetic, x) for x in targets]


def test_a_record_copied_into_the_release_has_its_secret_named_by_the_nearest_match() -> None:
    rng = stream(3, 0, Role.QUERIES, 46)
    table = _table(rng, 400)
    schema = infer_schema(table)
    X = encode(table, schema)
    attack = SecretAttack.prepare(schema, "secret", X[:200])
    members = X[200:300]
    correct = attack.correct(members, members)
    assert correct.shape == (3, 100)
    assert correct[0].all()  # every row's nearest match is itself (continuous ages make them unique)
    # The secret is independent of the other columns: the population's statistics name it about
    # a quarter of the time, never much more; the prior names the release's most frequent value.
    assert correct[1].mean() < 0.6
    labels = attack.classes(members[:, attack.secret])
    assert correct[2].mean() == pytest.approx(np.bincount(labels).max() / len(labels))


def test_a_continuous_secret_is_named_by_its_bin() -> None:
    rng = stream(4, 0, Role.QUERIES, 46)
    table = _table(rng, 300)
    schema = infer_schema(table)
    X = encode(table, schema)
    attack = SecretAttack.prepare(schema, "income", X)
    assert attack.secret_edges is not None and attack.n_classes == 10
    classes = attack.classes(X[:, attack.secret])
    assert classes.min() == 0 and classes.max() == 9
    assert np.bincount(classes).min() >= 25  # equal-count bins


def test_columns_that_cannot_be_secrets_are_refused_each_by_name() -> None:
    table = pd.DataFrame(
        {
            "id": np.arange(50),
            "constant": ["c"] * 50,
            "a": ["x", "y"] * 25,
            "b": np.arange(50) % 7,
        }
    )
    schema = infer_schema(table)
    problems = secret_problems(schema, ["missing", "id", "constant", "a", "a"])
    text = " ".join(problems)
    assert len(problems) == 4
    assert "'missing' is not in the table" in text
    assert "'id' is excluded" in text
    assert "named twice" in text
    assert "constant" in text
    with pytest.raises(ParameterError, match="cannot be attacked"):
        SecretAttack.prepare(schema, "id", encode(table, schema))


def _reconstruction_reference(attack: SecretAttack, rows: np.ndarray, x: np.ndarray) -> np.ndarray:
    known = list(attack.known)
    queries = [(a, b) for i, a in enumerate(known) for b in known[i:]]
    out = np.zeros((len(queries), attack.n_classes))
    for row in rows:
        c = attack.classes(np.array([row[attack.secret]]))[0]
        for q, (a, b) in enumerate(queries):
            if row[a] == x[a] and row[b] == x[b]:
                out[q, c] += 1
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_the_reconstruction_counts_match_a_slow_reference(seed: int) -> None:
    rng = stream(seed, 1, Role.QUERIES, 46)
    table = _table(rng, 200)
    table["age"] = table["age"].round()  # shared values, so that pairs match more than once
    schema = infer_schema(table)
    X = encode(table, schema)
    attack = SecretAttack.prepare(schema, "secret", X)
    for x in X[:5]:
        assert np.array_equal(
            attack.reconstruction_counts(X[5:], x), _reconstruction_reference(attack, X[5:], x)
        )


def test_reconstruction_names_every_secret_from_a_release_that_is_d() -> None:
    """A release equal to D holds each record's values with its secret once more than the rest of
    D does: the attacker who knows the rest names every secret."""
    rng = stream(5, 1, Role.QUERIES, 46)
    table = _table(rng, 150)
    schema = infer_schema(table)
    X = encode(table, schema)
    attack = SecretAttack.prepare(schema, "secret", X)
    truth = attack.classes(X[:, attack.secret])
    named = [
        attack.predict_reconstruction(
            X, X[i], attack.reconstruction_counts(np.delete(X, i, axis=0), X[i]), len(X)
        )
        for i in range(len(X))
    ]
    assert np.array_equal(np.array(named), truth)
    # A release of other people's rows names them no better than the usual value does.
    others = encode(_table(stream(6, 1, Role.QUERIES, 46), 150), schema)
    blind = [
        attack.predict_reconstruction(
            others, X[i], attack.reconstruction_counts(np.delete(X, i, axis=0), X[i]), len(X)
        )
        for i in range(len(X))
    ]
    assert np.mean(np.array(blind) == truth) < 0.5
