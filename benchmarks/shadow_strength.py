"""Attack strength: how the risks move with the number of shadow datasets, paired on the same runs.

Usage: ``python benchmarks/shadow_strength.py [--generator synthpop] [--records 20]
[--shadows 200,500,1000] [--n-eval 500] [--workers 2] [--json]``

The paper trains each attack on N_shadow = 1,000 shadow datasets; privgame's default is 200.
Adult, the paper's set-up (|D| = 1,000, seed 0), ``--records`` random records of D. Because every
shadow dataset and every evaluation run is indexed by its own seed, a run with N_shadow = 200
uses exactly the first 100 'in' and 100 'out' shadow datasets of a run with N_shadow = 1,000, and
the same evaluation runs. So each record's shadow datasets and evaluation runs are made once, and
one meta-classifier per N_shadow is trained on the nested prefixes: the comparison is exactly
paired, as if each setting were a separate run with the same seed.

Prints, for each N_shadow, the mean model-seeded and traditional risk, and the mean paired
difference against the largest N_shadow (the bias of a weaker attack), with its standard error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult_spec

from privgame.attack import MetaClassifier
from privgame.core import metrics
from privgame.core.seeding import Role, stream
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games import plan
from privgame.games.engine import build_context

# The unit's own building blocks, so that the settings share every dataset exactly.
from privgame.games.work import Context, _Clock, _features, _features_of, shared_chunk


def _record(
    ctx: Context, record_id: int, shadow_out: np.ndarray, ms_in: np.ndarray, shadows: list[int]
) -> dict:
    clock = _Clock()
    key = record_id + 1
    x = ctx.X[record_id]
    queries = ctx.queries()
    most = max(shadows) // 2
    shadow_in = np.stack(
        [
            _features(
                ctx,
                queries,
                x,
                plan.shadow_in_rows(
                    rng := stream(ctx.seed, key, Role.SHADOW_IN, i), ctx.aux, record_id, ctx.n
                ),
                rng,
                clock,
            )
            for i in range(most)
        ]
    )
    shadow_out_features = _features_of(queries, x, shadow_out[:most], clock)
    half = ctx.n_eval // 2
    ms_out = np.stack(
        [
            _features(
                ctx,
                queries,
                x,
                plan.ms_out_rows(
                    rng := stream(ctx.seed, key, Role.MS_OUT, i), ctx.target, ctx.reference, record_id
                )[0],
                rng,
                clock,
            )
            for i in range(half)
        ]
    )
    ms = np.concatenate([_features_of(queries, x, ms_in[:half], clock), ms_out])
    t = np.stack(
        [
            _features(
                ctx,
                queries,
                x,
                plan.t_in_rows(rng := stream(ctx.seed, key, Role.T_IN, i), ctx.eval_pool, record_id, ctx.n),
                rng,
                clock,
            )
            for i in range(half)
        ]
        + [
            _features(
                ctx,
                queries,
                x,
                plan.t_out_rows(rng := stream(ctx.seed, key, Role.T_OUT, i), ctx.eval_pool, record_id, ctx.n),
                rng,
                clock,
            )
            for i in range(half)
        ]
    )
    labels = np.repeat(np.array([1, 0], dtype=np.int8), half)
    out = {}
    for n_shadow in shadows:
        h = n_shadow // 2
        train = np.concatenate([shadow_in[:h], shadow_out_features[:h]])
        y = np.repeat(np.array([1, 0], dtype=np.int8), h)
        clf = MetaClassifier(ctx.classifier).fit(train, y, rng=stream(ctx.seed, key, Role.CLASSIFIER))
        out[n_shadow] = (metrics.auc(clf.score(ms), labels), metrics.auc(clf.score(t), labels))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--records", type=int, default=20)
    parser.add_argument("--shadows", default="200,500,1000")
    parser.add_argument("--n-eval", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    shadows = sorted(int(s) for s in args.shadows.split(","))
    dataset = load_dataset(BUNDLED_ADULT)
    spec = adult_spec(dataset, generator=args.generator, n=max(shadows), targets=args.records)
    spec = type(spec).from_dict(
        {**spec.to_dict(), "attack": {**spec.to_dict()["attack"], "n_eval": args.n_eval}}
    )
    ctx, targets = build_context(spec, dataset.table)
    started = time.perf_counter()
    most, half = max(shadows) // 2, args.n_eval // 2
    step = 50
    chunks = Parallel(n_jobs=args.workers)(
        delayed(shared_chunk)(ctx, role, a, min(a + step, count))
        for role, count in ((Role.SHADOW_OUT, most), (Role.MS_IN, half))
        for a in range(0, count, step)
    )
    n_out = len(range(0, most, step))
    shadow_out, ms_in = np.concatenate(chunks[:n_out]), np.concatenate(chunks[n_out:])
    found = Parallel(n_jobs=args.workers)(
        delayed(_record)(ctx, int(r), shadow_out, ms_in, shadows) for r in targets
    )
    wall = time.perf_counter() - started
    ms = {s: np.array([f[s][0] for f in found]) for s in shadows}
    tr = {s: np.array([f[s][1] for f in found]) for s in shadows}
    top = shadows[-1]
    rows = []
    for s in shadows:
        d_ms, d_t = ms[s] - ms[top], tr[s] - tr[top]
        se = lambda d: float(np.std(d, ddof=1) / math.sqrt(len(d))) if len(d) > 1 else float("nan")  # noqa: E731
        rows.append(
            {
                "n_shadow": s,
                "mean_model_seeded": round(float(np.mean(ms[s])), 4),
                "mean_traditional": round(float(np.mean(tr[s])), 4),
                "shift_model_seeded_vs_top": round(float(np.mean(d_ms)), 4),
                "shift_model_seeded_se": round(se(d_ms), 4),
                "shift_traditional_vs_top": round(float(np.mean(d_t)), 4),
                "shift_traditional_se": round(se(d_t), 4),
                "rmsd_games": round(metrics.rmsd(ms[s], tr[s]), 4),
                "at_risk_0.8": int(np.sum(ms[s] > 0.8)),
            }
        )
    result = {
        "benchmark": "shadow_strength",
        "generator": args.generator,
        "records": len(targets),
        "n_eval": args.n_eval,
        "wall_seconds": round(wall, 1),
        "rows": rows,
        "per_record_model_seeded": {str(s): ms[s].round(3).tolist() for s in shadows},
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"Adult, {args.generator}, paper set-up, {len(targets)} random records, N_eval = {args.n_eval}; "
        f"paired (same shadow and evaluation datasets), {wall:,.0f} s"
    )
    print(
        f"{'N_shadow':>9} {'mean R_MS':>10} {'mean R_T':>9} {'R_MS - top':>16} {'R_T - top':>16} "
        f"{'RMSD':>7} {'R_MS>0.8':>9}"
    )
    for r in rows:
        print(
            f"{r['n_shadow']:>9} {r['mean_model_seeded']:>10.3f} {r['mean_traditional']:>9.3f} "
            f"{r['shift_model_seeded_vs_top']:>+9.3f} ±{r['shift_model_seeded_se']:.3f} "
            f"{r['shift_traditional_vs_top']:>+9.3f} ±{r['shift_traditional_se']:.3f} "
            f"{r['rmsd_games']:>7.3f} {r['at_risk_0.8']:>9}"
        )


if __name__ == "__main__":
    main()
