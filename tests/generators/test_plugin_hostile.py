"""Plug-ins that meet the contract before a run and break it during the run are stopped there."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privgame.cli import main
from privgame.data import BUNDLED_ADULT
from privgame.store import RunFolder

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.generators.hostile_plugin:TurnsHostile"


@pytest.fixture
def owner_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(ROOT))  # as `python -m privgame` from the repository root
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    path = tmp_path / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(path, index=False)
    return path


def _run(owner_csv: Path, out: Path, mode: str) -> int:
    from tests.generators import hostile_plugin

    hostile_plugin.CALLS = 0
    args = ["run", "--data", str(owner_csv), "--generator", PLUGIN, "--param", f"mode={mode}"]
    args += ["--outliers", "1", "--random", "1", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    return main([*args, "--quiet", "--out", str(out)])


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
def test_a_plugin_that_turns_hostile_mid_run_fails_the_run_with_the_reason(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, message: str
) -> None:
    out = tmp_path / "runs"
    assert _run(owner_csv, out, mode) == 2
    err = capsys.readouterr().err
    assert f"The plug-in generator {PLUGIN}" in err and message in err
    assert "Traceback" not in err
    (folder,) = [RunFolder(p) for p in out.iterdir()]
    assert folder.status()["state"] == "failed" and message in folder.status()["error"]
    assert main(["release", str(folder.path), "-o", str(tmp_path / "synthetic.csv")]) == 2
    assert not (tmp_path / "synthetic.csv").exists()


def test_a_plugin_that_prints_does_not_write_into_privgame_output(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(owner_csv, tmp_path / "runs", "prints") == 0
    captured = capsys.readouterr()
    assert "HOSTILE PRINT" not in captured.out and "HOSTILE PRINT" in captured.err
