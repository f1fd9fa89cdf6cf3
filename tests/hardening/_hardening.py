"""Helpers of the hardening tests: the command line (the small run spec is ``tests/builders.py``'s).

Imported by name (``from _hardening import ...``): pytest puts this folder on ``sys.path``, and
a ``conftest`` module cannot be imported reliably when several test folders have one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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
