"""Evaluate: choose the generator, the records and the attack; see the cost; launch; follow it.

The form builds a frozen :class:`privgame.spec.RunSpec` (validated by the spec itself). Before
launching, the page shows the plan (:func:`privgame.games.engine.plan_summary`) and the time
:func:`privgame.estimate.estimate_seconds` expects on this machine. Launch writes the run folder
(:func:`privgame.store.create_run`) and starts the engine in a background process
(:func:`privgame.background.launch`), so closing the browser does not stop it; the page follows
every unfinished run through its ``status.json``.
"""

from __future__ import annotations

import inspect
import json
import math
from typing import Any

import streamlit as st

from pages import PAGES, duration, guarded, open_run_page, runs, runs_root, show_error
from privgame.background import launch
from privgame.data import Sizes, split_indices
from privgame.errors import PrivgameError
from privgame.estimate import Calibration, calibrate, estimate_seconds
from privgame.execution import default_workers, scheduler_address
from privgame.games.engine import build_context, plan_summary
from privgame.generators import GENERATORS, available
from privgame.spec import AttackSettings, RunSpec, TargetSelection
from privgame.store import create_run, open_run

ACTIVE = ("created", "queued", "running")
TARGET_MODES = {
    "random": "k random records of D",
    "outliers": "the k most outlying records of D",
    "all": "every record of D",
    "ids": "records I pick",
}
PARAM_HELP = {
    "min_samples_leaf": (
        "Fewest training records in a leaf of each CART tree; smaller leaves copy the data more closely."
    ),
    "degree": "Most parents of each column in the Bayesian network (k).",
    "bins": "Equal-width bins per continuous column.",
    "epsilon": "Privacy budget ε of PrivBayes; smaller is more private.",
}


def _default(name: str, param: str) -> Any:
    """The generator's own default for a parameter (read from its constructor)."""
    return inspect.signature(GENERATORS[name].__init__).parameters[param].default


def _generator() -> tuple[str, dict[str, Any]]:
    names = available()
    default = names.index("synthpop") if "synthpop" in names else 0
    name = st.selectbox(
        "Synthetic data generator",
        names,
        index=default,
        key="generator",
        format_func=lambda n: GENERATORS[n].label or n,
    )
    if GENERATORS[name].leaks_training_data:
        st.warning(
            f"{GENERATORS[name].label}: this generator releases its training data unchanged. It "
            "exists to test privgame itself; every record is at maximal risk."
        )
    params: dict[str, Any] = {}
    signature = inspect.signature(GENERATORS[name].__init__).parameters
    cols = st.columns(3)
    if "min_samples_leaf" in signature:
        params["min_samples_leaf"] = int(
            cols[0].number_input(
                "Records per leaf (min_samples_leaf)",
                min_value=1,
                value=int(_default(name, "min_samples_leaf")),
                key=f"{name}_min_samples_leaf",
                help=PARAM_HELP["min_samples_leaf"],
            )
        )
    if "degree" in signature:
        params["degree"] = int(
            cols[0].number_input(
                "Parents per column (degree k)",
                min_value=0,
                max_value=6,
                value=int(_default(name, "degree")),
                key=f"{name}_degree",
                help=PARAM_HELP["degree"],
            )
        )
    if "bins" in signature:
        params["bins"] = int(
            cols[1].number_input(
                "Bins per continuous column",
                min_value=2,
                value=int(_default(name, "bins")),
                key=f"{name}_bins",
                help=PARAM_HELP["bins"],
            )
        )
    if "epsilon" in signature:
        with cols[2]:
            no_noise = st.checkbox("ε = ∞ (no noise: the same as Baynet)", key=f"{name}_inf")
            epsilon = st.number_input(
                "Privacy budget ε",
                min_value=0.001,
                value=float(_default(name, "epsilon")),
                format="%.3f",
                disabled=no_noise,
                key=f"{name}_epsilon",
                help=PARAM_HELP["epsilon"],
            )
        params["epsilon"] = math.inf if no_noise else float(epsilon)
        dataset = st.session_state.get("dataset")
        public = bool(dataset is not None and dataset.schema.domain_public)
        st.info(
            "PrivBayes' differential-privacy guarantee holds only when the domain of every column "
            "(its categories, or its lower and upper bounds) is public knowledge, not read off the "
            "data. "
            + (
                "This table's domain was declared, so the guarantee can hold."
                if public
                else "Here the domain was read off the data, so ε describes the noise added, not a guarantee."
            )
        )
    return name, params


def _targets_and_seed(n_rows: int, sizes: Sizes) -> tuple[TargetSelection, int]:
    mode = st.radio(
        "Which records of D to evaluate",
        list(TARGET_MODES),
        format_func=TARGET_MODES.__getitem__,
        horizontal=True,
        key="target_mode",
    )
    detail, seed_column = st.columns([3, 1])
    seed = int(
        seed_column.number_input(
            "Seed",
            min_value=0,
            value=0,
            step=1,
            key="seed",
            help="The root of every random choice: the same seed gives the same results.",
        )
    )
    with detail:
        if mode in ("random", "outliers"):
            k = st.number_input(
                "Number of records k",
                min_value=1,
                max_value=sizes.target,
                value=min(20, sizes.target),
                key="target_k",
            )
            return TargetSelection(mode=mode, k=int(k)), seed
        if mode == "all":
            st.markdown(f"All **{sizes.target:,}** records of D.")
            return TargetSelection(mode="all", k=None), seed
        # D depends on the seed: the split is a pure function of (rows, sizes, seed).
        members = split_indices(n_rows, sizes, seed).target
        ids = st.multiselect(
            "Record ids (row numbers of the prepared table); only records of D can be chosen",
            sorted(int(i) for i in members),
            key="target_ids",
        )
        return TargetSelection(mode="ids", k=None, ids=tuple(int(i) for i in ids)), seed


def _ms(seconds: float) -> str:
    milliseconds = seconds * 1000
    return f"{milliseconds:.2g} ms" if milliseconds < 10 else f"{milliseconds:,.0f} ms"


def _calibration(spec: RunSpec, table: Any) -> Calibration:
    """Time the generator once per set of inputs that changes its cost, for this session."""
    key = json.dumps(
        [
            spec.data_fingerprint,
            spec.generator,
            spec.to_dict()["generator_params"],
            spec.sizes,
            spec.attack.n_shadow,
            spec.attack.classifier,
            spec.seed,
        ],
        sort_keys=True,
    )
    memo: dict[str, Calibration] = st.session_state.setdefault("_calibrations", {})
    if key not in memo:
        with st.spinner("Timing the generator on this machine…"):
            memo[key] = calibrate(spec, table)
    return memo[key]


def _form() -> None:
    dataset = st.session_state.get("dataset")
    sizes: Sizes | None = st.session_state.get("sizes")
    if dataset is None or sizes is None:
        st.info("Choose the data first: the Data page loads the table and sets the sizes.")
        st.page_link(PAGES["data"], label="Go to the Data page", icon=":material/table_view:")
        return
    st.caption(
        f"Data: {dataset.source_name}, {len(dataset.table):,} rows; D_aux {sizes.aux:,}, "
        f"D_eval {sizes.eval:,}, D {sizes.target:,}."
    )

    st.subheader("Generator")
    generator, params = _generator()

    st.subheader("Records and attack")
    cols = st.columns(4)
    threshold = cols[0].slider(
        "High-risk threshold t",
        min_value=0.5,
        max_value=1.0,
        value=0.8,
        step=0.01,
        key="threshold",
        help="A record is at risk when its risk (the attack's AUC) is above t.",
    )
    n_shadow = cols[1].number_input(
        "Shadow datasets N_shadow",
        min_value=4,
        value=AttackSettings.n_shadow,
        step=2,
        key="n_shadow",
        help="Synthetic datasets the attacker trains on, half with the target record.",
    )
    n_eval = cols[2].number_input(
        "Evaluation runs N_eval",
        min_value=4,
        value=AttackSettings.n_eval,
        step=2,
        key="n_eval",
        help="Runs of each privacy game per record, half with the target record.",
    )
    classifier = cols[3].selectbox(
        "Meta-classifier",
        ["random_forest", "logistic"],
        key="classifier",
        format_func=lambda c: c.replace("_", " "),
    )
    targets, seed = _targets_and_seed(len(dataset.table), sizes)

    st.subheader("Execution")
    cols = st.columns(2)
    workers = int(
        cols[0].number_input(
            "Worker processes",
            min_value=1,
            max_value=256,
            value=default_workers(),
            key="workers",
            help="How many cores the run may use; it never changes the results.",
        )
    )
    address = cols[1].text_input(
        "Dask scheduler (optional)",
        key="scheduler",
        placeholder="tcp://host:8786",
        help="Run the work on a Dask cluster instead of this machine.",
    )

    try:
        scheduler = scheduler_address(address.strip() or None)
        spec = RunSpec(
            data_name=dataset.source_name,
            data_fingerprint=dataset.fingerprint,
            schema=dataset.schema.to_dict(),
            sizes=sizes.to_dict(),
            generator=generator,
            generator_params=params,
            attack=AttackSettings(n_shadow=int(n_shadow), n_eval=int(n_eval), classifier=classifier),
            targets=targets,
            threshold=float(threshold),
            seed=seed,
        ).validate()
        _, target_ids = build_context(spec, dataset.table)
        plan = plan_summary(spec, len(target_ids))
    except PrivgameError as error:
        show_error(error)
        return

    st.subheader("Cost")
    try:
        calibration = _calibration(spec, dataset.table)
        seconds = estimate_seconds(spec, dataset.table, workers=workers, calibration=calibration)
        where = f"on the Dask cluster at {scheduler}" if scheduler else f"with {workers} worker process(es)"
        st.info(
            f"{plan['text']}  \nEstimated time: **about {duration(seconds)}** {where} (one fit and "
            f"sample of {sizes.target:,} rows takes {_ms(calibration.fit_sample)} here)."
        )
    except PrivgameError as error:
        show_error(error)
        return

    if st.button("Launch the audit", type="primary", key="launch"):
        folder = create_run(runs_root(), spec, dataset.table)
        launch(folder, workers=workers, scheduler=scheduler)
        st.session_state["run_id"] = folder.run_id
        st.session_state["launched"] = folder.run_id
        st.rerun()


@st.fragment(run_every=1)
def _follow(run_id: str) -> None:
    """One run's progress, refreshed every second until it ends."""
    guarded(lambda: _show_run(run_id))


def _show_run(run_id: str) -> None:
    folder = open_run(runs_root(), run_id)
    status = folder.status()
    state = status.get("state", "created")
    st.markdown(f"`{run_id}` · {folder.spec().data_name} · {folder.spec().generator} · **{state}**")
    if state in ACTIVE:
        done, total = int(status.get("fits_done") or 0), int(status.get("fits_total") or 0)
        fraction = done / total if total else 0.0
        eta = status.get("eta")
        text = (
            f"{done:,} of {total:,} generator fits · units {status.get('done_units') or 0}/"
            f"{status.get('total_units') or '?'} · time left "
            f"{duration(eta) if eta is not None else 'being measured'}"
            if total
            else "starting…"
        )
        st.progress(min(1.0, fraction), text=text)
        cols = st.columns([1, 4])
        if folder.cancel_requested():
            cols[0].caption("Cancel requested: stopping after the units in flight.")
        elif cols[0].button("Cancel", key=f"cancel-{run_id}"):
            folder.request_cancel()
            st.toast("Cancel requested; the run stops after the units in flight.")
        if folder.status_is_stale():
            st.warning("The engine process of this run is gone; it can be resumed from its checkpoints.")
            if cols[1].button("Resume", key=f"resume-stale-{run_id}"):
                launch(folder)
        return
    finished: set[str] = st.session_state.setdefault("_finished", set())
    if run_id not in finished:
        finished.add(run_id)
        st.rerun()  # redraw the whole page once, now that the run has ended
    if state == "done":
        st.success(f"Done in {duration(status.get('seconds'))}.")
        if st.button("Open the results", key=f"open-{run_id}", type="primary"):
            open_run_page("results", run_id)
    elif state == "cancelled":
        st.warning("Cancelled. The finished work is kept: resume to complete the run.")
        if st.button("Resume", key=f"resume-{run_id}"):
            launch(folder)
            finished.discard(run_id)
            st.rerun()
    elif state == "failed":
        st.error(f"The run failed: {status.get('error') or 'see the engine log below'}")
        log = folder.path / "engine.log"
        if log.is_file():
            with st.expander("Engine log (last lines)"):
                st.code(log.read_text(errors="replace")[-3000:])


def _progress() -> None:
    every = runs()
    active = [info.run_id for info in every if info.state in ACTIVE]
    launched = st.session_state.get("launched")
    if launched not in {info.run_id for info in every}:
        launched = None  # deleted since
    shown = list(dict.fromkeys([*([launched] if launched else []), *active]))
    if not shown:
        return
    st.subheader("Progress")
    st.caption("Runs go on in the background when this page or the browser is closed.")
    for run_id in shown:
        with st.container(border=True):
            _follow(run_id)


def body() -> None:
    st.title("Evaluate")
    st.markdown(
        "Audit records of D: for each target record, train the attack and measure its risk in the "
        "model-seeded and the traditional privacy game."
    )
    _progress()
    _form()


guarded(body)
