"""A run's context, the records it audits and the cost of its plan, from its spec and table.

Below the engine, so that the cost estimate (:mod:`privgame.games.estimate`) and the pre-run check
(:mod:`privgame.games.preflight`) build what the engine builds without importing it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.errors import ParameterError
from privgame.data.encoding import encode
from privgame.data.schema import Schema
from privgame.games import pool, threat
from privgame.games.game import TRADITIONAL, played
from privgame.games.plan import count_fits, run_split
from privgame.games.work import Context
from privgame.settings.run_spec import RunSpec
from privgame.settings.targets import audit_groups

__all__ = [
    "CHUNK",
    "EXACT_POOL_PAIRS",
    "build_audit",
    "build_context",
    "plan_summary",
    "union_of_groups",
]

CHUNK = 16
"""Datasets per shared unit in runs whose status records no unit plan (started before units were
sized by cost); newer runs size units with :func:`privgame.settings.executors.batch_size`."""


def build_audit(spec: RunSpec, table: pd.DataFrame) -> tuple[Context, dict[str, np.ndarray]]:
    """The worker context and the records to audit by audit group, from a spec and its table.

    See :func:`privgame.settings.targets.audit_groups` for the groups.
    """
    schema = Schema.from_dict(spec.schema)
    X = encode(table, schema)
    split = run_split(spec, len(table))
    setup = spec.setup
    ctx = Context(
        X=X,
        schema=schema,
        aux=split.aux,
        eval_pool=split.eval,
        target=split.target,
        reference=split.reference,
        generator=spec.generator,
        generator_params=dict(spec.generator_params),
        n_shadow=spec.attack.n_shadow,
        n_eval=spec.attack.n_eval,
        classifier=spec.attack.classifier,
        max_exact_columns=spec.attack.max_exact_columns,
        seed=spec.seed,
        shadow_size=setup.shadow_size,
        shadow_replace=setup.shadow_replace,
        synthetic_rows=setup.synthetic_rows,
        games=spec.attack.games,
        attacker=spec.attack.attacker,
        attacks=spec.attack.attacks,
        secrets=spec.inference.secrets,
    )
    _check_attacks(ctx)
    groups = audit_groups(spec.targets, split.target, X, schema, seed=spec.seed)
    _remember_pool_inputs(spec, ctx, union_of_groups(groups))
    return ctx, groups


def _check_attacks(ctx: Context) -> None:
    """Raise a ParameterError naming every attack of the spec that cannot attack its generator."""
    if ctx.single_attack:
        return
    from privgame.attack import applicable

    usable = applicable(ctx.attacks, ctx.new_generator())
    refused = [name for name in ctx.attacks if name not in usable]
    if refused:
        raise ParameterError(
            f"The run's attacks {', '.join(refused)} cannot attack the {ctx.generator} generator; "
            "run it with --attacks all (every attack that applies) or leave them out."
        )


_POOL_INPUTS: OrderedDict[str, tuple[Context, np.ndarray]] = OrderedDict()
_POOL_INPUTS_KEPT = 4


def _remember_pool_inputs(spec: RunSpec, ctx: Context, targets: np.ndarray) -> None:
    """Keep what :func:`plan_summary` needs to count a pooled plan exactly, for a spec whose
    context was just built (the dashboard builds it, then asks for the plan without the table).

    The spec names its table by fingerprint, so the same spec means the same pool and targets;
    only the pool's inputs are kept (no table).
    """
    if spec.attack.traditional != "pooled":
        return
    key = spec.to_json()
    _POOL_INPUTS[key] = (replace(ctx, X=ctx.X[:0]), np.asarray(targets, dtype=np.int64))
    _POOL_INPUTS.move_to_end(key)
    while len(_POOL_INPUTS) > _POOL_INPUTS_KEPT:
        _POOL_INPUTS.popitem(last=False)


def union_of_groups(groups: dict[str, np.ndarray]) -> np.ndarray:
    """The sorted record ids of every audit group together."""
    return np.unique(np.concatenate([*groups.values(), np.empty(0, dtype=np.int64)])).astype(np.int64)


def build_context(spec: RunSpec, table: pd.DataFrame) -> tuple[Context, np.ndarray]:
    """The worker context and the sorted record ids of the targets, from a spec and its table."""
    ctx, groups = build_audit(spec, table)
    return ctx, union_of_groups(groups)


EXACT_POOL_PAIRS = 2_000_000
"""Above this many (target, evaluation run) pairs, :func:`plan_summary` estimates the pooled game's
fits instead of scanning the pool: the scan grows with the pairs (about a minute at 300 million,
a run of years that the cost check refuses at once)."""


def plan_summary(spec: RunSpec, n_targets: int, *, table: pd.DataFrame | None = None) -> dict[str, Any]:
    """The cost of a plan: generator fits, shared, pooled and per target.

    Parameters
    ----------
    spec : RunSpec
    n_targets : int
        Records audited.
    table : DataFrame, optional
        The run's prepared table. In the pooled traditional game the number of pool datasets
        trained depends on which records are audited; it is counted exactly (it is then the
        number of fits the run makes) with the table, or when this process built the spec's
        context (:func:`build_context`) a moment ago, and estimated otherwise (``exact`` is
        False), as it is for a plan of more than :data:`EXACT_POOL_PAIRS` evaluation runs.

    Returns
    -------
    dict
        ``total_fits``, ``shared_fits``, ``pool_fits`` (0 in the per-target game),
        ``fits_per_target``, ``extra_fits`` (per-target draws of targets the pool left short),
        ``n_targets``, ``exact`` and ``text`` (one sentence).
    """
    from privgame.generators import resolve

    deterministic = bool(getattr(resolve(spec.generator), "deterministic_fit", False))
    pool_fits: int | None = None
    extra_fits = 0
    exact = True
    if spec.attack.traditional == "pooled" and TRADITIONAL in played(spec.attack.games):
        known = _POOL_INPUTS.get(spec.to_json()) if table is None else None
        if table is not None or known is not None:
            ctx, targets = known if known is not None else build_context(spec, table)
            n_targets = len(targets)
        if (table is not None or known is not None) and n_targets * spec.attack.n_eval <= EXACT_POOL_PAIRS:
            pool_plan = pool.plan_pool(ctx, targets, spec.attack.n_eval)
            pool_fits = pool_plan.fits()
            extra_fits = sum(pool_plan.extra_fits(int(r)) for r in targets)
        else:
            sizes = (spec.sizes["target"], spec.sizes["eval"], spec.attack.n_eval, n_targets)
            pool_fits = pool.expected_pool_fits(*sizes)
            extra_fits = pool.expected_extra_fits(*sizes)
            exact = False
    fits = count_fits(
        n_targets,
        spec.attack.n_shadow,
        spec.attack.n_eval,
        deterministic_fit=deterministic,
        pool_fits=pool_fits,
        extra_fits=extra_fits,
        exact=exact,
        traditional=TRADITIONAL in played(spec.attack.games),
        shadows_on_d=threat.create(spec.attack.attacker).knows_d,
    )
    text = fits.describe()
    screen_fits = confirmed = 0
    if spec.screen.on:
        # The screen's datasets, then its top records, which the exact game plays like the plan's.
        screen_fits = spec.screen.shadows
        confirmed = max(0, min(spec.screen.confirm_top, int(spec.sizes["target"]) - n_targets))
        fits = replace(fits, n_targets=n_targets + confirmed)
        confirming = f", {confirmed:,} of them the top-screened records" if confirmed else ""
        text = (
            f"{screen_fits:,} generator fits screen every record of D; then the exact game's "
            f"{fits.describe()[:-1]}{confirming}."
        )
    return {
        "total_fits": fits.total_fits + screen_fits,
        "shared_fits": fits.shared_fits,
        "pool_fits": fits.pool_fits or 0,
        "fits_per_target": fits.fits_per_target,
        "extra_fits": fits.extra_fits,
        "n_targets": fits.n_targets,
        "screen_fits": screen_fits,
        "confirmed": confirmed,
        "exact": exact,
        "text": text,
    }
