"""Throughput of the executors: generator fits per second with 1 and 2 local workers (joblib:
in-process and loky) and on a 2-worker local Dask cluster (separate processes, as on real hosts).

Usage: ``python benchmarks/scale.py [--targets 8] [--n 100] [--generator synthpop] [--repeat 1] [--json]``

Adult, |D| = 1,000. Workers are warmed up first (imports, JIT compilation), so the figures are
steady-state throughput. For each executor, prints the wall time (median over ``--repeat``), the
generator fits per second, the unit plan, and the share of worker time spent outside the units'
own work (scheduling, data movement, checkpointing, and the run's fixed costs); checks that every
executor gives the same records.csv, byte for byte.

Then the executors' own overhead, free of CPU contention: 20 one-second units that only sleep
(but take the run's context and shared datasets as arguments, like a target unit) on 2 workers,
against the ideal 10 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult_spec

from privgame.data import BUNDLED_ADULT, encode, load_dataset
from privgame.games.engine import build_context, plan_summary, start_run
from privgame.settings.executors import run_calls
from privgame.settings.run_spec import RunSpec


def _warm_up(generator: str, X: Any, schema: Any) -> int:
    """Import the engine and fit the generator once, so JIT compilation is not timed."""
    from privgame.core.seeding import stream
    from privgame.games import engine  # noqa: F401
    from privgame.generators import create

    rng = stream(0, 0)
    create(generator).fit(X, schema, rng=rng).sample(10, rng=rng)
    return 0


def _measure(
    label: str, spec: RunSpec, table: Any, fits: int, repeat: int, **executor: Any
) -> tuple[dict[str, Any], bytes]:
    walls = []
    records = b""
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as root:
            start = time.perf_counter()
            folder = start_run(root, spec, table, **executor)
            walls.append(time.perf_counter() - start)
            status = folder.status()
            records = (Path(folder.path) / "records.csv").read_bytes()
    wall = statistics.median(walls)
    unit = status["unit_seconds"]
    work = unit["targets_total"] + status.get("shared_seconds", 0.0)
    workers = 2 if label != "in-process" else 1
    plan = status["unit_plan"]
    result = {
        "benchmark": "scale",
        "executor": label,
        "workers": workers,
        "generator": spec.generator,
        "targets": len(status["target_ids"]),
        "n_shadow": spec.attack.n_shadow,
        "n_eval": spec.attack.n_eval,
        "wall_s": round(wall, 2),
        "walls_s": [round(w, 2) for w in walls],
        "generator_fits": fits,
        "fits_per_s": round(fits / wall, 1),
        "overhead_share": round(max(0.0, 1.0 - work / (wall * workers)), 4),
        "unit_plan": {k: plan[k] for k in ("shadow_out", "ms_in", "targets")},
        "fit_seconds": round(plan["fit_seconds"] + plan["sample_seconds"], 5),
    }
    return result, records


def _hold(ctx: Any, shadow_out: Any, ms_in: Any, seconds: float) -> float:
    """A unit that takes ``seconds`` without using the CPU, and reads its shared arguments."""
    time.sleep(seconds)
    return float(ctx.X[0, 0] + shadow_out[-1, 0, 0] + ms_in[-1, 0, 0])


def _overhead(label: str, shared: tuple[Any, ...], units: int = 20, **executor: Any) -> dict[str, Any]:
    calls = [(i, _hold, (*shared, 1.0)) for i in range(units)]
    start = time.perf_counter()
    for _ in run_calls(calls, shared=shared, **executor):
        pass
    wall = time.perf_counter() - start
    ideal = units * 1.0 / 2
    return {
        "benchmark": "scale_overhead",
        "executor": label,
        "units": units,
        "unit_s": 1.0,
        "wall_s": round(wall, 3),
        "ideal_s": ideal,
        "overhead_share": round(wall / ideal - 1, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=8)
    parser.add_argument("--n", type=int, default=100, help="N_shadow = N_eval")
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dataset = load_dataset(BUNDLED_ADULT)
    spec = adult_spec(dataset, generator=args.generator, n=args.n, targets=args.targets)
    fits = plan_summary(spec, args.targets, table=dataset.table)["total_fits"]

    from distributed import Client, LocalCluster

    sample = (encode(dataset.table.iloc[:200], dataset.schema), dataset.schema)
    _warm_up(args.generator, *sample)
    Parallel(n_jobs=2)(delayed(_warm_up)(args.generator, *sample) for _ in range(2))
    results = []
    outputs = []
    for label, executor in (("in-process", {"workers": 1}), ("loky", {"workers": 2})):
        result, records = _measure(label, spec, dataset.table, fits, args.repeat, **executor)
        results.append(result)
        outputs.append(records)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        client.run(_warm_up, args.generator, *sample)
        result, records = _measure(
            "dask", spec, dataset.table, fits, args.repeat, scheduler=cluster.scheduler_address
        )
        results.append(result)
        outputs.append(records)
        ctx, _ = build_context(spec, dataset.table)
        half = np.zeros((args.n // 2, 1000, ctx.X.shape[1]))
        shared = (ctx, half, half.copy())
        overheads = [
            _overhead("loky", shared, workers=2),
            _overhead("dask", shared, scheduler=cluster.scheduler_address),
        ]
    identical = all(out == outputs[0] for out in outputs)

    for result in results:
        if args.json:
            print(json.dumps(result))
        else:
            plan = result["unit_plan"]
            print(
                f"{result['executor']:>10}, {result['workers']} worker(s): {result['wall_s']:7.1f} s wall, "
                f"{fits:,} generator fits, {result['fits_per_s']:7.1f} fits/s, "
                f"overhead {100 * result['overhead_share']:4.1f}% "
                f"(units: {plan['shadow_out']}/{plan['ms_in']} datasets per shared chunk, "
                f"{plan['targets']} target(s) per task)"
            )
    if args.json:
        print(json.dumps({"benchmark": "scale_identical", "identical_records": identical}))
    else:
        print(f"records.csv identical across executors: {'yes' if identical else 'NO'}")
    for result in overheads:
        if args.json:
            print(json.dumps(result))
        else:
            print(
                f"{result['executor']:>10} overhead: {result['units']} one-second units on 2 workers in "
                f"{result['wall_s']:.2f} s (ideal {result['ideal_s']:g} s): "
                f"{100 * result['overhead_share']:.1f}%"
            )


if __name__ == "__main__":
    main()
