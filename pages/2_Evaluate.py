"""Evaluate: choose the generator, the records and the attack; see what is audited and the cost;
launch; follow it.

The page reaches the package through :mod:`privgame.service`. The form makes the same
:class:`~privgame.games.request.AuditRequest` as ``python -m privgame run`` and the Python API, and
the one preparation (:func:`privgame.games.request.prepare_request`) turns it into the frozen run
spec, with the set-up chosen on the Data page (:func:`pages.audit_inputs`, kept for the session).
Before launching, the page says what will be audited (:func:`privgame.games.audit.describe_setup`),
shows the plan (:func:`privgame.games.context.plan_summary`) and the time
:func:`privgame.games.estimate.estimate_seconds` expects on this machine; a plug-in generator is first
run once on a few rows of D (:func:`privgame.service.check_plugin`, as the command line does).
Launch writes the run folder (:func:`privgame.games.preflight.create_run`, with the set-up's
table) and starts the engine in a background process (:func:`privgame.runs.background.launch_once`:
once, however often it is clicked, the same unfinished run being followed rather than doubled), so
closing the browser does not stop it; the page follows every unfinished run through its
``status.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from pages import (
    PAGES,
    SETUP_KEY,
    T_LEAST,
    T_MOST,
    audit_inputs,
    duration,
    guarded,
    keep,
    open_run_page,
    option_input,
    plain,
    runs,
    runs_root,
    show_error,
    show_setup,
    show_threshold_guide,
)
from privgame.core.errors import PrivgameError
from privgame.service import (
    ATTACKERS,
    CLASSIFIER,
    CONFIRM_TOP,
    DEFAULT_ATTACKER,
    GENERATORS,
    INFERENCE_THRESHOLD,
    N_EVAL,
    N_SHADOW,
    SCREEN,
    SEED,
    THRESHOLD,
    AuditInputs,
    AuditRequest,
    Calibration,
    Dataset,
    PlanStep,
    RunSpec,
    ScreenSettings,
    TargetSelection,
    attack_words,
    build_context,
    calibrate_once,
    check_cost,
    check_plugin,
    cost_warning,
    default_workers,
    describe_setup,
    estimate_seconds,
    for_n_shadow,
    generator_options,
    given_generator_params,
    installed_plugins,
    launch,
    launch_once,
    load_note,
    members_of,
    offered,
    open_run,
    parse_row_numbers,
    plan_for_budget,
    plan_rows,
    plan_summary,
    prepare_request,
    record_ids_for_rows,
    record_ids_for_values,
    resolve,
    resolve_attacks,
    scheduler_address,
    sensitive_columns,
    threat,
)

ACTIVE = ("created", "queued", "running")
PLAN_DEFAULT = TargetSelection.plan()
TARGET_MODES = {
    "plan": "the audit plan: the K most outlying + M random records of D (recommended)",
    "random": "k random records of D",
    "outliers": "the k most outlying records of D",
    "all": "every record of D",
    "ids": "records I pick",
}
# (Comments, not docstrings: Streamlit's magic would show a bare string of a page.)
# The generator picker's last option: a plug-in class named module.path:ClassName.
OTHER_PLUGIN = ":plugin-class:"


def _generator_label(name: str, plugins: Mapping[str, str]) -> str:
    if name in GENERATORS:
        return GENERATORS[name].label or name
    if name == OTHER_PLUGIN:
        return "Another plug-in class (module.path:ClassName)…"
    return f"{name} (plug-in, {plugins[name]})"


def _plugin(name: str) -> tuple[str, dict[str, Any]] | None:
    """A plug-in generator's name and parameters, read as the CLI reads ``--param KEY=VALUE``."""
    if name == OTHER_PLUGIN:
        name = st.text_input(
            "Plug-in class",
            key="plugin_class",
            placeholder="mypkg.gens:NoisyCopy",
            help="Any importable class with fit(X, schema, *, rng) and sample(n, *, rng); see "
            "docs/generators.md.",
        ).strip()
        if not name:
            st.info("Name the plug-in class as module.path:ClassName.")
            return None
    text = st.text_area(
        "Parameters, one KEY=VALUE per line (VALUE is read as JSON when it parses)",
        key="plugin_params",
        placeholder="jitter=0.1",
        height=80,
    )
    pairs = [line.strip() for line in text.splitlines() if line.strip()]
    params = given_generator_params(name, {}, pairs)
    if getattr(resolve(name), "leaks_training_data", False):
        st.warning("This plug-in says it releases its training data: every record is at maximal risk.")
    return name, params


def _generator() -> tuple[str, dict[str, Any]] | None:
    plugins = installed_plugins()
    names = [*offered(), *(n for n in sorted(plugins) if n not in GENERATORS), OTHER_PLUGIN]
    keep("generator", "synthpop" if "synthpop" in names else names[0], options=names)
    name = st.selectbox(
        "Synthetic data generator",
        names,
        key="generator",
        format_func=lambda n: _generator_label(n, plugins),
        help="The built-in generators, then the plug-ins installed here (entry points of the group "
        "privgame.generators).",
    )
    if name not in GENERATORS:
        return _plugin(name)
    if GENERATORS[name].leaks_training_data:
        st.warning(
            f"{GENERATORS[name].label}: this generator releases its training data unchanged. It "
            "exists to test privgame itself; every record is at maximal risk."
        )
    params: dict[str, Any] = {}
    options = generator_options(name)
    cols = st.columns(3)
    for i, option in enumerate(options):
        same = GENERATORS[name].without_noise
        params[option.name] = option_input(
            option,
            f"{name}_{option.name}",
            cols[i % 3],
            infinite_key=f"{name}_inf",
            infinite_label=f"ε = ∞ (no noise{': the same as ' + same if same else ''})",
        )
    if any(option.kind == "epsilon" for option in options):
        dataset = st.session_state.get("dataset")
        public = bool(dataset is not None and dataset.schema.domain_public)
        st.info(
            f"{GENERATORS[name].label.split(' (')[0]}'s differential-privacy guarantee holds only "
            "when the domain of every column "
            "(its categories, or its lower and upper bounds) is public knowledge, not read off the "
            "data. "
            + (
                "This table's domain was declared, so the guarantee can hold."
                if public
                else "Here the domain was read off the data, so ε describes the noise added, not a guarantee."
            )
        )
    return name, params


def _plan(n_d: int) -> dict[str, Any]:
    cols = st.columns(2)
    keep("plan_outliers", min(PLAN_DEFAULT.outliers, n_d), low=0, high=n_d)
    outliers = cols[0].number_input(
        "Most outlying records K",
        min_value=0,
        max_value=n_d,
        key="plan_outliers",
        help="The records of D that differ most from the others (Gower distance to their neighbours).",
    )
    keep("plan_random", min(PLAN_DEFAULT.random, n_d), low=0, high=n_d)
    random = cols[1].number_input(
        "Random records M",
        min_value=0,
        max_value=n_d,
        key="plan_random",
        help="A uniform random sample of D, drawn with the seed.",
    )
    st.markdown(
        "**The most outlying records are the unusual people** an attacker is likely to single out. "
        "They are picked for being unusual, so they say nothing about everyone else, and the "
        "riskiest record of an audit can still be a random one. **The random records are a fair "
        f"sample of D**: their verdicts bracket the share of all {n_d:,} records of D at risk, with "
        "95% confidence. The results keep the two groups apart."
    )
    return {"outliers": int(outliers), "random": int(random)}


PICK_WAYS = {
    "rows": "by the file's row number",
    "value": "by a column's value",
    "table": "by clicking rows in a table of D",
}
# The most rows of D the clickable table shows at once (search narrows it).
PICK_TABLE_ROWS = 2_000


def _d_table(dataset: Dataset, members: np.ndarray) -> pd.DataFrame:
    """D's records as the user knows them: the file's row number first, then every column."""
    rows = dataset.table.iloc[members]
    return pd.concat(
        [pd.DataFrame({"row of the file": dataset.file_rows()[members]}, index=rows.index), rows], axis=1
    )


def _pick_by_rows(dataset: Dataset, members: np.ndarray) -> tuple[int, ...]:
    text = st.text_input(
        "Row numbers of the file",
        key="target_rows",
        placeholder="3, 17, 120-125",
        help="1 is the first row after the header line, as a spreadsheet shows the data rows.",
    )
    if not text.strip():
        return ()
    rows = parse_row_numbers(text)
    n_file = len(dataset.table) + dataset.dropped_rows
    return record_ids_for_rows(rows, dataset.file_rows(), members, n_file_rows=n_file)


def _pick_by_value(dataset: Dataset, members: np.ndarray) -> tuple[int, ...]:
    excluded = [c.name for c in dataset.schema.columns if c.role == "excluded"]
    names = [*excluded, *(c for c in dataset.table.columns if c not in excluded)]
    keep("target_column", names[0], options=names)
    column = st.selectbox(
        "Column",
        names,
        key="target_column",
        help="The columns the generator does not use (identifiers) come first.",
    )
    values = dataset.table[column].iloc[members].astype(str)
    picked = st.multiselect(
        f"Values of {column} among the records of D",
        sorted(values.unique().tolist()),
        key=f"target_values:{column}",
    )
    return record_ids_for_values(dataset.table, column, picked, members) if picked else ()


def _pick_by_table(dataset: Dataset, members: np.ndarray) -> tuple[int, ...]:
    frame = _d_table(dataset, members)
    search = st.text_input(
        "Search D", key="target_search", placeholder="any value, e.g. P1042 or Lyon"
    ).strip()
    if search:
        text = frame.astype(str)
        hit = np.zeros(len(frame), dtype=bool)
        for column in text.columns:
            hit |= text[column].str.contains(search, case=False, regex=False).to_numpy()
        frame = frame[hit]
    shown = frame.head(PICK_TABLE_ROWS)
    st.caption(
        f"{len(frame):,} of {len(members):,} records of D"
        + (
            f"; the first {PICK_TABLE_ROWS:,} are shown, search to narrow them"
            if len(frame) > len(shown)
            else ""
        )
        + ". Tick the rows to audit (a new search clears the ticks)."
    )
    event = st.dataframe(
        shown,
        hide_index=True,
        on_select="rerun",
        selection_mode="multi-row",
        height=300,
        key=f"target_table:{search}",
    )
    return tuple(int(shown.index[i]) for i in event.selection.rows)


def _pick(dataset: Dataset, members: Callable[[], np.ndarray]) -> dict[str, Any] | None:
    """Records the user picks; None, with a hint, until at least one is picked."""
    keep("target_pick", next(iter(PICK_WAYS)), options=list(PICK_WAYS))
    way = st.radio(
        "Pick records",
        list(PICK_WAYS),
        format_func=PICK_WAYS.__getitem__,
        key="target_pick",
        horizontal=True,
    )
    d = np.sort(members())
    try:
        ids = {"rows": _pick_by_rows, "value": _pick_by_value, "table": _pick_by_table}[way](dataset, d)
    except PrivgameError as error:
        show_error(error)
        return None
    if not ids:
        st.info("Pick at least one record of D to audit.")
        return None
    rows = dataset.file_rows()[list(ids)]
    st.caption(
        f"{len(ids):,} record(s) picked: row(s) {', '.join(f'{r:,}' for r in rows[:20])}"
        + (" …" if len(ids) > 20 else "")
        + " of the file."
    )
    return {"target_ids": ids}


def _targets(
    mode: str, n_d: int, dataset: Dataset, members: Callable[[], np.ndarray]
) -> dict[str, Any] | None:
    """The records chosen, as the request's fields (the ``run`` flags of the same names)."""
    if mode == "plan":
        return _plan(n_d)
    if mode in ("random", "outliers"):
        keep("target_k", min(20, n_d), low=1, high=n_d)
        k = st.number_input(
            "Number of records k",
            min_value=1,
            max_value=n_d,
            key="target_k",
        )
        return {"targets": int(k), "target_selection": mode}
    if mode == "all":
        st.markdown(f"All **{n_d:,}** records of D.")
        return {"all_targets": True}
    return _pick(dataset, members)


def _ms(seconds: float) -> str:
    milliseconds = seconds * 1000
    return f"{milliseconds:.2g} ms" if milliseconds < 10 else f"{milliseconds:,.0f} ms"


def _calibration(spec: RunSpec, table: Any, workers: int) -> Calibration:
    """Time the generator (and ``workers`` fresh workers) once per set of inputs that changes its
    cost, shared by every session of this dashboard for a while
    (:func:`privgame.games.estimate.calibrate_once`); a changed N_shadow is scaled, not timed."""
    # What is being timed, as it goes: a spinner alone stood for minutes on a large table.
    shown = st.empty()

    def step(what: str, fraction: float) -> None:
        shown.progress(min(1.0, fraction), text=f"{what}…")

    calibration, measured = calibrate_once(spec, table, workers=workers, progress=step)
    shown.empty()
    return for_n_shadow(calibration, measured, spec.attack.n_shadow)


def _contract(spec: RunSpec, inputs: AuditInputs) -> bool:
    """For a plug-in: run it once on a few rows of D and say what it breaks, or how fast it is."""
    if spec.generator in GENERATORS:
        return True
    key = json.dumps(
        [inputs.fingerprint, spec.generator, spec.to_dict()["generator_params"], spec.sizes, spec.seed],
        sort_keys=True,
        default=str,
    )
    memo: dict[str, Any] = st.session_state.setdefault("_contracts", {})
    if key not in memo:
        with st.spinner("Checking the plug-in on a few rows of D…"):
            try:
                memo[key] = check_plugin(spec, inputs.table)
            except PrivgameError as error:
                memo[key] = error
    result = memo[key]
    if isinstance(result, PrivgameError):
        show_error(result)
        return False
    st.success(
        f"The plug-in meets privgame's generator contract. On {result.rows:,} rows of D one fit took "
        f"{_ms(result.fit_seconds)} and one sample {_ms(result.sample_seconds)}"
        + (" (it declares a deterministic fit)." if result.deterministic_fit else ".")
    )
    return True


def _what_is_audited(spec: RunSpec) -> None:
    st.subheader("What is audited")
    show_setup(describe_setup(spec, planned=True))
    sizes = spec.sizes
    cols = st.columns(3)
    cols[0].metric(
        "Rows of D",
        f"{sizes['target']:,}",
        help="The target dataset: in the release set-up, the rows the release is trained on.",
    )
    if threat.create(spec.attack.attacker).knows_d:
        cols[1].metric(
            "The attacker knows",
            f"{sizes['target'] - 1:,}",
            help="Every record of D but the one it tests: its shadow datasets are D and D with the "
            "record swapped for a reference record.",
        )
    else:
        cols[1].metric(
            "Attacker's data D_aux",
            f"{sizes['aux']:,}",
            help="Rows the attacker knows; its shadow datasets are drawn from them.",
        )
    cols[2].metric(
        "Reference records",
        f"{sizes['eval'] - sizes['target']:,}",
        help="Records the games swap in for a target record; never in D nor in D_aux.",
    )


def _form() -> None:
    dataset = st.session_state.get("dataset")
    setup: Mapping[str, Any] | None = st.session_state.get(SETUP_KEY)
    if dataset is None or setup is None:
        st.info("Choose the data first: the Data page loads the table and sets up the audit.")
        st.page_link(PAGES["data"], label="Go to the Data page", icon=":material/table_view:")
        return
    kind = "release" if setup["kind"] == "release" else "paper (research)"
    st.caption(
        f"Data: {plain(dataset.source_name)}, {len(dataset.table):,} rows. Set-up: {kind}; change it "
        "on the Data page."
    )

    st.subheader("Generator")
    try:
        chosen = _generator()
    except PrivgameError as error:
        show_error(error)
        return
    if chosen is None:
        return
    generator, params = chosen

    st.subheader("Records and attack")
    default_attacker = DEFAULT_ATTACKER["release" if setup["kind"] == "release" else "paper"]
    keep("attacker", default_attacker, options=list(ATTACKERS))
    attacker = st.radio(
        "The attacker the release is judged against",
        list(ATTACKERS),
        format_func=lambda name: threat.create(name).choice,
        key="attacker",
        help="Leave-one-out is the worst case and the release set-up's default: an attacker who knows "
        "every record of your data but the one it tests. The population attacker is the paper's: it "
        "knows other records of the population, none of yours.",
    )
    st.caption(threat.create(attacker).summary + " " + threat.create(attacker).games_note)
    attacks = _attacks(setup["kind"], generator, params)
    cols = st.columns(4)
    keep("threshold", THRESHOLD.default, low=T_LEAST, high=T_MOST)
    threshold = cols[0].slider(
        THRESHOLD.label,
        min_value=T_LEAST,
        max_value=T_MOST,
        step=0.01,
        key="threshold",
        help=THRESHOLD.help,
    )
    n_shadow = option_input(N_SHADOW, "n_shadow", cols[1])
    n_eval = option_input(N_EVAL, "n_eval", cols[2])
    classifier = option_input(CLASSIFIER, "classifier", cols[3])
    show_threshold_guide(float(threshold))
    keep("target_mode", next(iter(TARGET_MODES)), options=list(TARGET_MODES))
    mode = st.radio(
        "Which records of D to evaluate",
        list(TARGET_MODES),
        format_func=TARGET_MODES.__getitem__,
        key="target_mode",
    )
    detail, seed_column = st.columns([3, 1])
    seed = option_input(SEED, "seed", seed_column)
    try:
        inputs = audit_inputs(dataset, setup, seed)
    except PrivgameError as error:
        show_error(error)
        return
    # The page's settings as the request the command line and the API make from theirs: the one
    # preparation (privgame.games.request.prepare_request) turns it into the run's spec.
    request = {
        "data": dataset,
        "generator": generator,
        "generator_params": params,
        "setup": inputs.setup.kind,
        "n_shadow": int(n_shadow),
        "n_eval": int(n_eval),
        "classifier": classifier,
        "attacker": attacker,
        "attacks": attacks,
        "threshold": float(threshold),
        "seed": seed,
        **_screen(inputs.setup.kind),
        **_inference(dataset),
    }

    def members() -> np.ndarray:
        return members_of(inputs, seed)

    with detail:
        targets = _targets(mode, int(inputs.sizes["target"]), dataset, members)
    if targets is None:
        return

    st.subheader("Execution")
    cols = st.columns(2)
    keep("workers", default_workers(), low=1, high=256)
    workers = int(
        cols[0].number_input(
            "Worker processes",
            min_value=1,
            max_value=256,
            key="workers",
            help="How many cores the run may use; it never changes the results.",
        )
    )
    keep("scheduler", "")
    address = cols[1].text_input(
        "Dask scheduler (optional)",
        key="scheduler",
        placeholder="tcp://host:8786",
        help="Run the work on a Dask cluster instead of this machine.",
    )

    try:
        scheduler = scheduler_address(address.strip() or None)
        spec = prepare_request(AuditRequest(**request, **targets), inputs=inputs).spec
    except PrivgameError as error:
        show_error(error)
        return

    _what_is_audited(spec)
    if not _contract(spec, inputs):
        return

    # The Launch button is drawn before the slow part (choosing the records, timing the generator)
    # so that it shows at once; the cost fills the section above it. A run the cost refuses loses
    # the button again, and a click launches only once the cost is known and allowed.
    st.subheader("Cost")
    cost = st.container()
    slot = st.empty()
    going = _launched_run_going()
    if going is not None:
        st.caption(
            f"The audit launched from this page, {going}, is under way (Progress, above): launch the "
            "next one when it ends, or cancel it. Two audits at once share this machine's cores and "
            "both take longer."
        )
    clicked = slot.button("Launch the audit", type="primary", key="launch", disabled=going is not None)
    with cost:
        allowed, seconds = _cost(spec, inputs, workers=workers, scheduler=scheduler)
        if spec.targets.mode == "plan" and not scheduler:
            _budget(spec, inputs, workers)
    if not allowed:
        slot.empty()
        return
    if clicked and going is None:
        # Once, however often it is clicked: a second click runs on another thread at once.
        folder, _ = launch_once(
            runs_root(), spec, inputs.table, workers=workers, scheduler=scheduler, estimate=seconds
        )
        st.session_state["run_id"] = folder.run_id
        st.session_state["launched"] = folder.run_id
        st.session_state["launched_from"] = dataset.fingerprint
        st.rerun()


def _attacks(kind: str, generator: str, params: dict[str, Any]) -> tuple[str, ...]:
    """The attacks tried on every record: those that apply to the generator, the set-up's default
    chosen (every one in the release set-up, TAPAS alone in the paper's)."""
    usable = resolve_attacks("all", setup=kind, generator=generator, params=params)
    default = list(resolve_attacks(None, setup=kind, generator=generator, params=params))
    keep("attacks", default)
    # A selection the user left at the default follows the default when the generator or set-up
    # changes (so Baynet gets the marginal attack back after Synthpop); one they chose is kept,
    # less the attacks that do not apply.
    before = st.session_state.get("attacks_default")
    if before is not None and set(st.session_state["attacks"]) == set(before):
        st.session_state["attacks"] = default
    st.session_state["attacks_default"] = default
    kept = [name for name in st.session_state["attacks"] if name in usable]
    st.session_state["attacks"] = kept or default
    words = attack_words()
    chosen = st.multiselect(
        "Attacks tried on every record",
        list(usable),
        key="attacks",
        format_func=lambda name: words[name][0],
        help="Each record's risk is that of the strongest of these attacks, chosen on the attacker's "
        "own shadow datasets (never on the runs it is scored on). "
        + " ".join(
            f"{title.capitalize()}: {text}." for name, (title, text) in words.items() if name in usable
        ),
    )
    return tuple(name for name in usable if name in chosen) or tuple(default)


def _screen(kind: str) -> dict[str, Any]:
    """The screen of every record: on by default in the release set-up, with its top records."""
    default = ScreenSettings.for_setup(kind)
    cols = st.columns([2, 1])
    keep("screen_all", default.on)
    on = cols[0].checkbox(SCREEN.label, key="screen_all", help=SCREEN.help)
    confirm = option_input(CONFIRM_TOP, "confirm_top", cols[1], default=default.confirm_top, disabled=not on)
    return {"screen": "all" if on else "none", "confirm_top": int(confirm)}


def _inference(dataset: Dataset) -> dict[str, Any]:
    """The attribute-inference game: the secret columns the data owner names, and its threshold.
    The columns whose names look sensitive are proposed; none is chosen for the owner."""
    used = [c.name for c in dataset.schema.used]
    proposed = sensitive_columns(dataset.schema)
    keep("secrets", [])
    st.session_state["secrets"] = [name for name in st.session_state["secrets"] if name in used]
    cols = st.columns([3, 1])
    secrets = cols[0].multiselect(
        "Secret columns (attribute inference)",
        used,
        key="secrets",
        placeholder="none: membership only",
        help="For each audited record, an attacker who knows its other columns infers these from "
        "the release. A record's inference gain is how much more often it succeeds with the record "
        "in D than with it swapped out: the same 'in' and 'out' runs as the membership game.",
    )
    threshold = option_input(INFERENCE_THRESHOLD, "inference_threshold", cols[1], disabled=not secrets)
    if proposed:
        st.caption(
            "Columns whose names look sensitive: " + ", ".join(plain(name) for name in proposed) + ". "
            "A proposal only: name the columns that are secret in your data."
        )
    return {"secrets": tuple(secrets), "inference_threshold": float(threshold)}


def _use_plan(step: PlanStep) -> None:
    """Put a proposed plan's settings into the form (a callback: before the widgets are drawn)."""
    st.session_state["plan_outliers"] = step.outliers
    st.session_state["plan_random"] = step.random
    st.session_state["n_shadow"] = step.n_shadow
    st.session_state["n_eval"] = step.n_eval


def _budget(spec: RunSpec, inputs: AuditInputs, workers: int) -> None:
    """The planner (``python -m privgame plan``): cut the plan above to fit a time budget."""
    with st.expander("Fit a time budget", icon=":material/timer:"):
        keep("budget_minutes", 30, low=1)
        minutes = st.number_input("Time budget (minutes)", min_value=1, step=5, key="budget_minutes")
        key = (spec.to_dict(), workers, int(minutes))
        kept = st.session_state.get("_proposed_plan")
        if st.button("Propose a plan", key="propose_plan"):
            calibration = _calibration(spec, inputs.table, workers)
            with st.spinner("Estimating each plan…"):
                plan = plan_for_budget(
                    spec,
                    inputs.table,
                    workers=workers,
                    budget_seconds=60.0 * minutes,
                    calibration=calibration,
                )
            kept = st.session_state["_proposed_plan"] = (key, plan)
        if kept is None or kept[0] != key:
            st.caption(
                "privgame cuts one setting at a time until the estimate fits: the evaluation runs and the "
                "outlying and random records first, the shadow datasets last (fewer read every risk lower), "
                "and says what each cut gives up (as python -m privgame plan --budget MINUTES does)."
            )
            return
        plan = kept[1]
        # A static table wraps the long "gives up" sentences, which a data grid cuts at its edge.
        st.table(pd.DataFrame(plan_rows(plan)).set_index("step"))
        st.caption(
            "risk ±: half-width of a record's 95% interval for a risk at t; risk missed: how much lower "
            "every risk reads with fewer shadow datasets than 1,000 (measured, REPRODUCTION 6.2); share "
            "interval up to: the widest 95% interval of the share of D at risk that the random sample "
            "can give."
        )
        (st.success if plan.chosen is not None else st.warning)(plain(plan.text))
        if plan.chosen not in (None, 0):
            st.button(
                "Use this plan",
                key="use_plan",
                on_click=_use_plan,
                args=(plan.steps[plan.chosen],),
                type="primary",
            )


def _launched_run_going() -> str | None:
    """The run launched from this session, while it is under way (not yet ended or given up)."""
    run_id = st.session_state.get("launched")
    if not run_id:
        return None
    try:
        folder = open_run(runs_root(), run_id)
        status = folder.status()
    except PrivgameError:  # deleted or damaged since
        return None
    if status.get("state") in ACTIVE and not folder.status_is_stale():
        return str(run_id)
    return None


def _cost(
    spec: RunSpec, inputs: AuditInputs, *, workers: int, scheduler: str | None
) -> tuple[bool, float | None]:
    """The plan and the time it will take; whether the audit may be launched, and the estimate."""
    try:
        with st.spinner("Choosing the records to audit (the most outlying are found once per table)…"):
            _, target_ids = build_context(spec, inputs.table)
        plan = plan_summary(spec, len(target_ids))
    except PrivgameError as error:
        show_error(error)
        return False, None
    where = f"on the Dask cluster at {scheduler}" if scheduler else f"with {workers} worker process(es)"
    try:
        calibration = _calibration(spec, inputs.table, 1 if scheduler else workers)
        seconds = estimate_seconds(
            spec, inputs.table, workers=workers, calibration=calibration, scheduler=bool(scheduler)
        )
    except PrivgameError as error:
        show_error(error)
        return False, None
    except Exception as error:  # the estimate is advice: a failure to time must not stop the audit
        st.info(plain(plan["text"]))
        st.warning(
            "privgame could not time the generator on this machine, so there is no time estimate; "
            f"the audit can still be launched ({type(error).__name__}: {plain(error)})."
        )
        return True, None
    st.info(
        f"{plain(plan['text'])}  \nEstimated time: **about {duration(seconds)}** {where} (one fit and "
        f"sample of {spec.sizes['target']:,} rows takes {_ms(calibration.fit_sample)} of CPU time here)."
    )
    note = None if scheduler else load_note(calibration, workers)
    if note:
        st.caption(plain(note[0].upper() + note[1:] + "."))
    warning = cost_warning(seconds)
    if warning:
        st.warning(plain(warning))
    try:  # over the cost limit: refused unless the user says they mean it
        check_cost(spec, inputs.table, workers=workers, calibration=calibration, scheduler=bool(scheduler))
    except PrivgameError as error:
        show_error(error)
        return bool(st.checkbox("I know it's large: launch it anyway", key="i_know_its_large")), seconds
    return True, seconds


def _follow_body(run_id: str) -> None:
    guarded(lambda: _show_run(run_id))


# One unfinished run's progress, refreshed every second (it reruns the whole page once it ends).
_follow_live = st.fragment(_follow_body, run_every=1)
# One ended run, not refreshed: a fragment that goes on refreshing after the user has opened
# another page ("Open the results") makes Streamlit blank that page a few seconds later.
_follow_ended = st.fragment(_follow_body)


def _show_run(run_id: str) -> None:
    folder = open_run(runs_root(), run_id)
    damage = folder.damage()
    if damage:
        st.markdown(f"`{run_id}` · **damaged**")
        st.error(plain(damage))
        st.page_link(
            PAGES["runs"], label="Resume or delete it on the Runs page", icon=":material/folder_open:"
        )
        return
    status = folder.status()
    state = status.get("state", "created")
    st.markdown(
        f"`{run_id}` · {plain(folder.spec().data_name)} · {plain(folder.spec().generator)} · **{state}**"
    )
    if state in ACTIVE:
        done, total = int(status.get("fits_done") or 0), int(status.get("fits_total") or 0)
        eta = status.get("eta")
        left = f"time left {duration(eta) if eta is not None else 'being measured'}"
        if status.get("phase") == "screen":
            # The screen of every record comes first, with its own bar: one fit per screening dataset.
            done, total = int(status.get("screen_done") or 0), int(status.get("screen_total") or 0)
            text = (
                f"Screening every record: {done:,} of {total:,} datasets · {left}" if total else "starting…"
            )
        else:
            text = f"{done:,} of {total:,} generator fits · {left}" if total else "starting…"
        fraction = done / total if total else 0.0
        st.progress(min(1.0, fraction), text=text)
        cols = st.columns([1, 4])
        if folder.cancel_requested():
            cols[0].caption("Cancel requested: stopping after the work in progress.")
        elif cols[0].button("Cancel", key=f"cancel-{run_id}"):
            folder.request_cancel()
            st.toast("Cancel requested; the run stops after the work in progress.")
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
        st.error(f"The run failed: {plain(status.get('error') or 'see the engine log below')}")
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
    dataset = st.session_state.get("dataset")
    if dataset is None or st.session_state.get("launched_from") != dataset.fingerprint:
        launched = None  # an ended run of another table: the Runs page lists it
    shown = list(dict.fromkeys([*([launched] if launched else []), *active]))
    if not shown:
        return
    st.subheader("Progress")
    st.caption("Runs go on in the background when this page or the browser is closed.")
    states = {info.run_id: info.state for info in every}
    for run_id in shown:
        with st.container(border=True):
            (_follow_live if states.get(run_id) in ACTIVE else _follow_ended)(run_id)


def body() -> None:
    st.title("Evaluate")
    st.markdown(
        "Audit records of D: for each target record, train the attack of the attacker you choose "
        "and measure its risk in the model-seeded game (and, against the paper's attacker, in the "
        "traditional game too)."
    )
    _progress()
    _form()


guarded(body)
