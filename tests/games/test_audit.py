"""The verdict columns follow the threshold a page or an export is set to."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgame.core.errors import ParameterError
from privgame.games.audit import records_at


def _records() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "record_id": [1, 2, 3, 4],
            "risk_model_seeded": [0.9, 0.8, 0.6, np.nan],
            "risk_model_seeded_low": [0.85, 0.7, 0.5, np.nan],
            "risk_model_seeded_high": [0.95, 0.9, 0.7, np.nan],
            "risk_traditional": [0.6, 0.5, 0.5, 0.5],
            "risk_traditional_low": [0.5, 0.4, 0.4, 0.4],
            "risk_traditional_high": [0.7, 0.6, 0.6, 0.6],
            "verdict_model_seeded": ["stale"] * 4,
            "verdict_traditional": ["stale"] * 4,
        }
    )


def test_records_at_recomputes_both_verdicts_and_keeps_the_rest() -> None:
    records = _records()
    at = records_at(records, 0.8)
    assert list(at["verdict_model_seeded"]) == ["at risk", "undecided", "not at risk", "undecided"]
    assert list(at["verdict_traditional"]) == ["not at risk"] * 4
    lower = records_at(records, 0.65)
    assert list(lower["verdict_model_seeded"]) == ["at risk", "at risk", "undecided", "undecided"]
    assert list(lower["verdict_traditional"]) == ["undecided", "not at risk", "not at risk", "not at risk"]
    # A bound exactly at t: the upper bound 0.7 at t = 0.7 is not at risk.
    assert records_at(records, 0.7)["verdict_model_seeded"].iloc[2] == "not at risk"
    pd.testing.assert_frame_equal(
        at.drop(columns=["verdict_model_seeded", "verdict_traditional"]),
        records.drop(columns=["verdict_model_seeded", "verdict_traditional"]),
    )
    assert list(records["verdict_model_seeded"]) == ["stale"] * 4  # the input is not changed


def test_records_at_leaves_a_table_without_intervals_alone() -> None:
    old = _records()[["record_id", "risk_model_seeded", "risk_traditional"]]
    pd.testing.assert_frame_equal(records_at(old, 0.8), old)


@pytest.mark.parametrize("t", [-0.1, 1.5])
def test_records_at_refuses_a_threshold_outside_0_1(t: float) -> None:
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        records_at(_records(), t)
