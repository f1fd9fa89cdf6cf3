"""Ctrl-C during ``run``: the run folder and the exact ``resume`` command, exit 130, no traceback."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "adult700.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=700).dropna().to_csv(path, index=False)
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def test_ctrl_c_prints_the_resume_command_and_resume_finishes_the_run(
    small_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "runs"
    # Long enough (about 10 s with one worker) that the run is still going when the test, reading
    # its output on a loaded machine, sends Ctrl-C: with 40 + 40 datasets it took 2 s and could end first.
    command = [
        sys.executable, "-m", "privgame", "run", "--data", str(small_csv), "--generator", "marginals",
        "--outliers", "2", "--random", "2", "--n-shadow", "200", "--n-eval", "200", "--workers", "1",
        "--screen-shadows", "200", "--confirm-top", "0", "--out", str(out),
    ]  # fmt: skip
    # The screen runs first (its units are the first the bar counts), so Ctrl-C most often lands in
    # it, and resume finishes the screen, then the exact game.
    # A child inherits an ignored SIGINT, and a shell without job control starts background jobs
    # (``pytest ... &``) with SIGINT ignored: the run would then never see the Ctrl-C. A handler set
    # here is reset to the default in the child when it starts, as in a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(iter(lambda: proc.stderr.read(1), "")))  # type: ignore[union-attr]
    reader.start()
    deadline = time.monotonic() + 120
    while "units " not in "".join(said):  # the engine has started its units of work
        assert proc.poll() is None, "".join(said)
        assert time.monotonic() < deadline, "".join(said)
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    proc.stdout.close()  # type: ignore[union-attr]
    stderr = "".join(said)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    assert f"run folder: {folder}" in stderr.split("units ")[0]  # printed before the work starts
    assert f"The run folder {folder} keeps every finished unit of work" in stderr
    resume = stderr.split("Resume it with: ", 1)[1].splitlines()[0]
    assert resume == f"python -m privgame resume {shlex.quote(str(folder))} --workers 1"
    assert json.loads((folder / "status.json").read_text())["state"] != "done"

    argv = shlex.split(resume)
    assert argv[:3] == ["python", "-m", "privgame"]
    done = subprocess.run(
        [sys.executable, *argv[1:]], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((folder / "status.json").read_text())["state"] == "done"
    assert "records evaluated   4" in done.stdout
    assert (folder / "screen.parquet").is_file()
    assert "screened            every one of the" in done.stdout
