"""Attackers: leave-one-out against population, paired on the same records and evaluation runs.

Usage: ``python benchmarks/attackers.py [--rows 10000] [--holdout 0.3] [--generator synthpop]
[--outliers 10] [--random 10] [--n-eval 200] [--shadows 200,1000]
[--attackers leave-one-out,population] [--workers 2] [--seed 0] [--shadow-size N] [--out DIR] [--json]
[--dry-run]``

Adult in the release set-up: ``--rows`` rows of the bundled table, a seeded random subset (all of
it when ``--rows`` is as large), of which ``--holdout`` is held back to play the population (D_aux
and the reference records); D is the rest (7,000 rows by default). The audit plan is the
``--outliers`` most outlying records of D plus ``--random`` random ones. For each attacker and
each N_shadow of ``--shadows`` the engine runs the model-seeded game (the only one the
leave-one-out attacker plays) with the same seed, plan and N_eval.

The model-seeded game's evaluation datasets are drawn from streams that depend on neither the
attacker nor N_shadow (the shared 'in' datasets, the generator on D, and each target's 'out'
datasets, D with the target swapped for a reference record), and the audit plan depends on
neither, so every setting scores exactly the same evaluation runs of the same records: the
comparison is paired, and what differs is only the attack (its shadow datasets and
meta-classifier).

Prints one row per setting: the mean model-seeded risk, the verdict counts at the run's t (at
risk / undecided / not at risk), the records whose 95% interval lies wholly below 0.5 (an attack
worse than a coin), the run's share-at-risk sentence and the wall seconds; then the paired
differences of the risks against the first setting (mean ± standard error over records), and the
mean risk of the outlier and random groups apart. ``--dry-run`` prints the plan's generator fits
and an estimate of each setting's wall time (from a calibration on this machine) and runs
nothing. The defaults are the paper-scale configuration (N_eval 200, N_shadow 200 and 1,000,
10 + 10 records of a 10,000-row slice).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, Dataset, fingerprint_table, load_dataset
from privgame.data.dataset import prepare_table
from privgame.games import plan as games_plan
from privgame.games.audit import group_masks
from privgame.games.engine import build_audit, plan_summary, start_run
from privgame.games.estimate import calibrate
from privgame.generators import resolve
from privgame.settings.attacks import resolve_attacks
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import AuditInputs, release_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _host import StealMeter

_ROWS_STREAM = 43  # the row subset's own stream (no run uses it)
_REFIT_TIMINGS = 3
_BELOW = 0.5  # an interval wholly below this: the attack does worse than a coin on that record


def adult_slice(rows: int, seed: int) -> Dataset:
    """``rows`` rows of the bundled Adult table, a seeded uniform random subset in table order."""
    adult = load_dataset(BUNDLED_ADULT)
    if rows >= len(adult.table):
        return adult
    if rows < 10:
        raise SystemExit(f"--rows {rows}: too few rows for a release set-up.")
    picked = np.sort(stream(seed, 0, _ROWS_STREAM).choice(len(adult.table), size=rows, replace=False))
    prepared = prepare_table(adult.table.iloc[picked].reset_index(drop=True), adult.schema)
    return Dataset(
        table=prepared.table,
        schema=prepared.schema,
        dropped_rows=0,
        fingerprint=fingerprint_table(prepared.table),
        source_name=adult.source_name,
    )


def make_spec(
    inputs: AuditInputs, args: argparse.Namespace, attacker: str, n_shadow: int, attacks: str = "tapas"
) -> RunSpec:
    """The run of one setting: everything but the attacker, N_shadow and the attacks is the same."""
    return RunSpec(
        data_name=f"adult.csv.gz ({args.rows:,}-row slice)",
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator=args.generator,
        attack=AttackSettings(
            n_shadow=n_shadow,
            n_eval=args.n_eval,
            games="model-seeded",
            attacker=attacker,
            attacks=resolve_attacks(attacks, setup="release", generator=args.generator),
        ),
        targets=TargetSelection.plan(outliers=args.outliers, random=args.random),
        seed=args.seed,
        setup=inputs.setup,
    ).validate()


def _duration(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 60 else f"{seconds / 60:,.1f} min"


def _se(values: np.ndarray) -> float:
    return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")


def _refit_seconds(spec: RunSpec, table: pd.DataFrame) -> float | None:
    """CPU seconds of one swapped dataset made by ``refit_swap`` + sample (median of a few), or
    None when the generator has no ``refit_swap`` (each swapped dataset is then a fresh fit)."""
    ctx, _ = build_audit(spec, table)
    generator = ctx.new_generator()
    if not callable(getattr(generator, "refit_swap", None)):
        return None
    rng = stream(spec.seed, 0, _ROWS_STREAM, 1)
    base = generator.fit(ctx.X[games_plan.ms_in_rows(ctx.target)], ctx.schema, rng=rng)
    base.refit_swap(0, ctx.X[int(ctx.reference[0])], rng=rng).sample(ctx.n_synthetic, rng=rng)  # warm-up
    times = []
    for k in range(_REFIT_TIMINGS):
        t0 = time.process_time()
        model = base.refit_swap(k + 1, ctx.X[int(ctx.reference[k + 1])], rng=rng)
        model.sample(ctx.n_synthetic, rng=rng)
        times.append(time.process_time() - t0)
    return statistics.median(times)


def dry_run(inputs: AuditInputs, args: argparse.Namespace, settings: list[tuple[str, int, str]]) -> dict:
    """Each setting's generator fits and estimated wall seconds, from a calibration on this machine.

    The runs here play the model-seeded game alone, so their time is counted from
    :func:`privgame.games.estimate.calibrate`'s measurements directly: a fit + sample on D (or on a
    D_aux shadow dataset), one ``refit_swap`` + sample for each swapped dataset (a fresh fit where
    the generator has no ``refit_swap``), the features of the N_shadow + N_eval datasets and one
    meta-classifier per target, over the cores the workers were measured to get (which falls with
    the machine's load at the time of the calibration).
    """
    deterministic = bool(getattr(resolve(args.generator), "deterministic_fit", False))
    first = make_spec(inputs, args, *settings[0])
    _, groups = build_audit(first, inputs.table)
    n_targets = len({int(t) for ids in groups.values() for t in ids})
    refit = _refit_seconds(first, inputs.table)
    calibrations = {}
    for n_shadow in sorted({s for _, s, _ in settings}):
        calibrations[n_shadow] = calibrate(
            make_spec(inputs, args, "population", n_shadow), inputs.table, workers=args.workers
        )
    out = []
    for attacker, n_shadow, attacks in settings:
        spec = make_spec(inputs, args, attacker, n_shadow, attacks)
        cal = calibrations[n_shadow]
        fits = plan_summary(spec, n_targets, table=inputs.table)
        half_shadow, half_eval = n_shadow // 2, args.n_eval // 2
        sample = cal.sample if cal.sample > 0 else cal.fit_sample
        swapped = cal.fit_sample if refit is None else refit
        shadow = cal.fit_sample if cal.shadow_fit_sample is None else cal.shadow_fit_sample
        on_d = (cal.fit_sample + half_eval * sample) if deterministic else half_eval * cal.fit_sample
        if attacker == "leave-one-out":
            shared = (half_shadow * sample) if deterministic else half_shadow * cal.fit_sample
            own = half_shadow * swapped
        else:
            shared = half_shadow * shadow
            own = half_shadow * shadow
        generator = on_d + shared + n_targets * (own + half_eval * swapped)
        features = n_targets * (n_shadow + args.n_eval) * cal.features
        work = generator + features + n_targets * cal.classifier
        parallel = cal.throughput if cal.throughput is not None else args.workers * cal.share
        startup = cal.startup if cal.startup is not None else 2.0
        seconds = (2 * cal.setup + cal.fit_sample) / cal.share + startup + work / max(parallel, 0.05)
        out.append(
            {
                "attacker": _label(attacker, attacks),
                "n_shadow": n_shadow,
                "total_fits": fits["total_fits"],
                "fits_text": fits["text"],
                "cpu_seconds": round(work, 1),
                "estimated_wall_seconds": round(seconds, 1),
            }
        )
    return {
        "benchmark": "attackers",
        "dry_run": True,
        "generator": args.generator,
        "targets": n_targets,
        "n_eval": args.n_eval,
        "workers": args.workers,
        "fit_sample_seconds_at_d": round(calibrations[max(calibrations)].fit_sample, 4),
        "refit_sample_seconds_at_d": None if refit is None else round(refit, 4),
        "features_seconds": round(calibrations[max(calibrations)].features, 4),
        "classifier_seconds": {str(s): round(c.classifier, 3) for s, c in calibrations.items()},
        "settings": out,
        "estimated_wall_seconds_total": round(sum(r["estimated_wall_seconds"] for r in out), 1),
    }


def _label(attacker: str, attacks: str) -> str:
    return attacker if attacks == "tapas" else f"{attacker}+{attacks}"


def run_setting(
    root: Path, inputs: AuditInputs, args: argparse.Namespace, attacker: str, n_shadow: int, attacks: str
) -> dict:
    """Run one setting and gather its figures and per-record risks."""
    spec = make_spec(inputs, args, attacker, n_shadow, attacks)
    meter = StealMeter()
    start = time.perf_counter()
    folder = start_run(root, spec, inputs.table, workers=args.workers)
    wall = time.perf_counter() - start
    steal = meter.share()
    records = folder.records().sort_values("record_id").reset_index(drop=True)
    summary = folder.summary()
    verdicts = records["verdict_model_seeded"].astype(str)
    masks = group_masks(records, spec)
    share = summary.get("share_at_risk") or {}
    # Each record's own work (its shadow datasets, evaluation runs, features and classifiers), in
    # seconds of its unit: paired across settings on the same records.
    unit_seconds = [float(folder.load_target(int(r))["timings"][3]) for r in records["record_id"]]
    records["unit_seconds"] = unit_seconds
    return {
        "attacker": _label(attacker, attacks),
        "attacks": list(spec.attack.attacks),
        "attack_counts": records["attack"].value_counts().to_dict() if "attack" in records else {},
        "n_shadow": n_shadow,
        "run_folder": str(folder.path) if args.out is not None else None,
        "mean_risk": float(np.nanmean(records["risk_model_seeded"].to_numpy(float))),
        "at_risk": int((verdicts == "at risk").sum()),
        "undecided": int((verdicts == "undecided").sum()),
        "not_at_risk": int((verdicts == "not at risk").sum()),
        "interval_below_half": int((records["risk_model_seeded_high"].to_numpy(float) < _BELOW).sum()),
        "group_records": {name: int(mask.sum()) for name, mask in masks.items()},
        "group_mean_risk": {
            name: float(np.nanmean(records.loc[mask, "risk_model_seeded"].to_numpy(float)))
            if mask.any()
            else None
            for name, mask in masks.items()
        },
        "share_at_risk": share.get("text"),
        "answer": (summary.get("answer") or {}).get("text"),
        "fits_made": folder.status().get("fits_made"),
        "wall_seconds": wall,
        "steal_share": steal,
        "_records": records,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10000, help="rows of Adult, a seeded random subset")
    parser.add_argument("--holdout", type=float, default=0.3)
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--outliers", type=int, default=10)
    parser.add_argument("--random", type=int, default=10)
    parser.add_argument("--n-eval", type=int, default=200)
    parser.add_argument("--shadows", default="200,1000", help="comma list of N_shadow")
    parser.add_argument("--attackers", default="leave-one-out,population")
    parser.add_argument(
        "--attacks",
        default="tapas",
        help="portfolios to compare, separated by ';', each 'all' or a comma list (e.g. 'tapas;all')",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--shadow-size",
        type=int,
        default=None,
        help="the population attacker's shadow datasets: this many rows drawn from D_aux without "
        "replacement (default: |D| rows, with replacement when D_aux is smaller)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for the run folders (temporary by default)"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--dry-run", action="store_true", help="print the fits and a runtime estimate only")
    args = parser.parse_args()
    shadows = [int(s) for s in args.shadows.split(",") if s.strip()]
    attackers = [a.strip() for a in args.attackers.split(",") if a.strip()]
    portfolios = [p.strip() for p in args.attacks.split(";") if p.strip()]
    settings = [(a, s, p) for a in attackers for s in shadows for p in portfolios]

    dataset = adult_slice(args.rows, args.seed)
    args.rows = len(dataset.table)
    inputs = release_inputs(dataset, seed=args.seed, holdout=args.holdout, shadow_size=args.shadow_size)
    header = (
        f"Adult, {args.rows:,}-row slice, release set-up (holdout {args.holdout:g}: "
        f"|D| = {inputs.sizes['target']:,}, |D_aux| = {inputs.sizes['aux']:,}, "
        f"{inputs.sizes['eval'] - inputs.sizes['target']:,} reference records), {args.generator}, "
        f"plan {args.outliers} outliers + {args.random} random, N_eval = {args.n_eval}, model-seeded game, "
        f"seed {args.seed}, {args.workers} workers"
        + (f", population shadow datasets of {args.shadow_size:,} rows" if args.shadow_size else "")
    )

    if args.dry_run:
        meter = StealMeter()
        estimate = dry_run(inputs, args, settings)
        steal = meter.share()
        estimate["steal_share"] = None if steal is None else round(steal, 4)
        if args.json:
            print(json.dumps(estimate))
            return
        print(header)
        print(
            f"calibration: fit + sample on D {estimate['fit_sample_seconds_at_d'] * 1000:,.0f} ms, "
            + (
                f"refit_swap + sample {estimate['refit_sample_seconds_at_d'] * 1000:,.0f} ms, "
                if estimate["refit_sample_seconds_at_d"] is not None
                else "no refit_swap (every swapped dataset is a fresh fit), "
            )
            + f"features {estimate['features_seconds'] * 1000:,.1f} ms per dataset, classifier "
            + ", ".join(f"{c:.2f} s (N_shadow {s})" for s, c in estimate["classifier_seconds"].items())
        )
        print(f"{'attacker':<14} {'N_shadow':>8} {'fits':>10} {'CPU s':>9} {'est. wall':>11}")
        for r in estimate["settings"]:
            print(
                f"{r['attacker']:<14} {r['n_shadow']:>8} {r['total_fits']:>10,} {r['cpu_seconds']:>9,.0f} "
                f"{_duration(r['estimated_wall_seconds']):>11}"
            )
        total = estimate["estimated_wall_seconds_total"]
        print(f"estimated total: {_duration(total)} wall ({estimate['targets']} records; nothing was run)")
        if steal is not None:
            print(f"stolen by the hypervisor  {steal:.0%} of CPU time during the calibration")
        return

    # An untimed warm-up run absorbs one-off costs (loading compiled kernels, first-call caches)
    # that would otherwise fall on the first setting's wall time alone.
    with tempfile.TemporaryDirectory() as warm:
        spec = make_spec(inputs, args, *settings[0])
        ctx, _ = build_audit(spec, inputs.table)
        tiny = replace(
            spec,
            attack=replace(spec.attack, n_shadow=4, n_eval=4),
            targets=TargetSelection(mode="ids", k=None, ids=(int(ctx.target[0]),)),
        )
        start_run(warm, tiny, inputs.table, workers=args.workers)

    meter = StealMeter()
    results: list[dict[str, Any]] = []
    with contextlib.nullcontext(args.out) if args.out is not None else tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for attacker, n_shadow, attacks in settings:
            print(
                f"running {_label(attacker, attacks)}, N_shadow {n_shadow} ...", file=sys.stderr, flush=True
            )
            results.append(run_setting(root, inputs, args, attacker, n_shadow, attacks))
            print(f"  done in {results[-1]['wall_seconds']:,.0f} s", file=sys.stderr, flush=True)
    steal = meter.share()

    ids = [r["_records"]["record_id"].to_numpy(int) for r in results]
    same_ids = all(np.array_equal(ids[0], other) for other in ids[1:])
    assert same_ids, "the settings audited different records"
    first = results[0]
    base = first["_records"]["risk_model_seeded"].to_numpy(float)
    for r in results:
        diff = r["_records"]["risk_model_seeded"].to_numpy(float) - base
        diff = diff[~np.isnan(diff)]
        r["diff_vs_first"] = float(np.mean(diff)) if len(diff) else float("nan")
        r["diff_vs_first_se"] = _se(diff)
        r["records_higher_than_first"] = int((diff > 0).sum())
        r["records_lower_than_first"] = int((diff < 0).sum())

    rows = [
        {
            k: (round(v, 4) if isinstance(v, float) else v)
            for k, v in r.items()
            if k not in ("_records", "group_mean_risk")
        }
        | {
            "group_mean_risk": {
                g: None if v is None else round(v, 4) for g, v in r["group_mean_risk"].items()
            }
        }
        for r in results
    ]
    result = {
        "benchmark": "attackers",
        "generator": args.generator,
        "rows": args.rows,
        "holdout": args.holdout,
        "d_rows": inputs.sizes["target"],
        "aux_rows": inputs.sizes["aux"],
        "reference_rows": inputs.sizes["eval"] - inputs.sizes["target"],
        "outliers": args.outliers,
        "random": args.random,
        "records": len(ids[0]),
        "record_ids": ids[0].tolist(),
        "record_ids_identical": same_ids,
        "n_eval": args.n_eval,
        "shadow_size": args.shadow_size,
        "seed": args.seed,
        "workers": args.workers,
        "threshold": make_spec(inputs, args, *settings[0]).threshold,
        "settings": rows,
        "per_record_risk": {
            f"{r['attacker']}/{r['n_shadow']}": r["_records"]["risk_model_seeded"].round(4).tolist()
            for r in results
        },
        "steal_share": None if steal is None else round(steal, 4),
    }
    if args.json:
        print(json.dumps(result))
        return

    print(header)
    print(
        f"record ids identical across the {len(results)} settings: {same_ids} "
        f"({len(ids[0])} records; same model-seeded evaluation runs in every setting)"
    )
    t = result["threshold"]
    print(
        f"{'attacker':<14} {'N_shadow':>8} {'mean R_MS':>10} {'at risk':>8} {'undecided':>10} "
        f"{'not at risk':>12} {'high < 0.5':>11} {'wall s':>8}"
    )
    for r in results:
        print(
            f"{r['attacker']:<14} {r['n_shadow']:>8} {r['mean_risk']:>10.3f} {r['at_risk']:>8} "
            f"{r['undecided']:>10} {r['not_at_risk']:>12} {r['interval_below_half']:>11} "
            f"{r['wall_seconds']:>8,.0f}"
        )
    print(f"verdicts at t = {t:g}; high < 0.5: records whose 95% interval lies wholly below 0.5")
    print("share at risk (from the random sample):")
    for r in results:
        print(f"  {r['attacker']:<14} {r['n_shadow']:>6}   {r['share_at_risk'] or '(no random sample)'}")
    print(
        f"paired differences of R_MS against {first['attacker']}, N_shadow {first['n_shadow']} "
        "(records matched by record_id):"
    )
    for r in results[1:]:
        print(
            f"  {r['attacker']:<14} {r['n_shadow']:>6}   "
            f"{r['diff_vs_first']:+.3f} ± {r['diff_vs_first_se']:.3f} "
            f"(higher on {r['records_higher_than_first']}, lower on {r['records_lower_than_first']} "
            f"of {len(ids[0])} records)"
        )
    groups = list(first["group_mean_risk"])
    print(
        "mean R_MS by audit group: "
        + ", ".join(f"{g} ({n} records)" for g, n in first["group_records"].items())
    )
    print(f"{'attacker':<14} {'N_shadow':>8} " + " ".join(f"{g:>9}" for g in groups))
    for r in results:
        cells = " ".join(
            f"{'-':>9}" if r["group_mean_risk"][g] is None else f"{r['group_mean_risk'][g]:>9.3f}"
            for g in groups
        )
        print(f"{r['attacker']:<14} {r['n_shadow']:>8} {cells}")
    if len(results) > 1:
        _per_record(results)
    if steal is not None:
        print(f"stolen by the hypervisor  {steal:.0%} of CPU time during the runs (wall times fall with it)")


def _per_record(results: list[dict[str, Any]]) -> None:
    """Each record's risk in every setting (and the attack a portfolio kept), then each portfolio
    against TAPAS alone at the same attacker and N_shadow: the mean gain, the worst loss, the random
    records above 0.55 and the paired ratio of the records' own work."""
    first = results[0]["_records"]
    names = [f"{r['attacker']}/{r['n_shadow']}" for r in results]
    print("per-record R_MS (the attack a portfolio kept in brackets):")
    print(f"{'record':>7} {'group':>15} " + " ".join(f"{n:>28}" for n in names))
    for i, record_id in enumerate(first["record_id"]):
        cells = []
        for r in results:
            row = r["_records"].iloc[i]
            kept = f" [{row['attack']}]" if len(r["attacks"]) > 1 else ""
            cells.append(f"{row['risk_model_seeded']:.3f}{kept}".rjust(28))
        print(f"{int(record_id):>7} {first['audit_group'].iloc[i]:>15} " + " ".join(cells))
    for r in results:
        if len(r["attacks"]) == 1:
            continue
        base = next(
            (
                b
                for b in results
                if b["attacks"] == ["tapas"]
                and b["n_shadow"] == r["n_shadow"]
                and b["attacker"] == r["attacker"].split("+")[0]
            ),
            None,
        )
        if base is None:
            continue
        risk, tapas = (x["_records"]["risk_model_seeded"].to_numpy(float) for x in (r, base))
        gain = risk - tapas
        random = r["_records"]["audit_group"].astype(str).str.contains("random").to_numpy()
        own, own_tapas = (x["_records"]["unit_seconds"].to_numpy(float) for x in (r, base))
        ratio = own / own_tapas
        print(
            f"{r['attacker']}/{r['n_shadow']} against TAPAS alone: mean {np.nanmean(gain):+.3f} "
            f"± {_se(gain):.3f}, worst record {np.nanmin(gain):+.3f}, best {np.nanmax(gain):+.3f}; "
            f"random records above 0.55: {int((risk[random] > 0.55).sum())} of {int(random.sum())} "
            f"(TAPAS: {int((tapas[random] > 0.55).sum())}); a record's own work "
            f"{np.median(ratio):.2f}x TAPAS' (median paired ratio; {own.sum():,.0f} s against "
            f"{own_tapas.sum():,.0f} s); "
            f"attacks kept: {r['attack_counts']}"
        )


if __name__ == "__main__":
    main()
