"""Record: one evaluated record — its values beside D's, both risks, the attack's ROC curves,
its score distributions and its nearest neighbours in D.

The numbers come from :func:`privgame.outputs.run_report.record_profile` and the run's records and scores;
the charts from :mod:`privgame.outputs.figures`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from pages import PAGES, RECORD_KEY, guarded, plain, select_run, threshold_slider
from privgame.outputs.figures import roc_curves, score_distributions
from privgame.service import (
    OUT_WORLD_TEXT,
    RunFolder,
    attack_words,
    identifier_columns,
    metrics,
    not_played_reason,
    number_text,
    record_inference_texts,
    record_profile,
    record_similarity_text,
    screen_table,
    statistic_words,
    to_bytes,
    twin_note,
    value_name,
)


def _pick_record(folder: RunFolder, records: pd.DataFrame, screened: pd.DataFrame | None) -> int | None:
    ids = [int(i) for i in records["record_id"]]
    if not ids:
        st.info("This run has no evaluated records.")
        return None
    risk = dict(zip(ids, records["risk_model_seeded"], strict=True))
    wanted = st.query_params.get("record") or st.session_state.get(RECORD_KEY)
    try:
        wanted_id = int(wanted) if wanted is not None else None
    except (TypeError, ValueError):
        wanted_id = None
    in_d = set() if screened is None else set(screened["record_id"].astype(int))
    if in_d:
        # Every record of D was screened: any of them can be opened, not only the audited ones.
        key = f"any-record-{folder.run_id}"
        if wanted_id is not None and wanted_id in in_d and wanted_id not in ids:
            st.session_state[key] = wanted_id
        typed = st.number_input(
            f"Open any of the {len(in_d):,} records of D by its id "
            "(leave it empty to pick an audited record)",
            min_value=0,
            value=None,
            step=1,
            key=key,
            help="Every record of D was screened; the exact game played the audited records.",
        )
        if typed is not None:
            if int(typed) in in_d:
                st.session_state[RECORD_KEY] = int(typed)
                st.query_params["record"] = str(int(typed))
                return int(typed)
            st.warning(
                plain(
                    f"Record {int(typed)} is not in D, the data the release is trained on; give the id of "
                    "one of D's records (export --what screen lists them)."
                )
            )
    elif wanted_id is not None and wanted_id not in ids:
        st.warning(plain(f"Record {wanted_id} was not evaluated in {folder.run_id}; showing another record."))
    index = ids.index(wanted_id) if wanted_id in ids else 0
    record_id = st.selectbox(
        "Record",
        ids,
        index=index,
        key=f"record-{folder.run_id}",
        format_func=lambda i: f"record {i} · model-seeded risk {number_text(risk[i])}",
    )
    st.session_state[RECORD_KEY] = int(record_id)
    st.query_params["record"] = str(int(record_id))
    return int(record_id)


def _rows_height(rows: int) -> int:
    """Pixels that show every row of a table (Streamlit shows about 10 by default), up to 40."""
    return 38 + 35 * min(max(rows, 1), 40)


VERDICT_SENTENCES = {
    "at risk": "The whole 95% interval of its risk in this dataset lies above t = {t:g}.",
    "undecided": (
        "The 95% interval of its risk in this dataset contains t = {t:g}. More evaluation runs "
        "decide it (the Results page adds them)."
    ),
    "not at risk": "The whole 95% interval of its risk in this dataset lies at or below t = {t:g}.",
    "attack failed": (
        "The interval of its risk lies at or below 0.5: the attack did no better than a coin on this "
        "record, or learnt a difference between its shadow datasets and the real ones that points the "
        "wrong way. That says nothing about the record's safety, so it is not called safe. Try the "
        "stronger attacker (leave-one-out, who knows every other record) or more shadow datasets."
    ),
}


def _verdict(row: pd.Series, prefix: str, t: float) -> str:
    return str(
        metrics.verdicts([_float(row.get(f"{prefix}_low"))], [_float(row.get(f"{prefix}_high"))], t)[0]
    )


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _risks(row: pd.Series, t: float, attacker: str, tried: tuple[str, ...] = ("tapas",)) -> None:
    """Both risks with their intervals, and the record's three-way verdict at ``t``."""
    verdict = _verdict(row, "risk_model_seeded", t)
    played = row.get("verdict_traditional") != "not run"
    traditional = _verdict(row, "risk_traditional", t) if played else "not run"
    cols = st.columns(3)
    for col, (prefix, label, help) in zip(
        cols[:2],
        (
            (
                "risk_model_seeded",
                "Risk in this dataset (model-seeded)",
                "R_MS: the attack's AUC when only the generator's seed varies and D is fixed.",
            ),
            (
                "risk_traditional",
                "Average risk (traditional)",
                "R_T: the attack's AUC averaged over fresh datasets drawn from the population.",
            ),
        ),
        strict=True,
    ):
        if prefix == "risk_traditional" and not played:
            col.metric(label, "not run", help=help)
            reason = not_played_reason(attacker)
            col.caption(reason[0].upper() + reason[1:] + ".")
            continue
        col.metric(label, number_text(row.get(prefix)), help=help)
        col.caption(
            f"95% interval {number_text(row.get(f'{prefix}_low'))} – {number_text(row.get(f'{prefix}_high'))}"
        )
        if _float(row.get(prefix)) < 0.5:
            col.caption(
                "Below 0.5: the attack scored this record's 'out' runs above its 'in' runs, worse than "
                "a guess. That is no evidence that the record is safe; the verdict below says what the "
                "runs show."
            )
    cols[2].metric(
        "Difference", number_text(row.get("difference")) if played else "not run", help="R_MS − R_T"
    )
    sentence = VERDICT_SENTENCES[verdict].format(t=t)
    if verdict == "at risk" and played and traditional != "at risk":
        sentence += f" The traditional game would not flag it (its verdict: {traditional})."
    show = {"at risk": st.warning, "undecided": st.info, "not at risk": st.success, "attack failed": st.error}
    show[verdict](f"**{verdict.capitalize()}.** {sentence}")
    runs = row.get("n_eval")
    if runs is not None and not (isinstance(runs, float) and math.isnan(runs)):
        looks = int(_float(row.get("looks")) if not math.isnan(_float(row.get("looks"))) else 1)
        st.caption(
            f"{int(runs):,} evaluation runs per game, {looks} look{'s' if looks > 1 else ''} at the "
            "verdict; the interval is the logit DeLong interval of the AUC, its 5% error spent over the "
            "looks so that it holds however often runs were added. Each record is tested on its own "
            "(the Results page reads the verdicts as a set). " + OUT_WORLD_TEXT
        )
    attack = row.get("attack")
    words = attack_words()
    if isinstance(attack, str) and attack in words:
        title, what = words[attack]
        chosen = (
            f"the strongest of {len(tried)} attacks on the attacker's own held-out shadow datasets"
            if len(tried) > 1
            else "the only attack of this run"
        )
        st.caption(f"Attacked with **{title}** ({chosen}): {what}.")
    if row.get("attack_still_learning") is True or row.get("attack_still_learning") == 1:
        st.caption(
            "The attack was still learning: trained on all its shadow datasets it beat the two attacks "
            f"trained on halves of them by {_float(row.get('attack_learning_gain')):.2f} on the logit "
            "scale, more than training noise. The interval's high end is raised by as much, so the "
            "record is not called 'not at risk' on the strength of an attack that had not finished; "
            "more shadow datasets (N_shadow) would settle it."
        )
    shadow = _float(row.get("attack_shadow_auc"))
    if not math.isnan(shadow):
        st.caption(
            f"On its own held-out shadow datasets the attack scored an AUC of {shadow:.3f}, against "
            f"{number_text(row.get('risk_model_seeded'))} on the real evaluation runs"
            + (
                ": a large gap means the shadow datasets differ from the real ones."
                if shadow - _float(row.get("risk_model_seeded")) > 0.1
                else "."
            )
        )


def _who(row: pd.Series, folder: RunFolder) -> None:
    """Who the record is: its identifier columns (excluded from the generator, not the report)."""
    names = identifier_columns(row.index, folder.spec().schema)
    if names:
        st.markdown(
            "  \n".join(f"**{plain(value_name(c))}**: {plain(_text(row[c]))}" for c in names),
            help="Columns the generator does not use (identifiers); they say who the record is.",
        )


def _text(value: Any) -> str:
    return "missing" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def body() -> None:
    st.title("Record")
    folder = select_run("Finished run")
    if folder is None:
        return
    records = folder.records()
    screened = screen_table(folder, folder.spec().threshold) if folder.has_screen() else None
    record_id = _pick_record(folder, records, screened)
    if record_id is None:
        return
    t = threshold_slider(folder, key="record-t", help="The record's verdict below follows it.")
    if screened is not None:
        screened = screen_table(folder, t)
        _screened(screened.loc[screened["record_id"] == record_id].iloc[0], t)
    audited = records.loc[records["record_id"] == record_id]
    if audited.empty:
        _screened_only(folder, record_id)
        return
    row = audited.iloc[0]
    _who(row, folder)
    _risks(row, t, folder.spec().attack.attacker, folder.spec().attack.attacks)
    note = twin_note(folder.summary().get("twins"), record_id)
    if note:
        st.info(plain(note), icon=":material/content_copy:")
    alpha = float((folder.summary().get("similarity") or {}).get("alpha", 0.05))
    verdict = _verdict(row, "risk_model_seeded", t)
    close = record_similarity_text(
        _float(row.get("dcr")), _float(row.get("dcr_p_value")), verdict, alpha=alpha
    )
    if close:
        st.caption(plain(close))
    _inference(row, folder)

    profile = _profile(folder, record_id)

    scores = folder.scores()
    st.subheader("How well the attack detects this record")
    left, right = st.columns(2)
    for col, log, slug in ((left, False, "roc"), (right, True, "roc-log")):
        with col:
            chart = roc_curves(scores, record_id, log=log)
            st.plotly_chart(chart.figure, key=f"chart-{slug}")
            st.caption(plain(chart.caption))
    chart = score_distributions(scores, record_id)
    st.plotly_chart(chart.figure, key="chart-scores")
    st.caption(plain(chart.caption))
    st.download_button(
        "Scores of this record (CSV)",
        to_bytes(scores[scores["record_id"] == record_id], "csv"),
        file_name=f"{folder.run_id}-record-{record_id}-scores.csv",
        mime="text/csv",
        on_click="ignore",
        key="download-scores",
    )
    _neighbours(folder, profile)


def _inference(row: pd.Series, folder: RunFolder) -> None:
    """What the release reveals of this record's secret columns, in each world."""
    inference = folder.spec().inference
    texts = record_inference_texts(row.to_dict(), inference.secrets, inference.threshold)
    if not texts:
        return
    st.subheader("Attribute inference")
    for secret, text in zip(inference.secrets, texts, strict=False):
        tail = "" if len(inference.secrets) == 1 else f"_{secret}"
        at_risk = str(row.get(f"verdict_inference{tail}")) == "at risk"
        (st.warning if at_risk else st.info)(plain(text), icon=":material/visibility:")


def _neighbours(folder: RunFolder, profile: dict[str, Any]) -> None:
    st.subheader("Nearest neighbours in D")
    st.caption("The records of D closest to this one (Gower distance over the used columns).")
    st.dataframe(profile["neighbours"], hide_index=True)
    st.page_link(
        PAGES["results"],
        label="Back to the results",
        icon=":material/bar_chart:",
        query_params={"run": folder.run_id},
    )


def _screened(row: pd.Series, t: float) -> None:
    """The record's screening risk, interval and verdict (every record of D has one)."""
    verdict = str(row["screen_verdict"])
    statistic = statistic_words().get(str(row["screen_statistic"]), str(row["screen_statistic"]))
    show = st.error if verdict == "at risk" else st.success if verdict == "not at risk" else st.info
    show(
        plain(
            f"Screened: risk {number_text(row['screen_risk'])} (95% interval {number_text(row['screen_low'])}"
            f"-{number_text(row['screen_high'])}), {verdict} at t = {t:g}; the screen's statistic that "
            f"finds it best counts {statistic}."
        )
    )


def _screened_only(folder: RunFolder, record_id: int) -> None:
    """A record of D the exact game did not play: its screen, its values and its neighbours."""
    st.caption(
        "The exact game did not play this record: its risk is the screen's, above. Its values and "
        "neighbours follow; to play it exactly, audit it by id (Evaluate page, or run --target-ids)."
    )
    table = folder.load_table()
    who = identifier_columns(table.columns, folder.spec().schema)
    if who:
        st.markdown(
            "  \n".join(f"**{plain(str(c))}**: {plain(_text(table.iloc[record_id][c]))}" for c in who)
        )
    _neighbours(folder, _profile(folder, record_id))


def _profile(folder: RunFolder, record_id: int) -> dict[str, Any]:
    """The record's values beside D's typical ones, drawn; returns :func:`record_profile`'s result."""
    profile = record_profile(folder, record_id)
    st.subheader("Values beside the target dataset D")
    st.caption(
        f"The record's value in each used column, the typical value in D "
        f"({profile['target_size']:,} records: the most common category, or the median), and how "
        "rare the record's value is."
    )
    columns = profile["columns"].copy()
    for name in ("value", "typical"):
        columns[name] = columns[name].map(lambda v: "" if v is None else str(v))
    # "typical is" tells a category's mode from a number's median: worth a column only when both occur.
    shown = ["column", "role", "value", "typical", "typical_is", "rarity"]
    if columns["typical_is"].nunique() < 2:
        shown.remove("typical_is")
    st.dataframe(
        columns[shown],
        hide_index=True,
        column_config={"typical_is": "typical is"},
        height=_rows_height(len(columns)),
    )
    return profile


guarded(body)
