"""Shared fixtures of the data tests: the bundled Adult table, loaded once."""

from __future__ import annotations

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT, load_table


@pytest.fixture(scope="session")
def adult_raw() -> pd.DataFrame:
    """Adult as the loader reads it (48,842 rows, missing values kept). Do not modify it."""
    return load_table(BUNDLED_ADULT)
