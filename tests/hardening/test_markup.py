"""Text from the data is shown as text on every page: never markup, a link or an image.

A column name, a category value or an uploaded file name such as ``![x](http://beacon.invalid/x.png)``
would, rendered as Markdown, make the browser fetch a third party's image: a beacon that says the
file was opened, and leaks its name. Every page is run here (Streamlit's AppTest) on a run made
from a table whose names and values are all hostile, and every string that Streamlit renders as
Markdown (texts, alerts, titles, captions, widget labels, help, radio options) is checked: once
the escapes of :func:`pages.plain` are taken away, none may still hold a link, an image, HTML or
a Streamlit colour or icon directive. The real browser test (``tests/e2e``) checks the same
upload for requests that leave this machine.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import start_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs
from privgame.store.folders import RunFolder

ROOT = Path(__file__).resolve().parents[2]
BEACON = "http://beacon.invalid"
HOSTILE_FILE = f"t![f]({BEACON}/file.png).csv"
RENAMES = {
    "workclass": f"![c]({BEACON}/column.png)",
    "education": "<img src=x onerror=alert(1)>",
    "race": ":red[race] :material/warning:",
    "gender": "[click](javascript:alert(1))",
}
HOSTILE_VALUE = f"![v]({BEACON}/value.png)"
# Markdown constructs that must never survive once the escapes are removed: an image or link, raw
# HTML, Streamlit's colour and icon directives, and an autolink.
UNSAFE = re.compile(r"!?\[[^\]]*\]\(|<img|<a\s|:red\[|:material/warning|<https?:")


def _hostile_table() -> pd.DataFrame:
    table = pd.read_csv(BUNDLED_ADULT, nrows=400, na_values=["?"]).dropna().head(260)
    table = table.rename(columns=RENAMES)
    column = RENAMES["workclass"]
    table.loc[table.index[:40], column] = HOSTILE_VALUE
    return table


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("markup")
    data = root / "upload.csv"
    _hostile_table().to_csv(data, index=False)
    dataset = load_dataset(data, filename=HOSTILE_FILE)
    inputs = release_inputs(dataset, seed=0)
    spec = RunSpec(
        data_name=HOSTILE_FILE,
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator="marginals",
        attack=AttackSettings(n_shadow=6, n_eval=6),
        targets=TargetSelection.plan(outliers=1, random=2),
        seed=0,
        setup=inputs.setup,
    )
    folder = start_run(root / "runs", spec, inputs.table, workers=1)
    return root, folder.run_id


PLAIN_VALUES = {"code", "json", "text", "selectbox", "multiselect", "text_input", "text_area", "number_input"}
"""Elements whose value Streamlit shows as plain text (a code block, JSON, an input's content)."""


def _strings(node: Any) -> Iterator[str]:
    """Every string of ``node`` (an AppTest element or block) that Streamlit renders as Markdown."""
    kind = getattr(node, "type", "")
    attrs = (
        ("label", "help", "caption")
        if kind in PLAIN_VALUES
        else ("value", "body", "label", "help", "caption")
    )
    for attr in attrs:
        try:
            found = getattr(node, attr, None)
        except Exception:  # some elements compute their value from a missing widget state
            continue
        if isinstance(found, str):
            yield found
    if kind == "radio":
        yield from (str(option) for option in node.options)
    for child in getattr(node, "children", {}).values():
        yield from _strings(child)


def _unsafe(at: AppTest) -> list[str]:
    bad = []
    for text in _strings(at._tree):
        unescaped = re.sub(r"\\.", "", text)
        if UNSAFE.search(unescaped):
            bad.append(text)
    return bad


PAGES = ("1_Data", "2_Evaluate", "3_Results", "4_Record", "5_Runs", "6_Export", "8_Release")


@pytest.mark.parametrize("page", ("home", *PAGES))
def test_hostile_names_and_values_are_shown_as_text(
    hostile_runs: tuple[Path, str], page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, run_id = hostile_runs
    monkeypatch.setenv("PRIVGAME_RUNS", str(root / "runs"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["dataset"] = load_dataset(root / "upload.csv", filename=HOSTILE_FILE)
    at.session_state["setup"] = {"kind": "release", "population": None, "holdout": 0.3}
    at.run()
    if page != "home":
        at.query_params.update({"run": run_id})
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    seen = "\n".join(_strings(at._tree))
    if page in ("home", "1_Data", "2_Evaluate", "3_Results"):
        assert "beacon" in seen, "the hostile name should be on this page, as text"
    assert _unsafe(at) == []


def test_errors_paths_and_failed_runs_are_shown_as_text(
    hostile_runs: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's error (a plug-in's exception text, a file name), the runs folder's path and an
    error message naming a hostile file are free text from outside privgame: text, not markup."""
    source, run_id = hostile_runs
    root = tmp_path / f"![r]({BEACON}/root.png)"
    shutil.copytree(source / "runs", root)
    folder = RunFolder(root / run_id)
    folder.write_status(state="failed", error=f"RuntimeError: ![e]({BEACON}/error.png) <img src=x>")
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    dataset = load_dataset(source / "upload.csv", filename=HOSTILE_FILE)
    for page in ("2_Evaluate", "5_Runs", "7_Studies", "9_Remedies"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["dataset"] = dataset
        at.session_state["setup"] = {"kind": "release", "population": None, "holdout": 0.3}
        at.session_state["launched"] = run_id
        at.session_state["launched_from"] = dataset.fingerprint
        at.run()
        at.query_params.update({"run": run_id})
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        if page == "2_Evaluate":
            shown = re.sub(r"\\(.)", r"\1", "\n".join(_strings(at._tree)))
            assert f"The run failed: RuntimeError: ![e]({BEACON}/error.png)" in shown
        assert _unsafe(at) == [], page


def test_an_error_naming_a_hostile_file_is_shown_as_text() -> None:
    def script() -> None:
        from pages import show_error
        from privgame.core.errors import DataError

        name = "![f](http://beacon.invalid/file.png).csv"
        show_error(DataError(f"{name} is not a CSV file.", [f"line 3 of {name}: <img src=x>"]))
        show_error(ValueError(f"[click](javascript:alert(1)) {name}"))

    at = AppTest.from_function(script, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [e.value for e in at.error]
    assert len(texts) == 2 and all("beacon" in text for text in texts)
    assert _unsafe(at) == []
