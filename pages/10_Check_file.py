"""Check a file: the similarity checks of a synthetic file made elsewhere, with no generator.

Three uploads (D, the synthetic file, a holdout of real records not in D) go to
:func:`privgame.analysis.file_check.check_file` through the service, as ``python -m privgame check-file``
does; the page shows :func:`~privgame.analysis.file_check.file_check_lines`, the per-record table and
its download, and what such a check cannot show.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from pages import guarded, plain, show_error
from privgame.service import check_file, csv_safe, file_check_lines

TYPES = ["csv", "tsv", "txt", "gz", "parquet", "pq"]
RESULT_KEY = "_file_check"


def _upload(label: str, key: str) -> tuple[bytes, str] | None:
    upload = st.file_uploader(label, type=TYPES, key=key)
    if upload is None:
        return None
    return upload.getvalue(), upload.name


def body() -> None:
    st.title("Check a file")
    st.markdown(
        "Hold a synthetic file made by a vendor or another tool, without its generator? Compare it "
        "with the table it was made from and with real records that are not in that table: how close "
        "the file comes to each record, and the similarity tests such reports use (the same as "
        "`python -m privgame check-file`)."
    )
    uploads = [
        _upload("D: the table the synthetic file was made from", "check-data"),
        _upload("The synthetic file (the same columns)", "check-synthetic"),
        _upload("A holdout: real records of the same population, not in D", "check-holdout"),
    ]
    ready = all(u is not None for u in uploads)
    # Keyed by content, not name and size: another file of the same name and size is checked anew.
    key = tuple((u[1], hashlib.sha256(u[0]).hexdigest()) for u in uploads if u is not None)
    if st.button("Check the file", type="primary", disabled=not ready, key="check-file"):
        data, synthetic, holdout = uploads  # type: ignore[misc]
        try:
            with st.spinner("Measuring the distance from every record to the synthetic file…"):
                result = check_file(
                    data[0], synthetic[0], holdout[0], names=(data[1], synthetic[1], holdout[1])
                )
        except Exception as error:
            st.session_state.pop(RESULT_KEY, None)
            show_error(error)
            return
        st.session_state[RESULT_KEY] = (key, result)
    if not ready:
        st.caption("Upload all three tables to check the file.")
    kept = st.session_state.get(RESULT_KEY)
    if kept is None or kept[0] != key:
        return
    result = kept[1]
    lines = file_check_lines(result)
    show = st.success if result.verdict == "passes" else st.warning
    show(plain(lines[1]))
    for line in lines[2:-1]:
        st.markdown(plain(line))
    st.info(plain(lines[-1]), icon=":material/info:")
    st.caption(plain(lines[0]))
    st.subheader("Each record of D")
    st.dataframe(
        result.records.sort_values("dcr_p_value"),
        hide_index=True,
        column_config={
            "record_id": "row of D (from 0)",
            "dcr": st.column_config.NumberColumn("distance to the closest synthetic row", format="%.4f"),
            "dcr_p_value": st.column_config.NumberColumn("DCR p-value", format="%.3g"),
        },
    )
    st.download_button(
        "Per-record table (CSV)",
        csv_safe(result.records).to_csv(index=False, lineterminator="\n").encode("utf-8"),
        file_name="file-check.csv",
        mime="text/csv",
        on_click="ignore",
        key="download-file-check",
    )


guarded(body)
