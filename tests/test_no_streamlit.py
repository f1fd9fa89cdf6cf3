"""The privgame package never imports Streamlit: the backend does not depend on the UI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SCRIPT = """
import importlib, pkgutil, sys
import privgame
names = [m.name for m in pkgutil.walk_packages(privgame.__path__, "privgame.")]
for name in names:
    importlib.import_module(name)
assert "privgame.cli.main" in names and "privgame.data.loading" in names, names
loaded = sorted(m for m in sys.modules if m == "streamlit" or m.startswith("streamlit."))
assert not loaded, loaded
print(len(names))
"""


def test_no_privgame_module_imports_streamlit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 10


BLOCKED = """
import sys
for name in ("plotly", "streamlit"):
    sys.modules[name] = None  # any import of them now fails
import tempfile
import privgame.cli.main  # every command parses without the UI libraries
import pandas as pd
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import start_run
from privgame.outputs.release import make_release
from privgame.settings.setups import release_inputs
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
root = tempfile.mkdtemp()
pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(root + "/d.csv", index=False)
data = load_dataset(root + "/d.csv")
inputs = release_inputs(data, seed=0)
spec = RunSpec(data_name="d.csv", data_fingerprint=inputs.fingerprint, schema=inputs.schema.to_dict(),
               sizes=inputs.sizes, generator="baynet", attack=AttackSettings(n_shadow=4, n_eval=4),
               targets=TargetSelection.plan(1, 1), setup=inputs.setup)
folder = start_run(root + "/runs", spec, inputs.table, workers=1)
print(len(folder.records()), len(make_release(folder, rows=5, accept_risk=True).table))
# a study too: its table and figure data, and no figure (the renderer needs plotly)
from privgame.studies import StudySpec, create_study, execute_study, study_results
base = RunSpec(data_name="d.csv", data_fingerprint=data.fingerprint, schema=data.schema.to_dict(),
               sizes={"aux": 100, "eval": 100, "target": 40}, generator="baynet",
               attack=AttackSettings(n_shadow=4, n_eval=4), targets=TargetSelection(mode="random", k=1))
study = execute_study(create_study(root + "/runs", StudySpec("size", base, sizes=(20, 40)), data.table),
                      workers=1)
print(study.status()["state"], len(study_results(study).table), (study.path / "figure.html").exists())
for name in ("plotly", "streamlit", "privgame.outputs.study_figures", "privgame.outputs.figures",
             "privgame.outputs.run_report"):
    assert sys.modules.get(name) is None, name
"""


def test_an_audit_a_release_and_a_study_run_without_plotly_or_streamlit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "5", "done", "2", "False"]
