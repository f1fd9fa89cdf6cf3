"""Every record of a real-size release screened, and the exact game's audit beside it.

Usage: ``python benchmarks/screen.py [--generator synthpop] [--attacks all] [--workers 2] [--n-shadow 1000]
[--n-eval 200] [--outliers 20] [--random 20] [--confirm-top 20] [--screen-shadows 500] [--json]``
and ``python benchmarks/screen.py --validate [--random 100] [--outliers 20] ...``.

The defaults are a user's: Adult in the release set-up (holdout 0.3, |D| = 31,655), Synthpop, the
leave-one-out attacker, N_shadow = 1,000 and N_eval = 200, the audit plan 20 + 20, the screen of
every record (500 datasets) and the 20 top-screened records confirmed by the exact game, 2 workers.
Prints the wall time of the screen and of the whole audit, the peak memory of the process tree,
the screened verdicts of all records, the share of D at risk and its width, and how the screen
and the exact game agree on the random records (Spearman, the verdicts' confusion table). Quote it
beside the exact game's cost per record.

``--validate`` plays the exact game on ``--random`` random records and ``--outliers`` outliers (no
top-screened records) and compares it with the screen on all of them: Spearman, the share of the
exact game's records at risk that the screen calls at risk or undecided, and the share of the
screen's *not at risk* that the exact game puts at risk.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.audit import group_masks
from privgame.games.engine import start_run
from privgame.games.screen import screened_verdicts
from privgame.games.threat import default_games
from privgame.settings.attacks import resolve_attacks
from privgame.settings.run_spec import AttackSettings, RunSpec, ScreenSettings, TargetSelection
from privgame.settings.setups import release_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _host import StealMeter
from release import PeakMemory


class PeakShared(PeakMemory):
    """The largest proportional set size (PSS) of this process and its children together: pages
    shared between processes (the memory-mapped datasets every worker reads) count once, where
    summing resident sizes counts them once per process. Sampled every second (reading smaps
    costs more than the resident size)."""

    def __init__(self) -> None:
        super().__init__(every=1.0)
        self.phase = "start"
        self.by_phase: dict[str, int] = {}

    def _watch(self) -> None:
        import contextlib

        import psutil

        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                with contextlib.suppress(psutil.Error, AttributeError):
                    total += process.memory_full_info().pss
            self.peak = max(self.peak, total)
            self.by_phase[self.phase] = max(self.by_phase.get(self.phase, 0), total)
            self._stop.wait(self.every)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument(
        "--attacks", default=None, help="the exact game's attacks (default: the release set-up's, 'all')"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n-shadow", type=int, default=AttackSettings.n_shadow)
    parser.add_argument("--n-eval", type=int, default=AttackSettings.n_eval)
    parser.add_argument("--outliers", type=int, default=20)
    parser.add_argument("--random", type=int, default=None, help="default 20 (100 with --validate)")
    parser.add_argument("--confirm-top", type=int, default=ScreenSettings.confirm_top)
    parser.add_argument("--screen-shadows", type=int, default=ScreenSettings.shadows)
    parser.add_argument("--validate", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="keep the run folder under DIR")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    random = args.random if args.random is not None else (100 if args.validate else 20)

    dataset = load_dataset(BUNDLED_ADULT)
    inputs = release_inputs(dataset, seed=0, holdout=0.3)
    attacker = "leave-one-out"
    spec = RunSpec(
        data_name="adult.csv.gz",
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator=args.generator,
        attack=AttackSettings(
            n_shadow=args.n_shadow,
            n_eval=args.n_eval,
            attacker=attacker,
            games=default_games(attacker),
            attacks=resolve_attacks(args.attacks, setup="release", generator=args.generator),
        ),
        targets=TargetSelection.plan(outliers=args.outliers, random=random),
        seed=0,
        setup=inputs.setup,
        screen=ScreenSettings(
            mode="all", shadows=args.screen_shadows, confirm_top=0 if args.validate else args.confirm_top
        ),
    ).validate()

    root = args.keep or tempfile.mkdtemp(prefix="privgame-screen-")
    phases: dict[str, float] = {}
    started = time.perf_counter()

    shared = PeakShared()

    def progress(p: object) -> None:
        phase = getattr(p, "phase", "")
        phases.setdefault(phase, time.perf_counter() - started)
        shared.phase = phase

    with PeakMemory() as memory, shared:
        meter = StealMeter()
        folder = start_run(root, spec, inputs.table, workers=args.workers, progress=progress)
        wall = time.perf_counter() - started
        steal = meter.share()
    summary = folder.summary()
    screen = summary["screen"]
    share = summary.get("share_at_risk") or {}
    screen_seconds = phases.get("shared", phases.get("targets", wall)) - phases.get("screen", 0.0)
    result = {
        "benchmark": "screen",
        "generator": args.generator,
        "d_rows": spec.sizes["target"],
        "screen_shadows": args.screen_shadows,
        "n_shadow": args.n_shadow,
        "n_eval": args.n_eval,
        "exact_records": int(summary.get("records") or 0),
        "workers": args.workers,
        "wall_seconds": round(wall, 1),
        "screen_wall_seconds": round(screen_seconds, 1),
        "peak_memory_gib": round(memory.peak / 2**30, 2),
        "peak_pss_gib": round(shared.peak / 2**30, 2),
        "peak_pss_gib_by_phase": {k: round(v / 2**30, 2) for k, v in shared.by_phase.items()},
        "screened": screen["counts"],
        "share_low": share.get("low"),
        "share_high": share.get("high"),
        "share_width_points": None if not share else round(100 * (share["high"] - share["low"]), 1),
        "share_text": share.get("text"),
        "agreement": {k: v for k, v in (screen.get("agreement") or {}).items() if k != "disagree"},
        "run_folder": str(folder.path) if args.keep else None,
        "steal_share": None if steal is None else round(steal, 4),
    }
    if args.validate:
        result["validation"] = _validate(folder, spec.threshold)
    if args.json:
        print(json.dumps(result, default=float))
        return
    print(
        f"screen of every record: Adult holdout 0.3 ({result['d_rows']:,} records of D), {args.generator}, "
        f"{args.screen_shadows} screening datasets; exact game on {result['exact_records']} records at "
        f"N_shadow = {args.n_shadow}, N_eval = {args.n_eval}; {args.workers} workers"
    )
    print(f"  wall time, all           {wall:,.1f} s ({wall / 60:.1f} min)")
    print(f"  wall time, the screen    {screen_seconds:,.1f} s")
    print(
        f"  peak memory (all procs)  {result['peak_pss_gib']:.2f} GiB proportional (shared pages once), "
        f"{result['peak_memory_gib']:.2f} GiB resident summed over processes"
    )
    print(f"  peak by phase (PSS, GiB) {result['peak_pss_gib_by_phase']}")
    print(f"  screened verdicts        {screen['counts']}")
    print(f"  share at risk            {share.get('text')}")
    print(f"  share width              {result['share_width_points']} points")
    check = screen.get("agreement") or {}
    if check:
        print(f"  Spearman (random)        {check.get('spearman')}")
        print(f"  confusion (exact: screened) {check.get('confusion')}")
        print(f"  trusted                  {check.get('trusted')} {check.get('reason') or ''}")
    if args.validate:
        print(f"  validation               {result['validation']}")
    if steal is not None:
        print(f"  stolen by the hypervisor {steal:.0%} of CPU time")


def _validate(folder: object, threshold: float) -> dict[str, object]:
    """The issue's three checks of the screen against the exact game, on every record it played."""
    from scipy.stats import spearmanr

    records = folder.records()  # type: ignore[attr-defined]
    screened = folder.screen()  # type: ignore[attr-defined]
    merged = records[["record_id", "risk_model_seeded", "verdict_model_seeded", "audit_group"]].merge(
        screened, on="record_id"
    )
    sc = screened_verdicts(merged, threshold)
    ex = merged["verdict_model_seeded"].astype(str).to_numpy()
    at_risk = ex == "at risk"
    safe = sc == "not at risk"
    caught = np.isin(sc[at_risk], ["at risk", "undecided"])
    out: dict[str, object] = {
        "records": len(merged),
        "spearman_all": float(spearmanr(merged["risk_model_seeded"], merged["screen_risk"])[0]),
        "exact_at_risk": int(at_risk.sum()),
        "screen_at_risk_or_undecided_of_exact_at_risk": float(caught.mean()) if at_risk.any() else None,
        "screen_not_at_risk": int(safe.sum()),
        "exact_at_risk_of_screen_not_at_risk": float(at_risk[safe].mean()) if safe.any() else None,
    }
    masks = group_masks(records, folder.spec())  # type: ignore[attr-defined]
    random_ids = set(records.loc[masks["random"], "record_id"].astype(int))
    part = merged.loc[merged["record_id"].isin(random_ids)]
    out["spearman_random"] = float(spearmanr(part["risk_model_seeded"], part["screen_risk"])[0])
    out["confusion"] = pd.crosstab(ex, sc).to_dict()
    return out


if __name__ == "__main__":
    main()
