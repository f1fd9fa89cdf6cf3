"""Charts of the paper's studies (Figs. 3-6), and PNG images of any chart.

Each function takes a study's settings and its :class:`privgame.studies.StudyResult` and returns a
:class:`privgame.outputs.figures.Chart`: the plotly figure, exactly the numbers plotted (for download), a
title and a caption sentence. The conventions are those of :mod:`privgame.outputs.figures`: Okabe-Ito
colours, each paired with a marker shape or line dash (model-seeded game: vermillion circles,
solid lines; traditional game: blue squares, dashed lines; a quantity that belongs to neither,
such as the RMSD or the Hoeffding bound: black diamonds), and axis titles that say what a number
is. While a study is still running, the chart shows the finished runs and the caption says so.

:func:`write_png` renders a figure to a PNG file with a headless Chromium (no network needed:
plotly.js is inlined), for reports such as ``REPRODUCTION.md``.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from privgame.core.errors import ParameterError
from privgame.core.numbers import number_text
from privgame.games.game import GAME_KEYS
from privgame.outputs.figures import GAME_STYLES, OKABE_ITO, Chart
from privgame.outputs.files import check_output_path, write_output
from privgame.studies import STUDY_TITLES, StudyResult, StudySpec

__all__ = [
    "convergence_chart",
    "datasets_chart",
    "epsilon_chart",
    "figure_html",
    "size_chart",
    "study_chart",
    "write_png",
]

_TEMPLATE = "plotly_white"
_GREY = "#999999"
_OTHER = {"color": OKABE_ITO["black"], "symbol": "diamond", "dash": "solid"}
_RISK_AXIS = "risk (ROC AUC of the attack)"


def _layout(figure: go.Figure, title: str, *, legend_below: bool = False) -> None:
    """Title, template and legend; a long legend goes below the panels, clear of the title."""
    figure.update_layout(template=_TEMPLATE, title={"text": title})
    if legend_below:
        figure.update_layout(
            legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0.0},
            margin={"t": 90, "b": 160},
        )
    else:
        figure.update_layout(
            legend={"orientation": "h", "yanchor": "bottom", "y": 1.08, "xanchor": "left", "x": 0.0},
            margin={"t": 120},
        )


def _random_guess(figure: go.Figure, **where: int) -> None:
    """A dotted line at 0.5, named in the legend (an annotation would sit on the data)."""
    figure.add_hline(y=0.5, line={"color": _GREY, "dash": "dot", "width": 1}, **where)
    figure.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="lines",
            name="random guess (risk 0.5)",
            line={"color": _GREY, "dash": "dot", "width": 1},
            hoverinfo="skip",
        ),
        **where,
    )


def _partial(result: StudyResult) -> str:
    if result.complete:
        return ""
    return f"Partial: {result.jobs_done} of {result.jobs_total} runs finished. "


def _empty(title: str, result: StudyResult, columns: list[str]) -> Chart:
    figure = go.Figure()
    _layout(figure, title)
    figure.add_annotation(
        text="No run of this study has finished yet.",
        showarrow=False,
        x=0.5,
        y=0.5,
        xref="paper",
        yref="paper",
    )
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    caption = f"{_partial(result)}The chart appears as soon as the first run is done."
    return Chart(figure=figure, data=pd.DataFrame(columns=columns), caption=caption, title=title)


# --------------------------------------------------------------------------------------------
# Fig. 3: dataset size
# --------------------------------------------------------------------------------------------


def size_chart(spec: StudySpec, result: StudyResult) -> Chart:
    """Fig. 3: RMSD between the risks (a) and each game's mean risk (b) against |D|.

    Returns
    -------
    Chart
        Left panel: RMSD per |D|. Right panel: mean risk per game with bars of one standard
        deviation across records. ``data``: ``size``, ``records``, ``rmsd``, and the mean and
        standard deviation of each game's risk.
    """
    title = STUDY_TITLES["size"]
    columns = [
        "size",
        "records",
        "rmsd",
        "rmsd_noise",
        "mean_model_seeded",
        "sd_model_seeded",
        "mean_traditional",
        "sd_traditional",
    ]
    table = result.table
    if table.empty:
        return _empty(title, result, columns)
    data = table[columns].sort_values("size").reset_index(drop=True)
    figure = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("(a) RMSD between the two risks", "(b) mean risk over the records"),
    )
    figure.add_trace(
        go.Scatter(
            x=data["size"],
            y=data["rmsd"],
            mode="lines+markers",
            name="RMSD of model-seeded vs traditional risk",
            line={"color": _OTHER["color"], "dash": _OTHER["dash"]},
            marker={"symbol": _OTHER["symbol"], "size": 9, "color": _OTHER["color"]},
            hovertemplate="|D| = %{x:,}<br>RMSD %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    figure.add_trace(
        go.Scatter(
            x=data["size"],
            y=data["rmsd_noise"],
            mode="lines+markers",
            name=f"RMSD from estimation noise alone (N_eval = {spec.base.attack.n_eval})",
            line={"color": _GREY, "dash": "dot"},
            marker={"symbol": "diamond-open", "size": 9, "color": _GREY},
            hovertemplate="|D| = %{x:,}<br>RMSD from noise alone %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    for game in GAME_KEYS:
        style = GAME_STYLES[game]
        figure.add_trace(
            go.Scatter(
                x=data["size"],
                y=data[f"mean_{game}"],
                error_y={"type": "data", "array": data[f"sd_{game}"], "visible": True, "thickness": 1},
                mode="lines+markers",
                name=f"mean risk, {style['label']}",
                line={"color": style["color"], "dash": style["dash"]},
                marker={"symbol": style["symbol"], "size": 9, "color": style["color"]},
                hovertemplate="|D| = %{x:,}<br>mean risk %{y:.3f}<extra>" + style["label"] + "</extra>",
            ),
            row=1,
            col=2,
        )
    _random_guess(figure, row=1, col=2)
    _layout(figure, title, legend_below=True)
    for col in (1, 2):
        figure.update_xaxes(
            type="log",
            title_text="|D|: records in the target dataset (log scale)",
            tickvals=data["size"].tolist(),
            ticktext=[f"{int(n):,}" for n in data["size"]],
            row=1,
            col=col,
        )
    figure.update_yaxes(title_text="RMSD of the two risks (AUC units)", rangemode="tozero", row=1, col=1)
    lows = np.r_[
        data["mean_model_seeded"] - data["sd_model_seeded"], data["mean_traditional"] - data["sd_traditional"]
    ]
    lowest = float(np.nanmin(lows)) if np.isfinite(lows).any() else 0.5  # no defined risk yet
    floor = max(0.0, math.floor((min(0.5, lowest) - 0.02) / 0.05) * 0.05)
    # Risks are AUCs: bars of one standard deviation are cut at 1, where no risk can lie.
    figure.update_yaxes(title_text=_RISK_AXIS, range=[floor, 1.0], row=1, col=2)
    k = int(data["records"].max())
    first, last = data.iloc[0], data.iloc[-1]
    caption = (
        f"{_partial(result)}Left: root mean squared difference between each record's model-seeded and "
        f"traditional risk over {k} records, from {number_text(first['rmsd'])} at |D| = "
        f"{int(first['size']):,} to {number_text(last['rmsd'])} at |D| = {int(last['size']):,}, beside the "
        "RMSD that two games with equal risks would show from their finite evaluation runs alone (grey); "
        "right: each game's mean risk "
        "over the same records, bars showing one standard deviation across records (0.5 is a random "
        "guess)."
    )
    return Chart(figure=figure, data=data, caption=caption, title=title)


# --------------------------------------------------------------------------------------------
# Fig. 4: epsilon
# --------------------------------------------------------------------------------------------


def _epsilon_label(value: float) -> str:
    return "ε = ∞" if math.isinf(value) else f"ε = {value:g}"


def epsilon_chart(spec: StudySpec, result: StudyResult) -> Chart:
    """Fig. 4: each record's risk in both games for every epsilon of PrivBayes.

    Returns
    -------
    Chart
        One box per game and epsilon with every record drawn as a point (the box's dashed line
        is the mean). ``data``: ``epsilon``, ``record_id``, both risks and their difference.
    """
    title = STUDY_TITLES["epsilon"]
    points = result.points
    columns = ["epsilon", "record_id", "risk_model_seeded", "risk_traditional", "difference"]
    if points.empty:
        return _empty(title, result, columns)
    data = points[columns].reset_index(drop=True)
    order = [_epsilon_label(e) for e in spec.epsilons if e in set(data["epsilon"])]
    labels = data["epsilon"].map(_epsilon_label)
    figure = go.Figure()
    for game in GAME_KEYS:
        style = GAME_STYLES[game]
        figure.add_trace(
            go.Box(
                x=labels,
                y=data[f"risk_{game}"],
                name=style["label"],
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                boxmean=True,
                fillcolor="rgba(0,0,0,0)",
                line={"color": style["color"]},
                marker={"symbol": style["symbol"], "size": 6, "color": style["color"], "opacity": 0.8},
                customdata=data[["record_id"]].to_numpy(),
                hovertemplate="record %{customdata[0]}<br>%{x}<br>risk %{y:.3f}<extra>"
                + style["label"]
                + "</extra>",
            )
        )
    caps = _caps(spec, [e for e in spec.epsilons if e in set(data["epsilon"])])
    if caps:
        figure.add_trace(
            go.Scatter(
                x=[_epsilon_label(e) for e in caps],
                y=list(caps.values()),
                mode="markers",
                name="cap proven by DP",
                marker={
                    "symbol": "line-ew-open",
                    "size": 40,
                    "color": OKABE_ITO["bluish_green"],
                    "line": {"width": 3},
                },
                hovertemplate="%{x}: no attack can exceed %{y:.3f}<extra>cap proven by DP</extra>",
            )
        )
    _random_guess(figure)
    _layout(figure, title)
    figure.update_layout(boxmode="group")
    label = {"privbayes": "PrivBayes", "mst": "MST"}.get(spec.base.generator, spec.base.generator)
    figure.update_xaxes(
        title_text=f"{label} privacy budget ε (smaller is more private)",
        categoryorder="array",
        categoryarray=order,
    )
    figure.update_yaxes(title_text=_RISK_AXIS)
    table = result.table.set_index("epsilon")
    spread = ", ".join(
        f"{_epsilon_label(e)}: {number_text(table.loc[e, 'rmsd'])}" for e in spec.epsilons if e in table.index
    )
    caption = (
        f"{_partial(result)}Each point is one of {data['record_id'].nunique()} records, boxes span the "
        "middle half of the records and their dashed line is the mean; the RMSD between the two games "
        f"is {spread}."
        + (
            " The green bars are the caps the guarantee proves at each budget (the declared domain is "
            "public): no attack can exceed them on any record."
            if caps
            else ""
        )
    )
    return Chart(figure=figure, data=data, caption=caption, title=title)


def _caps(spec: StudySpec, epsilons: list[float]) -> dict[float, float]:
    """The cap each budget's guarantee proves on every record's risk, for a generator that has one
    and a schema whose domain was declared public; empty otherwise."""
    from privgame.data.schema import Schema
    from privgame.generators import GENERATORS

    cls = GENERATORS.get(spec.base.generator)
    if (
        cls is None
        or not hasattr(cls, "risk_cap_for")
        or not Schema.from_dict(spec.base.schema).domain_public
    ):
        return {}
    params = dict(spec.base.generator_params)
    caps = {e: cls.risk_cap_for(**{**params, "epsilon": e}) for e in epsilons}
    return {e: float(c) for e, c in caps.items() if c is not None}


# --------------------------------------------------------------------------------------------
# Fig. 5: one record in different datasets
# --------------------------------------------------------------------------------------------


def datasets_chart(spec: StudySpec, result: StudyResult) -> Chart:
    """Fig. 5: one record's model-seeded risk in each dataset D_k, beside its traditional risk.

    Returns
    -------
    Chart
        One point per dataset (sorted by risk) with its 95% DeLong interval, and the record's
        traditional risk as a dashed line. ``data``: the study table sorted by model-seeded risk.
    """
    title = STUDY_TITLES["datasets"]
    table = result.table
    if table.empty:
        return _empty(title, result, list(table.columns))
    data = table.sort_values(["risk_model_seeded", "dataset"]).reset_index(drop=True)
    record = int(data["record_id"].iloc[0])
    names = [f"D_{int(k)}" for k in data["dataset"]]
    ms, t = GAME_STYLES["model_seeded"], GAME_STYLES["traditional"]
    figure = go.Figure()
    r_t = float(data["risk_traditional"].iloc[0])
    low_t, high_t = float(data["risk_traditional_low"].iloc[0]), float(data["risk_traditional_high"].iloc[0])
    if not (math.isnan(low_t) or math.isnan(high_t)):
        figure.add_hrect(y0=low_t, y1=high_t, fillcolor=t["color"], opacity=0.1, line_width=0, layer="below")
    figure.add_trace(
        go.Scatter(
            x=names,
            y=np.full(len(names), r_t),
            mode="lines",
            name=f"traditional risk R_T = {number_text(r_t)} (band: 95% interval)",
            line={"color": t["color"], "dash": t["dash"], "width": 2},
            hovertemplate="traditional risk %{y:.3f}<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=names,
            y=data["risk_model_seeded"],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": data["risk_model_seeded_high"] - data["risk_model_seeded"],
                "arrayminus": data["risk_model_seeded"] - data["risk_model_seeded_low"],
                "thickness": 1,
            },
            mode="markers",
            name="model-seeded risk R_MS in that dataset (bars: 95% interval)",
            marker={"symbol": ms["symbol"], "size": 10, "color": ms["color"]},
            customdata=data[["outlier_score"]].to_numpy(),
            hovertemplate=(
                "%{x}<br>model-seeded risk %{y:.3f}<br>outlier score in D %{customdata[0]:.3f}<extra></extra>"
            ),
        )
    )
    _random_guess(figure)
    _layout(figure, f"{title}: record {record}")
    figure.update_xaxes(title_text="target dataset D_k containing the record (sorted by model-seeded risk)")
    figure.update_yaxes(title_text=_RISK_AXIS)
    lo, hi = float(data["risk_model_seeded"].min()), float(data["risk_model_seeded"].max())
    under, over = hi - r_t, r_t - lo
    sides = []
    if under > 0:
        sides.append(f"under-stating it by up to {under:.2f} in the riskiest of these datasets")
    if over > 0:
        sides.append(f"over-stating it by up to {over:.2f} in the safest")
    caption = (
        f"{_partial(result)}Each circle is record {record}'s model-seeded risk in one of {len(data)} "
        f"datasets of {spec.base.sizes['target']:,} records drawn around it; it ranges from {lo:.2f} to "
        f"{hi:.2f}, while the traditional game gives the record one risk, {r_t:.2f} (dashed), "
        + (" and ".join(sides) if sides else "equal to every model-seeded risk")
        + "."
    )
    return Chart(figure=figure, data=data, caption=caption, title=title)


# --------------------------------------------------------------------------------------------
# Fig. 6: convergence
# --------------------------------------------------------------------------------------------


def convergence_chart(spec: StudySpec, result: StudyResult) -> Chart:
    """Fig. 6: spread of both risks over repeated evaluations (a), and the Hoeffding bound (b).

    Returns
    -------
    Chart
        Left: for each N_eval, the standard deviation of a record's risk over the repeats,
        averaged over records, per game (filled markers), and the same over disjoint blocks of
        runs within a repeat, where the attack is fixed (open markers, dotted). Right: the
        Hoeffding half-width of Proposition 1 with N_eval/2 runs per class at the study's rho.
        ``data``: the study table.
    """
    title = STUDY_TITLES["convergence"]
    table = result.table
    if result.jobs_done < 2:
        return _empty(title, result, list(table.columns))
    data = table.sort_values("n_eval").reset_index(drop=True)
    figure = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=(
            "(a) standard deviation of the risk over repeats",
            f"(b) Hoeffding bound on an error rate (ρ = {spec.rho:g})",
        ),
    )
    for game in GAME_KEYS:
        style = GAME_STYLES[game]
        figure.add_trace(
            go.Scatter(
                x=data["n_eval"],
                y=data[f"sd_{game}"],
                mode="lines+markers",
                name=f"standard deviation, {style['label']}",
                line={"color": style["color"], "dash": style["dash"]},
                marker={"symbol": style["symbol"], "size": 8, "color": style["color"]},
                hovertemplate="N_eval = %{x}<br>standard deviation %{y:.4f}<extra>"
                + style["label"]
                + "</extra>",
            ),
            row=1,
            col=1,
        )
    for game in GAME_KEYS:
        style = GAME_STYLES[game]
        same = data.dropna(subset=[f"sd_same_attack_{game}"])
        if same.empty:
            continue
        figure.add_trace(
            go.Scatter(
                x=same["n_eval"],
                y=same[f"sd_same_attack_{game}"],
                mode="lines+markers",
                name=f"same attack, evaluation runs only, {style['label']}",
                line={"color": style["color"], "dash": "dot", "width": 1.5},
                marker={"symbol": f"{style['symbol']}-open", "size": 8, "color": style["color"]},
                hovertemplate=(
                    "N_eval = %{x}<br>standard deviation %{y:.4f} (same attack)<extra>"
                    + style["label"]
                    + "</extra>"
                ),
            ),
            row=1,
            col=1,
        )
    figure.add_trace(
        go.Scatter(
            x=data["n_eval"],
            y=data["hoeffding_half_width"],
            mode="lines+markers",
            name=f"Hoeffding half-width, probability {1 - spec.rho:g}",
            line={"color": _OTHER["color"], "dash": _OTHER["dash"]},
            marker={"symbol": _OTHER["symbol"], "size": 8, "color": _OTHER["color"]},
            hovertemplate="N_eval = %{x}<br>half-width %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    _layout(figure, title, legend_below=True)
    for col in (1, 2):
        figure.update_xaxes(
            title_text="N_eval: evaluation runs per game (half 'in', half 'out')", row=1, col=col
        )
    figure.update_yaxes(
        title_text="standard deviation of the risk (AUC units)", rangemode="tozero", row=1, col=1
    )
    figure.update_yaxes(title_text="bound on |estimated − true error rate|", rangemode="tozero", row=1, col=2)
    first, last = data.iloc[0], data.iloc[-1]
    same_note = ""
    if data["sd_same_attack_model_seeded"].notna().any():
        same_note = (
            "; open markers on dotted lines: the spread between disjoint blocks of runs of one "
            "repeat, i.e. the evaluation noise alone with the attack fixed"
        )
    caption = (
        f"{_partial(result)}Left: how much a record's risk moves between {result.jobs_done} full "
        f"evaluations with fresh seeds, attack training included (mean over {int(first['records'])} "
        f"records), from {number_text(first['sd_model_seeded'])} (model-seeded) and "
        f"{number_text(first['sd_traditional'])} (traditional) at N_eval = {int(first['n_eval'])} to "
        f"{number_text(last['sd_model_seeded'])} and {number_text(last['sd_traditional'])} at N_eval = "
        f"{int(last['n_eval'])}{same_note}; right: the distance within which an empirical error rate "
        f"lies of the true one with probability {1 - spec.rho:g} for a fixed attack (Proposition 1)."
    )
    return Chart(figure=figure, data=data, caption=caption, title=title)


_CHARTS = {
    "size": size_chart,
    "epsilon": epsilon_chart,
    "datasets": datasets_chart,
    "convergence": convergence_chart,
}


def study_chart(spec: StudySpec, result: StudyResult) -> Chart:
    """The chart of any study (dispatch on ``spec.study``)."""
    try:
        return _CHARTS[spec.study](spec, result)
    except KeyError:
        raise ParameterError(f"Study {spec.study!r} has no chart; use one of {sorted(_CHARTS)}.") from None


def figure_html(spec: StudySpec, result: StudyResult) -> str:
    """A study's ``figure.html``: its chart as one self-contained page, plotly.js inlined.

    Pass it to :func:`privgame.studies.execute_study` (``figure=figure_html``).
    """
    return study_chart(spec, result).figure.to_html(include_plotlyjs=True, full_html=True)


# --------------------------------------------------------------------------------------------
# PNG images
# --------------------------------------------------------------------------------------------


def _browser() -> str:
    explicit = os.environ.get("PRIVGAME_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    raise ParameterError(
        "Writing PNG images needs a Chromium or Chrome browser, and none was found; install one "
        "(e.g. apt-get install chromium) or set PRIVGAME_CHROMIUM to its path."
    )


def write_png(
    figure: go.Figure, path: str | os.PathLike[str], *, width: int = 1100, height: int = 560
) -> Path:
    """Render ``figure`` to a PNG file with a headless Chromium.

    Parameters
    ----------
    figure : plotly.graph_objects.Figure
    path : path-like
        The PNG file to write (its folder is created); written like every output
        (:func:`privgame.outputs.files.write_output`: owner-only, atomically, never into a pipe or a
        device).
    width, height : int
        Size of the image in pixels.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ParameterError
        When no browser is found, the browser wrote no image, or the path is refused.
    """
    out = Path(path).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    check_output_path(out, what="the figure")  # before the browser starts
    sized = go.Figure(figure)
    sized.update_layout(width=width, height=height)
    body = sized.to_html(
        include_plotlyjs=True, full_html=False, config={"staticPlot": True, "displayModeBar": False}
    )
    html = (
        '<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head>'
        f"<body>{body}</body></html>"
    )
    with tempfile.TemporaryDirectory(prefix="privgame-png-") as tmp:
        page = Path(tmp) / "figure.html"
        page.write_text(html, encoding="utf-8")
        command = [
            _browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--window-size={int(width)},{int(height)}",
            f"--screenshot={tmp}/figure.png",
            page.as_uri(),
        ]
        try:
            subprocess.run(command, check=False, capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ParameterError(f"The browser could not render the figure ({exc}).") from None
        shot = Path(tmp) / "figure.png"
        if not shot.is_file() or shot.stat().st_size == 0:
            raise ParameterError(
                f"The browser wrote no image for {out}; check that it runs headless on this machine."
            )
        return write_output(out, shot.read_bytes(), what="the figure")  # owner-only, atomic
