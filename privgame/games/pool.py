"""The traditional game, pooled and exact: one sequence of datasets serves every target.

The per-target traditional game trains, for each target x, N_eval/2 generators on 'in' datasets
(x plus |D| - 1 rows of D_eval \\ {x}) and N_eval/2 on 'out' datasets (|D| rows of D_eval \\ {x}).
The pooled game draws instead one indexed, conceptually infinite sequence of *pool datasets*
S_0, S_1, ..., each |D| rows of D_eval drawn without replacement from the stream
``stream(seed, 0, Role.POOL, i)``; the generator trained on S_i takes the rest of that stream.
Target x's 'in' datasets are the first N_eval/2 pool datasets that contain x, in pool order, and
its 'out' datasets the first N_eval/2 that do not. A generator is trained once per pool dataset
and its synthetic data serves every target that uses it.

Why each target's game is unchanged
-----------------------------------
The S_i are independent and uniform over the |D|-subsets of D_eval. Fix a target x (a record of
D, so of D_eval). The indicators B_i = [x in S_i] are i.i.d. Bernoulli(|D| / |D_eval|), and given
the whole sequence (B_i) the S_i stay independent, with

* S_i given B_i = 1: {x} plus a uniform (|D| - 1)-subset of D_eval \\ {x}, the 'in' distribution
  of the traditional game (:func:`privgame.games.plan.t_in_rows`);
* S_i given B_i = 0: a uniform |D|-subset of D_eval \\ {x}, its 'out' distribution
  (:func:`privgame.games.plan.t_out_rows`).

Which pool datasets x uses is a function of (B_i) alone, so given that choice its 'in' datasets
are N_eval/2 independent draws from the 'in' distribution and its 'out' datasets N_eval/2
independent draws from the 'out' distribution, independent of one another and of the attack
(whose shadow datasets come from D_aux and other streams). The generator's stream is the rest of
S_i's stream, independent of the draw, as for every other dataset of the engine. Training,
sampling, the query features and the meta-classifier then act on each dataset exactly as in the
per-target game, so x's scores, and its risk, have exactly the per-target game's distribution.
Only the joint distribution across targets changes: two targets that use the same pool dataset
see the same synthetic data, so their estimates are correlated. A per-record risk keeps its
distribution; an average over records keeps its expectation, while its variance may differ.
(The pool presents the training rows in a uniformly random order where the per-target game puts
x last; the game's training dataset is a set, and both are the same set distribution.)

Falling short
-------------
Membership of every target in S_i is known from the drawn rows before any generator is trained,
so :func:`plan_pool` scans the sequence once, cheaply, and finds each target's datasets and the
set of pool datasets used by at least one target; only those are trained (never more than the
per-target game would train, since each used dataset serves at least one target's run). The scan
stops at :data:`POOL_LIMIT` datasets, a constant: when |D_eval| is barely larger than |D|, 'out'
datasets are rare and a target could need an absurd number of pool datasets. A target that finds
fewer than N_eval/2 datasets of a kind there gets the rest from its own per-target draws, the
per-target game's streams ``stream(seed, x + 1, Role.T_IN or Role.T_OUT, j)`` for j = 0, 1, ...:
independent draws from the same conditional distribution, so the game stays exact.

Extension and determinism
-------------------------
A pool dataset, its synthetic data and a target's features on it are functions of plain integers
(seed, pool index, record id), whoever computes them. The limit does not depend on N_eval, so a
target's datasets at N_eval are the first ones of its datasets at any larger N_eval: extending a
run gives, byte for byte, the run made at the larger N_eval, and a record's risk does not depend
on which other records are audited with it.

Work
----
The engine runs *pool units* (:func:`pool_unit`): each trains the generator on a block of used
pool datasets and computes, for every target that uses one, its query features there. The
features (row counts, stored exactly as 16- or 32-bit integers, compressed) are checkpointed in
``pool/`` of the run folder. The per-target units then read their traditional features from
there (:class:`TraditionalRuns`) instead of training generators, and score them with the target's
meta-classifier, in one call with the model-seeded runs.
"""

from __future__ import annotations

import hashlib
import math
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from privgame.core.errors import ParameterError, RunError
from privgame.core.seeding import Role, stream
from privgame.games.work import SHARED, Context, synthesise
from privgame.settings.executors import MIN_UNIT_SECONDS, MIN_UNITS
from privgame.store.folders import RunFolder

__all__ = [
    "POOL_LIMIT",
    "CatalogueEntry",
    "PoolPlan",
    "TraditionalRuns",
    "blocks",
    "catalogue_entry",
    "describe_pool",
    "expected_extra_fits",
    "expected_pool_fits",
    "gather",
    "missing_pairs",
    "plan_pool",
    "pool_catalogue",
    "pool_rows",
    "pool_unit",
    "unit_name",
    "waves",
]

POOL_LIMIT = 32_768
"""Pool datasets scanned at most. A constant (not a function of N_eval), so that extension stays
exact; a target that falls short within it gets per-target draws for the rest."""

EXTRA = -1
"""The pool index recorded for a run made from one of the target's own per-target draws."""

_DTYPES = {0: np.dtype("<f4"), 1: np.dtype("<u2"), 2: np.dtype("<u4")}
_WAVE_BYTES = 512 * 2**20


def pool_rows(seed: int, eval_pool: np.ndarray, n: int, index: int) -> tuple[np.ndarray, np.random.Generator]:
    """The rows of pool dataset ``index``, and the stream its generator continues with.

    Parameters
    ----------
    seed : int
        The run's root seed.
    eval_pool : ndarray of int64
        Record ids of D_eval.
    n : int
        |D|: rows of each pool dataset.
    index : int
        The pool index i.

    Returns
    -------
    rows : ndarray of int64
        ``n`` record ids of D_eval, drawn without replacement.
    rng : numpy.random.Generator
        The rest of the stream ``(seed, 0, Role.POOL, index)``.
    """
    rng = stream(seed, SHARED, Role.POOL, index)
    return rng.choice(eval_pool, size=n, replace=False), rng


@dataclass(frozen=True)
class PoolPlan:
    """Which pool datasets each target's traditional runs use.

    Attributes
    ----------
    targets : ndarray of int64, shape (T,)
        The target record ids, sorted.
    in_ids, out_ids : ndarray of int64, shape (T, N_eval/2)
        The pool index of each 'in' and 'out' run, in run order; :data:`EXTRA` (-1) for a run
        made from the target's own per-target draw (always after its pool datasets).
    scanned : int
        Pool datasets scanned (the prefix length M).
    """

    targets: np.ndarray
    in_ids: np.ndarray
    out_ids: np.ndarray
    scanned: int

    @property
    def half(self) -> int:
        """N_eval / 2: runs of each kind per target."""
        return int(self.in_ids.shape[1])

    def _row(self, record_id: int) -> int:
        position = int(np.searchsorted(self.targets, record_id))
        if position >= len(self.targets) or int(self.targets[position]) != int(record_id):
            raise RunError(f"Record {record_id} is not a target of this pool plan.")
        return position

    def runs(self, record_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The pool indices of the target's 'in' and 'out' runs (-1: a per-target draw)."""
        row = self._row(record_id)
        return self.in_ids[row], self.out_ids[row]

    def pairs(self, record_ids: Iterable[int] | None = None, start: int = 0) -> np.ndarray:
        """The (pool index, record id) pairs whose features runs ``start ..`` of these targets need.

        Returns
        -------
        ndarray of int64, shape (k, 2)
            Sorted by pool index, then record id; a pair appears once (a pool dataset is either
            'in' or 'out' for a given target).
        """
        rows = range(len(self.targets)) if record_ids is None else [self._row(r) for r in record_ids]
        parts = []
        for row in rows:
            ids = np.concatenate([self.in_ids[row, start:], self.out_ids[row, start:]])
            ids = ids[ids != EXTRA]
            parts.append(np.stack([ids, np.full(len(ids), self.targets[row], dtype=np.int64)], axis=1))
        if not parts:
            return np.empty((0, 2), dtype=np.int64)
        return _sorted_pairs(np.concatenate(parts))

    def fits(self, record_ids: Iterable[int] | None = None, start: int = 0) -> int:
        """Generators trained on pool datasets for runs ``start ..`` of these targets."""
        return int(np.unique(self.pairs(record_ids, start)[:, 0]).size)

    def extra_fits(self, record_id: int, start: int = 0) -> int:
        """Per-target draws among runs ``start ..`` of the target (0 unless it fell short)."""
        row = self._row(record_id)
        return int((self.in_ids[row, start:] == EXTRA).sum() + (self.out_ids[row, start:] == EXTRA).sum())

    def extra_streams(self, record_id: int) -> tuple[int, int]:
        """How many pool datasets the target's 'in' and 'out' runs use: run ``p`` at or beyond
        this count is the target's per-target draw ``p - count``."""
        row = self._row(record_id)
        return int((self.in_ids[row] != EXTRA).sum()), int((self.out_ids[row] != EXTRA).sum())


def _sorted_pairs(pairs: np.ndarray) -> np.ndarray:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def plan_pool(
    ctx: Context, record_ids: Sequence[int] | np.ndarray, n_eval: int, *, limit: int | None = None
) -> PoolPlan:
    """Scan the pool: each target's first N_eval/2 'in' and 'out' datasets.

    Only the rows of each pool dataset are drawn (no generator is trained); the scan stops once
    every target has its datasets, or after ``limit`` datasets.

    Parameters
    ----------
    ctx : Context
        The run's context (seed, D_eval, |D|).
    record_ids : sequence of int
        The targets (records of D).
    n_eval : int
        Evaluation runs per game (half 'in', half 'out').
    limit : int, optional
        Pool datasets scanned at most (:data:`POOL_LIMIT` by default); a target short of
        datasets after them gets per-target draws for the rest.

    Returns
    -------
    PoolPlan

    Raises
    ------
    ParameterError
        When a target is not a record of D_eval.
    """
    limit = POOL_LIMIT if limit is None else int(limit)
    targets = np.unique(np.asarray(record_ids, dtype=np.int64))
    half = int(n_eval) // 2
    eval_pool = np.asarray(ctx.eval_pool, dtype=np.int64)
    if outside := np.setdiff1d(targets, eval_pool).tolist():
        raise ParameterError(
            f"Records {outside[:10]} are not in the evaluation pool D_eval, so the traditional game "
            "cannot be played for them; audit records of D."
        )
    count = len(targets)
    in_ids = np.full((count, half), EXTRA, dtype=np.int64)
    out_ids = np.full((count, half), EXTRA, dtype=np.int64)
    n_in = np.zeros(count, dtype=np.int64)
    n_out = np.zeros(count, dtype=np.int64)
    marked = np.zeros(int(eval_pool.max(initial=-1)) + 1, dtype=bool)
    index = 0
    while count and half and index < limit and (n_in.min() < half or n_out.min() < half):
        rows, _ = pool_rows(ctx.seed, eval_pool, ctx.n, index)
        marked[rows] = True
        member = marked[targets]
        marked[rows] = False
        for ids, counts, wanted in ((in_ids, n_in, member), (out_ids, n_out, ~member)):
            took = np.flatnonzero(wanted & (counts < half))
            ids[took, counts[took]] = index
            counts[took] += 1
        index += 1
    return PoolPlan(targets=targets, in_ids=in_ids, out_ids=out_ids, scanned=index)


def expected_pool_fits(n: int, eval_size: int, n_eval: int, n_targets: int) -> int:
    """About how many pool datasets a plan trains, before the targets are known.

    Treats the targets' memberships as independent: pool dataset i serves a target with
    probability q_i = p P(Bin(i, p) < h) + (1 - p) P(Bin(i, 1 - p) < h), where p = |D| / |D_eval|
    and h = N_eval / 2, so it is trained with probability 1 - (1 - q_i)^T. The exact count needs
    the targets (see :meth:`PoolPlan.fits`); per-target draws of targets that fall short are not
    counted here.
    """
    from scipy.stats import binom

    half = int(n_eval) // 2
    if n_targets <= 0 or half <= 0 or eval_size <= 0:
        return 0
    p = min(1.0, n / eval_size)
    index = np.arange(POOL_LIMIT)
    q = np.zeros(POOL_LIMIT)
    if p > 0:
        q += p * binom.cdf(half - 1, index, p)
    if p < 1:
        q += (1 - p) * binom.cdf(half - 1, index, 1 - p)
    return round(float(np.sum(1.0 - (1.0 - np.clip(q, 0.0, 1.0)) ** n_targets)))


def expected_extra_fits(
    n: int, eval_size: int, n_eval: int, n_targets: int, *, limit: int = POOL_LIMIT
) -> int:
    """About how many per-target draws a plan makes: the runs the pool leaves short.

    After the ``limit`` (:data:`POOL_LIMIT`) pool datasets a target has X ~ Bin(limit, p) 'in'
    datasets and limit - X 'out' ones (p = |D| / |D_eval|); each kind short of h = N_eval / 2 is
    made up by per-target draws, E[max(0, h - X)] + E[max(0, h - (limit - X))] per target.
    """
    from scipy.stats import binom

    half = int(n_eval) // 2
    if n_targets <= 0 or half <= 0 or eval_size <= 0:
        return 0
    p = min(1.0, n / eval_size)
    k = np.arange(half)
    short = 0.0
    for q in (p, 1.0 - p):
        short += float(np.sum((half - k) * binom.pmf(k, int(limit), q)))
    return round(short * n_targets)


# -- features, packed exactly ------------------------------------------------------------------


def pack_features(features: np.ndarray) -> tuple[int, bytes]:
    """A feature row as (dtype code, compressed bytes); exact (row counts fit 16 or 32 bits)."""
    features = np.asarray(features, dtype=np.float32)
    code = 0
    if features.size and np.isfinite(features).all() and features.min() >= 0:
        top = float(features.max())
        for candidate, bound in ((1, 2**16 - 1), (2, 2**32 - 1)):
            if top <= bound:
                as_int = features.astype(_DTYPES[candidate])
                if np.array_equal(as_int.astype(np.float32), features):
                    code = candidate
                break
    data = features.astype(_DTYPES[code]) if code else features.astype(_DTYPES[0])
    return code, zlib.compress(data.tobytes(), 1)


def unpack_features(code: int, data: bytes | np.ndarray) -> np.ndarray:
    """The float32 feature row :func:`pack_features` packed."""
    raw = zlib.decompress(bytes(data))
    return np.frombuffer(raw, dtype=_DTYPES[int(code)]).astype(np.float32)


def _pack_rows(packed: Sequence[tuple[int, bytes]]) -> dict[str, np.ndarray]:
    sizes = np.array([len(b) for _, b in packed], dtype=np.int64)
    return {
        "codes": np.array([c for c, _ in packed], dtype=np.uint8),
        "offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        "blob": np.frombuffer(b"".join(b for _, b in packed), dtype=np.uint8),
    }


# -- the pool unit -------------------------------------------------------------------------------


def pool_unit(ctx: Context, pairs: np.ndarray) -> dict[str, np.ndarray]:
    """Train the generator once on each pool dataset of ``pairs``, and compute every pair's features.

    Parameters
    ----------
    ctx : Context
    pairs : ndarray of int64, shape (k, 2)
        (pool index, record id) pairs, sorted by pool index.

    Returns
    -------
    dict of ndarray
        ``pairs``; the packed feature rows in the same order (``codes``, ``offsets``, ``blob``;
        see :func:`unpack_features`); ``fits`` (pool datasets trained) and ``timings`` (seconds
        in generator fits and samples, in query features, and in all).
    """
    started = time.perf_counter()
    pairs = _sorted_pairs(pairs)
    queries = ctx.featuriser()
    generator_seconds = feature_seconds = 0.0
    packed: list[tuple[int, bytes]] = []
    indices, first = np.unique(pairs[:, 0], return_index=True)
    bounds = [*first.tolist(), len(pairs)]
    for k, index in enumerate(indices):
        t0 = time.perf_counter()
        rows, rng = pool_rows(ctx.seed, ctx.eval_pool, ctx.n, int(index))
        synthetic = synthesise(ctx, rows, rng)
        t1 = time.perf_counter()
        for record_id in pairs[bounds[k] : bounds[k + 1], 1]:
            packed.append(pack_features(queries.features(synthetic, ctx.X[int(record_id)])))
        generator_seconds += t1 - t0
        feature_seconds += time.perf_counter() - t1
    return {
        "pairs": pairs,
        **_pack_rows(packed),
        "fits": np.array(len(indices), dtype=np.int64),
        "timings": np.array([generator_seconds, feature_seconds, time.perf_counter() - started]),
    }


def unit_name(pairs: np.ndarray) -> str:
    """The checkpoint name of a pool unit: its first pool index and a digest of its pairs."""
    pairs = _sorted_pairs(pairs)
    digest = hashlib.sha256(np.ascontiguousarray(pairs, dtype="<i8").tobytes()).hexdigest()[:12]
    first = int(pairs[0, 0]) if len(pairs) else 0
    return f"features-{first:07d}-{digest}"


def blocks(
    pairs: np.ndarray,
    *,
    dataset_seconds: float,
    pair_seconds: float,
    row_bytes: int,
    max_bytes: int = 256 * 2**20,
) -> list[np.ndarray]:
    """Cut the pairs into units of consecutive pool datasets, each about one second of work.

    A pool dataset's pairs stay in one unit (it is trained once). A phase too short for
    :data:`~privgame.settings.executors.MIN_UNITS` one-second units is spread over that many shorter ones
    (not shorter than a tenth of a second), and a unit holds at most ``max_bytes`` of raw feature
    rows (``row_bytes`` each), so that its result stays small.
    """
    pairs = _sorted_pairs(pairs)
    if not len(pairs):
        return []
    indices, first, users = np.unique(pairs[:, 0], return_index=True, return_counts=True)
    cost = dataset_seconds + users * pair_seconds
    total = float(cost.sum())
    unit = min(MIN_UNIT_SECONDS, max(MIN_UNIT_SECONDS / 10, total / MIN_UNITS))
    max_pairs = max(1, max_bytes // max(1, row_bytes))
    out: list[np.ndarray] = []
    start = 0
    seconds = 0.0
    held = 0
    for k in range(len(indices)):
        seconds += float(cost[k])
        held += int(users[k])
        last = k == len(indices) - 1
        if last or seconds >= unit or held + int(users[k + 1]) > max_pairs:
            stop = len(pairs) if last else int(first[k + 1])
            out.append(pairs[int(first[start]) : stop])
            start, seconds, held = k + 1, 0.0, 0
    return out


# -- reading the pool's checkpoints ---------------------------------------------------------------


@dataclass(frozen=True)
class CatalogueEntry:
    """What one pool checkpoint holds: its pairs and the packed size of each pair's row."""

    pairs: np.ndarray
    sizes: np.ndarray
    fits: int
    timings: np.ndarray


def catalogue_entry(data: dict[str, np.ndarray]) -> CatalogueEntry:
    """The catalogue entry of one pool unit's result (or checkpoint)."""
    pairs = np.asarray(data["pairs"], dtype=np.int64).reshape(-1, 2)
    return CatalogueEntry(
        pairs=pairs,
        sizes=np.diff(data["offsets"]),
        fits=int(data["fits"]) if "fits" in data else int(np.unique(pairs[:, 0]).size),
        timings=np.asarray(data["timings"] if "timings" in data else np.zeros(3), dtype=np.float64),
    )


def pool_catalogue(folder: RunFolder) -> dict[str, CatalogueEntry]:
    """Every intact pool checkpoint of the run (a damaged one is left out, so it is recomputed)."""
    out: dict[str, CatalogueEntry] = {}
    for name in folder.pool_names():
        data = folder.load_pool(name)
        if data is not None and {"pairs", "offsets", "codes", "blob"} <= set(data):
            out[name] = catalogue_entry(data)
    return out


def _keys(pairs: np.ndarray) -> np.ndarray:
    """One integer per pair (pool index, record id), so that sets of pairs compare with numpy."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return (pairs[:, 0] << 32) | pairs[:, 1]


def missing_pairs(needed: np.ndarray, catalogue: dict[str, CatalogueEntry]) -> np.ndarray:
    """The pairs of ``needed`` that no intact pool checkpoint holds yet."""
    if not catalogue or not len(needed):
        return _sorted_pairs(needed)
    have = np.concatenate([_keys(e.pairs) for e in catalogue.values()])
    return _sorted_pairs(needed[~np.isin(_keys(needed), have)])


@dataclass(frozen=True)
class TraditionalRuns:
    """Traditional runs ``start .. stop - 1`` of one target in the pooled game.

    Attributes
    ----------
    start, stop : int
        The run positions, in each of 'in' and 'out'.
    in_ids, out_ids : ndarray of int64, shape (stop - start,)
        The pool index of each run; -1 for the target's own per-target draw.
    in_extra, out_extra : int
        The per-target stream index of the first per-target draw among these runs.
    codes, offsets, blob : ndarray
        The packed feature rows of the runs that use a pool dataset, 'in' runs then 'out' runs,
        in run order.
    """

    start: int
    stop: int
    in_ids: np.ndarray
    out_ids: np.ndarray
    in_extra: int
    out_extra: int
    codes: np.ndarray
    offsets: np.ndarray
    blob: np.ndarray

    def pool_features(self) -> tuple[np.ndarray, np.ndarray]:
        """The feature rows of the 'in' and 'out' runs that use a pool dataset."""
        rows = [
            unpack_features(int(code), self.blob[self.offsets[k] : self.offsets[k + 1]])
            for k, code in enumerate(self.codes)
        ]
        n_in = int((self.in_ids != EXTRA).sum())
        return _stack(rows[:n_in]), _stack(rows[n_in:])

    @property
    def nbytes(self) -> int:
        """Bytes of packed features held."""
        return int(self.blob.nbytes)


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    return np.stack(rows) if rows else np.empty((0, 0), dtype=np.float32)


def _requests_pairs(plan: PoolPlan, requests: dict[int, tuple[int, int]]) -> dict[int, np.ndarray]:
    out = {}
    for record_id, (start, stop) in requests.items():
        ids_in, ids_out = plan.runs(record_id)
        out[record_id] = np.concatenate([ids_in[start:stop], ids_out[start:stop]])
    return out


def waves(
    plan: PoolPlan,
    requests: dict[int, tuple[int, int]],
    catalogue: dict[str, CatalogueEntry],
    budget: int = _WAVE_BYTES,
) -> list[list[int]]:
    """Group the targets so that each group's packed features fit in ``budget`` bytes."""
    size: dict[tuple[int, int], int] = {}
    for entry in catalogue.values():
        for (index, record_id), nbytes in zip(entry.pairs.tolist(), entry.sizes.tolist(), strict=True):
            size[(index, record_id)] = nbytes
    groups: list[list[int]] = []
    current: list[int] = []
    held = 0
    for record_id, ids in _requests_pairs(plan, requests).items():
        need = sum(size.get((int(i), record_id), 0) for i in ids if i != EXTRA)
        if current and held + need > budget:
            groups.append(current)
            current, held = [], 0
        current.append(record_id)
        held += need
    if current:
        groups.append(current)
    return groups


def gather(
    folder: RunFolder,
    plan: PoolPlan,
    requests: dict[int, tuple[int, int]],
    catalogue: dict[str, CatalogueEntry],
) -> dict[int, TraditionalRuns]:
    """The traditional runs ``start .. stop - 1`` of each requested target, from the checkpoints.

    Parameters
    ----------
    requests : dict
        Record id -> (start, stop) run positions.

    Raises
    ------
    RunError
        When a pool checkpoint a run needs is missing or damaged (resuming the run recomputes it).
    """
    wanted = _requests_pairs(plan, requests)
    keys = {(int(i), r) for r, ids in wanted.items() for i in ids if i != EXTRA}
    found: dict[tuple[int, int], tuple[int, bytes]] = {}
    for name, entry in catalogue.items():
        hits = [k for k, pair in enumerate(entry.pairs.tolist()) if tuple(pair) in keys]
        if not hits:
            continue
        data = folder.load_pool(name)
        if data is None:
            continue
        blob, offsets, codes = data["blob"], data["offsets"], data["codes"]
        for k in hits:
            index, record_id = (int(v) for v in entry.pairs[k])
            found[(index, record_id)] = (int(codes[k]), blob[offsets[k] : offsets[k + 1]].tobytes())
    out = {}
    for record_id, (start, stop) in requests.items():
        ids_in, ids_out = plan.runs(record_id)
        pool_in, pool_out = plan.extra_streams(record_id)
        runs_in, runs_out = ids_in[start:stop], ids_out[start:stop]
        packed = []
        for index in [*runs_in.tolist(), *runs_out.tolist()]:
            if index == EXTRA:
                continue
            if (index, record_id) not in found:
                raise RunError(
                    f"The pooled features of record {record_id} on pool dataset {index} are missing "
                    f"from {folder.path / 'pool'}; resume the run to recompute them: "
                    f"python -m privgame resume {folder.path}"
                )
            packed.append(found[(index, record_id)])
        out[record_id] = TraditionalRuns(
            start=start,
            stop=stop,
            in_ids=runs_in.copy(),
            out_ids=runs_out.copy(),
            in_extra=max(start, pool_in) - pool_in,
            out_extra=max(start, pool_out) - pool_out,
            **_pack_rows(packed),
        )
    return out


def describe_pool(plan: PoolPlan) -> dict[str, int | float]:
    """Figures of a pool plan for ``status.json``: datasets scanned and trained, per-target draws."""
    fits = plan.fits()
    extra = int((plan.in_ids == EXTRA).sum() + (plan.out_ids == EXTRA).sum())
    runs = 2 * plan.half * len(plan.targets)
    return {
        "scanned": int(plan.scanned),
        "pool_fits": fits,
        "per_target_draws": extra,
        "runs": runs,
        "fits_per_run": (fits + extra) / runs if runs else math.nan,
    }
