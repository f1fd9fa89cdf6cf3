"""Tests of privgame.outputs.figures: the charts of a run's results."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.outputs import figures

T = 0.8


@pytest.fixture
def records() -> pd.DataFrame:
    """Seven records: two missed high-risk, one caught, one high only in the traditional game,
    two low in both, one with an undefined model-seeded risk."""
    ms = np.array([0.95, 0.85, 0.82, 0.7, 0.6, 0.5, math.nan])
    tr = np.array([0.7, 0.9, 0.75, 0.85, 0.55, 0.52, 0.6])
    return pd.DataFrame(
        {
            "record_id": np.array([10, 11, 12, 13, 14, 15, 16], dtype=np.int64),
            "colour": ["red", "blue", "red", "green", "red", "blue", "red"],
            "risk_model_seeded": ms,
            "risk_model_seeded_low": ms - 0.05,
            "risk_model_seeded_high": np.minimum(ms + 0.05, 1.0),
            "risk_traditional": tr,
            "risk_traditional_low": tr - 0.05,
            "risk_traditional_high": np.minimum(tr + 0.05, 1.0),
            "difference": ms - tr,
        }
    )


@pytest.fixture
def scores() -> pd.DataFrame:
    """Record 10: perfectly separated in the model-seeded game, partly in the traditional game."""
    labels = np.tile([1, 0], 10)
    ms_scores = np.where(labels == 1, 0.9, 0.1) + np.arange(20) * 0.001
    tr_scores = np.linspace(0.0, 1.0, 20)
    frames = [
        pd.DataFrame({"record_id": 10, "game": game, "label": labels, "index": np.arange(20), "score": s})
        for game, s in (("model_seeded", ms_scores), ("traditional", tr_scores))
    ]
    other = frames[1].assign(record_id=11)
    return pd.concat([*frames, other], ignore_index=True)


def _shapes(chart: figures.Chart) -> dict[str, dict]:
    return {s.name: s.to_plotly_json() for s in chart.figure.layout.shapes}


# --------------------------------------------------------------------------------------------
# Figure 1a
# --------------------------------------------------------------------------------------------


def test_risk_scatter_points_groups_and_record_ids(records: pd.DataFrame) -> None:
    chart = figures.risk_scatter(records, T)
    data = chart.data.set_index("record_id")
    assert list(data.index) == [10, 11, 12, 13, 14, 15]  # the nan record is left out
    assert data["group"].to_dict() == {
        10: "missed",
        11: "both",
        12: "missed",
        13: "traditional_only",
        14: "neither",
        15: "neither",
    }
    plotted = {}
    for trace in chart.figure.data:
        for x, y, custom in zip(trace.x, trace.y, trace.customdata, strict=True):
            plotted[int(custom[0])] = (x, y)
    assert plotted == {rid: (row.risk_model_seeded, row.risk_traditional) for rid, row in data.iterrows()}
    # every group has its own marker shape, so groups do not depend on colour alone
    symbols = [t.marker.symbol for t in chart.figure.data]
    assert len(set(symbols)) == len(symbols) == 4


def test_risk_scatter_axes_caption_and_title(records: pd.DataFrame) -> None:
    chart = figures.risk_scatter(records, T)
    layout = chart.figure.layout
    assert layout.xaxis.title.text == "risk (AUC), model-seeded game"
    assert layout.yaxis.title.text == "risk (AUC), traditional game"
    assert "2 of those 3" in chart.caption
    assert "1 record with an undefined risk left out" in chart.caption
    assert chart.caption.count(".") >= 1 and chart.caption.endswith(".")
    assert "1a" in chart.title


def test_risk_scatter_shades_the_missed_region_and_draws_threshold_lines(
    records: pd.DataFrame,
) -> None:
    chart = figures.risk_scatter(records, 0.75)
    shapes = _shapes(chart)
    region = shapes["missed high-risk region"]
    assert region["type"] == "rect"
    assert (region["x0"], region["x1"], region["y1"]) == (0.75, 1.0, 0.75)
    assert region["y0"] <= 0.5  # reaches down to the lowest plotted risk
    vertical = shapes["threshold, model-seeded"]
    horizontal = shapes["threshold, traditional"]
    assert vertical["x0"] == vertical["x1"] == 0.75
    assert horizontal["y0"] == horizontal["y1"] == 0.75
    diagonal = shapes["diagonal"]
    assert diagonal["x0"] == diagonal["y0"] and diagonal["x1"] == diagonal["y1"] == 1.0
    # every record in the region is one the traditional game misses
    data = chart.data
    inside = (data.risk_model_seeded > 0.75) & (data.risk_traditional <= 0.75)
    assert set(data.loc[inside, "group"]) == {"missed"}


def test_risk_scatter_without_records_at_risk_says_so(records: pd.DataFrame) -> None:
    chart = figures.risk_scatter(records, 0.99)
    assert "no record has model-seeded risk above t=0.99" in chart.caption
    assert set(chart.data["group"]) <= {"neither", "traditional_only"}


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, "high"])
def test_risk_scatter_rejects_bad_thresholds(records: pd.DataFrame, bad: object) -> None:
    with pytest.raises(ParameterError, match="threshold t"):
        figures.risk_scatter(records, bad)  # type: ignore[arg-type]


def test_charts_reject_tables_without_risks() -> None:
    with pytest.raises(ParameterError, match="lacks the columns"):
        figures.risk_cdfs(pd.DataFrame({"record_id": [1]}))
    with pytest.raises(ParameterError, match=r"\[0, 1\]"):
        figures.risk_cdfs(
            pd.DataFrame({"record_id": [1], "risk_model_seeded": [80.0], "risk_traditional": [0.5]})
        )


def test_chart_is_frozen(records: pd.DataFrame) -> None:
    chart = figures.risk_cdfs(records)
    with pytest.raises(dataclasses.FrozenInstanceError):
        chart.caption = "changed"  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# Figure 1b
# --------------------------------------------------------------------------------------------


def test_difference_histogram_counts_every_record(records: pd.DataFrame) -> None:
    chart = figures.difference_histogram(records)
    data = chart.data
    assert int(data["records"].sum()) == 6
    assert np.allclose(data["bin_high"] - data["bin_low"], 0.02)
    diffs = np.abs(records["risk_model_seeded"] - records["risk_traditional"]).dropna()
    for d in diffs:
        row = data.loc[(data.bin_low <= d) & (d <= data.bin_high)]
        assert int(row["records"].sum()) >= 1
    (bar,) = chart.figure.data
    assert bar.type == "bar"
    assert list(bar.y) == data["records"].tolist()
    assert "|R_MS − R_T|" in chart.figure.layout.xaxis.title.text
    assert chart.figure.layout.yaxis.title.text == "number of records"
    # 0.25 and 0.15 of the 6 differences exceed 0.1
    assert "33% of the 6 records differ by more than 0.1" in chart.caption
    assert _shapes(chart)["cutoff"]["x0"] == 0.1


def test_difference_histogram_keeps_a_maximum_on_a_bin_edge() -> None:
    # 0.9 - 0.6 is 0.30000000000000004 in floating point: just above the edge 0.3
    frame = pd.DataFrame(
        {"record_id": [1, 2], "risk_model_seeded": [0.9, 0.5], "risk_traditional": [0.6, 0.5]}
    )
    data = figures.difference_histogram(frame).data
    assert int(data["records"].sum()) == 2
    assert data["bin_high"].iloc[-1] >= 0.9 - 0.6


# --------------------------------------------------------------------------------------------
# Figure 2a
# --------------------------------------------------------------------------------------------


def test_miss_rate_chart_matches_metrics_and_drops_undefined(records: pd.DataFrame) -> None:
    chart = figures.miss_rate_chart(records)
    data = chart.data
    # no record has R_MS > 0.95, so 0.95 is undefined and left out
    assert 0.95 not in data["threshold"].tolist()
    assert data["threshold"].tolist() == pytest.approx([0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9])
    ms = records["risk_model_seeded"].to_numpy(float)
    tr = records["risk_traditional"].to_numpy(float)
    for row in data.itertuples():
        expected = metrics.miss_rate(ms, tr, row.threshold)
        assert row.miss_rate == expected.rate
        assert (row.missed, row.at_risk) == (expected.missed, expected.at_risk)
    (line,) = chart.figure.data
    assert list(line.x) == data["threshold"].tolist()
    assert "undefined" in chart.caption and "0.95" in chart.caption
    assert chart.figure.layout.xaxis.title.text.startswith("high-risk threshold t")
    assert chart.figure.layout.yaxis.title.text.startswith("miss rate")


def test_miss_rate_chart_with_every_threshold_undefined(records: pd.DataFrame) -> None:
    chart = figures.miss_rate_chart(records, [0.97, 0.99])
    assert chart.data.empty
    assert list(chart.data.columns) == ["threshold", "miss_rate", "missed", "at_risk"]
    assert "0.97, 0.99" in chart.caption
    assert chart.figure.layout.annotations


def test_miss_rate_chart_without_undefined_thresholds_says_nothing_about_them(
    records: pd.DataFrame,
) -> None:
    chart = figures.miss_rate_chart(records, [0.6, 0.8])
    assert len(chart.data) == 2
    assert "undefined and left out at" not in chart.caption


def test_miss_rate_chart_marks_the_current_threshold(records: pd.DataFrame) -> None:
    chart = figures.miss_rate_chart(records, [0.6, 0.8], current=0.72)
    assert chart.data["threshold"].tolist() == pytest.approx([0.6, 0.72, 0.8])
    (line,) = [shape for shape in chart.figure.layout.shapes if shape.type == "line"]
    assert line.x0 == line.x1 == pytest.approx(0.72)
    expected = metrics.miss_rate(
        records["risk_model_seeded"].to_numpy(float), records["risk_traditional"].to_numpy(float), 0.72
    )
    assert f"At the current t = 0.72, {expected.missed} of {expected.at_risk} high-risk" in chart.caption
    # A current threshold already on the grid is not added twice.
    assert len(figures.miss_rate_chart(records, [0.6, 0.8], current=0.8).data) == 2
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        figures.miss_rate_chart(records, current=1.2)


# --------------------------------------------------------------------------------------------
# Figure 2b
# --------------------------------------------------------------------------------------------


def test_risk_cdfs_plot_both_ecdfs(records: pd.DataFrame) -> None:
    chart = figures.risk_cdfs(records)
    ms_trace, tr_trace = chart.figure.data
    assert ms_trace.name == "model-seeded game" and tr_trace.name == "traditional game"
    # told apart without colour: marker shape and line dash differ
    assert ms_trace.marker.symbol != tr_trace.marker.symbol
    assert ms_trace.line.dash != tr_trace.line.dash
    defined = records.dropna(subset=["risk_model_seeded", "risk_traditional"])
    for trace, game, column in (
        (ms_trace, "model_seeded", "risk_model_seeded"),
        (tr_trace, "traditional", "risk_traditional"),
    ):
        x, f = metrics.ecdf(defined[column].to_numpy(float))
        part = chart.data.loc[chart.data["game"] == game]
        assert np.array_equal(part["risk"], x) and np.array_equal(part["share_at_or_below"], f)
        assert np.array_equal(np.asarray(trace.x), x)
    assert chart.figure.layout.xaxis.title.text == "risk (AUC)"
    assert "left out" in chart.caption


# --------------------------------------------------------------------------------------------
# One record
# --------------------------------------------------------------------------------------------


def test_roc_curves_of_one_record(scores: pd.DataFrame) -> None:
    chart = figures.roc_curves(scores, 10)
    ms_trace, tr_trace, diagonal = chart.figure.data
    assert "AUC 1.000" in ms_trace.name
    assert ms_trace.marker.symbol != tr_trace.marker.symbol
    assert diagonal.name == "random guess"
    for game in ("model_seeded", "traditional"):
        part = chart.data.loc[chart.data["game"] == game]
        assert (part["fpr"].iloc[0], part["tpr"].iloc[0]) == (0.0, 0.0)
        assert (part["fpr"].iloc[-1], part["tpr"].iloc[-1]) == (1.0, 1.0)
        assert np.all(np.diff(part["fpr"]) >= 0)
    assert chart.figure.layout.xaxis.title.text.startswith("false positive rate")
    assert chart.figure.layout.yaxis.title.text.startswith("true positive rate")


def test_roc_curves_log_scale_leaves_out_zero_rates(scores: pd.DataFrame) -> None:
    chart = figures.roc_curves(scores, 10, log=True)
    assert chart.figure.layout.xaxis.type == "log" and chart.figure.layout.yaxis.type == "log"
    assert (chart.data["fpr"] > 0).all() and (chart.data["tpr"] > 0).all()
    assert "left out" in chart.caption
    assert "log" in chart.title


def test_roc_curves_unknown_record(scores: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="Record 99 has no attack scores"):
        figures.roc_curves(scores, 99)


def test_score_distributions_histograms(scores: pd.DataFrame) -> None:
    chart = figures.score_distributions(scores, 10, bins=10)
    assert len(chart.figure.data) == 4
    totals = chart.data.groupby(["game", "label"])["runs"].sum().to_dict()
    assert totals == {
        ("model_seeded", "in"): 10,
        ("model_seeded", "out"): 10,
        ("traditional", "in"): 10,
        ("traditional", "out"): 10,
    }
    patterns = {t.name: t.marker.pattern.shape for t in chart.figure.data}
    assert len(set(patterns.values())) == 2  # 'in' and 'out' differ without colour
    titles = [a.text for a in chart.figure.layout.annotations]
    assert any("model-seeded game (AUC 1.000)" in t for t in titles)
    # the model-seeded game separates perfectly: 'in' scores sit in the top bins only
    ms_in = chart.data.query("game == 'model_seeded' and label == 'in' and runs > 0")
    assert ms_in["bin_low"].min() >= 0.5
    with pytest.raises(ParameterError, match="bins"):
        figures.score_distributions(scores, 10, bins=0)


def test_risk_intervals_sort_the_records_and_colour_them_by_their_verdict() -> None:
    records = pd.DataFrame(
        {
            "record_id": [7, 3, 9, 4],
            "audit_group": ["outlier", "random", "random", "random"],
            "risk_model_seeded": [0.95, 0.5, 0.81, math.nan],
            "risk_model_seeded_low": [0.9, 0.4, 0.7, math.nan],
            "risk_model_seeded_high": [0.99, 0.6, 0.9, math.nan],
            "risk_traditional": [math.nan] * 4,
        }
    )
    chart = figures.risk_intervals(records, 0.8)
    assert chart.data["record_id"].tolist() == [3, 9, 7]  # lowest risk first, the undefined one left out
    assert chart.data["verdict"].tolist() == ["not at risk", "undecided", "at risk"]
    names = [trace.name for trace in chart.figure.data]
    assert names == ["at risk (1)", "undecided (1)", "not at risk (1)"]
    at_risk = chart.figure.data[0]
    assert at_risk.customdata[0][0] == 7 and list(at_risk.error_x.arrayminus) == pytest.approx([0.05])
    assert "1 lie wholly above t=0.8" in chart.caption and "1 record with an undefined risk" in chart.caption
    with pytest.raises(ParameterError, match="lacks the columns"):
        figures.risk_intervals(records.drop(columns="risk_model_seeded_low"), 0.8)
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        figures.risk_intervals(records, 1.5)
    assert not any(shape.name == "DP cap" for shape in chart.figure.layout.shapes)
    capped = figures.risk_intervals(records, 0.8, cap=0.697)
    (line,) = [shape for shape in capped.figure.layout.shapes if shape.name == "DP cap"]
    assert line.x0 == line.x1 == 0.697 and "The solid line at 0.697" in capped.caption


def test_log_scale_ticks_are_labelled_plainly(scores: pd.DataFrame) -> None:
    """Plotly labelled decades 0.0100000 with 'g', and over less than a decade (a few runs) it
    labelled only 1: the ticks are chosen and written here."""
    layout = figures.roc_curves(scores, 10, log=True).figure.layout
    for axis in (layout.xaxis, layout.yaxis):
        assert len(axis.tickvals) >= 2 and axis.tickvals[-1] == 1.0
        assert list(axis.ticktext) == [f"{v:g}" for v in axis.tickvals]
        assert all("00000" not in text for text in axis.ticktext)


@pytest.mark.parametrize(
    ("lowest", "ticks"),
    [
        (0.25, [0.3, 0.5, 1.0]),
        (0.125, [0.2, 0.5, 1.0]),
        (0.004, [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]),
        (1e-5, [1e-05, 0.0001, 0.001, 0.01, 0.1, 1.0]),
        (1.0, [1.0]),
    ],
)
def test_log_ticks_stay_few_and_in_range(lowest: float, ticks: list[float]) -> None:
    assert figures.log_ticks(lowest) == ticks


def test_a_game_not_played_gets_no_empty_panel_or_curve(scores: pd.DataFrame) -> None:
    model_seeded_only = scores.loc[scores["game"] == "model_seeded"]
    chart = figures.score_distributions(model_seeded_only, 10, bins=10)
    assert len(chart.figure.data) == 2 and set(chart.data["game"]) == {"model_seeded"}
    titles = [a.text for a in chart.figure.layout.annotations]
    assert len(titles) == 1 and "traditional" not in titles[0].lower() and "undefined" not in titles[0]
    roc = figures.roc_curves(model_seeded_only, 10)
    assert not [t for t in roc.figure.data if "raditional" in str(t.name)]
    assert "undefined" not in " ".join(str(t.name) for t in roc.figure.data)


def test_a_record_at_risk_0999_is_drawn_whole(records: pd.DataFrame) -> None:
    riskiest = records.assign(risk_model_seeded=0.999, risk_model_seeded_low=0.99, risk_model_seeded_high=1.0)
    for chart in (figures.risk_intervals(riskiest, 0.8), figures.risk_scatter(riskiest, 0.8)):
        assert chart.figure.layout.xaxis.range[1] > 1.0
