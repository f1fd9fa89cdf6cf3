"""The meta-classifier that turns query features into a membership score.

It learns, from the features of shadow datasets whose membership is known, to tell datasets
generated with the target record ('in', label 1) from datasets generated without it ('out',
label 0). Columns that are zero on every training row are dropped, the rest are standardised
with the training mean and standard deviation, then a random forest (the default) or an
L2-regularised logistic regression is fitted.

Two more attacks of the same kind are trained on disjoint halves of the shadow datasets
(``halves_``). Scored on the same evaluation runs, the gap between their AUCs measures how much
the attack's own training moves a record's risk (:func:`privgame.core.metrics.training_variance`).

A random forest also measures how well the attack tells its own shadow datasets apart, on the
shadow datasets each tree did not see (out of bag): ``shadow_auc_``. Beside the attack's AUC on
the real evaluation runs it shows a shift between the two: an attack that separates its shadow
datasets well but not the real ones learnt something about how its shadows were drawn.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal, Self

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from privgame.core.errors import ParameterError
from privgame.core.seeding import sklearn_seed

__all__ = ["CLASSIFIER_KINDS", "MetaClassifier"]

ClassifierKind = Literal["random_forest", "logistic"]
CLASSIFIER_KINDS: tuple[str, ...] = ("random_forest", "logistic")


class MetaClassifier:
    """Predicts membership of the target record from a dataset's query features.

    Parameters
    ----------
    kind : {"random_forest", "logistic"}, default "random_forest"
        The model fitted on the standardised features.
    n_estimators : int, default 100
        Trees of the random forest.
    max_depth : int, default 10
        Maximum depth of each tree.
    C : float, default 0.001
        Inverse regularisation strength of the logistic regression.
    n_jobs : int, default 1
        Threads used by the random forest.
    halves : bool, default True
        Also train two attacks on disjoint halves of the shadow datasets (each class split by the
        parity of its rows' order), for :meth:`score_halves`.

    Attributes
    ----------
    kept_columns_ : ndarray of int64
        Indices of the feature columns kept (not zero on every training row).
    mean_, scale_ : ndarray of float32
        Training mean and standard deviation of the kept columns (a zero deviation becomes 1).
    model_ : RandomForestClassifier or LogisticRegression
        The fitted scikit-learn model.
    n_features_in_ : int
        Number of feature columns seen in :meth:`fit`.
    halves_ : tuple of two MetaClassifier, or None
        The attacks trained on the even and on the odd shadow datasets of each class; ``None``
        without ``halves`` or when a class has fewer than 4 shadow datasets.
    shadow_auc_ : float
        The random forest's out-of-bag AUC on its shadow datasets (each scored by the trees that
        did not train on it); ``nan`` for the logistic regression, or when too few shadow
        datasets were left out of bag to have both classes.
    """

    def __init__(
        self,
        kind: ClassifierKind = "random_forest",
        *,
        n_estimators: int = 100,
        max_depth: int = 10,
        C: float = 0.001,
        n_jobs: int = 1,
        halves: bool = True,
    ) -> None:
        self.kind = kind
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.C = C
        self.n_jobs = n_jobs
        self.halves = halves

    def fit(self, features: np.ndarray, labels: np.ndarray, *, rng: np.random.Generator) -> Self:
        """Fit on shadow features and their membership labels.

        Parameters
        ----------
        features : ndarray, shape (m, q)
            One row of query features per shadow dataset.
        labels : ndarray, shape (m,)
            1 where the shadow dataset was generated with the target record, 0 otherwise.
        rng : numpy.random.Generator
            Source of the model's seed.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            For an unknown ``kind``, bad hyper-parameters, mismatched shapes, labels other than
            0 and 1, or labels that do not contain both classes.
        """
        model = self._new_model(rng)
        features = np.asarray(features, dtype=np.float32)
        labels = np.asarray(labels)
        if features.ndim != 2 or features.shape[0] == 0:
            raise ParameterError(
                f"Features must be a non-empty 2-D array (datasets x queries), got shape {features.shape}."
            )
        if labels.shape != (features.shape[0],):
            raise ParameterError(
                f"There are {features.shape[0]} feature rows but labels have shape "
                f"{labels.shape}; pass one 0/1 label per row."
            )
        if not np.isin(labels, (0, 1)).all():
            raise ParameterError(
                "Labels must be 1 ('in': generated with the target) or 0 ('out'); found "
                f"{sorted(set(np.unique(labels).tolist()) - {0, 1})[:5]}."
            )
        labels = labels.astype(np.int64)
        if np.unique(labels).size < 2:
            raise ParameterError(
                f"The labels are all {int(labels[0])}: the meta-classifier needs both 'in' (1) "
                "and 'out' (0) shadow datasets; make half of them with the target record."
            )
        kept = np.flatnonzero((features != 0).any(axis=0))
        if kept.size == 0:
            # Every query is zero everywhere: nothing to learn, but keep one constant column so
            # the model still fits and predicts the class balance.
            kept = np.array([0], dtype=np.int64)
        x = features[:, kept]
        mean = x.mean(axis=0, dtype=np.float64)
        std = x.std(axis=0, dtype=np.float64)
        std[std == 0] = 1.0
        self.n_features_in_ = int(features.shape[1])
        self.kept_columns_ = kept.astype(np.int64)
        self.mean_ = mean.astype(np.float32)
        self.scale_ = std.astype(np.float32)
        x -= self.mean_
        x /= self.scale_
        with warnings.catch_warnings():
            # Few trees leave some rows in every bootstrap; those rows are skipped below.
            warnings.simplefilter("ignore", UserWarning)
            self.model_ = model.fit(x, labels)
        self.shadow_auc_ = self._out_of_bag_auc(labels)
        # Drawn after the full attack's seed, so the full attack is the same with or without them.
        self.halves_ = self._fit_halves(features, labels, rng) if self.halves else None
        return self

    def _fit_halves(
        self, features: np.ndarray, labels: np.ndarray, rng: np.random.Generator
    ) -> tuple[MetaClassifier, MetaClassifier] | None:
        """Two attacks on disjoint halves of the shadow datasets (even and odd rows of each class)."""
        rank = np.empty(len(labels), dtype=np.int64)
        for value in (0, 1):
            where = np.flatnonzero(labels == value)
            if where.size < 4:
                return None
            rank[where] = np.arange(where.size)
        parts = []
        for parity in (0, 1):
            rows = rank % 2 == parity
            half = MetaClassifier(
                self.kind,
                n_estimators=self.n_estimators,
                max_depth=self.max_depth,
                C=self.C,
                n_jobs=self.n_jobs,
                halves=False,
            )
            parts.append(half.fit(features[rows], labels[rows], rng=rng))
        return parts[0], parts[1]

    def add_halves(self, features: np.ndarray, labels: np.ndarray, *, rng: np.random.Generator) -> Self:
        """Train the half attacks of a classifier fitted without them, drawing from ``rng`` where
        its own fit left it: the same halves as ``fit`` with ``halves=True`` draws."""
        self.halves = True
        self.halves_ = self._fit_halves(np.asarray(features, dtype=np.float32), np.asarray(labels), rng)
        return self

    def score_halves(self, features: np.ndarray) -> np.ndarray | None:
        """The two half attacks' scores of each dataset, shape (2, m); ``None`` without them."""
        halves = getattr(self, "halves_", None)  # attacks pickled before halves existed have none
        if halves is None:
            return None
        return np.stack([half.score(features) for half in halves])

    def _out_of_bag_auc(self, labels: np.ndarray) -> float:
        """The forest's out-of-bag AUC on the training rows (then the per-row scores are dropped)."""
        from privgame.core.metrics import auc

        oob = getattr(self.model_, "oob_decision_function_", None)
        if oob is None:
            return math.nan
        del self.model_.oob_decision_function_  # n rows x 2 floats, not needed in the checkpoint
        column = int(np.flatnonzero(self.model_.classes_ == 1)[0])
        scores = oob[:, column]
        seen = np.isfinite(scores)
        return float(auc(scores[seen], labels[seen]))

    def score(self, features: np.ndarray) -> np.ndarray:
        """Probability that each dataset was generated with the target record.

        Parameters
        ----------
        features : ndarray, shape (m, q) or (q,)
            Query features of the datasets to score, in the layout used in :meth:`fit`.

        Returns
        -------
        ndarray of float64, shape (m,)
            The membership scores (probability of label 1).
        """
        if not hasattr(self, "model_"):
            raise ParameterError("The meta-classifier must be fitted before it can score.")
        features = np.asarray(features, dtype=np.float32)
        if features.ndim == 1:
            features = features[None, :]
        if features.ndim != 2 or features.shape[1] != self.n_features_in_:
            raise ParameterError(
                f"Features have shape {features.shape} but the meta-classifier was fitted on "
                f"{self.n_features_in_} queries; compute them with the same QuerySet."
            )
        x = features[:, self.kept_columns_]
        x -= self.mean_
        x /= self.scale_
        if isinstance(self.model_, LogisticRegression):
            # Row by row (an elementwise product summed along each row), not a matrix product
            # whose rounding can depend on how many rows are scored at once: a record's runs
            # scored in two blocks (an extension) get the same bytes as scored together.
            z = (x.astype(np.float64) * self.model_.coef_[0]).sum(axis=1) + float(self.model_.intercept_[0])
            p_one = 1.0 / (1.0 + np.exp(-z))
            return p_one if self.model_.classes_[1] == 1 else 1.0 - p_one
        proba = self.model_.predict_proba(x)
        column = int(np.flatnonzero(self.model_.classes_ == 1)[0])
        return proba[:, column].astype(np.float64)

    def _new_model(self, rng: np.random.Generator) -> RandomForestClassifier | LogisticRegression:
        if self.kind == "random_forest":
            if self.n_estimators < 1 or self.max_depth < 1 or self.n_jobs == 0:
                raise ParameterError(
                    f"The random forest needs n_estimators >= 1, max_depth >= 1 and n_jobs != 0; "
                    f"got {self.n_estimators}, {self.max_depth} and {self.n_jobs}."
                )
            return _Forest(
                n_estimators=self.n_estimators,
                max_depth=self.max_depth,
                random_state=sklearn_seed(rng),
                n_jobs=self.n_jobs,
                # The same trees as without it; adds the out-of-bag scores of shadow_auc_.
                oob_score=True,
            )
        if self.kind == "logistic":
            if not self.C > 0:
                raise ParameterError(f"C must be > 0, got {self.C}; the default is 0.001.")
            return LogisticRegression(C=self.C, max_iter=1000, random_state=sklearn_seed(rng))
        raise ParameterError(
            f"Unknown meta-classifier {self.kind!r}; choose one of {', '.join(CLASSIFIER_KINDS)}."
        )

    def __repr__(self) -> str:
        return (
            f"MetaClassifier(kind={self.kind!r}, n_estimators={self.n_estimators}, "
            f"max_depth={self.max_depth}, C={self.C}, n_jobs={self.n_jobs}, halves={self.halves})"
        )


class _Forest(RandomForestClassifier):
    """scikit-learn's random forest, whose out-of-bag predictions each tree makes on every row.

    scikit-learn scores each tree's out-of-bag rows by first copying them out of the feature
    matrix; with TAPAS' tens of thousands of query columns that copy, once per tree, took 8.7 s of a
    31,655-row target's 78 s (more than growing the trees). A tree reads only the few columns it
    splits on, so predicting every row and keeping the out-of-bag ones costs a fraction of it and
    gives the same bytes (``tests/attack/test_classifier.py`` checks them against scikit-learn's).
    Anything this does not cover (a scikit-learn whose private helper differs, several outputs,
    a sparse matrix) goes to scikit-learn's own.
    """

    def _set_oob_score_and_attributes(self, X: Any, y: np.ndarray, scoring_function: Any = None) -> None:
        oob = self._out_of_bag_predictions(X, y)
        if oob is None:
            super()._set_oob_score_and_attributes(X, y, scoring_function=scoring_function)
            return
        from sklearn.metrics import accuracy_score

        # As scikit-learn sets them (ForestClassifier._set_oob_score_and_attributes).
        self.oob_decision_function_ = oob.squeeze(axis=-1)
        score = accuracy_score if scoring_function is None else scoring_function
        self.oob_score_ = score(y, np.argmax(self.oob_decision_function_, axis=1))

    def _out_of_bag_predictions(self, X: Any, y: np.ndarray) -> np.ndarray | None:
        """scikit-learn's ``BaseForest._compute_oob_predictions`` without the copies, or None."""
        n_samples = int(y.shape[0])
        if self.n_outputs_ != 1 or not isinstance(X, np.ndarray):
            return None
        try:
            from sklearn.ensemble._forest import _generate_unsampled_indices

            n_bootstrap = self._n_samples_bootstrap
            weight = getattr(self, "_sample_weight", None)

            def unsampled(state: object) -> np.ndarray:
                try:
                    return _generate_unsampled_indices(state, n_samples, n_bootstrap, weight)
                except TypeError:  # scikit-learn before sample weights entered the bootstrap
                    return _generate_unsampled_indices(state, n_samples, n_bootstrap)  # type: ignore[call-arg]

            rows = [unsampled(tree.random_state) for tree in self.estimators_]
        except (ImportError, AttributeError, TypeError):
            return None
        classes = int(np.atleast_1d(self.n_classes_)[0])  # an array while fitting, an int after
        predictions = np.zeros((n_samples, classes, 1), dtype=np.float64)
        counts = np.zeros((n_samples, 1), dtype=np.int64)
        for tree, out in zip(self.estimators_, rows, strict=True):
            proba = np.asarray(tree.predict_proba(X, check_input=False))
            predictions[out, ...] += proba[out][..., np.newaxis]
            counts[out, :] += 1
        if (counts == 0).any():
            warnings.warn(
                "Some inputs do not have OOB scores. This probably means too few trees were used to "
                "compute any reliable OOB estimates.",
                UserWarning,
                stacklevel=2,
            )
            counts[counts == 0] = 1
        predictions[..., 0] /= counts[..., [0]]
        return predictions
