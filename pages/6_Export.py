"""Export: the high-risk records, every per-record result, the run spec and the HTML report.

The tables are :func:`privgame.service.export_frame`'s, as in ``python -m privgame export``, written
by :func:`privgame.outputs.run_report.to_bytes` (CSV cells that a spreadsheet would run as formulas are
neutralised); the report is :func:`privgame.outputs.run_report.html_report`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages import guarded, select_run, threshold_slider
from privgame.service import (
    TRADITIONAL,
    export_frame,
    html_report,
    not_played_reason,
    played,
    to_bytes,
)

FORMATS = {"csv": "text/csv", "json": "application/json", "parquet": "application/octet-stream"}
LABELS = {"csv": "CSV", "json": "JSON", "parquet": "Parquet"}
CSV_KINDS = {
    "csv": "Comma-separated, decimal point",
    "csv-excel": "For spreadsheets: semicolon-separated, decimal comma",
}


def _downloads(label: str, table: pd.DataFrame, name: str, key: str, csv_kind: str) -> None:
    """One download button per format, side by side."""
    for col, (fmt, mime) in zip(st.columns(3), FORMATS.items(), strict=True):
        col.download_button(
            f"{label} ({LABELS[fmt]})",
            to_bytes(table, csv_kind if fmt == "csv" else fmt),
            file_name=f"{name}.{fmt}",
            mime=mime,
            key=f"{key}-{fmt}",
            on_click="ignore",
        )


def body() -> None:
    st.title("Export")
    folder = select_run("Finished run")
    if folder is None:
        return
    spec = folder.spec()
    t = threshold_slider(
        folder, key="export-t", help="The high-risk list, the verdicts and the HTML report follow it."
    )
    # As `python -m privgame export` writes them: who each record is (identifiers) first.
    records = export_frame(folder, "records", t)
    screened = folder.has_screen()
    with_screen = screened and st.toggle(
        "Add the records the screen puts at risk to the high-risk list",
        value=True,
        key="export-screened",
        help="Every record of D was screened: the list then holds the records at risk in the exact game "
        "and those only the screen judged and put at risk (a column 'source' says which), as `export "
        "--screened` writes it.",
    )
    risky = (
        export_frame(folder, "high-risk", t, screened=with_screen)
        if with_screen
        else export_frame(folder, "high-risk", t)
    )
    stem = f"{folder.run_id}"
    csv_kind = st.radio(
        "CSV files",
        list(CSV_KINDS),
        format_func=CSV_KINDS.get,
        horizontal=True,
        key="export-csv-kind",
        help="Spreadsheets set to a European language expect ';' between cells and a decimal "
        "comma; that file also starts with a byte-order mark so accents show. CSV and JSON round "
        "the risks to 4 decimals; Parquet keeps every digit.",
    )

    st.subheader("High-risk records")
    if TRADITIONAL in played(spec.attack.games):
        missed = int(risky["missed_by_traditional"].sum()) if len(risky) else 0
        traditional = f"the traditional game would miss **{missed:,}** of them."
    else:
        traditional = f"the traditional game was not run ({not_played_reason(spec.attack.attacker)})."
    if with_screen:
        by_screen = int((risky["source"] == "screened").sum())
        st.markdown(
            f"**{len(risky) - by_screen:,}** of {len(records):,} evaluated records are at risk in the exact "
            f"game and **{by_screen:,}** more of D's {spec.sizes['target']:,} records are screened at risk "
            f"at t = {t:g}; {traditional}"
        )
    else:
        st.markdown(
            f"**{len(risky):,}** of {len(records):,} evaluated records have a model-seeded risk above "
            f"t = {t:g}; {traditional}"
        )
    _downloads("High-risk records", risky, f"{stem}-high-risk-t{t:.2f}", "high-risk", csv_kind)
    if len(risky):
        st.dataframe(risky.head(50), hide_index=True)

    st.subheader("Every evaluated record")
    _downloads("Per-record results", records, f"{stem}-records", "records", csv_kind)

    if screened:
        st.subheader("Every record of D (screened)")
        st.caption(
            "One row per record of D: its screening risk, interval and verdict, and its exact risk and "
            "verdict where the exact game played it (`export --what screen`)."
        )
        every = export_frame(folder, "screen", t)
        _downloads("Every record, screened", every, f"{stem}-screen-t{t:.2f}", "screen", csv_kind)

    st.subheader("Run spec and report")
    cols = st.columns(3)
    cols[0].download_button(
        "Run spec (JSON)",
        spec.to_json(),
        file_name=f"{stem}-spec.json",
        mime="application/json",
        key="spec-json",
        on_click="ignore",
        help="Everything that determines the results: with the same data it reproduces the run.",
    )
    cols[1].download_button(
        "HTML report",
        lambda: html_report(folder, t),
        file_name=f"{stem}-report.html",
        mime="text/html",
        key="html-report",
        on_click="ignore",
        help="One self-contained page: settings, summary, figures and the high-risk records.",
    )


guarded(body)
