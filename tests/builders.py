"""Builders shared by the tests (importable as ``builders``: ``tests/conftest.py`` puts this folder
on the import path)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from privgame.data import load_dataset
from privgame.data.schema import CATEGORICAL, Schema
from privgame.games.engine import start_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs
from privgame.store.folders import RunFolder

SIZES = {"aux": 700, "eval": 600, "target": 60}
"""|D_aux|, |D_eval| and |D| of :func:`small_spec`: fit for the 1,500-row ``small_adult`` table."""


def declared(schema: Schema) -> Schema:
    """The same schema with every domain declared (public), as an owner declares it."""
    categories = {c.name: c.categories for c in schema.used if c.role == CATEGORICAL}
    bounds = {c.name: (c.lower, c.upper) for c in schema.used if c.role != CATEGORICAL}
    return schema.with_domain(categories=categories, bounds=bounds)


def bare_spec(**changes: Any) -> RunSpec:
    """A spec on no real table (a 10/10/5 split of "t.csv", the marginals generator) for tests of
    the spec and the store that never run it; ``changes`` replace any field."""
    fields: dict[str, Any] = {
        "data_name": "t.csv",
        "data_fingerprint": "abc",
        "schema": {"columns": [], "missing_policy": "drop"},
        "sizes": {"aux": 10, "eval": 10, "target": 5},
        "generator": "marginals",
        **changes,
    }
    return RunSpec(**fields)


def small_spec(path: Path, generator: str = "synthpop", **kwargs: object) -> tuple[RunSpec, pd.DataFrame]:
    """A validated run spec of a few seconds on the table at ``path``, and the prepared table.

    20 shadow datasets and 20 evaluation runs, 3 random target records, seed 7; ``kwargs``
    replace any of the spec's fields (``attack``, ``targets``, ``seed``, ``setup``...).
    """
    dataset = load_dataset(path)
    options: dict[str, object] = {
        "attack": AttackSettings(n_shadow=20, n_eval=20),
        "targets": TargetSelection("random", 3),
        "seed": 7,
    }
    options.update(kwargs)
    spec = RunSpec(
        data_name=path.name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=dict(SIZES),
        generator=generator,
        **options,  # type: ignore[arg-type]
    ).validate()
    return spec, dataset.table


def release_spec(
    data_csv: Path,
    generator: str,
    *,
    holdout: float = 0.3,
    seed: int = 4,
    **changes: Any,
) -> tuple[RunSpec, pd.DataFrame]:
    """A release set-up spec of the table at ``data_csv`` and the run's table: the audit plan 2 + 3,
    N_shadow = N_eval = 8; ``changes`` replace any of the spec's fields (``attack``, ``targets``,
    ``screen``, ``threshold``...)."""
    data = load_dataset(data_csv)
    inputs = release_inputs(data, seed=seed, holdout=holdout)
    fields: dict[str, Any] = {
        "attack": AttackSettings(n_shadow=8, n_eval=8),
        "targets": TargetSelection.plan(outliers=2, random=3),
        "seed": seed,
        **changes,
    }
    spec = RunSpec(
        data_name=data.source_name,
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator=generator,
        setup=inputs.setup,
        **fields,
    )
    return spec, inputs.table


def release_audit(
    data_csv: Path,
    root: Path,
    generator: str,
    *,
    attack: AttackSettings | None = None,
    **params: object,
) -> RunFolder:
    """A finished release set-up audit of the table at ``data_csv`` (holdout 0.3, seed 4, the
    audit plan 2 + 3, N_shadow = N_eval = 8 unless ``attack`` says otherwise), one worker."""
    spec, table = release_spec(
        data_csv,
        generator,
        generator_params=dict(params),
        attack=attack or AttackSettings(n_shadow=8, n_eval=8),
    )
    return start_run(root, spec, table, workers=1)


def at_once(click: Callable[[], tuple[Any, bool]], times: int = 3) -> list[tuple[Any, bool]]:
    """Call ``click`` on ``times`` threads started together (the dashboard answers each click of
    an impatient user on a thread of its own); what each call returned, in the order they ended."""
    made: list[tuple[Any, bool]] = []
    threads = [threading.Thread(target=lambda: made.append(click())) for _ in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return made
