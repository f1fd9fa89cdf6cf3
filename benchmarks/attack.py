"""Benchmarks of the TAPAS attack's building blocks on Adult.

``query_features``
    All 32,767 counting-query features of one 1,000-row synthetic Adult dataset for one target
    (median of 200 runs; target 10 ms or less).
``classifier_fit``
    The random-forest meta-classifier fit, zero-column dropping and scaling included, on the
    features of 1,000 shadow datasets of 1,000 rows made by the "marginals" generator (median of
    3 runs; target 6,000 ms or less), with the two half attacks that measure the attack's training
    noise (the default), and beside it the fit without them: their cost as a ratio.

Run from the repository root: ``python benchmarks/attack.py [--json] [--n-jobs N]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from privgame.attack import MetaClassifier, QuerySet, make_shadow_datasets  # noqa: E402
from privgame.core.seeding import Role, stream  # noqa: E402
from privgame.data.encoding import encode  # noqa: E402
from privgame.data.schema import Schema, infer_schema  # noqa: E402
from privgame.generators import create  # noqa: E402

ADULT = ROOT / "data" / "adult.csv.gz"
N_ROWS = 1_000
SEED = 2024


def load_adult() -> tuple[np.ndarray, Schema]:
    """Adult without its incomplete rows, encoded, and its schema."""
    table = pd.read_csv(ADULT, na_values=["?"]).dropna().reset_index(drop=True)
    schema = infer_schema(table)
    return encode(table, schema), schema


def timed(fn: object, repeats: int) -> list[float]:
    """Wall-clock milliseconds of ``repeats`` calls of ``fn``."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append((time.perf_counter() - start) * 1e3)
    return out


def bench_query_features(data: np.ndarray, schema: Schema) -> dict[str, object]:
    rng = stream(SEED, 0, Role.SPLIT)
    target = data[0]
    pool = data[1:]
    synthetic = create("marginals").fit_sample(
        pool[rng.choice(len(pool), N_ROWS, replace=False)], schema, N_ROWS, rng=rng
    )
    queries = QuerySet.for_schema(schema.is_categorical)
    queries.features(synthetic, target)  # warm-up
    times = timed(lambda: queries.features(synthetic, target), 200)
    return {
        "benchmark": "query_features",
        "median_ms": float(np.median(times)),
        "runs": len(times),
        "n_rows": N_ROWS,
        "n_features": queries.n_features,
        "target_ms": 10.0,
    }


def bench_classifier_fit(data: np.ndarray, schema: Schema, n_jobs: int) -> dict[str, object]:
    target, aux = data[0], data[1:]
    start = time.perf_counter()
    datasets, labels = make_shadow_datasets(
        create("marginals"),
        aux,
        schema,
        target,
        n=N_ROWS,
        n_shadow=1_000,
        root=SEED,
        target_index=0,
    )
    make_ms = (time.perf_counter() - start) * 1e3
    queries = QuerySet.for_schema(schema.is_categorical)
    start = time.perf_counter()
    features = queries.features_batch(datasets, target)
    features_ms = (time.perf_counter() - start) * 1e3
    kept: list[int] = []

    def fit(halves: bool = True) -> None:
        clf = MetaClassifier(n_jobs=n_jobs, halves=halves).fit(
            features, labels, rng=stream(SEED, 0, Role.CLASSIFIER)
        )
        kept.append(int(clf.kept_columns_.size))

    times, without = [], []
    for _ in range(3):  # interleaved, so that both see the same machine
        times += timed(fit, 1)
        without += timed(lambda: fit(halves=False), 1)
    return {
        "benchmark": "classifier_fit",
        "median_ms": float(np.median(times)),
        "median_ms_without_halves": float(np.median(without)),
        "halves_cost_ratio": float(np.median(times) / np.median(without)),
        "runs": len(times),
        "n_datasets": len(datasets),
        "n_features": int(features.shape[1]),
        "kept_features": kept[0],
        "n_jobs": n_jobs,
        "make_shadows_ms": make_ms,
        "features_batch_ms": features_ms,
        "target_ms": 6_000.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--n-jobs", type=int, default=2, help="random-forest threads (default 2)")
    args = parser.parse_args(argv)
    data, schema = load_adult()
    for result in (
        bench_query_features(data, schema),
        bench_classifier_fit(data, schema, args.n_jobs),
    ):
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            extras = ", ".join(
                f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                for k, v in result.items()
                if k not in ("benchmark", "median_ms")
            )
            print(f"{result['benchmark']}: median {result['median_ms']:.2f} ms ({extras})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
