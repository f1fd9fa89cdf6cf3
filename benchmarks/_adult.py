"""Shared set-up for the benchmarks: the bundled Adult table, encoded, and the paper's run set-up."""

from __future__ import annotations

import numpy as np

from privgame.data import BUNDLED_ADULT, Dataset, Schema, encode, load_dataset
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection


def adult() -> tuple[np.ndarray, Schema]:
    """The encoded Adult table (45,222 rows after dropping missing values) and its schema."""
    dataset = load_dataset(BUNDLED_ADULT)
    return encode(dataset.table, dataset.schema), dataset.schema


def adult_spec(dataset: Dataset, *, generator: str, n: int, targets: int) -> RunSpec:
    """The paper's Adult set-up (|D_aux| 30,000, |D_eval| 15,222, |D| 1,000, seed 0) with
    ``targets`` random records and N_shadow = N_eval = ``n``."""
    return RunSpec(
        data_name="adult.csv.gz",
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes={"aux": 30000, "eval": 15222, "target": 1000},
        generator=generator,
        attack=AttackSettings(n_shadow=n, n_eval=n),
        targets=TargetSelection("random", targets),
        seed=0,
    )
