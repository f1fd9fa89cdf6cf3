"""Shared fixtures of the hardening tests: small data files (helpers are in ``_hardening``)."""

from __future__ import annotations

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT


@pytest.fixture(scope="session")
def adult_rows() -> pd.DataFrame:
    """The first 4,500 rows of the bundled Adult data, as pandas reads them."""
    return pd.read_csv(BUNDLED_ADULT, nrows=4500)
