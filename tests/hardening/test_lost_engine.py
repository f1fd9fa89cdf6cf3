"""A run whose process ends without a word (a plug-in calling ``os._exit(0)`` in one process)
is never left "running": every later read says that it failed and how to resume it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from _hardening import REPO, cli_command

import privgame
from privgame.cli.main import main
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder

PLUGIN = '''
import os
from pathlib import Path

import numpy as np

MARKER = Path(__file__).with_name("end-the-process")


class EndsTheProcess:
    """Resamples the training rows; once MARKER exists, ends its process with status 0."""

    def fit(self, X, schema, *, rng):
        self.rows_ = np.asarray(X, dtype=np.float64)
        return self

    def sample(self, n, *, rng):
        if MARKER.exists():
            os._exit(0)
        return self.rows_[rng.integers(0, len(self.rows_), n)].copy()
'''


def test_a_plugin_that_ends_the_process_mid_run_leaves_a_run_that_reads_as_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "ends_the_process_plugin.py").write_text(PLUGIN)
    marker = plugins / "end-the-process"
    data = tmp_path / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(data, index=False)
    out = tmp_path / "runs"
    args = ["run", "--data", str(data), "--generator", "ends_the_process_plugin:EndsTheProcess"]
    args += ["--outliers", "1", "--random", "1", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    proc = subprocess.Popen(
        cli_command(*args, "--quiet", "--out", str(out)),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(plugins)])},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    stderr = proc.stderr
    assert stderr is not None
    reader = threading.Thread(target=lambda: said.extend(iter(lambda: stderr.read(1), "")))
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while "run folder: " not in "".join(said):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(said)
            time.sleep(0.02)
        marker.touch()  # the run proper has started: the plug-in ends the process at its next sample
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        reader.join(timeout=10)
    # A process that ends itself sets its own exit status: privgame's code runs no more.
    assert proc.returncode == 0, "".join(said)
    (path,) = [p for p in out.iterdir() if p.is_dir()]
    folder = RunFolder(path)
    assert folder.status()["state"] == "running"  # as the engine last wrote it

    resume = f"resume it with: python -m privgame resume {path}"
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"Run {path.name} failed: the process that ran it ended before the run finished" in err
    assert resume in err and "os._exit" in err
    assert privgame.open(path).state == "failed"

    marker.unlink()
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), str(plugins)]))
    assert main(["resume", str(path), "--workers", "1", "--quiet"]) == 0
    assert folder.status()["state"] == "done" and privgame.open(path).state == "done"
    assert main(["report", str(path)]) == 0
    sys.modules.pop("ends_the_process_plugin", None)
