from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgame.core.errors import ParameterError
from privgame.data.encoding import encode
from privgame.data.schema import infer_schema
from privgame.settings.run_spec import TargetSelection
from privgame.settings.targets import gower_distances, nearest_neighbours, outlier_scores, select_targets


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 60
    df = pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue"], size=n),
            "size": rng.normal(10, 1, size=n).round(2),
        }
    )
    df.loc[5] = ["green", 40.0]  # a clear outlier: rare category and extreme value
    return df


def _slow_gower(a: np.ndarray, b: np.ndarray, is_cat: np.ndarray, ranges: np.ndarray) -> float:
    total = 0.0
    for j in range(len(a)):
        if is_cat[j]:
            total += float(a[j] != b[j])
        elif ranges[j] > 0:
            total += min(abs(a[j] - b[j]) / ranges[j], 1.0)
    return total / len(a)


def test_gower_distances_match_the_formula(table: pd.DataFrame) -> None:
    schema = infer_schema(table)
    X = encode(table, schema)
    fast = gower_distances(X[:7], X, schema)
    ranges = np.array([0.0, schema.column("size").upper - schema.column("size").lower])
    for i in range(7):
        for k in range(len(X)):
            assert fast[i, k] == pytest.approx(_slow_gower(X[i], X[k], schema.is_categorical, ranges))


def test_the_outlier_scores_highest_and_neighbours_exclude_the_record(table: pd.DataFrame) -> None:
    schema = infer_schema(table)
    X = encode(table, schema)
    scores = outlier_scores(X, schema)
    assert int(np.argmax(scores)) == 5
    positions, distances = nearest_neighbours(X[5], X, schema, k=3, exclude=5)
    assert 5 not in positions and len(positions) == 3
    assert np.all(np.diff(distances) >= 0)


def test_target_selection_modes(table: pd.DataFrame) -> None:
    schema = infer_schema(table)
    X = encode(table, schema)
    d = np.arange(0, 60, 2)
    assert np.array_equal(select_targets(TargetSelection("all", None), d, X, schema, seed=0), d)
    picked = select_targets(TargetSelection("random", 5), d, X, schema, seed=1)
    assert len(picked) == 5 and np.isin(picked, d).all()
    assert np.array_equal(picked, select_targets(TargetSelection("random", 5), d, X, schema, seed=1))
    assert not np.array_equal(picked, select_targets(TargetSelection("random", 5), d, X, schema, seed=2))
    assert np.array_equal(select_targets(TargetSelection("ids", None, (4, 2)), d, X, schema, seed=0), [2, 4])
    d_with_outlier = np.arange(0, 30)
    top = select_targets(TargetSelection("outliers", 1), d_with_outlier, X, schema, seed=0)
    assert top.tolist() == [5]


def test_target_selection_errors_name_the_fix(table: pd.DataFrame) -> None:
    schema = infer_schema(table)
    X = encode(table, schema)
    d = np.arange(0, 10)
    with pytest.raises(ParameterError, match=r"\[11\] are not in the target dataset D"):
        select_targets(TargetSelection("ids", None, (1, 11)), d, X, schema, seed=0)
    with pytest.raises(ParameterError, match="only 10"):
        select_targets(TargetSelection("random", 11), d, X, schema, seed=0)


def test_the_outlier_scores_of_d_are_computed_once_per_table(
    table: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame.settings.targets as targets

    schema = infer_schema(table)
    X = encode(table, schema)
    calls: list[int] = []
    real = targets.outlier_scores

    def counted(rows: np.ndarray, schema_: object, **kwargs: object) -> np.ndarray:
        calls.append(len(rows))
        return real(rows, schema_, **kwargs)

    monkeypatch.setattr(targets, "outlier_scores", counted)
    targets._SCORES.clear()
    ids = np.arange(len(table))
    plan = TargetSelection.plan(outliers=3, random=0)
    first = targets.audit_groups(plan, ids, X, schema, seed=0)
    again = targets.audit_groups(plan, ids, X, schema, seed=0)
    assert calls == [len(table)]
    np.testing.assert_array_equal(first["outlier"], again["outlier"])
    assert 5 in first["outlier"]
    # Other rows of D are other scores.
    targets.audit_groups(plan, ids[1:], X, schema, seed=0)
    assert calls == [len(table), len(table) - 1]
    cached = targets._scores_of_d(X, schema)
    np.testing.assert_array_equal(cached, real(X, schema))
    cached[:] = -1  # a caller's changes never reach the memo
    np.testing.assert_array_equal(targets._scores_of_d(X, schema), real(X, schema))


def test_a_kept_sample_is_the_random_group_and_must_come_from_d(table: pd.DataFrame) -> None:
    from dataclasses import replace

    from privgame.core.errors import ParameterError
    from privgame.settings.targets import audit_groups

    schema = infer_schema(table)
    X = encode(table, schema)
    ids = np.arange(len(table))
    plan = replace(TargetSelection.plan(outliers=2, random=3), sample_ids=(7, 3, 11))
    groups = audit_groups(plan, ids, X, schema, seed=0)
    assert groups["random"].tolist() == [3, 7, 11] and len(groups["outlier"]) == 2
    with pytest.raises(ParameterError, match=r"\[3\] of the fixed random sample are not in the target"):
        audit_groups(plan, ids[ids != 3], X, schema, seed=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_outlier_scores_equal_the_mean_of_the_k_nearest_by_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 120
    table = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.integers(0, 6, n).astype(float),  # few values: ties and exact twins
            "weight": rng.normal(0, 1, n).round(1),
            "kind": rng.choice(["a", "b"], n),
        }
    )
    schema = infer_schema(table)
    X = encode(table, schema)
    full = gower_distances(X, X, schema)
    np.fill_diagonal(full, np.inf)
    for k in (1, 5):
        expected = np.sort(full, axis=1)[:, :k].mean(axis=1)
        assert np.allclose(outlier_scores(X, schema, k=k), expected, rtol=0, atol=1e-12)
        positions = np.array([3, 0, 77])
        assert np.allclose(
            outlier_scores(X, schema, k=k, positions=positions), expected[positions], atol=1e-12
        )
