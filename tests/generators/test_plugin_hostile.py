"""Plug-ins that meet the contract before a run and break it during the run are stopped there."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import privgame.games.engine
from privgame.cli.main import main
from privgame.core.defaults import PLUGIN_TIME_LIMIT_SETTING
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.generators.hostile_plugin:TurnsHostile"
SUBCLASS = "tests.generators.hostile_plugin:HostileSubclass"


@pytest.fixture
def owner_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tests.generators import hostile_plugin

    monkeypatch.syspath_prepend(str(ROOT))  # as `python -m privgame` from the repository root
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    execute = privgame.games.engine.execute

    def armed(*args: Any, **kwargs: Any) -> Any:
        """The run proper: from here the plug-in turns hostile after its ``after`` samples."""
        monkeypatch.setattr(hostile_plugin, "ARMED", True)
        return execute(*args, **kwargs)

    monkeypatch.setattr(privgame.games.engine, "execute", armed)
    path = tmp_path / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(path, index=False)
    return path


def _run(owner_csv: Path, out: Path, mode: str, *extra: str, workers: int = 1, plugin: str = PLUGIN) -> int:
    from tests.generators import hostile_plugin

    hostile_plugin.CALLS = 0
    hostile_plugin.ARMED = False
    args = ["run", "--data", str(owner_csv), "--generator", plugin, "--param", f"mode={mode}"]
    args += ["--param", f"main_pid={os.getpid()}"]
    args += ["--outliers", "1", "--random", "1", "--n-shadow", "8", "--n-eval", "8"]
    return main([*args, "--workers", str(workers), *extra, "--quiet", "--out", str(out)])


def _failed_run(out: Path, message: str, tmp_path: Path) -> RunFolder:
    """The one run folder under ``out``, failed with ``message``; nothing can be released from it."""
    (folder,) = [RunFolder(p) for p in out.iterdir()]
    assert folder.status()["state"] == "failed" and message in folder.status()["error"]
    assert main(["release", str(folder.path), "-o", str(tmp_path / "synthetic.csv")]) == 2
    assert not (tmp_path / "synthetic.csv").exists()
    return folder


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("nan-values", "NaN or infinite values"),
        ("bad-codes", "must return integer codes"),
        ("wrong-shape", "returned shape"),
        ("raises", "failed in sample(): RuntimeError: the plug-in broke"),
        ("exits", "called sys.exit(0) in sample()"),
    ],
)
@pytest.mark.parametrize("plugin", [PLUGIN, SUBCLASS], ids=["protocol", "subclass"])
def test_a_plugin_that_turns_hostile_mid_run_fails_the_run_with_the_reason(
    owner_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    message: str,
    plugin: str,
) -> None:
    out = tmp_path / "runs"
    assert _run(owner_csv, out, mode, plugin=plugin) == 2
    err = capsys.readouterr().err
    assert f"The plug-in generator {plugin}" in err and message in err
    assert "Traceback" not in err
    _failed_run(out, message, tmp_path)


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "worker-processes"])
def test_a_plugin_call_over_the_time_limit_is_stopped_and_fails_the_run(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: int
) -> None:
    out = tmp_path / "runs"
    started = time.perf_counter()
    assert _run(owner_csv, out, "sleeps", "--plugin-time-limit", "1", workers=workers) == 2
    assert time.perf_counter() - started < 120  # the plug-in sleeps 600 s per call
    err = capsys.readouterr().err
    message = "took longer than the limit of 1 s in one call of sample()"
    assert f"The plug-in generator {PLUGIN} {message}" in err and "--plugin-time-limit" in err
    assert "Traceback" not in err
    _failed_run(out, message, tmp_path)
    assert PLUGIN_TIME_LIMIT_SETTING not in os.environ  # the limit was for that command only


def test_the_time_limit_must_be_a_positive_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["resume", "somewhere", "--plugin-time-limit", "0"])
    assert "give a positive number of seconds, not '0'" in capsys.readouterr().err


@pytest.mark.parametrize(("mode", "code"), [("ends-worker", "EXIT(3)"), ("killed", "SIGKILL(-9)")])
def test_a_worker_that_dies_mid_run_fails_the_run_and_the_printed_resume_finishes_it(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, code: str
) -> None:
    out = tmp_path / "runs"
    assert _run(owner_csv, out, mode, workers=2) == 2
    err = capsys.readouterr().err
    assert re.search(rf"A worker process ended in the middle of its work \({re.escape(code)}[,)]", err)
    assert "Traceback" not in err
    folder = _failed_run(out, "A worker process ended", tmp_path)
    assert f"python -m privgame resume {folder.path}" in err
    # The broken pool of workers is not handed to the next run in this process.
    assert _run(owner_csv, tmp_path / "next", "prints", workers=2) == 0
    # In one process the plug-in does not end its process (as the message's second hint says).
    assert main(["resume", str(folder.path), "--workers", "1", "--quiet"]) == 0
    assert folder.status()["state"] == "done"


def test_a_plugin_that_prints_does_not_write_into_privgame_output(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(owner_csv, tmp_path / "runs", "prints") == 0
    captured = capsys.readouterr()
    assert "HOSTILE PRINT" not in captured.out and "HOSTILE PRINT" in captured.err
