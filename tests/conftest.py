"""Fixtures shared by every test folder; the builders they share are in ``tests/builders.py``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT


@pytest.fixture(scope="session")
def small_adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 1,500 rows of the bundled Adult data, as a CSV file."""
    path = tmp_path_factory.mktemp("data") / "adult-small.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=1500).to_csv(path, index=False)
    return path
