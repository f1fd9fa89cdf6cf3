"""The Studies page with Streamlit's AppTest (no browser).

``PRIVGAME_RUNS`` points at a temporary folder. Finished studies are made in-process on 600 rows
of Adult (generator "marginals", N_shadow = N_eval = 8, one worker), in a second or two.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.outputs.study_figures import figure_html
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.studies import StudySpec, create_study, execute_study, list_studies

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "7_Studies.py")
TIMEOUT = 60


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory):
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(600)
    path = tmp_path_factory.mktemp("data") / "adult600.csv"
    table.to_csv(path, index=False)
    return load_dataset(path)


def _base(dataset, generator: str = "marginals") -> RunSpec:
    return RunSpec(
        data_name="adult600.csv",
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes={"aux": 300, "eval": 300, "target": 40},
        generator=generator,
        attack=AttackSettings(n_shadow=8, n_eval=8),
        targets=TargetSelection("random", 2),
        seed=1,
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, dataset) -> Path:
    """A runs root with one finished study of each kind, and one that was never started."""
    root = tmp_path_factory.mktemp("runs")
    specs = [
        StudySpec("size", _base(dataset), sizes=(20, 40)),
        StudySpec("epsilon", _base(dataset, "privbayes"), epsilons=(math.inf, 1.0)),
        StudySpec("datasets", replace(_base(dataset), targets=TargetSelection("random", 1)), n_datasets=2),
        StudySpec("convergence", _base(dataset), n_evals=(4, 8), repeats=2),
    ]
    for spec in specs:
        execute_study(create_study(root, spec, dataset.table), workers=1, figure=figure_html)
    return root


@pytest.fixture
def with_studies(tmp_path: Path, finished: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    shutil.copytree(finished, root)
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    return root


def _page(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


def _texts(elements) -> str:
    """The elements' text as it reads on the page (Markdown escapes removed)."""
    return "\n".join(re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements)


def _no_failures(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, _texts(at.error)


def test_without_studies_the_page_says_how_to_run_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    at = _page()
    _no_failures(at)
    assert "There are no studies" in _texts(at.info)
    commands = _texts(at.code)
    for name in ("size", "epsilon", "datasets", "convergence"):
        assert f"python -m privgame study {name}" in commands


@pytest.mark.parametrize("study", ["size", "epsilon", "datasets", "convergence"])
def test_each_study_shows_its_table_figure_and_downloads(with_studies: Path, study: str) -> None:
    info = next(i for i in list_studies(with_studies) if i.study == study)
    at = _page(study=info.study_id)
    _no_failures(at)
    assert at.selectbox(key="study_picker").value == info.study_id
    assert len(at.get("plotly_chart")) == 1
    table = at.dataframe[0].value
    assert len(table) == 2  # two sizes, budgets, datasets or N_eval values
    captions = _texts(at.caption)
    assert "2 of 2 runs finished" in captions
    assert "**done**" in _texts(at.markdown)
    downloads = at.get("download_button")
    assert len(downloads) == 3  # chart data, table, figure HTML
    if study == "epsilon":
        assert "∞" in set(table["privacy budget ε"])
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()
    assert not [c for c in table.columns if "_" in c], "plain headers, not column names"


def test_the_epsilon_study_offers_the_differentially_private_generators(
    tmp_path: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["dataset"] = dataset
    at.run()
    at.selectbox(key="study-name").set_value("epsilon").run()
    _no_failures(at)
    assert at.selectbox(key="study-dp-generator").options == [
        "PrivBayes (differentially private Bayesian network)",
        "MST (differentially private maximum spanning tree)",
    ]
    at.selectbox(key="study-dp-generator").set_value("mst").run()
    _no_failures(at)
    assert "python -m privgame study epsilon --generator mst --epsilons inf 100 10 1" in _texts(at.code)


def test_a_study_starts_from_the_page_as_the_command_would(
    tmp_path: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privgame.cli.commands.study import build_study_spec, study_arguments

    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    launched: list[Path] = []
    monkeypatch.setattr("privgame.studies.folder.launch_study", lambda f, **_: launched.append(f.path) or 1)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["dataset"] = dataset
    at.run()
    _no_failures(at)
    at.selectbox(key="study-name").set_value("size").run()
    at.selectbox(key="study-generator").set_value("marginals")
    at.text_input(key="study-values-size").set_value("20 40")
    at.number_input(key="study-targets").set_value(2)
    at.number_input(key="study-n-shadow").set_value(8)
    at.number_input(key="study-n-eval").set_value(8)
    at.run()
    _no_failures(at)
    command = _texts(at.code)
    assert "python -m privgame study size --generator marginals --sizes 20 40 --targets 2" in command
    at.button(key="study-start").click().run()
    _no_failures(at)
    (info,) = list_studies(tmp_path / "runs")
    assert launched == [info.path]
    made = info.path  # the page's spec is the spec of the command it shows
    shown = next(line for line in command.splitlines() if line.startswith("python -m privgame study size"))
    expected, _ = build_study_spec(study_arguments(shlex.split(shown)[4:]), dataset)
    from privgame.studies import StudyFolder

    assert StudyFolder(made).spec().sizes == expected.sizes == (20, 40)
    assert StudyFolder(made).spec().base.attack == expected.base.attack
    assert StudyFolder(made).spec().base.generator_params == expected.base.generator_params
    # A bad value is named, with the fix, not a traceback; nothing can be started with it.
    at.text_input(key="study-values-size").set_value("twenty").run()
    assert not at.exception
    assert "Give whole numbers, not 'twenty'" in _texts(at.error)
    assert not [b for b in at.button if b.key == "study-start"]


def test_a_study_that_never_started_can_be_resumed(
    with_studies: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = create_study(with_studies, StudySpec("size", _base(dataset), sizes=(20,)), dataset.table)
    launched: list[Path] = []
    monkeypatch.setattr("privgame.studies.launch_study", lambda f, **_: launched.append(f.path) or 1)
    at = _page(study=folder.study_id)
    _no_failures(at)
    assert "it has not started" in _texts(at.warning)
    assert "appears as soon as the first run is done" in _texts(at.caption)
    assert "0 of 1 runs finished" in _texts(at.caption)
    at.button(key="study-resume").click().run()
    _no_failures(at)
    assert launched == [folder.path]
    assert "Resumed" in _texts(at.toast)


def test_a_corrupt_study_is_an_error_message_not_a_traceback(with_studies: Path) -> None:
    info = list_studies(with_studies)[0]
    (info.path / "study.json").write_text("{not json")
    at = _page(study=info.study_id)
    assert not at.exception
    assert "corrupt" in _texts(at.error)


def test_a_running_study_shows_progress_and_can_be_cancelled(with_studies: Path, dataset) -> None:
    folder = create_study(with_studies, StudySpec("size", _base(dataset), sizes=(20,)), dataset.table)
    folder.write_status(state="running", pid=os.getpid(), fits_done=5, fits_total=10, eta=30.0)
    at = _page(study=folder.study_id)
    _no_failures(at)
    assert "5 of 10 generator fits" in str(at.get("progress")[0].proto)
    at.button(key="study-cancel").click().run()
    _no_failures(at)
    assert folder.cancel_requested()
    assert "Cancel requested" in _texts(at.toast)
