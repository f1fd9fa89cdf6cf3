"""Remedies: fix what an audit found in a new run, follow its re-audit, compare the family.

The remedy is :class:`privgame.runs.remedy.Remedy`, made and started by
:func:`privgame.runs.background.launch_remedy` (the folder as ``python -m privgame remedy --no-run``
makes it, then ``python -m privgame resume`` in the background), on a thread of its own
(:func:`privgame.runs.background.start_remedy_launch`) so that a second click or a reload cannot stop
it. The comparison is :func:`privgame.analysis.compare.compare_runs` (as ``python -m privgame compare``
prints it), and the charts :func:`privgame.outputs.figures.paired_risk_chart` and
:func:`privgame.outputs.figures.privacy_utility_chart`. Any run of the family is released on the Release page.
Before the start, the re-audit's generator fits and time are shown
(:func:`privgame.runs.remedy.estimate_remedy`, as ``python -m privgame remedy`` prints them); a re-audit
that stopped (cancelled, failed, or its engine died) is listed with a Resume action
(:func:`privgame.runs.remedy.stopped_remedies`, :func:`privgame.runs.background.resume_stopped`, as
``python -m privgame resume RUN_DIR``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import streamlit as st

from pages import (
    PAGES,
    duration,
    guarded,
    plain,
    runs_root,
    select_run,
    show_error,
    show_verdict,
    threshold_slider,
    utility_inputs,
)
from privgame.core.errors import ParameterError, PrivgameError
from privgame.outputs.figures import paired_risk_chart, privacy_utility_chart
from privgame.service import (
    ATTACKER,
    CATEGORICAL,
    COMPARE_LABELS,
    CONTINUOUS,
    GENERALISE_PARAMS,
    LEAVE_OUT,
    SAMPLE_CHOICES,
    Calibration,
    Remedy,
    RunFolder,
    Schema,
    calibrate,
    compare_runs,
    cost_warning,
    draws_sample,
    estimate_remedy,
    family,
    family_target_column,
    forget_remedy_launch,
    generalise_choices,
    kept_sample_ids,
    leave_out_ids,
    measure_utility,
    open_run,
    paired_risks,
    plan_remedy,
    record_names,
    remedy_launches,
    resolve_workers,
    resume_stopped,
    risk_cap,
    run_summary,
    start_remedy_launch,
    stopped_remedies,
    threat,
    unmeasured,
)

# Session key of the remedy run started here, followed until it ends.
STARTED_KEY = "_remedy_started"
NOTICE_KEY = "_remedy_notice"
# Session key of the generator timings the estimates were made from, by what changes them.
CALIBRATIONS_KEY = "_remedy_calibrations"
ACTIVE = ("created", "queued", "running")
LEAVE_LABELS = {
    "none": "keep every record",
    "at-risk": "the records at risk",
    "at-risk-and-undecided": "the records at risk and the undecided ones",
    "at-risk-together": "only those at risk together (Holm: 2.5% for the whole set)",
}
SAMPLE_LABELS = {
    "kept": "the parent's, minus the records left out (faster; the share is an upper estimate)",
    "fresh": "a fresh one of the new D (unbiased share; trains new attacks)",
}
GENERALISE_LABELS = {
    "min-leaf": "larger minimum leaf size (Synthpop)",
    "epsilon": "smaller ε (PrivBayes)",
    "bins": "fewer bins (Bayesian networks)",
}


def _form(folder: RunFolder, t: float) -> Remedy:
    """The remedy the owner chooses, with what each choice would do."""
    spec = folder.spec()
    schema = Schema.from_dict(spec.schema)
    leave = st.radio(
        "Leave records out of D",
        ["none", *LEAVE_OUT],
        format_func=LEAVE_LABELS.__getitem__,
        horizontal=True,
        key="remedy-leave",
    )
    sample = "kept"
    screened = False
    if leave != "none":
        if folder.has_screen():
            screened = st.checkbox(
                "Also leave out the records the screen gives that verdict (a record at risk by either "
                "attack is at risk); the re-audit then draws a fresh random sample",
                key="remedy-screened",
            )
        ids = leave_out_ids(folder, leave, t, screened=screened)
        st.caption(
            f"{len(ids)} record(s) would leave D at t = {t:g}"
            + (
                f": {plain('; '.join(record_names(folder, ids[:20])))}" + ("…" if len(ids) > 20 else "")
                if ids
                else "; choose a lower t or another remedy."
            )
        )
        if draws_sample(spec) and not screened:
            sample = st.radio(
                "Random sample of the re-audit",
                list(SAMPLE_CHOICES),
                format_func=SAMPLE_LABELS.__getitem__,
                horizontal=True,
                key="remedy-sample",
            )
        if sample == "kept" and ids and draws_sample(spec) and kept_sample_ids(folder, ids) is None:
            st.caption(
                "This run's random sample cannot be kept (it is wholly left out, or was itself kept "
                "from a parent run): the re-audit draws a fresh one."
            )
    cols = st.columns(2)
    choices = generalise_choices(spec)  # only the settings this run's generator has
    kind = cols[0].selectbox(
        "Generalise the generator",
        ["none", *choices],
        format_func=lambda k: "keep its settings" if k == "none" else GENERALISE_LABELS[k],
        key="remedy-generalise",
    )
    generalise = None
    if kind != "none":
        current, suggestion = choices[kind]
        value = cols[1].number_input(
            f"New {GENERALISE_PARAMS[kind]} (now {current if current is not None else 'the default'})",
            min_value=0.01 if kind == "epsilon" else 1.0,
            value=float(suggestion),
            key=f"remedy-generalise-value-{kind}",
        )
        generalise = (kind, float(value) if kind == "epsilon" else int(value))
    cols = st.columns(2)
    private_on = cols[0].checkbox(
        "Train with differential privacy (MST)",
        key="remedy-private",
        disabled=generalise is not None,
        help="The release is trained by MST, a differentially private generator, instead of "
        f"{spec.generator}. With a public domain its guarantee caps every record's risk, audited or "
        "not; the re-audit measures the risk beside the cap.",
    )
    private = None
    if private_on and generalise is None:
        private = float(
            cols[1].number_input("Privacy budget ε", min_value=0.01, value=1.0, key="remedy-private-epsilon")
        )
        if not schema.domain_public:
            st.caption(
                "This table's domain was read off the data, so MST's guarantee would not hold and would "
                "cap nothing; declare a public domain on the Data page for a proven cap."
            )
        else:
            cap = risk_cap(private)
            st.caption(
                f"At ε = {private:g} MST's guarantee caps every record's risk at {cap:.3f}, "
                + (
                    f"below t = {t:g}: it proves that no record of D is at risk, whatever the attack."
                    if cap < t
                    else f"not below t = {t:g}: it does not prove any record safe at t; a smaller ε "
                    "lowers the cap."
                )
            )
    categorical = [c.name for c in schema.used if c.role == CATEGORICAL]
    continuous = [c.name for c in schema.used if c.role == CONTINUOUS]
    cols = st.columns(2)
    merge = cols[0].multiselect("Merge rare categories of", categorical, key="remedy-merge")
    min_count = cols[1].number_input("…seen fewer times in D than", min_value=2, value=10, key="remedy-min")
    cols = st.columns(2)
    binned = cols[0].multiselect("Cut into quantile bins", continuous, key="remedy-bin")
    n_bins = cols[1].number_input("Bins", min_value=2, value=5, key="remedy-bins")
    attackers = list(ATTACKER.choices)
    attacker = st.radio(
        "Attacker of the re-audit",
        attackers,
        index=attackers.index(spec.attack.attacker),
        format_func=lambda name: threat.create(name).choice,
        horizontal=True,
        key="remedy-attacker",
        help="The parent's by default. The leave-one-out attacker knows D, which the remedy changes, "
        "so its attacks are trained again on the new D.",
    )
    games = st.radio(
        "Games of the re-audit",
        ["model-seeded", "both"],
        format_func=lambda g: (
            "model-seeded only (the verdict rests on it; faster)" if g == "model-seeded" else "both games"
        ),
        horizontal=True,
        key="remedy-games",
        disabled=not threat.create(attacker).plays_traditional,
        help="The leave-one-out attacker plays the model-seeded game only.",
    )
    if not threat.create(attacker).plays_traditional:
        games = "model-seeded"
    return Remedy(
        leave_out=None if leave == "none" else leave,
        threshold=t,
        generalise=generalise,
        merge_rare=tuple((c, int(min_count)) for c in merge),
        bins=tuple((c, int(n_bins)) for c in binned),
        games=games,
        sample="fresh" if screened else sample,
        attacker=attacker,
        screened=screened,
        private=private,
    )


def _remedy_in_progress(folder: RunFolder) -> str | None:
    """A remedy of ``folder`` whose re-audit is still going, if any (the newest)."""
    going = [
        member.run_id
        for member in family(folder)
        if (member.spec().parent or {}).get("run_id") == folder.run_id
        and member.status().get("state") in ACTIVE
        and not member.status_is_stale()
    ]
    return going[-1] if going else None


def _follow_body(run_id: str) -> None:
    guarded(lambda: _progress(run_id))


_follow = st.fragment(_follow_body, run_every=1)


def _progress(run_id: str) -> None:
    """The re-audit's progress; the page reruns once it ends."""
    folder = open_run(runs_root(), run_id)
    status = folder.status()
    state = status.get("state")
    if state in ("done", "failed", "cancelled", "damaged") or folder.status_is_stale():
        # Ended: the page compares it, or lists it with a Resume action if it stopped.
        st.session_state.pop(STARTED_KEY, None)
        st.rerun()
    done, total = int(status.get("fits_done") or 0), int(status.get("fits_total") or 0)
    eta = status.get("eta")
    left = duration(eta) if eta is not None else "being measured"
    text = f"{done:,} of {total:,} generator fits · time left {left}" if total else "starting…"
    st.info(f"Re-auditing the remedy run {run_id}.")
    st.progress(min(1.0, done / total) if total else 0.0, text=text)


def _measure_family(members: list[RunFolder]) -> None:
    """Measure the utility of the family's runs that lack it (``utility RUN --family``)."""
    schema = Schema.from_dict(members[0].spec().schema)
    target, samples = utility_inputs(
        schema.names,
        family_target_column(members),
        key="family-utility",
        help="Every run of the family is measured predicting the same column, so that their figures compare.",
    )
    todo = unmeasured(members, target)
    if not todo:
        st.caption(f"Every run of the family has its utility measured predicting {plain(target)}.")
        return
    st.caption(
        f"{len(todo)} of the {len(members)} runs have no utility figures predicting {plain(target)} "
        f"yet. The same as the command: python -m privgame utility {plain(members[0].path)} --family "
        f"--target-column {plain(target)} --samples {int(samples)}"
    )
    if st.button(f"Measure the utility of {len(todo)} run(s)", key="family-utility-measure"):
        progress = st.progress(0.0, text="Measuring…")
        for i, member in enumerate(todo):
            progress.progress(i / len(todo), text=f"Measuring {member.run_id} ({i + 1} of {len(todo)})…")
            measure_utility(member, samples=int(samples), target_column=target)
        st.rerun()


def _compare(folder: RunFolder, t: float, *, remedying: bool = False) -> None:
    """The family's table, the paired chart against the parent, and the privacy-utility chart."""
    members = [f for f in family(folder) if f.is_done()]
    st.subheader("Compare the family")
    if len(members) < 2:
        st.caption(
            "The remedy's re-audit is under way (above); its results join this comparison when it ends."
            if remedying
            else "This run has no finished remedy yet: start one above."
        )
        return
    table = compare_runs(members, t)
    shown = table.rename(columns=COMPARE_LABELS).astype(str)
    shown = shown.replace({"None": "undefined", "nan": "undefined"})
    st.dataframe(shown, hide_index=True, key="compare-table")
    st.caption(
        'RMSD and miss rate need both games ("not run" when a re-audit played the model-seeded game '
        'alone); utility is "not measured" until the run\'s utility is measured.'
    )
    child = folder if folder.spec().parent else members[-1]
    parent_id = (child.spec().parent or {}).get("run_id")
    parent = next((f for f in members if f.run_id == parent_id), None)
    if parent is not None:
        chart = paired_risk_chart(paired_risks(parent, child, t), t)
        st.plotly_chart(chart.figure, key="paired-chart")
        st.caption(plain(chart.caption))
    chart = privacy_utility_chart(table)
    if len(chart.data):
        st.plotly_chart(chart.figure, key="privacy-utility-chart")
        st.caption(plain(chart.caption))
    else:
        st.caption(
            "The privacy–utility chart needs each run's downstream utility: measure it below (or "
            "with python -m privgame utility RUN_DIR --family)."
        )
    with st.expander("Utility of the family", expanded=not len(chart.data)):
        _measure_family(members)
    for member in members:
        st.page_link(
            PAGES["release"],
            label=f"Release from {member.run_id}",
            icon=":material/publish:",
            query_params={"run": member.run_id},
        )


def body() -> None:
    st.title("Remedies")
    folder = select_run("Run to remedy")
    if folder is None:
        return
    lineage = folder.spec().parent
    if lineage:
        st.caption(f"A remedy of {plain(lineage['run_id'])}: {plain(lineage['description'])}.")
    t = threshold_slider(folder, key="remedy-t", help="The verdicts that choose the records to leave out.")
    summary: dict[str, Any] = run_summary(folder, t)
    show_verdict(summary)
    failed = _launch_outcome(folder)
    # A remedy run being made (from this session or another, before a reload), the re-audit
    # started from this page, or one of this run's remedies still going: followed until it ends.
    making = any(launch.making() for launch in remedy_launches(folder))
    started = None if making else _followed() or _remedy_in_progress(folder)
    if making:
        _follow_making(folder.run_id)
    elif started:
        _follow(started)
    if failed is not None:
        show_error(failed)
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice:
        st.info(plain(notice))
    _stopped(folder, busy=bool(started or making))
    st.subheader("Choose a remedy")
    remedy = _form(folder, t)
    seconds = _estimate(folder, remedy)
    # The click is acted on by its callback, on a thread of its own: the next click or a reload
    # may stop this script run before it gets here, never the launch.
    st.button(
        "Start the remedy",
        type="primary",
        key="start-remedy",
        disabled=bool(started or making),
        on_click=_start,
        args=(folder.run_id, remedy, seconds),
    )
    _compare(folder, t, remedying=bool(started or making))


def _followed() -> str | None:
    """The re-audit this session started or resumed, while it is under way (else forgotten: a
    stopped one is listed by :func:`_stopped`, a finished one joins the comparison)."""
    run_id = st.session_state.get(STARTED_KEY)
    if run_id is None:
        return None
    try:
        followed = open_run(runs_root(), run_id)
        going = followed.status().get("state") in ACTIVE and not followed.status_is_stale()
    except ValueError:  # deleted or damaged since
        going = False
    if not going:
        st.session_state.pop(STARTED_KEY, None)
        return None
    return str(run_id)


def _stopped(folder: RunFolder, *, busy: bool) -> None:
    """The remedies of ``folder`` whose re-audit stopped before its end, each with a Resume action."""
    stopped = stopped_remedies(folder)
    if not stopped:
        return
    st.subheader("Stopped re-audits")
    for child in stopped:
        status = child.status()
        state = status.get("state", "created")
        if state == "created":
            state = "made, never started"
        elif state in ACTIVE:
            state = "stopped (its engine ended without finishing)"
        done, total = int(status.get("fits_done") or 0), int(status.get("fits_total") or 0)
        made = f"; {done:,} of {total:,} generator fits done" if total else ""
        description = (child.spec().parent or {}).get("description", "")
        st.warning(f"**{plain(child.run_id)}** ({plain(description)}): {plain(state)}{made}.")
        if status.get("error"):
            st.caption(plain(str(status["error"])))
        if child.damage() is not None:
            st.caption("Its status or spec is damaged: resume or delete it on the Runs page.")
            continue
        st.button(
            "Resume",
            key=f"resume-remedy-{child.run_id}",
            help="Go on from its checkpoints, as python -m privgame resume RUN_DIR does.",
            disabled=busy,
            on_click=_resume,
            args=(child.run_id,),
        )


def _resume(run_id: str) -> None:
    """The click on a stopped re-audit's "Resume": start it again (once), and follow it."""
    resume_stopped(open_run(runs_root(), run_id))
    st.session_state[STARTED_KEY] = run_id


def _estimate(folder: RunFolder, remedy: Remedy) -> float | None:
    """Show what the remedy's re-audit will cost (fits and time), before it is started; return its
    estimated seconds (None when there is none)."""
    try:
        planned = plan_remedy(folder, remedy)
    except ParameterError as error:
        if (
            remedy.leave_out is None
            and remedy.generalise is None
            and remedy.private is None
            and not remedy.merge_rare
            and not remedy.bins
        ):
            st.caption("Choose a remedy above: its re-audit's generator fits and time are shown here.")
        else:
            st.caption(plain(" ".join([error.summary, *error.problems])))
        return None
    workers = resolve_workers(None)  # the re-audit's engine uses every core, as `resume` does
    try:
        with st.spinner("Timing the generator on this machine…"):
            estimate = estimate_remedy(
                folder, remedy, workers=workers, calibration=_calibration(planned, workers), planned=planned
            )
    except PrivgameError as error:
        show_error(error)
        return None
    st.info(f"This remedy's re-audit: {plain(estimate.text)}.")
    warning = cost_warning(estimate.seconds)
    if warning:
        st.warning(plain(warning))
    return estimate.seconds if math.isfinite(estimate.seconds) else None


def _calibration(planned: tuple[Any, Any, bool], workers: int) -> Calibration | None:
    """The generator's timings for the remedy's spec, measured once per setting that changes them
    (the generator, its parameters, the columns, the sizes, the attack) in this session."""
    spec, table, _ = planned
    data = spec.to_dict()
    # Which rows are left out changes the fingerprints, not the cost.
    setup = {k: v for k, v in (data.get("setup") or {}).items() if not k.endswith("fingerprint")}
    wanted = ("generator", "generator_params", "schema", "sizes", "attack")
    key = json.dumps([*(data[k] for k in wanted), setup, workers], sort_keys=True, default=str)
    memo: dict[str, Calibration] = st.session_state.setdefault(CALIBRATIONS_KEY, {})
    if key not in memo:
        try:
            memo[key] = calibrate(spec, table, workers=workers)
        except PrivgameError:
            raise
        except Exception:  # the estimate is advice: estimate_remedy says the generator was not timed
            return None
    return memo[key]


def _start(run_id: str, remedy: Remedy, seconds: float | None) -> None:
    """The click on "Start the remedy": make and start the run (once, however often clicked)."""
    start_remedy_launch(open_run(runs_root(), run_id), remedy, estimate=seconds)


def _launch_outcome(folder: RunFolder) -> BaseException | None:
    """Take in the remedy launches of ``folder`` that ended: follow the run each made, and
    return the error of one that failed (to be shown once)."""
    failed = None
    for launch in remedy_launches(folder):
        if launch.making():
            continue
        forget_remedy_launch(launch)
        if launch.error is not None:
            failed = launch.error
        elif launch.folder is not None:
            st.session_state[STARTED_KEY] = launch.folder.run_id
            if not launch.new:
                st.session_state[NOTICE_KEY] = (
                    f"This remedy was made before, as {launch.folder.run_id}: following that run "
                    "rather than starting a second one."
                )
    return failed


def _making_body(run_id: str) -> None:
    folder = open_run(runs_root(), run_id)
    if any(launch.making() for launch in remedy_launches(folder)):
        st.info("Making the remedy run: checking its settings and the generator on the new D…")
    else:
        st.rerun()  # made (or refused): the whole page follows the run, or says why


# The remedy run being made, checked every second (it reruns the whole page once made).
_follow_making = st.fragment(_making_body, run_every=1)


guarded(body)
