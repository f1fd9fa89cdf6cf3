"""Pieces shared by the dashboard pages.

Streamlit never lists ``__init__.py`` as a page, so the pages import these helpers with
``from pages import ...`` (the app's folder is on ``sys.path`` while a page runs). Everything
here is presentation: which run or record is open, how an error is shown, how a duration reads.
The work itself is always a call into :mod:`privgame`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from privgame.core.errors import PrivgameError
from privgame.service import (
    DEFAULT_HOLDOUT,
    AuditInputs,
    Dataset,
    Option,
    RunFolder,
    RunInfo,
    default_runs_root,
    list_runs,
    open_run,
    paper_inputs,
    release_inputs,
    threshold_guide,
)

__all__ = [
    "PAGES",
    "RECORD_KEY",
    "RUN_KEY",
    "SETUP_KEY",
    "THRESHOLD_KEY",
    "audit_inputs",
    "current_threshold",
    "duration",
    "guarded",
    "keep",
    "open_record",
    "open_run_page",
    "option_input",
    "plain",
    "run_label",
    "run_state",
    "runs",
    "runs_root",
    "select_run",
    "show_error",
    "show_problems",
    "show_setup",
    "show_threshold_guide",
    "show_verdict",
    "threshold_slider",
    "utility_inputs",
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
    "release": "pages/8_Release.py",
    "remedies": "pages/9_Remedies.py",
    "check_file": "pages/10_Check_file.py",
}
"""Every page but the home page (a function of ``app.py``), by a short name, as the path
``st.switch_page`` and ``st.page_link`` take."""

RUN_KEY = "run_id"
RECORD_KEY = "record_id"
SETUP_KEY = "setup"
"""Session key of the set-up chosen on the Data page, a dict read by :func:`audit_inputs`:
``{"kind": "paper", "sizes": Sizes}`` or ``{"kind": "release", "population": Dataset or None,
"holdout": 0.3 or 5000, "aux_rows": int or None, "shadow_size": int or None}``."""

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&])")


def plain(text: Any) -> str:
    """``text`` escaped for Streamlit's Markdown, so that it shows exactly as written.

    Use it for every text that holds something from the data (a file name, a column name, a
    value) and must go through ``st.markdown``, ``st.info`` and the like: a backslash before every
    punctuation mark Markdown (or Streamlit's ``:emoji:``, ``:color[...]`` and ``$math$``) reads.
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", "  \n")


KEPT_KEY = "_kept"


def keep(
    key: str,
    default: Any,
    *,
    options: Sequence[Any] | None = None,
    low: float | None = None,
    high: float | None = None,
) -> None:
    """Let the widget ``key`` keep its value when the user leaves the page and comes back.

    Streamlit forgets a widget's value once a page without it runs. Call this just before
    creating the widget, and give the widget no ``value``/``index`` of its own: its value then
    comes from the session, starting at ``default``. A kept value that no longer fits the widget
    (an option gone, a number beyond ``low``/``high`` after the data changed) is replaced by
    ``default``.
    """
    store: dict[str, Any] = st.session_state.setdefault(KEPT_KEY, {})
    if key in st.session_state:
        store[key] = st.session_state[key]
        return
    value = store.get(key, default)
    fits = (
        (options is None or value in options)
        and (low is None or (value is not None and value >= low))
        and (high is None or (value is not None and value <= high))
    )
    st.session_state[key] = value if fits else default


def option_input(
    option: Option,
    key: str,
    where: Any = None,
    *,
    default: Any = None,
    infinite_key: str | None = None,
    infinite_label: str = "ε = ∞ (no noise)",
    disabled: bool = False,
) -> Any:
    """The widget of a declared option (:mod:`privgame.core.options`), with its label, help, range
    and default (``default`` replaces the declared one), kept across pages (:func:`keep`); its value.

    ``where`` is the container (a column; None: the page). An ``epsilon`` option adds a checkbox
    for infinity (no noise) under ``infinite_key`` (default: ``key`` + ``"_inf"``). ``disabled``
    greys a number's widget out.
    """
    where = st if where is None else where
    value = option.default if default is None else default
    if option.kind == "choice":
        keep(key, value, options=list(option.choices))
        return where.selectbox(
            option.label,
            list(option.choices),
            key=key,
            help=option.help,
            format_func=lambda choice: choice.replace("_", " "),
        )
    if option.kind == "epsilon":
        inf_key = infinite_key or f"{key}_inf"
        keep(inf_key, False)
        no_noise = where.checkbox(infinite_label, key=inf_key)
        keep(key, float(value), low=_EPSILON_LEAST)
        number = where.number_input(
            option.label,
            min_value=_EPSILON_LEAST,
            format="%.3f",
            disabled=no_noise,
            key=key,
            help=option.help,
        )
        return math.inf if no_noise else float(number)
    whole = option.kind == "int"
    low = option.low
    if low is not None and option.open_low:
        low = low + 1 if whole else low + _OPEN_END
    # A setting with a rule of its own (N_shadow's hard limit) says why a value is refused, so its
    # widget takes any value and the rule's message shows; the others are bounded by their range.
    high = option.page_high if option.page_high is not None else None if option.ruled_by else option.high
    if high is not None and option.open_high and option.page_high is None:
        high = high - 1 if whole else high - _OPEN_END
    cast = int if whole else float
    keep(key, cast(value), low=low, high=high)
    number = where.number_input(
        option.label,
        min_value=None if low is None else cast(low),
        max_value=None if high is None else cast(high),
        step=cast(option.page_step) if option.page_step else 1 if whole else None,
        format=option.page_format,
        key=key,
        help=option.help,
        disabled=disabled,
    )
    return cast(number)


_EPSILON_LEAST = 0.001
_OPEN_END = 1e-15


def runs_root() -> Path:
    """The folder that holds the run folders (``$PRIVGAME_RUNS``, else ``./runs``)."""
    return default_runs_root()


def show_error(error: BaseException) -> None:
    """Show ``error`` as a message: its summary and every problem it lists, never a traceback."""
    if isinstance(error, PrivgameError):
        # Messages name files, columns and plug-ins: shown as text, never as markup.
        lines = [plain(error.summary)]
        lines += [f"- {plain(problem)}" for problem in error.problems]
        st.error("\n".join(lines))
    elif isinstance(error, (ValueError, OSError, KeyError)):
        st.error(plain(str(error) or type(error).__name__))
    else:
        st.error(
            f"Something went wrong: {type(error).__name__}: {error}. "
            "If it happens again, run the same step with the command line (python -m privgame) "
            "to see the details."
        )


def show_setup(lines: Sequence[str]) -> None:
    """The sentences that say what a run audits (:func:`privgame.games.audit.describe_setup`).

    The first says where D and the population come from; the others are caveats, shown smaller.
    """
    if not lines:
        return
    with st.container(border=True):
        st.markdown(plain(lines[0]))
        for line in lines[1:]:
            st.caption(plain(line))


def show_verdict(summary: Mapping[str, Any]) -> None:
    """The release's one-sentence answer (:func:`privgame.outputs.release.verdict_text` of a run summary).

    A warning when a record is at risk, a note when some are undecided or an attack failed, else
    a success.
    """
    from privgame.service import verdict_text

    answer = summary.get("answer") or {}
    counts = answer.get("counts") or {"at risk": summary.get("at_risk_model_seeded") or 0}
    unsure = counts.get("undecided") or counts.get("attack failed")
    show = st.warning if counts.get("at risk") else st.info if unsure else st.success
    show(f"**Verdict.** {plain(verdict_text(summary))}")
    if summary.get("set_level"):
        st.caption(plain(str(summary["set_level"]["text"])))
    if counts.get("undecided"):
        st.caption(
            "A record is at risk when the 95% interval of its model-seeded risk lies above t, not at "
            "risk when it lies at or below t, and undecided otherwise. More evaluation runs decide "
            "the undecided records: python -m privgame extend RUN_DIR --n-eval N. Each look at a "
            "verdict spends part of the 5% error, so the verdicts stay sound however often runs are "
            "added."
        )
    if counts.get("attack failed"):
        st.caption(
            "Where the attack failed, its interval lies at or below 0.5: it did no better than a "
            "coin, which says nothing of those records' safety, so they are not counted as safe. "
            "Try the stronger attacker (leave-one-out, who knows every other record) or more shadow "
            "datasets."
        )


def audit_inputs(dataset: Dataset, setup: Mapping[str, Any], seed: int) -> AuditInputs:
    """The run's table, schema, sizes and set-up for the set-up chosen on the Data page.

    The same calls, with the same defaults, as ``python -m privgame run`` makes for
    ``--setup paper --aux-size A --eval-size E --size T`` or for the release set-up's
    ``--population``, ``--holdout``, ``--aux-size`` and ``--shadow-size``.

    Remembered for this session while the table, its schema, the set-up and the seed stay the same
    (a release set-up fingerprints D and the population: most of a second on Adult).
    """
    population = setup.get("population")
    sizes = setup.get("sizes")
    key = json.dumps(
        [
            dataset.fingerprint,
            hashlib.blake2b(repr(dataset.schema.to_dict()).encode()).hexdigest(),
            {k: v for k, v in setup.items() if k not in ("population", "sizes")},
            None if sizes is None else sizes.to_dict(),
            None
            if population is None
            else [
                population.fingerprint,
                population.source_name,
                hashlib.blake2b(repr(population.schema.to_dict()).encode()).hexdigest(),
            ],
            int(seed),
        ],
        sort_keys=True,
    )
    memo: dict[str, AuditInputs] = st.session_state.setdefault("_audit_inputs", {})
    if key not in memo:
        if len(memo) > 8:
            memo.clear()
        memo[key] = _audit_inputs(dataset, setup, seed)
    return memo[key]


def _audit_inputs(dataset: Dataset, setup: Mapping[str, Any], seed: int) -> AuditInputs:
    if setup["kind"] == "paper":
        sizes = setup["sizes"]
        return paper_inputs(dataset, size=sizes.target, aux=sizes.aux, eval_size=sizes.eval)
    holdout = setup.get("holdout")
    return release_inputs(
        dataset,
        seed=seed,
        population=setup.get("population"),
        holdout=DEFAULT_HOLDOUT if holdout is None else holdout,
        aux_rows=setup.get("aux_rows"),
        shadow_size=setup.get("shadow_size"),
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


# The modules the Evaluate page needs beyond the others (the engine, the attack's scikit-learn,
# the generators): seconds to import on a busy machine.
_WARM_MODULES = (
    "privgame.games.engine",
    "privgame.games.estimate",
    "privgame.generators",
    "privgame.runs.background",
)
_warm_started = threading.Event()


def warm_up() -> None:
    """Import the Evaluate page's modules in the background, once per server process.

    The first visit to Evaluate would otherwise import them while the user waits for the Launch
    button; started from the router on the first page the user opens, the import is done by the
    time they have chosen their data.
    """
    if _warm_started.is_set():
        return
    _warm_started.set()

    def work() -> None:
        for name in _WARM_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # the page imports it again and shows the error there
                return

    threading.Thread(target=work, name="privgame-warm-up", daemon=True).start()


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


def run_state(state: str, folder: RunFolder) -> str:
    """A run's ``state`` as the pages show it: an unfinished run whose cancel was requested is
    ``stopping`` until its engine has stopped (then ``cancelled``)."""
    if state in ("created", "queued", "running") and folder.cancel_requested():
        return "stopping"
    return state


def run_label(info: RunInfo) -> str:
    """How a run reads in a list: id, data, generator, state."""
    return (
        f"{info.run_id} · {info.data_name} · {info.generator} · {run_state(info.state, RunFolder(info.path))}"
    )


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


def _being_extended(info: RunInfo) -> bool:
    """A finished run that is getting more evaluation runs (its results of before still stand)."""
    return info.state in ("queued", "running") and RunFolder(info.path).has_results()


def select_run(
    label: str,
    *,
    states: Sequence[str] | None = ("done",),
    key: str = "run_picker",
    extending: bool = False,
) -> RunFolder | None:
    """A select box of runs; returns the chosen run (remembered for the other pages).

    With ``extending``, finished runs that are getting more evaluation runs are listed too.
    Returns None, after saying why, when there is no run to choose.
    """
    choices = runs(states)
    if extending and states is not None:
        choices = [info for info in runs() if info.state in states or _being_extended(info)]
    if not choices:
        wanted = "finished runs" if states == ("done",) else "runs"
        going = [info for info in runs() if info.state in ("created", "queued", "running")]
        if going and states == ("done",):
            first = going[0]
            st.info(
                f"No run has finished yet: {plain(first.run_id)} is under way ({first.progress:.0%} of its "
                "generator fits). Its results appear here when it ends."
                + (f" {len(going) - 1} other run(s) are under way too." if len(going) > 1 else "")
            )
            st.page_link(PAGES["evaluate"], label="Follow it on the Evaluate page", icon=":material/pace:")
            return None
        st.info(f"There are no {wanted} in {plain(runs_root())} yet.")
        st.page_link(
            PAGES["evaluate"], label="Start a run on the Evaluate page", icon=":material/play_arrow:"
        )
        return None
    ids = [info.run_id for info in choices]
    by_id = {info.run_id: info for info in choices}
    wanted = _wanted_run()
    index = ids.index(wanted) if wanted in ids else 0
    run_id = st.selectbox(label, ids, index=index, key=key, format_func=lambda rid: run_label(by_id[rid]))
    previous = st.session_state.get(RUN_KEY)
    if run_id != previous:
        st.session_state.pop(RECORD_KEY, None)
        if previous is not None:
            st.query_params.pop("t", None)  # the address's t was the other run's
    st.session_state[RUN_KEY] = run_id
    st.query_params["run"] = run_id
    return open_run(runs_root(), run_id)


THRESHOLD_KEY = "_thresholds"
"""Session key of the high-risk threshold t chosen for each run ({run id: t}): one setting that
the Results, Record, Export and Release pages share, and that the address bar carries (``t=``)."""


T_LEAST, T_MOST = 0.51, 0.99
"""The sliders' range of t: strictly between 0.5 (a coin toss) and 1, as every face requires."""


def _clamp_threshold(value: Any) -> float | None:
    """``value`` as a slider position in [0.51, 0.99] (t lies strictly between 0.5 and 1) to two
    decimals, or None when it is not a number."""
    try:
        t = float(value)
    except (TypeError, ValueError):
        return None
    if t != t:  # nan
        return None
    return round(min(T_MOST, max(T_LEAST, t)), 2)


def current_threshold(folder: RunFolder) -> float:
    """The threshold t in force for ``folder``'s run: the one chosen on any page in this session,
    else the address bar's ``t=`` (a shared link), else the run's own."""
    chosen: dict[str, float] = st.session_state.setdefault(THRESHOLD_KEY, {})
    if folder.run_id in chosen:
        return chosen[folder.run_id]
    from_url = _clamp_threshold(st.query_params.get("t"))
    t = from_url if from_url is not None else _clamp_threshold(folder.spec().threshold) or 0.8
    chosen[folder.run_id] = t
    return t


def _remember_threshold(run_id: str, widget: str) -> None:
    st.session_state.setdefault(THRESHOLD_KEY, {})[run_id] = float(st.session_state[widget])


def threshold_slider(folder: RunFolder, *, key: str, help: str | None = None) -> float:
    """The high-risk threshold t for ``folder``'s run: one setting shared by every page.

    Starts at :func:`current_threshold`; moving it on one page moves it on the others, and the
    address bar's ``t=`` follows it, so a copied link opens the page at the same t.
    """
    t = current_threshold(folder)
    widget = f"{key}-{folder.run_id}"
    st.session_state[widget] = t
    value = st.slider(
        "High-risk threshold t",
        min_value=T_LEAST,
        max_value=T_MOST,
        step=0.01,
        key=widget,
        help=(help + " " if help else "")
        + f"One setting for the Results, Record, Export and Release pages; the run's own is "
        f"{folder.spec().threshold:g}.",
        on_change=_remember_threshold,
        args=(folder.run_id, widget),
    )
    st.query_params["t"] = f"{float(value):g}"
    return float(value)


def show_threshold_guide(t: float) -> None:
    """What the threshold t means for an attacker (:func:`privgame.games.audit.threshold_guide`), folded."""
    guide = threshold_guide(t)
    with st.expander(f"What does t = {t:g} mean?", icon=":material/help:"):
        st.markdown(plain(guide["text"]))
        st.dataframe(
            pd.DataFrame(guide["rows"]),
            hide_index=True,
            column_config={
                "t": st.column_config.NumberColumn("t (risk, AUC)", format="%.2f"),
                "tpr_at_fpr_0.01": st.column_config.NumberColumn(
                    "picked out at 1% false alarms", format="percent"
                ),
                "tpr_at_fpr_0.1": st.column_config.NumberColumn(
                    "picked out at 10% false alarms", format="percent"
                ),
                "precision_at_fpr_0.01": st.column_config.NumberColumn(
                    "right when it acts, at 1% false alarms", format="percent"
                ),
            },
        )
        st.caption(
            "For a record whose risk is exactly t, in the equal-variance binormal model of the attack's "
            "scores; each audited record's own rates at 1% and 10% false alarms are in its row of the "
            "records table."
        )


def open_run_page(page: str, run_id: str) -> None:
    """Remember ``run_id`` and go to ``page`` (a key of :data:`PAGES`)."""
    st.session_state[RUN_KEY] = run_id
    st.switch_page(PAGES[page], query_params=_with_threshold(run_id, {"run": run_id}))


def _with_threshold(run_id: str, params: dict[str, str]) -> dict[str, str]:
    t = st.session_state.get(THRESHOLD_KEY, {}).get(run_id)
    return params if t is None else params | {"t": f"{t:g}"}


def open_record(run_id: str, record_id: int) -> None:
    """Remember the run and record and go to the Record page (at the same threshold t)."""
    st.session_state[RUN_KEY] = run_id
    st.session_state[RECORD_KEY] = int(record_id)
    st.switch_page(
        PAGES["record"], query_params=_with_threshold(run_id, {"run": run_id, "record": str(int(record_id))})
    )


def utility_inputs(names: Sequence[str], current: str | None, *, key: str, help: str) -> tuple[str, int]:
    """The column the downstream model predicts and the number of synthetic samples, side by side.

    ``current`` is selected first when it is one of ``names``; ``key`` prefixes both widgets' keys.
    Returns what ``python -m privgame utility`` takes as ``--target-column`` and ``--samples``.
    """
    from privgame.service import DEFAULT_SAMPLES, MAX_SAMPLES

    cols = st.columns(2)
    target = cols[0].selectbox(
        "Column the downstream model predicts",
        list(names),
        index=list(names).index(current) if current in names else 0,
        key=f"{key}-target",
        help=help,
    )
    samples = cols[1].number_input(
        "Synthetic samples",
        min_value=2,
        max_value=MAX_SAMPLES,
        value=DEFAULT_SAMPLES,
        key=f"{key}-samples",
        help="Each figure is the mean ± sd over this many fresh synthetic samples of the generator.",
    )
    return str(target), int(samples)
