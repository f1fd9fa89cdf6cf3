"""Release: make the synthetic data of a finished audit, with its release card.

The owner picks a finished run; the page shows its verdict
(:func:`privgame.outputs.release.verdict_text` of :func:`privgame.games.audit.run_summary`) and what
it audited,
then :func:`privgame.outputs.release.make_release` trains the audited generator, with the audited
parameters, on exactly the audited D, as ``python -m privgame release`` does. A table the owner
uploads as the one they mean to release from is loaded as the command's ``--data`` is, and
:func:`~privgame.outputs.release.make_release` refuses it, listing every difference, unless it is the
audited table. The synthetic CSV and the release card (JSON) are offered as downloads; nothing is
written to the run folder.
"""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from pages import guarded, plain, select_run, show_error, show_setup, show_verdict, threshold_slider
from privgame.core.errors import PrivgameError
from privgame.service import (
    RunFolder,
    card_path,
    columns_not_released_text,
    json_bytes,
    load_dataset,
    make_release,
    not_safe_ids,
    run_summary,
)

# Session key of the last release made: {"key": its settings, "release": the Release}.
RELEASE_KEY = "_release"


def _settings(folder: RunFolder) -> tuple[int, int, Any]:
    """Rows, seed and the uploaded table (or None) the owner chose."""
    spec = folder.spec()
    cols = st.columns(2)
    rows = cols[0].number_input(
        "Synthetic rows",
        min_value=1,
        value=int(spec.setup.synthetic_rows or spec.sizes["target"]),
        step=100,
        key=f"release-rows-{folder.run_id}",
        help="How many rows to sample; by default as many as D has.",
    )
    seed = cols[1].number_input(
        "Seed of the release",
        min_value=0,
        value=int(spec.seed),
        step=1,
        key=f"release-seed-{folder.run_id}",
        help="The same run and seed always give the same synthetic data; by default the run's seed.",
    )
    upload = st.file_uploader(
        "The table you mean to release from (optional): the release is refused unless it is the "
        "audited table",
        type=["csv", "tsv", "txt", "gz", "parquet", "pq"],
        key="release_upload",
    )
    return int(rows), int(seed), upload


def _make(folder: RunFolder, rows: int, seed: int, upload: Any, t: float, accept_risk: bool) -> None:
    """Make the release (refused when the uploaded table is not the audited one) and remember it."""
    st.session_state.pop(RELEASE_KEY, None)
    spec = folder.spec()
    data = None
    if upload is not None:
        data = load_dataset(
            upload.getvalue(),
            filename=upload.name,
            missing_policy=spec.schema.get("missing_policy", "drop"),
        )
    with st.spinner("Training the audited generator on the audited D and sampling…"):
        release = make_release(folder, rows=rows, seed=seed, data=data, threshold=t, accept_risk=accept_risk)
    st.session_state[RELEASE_KEY] = {"key": _key(folder, rows, seed, upload, t), "release": release}


def _key(folder: RunFolder, rows: int, seed: int, upload: Any, t: float) -> tuple[Any, ...]:
    content = None if upload is None else hashlib.blake2b(upload.getvalue()).hexdigest()
    return (folder.run_id, rows, seed, content, round(t, 6))


def _downloads(folder: RunFolder, rows: int, seed: int, upload: Any, t: float) -> None:
    made = st.session_state.get(RELEASE_KEY)
    if not made:
        return
    if made["key"] != _key(folder, rows, seed, upload, t):
        st.caption("The settings changed since the last release was made: make it again.")
        return
    release = made["release"]
    st.success(
        f"Made {len(release.table):,} synthetic rows with the audited generator "
        f"{plain(folder.spec().generator)}, trained on the audited D (seed {seed})."
    )
    left_out = columns_not_released_text(folder.spec())
    if left_out:
        st.info(plain(left_out))
    name = f"{folder.run_id}-synthetic.csv"
    cols = st.columns(2)
    cols[0].download_button(
        "Synthetic data (CSV)",
        release.csv,
        file_name=name,
        mime="text/csv",
        key="download-release",
        on_click="ignore",
        type="primary",
    )
    cols[1].download_button(
        "Release card (JSON)",
        json_bytes(release.card),
        file_name=card_path(name).name,
        mime="application/json",
        key="download-card",
        on_click="ignore",
        help="What was released, from what, with which audit and verdict: fingerprints of D and of the "
        "population, the generator and its parameters, the audit plan and the share at risk.",
    )
    st.caption(
        "Keep the card with the data: it ties the release to this audit. The CSV is written to be "
        "safe to open in a spreadsheet."
    )
    with st.expander("First rows of the synthetic data"):
        st.dataframe(release.table.head(20), hide_index=True)
    with st.expander("The release card"):
        st.json(release.card, expanded=1)


def body() -> None:
    st.title("Release")
    st.markdown(
        "Make the synthetic data that was audited: the audited generator, with the audited "
        "parameters, trained on exactly the audited D. The release comes with a **release card** "
        "that records what it is made from and what its audit found."
    )
    folder = select_run("Audited run")
    if folder is None:
        return
    spec = folder.spec()
    t = threshold_slider(
        folder,
        key="release-t",
        help="Records whose model-seeded risk's 95% interval lies above t are at risk.",
    )
    summary = run_summary(folder, t)
    show_verdict(summary)
    st.subheader("What was audited")
    show_setup(summary.get("setup_text") or [])
    if spec.setup.kind != "release":
        st.warning(
            "This run used the paper's research set-up: its D is a random draw from an evaluation "
            "pool, not a table you chose to release. Audit the release set-up to release your table."
        )

    st.subheader("The release")
    rows, seed, upload = _settings(folder)
    unsafe = not_safe_ids(folder, t)
    at_risk = [r for ids in unsafe.values() for r in ids]
    accept = False
    if at_risk:
        counted = ", ".join(f"{len(ids):,} {verdict}" for verdict, ids in unsafe.items() if ids)
        st.warning(
            f"**{len(at_risk):,} {'' if unsafe.get('screened at risk') else 'audited '}"
            f"record{'s are' if len(at_risk) > 1 else ' is'} not shown safe "
            f"at t = {t:g}** ({counted}). Released as it is, this data may let the audit's attacker "
            f"single {'them' if len(at_risk) > 1 else 'it'} out"
            + (
                " or infer a secret"
                if unsafe.get("at risk of inference") or unsafe.get("undecided for inference")
                else ""
            )
            + ". Fix them first on the Remedies page "
            "(or decide the undecided ones with more runs on the Results page), or confirm below that "
            "you release knowingly; the release card records it."
        )
        accept = st.checkbox(
            f"I release this data with {len(at_risk):,} record{'s' if len(at_risk) > 1 else ''} not "
            "shown safe",
            key=f"accept-risk-{folder.run_id}",
        )
    if st.button(
        "Make the release", type="primary", key="make-release", disabled=bool(at_risk) and not accept
    ):
        try:
            _make(folder, rows, seed, upload, t, accept)
        except PrivgameError as error:
            show_error(error)
            return
    _downloads(folder, rows, seed, upload, t)


guarded(body)
