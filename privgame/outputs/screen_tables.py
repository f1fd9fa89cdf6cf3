"""The screen's tables for people: every record of D, and the high-risk list with screened records.

``python -m privgame export RUN --what screen`` and the Export page write :func:`screen_table`
(:mod:`privgame.games.screen_table`);
``export --what high-risk --screened`` and the Export page's switch write :func:`high_risk_with_screen`.
A screened verdict is read at the export's threshold with the run's agreement rule
(:func:`privgame.games.screen.summarise_screen`): when the screen disagreed with the exact game
on the random sample, no screened *not at risk* stands.
"""

from __future__ import annotations

import pandas as pd

from privgame.core.parameters import check_threshold
from privgame.games.screen_table import SCREEN_EXPORT_COLUMNS, screen_table
from privgame.outputs.run_report import high_risk
from privgame.store.folders import RunFolder

__all__ = ["SCREEN_EXPORT_COLUMNS", "high_risk_with_screen", "screen_table"]


def high_risk_with_screen(folder: RunFolder, threshold: float) -> pd.DataFrame:
    """The high-risk list with the screened records: every record at risk in the exact game, then
    every other record the screen puts at risk, with ``source`` ("exact" or "screened") and both
    risks; riskiest first within each source."""
    t = check_threshold(threshold)
    exact = high_risk(folder.records(), t)
    exact.insert(1, "source", "exact")
    screen = screen_table(folder, t)
    # A record at risk by either attack is at risk: the screen's too, where the exact game did not
    # put it there (it did not play it, or found it undecided).
    extra = screen.loc[
        (screen["screen_verdict"] == "at risk") & ~screen["record_id"].isin(exact["record_id"])
    ]
    extra = extra.sort_values(["screen_risk", "record_id"], ascending=[False, True], kind="stable")
    extra = extra.assign(source="screened")
    screen_cols = screen.loc[screen["record_id"].isin(exact["record_id"])][
        ["record_id", "screen_risk", "screen_low", "screen_high", "screen_verdict"]
    ]
    exact = exact.merge(screen_cols, on="record_id", how="left")
    out = pd.concat([exact, extra], ignore_index=True)
    lead = ["record_id", "source", "screen_risk", "screen_low", "screen_high", "screen_verdict"]
    return out[lead + [c for c in out.columns if c not in lead]]
