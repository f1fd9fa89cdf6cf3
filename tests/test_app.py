"""The dashboard, page by page, with Streamlit's AppTest (no browser).

Every test points ``PRIVGAME_RUNS`` at a temporary folder. Finished runs are made in-process with
the engine on 300 rows of Adult (generator "marginals", N_shadow = N_eval = 8, one worker), which
takes well under a second: paper set-up runs with |D| = 30 and 2 target records, and a release
set-up run (a 0.3 holdout, |D| = 210) with the audit plan of 2 most outlying + 2 random records.

Uploads: AppTest drives ``st.file_uploader`` directly (``file_uploader[0].set_value``), so the
bad-upload test sends real bytes through the same parsing path the browser uses.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.analysis.utility import stored_utility
from privgame.data import BUNDLED_ADULT, DEFAULT_MAX_BYTES, Sizes, load_dataset
from privgame.games.audit import records_at
from privgame.games.engine import execute, undecided_records
from privgame.games.preflight import create_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs, with_setup
from privgame.store.folders import list_runs, open_run

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 60


def _adult_bytes(rows: int = 300) -> bytes:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(rows)
    return table.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def adult_csv() -> bytes:
    return _adult_bytes()


@pytest.fixture(scope="module")
def dataset(adult_csv: bytes):
    return load_dataset(adult_csv, filename="adult300.csv")


def _tiny_spec(dataset, *, seed: int = 0) -> RunSpec:
    return RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=Sizes(aux=150, eval=150, target=30).to_dict(),
        generator="marginals",
        attack=AttackSettings(n_shadow=8, n_eval=8),
        targets=TargetSelection(mode="random", k=2),
        threshold=0.8,
        seed=seed,
    ).validate()


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory: pytest.TempPathFactory, dataset) -> Path:
    """A runs root holding two finished tiny runs (seeds 0 and 1)."""
    root = tmp_path_factory.mktemp("runs")
    for seed in (0, 1):
        folder = execute(create_run(root, _tiny_spec(dataset, seed=seed), dataset.table), workers=1)
        folder.write_status(created=1_800_000_000.0 + seed)  # seed 1 is the newest
    return root


RELEASE_PLAN = TargetSelection.plan(outliers=2, random=2)


def _release_spec(dataset, inputs) -> RunSpec:
    """A tiny release set-up run, built as ``python -m privgame run`` builds it."""
    kwargs = {
        "data_name": dataset.source_name,
        "generator": "marginals",
        "attack": AttackSettings(n_shadow=8, n_eval=8),
        "targets": RELEASE_PLAN,
        "threshold": 0.8,
        "seed": 0,
    }
    return RunSpec(**with_setup(kwargs, inputs)).validate()


@pytest.fixture(scope="module")
def finished_release_run(tmp_path_factory: pytest.TempPathFactory, dataset) -> Path:
    """A runs root holding one finished release set-up run: a 0.3 holdout, 2 + 2 records."""
    root = tmp_path_factory.mktemp("release-runs")
    inputs = release_inputs(dataset, seed=0)
    execute(create_run(root, _release_spec(dataset, inputs), inputs.table), workers=1)
    return root


@pytest.fixture
def with_release_run(tmp_path: Path, finished_release_run: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    shutil.copytree(finished_release_run, root)
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    return root


@pytest.fixture
def runs_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    return root


@pytest.fixture
def with_runs(tmp_path: Path, finished_runs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the finished runs (tests may delete them) as the runs root."""
    root = tmp_path / "runs"
    shutil.copytree(finished_runs, root)
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    return root


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT).run()


def _page(name: str, **query: str) -> AppTest:
    at = _app()
    at.query_params.update(query)
    return at.switch_page(f"pages/{name}.py").run()


def _texts(elements) -> str:
    """The elements' text as it reads on the page (Markdown escapes removed)."""
    return "\n".join(_plain(str(e.value)) for e in elements)


def _edit_roles(at: AppTest, key: str, edits: dict[int, dict[str, str]]) -> None:
    """Change roles in the Data page's role editor (``key``), as a click in its grid does."""
    at.session_state[key] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}


def _plain(text: str) -> str:
    """Markdown text as it reads: without the escapes of ``pages.plain``."""
    return re.sub(r"\\(.)", r"\1", text)


def _no_failures(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, _texts(at.error)


# -- configuration --------------------------------------------------------------------------


def test_config_listens_locally_and_matches_the_upload_limit() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == DEFAULT_MAX_BYTES


# -- home --------------------------------------------------------------------------------------


def test_home_without_runs_says_where_to_start(runs_root: Path) -> None:
    at = _app()
    _no_failures(at)
    assert at.title[0].value == "privgame"
    assert "No runs yet" in _texts(at.info)
    assert "model-seeded game" in _texts(at.markdown)


def test_home_lists_the_latest_runs(with_runs: Path) -> None:
    at = _app()
    _no_failures(at)
    text = _texts(at.markdown)
    for info in list_runs(with_runs):
        assert info.run_id in text


# -- data --------------------------------------------------------------------------------------


def test_data_page_uses_the_bundled_adult_data(runs_root: Path) -> None:
    at = _page("1_Data")
    at.radio(key="data_source").set_value("Use the bundled Adult data").run()
    _no_failures(at)
    schema = at.data_editor[0].value
    assert list(schema["column"])[:3] == ["age", "workclass", "fnlwgt"]
    assert len(schema) == 15
    assert "3,620 rows dropped" in _texts(at.markdown)
    chosen = at.session_state["dataset"]
    assert len(chosen.table) == 45_222
    assert at.radio(key="setup_kind").value == "release", "the release set-up is the default"
    assert at.session_state["setup"]["kind"] == "release"
    assert _plain(_texts(at.success)).startswith("D: 31,655 rows")
    at.radio(key="setup_kind").set_value("paper").run()
    _no_failures(at)
    assert at.session_state["setup"] == {
        "kind": "paper",
        "sizes": Sizes(aux=30_000, eval=15_222, target=1_000),
    }


def test_data_page_reads_an_upload_and_checks_sizes_live(runs_root: Path, adult_csv: bytes) -> None:
    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult300.csv", adult_csv, "text/csv")).run()
    _no_failures(at)
    assert len(at.session_state["dataset"].table) == 300
    assert "200 MB" in at.file_uploader[0].label

    at.radio(key="setup_kind").set_value("paper").run()
    at.number_input(key="size_target_300").set_value(290).run()  # |D| larger than D_eval
    assert at.error, "an impossible size must be reported"
    assert "dataset" not in at.session_state
    at.number_input(key="size_target_300").set_value(30).run()
    _no_failures(at)
    assert at.session_state["setup"]["sizes"].target == 30


def test_a_bad_upload_lists_every_problem_as_a_message(runs_root: Path) -> None:
    bad = b"age,name,age\n1,a,2\n3,b\n4,c,5,6\n"
    at = _page("1_Data")
    at.file_uploader[0].set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    message = _texts(at.error)
    assert "'age' appears 2 times" in message
    assert "ragged rows" in message and "line 3" in message and "line 4" in message
    assert "dataset" not in at.session_state


def test_a_binary_upload_is_refused_with_a_message(runs_root: Path) -> None:
    at = _page("1_Data")
    at.file_uploader[0].set_value(("table.csv", b"PK\x03\x04" + b"\x00" * 64, "text/csv")).run()
    assert not at.exception
    assert "ZIP archive" in _texts(at.error)


def test_role_overrides_change_the_schema_and_bad_ones_are_reported(
    runs_root: Path, adult_csv: bytes
) -> None:
    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult300.csv", adult_csv, "text/csv")).run()
    rows = list(at.data_editor[0].value["column"])
    key = at.data_editor[0].key
    assert key.startswith("roles_editor:")  # one editor per file
    edits = {rows.index("age"): {"role": "excluded"}}
    _edit_roles(at, key, edits)
    at.run()
    _no_failures(at)
    assert at.session_state["dataset"].schema.column("age").role == "excluded"
    assert "age → excluded" in _texts(at.caption)
    grid = at.data_editor[0].value.set_index("column")
    assert grid.loc["age", "why"] == "excluded by the user" and grid.loc["age", "domain"] == ""
    assert grid.loc["workclass", "domain"].endswith("categories")

    edits[rows.index("workclass")] = {"role": "continuous"}
    _edit_roles(at, key, edits)
    at.run()
    assert not at.exception
    assert "'workclass'" in _texts(at.error) and "cannot be continuous" in _texts(at.error)
    grid = at.data_editor[0].value.set_index("column")
    assert grid.loc["workclass", "why"] == "cannot be continuous: see the problem below"
    assert "dataset" not in at.session_state

    edits[rows.index("hours-per-week")] = {"role": "categorical"}
    edits.pop(rows.index("workclass"))
    _edit_roles(at, key, edits)
    at.run()
    _no_failures(at)
    grid = at.data_editor[0].value.set_index("column")
    assert grid.loc["hours-per-week", "why"] == "set by the user"
    assert grid.loc["hours-per-week", "domain"].endswith(" categories")

    # Another file of the same shape: the edits of the first are not re-applied to it.
    other = pd.read_csv(io.BytesIO(adult_csv)).iloc[::-1].to_csv(index=False).encode()
    at.file_uploader[0].set_value(("reversed.csv", other, "text/csv")).run()
    _no_failures(at)
    assert at.data_editor[0].key != key
    assert "Changed roles" not in _texts(at.caption)
    assert at.session_state["dataset"].schema.column("age").role == "continuous"


def test_missing_value_policy_category_keeps_rows(runs_root: Path) -> None:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).head(300)
    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult.csv", table.to_csv(index=False).encode(), "text/csv")).run()
    dropped = at.session_state["dataset"].dropped_rows
    assert dropped > 0
    assert f"{dropped:,} rows dropped" in _texts(at.markdown)
    at.radio(key="missing_policy").set_value("category").run()
    _no_failures(at)
    assert at.session_state["dataset"].dropped_rows == 0


def test_data_page_points_out_a_minus_nine_code_as_a_possible_missing_value(runs_root: Path) -> None:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    table.loc[table.index[::10], "hours-per-week"] = -9  # 30 rows answered "no answer"
    at = _page("1_Data")
    at.file_uploader[0].set_value(("survey.csv", table.to_csv(index=False).encode(), "text/csv")).run()
    _no_failures(at)
    warned = _texts(at.warning)
    assert "Column 'hours-per-week': 30 of 300 values (10.0%) are -9" in warned
    assert "declare it missing" in warned
    assert at.session_state["dataset"] is not None  # a warning, not a problem: the table is usable


# -- data: the release set-up ----------------------------------------------------------------


def test_data_page_release_setup_with_a_holdout(runs_root: Path, adult_csv: bytes) -> None:
    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult300.csv", adult_csv, "text/csv")).run()
    _no_failures(at)
    assert at.radio(key="population_source").value == "holdout"
    assert at.text_input(key="holdout").value == "0.3"
    counts = _plain(_texts(at.success))
    assert "D: 210 rows (the release's training data)" in counts
    assert "90 rows held back from this table" in counts and "knows 60 of them" in counts
    assert "30 are reference records" in counts and "210 rows from D_aux, drawn with replacement" in counts
    assert at.session_state["setup"] == {
        "kind": "release",
        "population": None,
        "holdout": 0.3,
        "aux_rows": None,
        "shadow_size": None,
    }

    at.text_input(key="holdout").input("100").run()  # a number of rows
    _no_failures(at)
    assert "D: 200 rows" in _plain(_texts(at.success))
    assert at.session_state["setup"]["holdout"] == 100

    at.number_input(key="shadow_size").set_value(50).run()
    _no_failures(at)
    assert "50 rows from D_aux, drawn without replacement" in _plain(_texts(at.success))
    at.number_input(key="shadow_size").set_value(500).run()  # more than D_aux holds
    assert not at.exception
    assert "do not fit the attacker's data" in _texts(at.error)
    assert "setup" not in at.session_state and "dataset" not in at.session_state

    at.number_input(key="shadow_size").set_value(None)
    at.text_input(key="holdout").input("a third").run()
    assert not at.exception
    assert "--holdout must be a fraction" in _texts(at.error)
    assert "setup" not in at.session_state


def _population_csv(start: int, stop: int) -> bytes:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().iloc[start:stop]
    return table.to_csv(index=False).encode()


def test_data_page_release_setup_with_a_population_table(runs_root: Path, adult_csv: bytes) -> None:
    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult300.csv", adult_csv, "text/csv")).run()
    at.radio(key="population_source").set_value("table").run()
    _no_failures(at)
    assert "Upload the population table" in _texts(at.info)
    assert "setup" not in at.session_state, "no set-up until the population is given"

    at.file_uploader(key="population_upload").set_value(
        ("people.csv", _population_csv(300, 700), "text/csv")
    ).run()
    _no_failures(at)
    counts = _plain(_texts(at.success))
    assert "D: 300 rows" in counts and "400 rows of the population table" in counts
    assert "knows 266 of them" in counts and "134 are reference records" in counts
    assert _plain(_texts(at.caption)).count("Population table: people.csv") == 1
    setup = at.session_state["setup"]
    assert setup["kind"] == "release" and len(setup["population"].table) == 400

    # A population that names and codes the columns differently: every difference is listed.
    other = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().iloc[300:700]
    other = other.rename(columns={"age": "years"}).assign(
        income=lambda t: (t["income"] == ">50K").astype(int)
    )
    at.file_uploader(key="population_upload").set_value(
        ("other.csv", other.to_csv(index=False).encode(), "text/csv")
    ).run()
    assert not at.exception
    message = _texts(at.error)
    assert "the population table other.csv does not match the data table" in message
    assert "columns of the data missing from the population table other.csv: ['age']" in message
    assert "that the data does not have: ['years']" in message
    assert "column 'income' is categorical in the data" in message
    assert "Traceback" not in message
    assert "setup" not in at.session_state and "dataset" not in at.session_state


# -- evaluate ------------------------------------------------------------------------------


def test_evaluate_asks_for_data_first(runs_root: Path) -> None:
    at = _page("2_Evaluate")
    _no_failures(at)
    assert "Choose the data first" in _texts(at.info)


def _evaluate_with(dataset) -> AppTest:
    """The Evaluate page set for a tiny paper set-up run of 2 random records."""
    at = _app()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = {"kind": "paper", "sizes": Sizes(aux=150, eval=150, target=30)}
    at.switch_page("pages/2_Evaluate.py").run()
    at.selectbox(key="generator").set_value("marginals")
    at.number_input(key="n_shadow").set_value(8)
    at.number_input(key="n_eval").set_value(8)
    at.number_input(key="workers").set_value(1)
    at.radio(key="target_mode").set_value("random").run()
    at.number_input(key="target_k").set_value(2)
    return at.run()


def test_evaluate_shows_the_cost_before_launching(runs_root: Path, dataset) -> None:
    at = _evaluate_with(dataset)
    _no_failures(at)
    cost = _texts(at.info)
    # The pooled traditional game's exact count (the run below makes exactly these fits).
    assert "32 generator fits" in cost and "2 target records" in cost
    assert "Estimated time" in cost and "1 worker" in cost
    assert not runs_root.exists() or not list_runs(runs_root), "nothing is launched before the click"


def test_evaluate_reports_bad_settings_and_the_privbayes_note(
    runs_root: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_DEVELOPER", "1")  # the identity generator is offered to developers only
    at = _evaluate_with(dataset)
    at.number_input(key="n_shadow").set_value(9).run()
    assert not at.exception
    assert "n_shadow must be an even integer" in _texts(at.error)
    at.selectbox(key="generator").set_value("privbayes").run()
    assert "domain" in _texts(at.info) and "public" in _texts(at.info)
    at.selectbox(key="generator").set_value("identity").run()
    assert "releases its training data" in _texts(at.warning)


def test_evaluate_offers_every_declared_generator_parameter(runs_root: Path, dataset) -> None:
    """Each built-in generator's widgets are its declared options (:mod:`privgame.core.options`):
    their labels, help and defaults; a value changed there reaches the estimate."""
    from privgame.core.options import GENERATOR_OPTIONS

    at = _evaluate_with(dataset)
    for name, options in GENERATOR_OPTIONS.items():
        if name == "identity":
            continue  # offered to developers only; it has no parameter
        at.selectbox(key="generator").set_value(name).run()
        _no_failures(at)
        for option in options:
            kind = "selectbox" if option.kind == "choice" else "number_input"
            widget = getattr(at, kind)(key=f"{name}_{option.name}")
            assert (widget.label, widget.help, widget.value) == (option.label, option.help, option.default)
    from privgame.core.options import CONFIRM_TOP, INFERENCE_THRESHOLD

    for option in (CONFIRM_TOP, INFERENCE_THRESHOLD):  # the screen's and inference's declared settings
        widget = at.number_input(key=option.name)
        assert (widget.label, widget.help, widget.value) == (option.label, option.help, option.default)
    at.selectbox(key="generator").set_value("mst").run()
    assert "MST's differential-privacy guarantee holds only" in _texts(at.info)
    at.number_input(key="mst_delta").set_value(1e-6).run()
    _no_failures(at)
    assert "generator fits" in _texts(at.info)  # the estimate of an MST run


def test_evaluate_keeps_its_settings_when_the_user_comes_back(runs_root: Path, dataset) -> None:
    at = _evaluate_with(dataset)
    at.switch_page("pages/3_Results.py").run()
    at.switch_page("pages/1_Data.py").run()
    at.switch_page("pages/2_Evaluate.py").run()
    _no_failures(at)
    assert at.selectbox(key="generator").value == "marginals"
    assert at.number_input(key="n_shadow").value == 8
    assert at.number_input(key="n_eval").value == 8
    assert at.number_input(key="workers").value == 1
    assert at.radio(key="target_mode").value == "random"
    assert at.number_input(key="target_k").value == 2
    assert "32 generator fits" in _texts(at.info)


def test_evaluate_offers_synthpops_categorical_splits(runs_root: Path, dataset) -> None:
    at = _evaluate_with(dataset)
    at.selectbox(key="generator").set_value("synthpop").run()
    _no_failures(at)
    splits = at.selectbox(key="synthpop_categorical_splits")
    assert splits.value == "onehot" and list(splits.options) == ["onehot", "ordinal"]
    splits.set_value("ordinal").run()
    at.switch_page("pages/3_Results.py").run()
    at.switch_page("pages/2_Evaluate.py").run()
    _no_failures(at)
    assert at.selectbox(key="synthpop_categorical_splits").value == "ordinal"


def test_the_identity_generator_is_offered_to_developers_only(
    runs_root: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRIVGAME_DEVELOPER", raising=False)
    at = _evaluate_with(dataset)
    labels = at.selectbox(key="generator").options  # as shown: the generators' labels
    assert not [label for label in labels if "Identity" in label]
    assert len([label for label in labels if label.startswith(("Synthpop", "Baynet", "PrivBayes"))]) == 3
    monkeypatch.setenv("PRIVGAME_DEVELOPER", "1")
    at = _evaluate_with(dataset)
    assert [label for label in at.selectbox(key="generator").options if "Identity" in label]


def test_evaluate_records_i_pick_by_file_row_and_by_value(runs_root: Path, dataset) -> None:
    at = _evaluate_with(dataset)
    at.radio(key="target_mode").set_value("ids").run()
    _no_failures(at)  # nothing picked yet: a hint, no error
    assert "Pick at least one record of D to audit." in _texts(at.info)
    assert at.radio(key="target_pick").value == "rows"

    d = _members_of(dataset, at)
    outside = next(i for i in range(len(dataset.table)) if i not in d)
    at.text_input(key="target_rows").input(f"{d[0] + 1}, {outside + 1}").run()
    assert not at.exception
    assert f"row {outside + 1} is not in D" in _texts(at.error)
    at.text_input(key="target_rows").input(f"{d[0] + 1}, {d[1] + 1}").run()
    _no_failures(at)
    assert "for each of the 2 target records" in _texts(at.info)

    at.radio(key="target_pick").set_value("value").run()
    at.selectbox(key="target_column").set_value("age").run()
    ages = at.multiselect(key="target_values:age")
    assert set(ages.options) == {str(a) for a in dataset.table["age"].iloc[d]}
    ages.set_value([ages.options[0]]).run()
    _no_failures(at)
    assert "target records" in _texts(at.info)

    at.radio(key="target_pick").set_value("table").run()
    table = at.dataframe[-1].value
    assert list(table["row of the file"]) == [i + 1 for i in d]  # D's records, as the file numbers them
    at.session_state["target_table:"] = {"selection": {"rows": [0, 2], "columns": [], "cells": []}}
    at.run()
    _no_failures(at)
    assert f"2 record(s) picked: row(s) {d[0] + 1}, {d[2] + 1} of the file." in _texts(at.caption)
    at.text_input(key="target_search").input(str(dataset.table["fnlwgt"].iloc[d[5]])).run()
    assert int(d[5]) + 1 in set(at.dataframe[-1].value["row of the file"])


def _members_of(dataset, at: AppTest) -> list[int]:
    """The record ids of D for the Evaluate page's paper set-up, as the engine splits them."""
    from privgame.games.plan import run_split
    from privgame.settings.setups import paper_inputs

    seed = int(at.number_input(key="seed").value)
    inputs = paper_inputs(dataset, size=30, aux=150, eval_size=150)
    spec = RunSpec(**with_setup({"data_name": "x", "generator": "marginals", "seed": seed}, inputs))
    return sorted(int(i) for i in run_split(spec, len(inputs.table)).target)


def test_records_picked_by_file_row_launch_the_spec_of_cli_target_ids(
    runs_root: Path, dataset, adult_csv: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame.api
    import privgame.runs.background
    from privgame.cli.commands.run import build_spec
    from privgame.cli.main import build_parser

    monkeypatch.setattr(privgame.runs.background, "launch", lambda folder, **kw: None)
    at = _evaluate_release(dataset)
    at.radio(key="target_mode").set_value("ids").run()
    at.radio(key="target_pick").set_value("value").run()
    at.selectbox(key="target_column").set_value("fnlwgt").run()
    values = at.multiselect(key="target_values:fnlwgt").options[:2]
    ids = sorted(int(i) for i in dataset.table.index[dataset.table["fnlwgt"].astype(str).isin(values)])
    at.radio(key="target_pick").set_value("rows").run()
    at.text_input(key="target_rows").input(", ".join(str(i + 1) for i in ids)).run()
    _no_failures(at)
    at.button(key="launch").click().run()
    assert not at.exception
    (info,) = list_runs(runs_root)

    csv = tmp_path / "adult300.csv"
    csv.write_bytes(adult_csv)
    args = build_parser().parse_args(
        ["run", "--data", str(csv), "--generator", "marginals", "--n-shadow", "8", "--n-eval", "8",
         "--target-ids", *map(str, ids), "--out", str(tmp_path / "cli")]
    )  # fmt: skip
    cli_spec, _, _ = build_spec(args)
    assert open_run(runs_root, info.run_id).spec().to_dict() == cli_spec.to_dict()


def test_evaluate_launches_in_the_background_and_follows_the_run(
    runs_root: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the engine runs as `python -m privgame` from here
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    at = _evaluate_with(dataset)
    at.button(key="launch").click().run()
    assert not at.exception
    (info,) = list_runs(runs_root)
    assert info.run_id in _texts(at.markdown)
    deadline = time.time() + 90
    while list_runs(runs_root)[0].state not in ("done", "failed", "cancelled"):
        assert time.time() < deadline, "the background run did not finish"
        time.sleep(0.5)
    assert list_runs(runs_root)[0].state == "done"
    status = open_run(runs_root, info.run_id).status()
    assert status["fits_done"] == status["fits_total"] == 32  # the count the page showed
    at.run()
    _no_failures(at)
    assert "Done in" in _texts(at.success)
    at.button(key=f"open-{info.run_id}").click().run()
    assert at.title[0].value == "Results"
    assert at.metric[0].value == "2"


def test_evaluate_can_cancel_a_run_in_progress(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    folder_path = with_runs / latest.run_id
    # Make the run look in progress, with a live engine (this test process).
    import json
    import os

    status = json.loads((folder_path / "status.json").read_text())
    status.update(state="running", fits_done=10, fits_total=37, done_units=1, total_units=3, eta=12.0)
    status.update(pid=os.getpid(), updated=time.time())
    (folder_path / "status.json").write_text(json.dumps(status))
    at = _page("2_Evaluate")
    _no_failures(at)
    assert any("10 of 37 generator fits" in p.text for p in at.get("progress"))
    at.button(key=f"cancel-{latest.run_id}").click().run()
    assert (folder_path / "cancel").exists()


# -- evaluate: the release set-up, the audit plan, plug-ins ----------------------------------

HOLDOUT_SETUP = {"kind": "release", "population": None, "holdout": 0.3, "aux_rows": None, "shadow_size": None}


def _evaluate_release(dataset, setup=HOLDOUT_SETUP) -> AppTest:
    """The Evaluate page for the release set-up, with its defaults but for a tiny attack."""
    at = _app()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = dict(setup)
    at.switch_page("pages/2_Evaluate.py").run()
    at.selectbox(key="generator").set_value("marginals")
    at.number_input(key="n_shadow").set_value(8)
    at.number_input(key="n_eval").set_value(8)
    at.number_input(key="workers").set_value(1)
    return at.run()


def test_the_attacks_left_at_their_default_follow_the_generator(runs_root: Path, dataset) -> None:
    at = _evaluate_release(dataset)
    at.selectbox(key="generator").set_value("synthpop").run()
    assert "marginal" not in at.multiselect(key="attacks").value
    at.selectbox(key="generator").set_value("baynet").run()
    _no_failures(at)
    assert "marginal" in at.multiselect(key="attacks").value  # Synthpop's default, then Baynet's
    at.multiselect(key="attacks").set_value(["tapas", "marginal"]).run()
    at.selectbox(key="generator").set_value("privbayes").run()
    assert list(at.multiselect(key="attacks").value) == ["tapas", "marginal"]  # a choice is kept
    at.selectbox(key="generator").set_value("synthpop").run()
    assert list(at.multiselect(key="attacks").value) == ["tapas"]  # less what does not apply


def test_evaluate_defaults_to_the_audit_plan_and_says_what_is_audited(runs_root: Path, dataset) -> None:
    at = _evaluate_release(dataset)
    _no_failures(at)
    assert at.radio(key="target_mode").value == "plan"
    assert at.number_input(key="plan_outliers").value == 20
    assert at.number_input(key="plan_random").value == 20
    text = _plain(_texts(at.markdown))
    assert "The most outlying records are the unusual people" in text
    assert "the riskiest record of an audit can still be a random one" in text
    assert "The random records are a fair sample of D" in text
    assert "their verdicts bracket the share of all 210 records of D at risk" in text
    assert "The release is trained on these 210 rows. 90 rows are held back" in text
    # The release set-up's attacker is the worst case, who knows every other record of D.
    assert at.radio(key="attacker").value == "leave-one-out"
    assert "The attacker knows every record of D but the one it tests" in _plain(_texts(at.caption))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Rows of D": "210", "The attacker knows": "209", "Reference records": "30"}
    assert "generator fits" in _texts(at.info)

    at.number_input(key="plan_outliers").set_value(0)
    at.number_input(key="plan_random").set_value(0).run()
    assert not at.exception
    assert "the audit plan is empty" in _texts(at.error)

    at.radio(key="target_mode").set_value("ids").run()  # D of the release set-up: the 210 rows kept
    at.radio(key="target_pick").set_value("value").run()
    at.selectbox(key="target_column").set_value("fnlwgt").run()
    in_d = set(at.multiselect(key="target_values:fnlwgt").options)
    assert in_d < {str(v) for v in dataset.table["fnlwgt"]}
    inputs = release_inputs(dataset, seed=0)
    assert inputs.setup.population_rows == 90


def test_evaluate_the_cli_and_the_api_prepare_the_same_run(
    runs_root: Path, dataset, adult_csv: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame.api
    import privgame.runs.background
    from privgame.cli.commands.run import build_spec
    from privgame.cli.main import build_parser

    launched = []
    monkeypatch.setattr(
        privgame.runs.background, "launch", lambda folder, **kw: launched.append(folder.run_id)
    )
    at = _evaluate_release(dataset)
    at.number_input(key="plan_outliers").set_value(2)
    at.number_input(key="plan_random").set_value(2)
    at.number_input(key="seed").set_value(3).run()
    _no_failures(at)
    at.button(key="launch").click().run()
    assert not at.exception
    (info,) = list_runs(runs_root)
    assert launched == [info.run_id]

    csv = tmp_path / "adult300.csv"
    csv.write_bytes(adult_csv)
    args = build_parser().parse_args(
        ["run", "--data", str(csv), "--generator", "marginals", "--n-shadow", "8", "--n-eval", "8",
         "--outliers", "2", "--random", "2", "--seed", "3", "--out", str(tmp_path / "cli")]
    )  # fmt: skip
    cli_spec, cli_inputs, _ = build_spec(args)
    folder = open_run(runs_root, info.run_id)
    assert folder.spec().to_dict() == cli_spec.to_dict()
    pd.testing.assert_frame_equal(folder.load_table(), cli_inputs.table.reset_index(drop=True))
    # The three faces, one preparation: the page's, the command line's and the Python API's run
    # folders hold the same bytes before any work (the API's audit stops once its folder is made).
    cli = create_run(tmp_path / "cli", cli_spec, cli_inputs.table)
    monkeypatch.setattr(privgame.api.Audit, "resume", lambda self, **_: None)
    api = privgame.audit(
        csv, "marginals", n_shadow=8, n_eval=8, outliers=2, random=2, seed=3, runs=tmp_path / "api", workers=1
    )
    for name in ("spec.json", "data.parquet"):
        page_bytes = (folder.path / name).read_bytes()
        assert page_bytes == (cli.path / name).read_bytes() == (api.path / name).read_bytes(), name


@pytest.fixture
def plugin_installed(monkeypatch: pytest.MonkeyPatch) -> str:
    """The example plug-in installed under the entry-point name "bootstrap"."""
    from importlib.metadata import EntryPoint

    from privgame.generators import plugins

    monkeypatch.syspath_prepend(str(ROOT))
    target = "tests.generators.plugin_example:IndependentBootstrap"
    points = [EntryPoint(name="bootstrap", value=target, group=plugins.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(plugins, "_read_entry_points", lambda: points)
    monkeypatch.setattr(plugins, "_resolved", {})
    return "bootstrap"


def test_evaluate_lists_installed_plugins_and_checks_their_contract(
    runs_root: Path, dataset, plugin_installed: str
) -> None:
    at = _evaluate_release(dataset)
    picker = at.selectbox(key="generator")
    assert picker.options[:2] == ["Synthpop (CART)", "Baynet (Bayesian network)"]
    assert (
        f"{plugin_installed} (plug-in, tests.generators.plugin_example:IndependentBootstrap)"
        in picker.options
    )
    picker.set_value(plugin_installed)
    at.run()
    at.text_area(key="plugin_params").input("jitter=0.1").run()
    _no_failures(at)
    assert "meets privgame's generator contract" in _texts(at.success)
    assert "one fit took" in _texts(at.success)
    assert at.button(key="launch")

    at.text_area(key="plugin_params").input("jitter=-1").run()  # fit raises: a broken contract
    assert not at.exception
    assert "does not meet privgame's generator contract" in _texts(at.error)
    assert "jitter must be >= 0" in _texts(at.error)
    assert not [b for b in at.button if b.key == "launch"], "no launch for a broken plug-in"


# -- results ---------------------------------------------------------------------------------


def test_results_show_the_summary_figures_and_table(with_runs: Path) -> None:
    at = _page("3_Results")
    _no_failures(at)
    labels = [m.label for m in at.metric]
    assert labels == [
        "Records evaluated",
        "Gap between the games",
        "Missed by the traditional game",
        "At risk in this dataset",
        "At risk on average",
    ]
    assert at.metric[0].value == "2"
    # The four figures of the paper, and the similarity test against the attack.
    assert [c.key for c in at.get("plotly_chart")][-1] == "chart-similarity"
    assert len(at.get("plotly_chart")) == 5
    assert len(at.get("download_button")) == 5
    table = at.dataframe[-1].value
    assert list(table["record_id"]) and "risk_model_seeded" in table.columns


def test_results_measure_the_utility_and_show_it_beside_the_risks(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    at = _page("3_Results")
    _no_failures(at)
    assert "Utility" in [h.value for h in at.subheader]
    assert "not measured yet" in _texts(at.caption)
    assert at.selectbox(key=f"utility-{latest.run_id}-target").value == "income"
    at.number_input(key=f"utility-{latest.run_id}-samples").set_value(2)
    at.button(key=f"utility-measure-{latest.run_id}").click().run()
    _no_failures(at)
    report = stored_utility(open_run(with_runs, latest.run_id))  # what the CLI would print
    assert report is not None and report.samples == 2 and report.target_column == "income"
    shown = {m.label: m for m in at.metric}
    assert shown["Distribution distance"].value == report.fidelity.text()
    assert "TVComplement" in shown["Distribution distance"].help
    assert shown["Association difference"].value == report.association.text()
    assert "ContingencySimilarity" in shown["Association difference"].help
    trained = shown["Model trained on synthetic"]
    assert report.downstream is not None and trained.value == report.downstream.text()
    assert "ML efficacy" in trained.help and "balanced accuracy predicting income" in trained.help
    assert shown["Model trained on D"].value == f"{report.downstream_real:.3f}"
    columns = next(d.value for d in at.dataframe if "total variation distance" in d.value.columns)
    assert set(columns["column"]) == set(report.per_column)
    assert "records-table" in [d.key for d in at.dataframe][-1:]  # the records table stays last


def test_results_threshold_and_filter_change_the_table(with_runs: Path) -> None:
    at = _page("3_Results")
    t_key = next(s.key for s in at.slider if s.key.startswith("t-"))
    at.slider(key=t_key).set_value(0.99).run()
    at.radio(key="show").set_value("at_risk").run()
    _no_failures(at)
    assert len(at.dataframe[-1].value) == 0
    assert at.metric[3].value == "0"


def test_selecting_a_row_opens_the_record(with_runs: Path) -> None:
    at = _page("3_Results")
    record_id = int(at.dataframe[-1].value["record_id"].iloc[0])
    at.session_state["records-table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert at.title[0].value == "Record"
    assert at.session_state["record_id"] == record_id


def test_results_without_finished_runs_points_to_evaluate(runs_root: Path) -> None:
    at = _page("3_Results")
    _no_failures(at)
    assert "no finished runs" in _texts(at.info)


def test_a_broken_run_is_a_message_not_a_traceback(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    (with_runs / latest.run_id / "records.parquet").write_bytes(b"not parquet")
    at = _page("3_Results", run=latest.run_id)
    assert not at.exception
    assert at.error


def test_results_say_what_was_audited_and_keep_the_groups_apart(with_release_run: Path) -> None:
    at = _page("3_Results")
    _no_failures(at)
    text = _plain(_texts(at.markdown))
    assert "The release is trained on these 210 rows. 90 rows are held back" in text
    share = _plain(_texts(at.info))
    assert "Share of D at risk." in share and "of the 210 records are at risk" in share
    assert "uniform random sample" in share
    outliers = _plain(_texts(at.warning) + _texts(at.success) + _texts(at.info))
    assert "Most outlying records:" in outliers and "of 2 at risk" in outliers
    assert "not a random sample and are not in the estimate" in outliers
    assert "worst case" not in outliers
    assert at.metric[0].label == "Records evaluated"
    assert len(at.get("plotly_chart")) == 5  # the four figures, and the similarity chart

    table = at.dataframe[-1].value
    assert set(table["audit_group"]) <= {
        "most outlying",
        "random sample (share estimate)",
        "most outlying, and in the random sample",
    }
    group = at.radio(key="group")
    assert group.options == ["every audit group", "the most outlying records",
                             "the random sample (share estimate)"]  # fmt: skip
    group.set_value("outlier").run()
    _no_failures(at)
    shown = at.dataframe[-1].value
    assert len(shown) == 2 and all("most outlying" in g for g in shown["audit_group"])
    at.radio(key="group").set_value("random").run()
    assert all("random sample" in g for g in at.dataframe[-1].value["audit_group"])


# -- record ----------------------------------------------------------------------------------


def test_record_page_shows_risks_charts_and_neighbours(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    records = pd.read_parquet(with_runs / latest.run_id / "records.parquet")
    record_id = int(records["record_id"].iloc[1])
    at = _page("4_Record", run=latest.run_id, record=str(record_id))
    _no_failures(at)
    assert at.selectbox(key=f"record-{latest.run_id}").value == record_id
    labels = [m.label for m in at.metric]
    assert labels == ["Risk in this dataset (model-seeded)", "Average risk (traditional)", "Difference"]
    expected = records.loc[records["record_id"] == record_id, "risk_model_seeded"].iloc[0]
    assert at.metric[0].value == f"{expected:.3f}"
    assert "95% interval" in _texts(at.caption)
    assert len(at.get("plotly_chart")) == 3
    profile, neighbours = at.dataframe[0].value, at.dataframe[1].value
    assert {"column", "value", "typical"} <= set(profile.columns)
    # A whole-number column's whole median reads as one ("0", not "0.0"; most gains are 0).
    assert profile.set_index("column").loc["capital-gain", "typical"] == "0"
    assert len(neighbours) == 5 and record_id not in set(neighbours["record_id"])


def test_record_page_warns_about_a_record_not_evaluated(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    at = _page("4_Record", run=latest.run_id, record="999999")
    _no_failures(at)
    assert "999999 was not evaluated" in _texts(at.warning)


def test_one_threshold_across_results_record_and_export(
    with_release_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from privgame.cli.main import main

    (info,) = list_runs(with_release_run)
    folder = open_run(with_release_run, info.run_id)
    at = _page("3_Results", run=info.run_id)
    assert at.slider(key=f"t-{info.run_id}").value == pytest.approx(folder.spec().threshold)
    at.slider(key=f"t-{info.run_id}").set_value(0.55).run()
    _no_failures(at)
    assert at.query_params["t"] in ("0.55", ["0.55"])
    # The verdict sentence is the one the command line prints at the same t.
    assert main(["report", str(folder.path), "--threshold", "0.55"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("answer"))
    # The answer wraps onto the lines that follow it, indented, until the next label.
    wrapped = [lines[first].removeprefix("answer").strip()]
    wrapped += [line.strip() for line in lines[first + 1 :][: _indented(lines[first + 1 :])]]
    sentence = " ".join(wrapped)
    assert "(t = 0.55)" in sentence
    assert sentence in _plain(_texts(at.warning) + _texts(at.info) + _texts(at.success))
    # The verdict column of the table follows t too.
    records = records_at(folder.records(), 0.55)
    shown = at.dataframe[-1].value.set_index("record_id")["verdict_model_seeded"]
    assert shown.to_dict() == records.set_index("record_id")["verdict_model_seeded"].to_dict()

    record_id = int(records["record_id"].iloc[0])
    at.query_params.update({"record": str(record_id)})
    at.switch_page("pages/4_Record.py").run()
    _no_failures(at)
    assert at.slider(key=f"record-t-{info.run_id}").value == pytest.approx(0.55)
    verdict = records["verdict_model_seeded"].iloc[0]
    assert f"**{verdict.capitalize()}.**" in _texts(at.warning) + _texts(at.info) + _texts(at.success)
    assert "t = 0.55" in _plain(_texts(at.warning) + _texts(at.info) + _texts(at.success))
    at.slider(key=f"record-t-{info.run_id}").set_value(0.6).run()

    at.switch_page("pages/6_Export.py").run()
    _no_failures(at)
    assert at.slider(key=f"export-t-{info.run_id}").value == pytest.approx(0.6)
    assert "t = 0.6" in _texts(at.markdown)

    # A link with t= opens the page at that t.
    fresh = _page("4_Record", run=info.run_id, t="0.7")
    assert fresh.slider(key=f"record-t-{info.run_id}").value == pytest.approx(0.7)


def test_results_offer_more_runs_for_undecided_records(with_release_run: Path) -> None:
    (info,) = list_runs(with_release_run)
    folder = open_run(with_release_run, info.run_id)
    records = folder.records()
    # A t inside a record's interval makes it undecided.
    row = records.loc[records["risk_model_seeded_high"] > 0.52].iloc[0]
    t = round((max(float(row["risk_model_seeded_low"]), 0.5) + float(row["risk_model_seeded_high"])) / 2, 2)
    at = _page("3_Results", run=info.run_id, t=f"{t:g}")
    _no_failures(at)
    assert at.slider(key=f"t-{info.run_id}").value == pytest.approx(t)
    undecided = undecided_records(folder, t)
    assert int(row["record_id"]) in undecided
    buttons = [b for b in at.button if b.key == f"extend-{info.run_id}"]
    (button,) = buttons
    assert f"{len(undecided):,} undecided" in button.label
    # The rungs of the doubling ladder, the first one first.
    choice = at.select_slider(key=f"extend-n-{info.run_id}")
    assert choice.value == 2 * folder.spec().attack.n_eval
    assert list(choice.options)[:3] == [str(n * folder.spec().attack.n_eval) for n in (2, 4, 8)]
    figure = at.get("plotly_chart")[2]
    assert "t = " in str(figure.proto.spec)


# -- runs --------------------------------------------------------------------------------------


def test_runs_page_lists_compares_and_deletes(with_runs: Path) -> None:
    newest, oldest = list_runs(with_runs)
    at = _page("5_Runs")
    _no_failures(at)
    overview = at.dataframe[0].value
    assert list(overview["run"]) == [newest.run_id, oldest.run_id]
    comparison = at.dataframe[-1].value
    assert list(comparison.columns) == [newest.run_id, oldest.run_id]
    assert comparison.loc["seed"].tolist() == ["1", "0"]
    widths = {k: c["width"] for k, c in json.loads(at.dataframe[-1].proto.columns).items()}
    # The labels at a fixed width, the runs sharing the rest of the page (both in view at 1440 px).
    assert widths == {"_index": "large"}
    assert not [label for label in comparison.index if re.search(r"R_MS|R_T|N_eval|D_aux", label)]

    at.selectbox(key="runs-picker").set_value(oldest.run_id).run()
    at.button(key="runs-delete").click().run()
    assert "cannot be undone" in _texts(at.warning)
    assert (with_runs / oldest.run_id).exists(), "nothing is deleted before the confirmation"
    at.button(key="runs-delete-yes").click().run()
    _no_failures(at)
    assert not (with_runs / oldest.run_id).exists()
    assert [i.run_id for i in list_runs(with_runs)] == [newest.run_id]


def test_runs_page_keeps_a_run_when_deletion_is_not_confirmed(with_runs: Path) -> None:
    at = _page("5_Runs")
    run_id = at.selectbox(key="runs-picker").value
    at.button(key="runs-delete").click().run()
    at.button(key="runs-delete-no").click().run()
    _no_failures(at)
    assert (with_runs / run_id).exists()
    assert "cannot be undone" not in _texts(at.warning)


def test_runs_page_shows_a_cancelled_run_stopping_at_once(with_runs: Path) -> None:
    """The Cancel click is acted on before the page is drawn: the run reads "stopping" in the
    list, the picker and its details on the very rerun the click makes, not after a reload."""
    import os

    (latest, *_) = list_runs(with_runs)
    folder = open_run(with_runs, latest.run_id)
    # A run in progress, with a live engine (this test process).
    folder.write_status(state="running", fits_done=10, fits_total=37, pid=os.getpid(), updated=time.time())
    at = _page("5_Runs")
    at.selectbox(key="runs-picker").set_value(latest.run_id).run()
    assert at.dataframe[0].value.set_index("run").loc[latest.run_id, "state"] == "running"
    at.button(key="runs-cancel").click().run()
    _no_failures(at)
    assert (with_runs / latest.run_id / "cancel").exists()
    assert at.dataframe[0].value.set_index("run").loc[latest.run_id, "state"] == "stopping"
    assert "**stopping**" in _texts(at.markdown)
    assert at.selectbox(key="runs-picker").format_func(latest.run_id).endswith("· stopping")
    assert not [b for b in at.button if b.key == "runs-cancel"]  # asked once


# -- export ----------------------------------------------------------------------------------


def test_export_page_offers_every_download(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    at = _page("6_Export", run=latest.run_id)
    _no_failures(at)
    labels = [b.label for b in at.get("download_button")]
    for fmt in ("CSV", "JSON", "Parquet"):
        assert f"High-risk records ({fmt})" in labels
        assert f"Per-record results ({fmt})" in labels
    assert "Run spec (JSON)" in labels and "HTML report" in labels
    records = pd.read_parquet(with_runs / latest.run_id / "records.parquet")
    at_risk = int((records["risk_model_seeded"] > 0.8).sum())
    assert f"**{at_risk:,}** of {len(records):,}" in _texts(at.markdown)


def test_export_page_offers_csv_for_spreadsheets(with_runs: Path) -> None:
    at = _page("6_Export")
    choice = at.radio(key="export-csv-kind")
    assert choice.options == [
        "Comma-separated, decimal point",
        "For spreadsheets: semicolon-separated, decimal comma",
    ]
    assert choice.value == "csv"
    choice.set_value("csv-excel").run()
    _no_failures(at)
    assert at.radio(key="export-csv-kind").value == "csv-excel"
    labels = [b.label for b in at.get("download_button")]
    assert "High-risk records (CSV)" in labels and "Per-record results (CSV)" in labels


def test_export_threshold_changes_the_high_risk_list(with_runs: Path) -> None:
    at = _page("6_Export")
    key = next(s.key for s in at.slider if s.key.startswith("export-t-"))
    at.slider(key=key).set_value(0.51).run()
    _no_failures(at)
    text = _texts(at.markdown)
    assert "t = 0.51" in text


# -- release ---------------------------------------------------------------------------------


def _accept_if_asked(at: AppTest, run_id: str) -> None:
    """Confirm a release with records not shown safe, as the owner must (a tiny run's records are
    mostly undecided)."""
    boxes = [c for c in at.checkbox if c.key == f"accept-risk-{run_id}"]
    if boxes:
        boxes[0].check().run()


def test_release_page_makes_the_release_with_both_downloads(with_release_run: Path) -> None:
    from privgame.store.folders import json_bytes

    (info,) = list_runs(with_release_run)
    at = _page("8_Release", run=info.run_id)
    _no_failures(at)
    from privgame.games.audit import run_summary
    from privgame.outputs.release import verdict_text

    expected = verdict_text(run_summary(open_run(with_release_run, info.run_id)))
    verdict = _plain(_texts(at.success) + _texts(at.warning) + _texts(at.info))
    assert f"**Verdict.** {expected}" in verdict
    assert "of 4 audited" in expected and "210 records are at risk" in expected
    assert "The release is trained on these 210 rows" in _plain(_texts(at.markdown))
    rows = at.number_input(key=f"release-rows-{info.run_id}")
    assert rows.value == 210 and at.number_input(key=f"release-seed-{info.run_id}").value == 0
    assert not at.get("download_button"), "nothing to download before the release is made"

    rows.set_value(50).run()
    _accept_if_asked(at, info.run_id)
    at.button(key="make-release").click().run()
    _no_failures(at)
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Synthetic data (CSV)", "Release card (JSON)"]
    release = at.session_state["_release"]["release"]
    table = pd.read_csv(io.BytesIO(release.csv))
    assert len(table) == 50 and "age" in table.columns
    card = json.loads(json_bytes(release.card))
    assert card["run_id"] == info.run_id and card["release"]["rows"] == 50
    assert card["generator"]["name"] == "marginals" and card["audit"]["plan"]["mode"] == "plan"
    assert card["data"]["d_rows"] == 210 and card["verdict"]

    at.number_input(key=f"release-rows-{info.run_id}").set_value(60).run()
    assert not at.get("download_button"), "a release made with other settings is not offered"
    assert "settings changed" in _texts(at.caption)


def test_release_page_asks_before_releasing_records_at_risk(with_release_run: Path) -> None:
    import numpy as np

    (info,) = list_runs(with_release_run)
    folder = open_run(with_release_run, info.run_id)
    records = folder.records()
    risk = np.array([0.95, 0.81, 0.79, 0.8])  # one at risk, three whose intervals contain t
    records = records.assign(
        risk_model_seeded=risk, risk_model_seeded_low=risk - 0.03, risk_model_seeded_high=risk + 0.03
    )
    folder.write_results(records, folder.scores(), folder.summary())
    at = _page("8_Release", run=info.run_id)
    _no_failures(at)
    assert "4 audited records are not shown safe at t = 0.8** (1 at risk, 3 undecided)" in _plain(
        _texts(at.warning)
    )
    assert at.button(key="make-release").disabled, "no release before the owner says yes"
    at.checkbox(key=f"accept-risk-{info.run_id}").check().run()
    assert not at.button(key="make-release").disabled
    at.button(key="make-release").click().run()
    _no_failures(at)
    card = at.session_state["_release"]["release"].card
    assert card["audit"]["risk_accepted"]["accepted"] is True
    assert card["audit"]["at_risk_record_ids"] == [int(records["record_id"].iloc[0])]


def test_release_page_refuses_a_table_that_was_not_audited(with_release_run: Path, adult_csv: bytes) -> None:
    (info,) = list_runs(with_release_run)
    at = _page("8_Release", run=info.run_id)
    changed = pd.read_csv(io.BytesIO(adult_csv)).iloc[:-1]
    at.file_uploader(key="release_upload").set_value(
        ("adult-new.csv", changed.to_csv(index=False).encode(), "text/csv")
    ).run()
    _accept_if_asked(at, info.run_id)
    at.button(key="make-release").click().run()
    assert not at.exception
    message = _texts(at.error)
    assert "adult-new.csv is not the table that was audited" in message
    assert "the table has 299 rows; the audited one had 300." in message
    assert not at.get("download_button")

    at.file_uploader(key="release_upload").set_value(("adult300.csv", adult_csv, "text/csv")).run()
    at.button(key="make-release").click().run()
    _no_failures(at)
    assert [b.label for b in at.get("download_button")] == ["Synthetic data (CSV)", "Release card (JSON)"]


def test_release_page_without_finished_runs_points_to_evaluate(runs_root: Path) -> None:
    at = _page("8_Release")
    _no_failures(at)
    assert "no finished runs" in _texts(at.info)


# -- data: public domain ---------------------------------------------------------------------


def test_data_page_declares_a_public_domain(runs_root: Path, adult_csv: bytes, dataset) -> None:
    from privgame.data import domain_template

    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult300.csv", adult_csv, "text/csv")).run()
    _no_failures(at)
    assert not at.session_state["dataset"].schema.domain_public

    at.text_area(key="domain_text").input('{"bounds": {"age": [0, 120]}}')
    at.button(key="domain_apply").click().run()
    _no_failures(at)
    assert "Public domain declared for 1 of 15 used columns: age." in _texts(at.success)
    assert "Still read off the data: workclass" in _texts(at.warning)
    assert at.session_state["dataset"].schema.column("age").domain_public

    at.text_area(key="domain_text").input(domain_template(dataset.schema))
    at.button(key="domain_apply").click().run()
    _no_failures(at)
    assert "Every used column has a public domain" in _texts(at.success)
    assert at.session_state["dataset"].schema.domain_public
    at.run()  # kept on the next rerun
    assert at.session_state["dataset"].schema.domain_public

    at.text_area(key="domain_text").input('{"categories": {"gender": ["Female"]}, "colours": 1}')
    at.button(key="domain_apply").click().run()
    assert not at.exception
    message = _texts(at.error)
    assert "unknown key 'colours'" in message and "Traceback" not in message
    assert not at.session_state["dataset"].schema.domain_public

    at.text_area(key="domain_text").input('{"categories": {"gender": ["Female"]}}')
    at.button(key="domain_apply").click().run()
    assert not at.exception
    assert "'gender'" in _texts(at.error) and "not among its categories" in _texts(at.error)
    assert not at.session_state["dataset"].schema.column("gender").domain_public

    at.text_area(key="domain_text").input('{"bounds": {"age": [0, 120]}}')
    at.button(key="domain_apply").click().run()
    assert at.session_state["dataset"].schema.column("age").domain_public
    at.button(key="domain_remove").click().run()
    _no_failures(at)
    assert not at.session_state["dataset"].schema.column("age").domain_public
    assert "Public domain declared" not in _texts(at.success)


@pytest.mark.parametrize(
    ("damaged", "fix"),
    [("spec.json", "start a new run from the original data file"), ("status.json", "Resume the run")],
)
def test_a_damaged_run_is_named_with_its_fix_on_evaluate_and_runs(
    with_runs: Path, dataset, damaged: str, fix: str
) -> None:
    (latest, *_) = list_runs(with_runs)
    (with_runs / latest.run_id / damaged).write_text("{ not json")
    at = _app()
    at.session_state["dataset"] = dataset
    at.session_state["launched"] = latest.run_id
    at.session_state["launched_from"] = dataset.fingerprint
    at.switch_page("pages/2_Evaluate.py").run()
    assert not at.exception
    message = _plain(_texts(at.error))
    assert message.startswith(f"{damaged} of run {latest.run_id}") and fix in message, message
    assert "**damaged**" in _texts(at.markdown)

    at.switch_page("pages/5_Runs.py").run()
    assert not at.exception
    overview = at.dataframe[0].value.set_index("run")
    assert overview.loc[latest.run_id, "state"] == "damaged"
    assert fix in overview.loc[latest.run_id, "problem"]


def _indented(lines: list[str]) -> int:
    """How many of ``lines`` continue the value above them (indented, with no label of their own)."""
    count = 0
    for line in lines:
        if not line.startswith(" " * 20):
            break
        count += 1
    return count


def test_one_meaning_of_at_risk_across_pages_report_exports_and_card(
    with_release_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "At risk" is the verdict everywhere: the same records on the pages, in `report`, the HTML
    # report, both exports, the release card and `compare`, at the same t.
    import numpy as np

    from privgame.analysis.compare import compare_runs
    from privgame.cli.main import main
    from privgame.games.audit import run_summary
    from privgame.outputs.release import release_card
    from privgame.outputs.run_report import export_table, html_report

    (info,) = list_runs(with_release_run)
    folder = open_run(with_release_run, info.run_id)
    # Risks with narrow intervals (a tiny run's are wide): two at risk, and 0.81 above t but
    # undecided, its interval reaching below t.
    records = folder.records()
    risk = np.array([0.95, 0.9, 0.81, 0.3])
    assert len(records) == len(risk)
    records = records.assign(
        risk_model_seeded=risk, risk_model_seeded_low=risk - 0.02, risk_model_seeded_high=risk + 0.02
    )
    folder.write_results(records, folder.scores(), folder.summary())
    t = 0.8
    at_t = records_at(folder.records(), t)
    expected = sorted(int(r) for r in at_t.loc[at_t["verdict_model_seeded"] == "at risk", "record_id"])
    n = len(expected)
    assert n == 2 and (at_t["risk_model_seeded"] > t).sum() == 3
    # A record whose point risk is above t but whose interval is not wholly above it is not at risk.
    summary = run_summary(folder, t)
    assert summary["at_risk_model_seeded"] == summary["answer"]["counts"]["at risk"] == n
    assert summary["answer"]["text"].startswith(f"{n} record{'s' if n > 1 else ''} at risk")

    assert sorted(export_table(folder.records(), "high-risk", t)["record_id"]) == expected
    everything = export_table(folder.records(), "records", t)
    assert int((everything["verdict_model_seeded"] == "at risk").sum()) == n

    card = release_card(folder, rows=10, seed=0, threshold=t)
    assert card["audit"]["at_risk_record_ids"] == expected
    assert card["audit"]["at_risk_model_seeded"] == card["audit"]["verdicts"]["at risk"] == n

    assert int(compare_runs([folder], t)["at_risk"].iloc[0]) == n
    assert main(["report", str(folder.path), "--threshold", str(t)]) == 0
    assert f"at risk (verdict)   model-seeded {n}," in capsys.readouterr().out
    page = html_report(folder, t)
    listed = page[page.index("<table class='high-risk'") :]
    listed = listed[listed.index("<tbody>") : listed.index("</tbody>")]
    assert listed.count("<tr>") == n
    assert all(f"<td class='num'>{r}</td>" in listed for r in expected)

    at = _page("3_Results", run=info.run_id, t=str(t))
    _no_failures(at)
    assert at.slider(key=f"t-{info.run_id}").value == pytest.approx(t)
    metric = next(m for m in at.metric if m.label == "At risk in this dataset")
    assert metric.value == str(n)
    at.radio(key="show").set_value("at_risk").run()
    assert sorted(int(r) for r in at.dataframe[-1].value["record_id"]) == expected


def test_record_page_says_what_a_risk_below_one_half_means(with_runs: Path) -> None:
    (latest, *_) = list_runs(with_runs)
    records = pd.read_parquet(with_runs / latest.run_id / "records.parquet")
    lowest = records.loc[records["risk_model_seeded"].idxmin()]
    at = _page("4_Record", run=latest.run_id, record=str(int(lowest["record_id"])))
    _no_failures(at)
    said = "Below 0.5: the attack scored this record's 'out' runs above its 'in' runs" in _texts(at.caption)
    assert said == (float(lowest["risk_model_seeded"]) < 0.5)
    profile = at.dataframe[0].value
    kinds = set(profile["role"])
    assert ("typical_is" in profile.columns) == (len(kinds) > 1)  # only when modes and medians mix


def test_results_page_during_a_first_run_says_it_is_under_way(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = create_run(tmp_path, _tiny_spec(dataset), dataset.table)
    folder.write_status(state="running", fits_done=30, fits_total=120)
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path))
    at = _page("3_Results")
    _no_failures(at)
    said = _texts(at.info)
    assert f"No run has finished yet: {folder.run_id} is under way (25% of its generator fits)" in said
    assert "There are no finished runs" not in said
    runs = _page("5_Runs")
    table = runs.dataframe[0].value
    assert list(table["progress"]) == [25] and list(table["records"]) == [""]


def test_launch_waits_while_the_audit_launched_here_is_under_way(
    runs_root: Path, dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame.runs.background

    monkeypatch.setattr(privgame.runs.background, "launch", lambda folder, **kw: None)
    at = _evaluate_release(dataset)
    assert not at.button(key="launch").disabled
    at.button(key="launch").click().run()
    (info,) = list_runs(runs_root)
    open_run(runs_root, info.run_id).write_status(state="running", fits_done=1, fits_total=10)
    at.run()
    _no_failures(at)
    assert at.button(key="launch").disabled
    assert f"The audit launched from this page, {info.run_id}, is under way" in _texts(at.caption)
    open_run(runs_root, info.run_id).write_status(state="done")
    at.run()
    assert not at.button(key="launch").disabled  # ended: the next one may go


def test_exact_twins_are_said_on_the_data_and_results_pages(
    runs_root: Path, adult_csv: bytes, with_runs: Path
) -> None:
    table = pd.read_csv(io.BytesIO(adult_csv))
    twinned = pd.concat([table, table.head(7)], ignore_index=True).to_csv(index=False).encode()
    at = _page("1_Data")
    at.file_uploader[0].set_value(("twins.csv", twinned, "text/csv")).run()
    _no_failures(at)
    assert "Exact duplicates: 7 rows repeat an earlier row on the used columns" in _texts(at.info)

    (latest, *_) = list_runs(with_runs)
    twins = open_run(with_runs, latest.run_id).summary()["twins"]
    results = _page("3_Results", run=latest.run_id)
    _no_failures(results)
    said = "Exact twins: " in _texts(results.info)
    assert said == bool(twins["in_d"] or twins["in_population"])


def test_the_data_page_shows_the_chosen_table_roles_and_set_up_when_revisited(
    runs_root: Path, adult_csv: bytes
) -> None:
    at = _page("1_Data")
    at.file_uploader[0].set_value(("adult300.csv", adult_csv, "text/csv")).run()
    rows = list(at.data_editor[0].value["column"])
    key = at.data_editor[0].key
    _edit_roles(at, key, {rows.index("age"): {"role": "excluded"}})
    at.run()
    at.radio(key="missing_policy").set_value("category").run()
    at.radio(key="setup_kind").set_value("paper").run()
    at.number_input(key="size_target_300").set_value(40).run()
    _no_failures(at)
    chosen = at.session_state["dataset"]

    at.switch_page("pages/2_Evaluate.py").run()  # away: Streamlit forgets the Data page's widgets
    at.switch_page("pages/1_Data.py").run()
    _no_failures(at)
    assert "Using adult300.csv, uploaded earlier" in _texts(at.caption)
    assert at.data_editor[0].value.set_index("column").loc["age", "role"] == "excluded"
    assert "age → excluded" in _texts(at.caption)
    assert at.radio(key="missing_policy").value == "category"
    assert at.radio(key="setup_kind").value == "paper"
    assert at.number_input(key="size_target_300").value == 40
    assert at.session_state["dataset"].fingerprint == chosen.fingerprint
    assert at.session_state["setup"]["sizes"].target == 40
