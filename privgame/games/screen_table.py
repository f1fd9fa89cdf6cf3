"""Every record of D with its screened verdict and, where the exact game played it, its exact one.

:func:`screen_table` is the one reading of a run's screen for people: the ``screen`` export, the
Results and Record pages, the HTML report and the high-risk list with screened records
(:mod:`privgame.outputs.screen_tables`) all use it. A screened verdict is read at the table's
threshold with the run's agreement rule (:func:`privgame.games.audit.screen_verdicts`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privgame.core import metrics
from privgame.core.parameters import check_threshold
from privgame.core.records import value_column
from privgame.games.audit import screen_verdicts
from privgame.store.folders import RunFolder

__all__ = ["SCREEN_EXPORT_COLUMNS", "screen_table"]


SCREEN_EXPORT_COLUMNS: tuple[str, ...] = (
    "record_id",
    "screen_risk",
    "screen_low",
    "screen_high",
    "screen_verdict",
    "risk_model_seeded",
    "verdict_model_seeded",
    "audit_group",
    "screen_statistic",
    "outlier_score",
)
"""The first columns of the screen export; the record's values (``value:<name>``) follow."""


def _exact_verdicts(records: pd.DataFrame, threshold: float) -> np.ndarray:
    return metrics.verdicts(
        pd.to_numeric(records["risk_model_seeded_low"], errors="coerce").to_numpy(float),
        pd.to_numeric(records["risk_model_seeded_high"], errors="coerce").to_numpy(float),
        threshold,
    )


def screen_table(folder: RunFolder, threshold: float) -> pd.DataFrame:
    """One row per record of D: its screening risk, interval and verdict at ``threshold``, its exact
    risk and verdict where the exact game played it, then its values.

    Raises
    ------
    RunError
        When the run has no screen or is not finished.
    ParameterError
        For a threshold outside [0, 1].
    """
    t = check_threshold(threshold)
    folder.require_done()
    screened = folder.screen()
    records = folder.records()
    out = screened[["record_id", "screen_risk", "screen_low", "screen_high"]].copy()
    out["screen_verdict"] = screen_verdicts(records, folder.spec(), screened, t)
    exact = pd.DataFrame(
        {
            "record_id": records["record_id"].astype(np.int64),
            "risk_model_seeded": pd.to_numeric(records["risk_model_seeded"], errors="coerce"),
            "verdict_model_seeded": _exact_verdicts(records, t),
            "audit_group": records["audit_group"].astype(str) if "audit_group" in records else "chosen",
        }
    )
    out = out.merge(exact, on="record_id", how="left")
    out["verdict_model_seeded"] = out["verdict_model_seeded"].fillna("")
    out["audit_group"] = out["audit_group"].fillna("")
    out["screen_statistic"] = screened["screen_statistic"].to_numpy()
    out["outlier_score"] = (
        screened["outlier_score"].to_numpy(float)
        if "outlier_score" in screened.columns
        else _outlier_scores(folder)
    )
    table = folder.load_table()
    values = table.iloc[out["record_id"].to_numpy(np.int64)].reset_index(drop=True)
    values.columns = [value_column(str(c)) for c in values.columns]
    return pd.concat([out.reset_index(drop=True), values], axis=1)


def _outlier_scores(folder: RunFolder) -> np.ndarray:
    """Every record of D's outlier score, for a screen written without them."""
    from privgame.data.encoding import encode
    from privgame.data.schema import Schema
    from privgame.games.plan import run_split
    from privgame.settings.targets import outlier_scores

    spec = folder.spec()
    table = folder.load_table()
    schema = Schema.from_dict(spec.schema)
    target = run_split(spec, len(table)).target
    return outlier_scores(encode(table, schema)[target], schema)
