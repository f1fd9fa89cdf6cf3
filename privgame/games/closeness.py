"""The audited release's similarity checks, beside the attack: how close it sits to D.

The checks data owners are usually given are similarity tests on one synthetic table (distance
to the closest record, DCR; see :mod:`privgame.data.similarity`). An audit runs them on the release
the run audits, exactly as ``privgame release`` samples it by default (the generator fitted on D
and sampled with the run's seed, ``stream(seed, 0, Role.RELEASE)``), so that every audited record
has both a model-seeded verdict and a DCR p-value, and the pages can show where they disagree.

The non-members the p-values are measured against are the run's records that are not in D (the
release set-up's holdout or population table, the paper set-up's D_aux and D_eval \\ D, never
the records a remedy left out), at most :data:`MAX_HOLDOUT_ROWS` of them drawn from
``stream(seed, 0, Role.SIMILARITY, 0)``; the table test's equal-size subsample uses
``stream(seed, 0, Role.SIMILARITY, 1)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from privgame.core.seeding import Role, stream
from privgame.data.similarity import GowerEncoding, record_similarity, table_similarity
from privgame.generators.factory import create
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import RunFolder

__all__ = [
    "MAX_HOLDOUT_ROWS",
    "SIMILARITY_ALPHA",
    "holdout_rows",
    "measure_similarity",
    "release_sample",
    "similarity_of",
]

MAX_HOLDOUT_ROWS = 20_000
"""At most this many non-members are compared with the release (a random subset beyond)."""
SIMILARITY_ALPHA = 0.05
"""The level of the table's DCR share test, and below which a record's DCR p-value calls it close."""
_VERSION = 1


def holdout_rows(spec: RunSpec, n_rows: int, d: np.ndarray) -> np.ndarray:
    """Record ids of the non-members the release's closeness is compared with (sorted).

    Every record of the run's table outside D and outside the records a remedy left out, or a
    random :data:`MAX_HOLDOUT_ROWS` of them.
    """
    rest = np.setdiff1d(np.arange(n_rows), np.concatenate([d, np.asarray(spec.left_out, dtype=np.int64)]))
    if len(rest) > MAX_HOLDOUT_ROWS:
        rest = np.sort(stream(spec.seed, 0, Role.SIMILARITY, 0).choice(rest, MAX_HOLDOUT_ROWS, replace=False))
    return rest


def release_sample(X: np.ndarray, schema: Any, spec: RunSpec, d: np.ndarray) -> np.ndarray:
    """The release the run audits, encoded: the run's generator fitted on D (record ids ``d`` of
    ``X``) with the run's parameters and sampled as ``privgame release`` samples it by default
    (``spec.setup.synthetic_rows`` or |D| rows, ``stream(seed, 0, Role.RELEASE)``)."""
    n = spec.setup.synthetic_rows or len(d)
    model = create(spec.generator, **spec.generator_params)
    return model.fit_sample(
        X[np.asarray(d, dtype=np.int64)], schema, n, rng=stream(spec.seed, 0, Role.RELEASE)
    )


def measure_similarity(
    X: np.ndarray, schema: Any, spec: RunSpec, d: np.ndarray, targets: np.ndarray
) -> dict[str, Any]:
    """Sample the audited release and measure its similarity checks.

    Parameters
    ----------
    X : ndarray
        The run's encoded table (record ids index its rows).
    schema : Schema
    spec : RunSpec
    d : ndarray
        Record ids of D.
    targets : ndarray
        The audited record ids (members of D) whose DCR and p-value are kept.

    Returns
    -------
    dict
        ``table``: the whole-table figures (:meth:`privgame.data.similarity.TableSimilarity.to_dict`),
        ``records``: ``{record id: [dcr, p_value]}`` for ``targets``, ``holdout_rows``,
        ``synthetic_rows``, ``seed`` and ``alpha``. Empty of figures (``table`` None) when the run has
        no non-members to compare with.
    """
    d = np.asarray(d, dtype=np.int64)
    holdout = holdout_rows(spec, len(X), d)
    out: dict[str, Any] = {
        "version": _VERSION,
        "seed": spec.seed,
        "alpha": SIMILARITY_ALPHA,
        "holdout_rows": len(holdout),
        "table": None,
        "records": {},
    }
    if len(holdout) == 0:
        return out
    synthetic = release_sample(X, schema, spec, d)
    n = len(synthetic)
    train, nonmembers = X[d], X[holdout]
    encoding = GowerEncoding.for_arrays(np.asarray(schema.is_categorical), train, nonmembers, synthetic)
    positions = {int(r): i for i, r in enumerate(d)}
    keep = np.array([positions[int(t)] for t in targets], dtype=np.int64)
    per_record = record_similarity(train[keep], nonmembers, synthetic, encoding)
    table = table_similarity(
        train,
        nonmembers,
        synthetic,
        encoding,
        rng=stream(spec.seed, 0, Role.SIMILARITY, 1),
        alpha=SIMILARITY_ALPHA,
    )
    out["synthetic_rows"] = int(n)
    out["table"] = table.to_dict()
    if spec.inference.on:
        out["inference"] = _aggregate_inference(schema, spec, synthetic, train, nonmembers)
    out["records"] = {
        str(int(t)): [float(per_record.dcr[i]), float(per_record.p_value[i])] for i, t in enumerate(targets)
    }
    return out


def _aggregate_inference(
    schema: Any, spec: RunSpec, synthetic: np.ndarray, members: np.ndarray, nonmembers: np.ndarray
) -> dict[str, Any]:
    """The release's aggregate inference gap per secret (:func:`privgame.games.inference.aggregate_gap`),
    the attacks scaled on the non-members (data the attacker could hold)."""
    from privgame.attack.inference import SecretAttack
    from privgame.data.schema import Schema
    from privgame.games.inference import aggregate_gap

    schema = schema if isinstance(schema, Schema) else Schema.from_dict(spec.schema)
    rng = stream(spec.seed, 0, Role.SIMILARITY, 2)
    return {
        secret: aggregate_gap(
            SecretAttack.prepare(schema, secret, nonmembers), synthetic, members, nonmembers, rng=rng
        )
        for secret in spec.inference.secrets
    }


def similarity_of(
    folder: RunFolder, X: np.ndarray, schema: Any, spec: RunSpec, d: np.ndarray, targets: np.ndarray
) -> dict[str, Any]:
    """The run's similarity figures: those stored in the folder when they cover ``targets`` with
    the run's seed, else measured now (:func:`measure_similarity`) and stored."""
    stored = folder.read_similarity()
    if _covers(stored, spec, targets):
        return stored  # type: ignore[return-value]
    measured = measure_similarity(X, schema, spec, d, targets)
    folder.write_similarity(measured)
    return measured


def _covers(stored: Mapping[str, Any] | None, spec: RunSpec, targets: np.ndarray) -> bool:
    if not stored or stored.get("version") != _VERSION or stored.get("seed") != spec.seed:
        return False
    if (
        spec.inference.on
        and stored.get("table") is not None
        and sorted(stored.get("inference") or {}) != sorted(spec.inference.secrets)
    ):
        return False
    records = stored.get("records")
    if stored.get("table") is None:
        return isinstance(records, dict)
    return isinstance(records, dict) and all(str(int(t)) in records for t in targets)
