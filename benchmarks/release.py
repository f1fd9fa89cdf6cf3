"""An audit of a real-size release: Adult in the release set-up (holdout 0.3), Synthpop.

Usage: ``python benchmarks/release.py [--outliers 20] [--random 20] [--n 200] [--workers 2]
[--generator synthpop] [--attacker leave-one-out] [--json]``

The defaults are the release set-up's: D is 70% of Adult (31,655 rows), the other 13,567 rows
are held back to play the population, the audit plan is 20 outliers + 20 random records,
N_shadow = N_eval = 200, 2 workers, the leave-one-out attacker (the model-seeded game only;
``--attacker population`` plays both games against the paper's attacker). Prints the wall
time, the generator fits, CPU-seconds per target, one fit + sample at this |D|, and the peak
memory of the whole process tree (sampled every 0.2 s). Smaller plans (``--outliers 2
--random 2``) give the per-target figures in minutes; the whole audit's CPU time is the shared
part, plus the full plan's pool of traditional datasets (scaled from this run's pool by its
fits), plus the per-target part times the targets.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import psutil

from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, encode, load_dataset
from privgame.games.engine import build_audit, plan_summary, start_run
from privgame.games.threat import default_games
from privgame.generators import create
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _host import StealMeter


class PeakMemory:
    """The largest resident memory of this process and its children together, sampled in a thread."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += process.memory_info().rss
            self.peak = max(self.peak, total)
            self._stop.wait(self.every)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outliers", type=int, default=20)
    parser.add_argument("--random", type=int, default=20)
    parser.add_argument("--n", type=int, default=200, help="N_shadow = N_eval")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--attacker", default="leave-one-out", choices=["leave-one-out", "population"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    dataset = load_dataset(BUNDLED_ADULT)
    inputs = release_inputs(dataset, seed=0, holdout=0.3)
    spec = RunSpec(
        data_name="adult.csv.gz",
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator=args.generator,
        attack=AttackSettings(
            n_shadow=args.n,
            n_eval=args.n,
            attacker=args.attacker,
            games=default_games(args.attacker),
        ),
        targets=TargetSelection.plan(outliers=args.outliers, random=args.random),
        seed=0,
        setup=inputs.setup,
    ).validate()

    # One fit + sample at this |D| (after a warm-up that absorbs compilation).
    ctx, groups = build_audit(spec, inputs.table)
    rows = encode(inputs.table, inputs.schema)[ctx.target]
    rng = stream(0, 99)
    create(args.generator).fit_sample(rows[:500], inputs.schema, 100, rng=rng)
    t0 = time.perf_counter()
    create(args.generator).fit_sample(rows, inputs.schema, len(rows), rng=rng)
    fit_seconds = time.perf_counter() - t0
    n_targets = len({int(t) for ids in groups.values() for t in ids})
    plan = plan_summary(spec, n_targets, table=inputs.table)
    # The full plan (20 + 20): its pool of traditional datasets does not grow with the
    # targets as their own fits do, so it is counted from its own plan.
    full_spec = replace(spec, targets=TargetSelection.plan(outliers=20, random=20)).validate()
    _, full_groups = build_audit(full_spec, inputs.table)
    full_targets = len({int(t) for ids in full_groups.values() for t in ids})
    full_plan = plan_summary(full_spec, full_targets, table=inputs.table)

    with tempfile.TemporaryDirectory() as root, PeakMemory() as memory:
        meter = StealMeter()
        start = time.perf_counter()
        folder = start_run(root, spec, inputs.table, workers=args.workers)
        wall = time.perf_counter() - start
        steal = meter.share()
        status = folder.status()
        summary = folder.summary()
    unit = status["unit_seconds"]
    target_cpu = unit["targets_total"]
    pool_cpu = float(unit.get("pool_total", 0.0))
    shared_cpu = float(status.get("shared_seconds", 0.0))
    pool_fits = plan.get("pool_fits") or 0
    full_pool_cpu = pool_cpu * (full_plan.get("pool_fits") or 0) / pool_fits if pool_fits else 0.0
    result = {
        "benchmark": "release",
        "generator": args.generator,
        "attacker": args.attacker,
        "d_rows": spec.sizes["target"],
        "aux_rows": spec.sizes["aux"],
        "reference_rows": spec.sizes["eval"] - spec.sizes["target"],
        "shadow_replace": spec.setup.shadow_replace,
        "targets": n_targets,
        "n_shadow": args.n,
        "n_eval": args.n,
        "workers": args.workers,
        "wall_seconds": round(wall, 1),
        "generator_fits": plan["total_fits"],
        "fit_sample_seconds_at_d": round(fit_seconds, 3),
        "shared_cpu_seconds": round(shared_cpu, 1),
        "pool_fits": pool_fits,
        "pool_cpu_seconds": round(pool_cpu, 1),
        "cpu_seconds_per_target": round(target_cpu / max(n_targets, 1), 1),
        # Where the targets' and pool's CPU time went (the rest is bookkeeping).
        "generator_cpu_seconds": round(unit["generator"], 1),
        "features_cpu_seconds": round(unit["features"], 1),
        "classifier_cpu_seconds": round(unit["classifier"], 1),
        "peak_memory_gib": round(memory.peak / 2**30, 2),
        "at_risk_model_seeded": summary.get("at_risk_model_seeded"),
        "share_at_risk": (summary.get("share_at_risk") or {}).get("text"),
        "steal_share": None if steal is None else round(steal, 4),
    }
    # The full plan on this many workers, from the figures above: the shared work, the
    # pool scaled to the full plan's pool, and each target's own work.
    result["full_plan_targets"] = full_targets
    result["full_plan_fits"] = full_plan["total_fits"]
    result["extrapolated_wall_minutes_full_plan"] = round(
        (shared_cpu + full_pool_cpu + target_cpu / max(n_targets, 1) * full_targets) / args.workers / 60, 1
    )
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"release audit, Adult holdout 0.3 ({result['d_rows']:,} rows in D, {result['aux_rows']:,} in D_aux, "
        f"{result['reference_rows']:,} reference records), {args.generator}, {n_targets} targets, "
        f"N_shadow = N_eval = {args.n}, {args.workers} workers, {args.attacker} attacker"
    )
    print(f"  wall time                 {wall:,.1f} s")
    print(f"  generator fits            {plan['total_fits']:,}")
    print(f"  one fit + sample at |D|   {fit_seconds * 1000:,.0f} ms")
    print(f"  shared work               {shared_cpu:,.1f} CPU-s")
    print(f"  traditional pool          {pool_cpu:,.1f} CPU-s ({pool_fits:,} fits)")
    print(f"  per target                {result['cpu_seconds_per_target']:,.1f} CPU-s")
    print(
        f"  targets + pool spent      {result['generator_cpu_seconds']:,.1f} s in generators, "
        f"{result['features_cpu_seconds']:,.1f} s in features, {result['classifier_cpu_seconds']:,.1f} s "
        "in classifiers"
    )
    print(f"  peak memory (all procs)   {result['peak_memory_gib']:.2f} GiB")
    print(
        f"  the full plan ({full_targets} targets, {full_plan['total_fits']:,} fits) would take "
        f"~{result['extrapolated_wall_minutes_full_plan']:,.1f} min wall"
    )
    if result["share_at_risk"]:
        print(f"  verdict                   {result['share_at_risk']}")
    if steal is not None:
        print(f"  stolen by the hypervisor  {steal:.0%} of CPU time during the run (wall times fall with it)")


if __name__ == "__main__":
    main()
