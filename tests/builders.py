"""Builders shared by the tests (importable as ``builders``: ``tests/conftest.py`` puts this folder
on the import path)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from privgame.data import load_dataset
from privgame.spec import AttackSettings, RunSpec, TargetSelection

SIZES = {"aux": 700, "eval": 600, "target": 60}
"""|D_aux|, |D_eval| and |D| of :func:`small_spec`: fit for the 1,500-row ``small_adult`` table."""


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
