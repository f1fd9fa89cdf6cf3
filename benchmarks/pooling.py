"""The traditional game pooled against per-target: generator fits and wall time on Adult.

Usage: ``python benchmarks/pooling.py [--targets 12] [--n 100] [--size 1000] [--eval-size 4000]
[--workers 2] [--generator synthpop] [--json]``

The paper's set-up on Adult (|D_aux| = 30,000), with a smaller evaluation pool than the paper's
(|D_eval| = 4,000, so a record is in a quarter of the pool datasets), ``--targets`` random records
and N_shadow = N_eval = ``--n``. The same audit is run twice, with ``--traditional pooled`` and
``--traditional per-target``; for each it prints the generator fits (the plan's count, which the
run's progress confirms), the traditional game's fits per target, the wall time, the worker time
spent in units (less sensitive than the wall time to other load on the machine), and the mean
risks. A small untimed run first starts the worker processes and loads the compiled kernels, so
that neither mode pays for them. Both runs train the same attacks, so the model-seeded risks are
identical; the traditional risks are two estimates of the same per-record quantities.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace

import numpy as np

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import plan_summary, start_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=12)
    parser.add_argument("--n", type=int, default=100, help="N_shadow = N_eval")
    parser.add_argument("--size", type=int, default=1000, help="|D|")
    parser.add_argument("--eval-size", type=int, default=4000, help="|D_eval|")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument(
        "--repeat", type=int, default=2, help="runs of each mode, alternated; the fastest is kept"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dataset = load_dataset(BUNDLED_ADULT)
    base = RunSpec(
        data_name="adult.csv.gz",
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes={"aux": 30000, "eval": args.eval_size, "target": args.size},
        generator=args.generator,
        attack=AttackSettings(n_shadow=args.n, n_eval=args.n),
        targets=TargetSelection("random", args.targets),
        seed=0,
    ).validate()
    with tempfile.TemporaryDirectory() as root:
        tiny = AttackSettings(n_shadow=4, n_eval=4)
        warm = replace(base, attack=tiny, targets=TargetSelection("random", 1))
        start_run(root, warm, dataset.table, workers=args.workers)
    results: dict[str, dict] = {}
    # per-target, pooled, pooled, per-target, ...: a drift in the machine's load favours neither.
    order = [("per-target", "pooled")[(k + k // 2) % 2] for k in range(2 * max(1, args.repeat))]
    for mode in order:
        spec = replace(base, attack=replace(base.attack, traditional=mode))
        plan = plan_summary(spec, args.targets, table=dataset.table)
        with tempfile.TemporaryDirectory() as root:
            start = time.perf_counter()
            folder = start_run(root, spec, dataset.table, workers=args.workers)
            wall = time.perf_counter() - start
            status = folder.status()
            records = folder.records()
        if mode in results and results[mode]["wall_s"] <= wall:
            continue
        traditional = plan["pool_fits"] + plan["extra_fits"] if mode == "pooled" else args.n * args.targets
        results[mode] = {
            "benchmark": "pooling",
            "traditional": mode,
            "generator": args.generator,
            "targets": args.targets,
            "d_rows": args.size,
            "eval_rows": args.eval_size,
            "n_shadow": args.n,
            "n_eval": args.n,
            "workers": args.workers,
            "generator_fits": status["fits_done"],
            "plan_fits": plan["total_fits"],
            "fits_per_target": round(status["fits_done"] / args.targets, 1),
            "traditional_fits_per_target": round(traditional / args.targets, 1),
            "pool_scanned": (status.get("pool") or {}).get("scanned"),
            "wall_s": wall,
            "unit_s": round(_unit_seconds(status), 1),
            "mean_risk_model_seeded": round(float(records["risk_model_seeded"].mean()), 4),
            "mean_risk_traditional": round(float(records["risk_traditional"].mean()), 4),
            "_traditional": records["risk_traditional"].to_numpy(),
        }
    for result in results.values():
        result["wall_s"] = round(result["wall_s"], 1)
    pooled, per_target = results["pooled"], results["per-target"]
    difference = pooled.pop("_traditional") - per_target.pop("_traditional")
    for mode in ("per-target", "pooled"):
        result = results[mode]
        if args.json:
            print(json.dumps(result))
            continue
        print(
            f"{mode:>10}: {result['generator_fits']:6,} generator fits (plan {result['plan_fits']:,}), "
            f"{result['fits_per_target']:6.1f} per target, of which traditional "
            f"{result['traditional_fits_per_target']:6.1f}; {result['wall_s']:6.1f} s wall with "
            f"{args.workers} worker(s), {result['unit_s']:6.1f} s of worker time; mean risk "
            f"model-seeded {result['mean_risk_model_seeded']:.3f}, "
            f"traditional {result['mean_risk_traditional']:.3f}"
        )
    summary = {
        "fits_ratio": round(per_target["generator_fits"] / pooled["generator_fits"], 2),
        "wall_ratio": round(per_target["wall_s"] / pooled["wall_s"], 2),
        "unit_ratio": round(per_target["unit_s"] / pooled["unit_s"], 2),
        "traditional_risk_difference_mean": round(float(difference.mean()), 4),
        "traditional_risk_difference_rms": round(float(np.sqrt(np.mean(difference**2))), 4),
    }
    if args.json:
        print(json.dumps({"benchmark": "pooling", **summary}))
    else:
        mean, rms = summary["traditional_risk_difference_mean"], summary["traditional_risk_difference_rms"]
        print(
            f"pooled: {summary['fits_ratio']}x fewer generator fits, {summary['wall_ratio']}x faster "
            f"({summary['unit_ratio']}x less worker time); "
            f"traditional risks pooled - per-target: mean {mean:+.3f}, rms {rms:.3f} "
            f"(estimation noise at N_eval = {args.n})"
        )


def _unit_seconds(status: dict) -> float:
    """Seconds workers spent in the run's units: shared, pool and target units."""
    unit = status["unit_seconds"]
    return float(status.get("shared_seconds") or 0.0) + unit["targets_total"] + unit.get("pool_total", 0.0)


if __name__ == "__main__":
    main()
