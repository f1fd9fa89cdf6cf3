"""The TAPAS attack end to end on small Adult tables, and the shadow datasets it learns from."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from privgame.attack import TapasAttack, make_shadow_datasets
from privgame.core.errors import ParameterError, SizeError
from privgame.core.seeding import stream
from privgame.data.encoding import encode
from privgame.data.schema import Schema, infer_schema
from privgame.generators import SyntheticGenerator, create

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult.csv.gz"
N = 100  # rows of D and of every synthetic dataset


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, np.ndarray, Schema]:
    """1,000 auxiliary Adult rows and a target record that is unique among them."""
    table = pd.read_csv(ADULT, na_values=["?"]).dropna().reset_index(drop=True)
    schema = infer_schema(table)
    data = encode(table, schema)
    rows = data[stream(11, 0).permutation(len(data))[:1001]]
    target, aux = rows[0], rows[1:]
    assert not (aux == target).all(axis=1).any()  # the target is unique: aux does not hold it
    return aux, target, schema


class AuxOnlyMarginals(SyntheticGenerator):
    """Independent marginals learnt from a fixed pool, ignoring the training data it is given."""

    name = "aux-only-marginals"

    def __init__(self, pool: np.ndarray) -> None:
        self.pool = pool

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        self.schema_ = schema
        self.inner_ = create("marginals").fit(self.pool, schema, rng=rng)
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        return self.inner_.sample(n, rng=rng)


def run_attack(
    generator: SyntheticGenerator,
    aux: np.ndarray,
    target: np.ndarray,
    schema: Schema,
    *,
    root: int,
    n_shadow: int = 100,
    n_eval: int = 100,
    attack: TapasAttack | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit TAPAS on shadow datasets, then score fresh labelled datasets (other streams)."""
    shadows, labels = make_shadow_datasets(
        generator, aux, schema, target, n=N, n_shadow=n_shadow, root=root, target_index=0
    )
    evals, eval_labels = make_shadow_datasets(
        generator, aux, schema, target, n=N, n_shadow=n_eval, root=root, target_index=1
    )
    attack = attack or TapasAttack()
    attack.fit(shadows, labels, target, schema.is_categorical, rng=stream(root, 0, 7))
    return attack.score(evals), eval_labels


def test_identity_generator_leaks_a_unique_record(adult: tuple) -> None:
    aux, target, schema = adult
    scores, labels = run_attack(create("identity"), aux, target, schema, root=1)
    assert roc_auc_score(labels, scores) >= 0.95


def test_generator_that_ignores_its_training_data_gives_chance_auc(adult: tuple) -> None:
    aux, target, schema = adult
    # 'in' and 'out' datasets then have one distribution, so given the fitted classifier the eval
    # AUC is a Mann-Whitney statistic under the null: mean 1/2, standard deviation at most
    # sqrt((m + k + 1) / (12 m k)) for m 'in' and k 'out' datasets (ties only shrink it).
    n_eval = 200
    m = k = n_eval // 2
    sd = math.sqrt((m + k + 1) / (12 * m * k))  # 0.041
    scores, labels = run_attack(AuxOnlyMarginals(aux), aux, target, schema, root=2, n_eval=n_eval)
    assert abs(roc_auc_score(labels, scores) - 0.5) < 3 * sd


def test_one_seed_reproduces_the_whole_attack(adult: tuple) -> None:
    aux, target, schema = adult
    marginals = create("marginals")

    def attack_scores(root: int) -> np.ndarray:
        # Sampled queries (15 columns > 5) so that the query draw is covered by the seed too.
        attack = TapasAttack(max_exact_columns=5, n_random=200)
        scores, _ = run_attack(
            marginals, aux, target, schema, root=root, n_shadow=20, n_eval=10, attack=attack
        )
        assert attack.describe()["queries"]["n_features"] == 200
        return scores

    first, again, other = attack_scores(5), attack_scores(5), attack_scores(6)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_precomputed_features_give_the_same_scores(adult: tuple) -> None:
    aux, target, schema = adult
    shadows, labels = make_shadow_datasets(
        create("marginals"), aux, schema, target, n=50, n_shadow=10, root=3, target_index=0
    )
    direct = TapasAttack().fit(shadows, labels, target, schema.is_categorical, rng=stream(3, 9))
    queries = TapasAttack().query_set(schema.is_categorical)
    features = queries.features_batch(shadows, target)
    # fit() spends its rng on two spawned streams; the classifier uses the second.
    _, classifier_rng = stream(3, 9).spawn(2)
    split = TapasAttack().fit_features(features, labels, rng=classifier_rng)
    np.testing.assert_array_equal(direct.score(shadows), split.score_features(features))
    assert direct.describe()["queries"]["n_features"] == 32_767


def test_shadow_datasets_layout_and_target_independent_out_half(adult: tuple) -> None:
    aux, target, schema = adult
    identity = create("identity")
    datasets, labels = make_shadow_datasets(
        identity, aux, schema, target, n=30, n_shadow=6, root=4, target_index=2
    )
    np.testing.assert_array_equal(labels, [1, 1, 1, 0, 0, 0])
    assert all(d.shape == (30, aux.shape[1]) for d in datasets)
    holds_target = [bool((d == target).all(axis=1).any()) for d in datasets]
    assert holds_target == [True, True, True, False, False, False]
    # Another target, same streams: the 'out' half is unchanged, the 'in' half is not.
    again, _ = make_shadow_datasets(identity, aux, schema, aux[5], n=30, n_shadow=6, root=4, target_index=2)
    for a, b in zip(datasets[3:], again[3:], strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(datasets[0], again[0])


def test_errors_name_the_problem(adult: tuple) -> None:
    aux, target, schema = adult
    identity = create("identity")
    with pytest.raises(ParameterError, match="even number"):
        make_shadow_datasets(identity, aux, schema, target, n=10, n_shadow=3, root=0, target_index=0)
    with pytest.raises(SizeError, match="needs n=2000"):
        make_shadow_datasets(identity, aux, schema, target, n=2000, n_shadow=2, root=0, target_index=0)
    with pytest.raises(ParameterError, match="target record has shape"):
        make_shadow_datasets(identity, aux, schema, target[:3], n=10, n_shadow=2, root=0, target_index=0)
    with pytest.raises(ParameterError, match="Unknown meta-classifier 'tree'"):
        TapasAttack(classifier="tree")
    with pytest.raises(ParameterError, match=r"must be trained .* needs its queries"):
        TapasAttack().score([aux[:10]])
    with pytest.raises(ParameterError, match="fitted before it can score"):
        TapasAttack().score_features(np.zeros((1, 3)))
