"""Results: one finished run — what was audited, the share at risk, the Table-1 summary, the four
figures and every record.

The summary is :func:`privgame.games.audit.run_summary` (the same numbers as
``python -m privgame report``) at the threshold chosen here: its ``setup_text`` says what was
audited, ``share_at_risk`` estimates the share of all of D at risk from the random sample, and
``groups`` counts the records at risk in each audit group. The most outlying records are not a
random sample: they are counted apart and never enter the share. The
figures come from :mod:`privgame.outputs.figures`, the utility figures from
:mod:`privgame.analysis.utility` (its
button calls :func:`~privgame.analysis.utility.measure_utility`, as ``python -m privgame utility`` does).
Clicking a point of the scatter plot or a row of the table opens that record on the Record page.
"""

from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
import streamlit as st

from pages import (
    PAGES,
    duration,
    guarded,
    open_record,
    plain,
    runs_root,
    select_run,
    show_setup,
    show_threshold_guide,
    show_verdict,
    threshold_slider,
    utility_inputs,
)
from privgame.outputs.figures import (
    Chart,
    difference_histogram,
    inference_chart,
    miss_rate_chart,
    risk_cdfs,
    risk_intervals,
    risk_scatter,
    screen_scatter,
    similarity_chart,
)
from privgame.service import (
    ANONYMETER_INSTALL,
    GROUP_LABELS,
    NOT_RUN,
    TRADITIONAL,
    RunFolder,
    RunSpec,
    Schema,
    UtilityReport,
    anonymeter_available,
    anonymity_lines,
    attack_words,
    default_target_column,
    default_workers,
    dismiss_extension,
    extension_state,
    group_masks,
    high_risk,
    identifier_columns,
    inference_texts,
    launch_extend,
    measure_anonymity,
    measure_utility,
    not_played_reason,
    number_text,
    open_run,
    per_column_table,
    played,
    records_at,
    run_summary,
    rungs,
    screen_table,
    stored_anonymity,
    stored_utility,
    to_bytes,
    undecided_records,
    utility_lines,
    value_columns,
    value_name,
)

RISK_FORMAT = "%.3f"
LEAD_COLUMNS = (
    "record_id",
    "audit_group",
    "risk_model_seeded",
    "risk_traditional",
    "difference",
    "verdict_model_seeded",
    "verdict_traditional",
    "missed_by_traditional",
    "n_eval",
    "risk_model_seeded_low",
    "risk_model_seeded_high",
    "risk_traditional_low",
    "risk_traditional_high",
    "outlier_score",
    "dcr",
    "dcr_p_value",
)
COLUMN_LABELS = {
    "audit_group": "audit group",
    "risk_model_seeded": "risk in this dataset (model-seeded)",
    "risk_traditional": "average risk (traditional)",
    "difference": "difference",
    "verdict_model_seeded": "verdict",
    "verdict_traditional": "verdict, traditional game",
    "missed_by_traditional": "missed by the traditional game",
    "n_eval": "evaluation runs",
    "risk_model_seeded_low": "risk 95% low",
    "risk_model_seeded_high": "risk 95% high",
    "risk_traditional_low": "average risk 95% low",
    "risk_traditional_high": "average risk 95% high",
    "outlier_score": "outlier score",
    "dcr": "distance to the closest synthetic record",
    "dcr_p_value": "DCR p-value",
    "at_risk_of": "at risk of",
}
# The inference game's columns, suffixed _<secret> when a run names several secrets.
INFERENCE_LABELS = {
    "inference_gain": "inference gain",
    "inference_low": "inference gain 95% low",
    "inference_high": "inference gain 95% high",
    "verdict_inference": "verdict, inference",
    "inference_attack": "inference attack",
    "inference_attack_out": "inference attack, without the record",
    "inference_in": "secret named, with the record",
    "inference_out": "secret named, without the record",
    "inferred_in": "named most often, with the record",
    "inferred_out": "named most often, without the record",
    "secret_value": "its secret",
    "inference_secret": "secret column",
}
SHOW = {
    "all": "every evaluated record",
    "at_risk": "records at risk (their interval lies above t, or their inference gain's above its threshold)",
    "missed": "records at risk that the traditional game misses",
}
GROUPS = {
    "all": "every audit group",
    "outlier": "the most outlying records",
    "random": "the random sample (share estimate)",
    "chosen": "records chosen by you",
}


def _audited(folder: RunFolder, summary: dict[str, Any], t: float) -> None:
    """The verdict, what was audited, the share of all of D at risk, and the outliers kept apart."""
    show_verdict(summary)
    show_setup(summary.get("setup_text") or [])
    _attacks_kept(summary)
    share = summary.get("share_at_risk")
    groups = summary.get("groups") or {}
    if share:
        st.info(f"**Share of D at risk.** {plain(share['text'])}")
    elif not (groups.get("outlier") or {}).get("records"):
        st.caption(
            "No random sample of D was audited, so the share of all of D at risk is not estimated; the "
            "audit plan (K most outlying + M random records) gives both the most outlying records and "
            "the share."
        )
    else:
        st.caption("No random sample of D was audited, so the share of all of D at risk is not estimated.")
    outlier = groups.get("outlier") or {}
    if outlier.get("records"):
        text = (
            f"**Most outlying records: {outlier['at_risk']:,} of {outlier['records']:,} at risk** "
            f"(their interval lies above t = {t:g}). Picked for being unusual, they are not a random "
            "sample and are not in the estimate; the highest risk of an audit can still be a random "
            "record's."
        )
        shown_safe = outlier.get("not_at_risk", outlier["records"] - outlier["at_risk"])
        show = (
            st.warning if outlier["at_risk"] else st.success if shown_safe == outlier["records"] else st.info
        )
        show(text)
    if folder.status().get("state") == "done" and extension_state(folder) == "none":
        _more_runs(folder, t)
    counts = (summary.get("answer") or {}).get("counts") or {}
    if counts.get("at risk") or counts.get("undecided"):
        st.page_link(
            PAGES["remedies"],
            label="Fix what the audit found: leave records out, generalise, then re-audit",
            icon=":material/healing:",
            query_params={"run": folder.run_id},
        )
    if folder.spec().setup.kind == "release":
        st.page_link(
            PAGES["release"],
            label="Make the release of this audit",
            icon=":material/publish:",
            query_params={"run": folder.run_id},
        )


def _attacks_kept(summary: dict[str, Any]) -> None:
    """Which attack scored how many records, when the run tried several."""
    counts = summary.get("attack_counts") or {}
    if len(summary.get("attacks") or ()) < 2 or not counts:
        return
    words = attack_words()
    kept = ", ".join(
        f"{words.get(name, (name, ''))[0]} for {count:,}"
        for name, count in sorted(counts.items(), key=lambda item: -item[1])
    )
    learning = summary.get("attack_still_learning") or 0
    st.caption(
        f"The strongest attack on the attacker's own held-out shadow datasets scored each record: {kept}."
        + (
            f" On {learning:,} record{'s' if learning != 1 else ''} the attack was still learning, so "
            "their intervals' high ends are raised (see the Record page)."
            if learning
            else ""
        )
    )


def _screen(folder: RunFolder, summary: dict[str, Any], t: float) -> None:
    """Every record of D, screened: the verdicts, how the exact game bears them out, the chart."""
    screen = summary.get("screen")
    if not screen or not folder.has_screen():
        return
    st.subheader("Every record of D (screened)")
    check = screen.get("agreement")
    show = st.info if check is None or check["trusted"] else st.warning
    show(plain(screen["text"]))
    if check and check["records"]:
        confusion = pd.DataFrame(check["confusion"]).T
        confusion.index = [f"exact: {v}" for v in confusion.index]
        confusion.columns = [f"screened: {v}" for v in confusion.columns]
        st.caption(
            "How the screen and the exact game agree on the random records (the only unbiased check): "
            "rows are the exact verdicts, columns the screened ones."
        )
        st.dataframe(confusion.loc[confusion.sum(axis=1) > 0], width="stretch")
    top = (summary.get("groups") or {}).get("screened") or {}
    if top.get("records"):
        st.caption(
            f"The exact game confirmed the {top['records']:,} top-screened records: {top['at_risk']:,} at "
            f"risk, {top['not_at_risk']:,} not at risk (in the records table, group 'screened')."
        )
    event = _chart(screen_scatter(screen_table(folder, t), t), folder, "screen", select=True)
    _open_if_new("screen", folder, _selected_point(event))
    st.page_link(
        PAGES["export"],
        label="Export every record's screened verdict, or the high-risk list with the screened records",
        icon=":material/download:",
        query_params={"run": folder.run_id},
    )


def _more_runs(folder: RunFolder, t: float) -> None:
    """A button that adds evaluation runs to the undecided records (``python -m privgame extend``)."""
    undecided = undecided_records(folder, t)
    passes = folder.status().get("extensions") or []
    if passes:
        last = passes[-1]
        st.caption(
            f"Last extension: {len(last.get('extended') or []):,} records got runs up to "
            f"{last.get('n_eval')} per game; {len(last.get('resolved') or []):,} were resolved, "
            f"{last.get('undecided', 0):,} stayed undecided."
        )
    if not undecided:
        return
    records = folder.records()
    n_eval = (
        int(records.loc[records["record_id"].isin(undecided), "n_eval"].min())
        if "n_eval" in records.columns
        else folder.spec().attack.n_eval
    )
    with st.expander(
        f"Decide the {len(undecided):,} undecided record(s) with more evaluation runs", expanded=False
    ):
        st.markdown(
            "An undecided record's 95% interval contains t: more evaluation runs narrow it. Every run "
            "already made is kept, and nothing is trained twice. Each extension is one more look at "
            "the record's verdict, and each look spends part of the 5% error, so the verdicts stay "
            "sound however often you add runs. The runs double from rung to rung of a ladder fixed "
            "in advance (each doubling counts one look), so that a number chosen after seeing the "
            "verdicts keeps their error. The same as the command:"
        )
        st.code(f"python -m privgame extend {folder.path} --n-eval N --threshold {t:g}", language="bash")
        wanted = st.select_slider(
            "Evaluation runs per game",
            options=rungs(n_eval)[:8],
            key=f"extend-n-{folder.run_id}",
            help=f"Each undecided record (now {n_eval:,} runs) gets runs up to this many, in both games.",
        )
        if st.button(
            f"Add runs to the {len(undecided):,} undecided record(s)", key=f"extend-{folder.run_id}"
        ):
            launch_extend(folder, n_eval=int(wanted), threshold=t)
            st.rerun()


def _follow_body(run_id: str) -> None:
    guarded(lambda: _extension_progress(run_id))


# The extension's progress, refreshed every second; it reruns the whole page once it ends.
_follow = st.fragment(_follow_body, run_every=1)


def _extension_progress(run_id: str) -> None:
    folder = open_run(runs_root(), run_id)
    state = extension_state(folder)
    if state == "none":
        st.rerun()  # ended: show the new results
    if state == "died":
        st.error(
            "The extension stopped before it finished; the results below are those of before. "
            "The runs it made are kept and reused when you start it again."
        )
        log = folder.path / "engine.log"
        if log.is_file():
            with st.expander("Engine log (last lines)"):
                st.code(log.read_text(errors="replace")[-3000:])
        if st.button("Dismiss", key=f"dismiss-extend-{run_id}"):
            dismiss_extension(folder)
            st.rerun()
        return
    status = folder.status()
    request = status.get("extending") or {}
    done, total = int(status.get("fits_done") or 0), int(status.get("fits_total") or 0)
    eta = status.get("eta")
    left = duration(eta) if eta is not None else "being measured"
    running = bool(total) and status.get("state") == "running"
    text = f"{done:,} of {total:,} generator fits · time left {left}" if running else "starting…"
    st.info(
        "This run is getting more evaluation runs"
        + (f" (up to {request['n_eval']} per game)" if request.get("n_eval") else "")
        + ". The results below are those of before; they are replaced when it ends."
    )
    st.progress(min(1.0, done / total) if running else 0.0, text=text)
    if folder.cancel_requested():
        st.caption("Cancel requested: stopping after the work in progress; the results of before stay.")
    elif st.button("Cancel the extension", key=f"cancel-extend-{run_id}"):
        folder.request_cancel()


def _model_seeded_summary(folder: RunFolder, summary: dict[str, Any], t: float) -> None:
    """The summary of a run that played the model-seeded game alone (a remedy's re-audit)."""
    cols = st.columns(3)
    cols[0].metric("Records evaluated", f"{summary['records']:,}")
    cols[1].metric("At risk in this dataset", summary.get("at_risk_model_seeded"))
    cols[2].metric("Traditional game", NOT_RUN)
    lineage = folder.spec().parent or {}
    reason = not_played_reason(str(summary.get("attacker", "population")))
    st.caption(
        f"The traditional game was not run ({reason}); the verdict rests on the model-seeded game, "
        "so the gap between the games and the miss rate are not measured"
        + (f". A remedy of {plain(lineage['run_id'])}: {plain(lineage['description'])}." if lineage else ".")
    )


def _summary(folder: RunFolder, summary: dict[str, Any], t: float) -> None:
    if TRADITIONAL not in played(summary.get("games", "both")):
        _model_seeded_summary(folder, summary, t)
        return
    cols = st.columns(5)
    cols[0].metric("Records evaluated", f"{summary['records']:,}")
    cols[1].metric(
        "Gap between the games",
        number_text(summary.get("rmsd")),
        help="How far a record's risk in this dataset typically lies from its average risk: the root "
        "mean squared difference of the two risks (RMSD, Eq. 10 of the paper).",
    )
    cols[2].metric(
        "Missed by the traditional game",
        number_text(summary.get("miss_rate"), 2),
        help=(
            "The miss rate (Eq. 9 of the paper), as the paper counts it on point estimates: of the "
            "records whose risk in this dataset is above t, the share whose average risk is at or "
            "below t. The verdicts above rest on intervals instead."
        ),
    )
    cols[3].metric(
        "At risk in this dataset",
        summary.get("at_risk_model_seeded"),
        help=f"Records at risk: the 95% interval of their risk in this dataset (model-seeded game, "
        f"R_MS) lies above t = {t:g}.",
    )
    cols[4].metric(
        "At risk on average",
        summary.get("at_risk_traditional"),
        help=f"Records the traditional game puts at risk: the 95% interval of their average risk "
        f"(R_T) lies above t = {t:g}.",
    )
    st.markdown(plain(summary.get("miss_rate_text") or ""))
    interval = summary.get("miss_rate_interval") or {}
    if interval.get("caveat"):
        st.warning(plain(interval["caveat"]))
    elif interval:
        st.caption(f"Miss rate 95% interval (Clopper-Pearson): {interval['low']:.2f}–{interval['high']:.2f}.")
    rows = []
    for key, label in (
        ("model_seeded", "risk in this dataset (model-seeded)"),
        ("traditional", "average risk (traditional)"),
        ("abs_difference", "gap between the two"),
    ):
        pct = summary.get(f"percentiles_{key}") or {}
        rows.append(
            {
                "": label,
                "mean": number_text(summary.get(f"mean_{key}")),
                "10th percentile": number_text(pct.get("p10")),
                "median": number_text(pct.get("p50")),
                "90th percentile": number_text(pct.get("p90")),
            }
        )
    rows[-1]["mean"] = "—"  # the summary gives RMSD for the differences, above
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        column_config={
            c: st.column_config.TextColumn(c, alignment="right")
            for c in ("mean", "10th percentile", "median", "90th percentile")
        },
    )
    excluded = summary.get("records_excluded") or 0
    if excluded:
        st.caption(f"{excluded} record(s) with an undefined risk are left out of these numbers.")
    spec = folder.spec()
    params = ", ".join(f"{k}={v}" for k, v in spec.to_dict()["generator_params"].items())
    st.caption(
        f"{plain(spec.data_name)} · generator {plain(spec.generator)}"
        f"{f' ({plain(params)})' if params else ''} · "
        f"|D_aux| {spec.sizes['aux']:,}, |D_eval| {spec.sizes['eval']:,}, "
        f"|D| {spec.sizes['target']:,} · "
        f"{spec.attack.n_shadow:,} shadow datasets, {spec.attack.n_eval:,} evaluation runs per game · "
        f"seed {spec.seed} · attacker: {summary.get('attacker_text') or 'a sample of the population'}"
    )
    half_width = summary.get("hoeffding_half_width_rho_0.05")
    if half_width:
        st.caption(
            f"With {spec.attack.n_eval:,} evaluation runs per game, a risk is known to within "
            f"±{half_width:.2f} (95%, Hoeffding); more evaluation runs narrow it."
        )
    note = (summary.get("generator_metadata") or {}).get("dp_note")
    if note:
        st.info(plain(note))
    if summary.get("guarantee"):
        proven = summary["guarantee"]["proves_not_at_risk"]
        (st.success if proven else st.info)(
            plain(summary["guarantee"]["text"]), icon=":material/verified_user:"
        )
    twins = summary.get("twins") or {}
    if twins.get("in_d") or twins.get("in_population"):
        st.info(
            "Exact twins: "
            + plain(twins.get("sentence") or "")
            + " The Record page says whether a record has one.",
            icon=":material/content_copy:",
        )


UTILITY_HELP = {
    "fidelity": (
        "How far each column's distribution in the synthetic data lies from D's: the total variation "
        "distance, averaged over columns (continuous columns in 10 quantile bins of D). 0 = identical, "
        "1 = nothing in common. SDMetrics: 1 − TVComplement."
    ),
    "association": (
        "How far the strength of association of each pair of columns lies from D's, on average: "
        "Cramér's V (two categorical columns), the correlation ratio (categorical and continuous), "
        "|Pearson's r| (two continuous). 0 = the same associations. SDMetrics: ContingencySimilarity, "
        "CorrelationSimilarity."
    ),
    "downstream": (
        "A random forest trained on synthetic data predicts the target column and is scored on the "
        "holdout (real records not in D): balanced accuracy for a categorical column, R² for a "
        "continuous one. SDMetrics: ML efficacy."
    ),
    "downstream_real": (
        "The same model trained on D itself, scored on the same holdout: the figure to compare with."
    ),
}


def _measure_form(folder: RunFolder, report: UtilityReport | None) -> None:
    """Choose the target column and samples, and measure (``python -m privgame utility``)."""
    schema = Schema.from_dict(folder.spec().schema)
    current = report.target_column if report is not None else default_target_column(schema)
    target, samples = utility_inputs(
        schema.names,
        current,
        key=f"utility-{folder.run_id}",
        help="By default the last categorical column (Adult: income).",
    )
    st.caption("The same as the command:")
    st.code(
        f"python -m privgame utility {shlex.quote(str(folder.path))} --samples {int(samples)} "
        f"--target-column {shlex.quote(str(target))}",
        language="bash",
    )
    label = "Measure the utility" if report is None else "Measure again"
    if st.button(label, key=f"utility-measure-{folder.run_id}"):
        with st.spinner("Fitting the generator on D and comparing its samples with the data…"):
            measure_utility(folder, samples=int(samples), target_column=target)
        st.rerun()


def _utility(folder: RunFolder) -> None:
    """The run's stored utility figures beside its privacy, or a button that measures them."""
    st.subheader("Utility")
    report = stored_utility(folder)
    if report is None:
        st.caption(
            "What the synthetic data keeps of D: not measured yet for this run. It fits the generator "
            "on D a few times and compares each sample with the data (a few seconds for |D| = 1,000)."
        )
        _measure_form(folder, None)
        return
    cols = st.columns(4)
    cols[0].metric("Distribution distance", report.fidelity.text(), help=UTILITY_HELP["fidelity"])
    cols[1].metric("Association difference", report.association.text(), help=UTILITY_HELP["association"])
    if report.downstream is not None:
        cols[2].metric(
            "Model trained on synthetic",
            report.downstream.text(),
            help=f"{UTILITY_HELP['downstream']} Here: {report.downstream_metric} predicting "
            f"{report.target_column}.",
        )
    if report.downstream_real is not None:
        cols[3].metric(
            "Model trained on D",
            f"{report.downstream_real:.3f}",
            help=UTILITY_HELP["downstream_real"],
        )
    for line in utility_lines(report)[:3]:
        st.markdown(plain(line))
    with st.expander("Distance of each column"):
        st.dataframe(
            per_column_table(report),
            hide_index=True,
            key=f"utility-columns-{folder.run_id}",
            column_config={
                c: st.column_config.NumberColumn(c, format=RISK_FORMAT)
                for c in ("total variation distance", "sd over samples")
            },
        )
    with st.expander("Measure again (another target column or number of samples)"):
        _measure_form(folder, report)


def _anonymity(folder: RunFolder) -> None:
    """anonymeter's three risks of the release (``python -m privgame anonymity``): the stored
    figures, or a button that measures them."""
    st.subheader("The three risks regulators name")
    st.caption(
        "Singling out, linkability and inference: the criteria by which Europe's data protection "
        "authorities judge anonymisation (Article 29 Working Party, Opinion 05/2014), measured by "
        "anonymeter for the whole table on the release this run audits, each against a control set "
        "of records outside D. They are figures for the table, not per record; the games above are "
        "privgame's own, per record."
    )
    report = stored_anonymity(folder)
    if report is not None:
        cols = st.columns(3)
        cols[0].metric("Singling out", f"{report.singling_out.value:.3f}", help=report.singling_out.text())
        cols[1].metric("Linkability", f"{report.linkability.value:.3f}", help=report.linkability.text())
        worst = max(report.inference.items(), key=lambda item: item[1].value, default=None)
        if worst is not None:
            cols[2].metric(f"Inference ({worst[0]})", f"{worst[1].value:.3f}", help=worst[1].text())
        for line in anonymity_lines(report):
            st.markdown("- " + plain(line))
    command = f"python -m privgame anonymity {shlex.quote(str(folder.path))}"
    if not anonymeter_available():
        st.caption(f"anonymeter is not installed here; install it with: {ANONYMETER_INSTALL}")
        return
    with st.expander("Measure the three risks" if report is None else "Measure again"):
        st.caption("The same as the command:")
        st.code(command, language="bash")
        if st.button("Measure with anonymeter", key=f"anonymity-measure-{folder.run_id}"):
            with st.spinner("Sampling the release and running anonymeter's three evaluators…"):
                measure_anonymity(folder, workers=default_workers())
            st.rerun()


def _chart(chart: Chart, folder: RunFolder, slug: str, *, select: bool = False) -> Any:
    event = st.plotly_chart(
        chart.figure,
        key=f"chart-{slug}",
        on_select="rerun" if select else "ignore",
        selection_mode="points",
    )
    st.caption(plain(chart.caption))
    st.download_button(
        "Data of this chart (CSV)",
        to_bytes(chart.data, "csv"),
        file_name=f"{folder.run_id}-{slug}.csv",
        mime="text/csv",
        key=f"download-{slug}",
        on_click="ignore",
    )
    return event


def _selected_point(event: Any) -> int | None:
    points = getattr(getattr(event, "selection", None), "points", None) or []
    for point in points:
        custom = point.get("customdata")
        if custom is None:
            continue
        value = custom[0] if isinstance(custom, (list, tuple)) else custom
        try:
            return int(value)
        except (TypeError, ValueError):
            continue
    return None


def _open_if_new(source: str, folder: RunFolder, record_id: int | None) -> None:
    """Open a record the user just selected (a selection already followed is not followed again)."""
    key = f"_followed-{source}"
    if record_id is None:
        st.session_state.pop(key, None)
        return
    if st.session_state.get(key) == (folder.run_id, record_id):
        return
    st.session_state[key] = (folder.run_id, record_id)
    open_record(folder.run_id, record_id)


def _figures(folder: RunFolder, records: pd.DataFrame, t: float) -> None:
    st.subheader("Figures")
    if TRADITIONAL not in played(folder.spec().attack.games):
        cap = (folder.summary().get("generator_metadata") or {}).get("dp_auc_bound")
        dp = bool((folder.summary().get("generator_metadata") or {}).get("dp_guarantee"))
        chart = risk_intervals(records, t, cap=float(cap) if dp and isinstance(cap, int | float) else None)
        event = _chart(chart, folder, "risk-intervals", select=True)
        _open_if_new("intervals", folder, _selected_point(event))
        st.caption(
            "The figures that compare the two games are not drawn: the traditional game was not "
            "run. The Remedies page compares this run with its parent, record by record."
        )
        return
    left, right = st.columns(2)
    with left:
        event = _chart(risk_scatter(records, t), folder, "risk-scatter", select=True)
        _open_if_new("scatter", folder, _selected_point(event))
    with right:
        _chart(difference_histogram(records), folder, "difference-histogram")
    left, right = st.columns(2)
    with left:
        _chart(miss_rate_chart(records, current=t), folder, "miss-rate")
    with right:
        _chart(risk_cdfs(records), folder, "risk-cdfs")


def _similarity(folder: RunFolder, summary: dict[str, Any], records: pd.DataFrame, t: float) -> None:
    """The release's similarity test beside the attack: the sentence, and each record's DCR
    p-value against its risk."""
    similarity = summary.get("similarity")
    if not similarity:
        return
    st.subheader("Similarity test against the attack")
    text = plain(similarity["text"])
    if similarity.get("table") is None:
        st.caption(text)
        return
    show = st.warning if similarity.get("at_risk_not_close") else st.info
    show(text, icon=":material/compare_arrows:")
    st.caption(
        "The similarity test is the check synthetic data reports usually give: the distance from "
        "each record to its closest synthetic record (DCR), here on the release this run audits "
        "(the generator fitted on D, sampled with the run's seed), compared with the same distance "
        "for real records that are not in D. Passing it does not make a record safe: the attack is "
        "what decides."
    )
    if "dcr_p_value" in records.columns:
        chart = similarity_chart(records, t, alpha=float(similarity.get("alpha", 0.05)))
        event = _chart(chart, folder, "similarity", select=True)
        _open_if_new("similarity", folder, _selected_point(event))


def _inference(folder: RunFolder, summary: dict[str, Any], records: pd.DataFrame) -> None:
    """The attribute-inference game: per secret, its sentence and each record's gain against its
    membership risk (nothing for a run that named no secret)."""
    inference = summary.get("inference")
    texts = inference_texts(inference)
    if not texts:
        return
    st.subheader("Attribute inference")
    st.caption(
        "Beyond membership: an attacker who knows each audited record's other columns infers its "
        "secret from the release. A record's inference gain is how much more often it succeeds with "
        "the record in D than with it swapped for a reference record (the membership game's own "
        "'in' and 'out' runs), so what the population alone reveals does not count against it. "
        "These per-record games are privgame's; the table-wide figures are the traditional, "
        "averaged view."
    )
    secrets = list(inference.get("secrets") or ())
    threshold = float(inference.get("threshold", 0.1))
    for secret, text in zip(secrets, texts, strict=False):
        at_risk = (inference.get("by_secret", {}).get(secret) or {}).get("verdicts", {}).get("at risk", 0)
        (st.warning if at_risk else st.info)(plain(text), icon=":material/visibility:")
        tail = "" if len(secrets) == 1 else f"_{secret}"
        if f"inference_gain{tail}" in records.columns:
            chart = inference_chart(records, secret, threshold, suffix=tail)
            event = _chart(chart, folder, f"inference-{secret}", select=True)
            _open_if_new(f"inference-{secret}", folder, _selected_point(event))


def _group_filter(records: pd.DataFrame, spec: RunSpec) -> pd.DataFrame:
    """The records of the audit group chosen here (every record for a run without groups)."""
    if "audit_group" not in records.columns:
        return records
    present = set(records["audit_group"].astype(str))
    masks = group_masks(records, spec)
    shown = ["all"]
    shown += [g for g in ("outlier", "random") if masks[g].any()]
    shown += ["chosen"] if "chosen" in present else []
    if len(shown) <= 2:
        return records  # one group: nothing to filter
    group = st.radio("Audit group", shown, format_func=GROUPS.__getitem__, horizontal=True, key="group")
    if group == "all":
        return records
    if group == "chosen":
        return records[records["audit_group"].astype(str) == "chosen"]
    return records[masks[group]]


def _inference_labels(columns: Any, secrets: tuple[str, ...]) -> dict[str, str]:
    """Readable names of the inference game's columns, with the secret's name where there are several."""
    out = {}
    for name, label in INFERENCE_LABELS.items():
        for secret in secrets:
            column = name if len(secrets) == 1 else f"{name}_{secret}"
            if column in columns:
                out[column] = label if len(secrets) == 1 else f"{label} ({secret})"
    return out


def _table(folder: RunFolder, records: pd.DataFrame, t: float) -> None:
    st.subheader("Records")
    both = TRADITIONAL in played(folder.spec().attack.games)
    options = list(SHOW) if both else [k for k in SHOW if k != "missed"]
    show = st.radio("Show", options, format_func=SHOW.__getitem__, horizontal=True, key="show")
    view = _group_filter(records, folder.spec())
    if show in ("at_risk", "missed"):
        view = high_risk(view, t)
    if show == "missed":
        view = view[view["missed_by_traditional"]]
    if "audit_group" in view.columns:
        view = view.assign(audit_group=view["audit_group"].map(lambda g: GROUP_LABELS.get(str(g), str(g))))
    risk_cols = [c for c in view.columns if c.startswith(("risk_", "difference", "outlier_score"))]
    labels = {c: COLUMN_LABELS[c] for c in view.columns if c in COLUMN_LABELS and c not in risk_cols}
    labels |= _inference_labels(view.columns, folder.spec().inference.secrets)
    # The record's own values are stored as value:<column>; the table shows the column's name.
    labels |= {c: value_name(c) for c in value_columns(view.columns)}
    # Who the record is (its identifiers, excluded from the generator) comes right after its id.
    first = [c for c in LEAD_COLUMNS if c in view.columns]
    first[1:1] = identifier_columns(view, folder.spec().schema)
    order = first + [c for c in view.columns if c not in first]
    if not both:  # the traditional game was not played: its columns would all be empty
        order = [c for c in order if "traditional" not in c and c != "difference"]
    st.caption(
        f"{len(view):,} of {len(records):,} records. Click a column header to sort; select a row "
        "to open the record."
    )
    event = st.dataframe(
        view.reset_index(drop=True),
        key="records-table",
        hide_index=True,
        column_order=order,
        on_select="rerun",
        selection_mode="single-row",
        column_config={
            **labels,
            **{
                c: st.column_config.NumberColumn(COLUMN_LABELS.get(c, c), format=RISK_FORMAT)
                for c in risk_cols
            },
        },
    )
    rows = event.selection.rows if event is not None else []
    _open_if_new("table", folder, int(view.iloc[rows[0]]["record_id"]) if rows else None)


def body() -> None:
    st.title("Results")
    folder = select_run("Finished run", extending=True)
    if folder is None:
        return
    extending = extension_state(folder) != "none"
    if extending:
        _follow(folder.run_id)
    if folder.status().get("state") != "done" and not folder.has_results():
        return
    t = threshold_slider(
        folder,
        key="t",
        help=(
            "Records whose model-seeded risk's 95% interval lies above t are at risk. Changing t "
            "recomputes everything below."
        ),
    )
    show_threshold_guide(t)
    summary = run_summary(folder, t)
    _audited(folder, summary, t)
    _screen(folder, summary, t)
    _summary(folder, summary, t)
    _utility(folder)
    records = records_at(folder.records(), t)
    _figures(folder, records, t)
    _similarity(folder, summary, records, t)
    _inference(folder, summary, records)
    _anonymity(folder)
    _table(folder, records, t)


guarded(body)
