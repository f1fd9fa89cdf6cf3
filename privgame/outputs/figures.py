"""Charts of a run's results: the figures of Section 5 of the paper, and per-record views.

Every function is pure: it takes the run's ``records`` or ``scores`` table (see
:meth:`privgame.store.folders.RunFolder.records` and
:meth:`~privgame.store.folders.RunFolder.scores`) and returns
a :class:`Chart`, which holds the plotly figure, exactly the data plotted (to offer for
download), a title and a one-sentence caption saying how to read it.

Conventions shared by every chart:

* Colours come from the Okabe-Ito palette, which stays distinguishable with the common forms of
  colour blindness, and every colour is paired with a marker shape or line dash, so the
  model-seeded and the traditional game can be told apart without colour: model-seeded is
  vermillion, circles, solid lines; traditional is blue, squares, dashed lines.
* Axis titles say what a number is, e.g. "risk (AUC), model-seeded game".
* A record whose risk is undefined in a game (``nan``: an AUC needs 'in' and 'out' runs) is left
  out of a chart, and the caption says how many were left out.

Figure 1a is :func:`risk_scatter`, Figure 1b :func:`difference_histogram`, Figure 2a
:func:`miss_rate_chart` and Figure 2b :func:`risk_cdfs`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.core.parameters import check_threshold
from privgame.games.game import GAME_KEYS, GAMES

__all__ = [
    "DEFAULT_MISS_RATE_THRESHOLDS",
    "GAME_STYLES",
    "OKABE_ITO",
    "Chart",
    "difference_histogram",
    "inference_chart",
    "log_ticks",
    "miss_rate_chart",
    "paired_risk_chart",
    "privacy_utility_chart",
    "risk_cdfs",
    "risk_intervals",
    "risk_scatter",
    "roc_curves",
    "score_distributions",
    "screen_scatter",
    "similarity_chart",
]

OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
"""The Okabe-Ito colour-blind-safe palette."""

GAME_STYLES: dict[str, dict[str, str]] = {
    "model_seeded": {
        "label": "model-seeded game",
        "color": OKABE_ITO["vermillion"],
        "symbol": "circle",
        "dash": "solid",
    },
    "traditional": {
        "label": "traditional game",
        "color": OKABE_ITO["blue"],
        "symbol": "square",
        "dash": "dash",
    },
}
"""How each game is drawn, everywhere: a colour, a marker shape and a line dash."""

DEFAULT_MISS_RATE_THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))
"""High-risk thresholds of the miss-rate chart: 0.5, 0.55, ..., 0.95."""

_TEMPLATE = "plotly_white"
_GREY = "#999999"
_RISK_MS = "risk (AUC), model-seeded game"
_RISK_T = "risk (AUC), traditional game"
_LABEL_NAMES = {1: "in", 0: "out"}


@dataclass(frozen=True)
class Chart:
    """A figure together with what it shows.

    Attributes
    ----------
    figure : plotly.graph_objects.Figure
        The chart.
    data : DataFrame
        Exactly the numbers plotted, one row per plotted point or bar, for download.
    caption : str
        One sentence saying how to read the chart (and what was left out of it).
    title : str
        A short title.
    """

    figure: go.Figure
    data: pd.DataFrame
    caption: str
    title: str


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ParameterError(
            f"{what} lacks the columns {missing}; pass the table a run wrote "
            f"(RunFolder.records() or RunFolder.scores())."
        )


def _risks(records: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Records with both risks defined, and how many were left out."""
    _require_columns(records, ["record_id", "risk_model_seeded", "risk_traditional"], "records")
    ms = pd.to_numeric(records["risk_model_seeded"], errors="coerce").to_numpy(np.float64)
    tr = pd.to_numeric(records["risk_traditional"], errors="coerce").to_numpy(np.float64)
    metrics.abs_differences(ms, tr)  # validates: risks in [0, 1] or nan
    keep = ~(np.isnan(ms) | np.isnan(tr))
    return records.loc[keep], int(keep.size - np.count_nonzero(keep))


def _left_out(excluded: int) -> str:
    if not excluded:
        return ""
    noun = "record" if excluded == 1 else "records"
    return f" ({excluded} {noun} with an undefined risk left out)"


def _record_scores(scores: pd.DataFrame, record_id: int) -> pd.DataFrame:
    _require_columns(scores, ["record_id", "game", "label", "score"], "scores")
    try:
        rid = int(record_id)
    except (TypeError, ValueError):
        raise ParameterError(f"record_id must be a whole number, got {record_id!r}.") from None
    mine = scores.loc[scores["record_id"].to_numpy() == rid]
    if mine.empty:
        raise ParameterError(
            f"Record {rid} has no attack scores in this run; pick one of the evaluated records."
        )
    return mine


def _layout(figure: go.Figure, title: str, x_title: str, y_title: str) -> None:
    figure.update_layout(
        template=_TEMPLATE,
        title={"text": title},
        xaxis_title=x_title,
        yaxis_title=y_title,
        # Below the axis title: above the plot it collides with titles that wrap in narrow columns.
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0.0},
        margin={"t": 60, "b": 120},
    )


def _point_marker(color: str, symbol: str) -> dict[str, object]:
    """The marker of one record's point: its group's colour and shape, outlined in black."""
    return {"color": color, "symbol": symbol, "size": 8, "line": {"width": 0.5, "color": OKABE_ITO["black"]}}


def _auc_text(value: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:.3f}"


RISK_AXIS_TOP = 1.015
"""The top of every risk axis: a little above 1, so that a record at risk 0.999 is drawn whole,
not cut in half at the plot's edge."""


def _risk_floor(values: ArrayLike, threshold: float | None = None) -> float:
    """Lower end of a risk axis: a little below the smallest value, on a 0.05 grid, at least 0."""
    v = np.asarray(values, dtype=np.float64)
    low = float(np.min(v)) if v.size else 0.5
    if threshold is not None:
        low = min(low, threshold)
    return max(0.0, math.floor((min(low, 0.5) - 0.02) / 0.05) * 0.05)


# --------------------------------------------------------------------------------------------
# Figure 1a: per-record risks in both games
# --------------------------------------------------------------------------------------------

_SCATTER_GROUPS = (
    (
        "missed",
        "high risk, missed by the traditional game",
        OKABE_ITO["vermillion"],
        "diamond",
    ),
    ("both", "high risk in both games", OKABE_ITO["orange"], "triangle-up"),
    ("traditional_only", "high risk in the traditional game only", OKABE_ITO["sky_blue"], "square"),
    ("neither", "at or below t in both games", _GREY, "circle"),
)


def risk_scatter(records: pd.DataFrame, threshold: float) -> Chart:
    """Figure 1a: each record's model-seeded risk against its traditional risk.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results (``record_id``, ``risk_model_seeded``,
        ``risk_traditional``, optionally their ``_low``/``_high`` 95% bounds).
    threshold : float
        The high-risk threshold ``t``, strictly between 0.5 and 1.

    Returns
    -------
    Chart
        One point per record with both risks defined, grouped (colour and marker shape) by where
        it falls relative to ``t``; the diagonal ``R^T = R^MS``; the lines ``R^MS = t`` and
        ``R^T = t``; and a shaded rectangle over the high-risk records the traditional game
        misses (``R^MS > t``, ``R^T <= t``). ``customdata[0]`` of every point is its
        ``record_id``, so a click can open the record. ``data`` holds ``record_id``, both risks,
        their bounds when given, and ``group``.

    Raises
    ------
    ParameterError
        If a column is missing, a risk lies outside [0, 1], or ``t`` is outside [0, 1].
    """
    t = check_threshold(threshold)
    defined, excluded = _risks(records)
    ms = defined["risk_model_seeded"].to_numpy(np.float64)
    tr = defined["risk_traditional"].to_numpy(np.float64)
    group = np.where(
        ms > t, np.where(tr <= t, "missed", "both"), np.where(tr > t, "traditional_only", "neither")
    )
    bounds = [
        c
        for c in (
            "risk_model_seeded_low",
            "risk_model_seeded_high",
            "risk_traditional_low",
            "risk_traditional_high",
        )
        if c in defined.columns
    ]
    data = pd.DataFrame(
        {
            "record_id": defined["record_id"].to_numpy(),
            "risk_model_seeded": ms,
            "risk_traditional": tr,
            **{c: defined[c].to_numpy(np.float64) for c in bounds},
            "group": group,
        }
    )
    low = _risk_floor(np.r_[ms, tr], t)
    figure = go.Figure()
    # The shaded region first so that points are drawn on top of it.
    figure.add_shape(
        type="rect",
        name="missed high-risk region",
        x0=t,
        x1=1.0,
        y0=low,
        y1=t,
        fillcolor=OKABE_ITO["vermillion"],
        opacity=0.12,
        line={"width": 0},
        layer="below",
    )
    figure.add_shape(
        type="line",
        name="diagonal",
        x0=low,
        y0=low,
        x1=1.0,
        y1=1.0,
        line={"color": _GREY, "width": 1, "dash": "dot"},
    )
    for name, (x0, y0, x1, y1) in (
        ("threshold, model-seeded", (t, low, t, 1.0)),
        ("threshold, traditional", (low, t, 1.0, t)),
    ):
        figure.add_shape(
            type="line",
            name=name,
            x0=x0,
            y0=y0,
            x1=x1,
            y1=y1,
            line={"color": OKABE_ITO["black"], "width": 1, "dash": "dash"},
        )
    hover_extra = ""
    custom_cols = ["record_id"]
    if {"risk_model_seeded_low", "risk_model_seeded_high"} <= set(bounds):
        custom_cols += ["risk_model_seeded_low", "risk_model_seeded_high"]
        hover_extra += "<br>model-seeded 95% CI [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
    if {"risk_traditional_low", "risk_traditional_high"} <= set(bounds):
        i = len(custom_cols)
        custom_cols += ["risk_traditional_low", "risk_traditional_high"]
        hover_extra += f"<br>traditional 95% CI [%{{customdata[{i}]:.3f}}, %{{customdata[{i + 1}]:.3f}}]"
    for key, label, color, symbol in _SCATTER_GROUPS:
        part = data.loc[data["group"] == key]
        if part.empty:
            continue
        figure.add_trace(
            go.Scatter(
                x=part["risk_model_seeded"],
                y=part["risk_traditional"],
                mode="markers",
                name=f"{label} ({len(part)})",
                marker=_point_marker(color, symbol),
                customdata=part[custom_cols].to_numpy(dtype=object),
                hovertemplate=(
                    "record %{customdata[0]}<br>model-seeded risk %{x:.3f}"
                    "<br>traditional risk %{y:.3f}" + hover_extra + "<extra></extra>"
                ),
            )
        )
    _layout(figure, "Risk of each record in both games", _RISK_MS, _RISK_T)
    figure.update_layout(height=600)
    figure.update_xaxes(range=[low, RISK_AXIS_TOP], constrain="domain")
    figure.update_yaxes(range=[low, RISK_AXIS_TOP], scaleanchor="x", scaleratio=1)
    missed = int(np.count_nonzero(group == "missed"))
    at_risk = int(np.count_nonzero(ms > t))
    if at_risk:
        where = (
            f"points right of the vertical line have model-seeded risk above t={t:g}, and the "
            f"{missed} of those {at_risk} in the shaded area are the high-risk records the "
            "traditional game rates at or below t"
        )
    else:
        where = (
            f"no record has model-seeded risk above t={t:g} (right of the vertical line), so the "
            "shaded area of missed high-risk records is empty"
        )
    caption = (
        f"Each point is one record: {where}; points below the dotted diagonal are riskier than "
        f"the traditional game says{_left_out(excluded)}."
    )
    return Chart(figure=figure, data=data, caption=caption, title="Risk per record (Fig. 1a)")


# --------------------------------------------------------------------------------------------
# The similarity test against the attack: per record, DCR p-value and model-seeded risk
# --------------------------------------------------------------------------------------------


def similarity_chart(records: pd.DataFrame, threshold: float, *, alpha: float = 0.05) -> Chart:
    """Each audited record's DCR p-value against its model-seeded risk.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results with ``dcr_p_value`` (see :mod:`privgame.games.closeness`),
        ``risk_model_seeded`` and, optionally, ``verdict_model_seeded`` at ``threshold``.
    threshold : float
        The high-risk threshold ``t``.
    alpha : float
        The p-value at or below which the similarity test calls a record close to the release.

    Returns
    -------
    Chart
        One point per record with both figures, coloured by its verdict; the line ``risk = t`` and
        the line ``p = alpha`` (log scale). Records right of the first line and above the second
        are at risk where the similarity test sees nothing. ``customdata[0]`` is the record id.

    Raises
    ------
    ParameterError
        If a column is missing or ``t`` is outside [0, 1].
    """
    t = check_threshold(threshold)
    _require_columns(records, ["record_id", "risk_model_seeded", "dcr_p_value"], "records")
    ms = pd.to_numeric(records["risk_model_seeded"], errors="coerce").to_numpy(np.float64)
    p = pd.to_numeric(records["dcr_p_value"], errors="coerce").to_numpy(np.float64)
    keep = ~(np.isnan(ms) | np.isnan(p))
    verdict = (
        records["verdict_model_seeded"].astype(str).to_numpy()
        if "verdict_model_seeded" in records.columns
        else np.where(ms > t, "at risk", "not at risk")
    )
    data = pd.DataFrame(
        {
            "record_id": records["record_id"].to_numpy()[keep],
            "risk_model_seeded": ms[keep],
            "dcr_p_value": p[keep],
            "verdict_model_seeded": verdict[keep],
        }
    )
    figure = go.Figure()
    lowest = float(data["dcr_p_value"].min()) if len(data) else alpha
    floor = min(lowest, alpha) / 1.5
    low = _risk_floor(data["risk_model_seeded"].to_numpy(), t)
    figure.add_shape(
        type="rect",
        name="at risk, unseen by the similarity test",
        x0=t,
        x1=1.0,
        y0=alpha,
        y1=1.0,
        yref="y",
        fillcolor=OKABE_ITO["vermillion"],
        opacity=0.12,
        line={"width": 0},
        layer="below",
    )
    for name, (x0, y0, x1, y1) in (("threshold", (t, floor, t, 1.0)), ("alpha", (low, alpha, 1.0, alpha))):
        figure.add_shape(
            type="line",
            name=name,
            x0=x0,
            y0=y0,
            x1=x1,
            y1=y1,
            line={"color": OKABE_ITO["black"], "width": 1, "dash": "dash"},
        )
    for verdict_name, color, symbol in _VERDICT_STYLES:
        part = data.loc[data["verdict_model_seeded"] == verdict_name]
        if part.empty:
            continue
        figure.add_trace(
            go.Scatter(
                x=part["risk_model_seeded"],
                y=part["dcr_p_value"],
                mode="markers",
                name=f"{verdict_name} ({len(part)})",
                marker=_point_marker(color, symbol),
                customdata=part[["record_id"]].to_numpy(dtype=object),
                hovertemplate=(
                    "record %{customdata[0]}<br>model-seeded risk %{x:.3f}"
                    "<br>DCR p-value %{y:.3g}<extra></extra>"
                ),
            )
        )
    _layout(figure, "DCR p-value against risk, per record", _RISK_MS, "DCR p-value (log scale)")
    figure.update_layout(showlegend=True)
    ticks = log_ticks(floor)
    figure.update_xaxes(range=[low, RISK_AXIS_TOP])
    figure.update_yaxes(
        type="log", range=[math.log10(floor), 0.0], tickvals=ticks, ticktext=[f"{v:g}" for v in ticks]
    )
    risky = (data["verdict_model_seeded"] == "at risk").to_numpy()
    unseen = int(np.count_nonzero(risky & (data["dcr_p_value"] > alpha).to_numpy()))
    at_risk = int(np.count_nonzero(risky))
    left = int(keep.size - np.count_nonzero(keep))
    where = (
        f"{unseen} of the {at_risk} records at risk sit in the shaded area, where the similarity test "
        f"(p above {alpha:g}) sees nothing"
        if at_risk
        else f"no record is at risk at t={t:g}, so the shaded area, where the similarity test (p above "
        f"{alpha:g}) would miss a record at risk, is empty"
    )
    caption = (
        f"Each point is one audited record: its risk against the attacker (x) and how unusually close "
        f"the release comes to it among non-members (y, the DCR p-value; low is close); "
        f"{where}{_left_out(left)}."
    )
    return Chart(figure=figure, data=data, caption=caption, title="DCR p-value against risk")


# --------------------------------------------------------------------------------------------
# Each record's model-seeded risk with its interval (a run that played that game alone)
# --------------------------------------------------------------------------------------------

_VERDICT_STYLES = (
    ("at risk", OKABE_ITO["vermillion"], "circle"),
    ("undecided", OKABE_ITO["orange"], "diamond"),
    ("not at risk", OKABE_ITO["bluish_green"], "square"),
    ("attack failed", OKABE_ITO["reddish_purple"], "x"),
)


_SCREEN_STYLES: dict[str, tuple[str, str]] = {
    "at risk": (OKABE_ITO["vermillion"], "at risk (screened)"),
    "undecided": (OKABE_ITO["sky_blue"], "undecided (screened)"),
    "not at risk": (OKABE_ITO["bluish_green"], "not at risk (screened)"),
    "attack failed": (_GREY, "screening attack failed"),
}


def screen_scatter(table: pd.DataFrame, threshold: float) -> Chart:
    """Every record of D: its screening risk against how outlying it is, the audited ones marked.

    Parameters
    ----------
    table : DataFrame
        :func:`privgame.outputs.screen_tables.screen_table` (``record_id``, ``screen_risk``,
        ``screen_verdict``, ``outlier_score``, ``risk_model_seeded``, ``verdict_model_seeded``,
        ``audit_group``).
    threshold : float
        The high-risk threshold ``t``, drawn as a line.

    Returns
    -------
    Chart
        One small point per record (WebGL, so that tens of thousands draw at once), coloured by
        its screened verdict; the records the exact game played drawn again as black-edged
        diamonds at their screening risk, with their exact risk in the hover text. ``customdata[0]``
        of every point is its ``record_id``, so a click opens the record. ``data`` holds every
        plotted record.
    """
    t = check_threshold(threshold)
    _require_columns(
        table, ("record_id", "screen_risk", "screen_verdict", "outlier_score"), "the screen table"
    )
    data = table.loc[pd.to_numeric(table["screen_risk"], errors="coerce").notna()].copy()
    figure = go.Figure()
    for verdict, (color, label) in _SCREEN_STYLES.items():
        part = data.loc[data["screen_verdict"].astype(str) == verdict]
        if part.empty:
            continue
        figure.add_trace(
            go.Scattergl(
                x=part["outlier_score"],
                y=part["screen_risk"],
                mode="markers",
                name=f"{label}: {len(part):,}",
                marker={"color": color, "size": 4, "opacity": 0.6},
                customdata=np.stack([part["record_id"].to_numpy()], axis=1),
                hovertemplate=(
                    "record %{customdata[0]}<br>screening risk %{y:.3f}<br>outlier score %{x:.3f}"
                    "<extra></extra>"
                ),
            )
        )
    played = data.loc[data.get("verdict_model_seeded", pd.Series("", index=data.index)).astype(str) != ""]
    if not played.empty:
        exact = pd.to_numeric(played["risk_model_seeded"], errors="coerce").to_numpy(float)
        figure.add_trace(
            go.Scatter(
                x=played["outlier_score"],
                y=played["screen_risk"],
                mode="markers",
                name=f"played exactly: {len(played):,}",
                marker={
                    "symbol": "diamond",
                    "size": 10,
                    "color": "rgba(0,0,0,0)",
                    "line": {"width": 1.5, "color": OKABE_ITO["black"]},
                },
                customdata=np.stack(
                    [
                        played["record_id"].to_numpy(),
                        exact,
                        played["verdict_model_seeded"].astype(str).to_numpy(),
                    ],
                    axis=1,
                ),
                hovertemplate=(
                    "record %{customdata[0]}<br>screening risk %{y:.3f}<br>exact risk %{customdata[1]:.3f} "
                    "(%{customdata[2]})<extra></extra>"
                ),
            )
        )
    figure.add_hline(y=t, line={"dash": "dot", "color": _GREY}, annotation_text=f"t = {t:g}")
    _layout(
        figure,
        "Every record of D, screened",
        "outlier score (mean distance to its 5 nearest records)",
        "screening risk (AUC)",
    )
    caption = (
        f"Each of the {len(data):,} records of D at its screening risk (the strongest of the screen's "
        f"statistics) against how outlying it is; colour is its screened verdict at t = {t:g}. "
        "Diamonds are the records the exact game played (hover for their exact risk). Click a point to "
        "open the record."
    )
    from privgame.games.screen_table import SCREEN_EXPORT_COLUMNS

    columns = [c for c in SCREEN_EXPORT_COLUMNS if c in data.columns]
    return Chart(figure, data[columns].reset_index(drop=True), caption, "Every record of D, screened")


def risk_intervals(records: pd.DataFrame, threshold: float, *, cap: float | None = None) -> Chart:
    """Each record's model-seeded risk with its interval, sorted, coloured by its verdict at t.

    The chart of a run that played the model-seeded game alone (the leave-one-out attacker, a
    remedy's re-audit), where the two games cannot be set against each other.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results: ``record_id``, ``risk_model_seeded`` and its
        ``risk_model_seeded_low``/``_high`` 95% bounds; ``audit_group`` when present.
    threshold : float
        The high-risk threshold ``t``, strictly between 0.5 and 1.
    cap : float, optional
        The highest risk a differential-privacy guarantee allows any record
        (:func:`privgame.games.audit.guarantee_answer`), drawn as a solid line beside the
        measurement.

    Returns
    -------
    Chart
        One point per record with a defined risk, from the lowest risk at the bottom to the
        highest at the top, with a horizontal bar over its interval; a dashed line at ``t``, a
        dotted one at 0.5 (a random guess) and, with ``cap``, a solid one at the cap.
        ``customdata[0]`` of every point is its ``record_id``, so a click can open the record.
        ``data`` holds ``record_id``, the risk, its bounds, ``verdict`` and ``group``.

    Raises
    ------
    ParameterError
        If a column is missing, a risk lies outside [0, 1], or ``t`` is outside [0, 1].
    """
    t = check_threshold(threshold)
    columns = ["record_id", "risk_model_seeded", "risk_model_seeded_low", "risk_model_seeded_high"]
    _require_columns(records, columns, "records")
    risk = pd.to_numeric(records["risk_model_seeded"], errors="coerce").to_numpy(np.float64)
    metrics.abs_differences(risk, risk)  # validates: risks in [0, 1] or nan
    keep = ~np.isnan(risk)
    defined = records.loc[keep]
    low = defined["risk_model_seeded_low"].to_numpy(np.float64)
    high = defined["risk_model_seeded_high"].to_numpy(np.float64)
    group = (
        defined["audit_group"].astype(str).to_numpy()
        if "audit_group" in defined.columns
        else np.full(len(defined), "chosen")
    )
    data = pd.DataFrame(
        {
            "record_id": defined["record_id"].to_numpy(),
            "risk_model_seeded": risk[keep],
            "risk_model_seeded_low": low,
            "risk_model_seeded_high": high,
            "verdict": metrics.verdicts(low, high, t),
            "group": group,
        }
    ).sort_values(["risk_model_seeded", "record_id"], kind="stable", ignore_index=True)
    data["label"] = [f"record {r} ({g})" for r, g in zip(data["record_id"], data["group"], strict=True)]
    floor = _risk_floor(np.r_[data["risk_model_seeded_low"].to_numpy(), data["risk_model_seeded"]], t)
    figure = go.Figure()
    lines = [(t, "threshold t", {"color": OKABE_ITO["black"], "width": 1, "dash": "dash"})]
    lines.append((0.5, "random guess", {"color": _GREY, "width": 1, "dash": "dot"}))
    if cap is not None:
        lines.append((cap, "DP cap", {"color": OKABE_ITO["bluish_green"], "width": 2}))
        figure.add_annotation(
            x=cap, y=1, yref="paper", text=f"DP cap {cap:.3f}", showarrow=False, yanchor="bottom"
        )
    for x, name, line in lines:
        figure.add_shape(
            type="line",
            name=name,
            x0=x,
            x1=x,
            y0=0,
            y1=1,
            yref="paper",
            line=line,
        )
    for verdict, color, symbol in _VERDICT_STYLES:
        part = data.loc[data["verdict"] == verdict]
        if part.empty:
            continue
        figure.add_trace(
            go.Scatter(
                x=part["risk_model_seeded"],
                y=part["label"],
                mode="markers",
                name=f"{verdict} ({len(part)})",
                marker={"color": color, "symbol": symbol, "size": 9},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": part["risk_model_seeded_high"] - part["risk_model_seeded"],
                    "arrayminus": part["risk_model_seeded"] - part["risk_model_seeded_low"],
                    "color": color,
                    "thickness": 1.5,
                    "width": 0,
                },
                customdata=part[columns].to_numpy(dtype=object),
                hovertemplate=(
                    "record %{customdata[0]}<br>model-seeded risk %{x:.3f}"
                    "<br>95% CI [%{customdata[2]:.3f}, %{customdata[3]:.3f}]<extra></extra>"
                ),
            )
        )
    _layout(figure, "Risk of each record in this release, with its 95% interval", _RISK_MS, "")
    figure.update_layout(height=max(320, 22 * len(data) + 200))
    figure.update_xaxes(range=[min(floor, cap) if cap is not None else floor, RISK_AXIS_TOP])
    figure.update_yaxes(
        categoryorder="array", categoryarray=list(data["label"]), showticklabels=len(data) <= 60
    )
    counts = {v: int(np.count_nonzero(data["verdict"].to_numpy() == v)) for v, _, _ in _VERDICT_STYLES}
    excluded = int(keep.size - np.count_nonzero(keep))
    caption = (
        f"Each point is one record's model-seeded risk, its bar the 95% interval: "
        f"{counts['at risk']} lie wholly above t={t:g} (at risk), {counts['undecided']} contain it "
        f"(undecided) and {counts['not at risk']} lie at or below it (not at risk)"
        + (
            f"; {counts['attack failed']} lie at or below the dotted line (attack failed: no better than "
            "a guess, never read as safe)"
            if counts["attack failed"]
            else "; left of the dotted line the attack does worse than a guess"
        )
        + f"{_left_out(excluded)}."
        + (
            f" The solid line at {cap:.3f} is the cap the generator's differential-privacy guarantee "
            "puts on every record's risk, whatever the attack."
            if cap is not None
            else ""
        )
    )
    return Chart(figure=figure, data=data, caption=caption, title="Risk per record, with intervals")


# --------------------------------------------------------------------------------------------
# Figure 1b: histogram of |R^MS - R^T|
# --------------------------------------------------------------------------------------------


def difference_histogram(records: pd.DataFrame, *, bin_width: float = 0.02, cutoff: float = 0.1) -> Chart:
    """Figure 1b: histogram of each record's absolute difference ``|R^MS - R^T|``.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results.
    bin_width : float, default 0.02
        Width of each bar, in AUC units (in (0, 1]).
    cutoff : float, default 0.1
        A difference marked by a vertical line; the caption gives the share of records beyond
        it (the paper reports the share above 0.1).

    Returns
    -------
    Chart
        One bar per bin ``[bin_low, bin_high)`` (the last bin is closed); ``data`` holds
        ``bin_low``, ``bin_high`` and ``records``.

    Raises
    ------
    ParameterError
        If a column is missing, a risk lies outside [0, 1], or ``bin_width``/``cutoff`` is out
        of range.
    """
    if not (isinstance(bin_width, int | float) and 0.0 < bin_width <= 1.0):
        raise ParameterError(f"bin_width must be in (0, 1], got {bin_width!r}; e.g. 0.02.")
    if not (isinstance(cutoff, int | float) and 0.0 <= cutoff <= 1.0):
        raise ParameterError(f"cutoff must be a difference in [0, 1], got {cutoff!r}; e.g. 0.1.")
    defined, excluded = _risks(records)
    diff = metrics.abs_differences(
        defined["risk_model_seeded"].to_numpy(np.float64),
        defined["risk_traditional"].to_numpy(np.float64),
    )
    top = max(float(diff.max()) if diff.size else 0.0, cutoff)
    n_bins = max(1, math.ceil(top / bin_width - 1e-9))
    edges = np.round(np.arange(n_bins + 1) * bin_width, 12)
    # np.histogram drops values above the last edge; rounding must never push the maximum past it.
    edges[-1] = max(edges[-1], top)
    counts, _ = np.histogram(diff, bins=edges)
    data = pd.DataFrame({"bin_low": edges[:-1], "bin_high": edges[1:], "records": counts.astype(np.int64)})
    figure = go.Figure(
        go.Bar(
            x=(edges[:-1] + edges[1:]) / 2,
            y=counts,
            width=np.full(counts.size, bin_width),
            name="records",
            marker={
                "color": OKABE_ITO["bluish_green"],
                "line": {"width": 0.5, "color": OKABE_ITO["black"]},
            },
            customdata=np.c_[edges[:-1], edges[1:]],
            hovertemplate=(
                "|R_MS - R_T| in [%{customdata[0]:.2f}, %{customdata[1]:.2f}): %{y} records<extra></extra>"
            ),
        )
    )
    figure.add_shape(
        type="line",
        name="cutoff",
        x0=cutoff,
        x1=cutoff,
        y0=0,
        y1=1,
        yref="paper",
        line={"color": OKABE_ITO["black"], "width": 1, "dash": "dash"},
    )
    _layout(
        figure,
        "How far apart the two risks of a record are",
        "absolute difference of risks |R_MS − R_T| (AUC)",
        "number of records",
    )
    figure.update_layout(bargap=0, showlegend=False)
    # Whole records on the count axis: plotly's automatic ticks step by 0.5 for small counts.
    top = int(counts.max()) if counts.size else 0
    figure.update_yaxes(tick0=0, dtick=max(1, math.ceil(top / 6)), tickformat=",d", rangemode="tozero")
    if diff.size:
        share = float(np.mean(diff > cutoff))
        caption = (
            f"Each bar counts the records whose model-seeded and traditional risks differ by that "
            f"much: {share:.0%} of the {diff.size} records differ by more than {cutoff:g} "
            f"(right of the dashed line), and the largest difference is {float(diff.max()):.2f}"
            f"{_left_out(excluded)}."
        )
    else:
        caption = f"No record has both risks defined, so there is no difference to show{_left_out(excluded)}."
    return Chart(figure=figure, data=data, caption=caption, title="Difference between the risks (Fig. 1b)")


# --------------------------------------------------------------------------------------------
# Figure 2a: miss rate against the high-risk threshold
# --------------------------------------------------------------------------------------------


def miss_rate_chart(
    records: pd.DataFrame, thresholds: ArrayLike | None = None, *, current: float | None = None
) -> Chart:
    """Figure 2a: the traditional game's miss rate (Eq. 9) at several high-risk thresholds.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results.
    thresholds : array-like of float, optional
        High-risk thresholds ``t`` in [0, 1]; default 0.5, 0.55, ..., 0.95.
    current : float, optional
        The threshold the page or report is set to: marked by a vertical line, and added to the
        thresholds when it is not one of them, so that its own miss rate is a point of the curve.

    Returns
    -------
    Chart
        One point per threshold at which the miss rate is defined; a threshold with no record
        above it (``R^MS > t``) has no miss rate, is left out of the chart and of ``data``, and
        the caption names it. ``data`` holds ``threshold``, ``miss_rate``, ``missed`` and
        ``at_risk``.

    Raises
    ------
    ParameterError
        If a column is missing, a risk lies outside [0, 1], or a threshold is outside [0, 1].
    """
    ts = DEFAULT_MISS_RATE_THRESHOLDS if thresholds is None else thresholds
    if current is not None:
        current = check_threshold(current)
        given = np.asarray(ts, dtype=np.float64)
        if not np.isclose(given, current).any():
            ts = np.sort(np.append(given, current))
    defined, excluded = _risks(records)
    curve = metrics.miss_rate_curve(
        defined["risk_model_seeded"].to_numpy(np.float64),
        defined["risk_traditional"].to_numpy(np.float64),
        ts,
    )
    kept = [m for m in curve if m.rate is not None]
    dropped = [m.threshold for m in curve if m.rate is None]
    data = pd.DataFrame(
        {
            "threshold": np.array([m.threshold for m in kept], dtype=np.float64),
            "miss_rate": np.array([m.rate for m in kept], dtype=np.float64),
            "missed": np.array([m.missed for m in kept], dtype=np.int64),
            "at_risk": np.array([m.at_risk for m in kept], dtype=np.int64),
        }
    )
    style = GAME_STYLES["traditional"]
    figure = go.Figure(
        go.Scatter(
            x=data["threshold"],
            y=data["miss_rate"],
            mode="lines+markers",
            name="miss rate of the traditional game",
            line={"color": style["color"], "dash": style["dash"]},
            marker={"symbol": style["symbol"], "size": 9, "color": style["color"]},
            customdata=data[["missed", "at_risk"]].to_numpy(),
            hovertemplate=(
                "t = %{x:.2f}: miss rate %{y:.2f}<br>%{customdata[0]} of %{customdata[1]} "
                "high-risk records missed<extra></extra>"
            ),
        )
    )
    _layout(
        figure,
        "Share of high-risk records the traditional game misses",
        "high-risk threshold t (risk, AUC)",
        "miss rate",
    )
    figure.update_yaxes(range=[-0.02, 1.02])
    if len(curve):
        figure.update_xaxes(
            range=[min(m.threshold for m in curve) - 0.02, max(m.threshold for m in curve) + 0.02]
        )
    caption = (
        "Each point is the share of records with model-seeded risk above t that the traditional "
        "game rates at or below t (0 = none missed, 1 = all missed)"
    )
    if dropped:
        listed = ", ".join(f"{t:g}" for t in dropped)
        caption += (
            f"; the miss rate is undefined and left out at t = {listed}, where no record has "
            "model-seeded risk above t"
        )
    if current is not None:
        figure.add_vline(
            x=current,
            line={"color": "#444444", "width": 1, "dash": "dot"},
            annotation_text=f"t = {current:g}",
            annotation_position="top",
        )
        at = data.loc[np.isclose(data["threshold"], current)]
        if len(at):
            row = at.iloc[0]
            caption += (
                f". At the current t = {current:g}, {int(row['missed'])} of {int(row['at_risk'])} "
                "high-risk records are missed (dotted line)"
            )
        else:
            caption += f". At the current t = {current:g} (dotted line) no record is at risk"
    caption += _left_out(excluded) + "."
    if data.empty:
        figure.add_annotation(
            text="no record has model-seeded risk above any threshold shown",
            showarrow=False,
            xref="paper",
            yref="paper",
            x=0.5,
            y=0.5,
        )
    return Chart(figure=figure, data=data, caption=caption, title="Miss rate by threshold (Fig. 2a)")


# --------------------------------------------------------------------------------------------
# Figure 2b: distributions of the risks
# --------------------------------------------------------------------------------------------


def risk_cdfs(records: pd.DataFrame) -> Chart:
    """Figure 2b: empirical cumulative distribution of both risks across records.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results.

    Returns
    -------
    Chart
        One step curve per game; ``data`` holds ``game``, ``risk`` and ``share_at_or_below``
        (the ECDF of :func:`privgame.core.metrics.ecdf`).

    Raises
    ------
    ParameterError
        If a column is missing or a risk lies outside [0, 1].
    """
    defined, excluded = _risks(records)
    frames = []
    figure = go.Figure()
    for game in GAMES:
        x, f = metrics.ecdf(defined[game.column()].to_numpy(np.float64))
        frames.append(pd.DataFrame({"game": game.key, "risk": x, "share_at_or_below": f}))
        style = GAME_STYLES[game.key]
        figure.add_trace(
            go.Scatter(
                x=x,
                y=f,
                mode="lines+markers",
                line_shape="hv",
                name=style["label"],
                line={"color": style["color"], "dash": style["dash"]},
                marker={"symbol": style["symbol"], "size": 6, "color": style["color"]},
                hovertemplate="risk ≤ %{x:.3f}: %{y:.0%} of records<extra>" + style["label"] + "</extra>",
            )
        )
    data = pd.concat(frames, ignore_index=True)
    _layout(
        figure,
        "Distribution of the risks across records",
        "risk (AUC)",
        "share of records with risk at or below x",
    )
    figure.update_yaxes(range=[-0.02, 1.02])
    figure.update_xaxes(range=[_risk_floor(data["risk"]), RISK_AXIS_TOP])
    caption = (
        "Each curve gives, for a risk x, the share of records whose risk is at most x in that "
        "game: a curve further right has more high-risk records, and a steeper curve means the "
        f"game spreads the records' risks less{_left_out(excluded)}."
    )
    return Chart(figure=figure, data=data, caption=caption, title="Distribution of the risks (Fig. 2b)")


# --------------------------------------------------------------------------------------------
# One record: ROC curves and score distributions
# --------------------------------------------------------------------------------------------


def log_ticks(lowest: float) -> list[float]:
    """Readable ticks for a log axis from ``lowest`` (> 0) to 1: 1, 2 and 5 times the powers of
    ten in range, 1, 2, 3 and 5 times them when that gives fewer than three, and the powers of
    ten alone when it gives more than ten.

    >>> log_ticks(0.25)
    [0.3, 0.5, 1.0]
    >>> log_ticks(0.004)
    [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    """
    lowest = min(max(float(lowest), 1e-12), 1.0)
    decades = range(math.floor(math.log10(lowest)), 1)

    def between(factors: tuple[int, ...]) -> list[float]:
        found = {round(m * 10.0**e, 12) for e in decades for m in factors}
        return sorted(v for v in found if lowest * (1 - 1e-9) <= v <= 1.0)

    ticks = between((1, 2, 5))
    if len(ticks) < 3:
        ticks = between((1, 2, 3, 5))
    if len(ticks) > 10:
        ticks = between((1,))
    return ticks


def _played_games(mine: pd.DataFrame) -> tuple[str, ...]:
    """The games with runs of this record (a game not played, such as the traditional game against
    the leave-one-out attacker, gets no empty panel or curve); both when there are none at all."""
    played = tuple(game for game in GAME_KEYS if (mine["game"] == game).any())
    return played or GAME_KEYS


def roc_curves(scores: pd.DataFrame, record_id: int, *, log: bool = False) -> Chart:
    """ROC curves of the attack on one record, in both games.

    Parameters
    ----------
    scores : DataFrame
        The run's scores (``record_id``, ``game``, ``label``, ``score``).
    record_id : int
        The record.
    log : bool, default False
        Draw both axes on a log scale, which shows the low false-positive rates that matter for
        a strong attack; points with a rate of 0 cannot be drawn there and are left out.

    Returns
    -------
    Chart
        One curve per game with its AUC in the legend, and the diagonal of random guessing.
        ``data`` holds ``game``, ``threshold``, ``fpr`` and ``tpr`` of every plotted point.

    Raises
    ------
    ParameterError
        If a column is missing or the record has no scores.
    """
    mine = _record_scores(scores, record_id)
    figure = go.Figure()
    frames = []
    aucs: dict[str, float] = {}
    for game in _played_games(mine):
        part = mine.loc[mine["game"] == game]
        s = part["score"].to_numpy(np.float64)
        lab = part["label"].to_numpy(np.float64)
        curve = metrics.roc_points(s, lab)
        aucs[game] = metrics.auc(s, lab)
        frame = pd.DataFrame(
            {"game": game, "threshold": curve.thresholds, "fpr": curve.fpr, "tpr": curve.tpr}
        )
        frame = frame.dropna(subset=["fpr", "tpr"])
        if log:
            frame = frame.loc[(frame["fpr"] > 0) & (frame["tpr"] > 0)]
        frames.append(frame)
        style = GAME_STYLES[game]
        auc_text = _auc_text(aucs[game])
        figure.add_trace(
            go.Scatter(
                x=frame["fpr"],
                y=frame["tpr"],
                mode="lines+markers",
                line_shape="linear",
                name=f"{style['label']} (AUC {auc_text})",
                line={"color": style["color"], "dash": style["dash"]},
                marker={"symbol": style["symbol"], "size": 6, "color": style["color"]},
                hovertemplate=(
                    "false positive rate %{x:.3f}<br>true positive rate %{y:.3f}<extra>"
                    + style["label"]
                    + "</extra>"
                ),
            )
        )
    data = pd.concat(frames, ignore_index=True)
    positive = data.loc[data["fpr"] > 0, "fpr"]
    low = float(positive.min()) if log and not positive.empty else 0.0
    diag = np.geomspace(low, 1.0, 50) if log and low > 0 else np.array([0.0, 1.0])
    figure.add_trace(
        go.Scatter(
            x=diag,
            y=diag,
            mode="lines",
            name="random guess",
            line={"color": _GREY, "dash": "dot", "width": 1},
            hoverinfo="skip",
        )
    )
    scale = "log" if log else "linear"
    _layout(
        figure,
        f"ROC curves of the attack on record {int(record_id)}" + (" (log scale)" if log else ""),
        "false positive rate (share of 'out' runs the attack calls 'in')",
        "true positive rate (share of 'in' runs the attack calls 'in')",
    )
    figure.update_xaxes(type=scale)
    figure.update_yaxes(type=scale)
    if log:
        # Labelled ticks chosen here: plotly's defaults label every minor tick unreadably, or,
        # over less than a decade (a few runs), none but 1.
        rates = data.loc[(data["fpr"] > 0) & (data["tpr"] > 0), ["fpr", "tpr"]].to_numpy()
        lowest = float(rates.min()) if rates.size else 0.1
        ticks = log_ticks(lowest)
        labels = {"tickvals": ticks, "ticktext": [f"{v:g}" for v in ticks], "minor": {"ticks": "outside"}}
        figure.update_xaxes(**labels)
        figure.update_yaxes(**labels)
    if not log:
        figure.update_xaxes(range=[-0.01, 1.01], constrain="domain")
        figure.update_yaxes(range=[-0.01, 1.01], scaleanchor="x", scaleratio=1)
    caption = (
        "Each curve traces the attack's true positive rate against its false positive rate as its "
        "decision threshold moves; the further a curve bends above the dotted diagonal (random "
        "guessing), the riskier the record in that game"
    )
    if log:
        caption += ", and on these log axes points with a rate of 0 are left out"
    caption += "."
    return Chart(
        figure=figure,
        data=data,
        caption=caption,
        title=f"ROC curves, record {int(record_id)}" + (" (log-log)" if log else ""),
    )


def score_distributions(scores: pd.DataFrame, record_id: int, *, bins: int = 20) -> Chart:
    """Histograms of the attack's scores on one record, for 'in' and 'out' runs, in each game.

    Parameters
    ----------
    scores : DataFrame
        The run's scores (``record_id``, ``game``, ``label``, ``score``).
    record_id : int
        The record.
    bins : int, default 20
        Number of bins, shared by both games and both labels so the bars line up.

    Returns
    -------
    Chart
        Two panels (model-seeded game above, traditional below), each with the 'in' runs
        (reddish purple, hatched) and the 'out' runs (bluish green, plain) overlaid. ``data``
        holds ``game``, ``label`` ('in' or 'out'), ``bin_low``, ``bin_high`` and ``runs``.

    Raises
    ------
    ParameterError
        If a column is missing, the record has no scores, or ``bins`` is not a positive integer.
    """
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise ParameterError(f"bins must be a whole number of at least 1, got {bins!r}.")
    mine = _record_scores(scores, record_id)
    all_scores = mine["score"].to_numpy(np.float64)
    edges = np.histogram_bin_edges(all_scores, bins=int(bins))
    games = _played_games(mine)
    aucs = {}
    for game in games:
        part = mine.loc[mine["game"] == game]
        aucs[game] = metrics.auc(part["score"].to_numpy(np.float64), part["label"].to_numpy(np.float64))
    figure = make_subplots(
        rows=len(games),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=[f"{GAME_STYLES[g]['label']} (AUC {_auc_text(aucs[g])})" for g in games],
    )
    styles = {
        1: ("'in' runs (record in the training data)", OKABE_ITO["reddish_purple"], "/"),
        0: ("'out' runs (record not in the training data)", OKABE_ITO["bluish_green"], ""),
    }
    frames = []
    centres = (edges[:-1] + edges[1:]) / 2
    widths = np.diff(edges)
    for row, game in enumerate(games, start=1):
        part = mine.loc[mine["game"] == game]
        # 'out' first so that the hatched 'in' bars are drawn on top of it
        for label in (0, 1):
            values = part.loc[part["label"].to_numpy() == label, "score"].to_numpy(np.float64)
            counts, _ = np.histogram(values, bins=edges)
            frames.append(
                pd.DataFrame(
                    {
                        "game": game,
                        "label": _LABEL_NAMES[label],
                        "bin_low": edges[:-1],
                        "bin_high": edges[1:],
                        "runs": counts.astype(np.int64),
                    }
                )
            )
            name, color, pattern = styles[label]
            figure.add_trace(
                go.Bar(
                    x=centres,
                    y=counts,
                    width=widths,
                    name=name,
                    legendgroup=str(label),
                    legendrank=1000 - label,
                    showlegend=row == 1,
                    opacity=0.6,
                    marker={
                        "color": color,
                        "pattern": {"shape": pattern},
                        "line": {"width": 0.5, "color": OKABE_ITO["black"]},
                    },
                    hovertemplate=(
                        f"%{{y}} {_LABEL_NAMES[label]!r} runs near score %{{x:.3f}}<extra></extra>"
                    ),
                ),
                row=row,
                col=1,
            )
    data = pd.concat(frames, ignore_index=True)
    figure.update_layout(
        template=_TEMPLATE,
        title={"text": f"Attack scores on record {int(record_id)}"},
        barmode="overlay",
        bargap=0,
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.06, "xanchor": "left", "x": 0.0},
        margin={"t": 110},
    )
    figure.update_xaxes(title_text="attack score (higher = more likely 'in')", row=len(games), col=1)
    for row in range(1, len(games) + 1):
        figure.update_yaxes(title_text="number of runs", row=row, col=1)
    caption = (
        "Each panel shows how the attack scored the runs in which the record was in the training "
        "data (hatched) and those in which it was not (plain): the less the two overlap, the "
        "easier the record is to single out in that game."
    )
    return Chart(figure=figure, data=data, caption=caption, title=f"Attack scores, record {int(record_id)}")


# --------------------------------------------------------------------------------------------
# Remedies: a record before and after, and a family's privacy against its utility
# --------------------------------------------------------------------------------------------


def paired_risk_chart(pairs: pd.DataFrame, threshold: float) -> Chart:
    """Each record's model-seeded risk before and after a remedy (the same record ids).

    Parameters
    ----------
    pairs : DataFrame
        :func:`privgame.analysis.compare.paired_risks`: ``record_id``, ``risk_before``, ``risk_after``
        (NaN for a record the remedy left out of D).
    threshold : float
        t, drawn as a dotted line.

    Returns
    -------
    Chart
        One line per record from "before" to "after", and a cross at "before" for each record
        left out of D; ``data`` holds the pairs drawn as lines.
    """
    _require_columns(pairs, ["record_id", "risk_before", "risk_after"], "the paired risks")
    t = check_threshold(threshold)
    both = pairs.dropna(subset=["risk_before", "risk_after"])
    gone = int(pairs["risk_after"].isna().sum())
    figure = go.Figure()
    for _, row in both.iterrows():
        up = row["risk_after"] > row["risk_before"]
        colour = OKABE_ITO["vermillion"] if up else OKABE_ITO["bluish_green"]
        figure.add_trace(
            go.Scatter(
                x=["before", "after"],
                y=[row["risk_before"], row["risk_after"]],
                mode="lines+markers",
                line={"color": colour, "dash": "solid" if up else "dot"},
                marker={"symbol": "triangle-up" if up else "triangle-down", "size": 8, "color": colour},
                name=f"record {int(row['record_id'])}",
                showlegend=False,
                hovertemplate=f"record {int(row['record_id'])}: %{{y:.3f}}<extra></extra>",
            )
        )
    left = pairs[pairs["risk_after"].isna()].dropna(subset=["risk_before"])
    if len(left):
        figure.add_trace(
            go.Scatter(
                x=["before"] * len(left),
                y=left["risk_before"],
                mode="markers",
                marker={"symbol": "x", "size": 10, "color": _GREY},
                name="left out of D",
                text=[f"record {int(r)}" for r in left["record_id"]],
                hovertemplate="%{text}: %{y:.3f}, left out of D<extra></extra>",
            )
        )
    figure.add_hline(y=t, line_dash="dot", line_color=_GREY, annotation_text=f"t = {t:g}")
    _layout(figure, "Risk of the same records before and after the remedy", "run", _RISK_MS)
    # The padding keeps both category labels inside the plot.
    figure.update_xaxes(
        type="category", categoryorder="array", categoryarray=["before", "after"], range=[-0.3, 1.3]
    )
    figure.update_yaxes(range=[0.0, 1.02])
    rose = int((both["risk_after"] > both["risk_before"]).sum())
    caption = (
        f"Each line is one record audited in both runs ({len(both)} records): solid red lines with "
        f"upward triangles rose ({rose}), dotted green lines with downward triangles fell or stayed "
        f"({len(both) - rose}). Grey crosses are records the remedy left out of D ({gone}), at their "
        "risk before. The dotted line is t."
    )
    return Chart(figure=figure, data=both.reset_index(drop=True), caption=caption, title="Before → after")


def privacy_utility_chart(table: pd.DataFrame) -> Chart:
    """A remedy family's share of D at risk against its downstream utility, one point per run.

    Parameters
    ----------
    table : DataFrame
        :func:`privgame.analysis.compare.compare_runs`: ``run_id``, ``remedy``, ``share_at_risk`` and
        ``downstream`` (a number, or "not measured").

    Returns
    -------
    Chart
        ``data`` holds the runs drawn; the caption names the runs left out (no share estimate
        or no downstream utility measured).
    """
    _require_columns(table, ["run_id", "remedy", "share_at_risk", "downstream"], "the comparison")
    utility = pd.to_numeric(table["downstream"], errors="coerce")
    share = pd.to_numeric(table["share_at_risk"], errors="coerce")
    drawn = table.assign(share_at_risk=share, downstream=utility).dropna(
        subset=["share_at_risk", "downstream"]
    )
    figure = go.Figure(
        go.Scatter(
            x=drawn["downstream"],
            y=drawn["share_at_risk"],
            mode="markers+text",
            text=drawn["remedy"],
            # Alternate sides, so that two runs of close utility keep readable labels.
            textposition=["top left" if i % 2 == 0 else "top right" for i in range(len(drawn))],
            marker={"symbol": "diamond", "size": 12, "color": OKABE_ITO["blue"]},
            hovertemplate="%{text}: utility %{x:.3f}, share at risk at most %{y:.0%}<extra></extra>",
        )
    )
    _layout(
        figure,
        "Privacy against utility",
        "downstream utility (train on synthetic, test on real)",
        "share of D at risk, at most (95%)",
    )
    figure.update_yaxes(range=[-0.02, 1.02], tickformat=".0%")
    if len(drawn):
        # Room on both sides for the remedies' labels, however close the runs' utilities are.
        low, high = float(drawn["downstream"].min()), float(drawn["downstream"].max())
        pad = max(0.01, 0.5 * (high - low))
        figure.update_xaxes(range=[low - pad, high + pad])
    missing = len(table) - len(drawn)
    caption = (
        "Each point is one run of the family: lower is more private, further right more useful; a good "
        "remedy moves down without moving far left."
        + (f" Runs without a share estimate or a measured utility, not drawn: {missing}." if missing else "")
    )
    return Chart(
        figure=figure, data=drawn.reset_index(drop=True), caption=caption, title="Privacy vs utility"
    )


# --------------------------------------------------------------------------------------------
# Attribute inference: each record's inference gain against its membership risk
# --------------------------------------------------------------------------------------------

_GAIN_STYLES = _VERDICT_STYLES[:3]


def inference_chart(records: pd.DataFrame, secret: str, threshold: float, *, suffix: str = "") -> Chart:
    """Each audited record's inference gain on ``secret``, with its interval, against its
    membership risk.

    Parameters
    ----------
    records : DataFrame
        The run's per-record results with ``risk_model_seeded`` and the inference columns of
        :func:`privgame.games.inference.inference_columns` (``suffix`` appended).
    secret : str
        The secret column's name, for the titles.
    threshold : float
        The inference threshold (a gain above it, its whole interval, is at risk).
    suffix : str
        The columns' suffix: "" for a run with one secret, ``_<column>`` for several.

    Returns
    -------
    Chart
        One point per record, coloured by its inference verdict, with its gain's interval as an
        error bar; the line ``gain = threshold``. ``customdata[0]`` is the record id.

    Raises
    ------
    ParameterError
        If a column is missing.
    """
    columns = [
        f"{name}{suffix}"
        for name in ("inference_gain", "inference_low", "inference_high", "verdict_inference")
    ]
    _require_columns(records, ["record_id", "risk_model_seeded", *columns], "records")
    gain, low, high, verdict = columns
    data = pd.DataFrame(
        {
            "record_id": records["record_id"].to_numpy(),
            "risk_model_seeded": pd.to_numeric(records["risk_model_seeded"], errors="coerce").to_numpy(float),
            "inference_gain": pd.to_numeric(records[gain], errors="coerce").to_numpy(float),
            "inference_low": pd.to_numeric(records[low], errors="coerce").to_numpy(float),
            "inference_high": pd.to_numeric(records[high], errors="coerce").to_numpy(float),
            "verdict_inference": records[verdict].astype(str).to_numpy(),
        }
    )
    keep = data["inference_gain"].notna() & data["risk_model_seeded"].notna()
    left = int((~keep).sum())
    data = data.loc[keep].reset_index(drop=True)
    figure = go.Figure()
    low_x = _risk_floor(data["risk_model_seeded"].to_numpy())
    figure.add_shape(
        type="line",
        name="threshold",
        x0=low_x,
        x1=RISK_AXIS_TOP,
        y0=threshold,
        y1=threshold,
        line={"color": OKABE_ITO["black"], "width": 1, "dash": "dash"},
    )
    for verdict_name, color, symbol in _GAIN_STYLES:
        part = data.loc[data["verdict_inference"] == verdict_name]
        if part.empty:
            continue
        figure.add_trace(
            go.Scatter(
                x=part["risk_model_seeded"],
                y=part["inference_gain"],
                mode="markers",
                name=f"{verdict_name} ({len(part)})",
                marker=_point_marker(color, symbol),
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["inference_high"] - part["inference_gain"]).to_numpy(),
                    "arrayminus": (part["inference_gain"] - part["inference_low"]).to_numpy(),
                    "color": color,
                    "thickness": 1,
                    "width": 0,
                },
                customdata=part[["record_id", "inference_low", "inference_high"]].to_numpy(dtype=object),
                hovertemplate=(
                    "record %{customdata[0]}<br>membership risk %{x:.3f}<br>inference gain %{y:+.2f} "
                    "[%{customdata[1]:+.2f}, %{customdata[2]:+.2f}]<extra></extra>"
                ),
            )
        )
    _layout(
        figure,
        f"Inference gain on '{secret}' against membership risk",
        _RISK_MS,
        f"inference gain on {secret}",
    )
    figure.update_layout(showlegend=True)
    figure.update_xaxes(range=[low_x, RISK_AXIS_TOP])
    figure.update_yaxes(range=[-1.05, 1.05], zeroline=True)
    at_risk = int((data["verdict_inference"] == "at risk").sum())
    caption = (
        f"Each point is one audited record: its membership risk (x) and how much more often the "
        f"attacker names its '{secret}' with the record in D than with it swapped out (y, with its "
        f"interval); {at_risk} record(s) lie wholly above the threshold {threshold:g} (dashed): at risk "
        f"of inference whatever their membership risk{_left_out(left)}."
    )
    return Chart(figure=figure, data=data, caption=caption, title=f"Inference gain on {secret}")
