"""How far the risks move between the paper's set-up and the release set-up, for the same records.

Usage: ``python benchmarks/release_vs_paper.py [--generator baynet] [--records 10] [--n 200]
[--workers 2] [--json]``

Adult, seed 0. The paper's set-up draws D (1,000 rows) from a 15,222-row evaluation pool and gives
the attacker 30,000 other rows; the release set-up trains on 70% of the table (31,655 rows) and
holds back the other 30% to play the population (D_aux 9,044 rows, so shadow datasets are drawn
with replacement; 4,523 reference records). The records audited in both are those in both D's:
half the most outlying of the paper's D, half random. Prints each record's model-seeded and
traditional risk in both set-ups, and the mean shift and root mean squared difference of each.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult_spec

from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, encode, load_dataset
from privgame.games.engine import start_run
from privgame.games.plan import run_split
from privgame.settings.run_spec import AttackSettings, RunSpec
from privgame.settings.setups import release_inputs
from privgame.settings.targets import outlier_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", default="baynet")
    parser.add_argument("--records", type=int, default=10)
    parser.add_argument("--n", type=int, default=200, help="N_shadow = N_eval")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    dataset = load_dataset(BUNDLED_ADULT)
    paper = adult_spec(dataset, generator=args.generator, n=args.n, targets=1)
    inputs = release_inputs(dataset, seed=0, holdout=0.3)
    release = RunSpec(
        data_name="adult.csv.gz",
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator=args.generator,
        # REPRODUCTION.md 4.5 was measured with the per-target traditional game.
        attack=AttackSettings(n_shadow=args.n, n_eval=args.n, traditional="per-target"),
        seed=0,
        setup=inputs.setup,
    )
    n_rows = len(dataset.table)
    paper_d = run_split(paper, n_rows).target
    both = np.intersect1d(paper_d, run_split(release, n_rows).target)
    X = encode(dataset.table, dataset.schema)
    scores = outlier_scores(X[both], dataset.schema)
    half = args.records // 2
    outliers = both[np.lexsort((both, -scores))[:half]]
    rest = np.setdiff1d(both, outliers)
    randoms = stream(0, 0, 77).choice(rest, size=args.records - half, replace=False)
    ids = tuple(sorted(int(i) for i in np.concatenate([outliers, randoms])))

    risks = {}
    for name, spec in (
        ("paper", paper),
        ("release", release),
    ):
        spec = RunSpec.from_dict({**spec.to_dict(), "targets": {"mode": "ids", "k": None, "ids": list(ids)}})
        with tempfile.TemporaryDirectory() as root:
            folder = start_run(
                root, spec, inputs.table if name == "release" else dataset.table, workers=args.workers
            )
            records = folder.records().set_index("record_id").loc[list(ids)]
        risks[name] = {
            "ms": records["risk_model_seeded"].to_numpy(float),
            "t": records["risk_traditional"].to_numpy(float),
        }

    def shift(game: str) -> tuple[float, float]:
        d = risks["release"][game] - risks["paper"][game]
        return float(np.mean(d)), math.sqrt(float(np.mean(d**2)))

    out = {
        "benchmark": "release_vs_paper",
        "generator": args.generator,
        "n_shadow": args.n,
        "n_eval": args.n,
        "records": list(ids),
        "outliers": sorted(int(i) for i in outliers),
        "paper_model_seeded": risks["paper"]["ms"].round(3).tolist(),
        "release_model_seeded": risks["release"]["ms"].round(3).tolist(),
        "paper_traditional": risks["paper"]["t"].round(3).tolist(),
        "release_traditional": risks["release"]["t"].round(3).tolist(),
        "mean_shift_model_seeded": round(shift("ms")[0], 3),
        "rms_shift_model_seeded": round(shift("ms")[1], 3),
        "mean_shift_traditional": round(shift("t")[0], 3),
        "rms_shift_traditional": round(shift("t")[1], 3),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"Adult, {args.generator}, N_shadow = N_eval = {args.n}: paper set-up (|D| = 1,000) vs release "
        f"set-up (|D| = {release.sizes['target']:,}, holdout 0.3), same {len(ids)} records"
    )
    print(
        f"{'record':>8} {'outlier':>8} {'R_MS paper':>11} {'R_MS release':>13} "
        f"{'R_T paper':>10} {'R_T release':>12}"
    )
    for i, rid in enumerate(ids):
        print(
            f"{rid:>8} {'yes' if rid in out['outliers'] else '':>8} {risks['paper']['ms'][i]:>11.3f} "
            f"{risks['release']['ms'][i]:>13.3f} {risks['paper']['t'][i]:>10.3f} "
            f"{risks['release']['t'][i]:>12.3f}"
        )
    print(
        f"model-seeded risk: mean shift (release - paper) {out['mean_shift_model_seeded']:+.3f}, "
        f"RMS shift {out['rms_shift_model_seeded']:.3f}"
    )
    print(
        f"traditional risk:  mean shift (release - paper) {out['mean_shift_traditional']:+.3f}, "
        f"RMS shift {out['rms_shift_traditional']:.3f}"
    )


if __name__ == "__main__":
    main()
