"""Generator speed: fit + sample 1,000 rows from 1,000 random Adult rows.

Usage: ``python benchmarks/generators.py [--json] [--runs N]``. Prints one line per case, or with
``--json`` one JSON object per line with keys ``generator``, ``params`` and ``median_ms``.
Targets on this machine's cores: Synthpop <= 50 ms, Baynet k=1 <= 15 ms, Baynet k=2 <= 40 ms,
PrivBayes k=1 epsilon=1 <= 15 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult

from privgame.generators import create
from privgame.seeding import stream

CASES: list[tuple[str, dict[str, float | int], float]] = [
    ("synthpop", {}, 50.0),
    ("baynet", {"degree": 1}, 15.0),
    ("baynet", {"degree": 2}, 40.0),
    ("privbayes", {"degree": 1, "epsilon": 1}, 15.0),
    ("marginals", {}, float("nan")),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    X, schema = adult()
    for name, params, target in CASES:
        times = []
        for i in range(args.runs + 1):
            rng = stream(2026, i)
            rows = X[rng.choice(len(X), size=1000, replace=False)]
            generator = create(name, **params)
            start = time.perf_counter()
            generator.fit_sample(rows, schema, 1000, rng=rng)
            elapsed = (time.perf_counter() - start) * 1000
            if i:  # the first call pays for imports and JIT compilation
                times.append(elapsed)
        median = statistics.median(times)
        if args.json:
            print(json.dumps({"generator": name, "params": params, "median_ms": round(median, 3)}))
        else:
            goal = "" if target != target else f"  (target <= {target:.0f} ms)"
            print(f"{name:<10} {json.dumps(params):<32} median {median:8.2f} ms over {len(times)} runs{goal}")


if __name__ == "__main__":
    main()
