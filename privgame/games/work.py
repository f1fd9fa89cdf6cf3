"""The units of work the engine runs on workers.

Two kinds of unit, both plain functions of picklable arguments so that any executor (local
processes, Dask) can run them:

* :func:`shared_chunk` makes a chunk of the synthetic datasets every target shares: shadow 'out'
  datasets (generators trained on D_aux rows) and the model-seeded 'in' datasets (generators
  trained on D itself).
* :func:`evaluate_target` does everything specific to one target record x: its shadow 'in'
  datasets, the attack (query features + meta-classifier), and both games' evaluation datasets,
  returning only the membership scores and labels. In the pooled traditional game
  (:mod:`privgame.games.pool`) it reads x's traditional features from the pool's units instead
  of training generators for them.

Every random choice comes from ``stream(seed, key, role, index)`` with key 0 for shared work and
``record_id + 1`` for a target, so a result never depends on which worker ran it, or when.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from privgame.attack import AttackContext, ChosenAttack, MetaClassifier, Portfolio, QuerySet
from privgame.attack import create as create_attack
from privgame.attack.inference import INFERENCE_ATTACKS, RECONSTRUCTION, SecretAttack, inference_attacks
from privgame.core.seeding import Role, stream
from privgame.data.schema import Schema
from privgame.games import live, plan, threat
from privgame.games.game import GAMES, MODEL_SEEDED, TRADITIONAL, played
from privgame.games.ladder import doublings
from privgame.games.threat import ThreatModel
from privgame.generators import create
from privgame.generators.base import SyntheticGenerator

if TYPE_CHECKING:
    from privgame.games.pool import TraditionalRuns

__all__ = [
    "Context",
    "chosen_attack",
    "d_key",
    "evaluate_target",
    "extend_target",
    "fit_ms_in_model",
    "play_games",
    "shared_chunk",
    "synthesise",
    "train_attack",
]

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
    synthetic_rows : int or None
        Rows of every synthetic dataset (``None``: |D|); see
        :attr:`privgame.settings.run_spec.Setup.synthetic_rows`.
    games : {"both", "model-seeded"}
        Which games the target units play.
    attacker : str
        The threat model's name (:mod:`privgame.games.threat`): how the shadow datasets are drawn.
    attacks : tuple of str
        The attacks of the portfolio (:mod:`privgame.attack.portfolio`), registry names; TAPAS
        alone (the paper's attack) is the default.
    secrets : tuple of str
        The secret columns of the attribute-inference game (:mod:`privgame.games.inference`),
        played on the model-seeded game's own synthetic datasets; empty: not played.
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
    synthetic_rows: int | None = None
    games: str = "both"
    attacker: str = "population"
    attacks: tuple[str, ...] = ("tapas",)
    secrets: tuple[str, ...] = ()

    @property
    def threat(self) -> ThreatModel:
        """The threat model the attack is trained under."""
        return threat.create(self.attacker)

    @property
    def n(self) -> int:
        """|D|: the size of every training dataset but the shadows."""
        return len(self.target)

    @property
    def n_synthetic(self) -> int:
        """Rows of every synthetic dataset: |D| unless the spec fixes them."""
        return self.n if self.synthetic_rows is None else int(self.synthetic_rows)

    @property
    def plays_traditional(self) -> bool:
        """Whether the target units play the traditional game too."""
        return TRADITIONAL in played(self.games)

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

    @property
    def single_attack(self) -> bool:
        """Whether the run uses TAPAS alone (the paper's attack)."""
        return tuple(self.attacks) == ("tapas",)

    def featuriser(self) -> Portfolio:
        """The run's attacks, prepared once per process and context: they turn a synthetic table
        into a target's features (:meth:`Portfolio.features`) and are trained on them
        (:meth:`Portfolio.fit`). TAPAS alone gives exactly its counting queries' features."""
        return _portfolio(self)

    def secret_attacks(self) -> tuple[SecretAttack, ...]:
        """The attribute-inference attacks on each secret, prepared once per process and context
        on the attacker's reference rows (D_aux)."""
        aux = hashlib.blake2b(np.ascontiguousarray(self.aux).tobytes(), digest_size=16).hexdigest()
        key = (aux, self.secrets, repr(self.schema.to_dict()))
        known = _SECRET_ATTACKS.get("key")
        if known is None or known[0] != key or known[1] is not self.X:
            prepared = tuple(SecretAttack.prepare(self.schema, s, self.X[self.aux]) for s in self.secrets)
            _SECRET_ATTACKS["key"] = known = (key, self.X, prepared)
        return known[2]

    @property
    def inference_attacks(self) -> tuple[str, ...]:
        """The inference attacks of the run's threat model (:func:`inference_attacks`)."""
        return inference_attacks(knows_d=threat.create(self.attacker).knows_d)

    def inferred(self, synthetic: np.ndarray, record_id: int) -> np.ndarray:
        """What each inference attack names as the record's secret (a class, see
        :meth:`SecretAttack.classes`) in ``synthetic``: int16 array (secrets, attacks), the
        attacks in the order of :attr:`inference_attacks`."""
        x = self.X[record_id][None, :]
        out = np.empty((len(self.secrets), len(self.inference_attacks)), dtype=np.int16)
        for s, attack in enumerate(self.secret_attacks()):
            out[s, : len(INFERENCE_ATTACKS)] = attack.predict(synthetic, x)[:, 0]
            if RECONSTRUCTION in self.inference_attacks:
                rest = self._rest_of_d(s, attack, record_id)
                out[s, len(INFERENCE_ATTACKS)] = attack.predict_reconstruction(synthetic, x[0], rest, self.n)
        return out

    def _rest_of_d(self, s: int, attack: SecretAttack, record_id: int) -> np.ndarray:
        """The reconstruction attack's counts of D without the record (kept for the last few
        records a process worked on: every run of a record uses them)."""
        key = ("rest", d_key(self), self.secrets[s], int(record_id))
        with _REST_LOCK:
            cached = _REST_OF_D.get(key)
        if cached is None:
            others = self.X[self.target[self.target != record_id]]
            cached = attack.reconstruction_counts(others, self.X[record_id])
            with _REST_LOCK:
                _REST_OF_D[key] = cached
                while len(_REST_OF_D) > 16:
                    _REST_OF_D.pop(next(iter(_REST_OF_D)))
        return cached


_SECRET_ATTACKS: dict[str, tuple[Any, np.ndarray, tuple[SecretAttack, ...]]] = {}
_REST_OF_D: dict[tuple[Any, ...], np.ndarray] = {}
_REST_LOCK = threading.Lock()
_PORTFOLIOS: dict[str, Portfolio] = {}


def _portfolio(ctx: Context) -> Portfolio:
    """The run's prepared portfolio, cached by what it is prepared from."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(d_key(ctx).encode())
    digest.update(np.ascontiguousarray(ctx.X[ctx.aux]).tobytes())
    digest.update(
        repr(
            (
                ctx.seed,
                ctx.attacks,
                ctx.generator,
                sorted(ctx.generator_params.items()),
                ctx.n_synthetic,
                ctx.max_exact_columns,
                ctx.classifier,
            )
        ).encode()
    )
    key = digest.hexdigest()
    known = _PORTFOLIOS.get(key)
    if known is None:
        context = AttackContext(
            schema=ctx.schema,
            reference=ctx.X[ctx.aux],
            generator=ctx.new_generator(),
            n=ctx.n_synthetic,
            seed=ctx.seed,
            max_exact_columns=ctx.max_exact_columns,
        )
        attacks = [
            create_attack(name, classifier=ctx.classifier) if name == "tapas" else create_attack(name)
            for name in ctx.attacks
        ]
        known = Portfolio(attacks).prepare(context)
        _PORTFOLIOS.clear()  # one run at a time per process
        _PORTFOLIOS[key] = known
    return known


def synthesise(ctx: Context, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Train the generator under audit on ``rows`` and sample ``ctx.n_synthetic`` rows, both with
    ``rng``; the fit counts towards the run's progress (:func:`privgame.games.live.fit_done`)."""
    synthetic = ctx.new_generator().fit_sample(ctx.X[rows], ctx.schema, ctx.n_synthetic, rng=rng)
    live.fit_done()
    return synthetic


_LOCAL = threading.local()
"""Each thread's models on D: a refit fills caches on its base, so threads (a Dask worker run
with several) never share one."""
_BASES_KEPT = 2


_D_KEYS: OrderedDict[tuple[int, int], tuple[weakref.ref[np.ndarray], weakref.ref[np.ndarray], str]] = (
    OrderedDict()
)


def d_key(ctx: Context) -> str:
    """A fingerprint of D's encoded rows and schema, hashed once per context's arrays (the same
    arrays, alive, are the same D; a context unpickled afresh is hashed again)."""
    ids = (id(ctx.X), id(ctx.target))
    known = _D_KEYS.get(ids)
    if known is not None and known[0]() is ctx.X and known[1]() is ctx.target:
        return known[2]
    digest = hashlib.blake2b(digest_size=16)
    digest.update(np.ascontiguousarray(ctx.X[plan.ms_in_rows(ctx.target)]).tobytes())
    digest.update(repr(ctx.schema.to_dict()).encode())
    key = digest.hexdigest()
    _D_KEYS[ids] = (weakref.ref(ctx.X), weakref.ref(ctx.target), key)
    while len(_D_KEYS) > 8:
        _D_KEYS.popitem(last=False)
    return key


def _base_on_d(ctx: Context) -> SyntheticGenerator | None:
    """The generator fitted on D that one-row refits start from (kept per process), or None when
    the generator has no ``refit_swap`` (a fresh fit is then made for every swapped dataset).

    ``refit_swap`` returns what a fresh fit on the swapped rows with the given ``rng`` returns,
    whatever stream the base was fitted with, so the base's own stream does not matter.
    """
    key = (ctx.generator, repr(sorted(ctx.generator_params.items())), d_key(ctx))
    bases: OrderedDict[tuple[Any, ...], SyntheticGenerator | None] = _LOCAL.__dict__.setdefault(
        "bases", OrderedDict()
    )
    if key not in bases:
        generator = ctx.new_generator()
        if callable(getattr(generator, "refit_swap", None)):
            rows = ctx.X[plan.ms_in_rows(ctx.target)]
            bases[key] = generator.fit(rows, ctx.schema, rng=stream(ctx.seed, SHARED, Role.GENERATOR))
        else:
            bases[key] = None  # remembered too: the check is not made again for every dataset
        while len(bases) > _BASES_KEPT:
            bases.popitem(last=False)
    bases.move_to_end(key)
    return bases[key]


def synthesise_swapped(
    ctx: Context, rows: np.ndarray, record_id: int, reference_id: int, rng: np.random.Generator
) -> np.ndarray:
    """:func:`synthesise` on ``rows``, D with ``record_id`` swapped for ``reference_id`` in place.

    A generator with ``refit_swap`` (an exact one-row refit of its model on D) is refitted from
    the model on D instead of fitted afresh; the contract of ``refit_swap`` makes the two give
    the same synthetic data, bit for bit, so a run's results do not depend on which is used.
    """
    base = _base_on_d(ctx)
    if base is None:
        return synthesise(ctx, rows, rng)
    position = int(np.flatnonzero(ctx.target == record_id)[0])
    model = base.refit_swap(position, ctx.X[reference_id], rng=rng)  # type: ignore[attr-defined]
    synthetic = model.sample(ctx.n_synthetic, rng=rng)
    live.fit_done()  # the plan counts a refit as the fit it stands for
    return synthetic


def shared_chunk(
    ctx: Context, role: Role, start: int, stop: int, model: SyntheticGenerator | None = None
) -> np.ndarray:
    """Make shared synthetic datasets ``start .. stop - 1`` of ``role``.

    Parameters
    ----------
    role : Role
        ``Role.MS_IN`` (the model-seeded 'in' datasets, the generator on D), or the threat model's
        shared shadow role (:attr:`~privgame.games.threat.ThreatModel.shared_role`):
        ``Role.SHADOW_OUT`` for the population attacker (D_aux rows), ``Role.SHADOW_IN`` for the
        leave-one-out attacker (the generator on D, with streams of its own).
    model : SyntheticGenerator, optional
        A role trained on D with a generator whose fit is deterministic: the model already fitted
        on D (see :func:`fit_ms_in_model`), sampled here without fitting again.

    Returns
    -------
    ndarray of shape (stop - start, n, d)
    """
    out = np.empty((stop - start, ctx.n_synthetic, ctx.X.shape[1]))
    if role == Role.SHADOW_OUT and ctx.threat.shared_role == Role.SHADOW_OUT:
        for k, i in enumerate(range(start, stop)):
            rng = stream(ctx.seed, SHARED, role, i)
            out[k] = synthesise(ctx, ctx.threat.shared_rows(ctx, rng), rng)
    elif role == Role.MS_IN or (role == Role.SHADOW_IN and ctx.threat.shared_role == Role.SHADOW_IN):
        rows = plan.ms_in_rows(ctx.target)
        generator = model if model is not None else ctx.new_generator()
        if model is not None or getattr(generator, "deterministic_fit", False):
            # The fit does not depend on the seed: fit once, sample with each run's stream.
            if model is None:
                generator.fit(ctx.X[rows], ctx.schema, rng=stream(ctx.seed, SHARED, role, start))
            for k, i in enumerate(range(start, stop)):
                out[k] = generator.sample(ctx.n_synthetic, rng=stream(ctx.seed, SHARED, role, i))
        else:
            for k, i in enumerate(range(start, stop)):
                out[k] = synthesise(ctx, rows, stream(ctx.seed, SHARED, role, i))
    else:
        raise ValueError(f"{role!r} is not a shared role of the {ctx.attacker} attacker")
    return out


def fit_ms_in_model(ctx: Context) -> SyntheticGenerator | None:
    """The model-seeded game's model on D, fitted once, for a generator whose fit is deterministic.

    Handing it to every model-seeded 'in' chunk makes the run's single fit on D the one its
    plan counts. None when the generator's fit is not deterministic, or the fitted model cannot
    be sent to a worker (it does not pickle); each chunk then fits its own.
    """
    generator = ctx.new_generator()
    if not getattr(generator, "deterministic_fit", False):
        return None
    generator.fit(ctx.X[plan.ms_in_rows(ctx.target)], ctx.schema, rng=stream(ctx.seed, SHARED, Role.MS_IN, 0))
    try:
        pickle.dumps(generator, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a plug-in's model may hold what cannot travel; the chunks then fit it
        return None
    return generator


class _Clock:
    """Seconds spent in generator fits and samples, query features and the classifier."""

    def __init__(self) -> None:
        self.generator = self.features = self.classifier = 0.0


def _features(
    ctx: Context,
    queries: Portfolio,
    x: np.ndarray,
    rows: np.ndarray,
    rng: np.random.Generator,
    clock: _Clock,
    swap: tuple[int, int] | None = None,
    inferred: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Features of x on the generator trained on ``rows`` (``swap``: D with (record, reference)
    swapped, which a generator with ``refit_swap`` refits from its model on D); with ``inferred``,
    what the inference attacks name as the record's secret there is appended to it."""
    t0 = time.perf_counter()
    synthetic = synthesise(ctx, rows, rng) if swap is None else synthesise_swapped(ctx, rows, *swap, rng)
    t1 = time.perf_counter()
    features = queries.features(synthetic, x)
    if inferred is not None and swap is not None:
        inferred.append(ctx.inferred(synthetic, swap[0]))
    clock.generator += t1 - t0
    clock.features += time.perf_counter() - t1
    return features


def _features_of(
    queries: Portfolio, x: np.ndarray, datasets: Sequence[np.ndarray], clock: _Clock
) -> np.ndarray:
    t0 = time.perf_counter()
    # One table at a time: shared datasets held column by column are decoded as they are read.
    features = queries.features_batch(datasets, x)
    clock.features += time.perf_counter() - t0
    return features


def train_attack(
    ctx: Context, record_id: int, shared: Sequence[np.ndarray], clock: _Clock | None = None
) -> ChosenAttack:
    """The attack on target ``record_id`` under the run's threat model.

    The target's own shadow datasets (the population attacker's 'in', the leave-one-out
    attacker's 'out'; see :mod:`privgame.games.threat`) are made here; ``shared`` holds the
    synthetic datasets every target shares. The meta-classifier is trained on the features of all
    of them, 'in' rows first, then 'out': TAPAS' alone, or every attack of the portfolio, of
    which the one with the best held-out AUC on these shadow datasets is kept
    (:meth:`Portfolio.fit`).
    """
    clock = clock or _Clock()
    key = int(record_id) + 1
    x = ctx.X[record_id]
    queries = ctx.featuriser()
    model = ctx.threat
    half_shadow = ctx.n_shadow // 2
    own = []
    for i in range(half_shadow):
        rng = stream(ctx.seed, key, model.own_role, i)
        rows, reference = model.own_rows(ctx, rng, record_id)
        swap = None if reference < 0 else (int(record_id), int(reference))
        own.append(_features(ctx, queries, x, rows, rng, clock, swap))
    own_features = np.stack(own)
    shared_features = _features_of(queries, x, shared, clock)
    if model.shared_label == 1:
        train = np.concatenate([shared_features, own_features])
        n_in, n_out = len(shared_features), half_shadow
    else:
        train = np.concatenate([own_features, shared_features])
        n_in, n_out = half_shadow, len(shared_features)
    labels = np.concatenate([np.ones(n_in, dtype=np.int8), np.zeros(n_out, dtype=np.int8)])
    t0 = time.perf_counter()
    classifier = queries.fit(train, labels, root=ctx.seed, key=key)
    clock.classifier += time.perf_counter() - t0
    return classifier


def play_games(
    ctx: Context,
    record_id: int,
    classifier: MetaClassifier | ChosenAttack,
    ms_in: Sequence[np.ndarray],
    start: int,
    stop: int,
    clock: _Clock | None = None,
    traditional: TraditionalRuns | None = None,
) -> dict[str, np.ndarray]:
    """Evaluation runs ``start .. stop - 1`` of both games for target ``record_id``.

    Every run's randomness comes from its own index, so runs ``0 .. k`` played at once or in
    several blocks give the same scores.

    Parameters
    ----------
    ms_in : sequence of ndarray (stop - start tables of shape (n, d))
        The shared model-seeded 'in' datasets of these indices.
    traditional : TraditionalRuns, optional
        In the pooled traditional game, these runs' features from the pool (and which of them
        are per-target draws); by default every traditional run trains its own generator.

    Returns
    -------
    dict of ndarray
        ``ms_in``, ``ms_out``, ``t_in``, ``t_out`` (the scores of each role's runs, in index
        order) and ``ms_reference_ids``; in the pooled game also ``t_in_ids`` and ``t_out_ids``
        (the pool index of each traditional run, -1 for a per-target draw); with half attacks
        (:meth:`MetaClassifier.score_halves`) also ``ms_half_in`` and ``ms_half_out``, shape
        (2, runs).
    """
    clock = clock or _Clock()
    key = int(record_id) + 1
    x = ctx.X[record_id]
    queries = ctx.featuriser()
    indices = range(start, stop)
    references = np.empty(len(indices), dtype=np.int64)
    ms_out = []
    inferred_out: list[np.ndarray] | None = [] if ctx.secrets else None
    for k, i in enumerate(indices):
        rng = stream(ctx.seed, key, MODEL_SEEDED.out_role, i)
        rows, references[k] = MODEL_SEEDED.out_rows(ctx, rng, record_id)
        swap = (int(record_id), int(references[k]))
        ms_out.append(_features(ctx, queries, x, rows, rng, clock, swap, inferred_out))
    t_in: list[np.ndarray]
    t_out: list[np.ndarray]
    if not ctx.plays_traditional:
        t_in = t_out = []
    elif traditional is None:
        t_in = _traditional_runs(ctx, queries, record_id, True, indices, clock)
        t_out = _traditional_runs(ctx, queries, record_id, False, indices, clock)
    else:
        if (traditional.start, traditional.stop) != (start, stop):
            raise ValueError(
                f"the pooled runs {traditional.start}..{traditional.stop} do not match runs {start}..{stop}"
            )
        t0 = time.perf_counter()
        pool_in, pool_out = traditional.pool_features()
        clock.features += time.perf_counter() - t0
        n_extra_in = int((traditional.in_ids < 0).sum())
        n_extra_out = int((traditional.out_ids < 0).sum())
        extra_in = range(traditional.in_extra, traditional.in_extra + n_extra_in)
        extra_out = range(traditional.out_extra, traditional.out_extra + n_extra_out)
        t_in = [*pool_in, *_traditional_runs(ctx, queries, record_id, True, extra_in, clock)]
        t_out = [*pool_out, *_traditional_runs(ctx, queries, record_id, False, extra_out, clock)]
    parts = [_features_of(queries, x, ms_in, clock), np.stack(ms_out)]
    if t_in:
        parts += [np.stack(t_in), np.stack(t_out)]
    features = np.concatenate(parts)
    t0 = time.perf_counter()
    scores = classifier.score(features).astype(np.float64)
    m = len(indices)
    halves = classifier.score_halves(features[: 2 * m])
    clock.classifier += time.perf_counter() - t0
    ms, t = MODEL_SEEDED.array, TRADITIONAL.array
    block = {
        ms("in"): scores[:m],
        ms("out"): scores[m : 2 * m],
        # Empty when the traditional game is not played.
        t("in"): scores[2 * m : 3 * m],
        t("out"): scores[3 * m :],
        ms("reference_ids"): references,
    }
    if halves is not None:
        # The half attacks' scores of the model-seeded runs (privgame.core.metrics.training_variance).
        block[ms("half_in")], block[ms("half_out")] = halves[:, :m], halves[:, m:]
    if traditional is not None:
        block[t("in_ids")] = np.asarray(traditional.in_ids, dtype=np.int64)
        block[t("out_ids")] = np.asarray(traditional.out_ids, dtype=np.int64)
    if inferred_out is not None:
        # What the inference attacks named as the record's secret in each model-seeded run.
        t0 = time.perf_counter()
        block["inferred_in"] = np.stack([ctx.inferred(table, int(record_id)) for table in ms_in])
        block["inferred_out"] = np.stack(inferred_out)
        clock.features += time.perf_counter() - t0
    return block


def _traditional_runs(
    ctx: Context, queries: Portfolio, record_id: int, member: bool, indices: range, clock: _Clock
) -> list[np.ndarray]:
    """The features of the target's own traditional runs ``indices``, 'in' runs when ``member``
    (per-target draws)."""
    game = TRADITIONAL
    role = game.in_role if member else game.out_role
    key = int(record_id) + 1
    x = ctx.X[record_id]
    features = []
    for i in indices:
        rng = stream(ctx.seed, key, role, i)
        rows = game.in_rows(ctx, rng, record_id) if member else game.out_rows(ctx, rng, record_id)[0]
        features.append(_features(ctx, queries, x, rows, rng, clock))
    return features


def _checkpoint(
    blocks: list[dict[str, np.ndarray]],
    classifier: np.ndarray,
    timings: np.ndarray,
    *,
    looks: int,
    shadow_auc: float,
    chosen: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    def joined(name: str) -> np.ndarray:
        return np.concatenate([b[name] for b in blocks])

    out: dict[str, np.ndarray] = {}
    for game in GAMES:
        runs_in, runs_out = joined(game.array("in")), joined(game.array("out"))
        out[game.array("scores")] = np.concatenate([runs_in, runs_out])
        out[game.array("labels")] = np.repeat(np.array([1, 0], dtype=np.int8), len(runs_in))
    ms, t = MODEL_SEEDED.array, TRADITIONAL.array
    out |= {
        ms("reference_ids"): joined(ms("reference_ids")),
        "classifier": classifier,
        "timings": timings,
        # How many times the record's verdict has been read (see privgame.core.metrics.look_level).
        "looks": np.array(looks, dtype=np.int64),
        "shadow_auc": np.array(shadow_auc, dtype=np.float64),
        **(chosen or {}),
    }
    if all(ms("half_in") in b for b in blocks):
        # The two half attacks' scores of the model-seeded runs, each row ordered like ms_scores.
        half_in = np.concatenate([b[ms("half_in")] for b in blocks], axis=1)
        half_out = np.concatenate([b[ms("half_out")] for b in blocks], axis=1)
        out[ms("half_scores")] = np.concatenate([half_in, half_out], axis=1)
    if all(t("in_ids") in b for b in blocks):
        # Which pool dataset each traditional run used (-1: the target's own draw), like t_scores.
        out[t("pool_index")] = np.concatenate([joined(t("in_ids")), joined(t("out_ids"))])
    if blocks and all("inferred_in" in b for b in blocks):
        # What each inference attack named as each secret, run by run (runs, secrets, attacks),
        # ordered like ms_scores: the 'in' runs, then the 'out' runs.
        out["inferred"] = np.concatenate([joined("inferred_in"), joined("inferred_out")])
    return out


def _split_checkpoint(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A checkpoint's runs by role (the inverse of :func:`_checkpoint`)."""
    ms, t = MODEL_SEEDED.array, TRADITIONAL.array
    h = len(data[ms("scores")]) // 2
    out = {ms("reference_ids"): data[ms("reference_ids")]}
    for game in GAMES:
        scores = data[game.array("scores")]
        out[game.array("in")], out[game.array("out")] = scores[:h], scores[h:]
    if t("pool_index") in data:
        out[t("in_ids")], out[t("out_ids")] = data[t("pool_index")][:h], data[t("pool_index")][h:]
    if ms("half_scores") in data:
        halves = data[ms("half_scores")]
        out[ms("half_in")], out[ms("half_out")] = halves[:, :h], halves[:, h:]
    if "inferred" in data:
        out["inferred_in"], out["inferred_out"] = data["inferred"][:h], data["inferred"][h:]
    return out


def evaluate_target(
    ctx: Context,
    record_id: int,
    shadow_out: Sequence[np.ndarray],
    ms_in: Sequence[np.ndarray],
    traditional: TraditionalRuns | None = None,
    attack: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Train the attack on target ``record_id`` and play both games with it.

    Parameters
    ----------
    ctx : Context
    record_id : int
        The target record x (a row of ``ctx.X``, member of D).
    shadow_out : sequence of ndarray (N_shadow/2 tables of shape (n, d))
        The shared shadow synthetic datasets of the threat model (the population attacker's
        'out' datasets, the leave-one-out attacker's 'in' datasets).
    ms_in : sequence of ndarray (N_eval/2 tables of shape (n, d))
        The shared model-seeded 'in' synthetic datasets.
    attack : ndarray of uint8, optional
        The target's meta-classifier already trained by a run with the same D_aux, seed and
        dataset sizes (pickled, as a checkpoint holds it): a remedy's re-audit reuses it instead
        of training it again, which gives the same classifier (see :mod:`privgame.runs.remedy`).

    Returns
    -------
    dict of ndarray
        ``ms_scores``/``ms_labels`` and ``t_scores``/``t_labels`` (the 'in' runs then the 'out'
        runs, each in index order; label 1 = 'in'), the ``ms_reference_ids`` used by the 'out'
        runs, the trained meta-classifier (``classifier``, pickled bytes, so that evaluation
        runs can be added later without training anything again), and ``timings`` (seconds
        spent in generator fits and samples, query features, classifier training and scoring,
        and in total); in the pooled game also ``t_pool_index`` (the pool dataset of each
        traditional run, like ``t_scores``; -1 for a per-target draw).
    """
    started = time.perf_counter()
    clock = _Clock()
    if attack is None:
        classifier = train_attack(ctx, record_id, shadow_out, clock)
        pickled = _pickled(classifier)
    else:
        classifier, pickled = pickle.loads(attack.tobytes()), attack
    half = ctx.n_eval // 2
    block = play_games(ctx, record_id, classifier, ms_in[:half], 0, half, clock, traditional)
    timings = np.array([clock.generator, clock.features, clock.classifier, time.perf_counter() - started])
    shadow_auc = float(getattr(classifier, "shadow_auc_", float("nan")))
    return _checkpoint([block], pickled, timings, looks=1, shadow_auc=shadow_auc, chosen=_chosen(classifier))


def extend_target(
    ctx: Context,
    record_id: int,
    previous: dict[str, np.ndarray],
    ms_in: Sequence[np.ndarray],
    traditional: TraditionalRuns | None = None,
) -> dict[str, np.ndarray]:
    """Add evaluation runs to a target evaluated with fewer, up to ``ctx.n_eval``.

    Reuses the target's trained meta-classifier and every run already made: only the new runs'
    generators are trained. Since each run's randomness comes from its index, the scores equal
    those of :func:`evaluate_target` at ``ctx.n_eval`` (the same arrays, byte for byte); the
    checkpoint counts one more look per doubling of its runs (:func:`looks_of`,
    :func:`privgame.games.ladder.doublings`), so its verdict spends less error.

    Parameters
    ----------
    previous : dict of ndarray
        The target's checkpoint (with ``classifier``).
    ms_in : sequence of ndarray (ctx.n_eval/2 - done tables of shape (n, d))
        The shared model-seeded 'in' datasets of the new indices only.
    traditional : TraditionalRuns, optional
        In the pooled game, the new traditional runs' features from the pool.
    """
    started = time.perf_counter()
    clock = _Clock()
    done = len(previous[MODEL_SEEDED.array("scores")]) // 2
    classifier = pickle.loads(previous["classifier"].tobytes())
    block = play_games(ctx, record_id, classifier, ms_in, done, ctx.n_eval // 2, clock, traditional)
    timings = previous["timings"] + np.array(
        [clock.generator, clock.features, clock.classifier, time.perf_counter() - started]
    )
    return _checkpoint(
        [_split_checkpoint(previous), block],
        previous["classifier"],
        timings,
        looks=looks_of(previous) + doublings(2 * done, ctx.n_eval),
        shadow_auc=float(previous.get("shadow_auc", np.nan)),
        chosen={k: previous[k] for k in ("attack", "attack_names", "attack_aucs") if k in previous},
    )


def looks_of(checkpoint: dict[str, np.ndarray]) -> int:
    """How many looks a target's verdict has had: 1 after its first runs, + each extension's
    doublings (its rung on the ladder, :mod:`privgame.games.ladder`).

    Every extension is a look, whoever chose the records: the data owner looked at the verdicts
    before asking for more runs (checkpoints written before looks were counted read as 1).
    """
    return int(checkpoint.get("looks", 1))


def _chosen(classifier: MetaClassifier | ChosenAttack) -> dict[str, np.ndarray]:
    """A portfolio's choice for a checkpoint: the attack kept (``attack``), and every attack's
    held-out AUC on the shadow datasets (``attack_names``, ``attack_aucs``); nothing for a bare
    meta-classifier (checkpoints written before portfolios, reused by a remedy)."""
    if not isinstance(classifier, ChosenAttack):
        return {}
    return {
        "attack": np.array(classifier.name),
        "attack_names": np.array(list(classifier.held_out)),
        "attack_aucs": np.array(list(classifier.held_out.values()), dtype=np.float64),
    }


def chosen_attack(checkpoint: dict[str, np.ndarray]) -> str:
    """The attack a target's checkpoint scored its runs with (``tapas`` when it holds no choice)."""
    return str(checkpoint["attack"]) if "attack" in checkpoint else "tapas"


def _pickled(classifier: MetaClassifier | ChosenAttack) -> np.ndarray:
    return np.frombuffer(pickle.dumps(classifier, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
