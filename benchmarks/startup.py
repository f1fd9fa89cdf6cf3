"""Start-up time of the command line: ``python -m privgame --version`` and ``--help``.

Each is run 5 times as a fresh process (the interpreter's own start included) and the minimum
wall-clock time is printed, beside a bare ``python -c pass`` for reference. Target: 0.7 s or less
for both.

Run from the repository root: ``python benchmarks/startup.py [--json] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 0.7
COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "python -m privgame --version": ["-m", "privgame", "--version"],
    "python -m privgame --help": ["-m", "privgame", "--help"],
    "python -m privgame run --help": ["-m", "privgame", "run", "--help"],
}


def best_of(argv: list[str], repeats: int) -> float:
    """The minimum wall-clock seconds of ``repeats`` fresh runs of ``python argv``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    """Print the start-up times; exit 1 when ``--version`` or ``--help`` is over the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    results = {name: best_of(argv, args.repeats) for name, argv in COMMANDS.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    over = [
        n
        for n in ("python -m privgame --version", "python -m privgame --help")
        if results[n] > TARGET_SECONDS
    ]
    if args.json:
        print(json.dumps({"seconds": results, "load_1min": load, "target": TARGET_SECONDS, "over": over}))
    else:
        print(f"start-up, minimum of {args.repeats} runs (1-minute load average {load:.2f}):")
        for name, seconds in results.items():
            print(f"  {name:<32} {seconds:6.3f} s")
        print(f"target: --version and --help in {TARGET_SECONDS} s or less: {'missed' if over else 'met'}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
