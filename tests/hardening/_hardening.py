"""Helpers of the hardening tests: a small run spec and the command line.

Imported by name (``from _hardening import ...``): pytest puts this folder on ``sys.path``, and
a ``conftest`` module cannot be imported reliably when several test folders have one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from privgame.data import load_dataset
from privgame.spec import AttackSettings, RunSpec, TargetSelection

REPO = Path(__file__).resolve().parents[2]
SIZES = {"aux": 700, "eval": 600, "target": 60}
"""Sizes of a small run on 1,500 rows (as in tests/games/test_engine.py)."""


def small_spec(path: Path, generator: str = "synthpop", **kwargs: object) -> tuple[RunSpec, pd.DataFrame]:
    """A run spec of a few seconds on the table at ``path``, and the prepared table."""
    dataset = load_dataset(path)
    options: dict[str, object] = {
        "attack": AttackSettings(n_shadow=20, n_eval=20),
        "targets": TargetSelection("random", 3),
        "seed": 7,
    }
    options.update(kwargs)
    spec = RunSpec(
        data_name=path.name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=dict(SIZES),
        generator=generator,
        **options,  # type: ignore[arg-type]
    ).validate()
    return spec, dataset.table


def cli_command(*args: str) -> list[str]:
    """The command line of ``python -m privgame ARGS`` with this interpreter."""
    return [sys.executable, "-m", "privgame", *args]


def cli(*args: str, timeout: float = 180, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``python -m privgame ARGS`` from the repository root and wait for it."""
    return subprocess.run(
        [*prefix, *cli_command(*args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
