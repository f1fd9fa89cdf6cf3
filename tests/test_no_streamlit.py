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
assert "privgame.cli" in names and "privgame.data.loading" in names, names
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
