"""Pieces shared by the dashboard pages.

Streamlit never lists ``__init__.py`` as a page, so the pages import these helpers with
``from pages import ...`` (the app's folder is on ``sys.path`` while a page runs). Everything
here is presentation: which run or record is open, how an error is shown, how a duration reads.
The work itself is always a call into :mod:`privgame`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from privgame.errors import PrivgameError
from privgame.store import RunFolder, RunInfo, default_runs_root, list_runs, open_run

__all__ = [
    "PAGES",
    "RECORD_KEY",
    "RUN_KEY",
    "duration",
    "guarded",
    "open_record",
    "open_run_page",
    "run_label",
    "runs",
    "runs_root",
    "select_run",
    "show_error",
    "show_problems",
    "threshold_slider",
    "when",
]

PAGES: dict[str, str] = {
    "data": "pages/1_Data.py",
    "evaluate": "pages/2_Evaluate.py",
    "results": "pages/3_Results.py",
    "record": "pages/4_Record.py",
    "runs": "pages/5_Runs.py",
    "export": "pages/6_Export.py",
    "studies": "pages/7_Studies.py",
}
"""Every page but the home page (a function of ``app.py``), by a short name, as the path
``st.switch_page`` and ``st.page_link`` take."""

RUN_KEY = "run_id"
RECORD_KEY = "record_id"


def runs_root() -> Path:
    """The folder that holds the run folders (``$PRIVGAME_RUNS``, else ``./runs``)."""
    return default_runs_root()


def show_error(error: BaseException) -> None:
    """Show ``error`` as a message: its summary and every problem it lists, never a traceback."""
    if isinstance(error, PrivgameError):
        lines = [error.summary]
        lines += [f"- {problem}" for problem in error.problems]
        st.error("\n".join(lines))
    elif isinstance(error, (ValueError, OSError, KeyError)):
        st.error(str(error) or type(error).__name__)
    else:
        st.error(
            f"Something went wrong: {type(error).__name__}: {error}. "
            "If it happens again, run the same step with the command line (python -m privgame) "
            "to see the details."
        )


def show_problems(summary: str, problems: Sequence[str]) -> None:
    """Show a summary and a list of problems as one error message."""
    st.error("\n".join([summary, *(f"- {p}" for p in problems)]))


def _use_the_router() -> None:
    """Rerun through ``app.py`` when Streamlit ran a page without it.

    A Streamlit server whose first visitor opens a page's address directly (a bookmark of
    ``/Results``) runs that page the old way, as a file of the ``pages/`` folder, without
    ``app.py``'s ``st.navigation``: no wide layout, no page titles. Streamlit has no public switch
    for this, so clear its flag and rerun; the rerun goes through ``app.py`` to the same page.
    A server needs this once; Streamlit's AppTest sets the flag again before every run, so a
    session reruns at most once (a second rerun would swallow the button click being tested).
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without the old pages mode
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        if not st.session_state.get("_routed"):
            st.session_state["_routed"] = True
            st.rerun()


def guarded(body: Callable[[], None]) -> None:
    """Run a page's body and show any error as a message.

    Streamlit's own control flow (``st.rerun``, ``st.switch_page``, ``st.stop``) raises
    exceptions that are not :class:`Exception` subclasses, so they pass through untouched.
    """
    _use_the_router()
    try:
        body()
    except Exception as error:
        show_error(error)


def when(timestamp: float | None) -> str:
    """A local date and time for a Unix timestamp, e.g. ``2026-11-30 10:15``."""
    if not timestamp:
        return "—"
    return dt.datetime.fromtimestamp(float(timestamp)).strftime("%Y-%m-%d %H:%M")


def duration(seconds: float | None) -> str:
    """A duration for people: ``45 s``, ``12 min``, ``3 h 20 min``."""
    if seconds is None:
        return "—"
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{minutes:.0f} min"
    hours, rest = divmod(round(minutes), 60)
    return f"{hours} h {rest} min"


def run_label(info: RunInfo) -> str:
    """How a run reads in a list: id, data, generator, state."""
    return f"{info.run_id} · {info.data_name} · {info.generator} · {info.state}"


def runs(states: Sequence[str] | None = None) -> list[RunInfo]:
    """Every run under the runs root, newest first, optionally only those in ``states``."""
    found = list_runs(runs_root())
    if states is None:
        return found
    return [info for info in found if info.state in states]


def _wanted_run() -> str | None:
    """The run the user last opened: from the address bar, else from this session."""
    from_url = st.query_params.get("run")
    return from_url or st.session_state.get(RUN_KEY)


def select_run(
    label: str, *, states: Sequence[str] | None = ("done",), key: str = "run_picker"
) -> RunFolder | None:
    """A select box of runs; returns the chosen run (remembered for the other pages).

    Returns None, after saying why, when there is no run to choose.
    """
    choices = runs(states)
    if not choices:
        wanted = "finished runs" if states == ("done",) else "runs"
        st.info(f"There are no {wanted} in {runs_root()} yet.")
        st.page_link(
            PAGES["evaluate"], label="Start a run on the Evaluate page", icon=":material/play_arrow:"
        )
        return None
    ids = [info.run_id for info in choices]
    by_id = {info.run_id: info for info in choices}
    wanted = _wanted_run()
    index = ids.index(wanted) if wanted in ids else 0
    run_id = st.selectbox(label, ids, index=index, key=key, format_func=lambda rid: run_label(by_id[rid]))
    if run_id != st.session_state.get(RUN_KEY):
        st.session_state.pop(RECORD_KEY, None)
    st.session_state[RUN_KEY] = run_id
    st.query_params["run"] = run_id
    return open_run(runs_root(), run_id)


def threshold_slider(folder: RunFolder, *, key: str, help: str | None = None) -> float:
    """The high-risk threshold t for ``folder``'s run, starting at the run's own threshold."""
    return float(
        st.slider(
            "High-risk threshold t",
            min_value=0.5,
            max_value=1.0,
            value=float(folder.spec().threshold),
            step=0.01,
            key=f"{key}-{folder.run_id}",
            help=help,
        )
    )


def open_run_page(page: str, run_id: str) -> None:
    """Remember ``run_id`` and go to ``page`` (a key of :data:`PAGES`)."""
    st.session_state[RUN_KEY] = run_id
    st.switch_page(PAGES[page], query_params={"run": run_id})


def open_record(run_id: str, record_id: int) -> None:
    """Remember the run and record and go to the Record page."""
    st.session_state[RUN_KEY] = run_id
    st.session_state[RECORD_KEY] = int(record_id)
    st.switch_page(PAGES["record"], query_params={"run": run_id, "record": str(int(record_id))})
