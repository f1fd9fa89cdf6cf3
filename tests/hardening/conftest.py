"""Shared fixtures of the hardening tests: small data files (helpers are in ``_hardening``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT


@pytest.fixture(scope="session")
def adult_rows() -> pd.DataFrame:
    """The first 4,500 rows of the bundled Adult data, as pandas reads them."""
    return pd.read_csv(BUNDLED_ADULT, nrows=4500)


@pytest.fixture(scope="session")
def small_adult(adult_rows: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1,500-row Adult CSV."""
    path = tmp_path_factory.mktemp("data") / "adult-small.csv"
    adult_rows.iloc[:1500].to_csv(path, index=False)
    return path
