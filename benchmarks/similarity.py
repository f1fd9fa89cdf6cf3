"""Time and memory of the DCR similarity measures on Adult at full size.

Usage: ``python benchmarks/similarity.py [--generator synthpop] [--seed 0] [--rounds 2]``;
``--generator identity,marginals`` runs several synthetic tables in turn.

The bundled Adult table (45,222 rows after dropping missing values) is split 70/30 by a seeded
permutation into train (31,655 rows) and holdout (13,567); the generator is fitted on train and
samples 31,655 synthetic rows (untimed). Then ``record_similarity`` (every train and holdout row
to its closest synthetic row) and ``table_similarity`` (every synthetic row to its two closest
train and holdout rows, both cut to 13,567 rows, and the share's permutation test) run
``--rounds`` times. The first round includes loading the compiled kernels from numba's cache
(or compiling them, on a first run after a change). Goal: both together within 10 s on 2 cores.

Per round it prints the wall seconds of each part and their total; then the peak memory: the
process's maximum resident set before and after the measures, and the peak of the arrays
allocated during them (tracemalloc; numba's own buffers are not traced, the resident set covers
them), beside the size of the distance matrix that is never built. A last line gives the share
of CPU time the hypervisor stole during the figures.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult
from _host import StealMeter

from privgame.core.seeding import stream
from privgame.data.similarity import GowerEncoding, record_similarity, table_similarity
from privgame.generators import create

MIB = 1024**2


def _max_rss() -> float:
    """The process's peak resident set so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """70/30 row indices of a seeded permutation."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(0.7 * n)
    return np.sort(order[:cut]), np.sort(order[cut:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generator", default="synthpop", help="comma-separated generator names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    X, schema = adult()
    inside, outside = _split(len(X), args.seed)
    train, holdout = np.ascontiguousarray(X[inside]), np.ascontiguousarray(X[outside])
    meter = StealMeter()
    for name in args.generator.split(","):
        started = time.perf_counter()
        synthetic = create(name).fit_sample(train, schema, len(train), rng=stream(args.seed, 1))
        fitted = time.perf_counter() - started
        print(
            f"{name}: train {len(train):,}, holdout {len(holdout):,}, synthetic {len(synthetic):,} rows, "
            f"{train.shape[1]} columns ({int(schema.is_categorical.sum())} categorical); "
            f"fit + sample {fitted:.1f} s (untimed below)",
            flush=True,
        )
        rss_before = _max_rss()
        tracemalloc.start()
        for r in range(args.rounds):
            t0 = time.perf_counter()
            encoding = GowerEncoding.for_arrays(schema.is_categorical, train, holdout, synthetic)
            t1 = time.perf_counter()
            records = record_similarity(train, holdout, synthetic, encoding)
            t2 = time.perf_counter()
            table = table_similarity(train, holdout, synthetic, encoding, rng=stream(args.seed, 2))
            t3 = time.perf_counter()
            print(
                f"  round {r + 1}{' (loads the kernels)' if r == 0 else ''}: encoding {t1 - t0:.2f} s, "
                f"record_similarity {t2 - t1:.2f} s, table_similarity {t3 - t2:.2f} s, "
                f"total {t3 - t0:.2f} s",
                flush=True,
            )
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        matrix = len(train) * len(synthetic) * 8 / MIB
        print(
            f"  memory: peak resident set {rss_before:.0f} MiB before the measures, {_max_rss():.0f} MiB "
            f"after; peak of traced arrays during them {traced_peak / MIB:.1f} MiB (a train x synthetic "
            f"float64 distance matrix would take {matrix:,.0f} MiB)"
        )
        share = np.mean(records.p_value <= 0.05)
        print(
            f"  records: median DCR train {np.median(records.dcr):.4f}, holdout "
            f"{np.median(records.holdout_dcr):.4f}; exact copies {np.mean(records.dcr == 0):.1%} of train, "
            f"{np.mean(records.holdout_dcr == 0):.1%} of holdout; p <= 0.05 for {share:.1%} of train"
        )
        print(
            "  table: "
            + ", ".join(
                f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in table.to_dict().items()
            )
        )
    print(meter.describe())


if __name__ == "__main__":
    main()
