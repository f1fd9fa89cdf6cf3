"""The TAPAS query-based membership-inference attack, with the extensions of Meeus et al.

Threat model
------------
The attacker

* knows the generator and every one of its parameters (architecture, hyper-parameters,
  training procedure), and can run it as often as they like;
* holds auxiliary data ``D_aux`` drawn from the same population as the private training data
  ``D`` but disjoint from it;
* knows the target record ``x`` whose membership in ``D`` they want to infer;
* sees one synthetic dataset of ``n`` rows generated from ``D`` (black-box access to the
  released data only, not to the trained model).

The attack
----------
Shadow modelling: the attacker builds shadow training sets of ``n`` rows from ``D_aux``, half of
them with ``x`` ('in') and half without ('out'), runs the generator on each, and describes
every resulting synthetic dataset by the answers to counting queries around ``x`` (see
:mod:`privgame.attack.queries`). A meta-classifier (:mod:`privgame.attack.classifier`) learns
to tell 'in' from 'out'; its probability of 'in' on the released dataset is the membership
score ``s_x``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from privgame.attack.base import Attack, AttackContext, register
from privgame.attack.classifier import CLASSIFIER_KINDS, MetaClassifier
from privgame.attack.queries import DEFAULT_MAX_EXACT_COLUMNS, DEFAULT_N_RANDOM, QuerySet
from privgame.core.errors import ParameterError, SizeError
from privgame.core.seeding import Role, stream
from privgame.data.schema import Schema
from privgame.generators.base import SyntheticGenerator

__all__ = ["TapasAttack", "make_shadow_datasets"]


@register
class TapasAttack(Attack):
    """The TAPAS attack against one target record.

    Parameters
    ----------
    classifier : {"random_forest", "logistic"}, default "random_forest"
        The meta-classifier.
    max_exact_columns : int, default 20
        Tables with at most this many used columns get every subset of columns as a query;
        wider ones a random sample of subsets of orders 1 to 3.
    n_random : int, default 20,000
        Number of sampled subsets for wide tables.
    n_jobs : int, default 1
        Threads of the random forest.

    Attributes
    ----------
    query_set_ : QuerySet
        The queries (set by :meth:`fit`, or passed to :meth:`fit_features`).
    target_ : ndarray of float64
        The encoded target record (set by :meth:`fit`).
    classifier_ : MetaClassifier
        The fitted meta-classifier.
    """

    def __init__(
        self,
        *,
        classifier: str = "random_forest",
        max_exact_columns: int = DEFAULT_MAX_EXACT_COLUMNS,
        n_random: int = DEFAULT_N_RANDOM,
        n_jobs: int = 1,
    ) -> None:
        if classifier not in CLASSIFIER_KINDS:
            raise ParameterError(
                f"Unknown meta-classifier {classifier!r}; choose one of {', '.join(CLASSIFIER_KINDS)}."
            )
        self.classifier = classifier
        self.max_exact_columns = max_exact_columns
        self.n_random = n_random
        self.n_jobs = n_jobs

    name = "tapas"
    title = "TAPAS counting queries"
    description = (
        "how many synthetic rows match the record on every subset of its columns (the paper's attack)"
    )

    @property
    def classifier_kind(self) -> str:  # type: ignore[override]
        return self.classifier

    def new_classifier(self, *, halves: bool = True) -> MetaClassifier:
        return MetaClassifier(self.classifier, n_jobs=self.n_jobs, halves=halves)  # type: ignore[arg-type]

    def prepare(self, context: AttackContext) -> Self:
        """The run's queries: every subset of columns, or (wide tables) a sample seeded from the
        run's ``(seed, 0, Role.QUERIES)`` stream."""
        super().prepare(context)
        self.query_set_ = QuerySet.for_schema(
            context.is_categorical,
            max_exact_columns=context.max_exact_columns,
            n_random=self.n_random,
            rng=stream(context.seed, 0, Role.QUERIES),
        )
        return self

    def features(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The counting queries' answers on one table (:meth:`QuerySet.features`)."""
        if not hasattr(self, "query_set_"):
            raise ParameterError("Call prepare(context) or fit() on the TAPAS attack before features().")
        return self.query_set_.features(synthetic, target)

    def features_batch(self, datasets: Sequence[np.ndarray], target: np.ndarray) -> np.ndarray:
        if not hasattr(self, "query_set_"):
            raise ParameterError("Call prepare(context) or fit() on the TAPAS attack before features().")
        return self.query_set_.features_batch(datasets, target)

    def query_set(self, is_categorical: np.ndarray, *, rng: np.random.Generator | None = None) -> QuerySet:
        """The queries this attack uses on a table with these column roles.

        ``rng`` is needed only for tables wider than ``max_exact_columns``.
        """
        return QuerySet.for_schema(
            is_categorical,
            max_exact_columns=self.max_exact_columns,
            n_random=self.n_random,
            rng=rng,
        )

    def fit(
        self,
        shadow_datasets: Sequence[np.ndarray],
        labels: np.ndarray,
        target: np.ndarray,
        is_categorical: np.ndarray,
        *,
        rng: np.random.Generator,
    ) -> Self:
        """Compute the shadow datasets' features and fit the meta-classifier.

        Parameters
        ----------
        shadow_datasets : sequence of ndarray, each (n, d)
            Encoded synthetic datasets generated from shadow training sets.
        labels : ndarray, shape (len(shadow_datasets),)
            1 for datasets whose training set held the target, 0 otherwise.
        target : ndarray, shape (d,)
            The encoded target record.
        is_categorical : ndarray of bool, shape (d,)
            ``Schema.is_categorical``.
        rng : numpy.random.Generator
            Split into one stream for sampling queries (wide tables only) and one for the
            meta-classifier, so both are reproducible from a single seed.

        Returns
        -------
        self
        """
        query_rng, classifier_rng = rng.spawn(2)
        query_set = self.query_set(is_categorical, rng=query_rng)
        features = query_set.features_batch(shadow_datasets, target)
        self.target_ = np.array(target, dtype=np.float64)
        return self.fit_features(features, labels, rng=classifier_rng, query_set=query_set)

    def fit_features(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        *,
        rng: np.random.Generator,
        query_set: QuerySet | None = None,
    ) -> Self:
        """Fit the meta-classifier on precomputed shadow features.

        Parameters
        ----------
        features : ndarray, shape (m, n_features)
            Rows of :meth:`QuerySet.features`, one per shadow dataset.
        labels : ndarray, shape (m,)
            1 = 'in', 0 = 'out'.
        rng : numpy.random.Generator
            Source of the meta-classifier's seed.
        query_set : QuerySet, optional
            The queries that produced ``features``, kept so that :meth:`score` can be used.
        """
        if query_set is not None:
            self.query_set_ = query_set
        self.classifier_ = MetaClassifier(self.classifier, n_jobs=self.n_jobs).fit(features, labels, rng=rng)
        return self

    def score(self, datasets: Sequence[np.ndarray]) -> np.ndarray:
        """Membership scores ``s_x`` (probability of 'in') of encoded synthetic datasets."""
        if not hasattr(self, "target_") or not hasattr(self, "query_set_"):
            raise ParameterError(
                "The TAPAS attack must be trained (fit or train) before score(), which needs its queries "
                "and target; after fit_features() use score_features()."
            )
        return self.score_features(self.query_set_.features_batch(datasets, self.target_))

    def score_features(self, features: np.ndarray) -> np.ndarray:
        """Membership scores of datasets from their precomputed query features."""
        if not hasattr(self, "classifier_"):
            raise ParameterError("The attack must be fitted before it can score.")
        return self.classifier_.score(features)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready record of the attack's configuration, for a run's metadata."""
        out: dict[str, Any] = {
            "attack": "tapas",
            "classifier": self.classifier,
            "max_exact_columns": self.max_exact_columns,
            "n_random": self.n_random,
        }
        if hasattr(self, "query_set_"):
            out["queries"] = self.query_set_.describe()
        if hasattr(self, "classifier_"):
            out["kept_features"] = int(self.classifier_.kept_columns_.size)
        return out


def make_shadow_datasets(
    generator: SyntheticGenerator,
    aux: np.ndarray,
    schema: Schema,
    target: np.ndarray,
    *,
    n: int,
    n_shadow: int,
    root: int,
    target_index: int,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Build labelled shadow synthetic datasets for one target record.

    The first ``n_shadow // 2`` datasets are 'in': the generator is fitted on ``n - 1`` rows
    drawn without replacement from ``aux`` plus the target, in random order. The rest are
    'out': fitted on ``n`` rows of ``aux``. Each fit-and-sample of ``n`` rows uses its own
    stream, ``stream(root, target_index, Role.SHADOW_IN, i)`` or
    ``stream(root, target_index, Role.SHADOW_OUT, i)``.

    The 'out' datasets never look at ``target``: they depend only on the generator, ``aux``,
    ``n``, ``root``, ``target_index`` and ``i``. The run engine therefore makes them once per run
    (under one fixed ``target_index``) and reuses them for every target.

    Parameters
    ----------
    generator : SyntheticGenerator
        The generator the attacker knows; refitted for every dataset.
    aux : ndarray, shape (m, d)
        The attacker's encoded auxiliary data (disjoint from the private data, so it should not
        hold the target).
    schema : Schema
        The schema of the encoding.
    target : ndarray, shape (d,)
        The encoded target record.
    n : int
        Rows of each training set and of each synthetic dataset (the size of ``D``).
    n_shadow : int
        Total number of shadow datasets; must be even and at least 2.
    root : int
        The run's root seed.
    target_index : int
        The first element of the spawn paths.

    Returns
    -------
    datasets : list of ndarray, each (n, d)
        Encoded synthetic datasets, 'in' first.
    labels : ndarray of int64, shape (n_shadow,)
        1 for 'in', 0 for 'out'.

    Raises
    ------
    ParameterError
        For an odd or too small ``n_shadow``, ``n < 1``, or a target of the wrong shape.
    SizeError
        When ``aux`` has fewer than ``n`` rows.
    """
    aux = np.asarray(aux, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    d = len(schema.used)
    if n_shadow < 2 or n_shadow % 2:
        raise ParameterError(f"n_shadow must be an even number >= 2 (half 'in', half 'out'), got {n_shadow}.")
    if n < 1:
        raise ParameterError(f"The dataset size n must be >= 1, got {n}.")
    if aux.ndim != 2 or aux.shape[1] != d:
        raise ParameterError(f"The auxiliary data has shape {aux.shape}; the schema has {d} used columns.")
    if target.shape != (d,):
        raise ParameterError(
            f"The target record has shape {target.shape}; pass one encoded row of shape ({d},)."
        )
    if len(aux) < n:
        raise SizeError(
            f"The auxiliary data has {len(aux)} rows but each shadow dataset needs n={n}; "
            "use a larger D_aux or a smaller n."
        )
    half = n_shadow // 2
    datasets: list[np.ndarray] = []
    for i in range(half):
        rng = stream(root, target_index, Role.SHADOW_IN, i)
        rows = np.vstack([aux[rng.choice(len(aux), size=n - 1, replace=False)], target[None, :]])
        datasets.append(generator.fit_sample(rows[rng.permutation(n)], schema, n, rng=rng))
    for i in range(half):
        rng = stream(root, target_index, Role.SHADOW_OUT, i)
        rows = aux[rng.choice(len(aux), size=n, replace=False)]
        datasets.append(generator.fit_sample(rows, schema, n, rng=rng))
    labels = np.repeat(np.array([1, 0], dtype=np.int64), half)
    return datasets, labels
