"""Shared set-up for the benchmarks: the bundled Adult table, encoded."""

from __future__ import annotations

import numpy as np

from privgame.data import BUNDLED_ADULT, Schema, encode, load_dataset


def adult() -> tuple[np.ndarray, Schema]:
    """The encoded Adult table (45,222 rows after dropping missing values) and its schema."""
    dataset = load_dataset(BUNDLED_ADULT)
    return encode(dataset.table, dataset.schema), dataset.schema
