"""Both games end to end: 20 Adult targets, Synthpop, |D| = 1,000, N_shadow = N_eval = 200.

Usage: ``python benchmarks/games.py [--workers 1,2] [--targets 20] [--n 200] [--json]``
(``--generator NAME`` for another generator).
For each worker count, prints the wall time, the generator fits done, seconds per target, and
the share of worker time spent outside generator fits, query features and classifier training
(scheduling, data movement, checkpointing, result assembly). Goals on 2 cores: <= 15 s per
target, overhead <= 10%, 2 workers >= 1.8x faster than 1.

Then it extrapolates, from the fewest workers' figures, the CPU time of a full audit of every
record of D at the same N: each record's fits in the full plan (its pool of traditional datasets
shared by all 1,000 records, the shared datasets spread over them) at this run's seconds per fit,
plus this run's query features and classifier time per record. Goal at N = 1,000: <= 3 CPU-hours.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult_spec
from _host import StealMeter

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import plan_summary, start_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--targets", type=int, default=20)
    parser.add_argument("--n", type=int, default=200, help="N_shadow = N_eval")
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dataset = load_dataset(BUNDLED_ADULT)
    spec = adult_spec(dataset, generator=args.generator, n=args.n, targets=args.targets)
    fits = plan_summary(spec, args.targets, table=dataset.table)["total_fits"]
    walls: dict[int, float] = {}
    per_record: dict[int, float] = {}
    full = adult_spec(dataset, generator=args.generator, n=args.n, targets=spec.sizes["target"])
    full_plan = plan_summary(full, spec.sizes["target"], table=dataset.table)
    full_fits_per_record = full_plan["total_fits"] / spec.sizes["target"]
    for workers in (int(w) for w in args.workers.split(",")):
        with tempfile.TemporaryDirectory() as root:
            meter = StealMeter()
            start = time.perf_counter()
            folder = start_run(root, spec, dataset.table, workers=workers)
            wall = time.perf_counter() - start
            steal = meter.share()
            status = folder.status()
            records = folder.records()
        unit = status["unit_seconds"]
        # Worker time inside target units spent on the three kinds of real work; shared units
        # (shadow 'out' and model-seeded 'in' datasets) are generator work too.
        shared_seconds = status.get("shared_seconds", 0.0)
        work = unit["generator"] + unit["features"] + unit["classifier"] + shared_seconds
        overhead = max(0.0, 1.0 - work / (wall * workers))
        walls[workers] = wall
        per_record[workers] = (
            full_fits_per_record * (unit["generator"] + shared_seconds) / fits
            + (unit["features"] + unit["classifier"]) / args.targets
        )
        result = {
            "benchmark": "games",
            "generator": args.generator,
            "workers": workers,
            "targets": args.targets,
            "n_shadow": args.n,
            "n_eval": args.n,
            "wall_s": round(wall, 2),
            "generator_fits": fits,
            "fits_per_s": round(fits / wall, 1),
            "s_per_target": round(wall / args.targets, 3),
            "overhead_share": round(overhead, 4),
            "generator_s": round(unit["generator"] + shared_seconds, 2),
            "features_s": round(unit["features"], 2),
            "classifier_s": round(unit["classifier"], 2),
            "mean_risk_model_seeded": round(float(records["risk_model_seeded"].mean()), 4),
            "mean_risk_traditional": round(float(records["risk_traditional"].mean()), 4),
            "steal_share": None if steal is None else round(steal, 4),
        }
        if args.json:
            print(json.dumps(result))
        else:
            print(
                f"{workers} worker(s): {wall:7.1f} s wall, {fits:,} generator fits ({fits / wall:,.0f}/s), "
                f"{wall / args.targets:5.2f} s per target, overhead {100 * overhead:4.1f}% "
                f"(generator {result['generator_s']} s, features {result['features_s']} s, "
                f"classifier {result['classifier_s']} s of worker time)"
                + ("" if steal is None else f"; {steal:.0%} of CPU time stolen by the hypervisor")
            )
    fewest = min(per_record)
    hours = per_record[fewest] * spec.sizes["target"] / 3600
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "games_full_audit",
                    "records": spec.sizes["target"],
                    "n_shadow": args.n,
                    "n_eval": args.n,
                    "fits_per_record": round(full_fits_per_record, 1),
                    "cpu_s_per_record": round(per_record[fewest], 2),
                    "cpu_hours": round(hours, 2),
                    "from_workers": fewest,
                }
            )
        )
    else:
        print(
            f"a full audit of all {spec.sizes['target']:,} records of D at N = {args.n:,}: "
            f"{full_plan['total_fits']:,} fits ({full_fits_per_record:,.0f} per record), about "
            f"{per_record[fewest]:.1f} CPU-s per record, {hours:.2f} CPU-hours "
            f"(from the {fewest}-worker run; goal at N = 1,000: <= 3)"
        )
    if 1 in walls and 2 in walls:
        speedup = walls[1] / walls[2]
        if args.json:
            print(json.dumps({"benchmark": "games_speedup", "speedup_2_vs_1": round(speedup, 3)}))
        else:
            print(f"2 workers are {speedup:.2f}x faster than 1")


if __name__ == "__main__":
    main()
