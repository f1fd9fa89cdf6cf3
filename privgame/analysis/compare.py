"""Compare runs of a remedy family: verdicts, share at risk, RMSD, miss rate and utility side by side.

Utility figures come from :func:`privgame.analysis.utility.stored_utility` when that module is present and
the run has them; otherwise they read "not measured".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.errors import ParameterError
from privgame.games.audit import NOT_RUN, records_at, run_summary
from privgame.games.game import TRADITIONAL, played
from privgame.store.folders import RunFolder

__all__ = [
    "COMPARE_LABELS",
    "NOT_MEASURED",
    "NOT_RUN",
    "NO_CAP",
    "compare_runs",
    "paired_risks",
    "utility_of",
]

COMPARE_LABELS: dict[str, str] = {
    "run_id": "run",
    "parent": "remedy of",
    "remedy": "remedy",
    "attacker": "attacker",
    "at_risk": "at risk",
    "undecided": "undecided",
    "not_at_risk": "not at risk",
    "attack_failed": "attack failed",
    "audited": "records audited",
    "share_at_risk": "share at risk, at most (95%)",
    "share_at_risk_low": "share at risk, at least (95%)",
    "risk_max": "highest measured risk",
    "risk_cap": "risk cap proven by DP",
    "rmsd": "gap between the games (RMSD)",
    "miss_rate": "miss rate",
    "fidelity": "distribution distance",
    "association": "association difference",
    "downstream": "model trained on synthetic",
}
"""Plain headers for the columns of :func:`compare_runs`, as the dashboard shows them."""

NOT_MEASURED = "not measured"

NO_CAP = "none"
"""``risk_cap`` of a run whose generator proves no cap (no differential-privacy guarantee)."""


def utility_of(folder: RunFolder) -> dict[str, Any]:
    """The run's stored utility figures (means), or :data:`NOT_MEASURED` for each."""
    out: dict[str, Any] = {"fidelity": NOT_MEASURED, "association": NOT_MEASURED, "downstream": NOT_MEASURED}
    try:
        from privgame.analysis.utility import stored_utility
    except ImportError:
        return out
    report = stored_utility(folder)
    if report is None:
        return out
    for key in out:
        spread = getattr(report, key, None)
        if spread is not None:
            out[key] = float(spread.mean)
    return out


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def compare_runs(folders: Sequence[RunFolder], threshold: float | None = None) -> pd.DataFrame:
    """One row per run: its remedy, verdict counts, share at risk, RMSD, miss rate and utility.

    Parameters
    ----------
    folders : sequence of RunFolder
        Finished runs, at least one.
    threshold : float, optional
        t for every run's verdicts; each run's own by default.

    Returns
    -------
    DataFrame
        Columns ``run_id``, ``parent``, ``remedy``, ``attacker``, ``at_risk``, ``undecided``,
        ``not_at_risk``, ``attack_failed``, ``audited``, ``share_at_risk`` and ``share_at_risk_low``
        (the high and low ends of the share's bracket, None without a random sample), ``rmsd``
        and ``miss_rate`` (:data:`NOT_RUN` where the traditional game was not played),
        ``inference_at_risk`` (the records at risk of inference on some secret column; None
        when the run named none), and the utility figures ``fidelity``, ``association``,
        ``downstream`` (:data:`NOT_MEASURED` when absent).

    Raises
    ------
    ParameterError
        For an empty list; RunError for a run that is not finished.
    """
    if not folders:
        raise ParameterError("Give at least one run folder to compare.")
    rows = []
    for folder in folders:
        spec = folder.spec()
        summary = run_summary(folder, threshold)
        counts = summary["answer"]["counts"]
        share = summary.get("share_at_risk")
        both = TRADITIONAL in played(spec.attack.games)
        miss = summary.get("miss_rate")
        rows.append(
            {
                "run_id": folder.run_id,
                "parent": (spec.parent or {}).get("run_id", ""),
                "remedy": (spec.parent or {}).get("description", "(original audit)"),
                # Verdicts against different attackers measure different things: the column says which.
                "attacker": spec.attack.attacker,
                "at_risk": counts["at risk"],
                "undecided": counts["undecided"],
                "not_at_risk": counts["not at risk"],
                "attack_failed": counts.get("attack failed", 0),
                "audited": summary["answer"]["audited"],
                # The bracket's high end: what a release decision must assume at most.
                "share_at_risk": _number(share["high"]) if share else None,
                "share_at_risk_low": _number(share["low"]) if share else None,
                # The measurement beside what a differentially private generator proves (None: no cap).
                "risk_max": _number(_highest(folder)),
                "risk_cap": _number(summary["guarantee"]["bound"]) if summary.get("guarantee") else NO_CAP,
                "rmsd": _number(summary.get("rmsd")) if both else NOT_RUN,
                "miss_rate": (_number(miss) if not isinstance(miss, dict) else _number(miss.get("rate")))
                if both
                else NOT_RUN,
                # Records at risk of inference, over every secret column (None: no secret named).
                "inference_at_risk": _inference_at_risk(summary),
                **utility_of(folder),
            }
        )
    return pd.DataFrame(rows)


def _inference_at_risk(summary: dict[str, Any]) -> int | None:
    """How many audited records are at risk of inference on some secret (None: not played)."""
    inference = summary.get("inference")
    if not inference:
        return None
    ids = {
        int(r) for figures in inference.get("by_secret", {}).values() for r in figures.get("at_risk_ids", ())
    }
    return len(ids)


def _highest(folder: RunFolder) -> float | None:
    """The highest model-seeded risk among the run's audited records (None: none defined)."""
    risks = pd.to_numeric(folder.records()["risk_model_seeded"], errors="coerce").dropna()
    return float(risks.max()) if len(risks) else None


def paired_risks(before: RunFolder, after: RunFolder, threshold: float | None = None) -> pd.DataFrame:
    """Model-seeded risk of every record audited by both runs, before and after (same record ids).

    Returns
    -------
    DataFrame
        ``record_id``, ``risk_before``, ``risk_after``, ``verdict_before``, ``verdict_after``,
        sorted by record id; plus ``left_out`` rows (``risk_after`` NaN) for the parent's
        records the remedy took out of D.
    """
    t_before = before.spec().threshold if threshold is None else threshold
    t_after = after.spec().threshold if threshold is None else threshold
    a = records_at(before.records(), t_before)[["record_id", "risk_model_seeded", "verdict_model_seeded"]]
    b = records_at(after.records(), t_after)[["record_id", "risk_model_seeded", "verdict_model_seeded"]]
    joined = a.merge(b, on="record_id", how="inner", suffixes=("_before", "_after"))
    gone = set(after.spec().left_out)
    left = a[a["record_id"].isin(gone)].rename(
        columns={
            "risk_model_seeded": "risk_model_seeded_before",
            "verdict_model_seeded": "verdict_model_seeded_before",
        }
    )
    left = left.assign(risk_model_seeded_after=np.nan, verdict_model_seeded_after="left out")
    out = pd.concat([joined, left], ignore_index=True).rename(
        columns={
            "risk_model_seeded_before": "risk_before",
            "risk_model_seeded_after": "risk_after",
            "verdict_model_seeded_before": "verdict_before",
            "verdict_model_seeded_after": "verdict_after",
        }
    )
    return out.sort_values("record_id", ignore_index=True)
