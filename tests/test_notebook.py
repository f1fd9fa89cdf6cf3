"""The Python API's notebook (docs/notebook.ipynb) runs end to end: every code cell in order, in
one namespace, with its parameters cell's values replaced by small ones (as papermill would)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook.ipynb"


def test_the_notebook_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert all(not cell["outputs"] for cell in cells), "commit the notebook without outputs"
    parameters = [i for i, cell in enumerate(cells) if "parameters" in cell["metadata"].get("tags", [])]
    assert parameters == [0]
    data = tmp_path / "adult500.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=500).to_csv(data, index=False)
    small = (
        f"DATA = {str(data)!r}\nROWS = None\nRUNS = {str(tmp_path / 'runs')!r}\n"
        "SETTINGS = dict(outliers=1, random=2, n_shadow=8, n_eval=8, screen_shadows=40, workers=1,"
        " progress=False)\n"
    )
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for i, cell in enumerate(cells):
        exec(compile("".join(cell["source"]), f"{NOTEBOOK.name}, code cell {i}", "exec"), namespace)
        if i == 0:
            exec(small, namespace)
    audit = namespace["audit"]
    assert audit.state == "done" and namespace["fixed"].state == "done"
    assert (tmp_path / "adult-report.html").exists() and (tmp_path / "adult-high-risk.csv").exists()
    fixed = namespace["fixed"].spec  # a leave-out remedy releases its parent's number of rows
    assert len(pd.read_csv(tmp_path / "adult-release.csv")) == fixed.setup.synthetic_rows
    assert fixed.setup.synthetic_rows == audit.spec.sizes["target"] > fixed.sizes["target"]
