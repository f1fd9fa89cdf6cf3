"""Runs: every run in the run store — open one, resume or cancel it, compare two, delete one.

Everything shown is read from the run folders (:func:`privgame.store.folders.list_runs`,
:class:`privgame.store.folders.RunFolder`); the comparison uses :func:`privgame.games.audit.run_summary`
for both runs at one threshold. A run whose status or spec is damaged is listed as ``damaged``,
with the reason, and can be resumed (when its spec reads) or deleted; symbolic links in the runs
folder are not followed, and the page says how many it skipped. A run whose cancel was requested
reads ``stopping`` until its engine has stopped (``cancelled``): the Cancel button acts in its
callback, before the page is drawn, so the page shows it at once.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from pages import (
    PAGES,
    T_LEAST,
    T_MOST,
    duration,
    guarded,
    open_run_page,
    plain,
    run_state,
    runs,
    runs_root,
    select_run,
    when,
)
from privgame.core.errors import RunError
from privgame.service import (
    DAMAGED,
    NOT_RUN,
    TRADITIONAL,
    RunFolder,
    launch,
    number_text,
    open_run,
    played,
    run_summary,
    symlinked_entries,
)

ACTIVE = ("created", "queued", "running")
# Where the work ran, by the engine's executor name.
_WHERE = {"dask": "a Dask cluster", "loky": "worker processes of this machine", "in-process": "one process"}


def _overview() -> bool:
    every = runs(None)
    if not every:
        st.info(f"There are no runs in {plain(runs_root())} yet.")
        st.page_link(PAGES["evaluate"], label="Start one on the Evaluate page", icon=":material/play_arrow:")
        return False
    table = pd.DataFrame(
        [
            {
                "run": info.run_id,
                "state": run_state(info.state, RunFolder(info.path)),
                "progress": round(100 * info.progress),
                "created": when(info.created),
                "data": info.data_name,
                "generator": info.generator,
                "records": "" if info.n_targets is None else f"{info.n_targets:,}",  # not yet chosen
                "problem": info.problem or "",
            }
            for info in every
        ]
    )
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "progress": st.column_config.ProgressColumn(
                "progress",
                help="Share of the run's generator fits done, the unit of every progress figure",
                min_value=0,
                max_value=100,
                format="%d%%",
            )
        },
    )
    st.caption(f"{len(every)} run(s) in {plain(runs_root().resolve())}.")
    links = symlinked_entries(runs_root())
    if links:
        st.caption(
            f"{len(links)} symbolic link(s) in the runs folder are not shown: privgame does not follow "
            "links out of the runs folder. Move the run folder itself there to see it."
        )
    return True


def _cancel(run_id: str) -> None:
    """The click on Cancel, acted on before the page is drawn again, so that it shows the run stopping."""
    open_run(runs_root(), run_id).request_cancel()
    st.toast("Cancel requested; the run stops after the work in progress.")


def _details(folder: RunFolder) -> None:
    status = folder.status()
    damage = folder.damage()
    state = DAMAGED if damage else status.get("state", "created")
    try:
        spec = folder.spec()
    except RunError:
        spec = None
    facts = [f"**{run_state(state, folder)}**", f"created {when(status.get('created'))}"]
    if status.get("n_targets") is not None:
        facts.append(f"{status['n_targets']:,} records")
    if state == "done":
        facts.append(f"took {duration(status.get('seconds'))}")
    if status.get("executor"):
        ran = "runs" if state in ACTIVE else "ran"
        facts.append(f"{ran} on {_WHERE.get(status['executor'], 'this machine')}")
    st.markdown(" · ".join(facts))
    if damage:
        st.error(plain(damage))
    elif status.get("error"):
        st.error(f"The run failed: {plain(status['error'])}")

    buttons = st.columns(4)
    if state == "done":
        if buttons[0].button("Open the results", type="primary", key="runs-open"):
            open_run_page("results", folder.run_id)
        if buttons[1].button("Export", key="runs-export"):
            open_run_page("export", folder.run_id)
    stale = state in ACTIVE and folder.status_is_stale()
    can_cancel = state in ACTIVE and not stale and not folder.cancel_requested()
    if can_cancel:
        buttons[0].button("Cancel", key="runs-cancel", on_click=_cancel, args=(folder.run_id,))
    can_resume = (state in ("cancelled", "failed", DAMAGED) or stale) and spec is not None
    can_resume = can_resume and not folder.is_running()
    if can_resume and buttons[0].button(
        "Resume", key="runs-resume", help="Continue from the run's checkpoints."
    ):
        launch(folder)
        st.session_state["launched"] = folder.run_id
        st.switch_page(PAGES["evaluate"])
    if buttons[3].button("Delete…", key="runs-delete"):
        st.session_state["_confirm_delete"] = folder.run_id
    if st.session_state.get("_confirm_delete") == folder.run_id:
        st.warning(f"Delete run {folder.run_id} and every file in it? This cannot be undone.")
        yes, no = st.columns([1, 5])
        if yes.button("Yes, delete it", type="primary", key="runs-delete-yes"):
            st.session_state.pop("_confirm_delete", None)
            folder.delete()
            st.session_state.pop("run_id", None)
            st.query_params.pop("run", None)
            st.toast(f"Deleted {folder.run_id}.")
            st.rerun()
        if no.button("Keep it", key="runs-delete-no"):
            st.session_state.pop("_confirm_delete", None)
            st.rerun()

    if spec is not None:
        with st.expander("Run spec (spec.json)"):
            st.json(spec.to_dict(), expanded=1)
    with st.expander("Status (status.json)"):
        st.json(status, expanded=1)


def _row(summary: dict[str, Any], spec_dict: dict[str, Any]) -> dict[str, Any]:
    pct_ms = summary.get("percentiles_model_seeded") or {}
    pct_t = summary.get("percentiles_traditional") or {}
    params = ", ".join(f"{k}={v}" for k, v in spec_dict["generator_params"].items()) or "defaults"
    sizes = spec_dict["sizes"]
    if TRADITIONAL not in played(summary.get("games", "both")):
        # A re-audit without the traditional game: its figures were not measured, not undefined.
        summary = {**summary, "rmsd": NOT_RUN, "miss_rate": NOT_RUN, "at_risk_traditional": NOT_RUN}
        summary |= {"mean_traditional": NOT_RUN, "percentiles_traditional": {"p90": NOT_RUN}}
        pct_t = summary["percentiles_traditional"]
    return {
        "remedy of": (spec_dict.get("parent") or {}).get("run_id", "—"),
        "data": spec_dict["data_name"],
        "generator": f"{spec_dict['generator']} ({params})",
        # Specs written before the option have no attacker: the paper's, the population one.
        "attacker": spec_dict["attack"].get("attacker", "population"),
        "rows: attacker's data / evaluation pool / D": (
            f"{sizes['aux']:,} / {sizes['eval']:,} / {sizes['target']:,}"
        ),
        "shadow datasets / evaluation runs": (
            f"{spec_dict['attack']['n_shadow']} / {spec_dict['attack']['n_eval']}"
        ),
        "seed": spec_dict["seed"],
        "records evaluated": summary.get("records"),
        "gap between the games (RMSD)": number_text(summary.get("rmsd")),
        "miss rate": number_text(summary.get("miss_rate"), 2),
        "at risk, model-seeded": summary.get("at_risk_model_seeded"),
        "at risk, traditional": summary.get("at_risk_traditional"),
        "mean risk, model-seeded": number_text(summary.get("mean_model_seeded")),
        "mean risk, traditional": number_text(summary.get("mean_traditional")),
        "90th percentile of risk, model-seeded": number_text(pct_ms.get("p90")),
        "90th percentile of risk, traditional": number_text(pct_t.get("p90")),
    }


def _compare() -> None:
    done = [info.run_id for info in runs(("done",))]
    if len(done) < 2:
        st.caption("Two finished runs are needed for a comparison.")
        return
    chosen = st.multiselect("Two finished runs", done, default=done[:2], max_selections=2, key="compare")
    t = st.slider("High-risk threshold t for both", T_LEAST, T_MOST, 0.8, 0.01, key="compare-t")
    if len(chosen) != 2:
        st.caption("Choose two runs.")
        return
    columns = {}
    for run_id in chosen:
        folder = open_run(runs_root(), run_id)
        columns[run_id] = _row(run_summary(folder, t), folder.spec().to_dict())
    table = pd.DataFrame(columns).astype(str)
    # Every row and both runs in view: the default height clips the table after ten rows.
    st.dataframe(
        table,
        width="stretch",
        height=35 * (len(table) + 1) + 3,
        # The labels column at its content's width; the runs share what is left of the page.
        column_config={"_index": st.column_config.TextColumn("", width="large")},
    )
    st.page_link(
        PAGES["remedies"],
        label="Compare a run with its remedies (record by record, privacy against utility)",
        icon=":material/healing:",
        query_params={"run": chosen[0]},
    )


def body() -> None:
    st.title("Runs")
    if not _overview():
        return
    st.subheader("One run")
    folder = select_run("Run", states=None, key="runs-picker")
    if folder is not None:
        _details(folder)
    st.subheader("Compare two runs")
    _compare()


guarded(body)
