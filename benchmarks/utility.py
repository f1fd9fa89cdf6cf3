"""Utility speed: ``measure_utility`` on the paper's Adult run (|D| = 1,000), and each of its parts.

Usage: ``python benchmarks/utility.py [--generator synthpop] [--samples 5] [--repeats 3] [--json]``.
Makes the run's folder (nothing is audited: utility needs only the spec and the table), then
times the whole measurement ``--repeats`` times and one of each part: a generator fit + sample,
the total variation distances, an association matrix, and one downstream model (fit on |D| rows,
scored on the 10,000-record test set). Prints the minimum over repeats and the load average,
since timings on a shared machine are noisy. Target: a few seconds for 5 samples.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult_spec

from privgame.analysis.utility import (
    association_matrix,
    default_target_column,
    downstream_score,
    measure_utility,
    total_variation,
    utility_split,
)
from privgame.core.seeding import Role, stream
from privgame.data import BUNDLED_ADULT, Schema, encode, load_dataset
from privgame.games.preflight import create_run
from privgame.generators import create


def _best(call: Callable[[], object], repeats: int) -> float:
    """The shortest of ``repeats`` timings of ``call``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    dataset = load_dataset(BUNDLED_ADULT)
    spec = adult_spec(dataset, generator=args.generator, n=8, targets=1)
    schema = Schema.from_dict(spec.schema)
    X = encode(dataset.table, schema)
    d, test = utility_split(spec, len(X))
    real, holdout = X[d], X[test]
    target = str(default_target_column(schema))
    synthetic = create(spec.generator).fit_sample(real, schema, len(d), rng=stream(0, 0, Role.UTILITY, 0, 0))
    with tempfile.TemporaryDirectory() as root:
        folder = create_run(root, spec, dataset.table)
        figures = {
            "generator": args.generator,
            "rows": len(d),
            "test_rows": len(test),
            "samples": args.samples,
            "measure_utility_s": _best(lambda: measure_utility(folder, samples=args.samples), args.repeats),
            "fit_sample_s": _best(
                lambda: create(spec.generator).fit_sample(
                    real, schema, len(d), rng=stream(0, 0, Role.UTILITY, 0, 0)
                ),
                args.repeats,
            ),
            "total_variation_s": _best(lambda: total_variation(real, synthetic, schema), args.repeats),
            "association_matrix_s": _best(lambda: association_matrix(synthetic, schema), args.repeats),
            "downstream_score_s": _best(
                lambda: downstream_score(synthetic, holdout, target, schema, seed=0), args.repeats
            ),
            "load_average_1min": os.getloadavg()[0],
            "cores": os.cpu_count(),
        }
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"{args.generator}, |D| = {figures['rows']:,}, test set {figures['test_rows']:,} rows, "
        f"{args.samples} samples (minimum of {args.repeats}; load {figures['load_average_1min']:.1f} "
        f"on {figures['cores']} cores)"
    )
    print(f"  measure_utility       {figures['measure_utility_s']:.2f} s")
    for part in ("fit_sample", "total_variation", "association_matrix", "downstream_score"):
        print(f"  one {part:<20}{figures[f'{part}_s'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
