"""The units of work the engine runs on workers.

Two kinds of unit, both plain functions of picklable arguments so that any executor (local
processes, Dask) can run them:

* :func:`shared_chunk` makes a chunk of the synthetic datasets every target shares: shadow 'out'
  datasets (generators trained on D_aux rows) and the model-seeded 'in' datasets (generators
  trained on D itself).
* :func:`evaluate_target` does everything specific to one target record x: its shadow 'in'
  datasets, the attack (query features + meta-classifier), and both games' evaluation datasets,
  returning only the membership scores and labels.

Every random choice comes from ``stream(seed, key, role, index)`` with key 0 for shared work and
``record_id + 1`` for a target, so a result never depends on which worker ran it, or when.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privgame.attack import MetaClassifier, QuerySet
from privgame.data.schema import Schema
from privgame.games import plan
from privgame.generators import create
from privgame.generators.base import SyntheticGenerator
from privgame.seeding import Role, stream

__all__ = ["Context", "evaluate_target", "shared_chunk"]

SHARED = 0


@dataclass(frozen=True)
class Context:
    """Everything a unit needs, shipped to each worker once.

    Attributes
    ----------
    X : ndarray
        The encoded prepared table (all rows); record ids index its rows.
    schema : Schema
    aux, eval_pool, target, reference : ndarray
        Record ids of D_aux, D_eval, D and D_eval \\ D.
    generator, generator_params
        Registry name and parameters of the generator under audit.
    n_shadow, n_eval : int
        Numbers of shadow and evaluation datasets (half 'in', half 'out').
    classifier : str
        The meta-classifier kind.
    max_exact_columns : int
        Above this many columns the attack samples column subsets instead of using all of them.
    seed : int
        The run's root seed.
    shadow_size : int or None
        Rows of each shadow training dataset (``None``: |D|, as in the paper).
    shadow_replace : bool
        Whether shadow datasets are drawn from D_aux with replacement.
    """

    X: np.ndarray
    schema: Schema
    aux: np.ndarray
    eval_pool: np.ndarray
    target: np.ndarray
    reference: np.ndarray
    generator: str
    generator_params: dict[str, Any] = field(default_factory=dict)
    n_shadow: int = 200
    n_eval: int = 200
    classifier: str = "random_forest"
    max_exact_columns: int = 20
    seed: int = 0
    shadow_size: int | None = None
    shadow_replace: bool = False

    @property
    def n(self) -> int:
        """|D|: the size of every synthetic dataset, and of every training dataset but the shadows."""
        return len(self.target)

    @property
    def n_shadow_rows(self) -> int:
        """Rows of each shadow training dataset."""
        return self.n if self.shadow_size is None else int(self.shadow_size)

    def new_generator(self) -> SyntheticGenerator:
        """A fresh, unfitted generator under audit."""
        return create(self.generator, **self.generator_params)

    def queries(self) -> QuerySet:
        """The attack's counting queries (the same for every target of a run)."""
        return QuerySet.for_schema(
            self.schema.is_categorical,
            max_exact_columns=self.max_exact_columns,
            rng=stream(self.seed, SHARED, Role.QUERIES),
        )


def _synthesise(ctx: Context, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return ctx.new_generator().fit_sample(ctx.X[rows], ctx.schema, ctx.n, rng=rng)


def shared_chunk(ctx: Context, role: Role, start: int, stop: int) -> np.ndarray:
    """Make shared synthetic datasets ``start .. stop - 1`` of ``role``.

    Parameters
    ----------
    role : Role
        ``Role.SHADOW_OUT`` or ``Role.MS_IN``.

    Returns
    -------
    ndarray of shape (stop - start, n, d)
    """
    out = np.empty((stop - start, ctx.n, ctx.X.shape[1]))
    if role == Role.SHADOW_OUT:
        for k, i in enumerate(range(start, stop)):
            rng = stream(ctx.seed, SHARED, role, i)
            rows = plan.shadow_out_rows(rng, ctx.aux, ctx.n_shadow_rows, replace=ctx.shadow_replace)
            out[k] = _synthesise(ctx, rows, rng)
    elif role == Role.MS_IN:
        rows = plan.ms_in_rows(ctx.target)
        generator = ctx.new_generator()
        if getattr(generator, "deterministic_fit", False):
            # The fit does not depend on the seed: fit once, sample with each run's stream.
            generator.fit(ctx.X[rows], ctx.schema, rng=stream(ctx.seed, SHARED, role, start))
            for k, i in enumerate(range(start, stop)):
                out[k] = generator.sample(ctx.n, rng=stream(ctx.seed, SHARED, role, i))
        else:
            for k, i in enumerate(range(start, stop)):
                out[k] = _synthesise(ctx, rows, stream(ctx.seed, SHARED, role, i))
    else:
        raise ValueError(f"{role!r} is not a shared role")
    return out


def evaluate_target(
    ctx: Context, record_id: int, shadow_out: np.ndarray, ms_in: np.ndarray
) -> dict[str, np.ndarray]:
    """Train the attack on target ``record_id`` and play both games with it.

    Parameters
    ----------
    ctx : Context
    record_id : int
        The target record x (a row of ``ctx.X``, member of D).
    shadow_out : ndarray (N_shadow/2, n, d)
        The shared shadow 'out' synthetic datasets.
    ms_in : ndarray (N_eval/2, n, d)
        The shared model-seeded 'in' synthetic datasets.

    Returns
    -------
    dict of ndarray
        ``ms_scores``/``ms_labels`` and ``t_scores``/``t_labels`` (label 1 = 'in'), the
        ``ms_reference_ids`` used by the 'out' runs, and ``timings`` (seconds spent in generator
        fits and samples, query features, classifier training and scoring, and in total).
    """
    started = time.perf_counter()
    key = int(record_id) + 1
    x = ctx.X[record_id]
    queries = ctx.queries()
    half_shadow, half_eval = ctx.n_shadow // 2, ctx.n_eval // 2
    t_gen = t_feat = t_clf = 0.0

    def synth_and_features(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        nonlocal t_gen, t_feat
        t0 = time.perf_counter()
        synthetic = _synthesise(ctx, rows, rng)
        t1 = time.perf_counter()
        features = queries.features(synthetic, x)
        t_gen += t1 - t0
        t_feat += time.perf_counter() - t1
        return features

    def features_of(datasets: np.ndarray) -> np.ndarray:
        nonlocal t_feat
        t0 = time.perf_counter()
        features = queries.features_batch(list(datasets), x)
        t_feat += time.perf_counter() - t0
        return features

    # The attack: shadow 'in' datasets for x, shared shadow 'out' datasets.
    shadow_in = np.stack(
        [
            synth_and_features(
                plan.shadow_in_rows(
                    rng := stream(ctx.seed, key, Role.SHADOW_IN, i),
                    ctx.aux,
                    record_id,
                    ctx.n_shadow_rows,
                    replace=ctx.shadow_replace,
                ),
                rng,
            )
            for i in range(half_shadow)
        ]
    )
    train = np.concatenate([shadow_in, features_of(shadow_out)])
    labels = np.concatenate([np.ones(half_shadow, dtype=np.int8), np.zeros(len(shadow_out), dtype=np.int8)])
    t0 = time.perf_counter()
    classifier = MetaClassifier(ctx.classifier).fit(train, labels, rng=stream(ctx.seed, key, Role.CLASSIFIER))
    t_clf += time.perf_counter() - t0
    del train

    # Model-seeded game: shared 'in' datasets on D; 'out' datasets on D with x swapped out.
    ms_out_features = []
    references = np.empty(half_eval, dtype=np.int64)
    for i in range(half_eval):
        rng = stream(ctx.seed, key, Role.MS_OUT, i)
        rows, references[i] = plan.ms_out_rows(rng, ctx.target, ctx.reference, record_id)
        ms_out_features.append(synth_and_features(rows, rng))
    ms_features = np.concatenate([features_of(ms_in), np.stack(ms_out_features)])
    ms_labels = np.concatenate([np.ones(len(ms_in), dtype=np.int8), np.zeros(half_eval, dtype=np.int8)])

    # Traditional game: a fresh dataset from D_eval for every run.
    t_features = np.stack(
        [
            synth_and_features(
                plan.t_in_rows(rng := stream(ctx.seed, key, Role.T_IN, i), ctx.eval_pool, record_id, ctx.n),
                rng,
            )
            for i in range(half_eval)
        ]
        + [
            synth_and_features(
                plan.t_out_rows(rng := stream(ctx.seed, key, Role.T_OUT, i), ctx.eval_pool, record_id, ctx.n),
                rng,
            )
            for i in range(half_eval)
        ]
    )
    t_labels = np.repeat(np.array([1, 0], dtype=np.int8), half_eval)

    t0 = time.perf_counter()
    ms_scores = classifier.score(ms_features)
    t_scores = classifier.score(t_features)
    t_clf += time.perf_counter() - t0
    total = time.perf_counter() - started
    return {
        "ms_scores": ms_scores.astype(np.float64),
        "ms_labels": ms_labels,
        "t_scores": t_scores.astype(np.float64),
        "t_labels": t_labels,
        "ms_reference_ids": references,
        "timings": np.array([t_gen, t_feat, t_clf, total]),
    }
