"""`python -m privgame synth`: a synthetic release, byte-identical for the same seed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synth") / "small.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=400).to_csv(path, index=False)
    return path


def _synth(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "privgame", "synth", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("generator", ["synthpop", "baynet", "privbayes"])
def test_same_seed_same_bytes_and_the_input_columns(small: Path, tmp_path: Path, generator: str) -> None:
    outs = []
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        out = tmp_path / f"{name}.csv"
        result = _synth(
            "--data", str(small), "--generator", generator, "--rows", "50", "--seed", seed, "-o", str(out)
        )
        assert result.returncode == 0, result.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]
    synthetic = pd.read_csv(tmp_path / "a.csv")
    original = pd.read_csv(small)
    assert list(synthetic.columns) == list(original.columns) and len(synthetic) == 50
    assert synthetic["age"].dtype.kind == "i"


def test_privbayes_states_when_its_guarantee_does_not_hold(small: Path, tmp_path: Path) -> None:
    result = _synth(
        "--data", str(small), "--generator", "privbayes", "--rows", "5", "-o", str(tmp_path / "o.csv")
    )
    assert result.returncode == 0
    assert "guarantee does not hold" in result.stderr


def test_a_declared_domain_is_checked_against_the_data(small: Path, tmp_path: Path) -> None:
    domain = tmp_path / "domain.json"
    domain.write_text(json.dumps({"categories": {"gender": ["Female"]}}))
    result = _synth(
        "--data",
        str(small),
        "--generator",
        "privbayes",
        "--rows",
        "5",
        "--domain",
        str(domain),
        "-o",
        str(tmp_path / "o.csv"),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "'gender'" in result.stderr and "not among its categories" in result.stderr


def test_bad_options_exit_2_with_the_fix(small: Path, tmp_path: Path) -> None:
    result = _synth(
        "--data",
        str(small),
        "--generator",
        "baynet",
        "--epsilon",
        "1",
        "--rows",
        "5",
        "-o",
        str(tmp_path / "o.csv"),
    )
    assert result.returncode == 2 and "--epsilon does not apply to the baynet generator" in result.stderr
    result = _synth("--data", str(small), "--generator", "nope", "--rows", "5", "-o", str(tmp_path / "o.csv"))
    assert result.returncode == 2 and "Unknown generator 'nope'" in result.stderr
