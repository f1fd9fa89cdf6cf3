"""Peak memory of a release audit at Adult's full size (|D| = 31,655), the issue's set-up.

Runs ``python -m privgame run`` (release set-up on the bundled Adult: D is 70% of its 45,222
rows) in a subprocess and samples the proportional set size (PSS) of its whole process tree
every 0.2 s: PSS shares memory-mapped and copy-on-write pages fairly between the processes
that map them, so the sum over the tree is the memory the audit really holds. Prints the peak
of that sum and of the largest single process. Goal: under 4 GiB with 2 workers.

    python benchmarks/memory.py [--workers 2] [--n 40] [--targets 4] [--generator synthpop]

The peak does not grow with the number of targets or N beyond one unit's arrays per worker
(units are checkpointed as they finish), so a short run measures it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024**3


def _pss(process: psutil.Process) -> int:
    try:
        return int(process.memory_full_info().pss)
    except (psutil.NoSuchProcess, psutil.AccessDenied, AttributeError):
        try:
            return int(process.memory_info().rss)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n", type=int, default=40, help="N_shadow = N_eval (default 40)")
    parser.add_argument("--targets", type=int, default=4, help="outliers + random records (default 4)")
    parser.add_argument("--generator", default="synthpop")
    args = parser.parse_args()
    half = args.targets // 2
    with tempfile.TemporaryDirectory() as out:
        command = [
            sys.executable, "-m", "privgame", "run", "--data", str(ROOT / "data" / "adult.csv.gz"),
            "--generator", args.generator, "--outliers", str(half), "--random", str(args.targets - half),
            "--n-shadow", str(args.n), "--n-eval", str(args.n), "--workers", str(args.workers),
            "--quiet", "--out", out, "--i-know-its-large",
        ]  # fmt: skip
        started = time.perf_counter()
        child = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        root = psutil.Process(child.pid)
        peak_total = peak_one = 0
        processes = 1
        while child.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            sizes = [_pss(p) for p in tree]
            processes = max(processes, len(tree))
            peak_total = max(peak_total, sum(sizes))
            peak_one = max(peak_one, max(sizes))
            time.sleep(0.2)
        _, stderr = child.communicate()
        if child.returncode != 0:
            sys.exit(f"the run failed ({child.returncode}):\n{stderr}")
        wall = time.perf_counter() - started
    print(
        f"release audit, Adult |D| = 31,655, {args.generator}, {args.targets} records, "
        f"N_shadow = N_eval = {args.n}, {args.workers} worker(s): {wall:.0f} s wall"
    )
    print(f"peak memory of the whole process tree ({processes} processes, PSS): {peak_total / GIB:.2f} GiB")
    print(f"peak memory of the largest process (PSS): {peak_one / GIB:.2f} GiB")
    print(f"goal: under 4 GiB with 2 workers -> {'met' if peak_total < 4 * GIB else 'NOT met'}")


if __name__ == "__main__":
    main()
