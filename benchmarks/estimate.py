"""The time estimate against the real run, on three set-ups.

Usage: ``python benchmarks/estimate.py [--workers 2] [--only NAME ...] [--estimate-only] [--json]``

Each set-up goes through the command line's own code path (``privgame run``'s parser, spec,
cost check and engine): the estimate the CLI prints (:func:`privgame.games.estimate.check_cost`), then
the run itself, timed from the engine's start to its results. Prints, per set-up, the estimate
by part, the actual seconds, the ratio estimate / actual, and the machine's load
(``os.getloadavg``) before and after; the acceptance is every ratio within [1/1.5, 1.5]. It
also prints how long the first estimate took (reading the data, choosing the records, timing the
generator, the features, the meta-classifier and the workers, in a fresh process as ``run
--dry-run`` does; the goal is 20 s for the 35,000-row D of ``large``); ``--estimate-only`` stops
there.

The set-ups:

- ``adult-release``: Adult in the release set-up (D = 70% of Adult, 31,655 rows), Synthpop;
- ``adult-paper``: Adult in the paper's set-up (|D| = 1,000), Baynet, 10 random targets, N = 50;
- ``large``: a 50,000-row table resampled from Adult's rows (seeded by the project's streams),
  release set-up (D = 35,000 rows), Synthpop.

The two release set-ups use 2 targets and N = 8 so that the whole benchmark stays near ten
minutes on a busy two-core machine; their cost per fit is the large-table one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import psutil

from privgame.cli.commands.run import _check_cost, build_spec
from privgame.cli.main import build_parser
from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT
from privgame.games.engine import execute
from privgame.games.estimate import breakdown
from privgame.games.preflight import create_run
from privgame.settings.executors import _shut_down_workers, resolve_workers

ACCEPT = 1.5
_LARGE_STREAM = 41  # the resampled table's own stream
LARGE_ROWS = 50_000

SETUPS: dict[str, list[str]] = {
    "adult-release": ["--generator", "synthpop", "--targets", "2", "--n-shadow", "8", "--n-eval", "8"],
    "adult-paper": [
        "--setup",
        "paper",
        "--generator",
        "baynet",
        "--targets",
        "10",
        "--n-shadow",
        "50",
        "--n-eval",
        "50",
    ],
    "large": ["--generator", "synthpop", "--targets", "2", "--n-shadow", "8", "--n-eval", "8"],
}


def large_table(folder: Path) -> Path:
    """Write a ``LARGE_ROWS``-row table of Adult's rows, drawn with replacement, and return its path."""
    adult = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna()
    rows = stream(0, 0, _LARGE_STREAM).integers(0, len(adult), size=LARGE_ROWS)
    path = folder / "large.csv"
    adult.iloc[rows].to_csv(path, index=False)
    return path


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds of this process, and of its live children (the run's worker processes)."""
    me = psutil.Process()
    children = 0.0
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            children += sum(child.cpu_times()[:2])
    return sum(me.cpu_times()[:2]), children


def measure(
    name: str, data: Path, workers: int, out: Path, *, estimate_only: bool = False
) -> dict[str, object]:
    """Estimate one set-up as ``privgame run`` does, run it, and compare."""
    argv = [
        "run",
        "--data",
        str(data),
        *SETUPS[name],
        "--workers",
        str(workers),
        "--out",
        str(out),
        "--quiet",
    ]
    args = build_parser().parse_args(argv)
    load_before = os.getloadavg()[0]
    first = time.perf_counter()
    spec, inputs, _ = build_spec(args)
    cost = _check_cost(spec, inputs, args, None)
    first = time.perf_counter() - first
    if estimate_only:
        return {
            "setup": name,
            "first_estimate_seconds": first,
            "estimate": cost.wall_seconds,
            "rows": spec.sizes,
        }
    parts = breakdown(spec, inputs.table, workers=resolve_workers(args.workers), calibration=cost.calibration)
    folder = create_run(args.out, spec, inputs.table)
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    execute(folder, workers=args.workers, estimate=cost.wall_seconds)
    actual = time.perf_counter() - started
    cpu_after = cpu_seconds()
    parent, workers_cpu = cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]
    # The next set-up starts its own workers, as a new `privgame run` would.
    _shut_down_workers()
    status = folder.status()
    return {
        "setup": name,
        "command": "python -m privgame " + " ".join(argv),
        "estimate": cost.wall_seconds,
        "actual": actual,
        "ratio": cost.wall_seconds / actual,
        "cpu_estimate": parts.setup + parts.results + parts.work,
        "cpu_actual": parent + workers_cpu,
        "cpu_engine": parent,
        "parts": {
            "setup": parts.setup,
            "startup": parts.startup,
            "generator": parts.generator,
            "features": parts.features,
            "classifier": parts.classifier,
            "results": parts.results,
            "share": parts.share,
            "parallel": parts.parallel,
            "fits": parts.total_fits,
        },
        "fits_done": status.get("fits_done"),
        "unit_seconds": status.get("unit_seconds"),
        "load": [load_before, os.getloadavg()[0]],
        "first_estimate_seconds": first,
        "rows": spec.sizes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", nargs="+", choices=sorted(SETUPS), help="run these set-ups only")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--estimate-only", action="store_true", help="time the first estimate of each set-up; run nothing"
    )
    args = parser.parse_args()
    names = args.only or list(SETUPS)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.estimate_only:
            # The goal's own measure: `run --dry-run` with the default plan (20 + 20 records,
            # N_shadow 1,000, N_eval 200) on the 35,000-row D, in a fresh process.
            command = [sys.executable, "-m", "privgame", "run", "--data", str(large_table(folder))]
            command += ["--generator", "synthpop", "--dry-run", "--workers", str(args.workers)]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - started
            line = next(x for x in done.stdout.splitlines() if x.startswith("estimated time"))
            print(f"run --dry-run, default plan, |D| = 35,000: {seconds:.1f} s in a fresh process ({line})")
        for name in names:
            data = large_table(folder) if name == "large" else Path(BUNDLED_ADULT)
            results.append(
                measure(name, data, args.workers, folder / "runs", estimate_only=args.estimate_only)
            )
            r = results[-1]
            print(
                f"{name:14s} first estimate took {r['first_estimate_seconds']:.1f} s "
                f"(|D| = {r['rows']['target']:,}; estimate {r['estimate']:.1f} s)",
                flush=True,
            )
            if args.estimate_only:
                _shut_down_workers()
                continue
            p = r["parts"]
            print(
                f"{name:14s} estimate {r['estimate']:7.1f} s  actual {r['actual']:7.1f} s  "
                f"ratio {r['ratio']:.2f}  (CPU s estimated {r['cpu_estimate']:.1f}, used "
                f"{r['cpu_actual']:.1f}, {r['cpu_engine']:.1f} of it in the engine's process; "
                f"load {r['load'][0]:.1f} -> {r['load'][1]:.1f}; "
                f"{p['fits']} fits; parts: set-up {p['setup']:.1f}, start-up {p['startup']:.1f}, "
                f"generator {p['generator']:.1f}, features {p['features']:.1f}, classifier "
                f"{p['classifier']:.1f}, results {p['results']:.1f} CPU s; share {p['share']:.2f}, workers' "
                f"cores {p['parallel']:.2f}; "
                f"measured in units: {r['unit_seconds']})",
                flush=True,
            )
    if args.estimate_only:
        if args.json:
            print(json.dumps(results, indent=2))
        return
    ok = all(1 / ACCEPT <= r["ratio"] <= ACCEPT for r in results)
    print(f"{os.cpu_count()} cores; uptime load average now {os.getloadavg()}")
    print(f"every ratio within [1/{ACCEPT}, {ACCEPT}]: {'yes' if ok else 'NO'}")
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
