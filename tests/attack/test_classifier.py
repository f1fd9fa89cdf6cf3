"""The meta-classifier: preprocessing, learning, reproducibility and errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from privgame.attack.classifier import MetaClassifier
from privgame.core.errors import ParameterError
from privgame.core.seeding import stream


def toy(seed: int, m: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Column 1 carries the label, column 0 and 3 are zero, column 2 is constant, 4 is noise."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([1, 0], m // 2)
    x = np.zeros((m, 5), dtype=np.float32)
    x[:, 1] = labels * 3 + rng.normal(size=m)
    x[:, 2] = 7.0
    x[:, 4] = rng.normal(size=m)
    return x, labels


@pytest.mark.parametrize("kind", ["random_forest", "logistic"])
def test_learns_a_separable_signal(kind: str) -> None:
    x, y = toy(0)
    clf = MetaClassifier(kind).fit(x, y, rng=stream(1, 0))
    x_test, y_test = toy(1)
    scores = clf.score(x_test)
    assert scores.shape == (len(y_test),)
    assert np.all((scores >= 0) & (scores <= 1))
    # Rank-based: with C = 0.001 the logistic scores stay close to 0.5 but still order well.
    assert roc_auc_score(y_test, scores) > 0.9
    expected = RandomForestClassifier if kind == "random_forest" else LogisticRegression
    assert isinstance(clf.model_, expected)


def test_drops_all_zero_columns_and_standardises_with_training_moments() -> None:
    x, y = toy(2)
    clf = MetaClassifier().fit(x, y, rng=stream(1, 0))
    np.testing.assert_array_equal(clf.kept_columns_, [1, 2, 4])
    np.testing.assert_allclose(clf.mean_, x[:, [1, 2, 4]].mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(clf.scale_[[0, 2]], x[:, [1, 4]].std(axis=0), rtol=1e-5)
    assert clf.scale_[1] == 1.0  # constant column: std 0 becomes 1
    assert clf.model_.n_features_in_ == 3
    assert clf.model_.max_depth == 10 and clf.model_.n_estimators == 100


def test_logistic_uses_its_regularisation() -> None:
    x, y = toy(3)
    clf = MetaClassifier("logistic", C=0.5).fit(x, y, rng=stream(1, 0))
    assert clf.model_.C == 0.5


def test_same_seed_same_scores_and_other_seed_differs() -> None:
    x, y = toy(4)
    x_test, _ = toy(5)
    a = MetaClassifier().fit(x, y, rng=stream(9, 1)).score(x_test)
    b = MetaClassifier().fit(x, y, rng=stream(9, 1)).score(x_test)
    c = MetaClassifier().fit(x, y, rng=stream(9, 2)).score(x_test)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_all_zero_features_still_fit_and_give_one_uninformative_score() -> None:
    x = np.zeros((40, 4), dtype=np.float32)
    y = np.array([1] * 20 + [0] * 20)
    clf = MetaClassifier().fit(x, y, rng=stream(1, 0))
    scores = clf.score(np.arange(12, dtype=np.float32).reshape(3, 4))
    # Each tree predicts its bootstrap sample's class balance, so the mean is near 0.5.
    assert np.ptp(scores) == 0 and abs(scores[0] - 0.5) < 0.1


def test_errors_name_the_problem() -> None:
    x, y = toy(6)
    rng = stream(1, 0)
    with pytest.raises(ParameterError, match="both 'in' \\(1\\) and 'out' \\(0\\)"):
        MetaClassifier().fit(x, np.ones(len(x)), rng=rng)
    with pytest.raises(ParameterError, match="Labels must be 1"):
        MetaClassifier().fit(x, np.full(len(x), 2), rng=rng)
    with pytest.raises(ParameterError, match="one 0/1 label per row"):
        MetaClassifier().fit(x, y[:-1], rng=rng)
    with pytest.raises(ParameterError, match="Unknown meta-classifier 'svm'"):
        MetaClassifier("svm").fit(x, y, rng=rng)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="C must be > 0"):
        MetaClassifier("logistic", C=0).fit(x, y, rng=rng)
    with pytest.raises(ParameterError, match="fitted before"):
        MetaClassifier().score(x)
    clf = MetaClassifier().fit(x, y, rng=rng)
    with pytest.raises(ParameterError, match="fitted on 5 queries"):
        clf.score(x[:, :3])


@pytest.mark.parametrize("kind", ["random_forest", "logistic"])
def test_the_half_attacks_leave_the_full_attack_alone_and_score_every_dataset(kind: str) -> None:
    import pickle

    x, y = toy(0)
    with_halves = MetaClassifier(kind).fit(x, y, rng=stream(1, 0))
    without = MetaClassifier(kind, halves=False).fit(x, y, rng=stream(1, 0))
    x_test, _ = toy(1)
    np.testing.assert_array_equal(with_halves.score(x_test), without.score(x_test))
    halves = with_halves.score_halves(x_test)
    assert halves is not None and halves.shape == (2, len(x_test))
    assert not np.array_equal(halves[0], halves[1])  # trained on disjoint shadow datasets
    assert without.score_halves(x_test) is None
    # Each half trains on half of each class: the even and the odd rows of each.
    first, second = with_halves.halves_  # type: ignore[misc]
    assert first.n_features_in_ == second.n_features_in_ == x.shape[1]
    # An attack pickled before halves existed scores no halves.
    old = pickle.loads(pickle.dumps(without))
    del old.halves_
    assert old.score_halves(x_test) is None
    # Too few shadow datasets of a class to split: no halves.
    assert MetaClassifier(kind).fit(x[97:103], y[97:103], rng=stream(1, 0)).halves_ is None


def test_the_forest_measures_itself_out_of_bag() -> None:
    x, y = toy(0)
    forest = MetaClassifier().fit(x, y, rng=stream(1, 0))
    assert 0.9 < forest.shadow_auc_ <= 1.0  # the signal is strong on the shadows too
    assert not hasattr(forest.model_, "oob_decision_function_")  # not kept in the checkpoint
    noise = np.random.default_rng(3).normal(size=(200, 5)).astype(np.float32)
    assert 0.3 < MetaClassifier().fit(noise, y, rng=stream(1, 0)).shadow_auc_ < 0.7
    assert np.isnan(MetaClassifier("logistic").fit(x, y, rng=stream(1, 0)).shadow_auc_)


@pytest.mark.parametrize(("rows", "trees", "seed"), [(200, 100, 0), (57, 7, 1), (300, 30, 2)])
def test_the_out_of_bag_predictions_are_scikit_learns_to_the_bit(
    rows: int, trees: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib

    from sklearn.ensemble import _forest

    from privgame.attack.classifier import _Forest

    rng = stream(seed, 0, 0, 9)
    x = rng.normal(size=(rows, 40)).astype(np.float32)
    y = (x[:, 0] + rng.normal(size=rows) > 0).astype(np.int64)
    theirs = RandomForestClassifier(n_estimators=trees, max_depth=5, random_state=seed, oob_score=True)
    few = pytest.warns(UserWarning, match="OOB") if trees < 10 else contextlib.nullcontext()
    with few:  # with few trees some rows are in every bootstrap
        theirs.fit(x, y)

    def copies(*args: object) -> None:
        raise AssertionError("scikit-learn's out-of-bag predictions (with their copies) were used")

    # The forest's own path runs, not scikit-learn's.
    monkeypatch.setattr(_forest.BaseForest, "_compute_oob_predictions", copies)
    ours = _Forest(n_estimators=trees, max_depth=5, random_state=seed, oob_score=True)
    few = pytest.warns(UserWarning, match="OOB") if trees < 10 else contextlib.nullcontext()
    with few:
        ours.fit(x, y)
    assert ours.oob_decision_function_.tobytes() == theirs.oob_decision_function_.tobytes()
    assert ours.oob_score_ == theirs.oob_score_
    assert np.array_equal(ours.predict_proba(x), theirs.predict_proba(x))
