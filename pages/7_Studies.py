"""Studies: the paper's studies (Figs. 3-6), each a set of runs that vary one setting.

Studies are started here, on the Data page's table, or with ``python -m privgame study NAME``
(see :mod:`privgame.cli.commands.study`; the page and the command ask for the same
:class:`~privgame.studies.request.StudyRequest`)
and live under ``<runs root>/studies/``. This page lists them and shows one: its settings, how far it
is, its table and its figure (:mod:`privgame.outputs.study_figures`), with the numbers to download. A
study that is still running shows the runs finished so far; it can be cancelled or resumed here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from pages import duration, guarded, keep, option_input, plain, runs_root, show_error, when
from privgame.core.errors import PrivgameError
from privgame.service import (
    ATTACKER,
    EPSILON_GENERATORS,
    GENERATORS,
    N_EVAL,
    N_SHADOW,
    SEED,
    STUDIES,
    STUDY_N_SHADOW,
    STUDY_TARGETS,
    STUDY_TITLES,
    VARIED,
    StudyFolder,
    StudyInfo,
    StudyRequest,
    launch_study,
    launch_study_once,
    list_studies,
    offered,
    open_study,
    prepare_study,
    read_varied,
    study_chart,
    study_command,
    study_results,
    threat,
    to_bytes,
)

STUDY_KEY = "study_id"
ACTIVE = ("created", "queued", "running")

SEEDS = {
    "size": (
        "One split of the table for every size: each D is the first |D| rows of the same evaluation "
        "pool, so the datasets are nested and the same records are evaluated at every size."
    ),
    "epsilon": (
        "The same D, records and shadow datasets for every ε; only the generator's noise changes "
        "(PrivBayes', as in the paper, or MST's). ε = ∞ adds no noise."
    ),
    "datasets": (
        "Each D_k is the record plus |D| − 1 rows drawn from the evaluation pool, as in the "
        "traditional game; the attack and the traditional game are the same for every D_k, so only "
        "the model-seeded risk changes."
    ),
    "convergence": (
        "Every repeat keeps D and the records and redraws every other seed (shadow datasets, "
        "attack, both games); fewer evaluation runs use the first half 'in' and half 'out' runs "
        "of the most."
    ),
}

COMMANDS = {
    "size": "python -m privgame study size --data data/adult.csv.gz --generator synthpop --out runs",
    "epsilon": "python -m privgame study epsilon --data data/adult.csv.gz --epsilons inf 100 10 1 --out runs",
    "datasets": "python -m privgame study datasets --data data/adult.csv.gz --generator synthpop --out runs",
    "convergence": (
        "python -m privgame study convergence --data data/adult.csv.gz --generator synthpop "
        "--n-evals 100 200 500 1000 --repeats 10 --out runs"
    ),
}


def _start() -> None:
    """A form that starts a study on the Data page's table: the study's own settings
    (:class:`~privgame.studies.request.StudyRequest`), shown as the command that asks for the same."""
    dataset = st.session_state.get("dataset")
    with st.expander("Start a study", expanded=not list_studies(runs_root())):
        if dataset is None:
            st.info("Choose the table on the Data page first; a study runs on it.")
            return
        name = st.selectbox("Study", list(STUDIES), format_func=STUDY_TITLES.__getitem__, key="study-name")
        field, label, _, _ = VARIED[name]
        chosen: dict[str, Any] = {"study": name}
        cols = st.columns(3)
        generators = list(EPSILON_GENERATORS) if name == "epsilon" else offered()
        key = "study-dp-generator" if name == "epsilon" else "study-generator"
        keep(key, "synthpop" if "synthpop" in generators else generators[0], options=generators)
        chosen["generator"] = cols[0].selectbox(
            "Generator", generators, key=key, format_func=lambda n: GENERATORS[n].label or n
        )
        default = getattr(StudyRequest(study=name), field)
        keep(f"study-values-{name}", " ".join(_words(default)))
        values = cols[1].text_input(
            label, key=f"study-values-{name}", help=f"The command's --{field.replace('_', '-')}."
        )
        if name != "datasets":
            keep("study-targets", STUDY_TARGETS[name], low=1)
            chosen["targets"] = int(cols[2].number_input("Records K", min_value=1, key="study-targets"))
        cols = st.columns(3)
        chosen["n_shadow"] = option_input(N_SHADOW, "study-n-shadow", cols[0], default=STUDY_N_SHADOW)
        if name != "convergence":
            chosen["n_eval"] = option_input(N_EVAL, "study-n-eval", cols[1])
        chosen["seed"] = option_input(SEED, "study-seed", cols[2])
        keep("study-attacker", StudyRequest.attacker, options=list(ATTACKER.choices))
        chosen["attacker"] = st.radio(
            "Attacker",
            sorted(ATTACKER.choices, key=lambda name: name != StudyRequest.attacker),  # the default first
            key="study-attacker",
            horizontal=True,
            format_func=lambda name: threat.create(name).choice,
        )
        try:
            chosen[field] = read_varied(name, values)
            request = StudyRequest(**chosen)
        except PrivgameError as error:
            show_error(error)
            return
        st.caption(
            f"On {plain(dataset.source_name)}, the paper's set-up (D drawn from an evaluation pool). "
            "The same as the command:"
        )
        st.code(study_command(request, data=dataset.source_name, out=str(runs_root())), language="bash")
        if st.button("Start the study", type="primary", key="study-start"):
            try:
                spec = prepare_study(request, dataset)
            except PrivgameError as error:
                show_error(error)
                return
            # Once, however often it is clicked: a second click runs on another thread at once.
            folder, _ = launch_study_once(runs_root(), spec, dataset.table)
            st.session_state[STUDY_KEY] = folder.study_id
            st.query_params["study"] = folder.study_id
            st.rerun()


def _words(value: Any) -> list[str]:
    values = value if isinstance(value, tuple | list) else [value]
    return ["inf" if v == float("inf") else f"{v:g}" if isinstance(v, float) else str(v) for v in values]


def _how_to() -> None:
    with st.expander("How to run a study", expanded=not list_studies(runs_root())):
        st.markdown(
            "A study runs from the command line and appears here as soon as it starts; the table and "
            "the figure grow as its runs finish. Add `--workers N`, `--n-shadow`, `--n-eval` or "
            "`--seed` as for `python -m privgame run`, and point `--out` at this dashboard's runs "
            f"folder ({plain(runs_root())})."
        )
        for name in STUDIES:
            st.markdown(f"**{STUDY_TITLES[name]}**")
            st.code(COMMANDS[name], language="bash")


def _label(info: StudyInfo) -> str:
    return f"{info.study_id} · {STUDY_TITLES.get(info.study, info.study)} · {info.state}"


def _pick() -> StudyFolder | None:
    found = list_studies(runs_root())
    if not found:
        st.info(f"There are no studies in {plain(runs_root() / 'studies')} yet.")
        return None
    ids = [info.study_id for info in found]
    by_id = {info.study_id: info for info in found}
    wanted = st.query_params.get("study") or st.session_state.get(STUDY_KEY)
    index = ids.index(wanted) if wanted in ids else 0
    study_id = st.selectbox(
        "Study", ids, index=index, key="study_picker", format_func=lambda s: _label(by_id[s])
    )
    st.session_state[STUDY_KEY] = study_id
    st.query_params["study"] = study_id
    return open_study(runs_root(), study_id)


def _status(folder: StudyFolder) -> None:
    status = folder.status()
    state = status.get("state", "created")
    facts = [f"**{state}**", f"created {when(status.get('created'))}"]
    if state == "done":
        facts.append(f"took {duration(status.get('seconds'))}")
    st.markdown(" · ".join(facts))
    total = status.get("fits_total") or 0
    done = status.get("fits_done") or 0
    stale = state in ("queued", "running") and folder.status_is_stale()
    if stale:
        st.warning("The study's process has stopped without finishing (no progress for two minutes).")
    elif state in ("queued", "running"):
        eta = status.get("eta")
        left = f" · about {duration(eta)} left" if eta else ""
        st.progress(done / total if total else 0.0, text=f"{done:,} of {total:,} generator fits{left}")
        cols = st.columns(4)
        if cols[0].button("Refresh", key="study-refresh"):
            st.rerun()
        if not folder.cancel_requested() and cols[1].button("Cancel", key="study-cancel"):
            folder.request_cancel()
            st.toast("Cancel requested; the study stops after the work in progress.")
    elif state == "failed":
        st.error(
            f"The study failed: {plain(status.get('error') or 'no message')}. After fixing the cause, "
            f"resume it with: {plain(f'python -m privgame study resume {folder.path}')}"
        )
    if state in ("created", "cancelled", "failed") or stale:
        if state in ("created", "cancelled"):
            st.warning(
                f"The study is {state}: "
                + ("it has not started." if state == "created" else "it stopped before every run finished.")
            )
        if st.button("Resume in the background", key="study-resume", help="Continue from its checkpoints."):
            launch_study(folder)
            st.toast("Resumed; refresh to follow it.")


HEADERS = {
    "size": "dataset size |D|",
    "epsilon": "privacy budget ε",
    "n_eval": "evaluation runs per game",
    "record_id": "record",
    "records": "records",
    "repeats": "repeats",
    "risk_model_seeded": "risk in that dataset (model-seeded)",
    "risk_traditional": "average risk (traditional)",
    "difference": "difference",
    "risk_model_seeded_low": "risk in that dataset, 95% low",
    "risk_model_seeded_high": "risk in that dataset, 95% high",
    "risk_traditional_low": "average risk, 95% low",
    "risk_traditional_high": "average risk, 95% high",
    "outlier_score": "outlier score",
    "k": "dataset",
    "mean_model_seeded": "mean risk, model-seeded",
    "mean_traditional": "mean risk, traditional",
    "sd_model_seeded": "spread, model-seeded",
    "sd_traditional": "spread, traditional",
    "max_sd_model_seeded": "largest spread, model-seeded",
    "max_sd_traditional": "largest spread, traditional",
    "sd_same_attack_model_seeded": "spread with the same attack, model-seeded",
    "sd_same_attack_traditional": "spread with the same attack, traditional",
    "hoeffding_half_width": "Hoeffding bound",
    "rmsd": "gap between the games (RMSD)",
    "rmsd_noise": "gap from estimation noise alone",
    "rmsd_corrected": "gap, noise removed",
    "max_abs_difference": "largest difference",
    "miss_rate": "missed by the traditional game",
    "above_t_model_seeded": "risk above t in that dataset",
    "above_t_traditional": "risk above t on average",
    "records_excluded": "records with an undefined risk",
}  # plain column headers for the study tables; the CSV download keeps the column names


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the page shows it: numbers to 3 decimals, a missing one as "undefined"."""
    out = table.copy()
    for column in out.columns:
        if column == "epsilon":
            out[column] = out[column].map(lambda e: "∞" if e == float("inf") else f"{e:g}")
        elif pd.api.types.is_float_dtype(out[column].dtype):
            out[column] = out[column].map(lambda v: "undefined" if pd.isna(v) else f"{v:.3f}")
    return out.rename(columns=HEADERS)


def _show(folder: StudyFolder) -> None:
    spec = folder.spec()
    st.subheader(STUDY_TITLES[spec.study])
    st.caption(plain(spec.describe()))
    st.caption(SEEDS[spec.study])
    _status(folder)
    result = study_results(folder)
    chart = study_chart(spec, result)
    st.plotly_chart(chart.figure, key="study-chart")
    st.caption(plain(chart.caption))
    st.download_button(
        "Data of this chart (CSV)",
        to_bytes(chart.data, "csv"),
        file_name=f"{folder.study_id}-figure.csv",
        mime="text/csv",
        key="download-figure-data",
        on_click="ignore",
    )
    st.subheader("Table")
    st.dataframe(_shown(result.table), hide_index=True)
    st.caption(
        f"{result.jobs_done} of {result.jobs_total} runs finished; miss rate at t = {spec.base.threshold:g}."
        if spec.study in ("size", "epsilon")
        else f"{result.jobs_done} of {result.jobs_total} runs finished."
    )
    cols = st.columns(2)
    cols[0].download_button(
        "Table (CSV)",
        to_bytes(result.table, "csv"),
        file_name=f"{folder.study_id}-table.csv",
        mime="text/csv",
        key="download-table",
        on_click="ignore",
    )
    figure_html = folder.path / "figure.html"
    if figure_html.is_file():
        cols[1].download_button(
            "Figure (HTML, works offline)",
            figure_html.read_bytes(),
            file_name=f"{folder.study_id}-figure.html",
            mime="text/html",
            key="download-figure-html",
            on_click="ignore",
        )
    st.caption(f"Study folder: {plain(folder.path.resolve())}")


def body() -> None:
    st.title("Studies")
    st.markdown(
        "The paper's studies, each a set of runs that changes one thing: the size of the target "
        "dataset, the privacy budget ε of PrivBayes or MST, the dataset a record sits in, and the number of "
        "evaluation runs (the paper's Figures 3 to 6)."
    )
    _start()
    folder = _pick()
    if folder is not None:
        _show(folder)
    _how_to()


guarded(body)
