"""Synthpop's categorical splits on Adult: ordinal codes against hazy's one-hot (the paper's).

Usage: ``python benchmarks/categorical_splits.py [--fits 10] [--runs 10] [--records 4] [--n 40]
[--json]``.

Prints, for ``categorical_splits`` = ``ordinal`` and ``onehot``:

* the fit time (minimum over ``--runs`` fits, so the figure is the least disturbed by a busy
  machine) at |D| = 1,000 and |D| = 31,655 (70% of Adult), and the ratio onehot / ordinal;
* fidelity over ``--fits`` synthetic datasets, each of |D| = 1,000 rows sampled from a model
  fitted on 1,000 random Adult rows: the mean total variation distance of single columns
  (categories, or the data's deciles for continuous columns), the Cramér's V of relationship x
  income and of relationship x marital-status (against the whole table's), and the mean
  absolute difference, over every pair of categorical columns, between the synthetic and the
  real training data's Cramér's V;
* with ``--records K`` (> 0), the mean |R_MS(onehot) - R_MS(ordinal)| over K random records of
  the paper's set-up at N_shadow = N_eval = ``--n`` (small N: the difference includes the
  estimates' own noise, which the same run repeated with another seed would also show).

hazy's figures for relationship x income, from the fidelity review (issue 17): data 0.477,
hazy's synthpop 0.439, privgame's ordinal trees 0.499.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult, adult_spec

from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import start_run
from privgame.generators import create

SPLITS = ("ordinal", "onehot")
FIT_SIZES = (1000, 31655)
HAZY_RELATIONSHIP_INCOME = 0.439
# Stream roles under the root seed 2026 (seeding.stream takes integers).
FIT, FIT_RNG, FIDELITY = 1, 2, 3


def tvd(real: np.ndarray, synthetic: np.ndarray, categorical: bool, k: int) -> float:
    """Total variation distance of one column: over categories, or the real data's deciles."""
    if categorical:
        p = np.bincount(real.astype(int), minlength=k) / len(real)
        q = np.bincount(synthetic.astype(int), minlength=k) / len(synthetic)
    else:
        edges = np.unique(np.quantile(real, np.linspace(0, 1, 11)[1:-1]))
        p = np.bincount(np.searchsorted(edges, real), minlength=len(edges) + 1) / len(real)
        q = np.bincount(np.searchsorted(edges, synthetic), minlength=len(edges) + 1) / len(synthetic)
    return 0.5 * float(np.abs(p - q).sum())


def cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Cramér's V of two categorical columns (0 when either is constant)."""
    table = pd.crosstab(a, b).to_numpy(dtype=float)
    if min(table.shape) < 2:
        return 0.0
    n = table.sum()
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return float(np.sqrt(chi2 / n / (min(table.shape) - 1)))


def fit_times(X: np.ndarray, schema, runs: int) -> dict[str, dict[int, float]]:
    """Minimum fit time (ms) of each setting at each size, the settings interleaved."""
    best = {splits: dict.fromkeys(FIT_SIZES, np.inf) for splits in SPLITS}
    for n in FIT_SIZES:
        for i in range(runs + 1):
            rows = X[stream(2026, FIT, n, i).choice(len(X), size=n, replace=False)]
            for splits in SPLITS:
                generator = create("synthpop", categorical_splits=splits)
                start = time.perf_counter()
                generator.fit(rows, schema, rng=stream(2026, FIT_RNG, i))
                elapsed = (time.perf_counter() - start) * 1000
                if i:  # the first call pays for JIT compilation or loading the cache
                    best[splits][n] = min(best[splits][n], elapsed)
    return best


def fidelity(X: np.ndarray, schema, fits: int) -> dict[str, dict[str, float]]:
    """Mean fidelity figures of each setting over ``fits`` models of 1,000 rows."""
    names = schema.names
    categorical = schema.is_categorical
    cards = schema.cardinalities
    rel, inc, mar = names.index("relationship"), names.index("income"), names.index("marital-status")
    pairs = list(itertools.combinations(np.flatnonzero(categorical), 2))
    out: dict[str, dict[str, float]] = {}
    for splits in SPLITS:
        tvds, rel_inc, rel_mar, pair_gap = [], [], [], []
        for i in range(fits):
            rng = stream(2026, FIDELITY, i)
            rows = X[rng.choice(len(X), size=1000, replace=False)]
            syn = create("synthpop", categorical_splits=splits).fit_sample(rows, schema, 1000, rng=rng)
            tvds.append(
                np.mean(
                    [
                        tvd(rows[:, j], syn[:, j], bool(categorical[j]), int(cards[j]))
                        for j in range(len(names))
                    ]
                )
            )
            rel_inc.append(cramers_v(syn[:, rel], syn[:, inc]))
            rel_mar.append(cramers_v(syn[:, rel], syn[:, mar]))
            pair_gap.append(
                np.mean(
                    [
                        abs(cramers_v(syn[:, a], syn[:, b]) - cramers_v(rows[:, a], rows[:, b]))
                        for a, b in pairs
                    ]
                )
            )
        out[splits] = {
            "mean_tvd": float(np.mean(tvds)),
            "v_relationship_income": float(np.mean(rel_inc)),
            "v_relationship_marital": float(np.mean(rel_mar)),
            "mean_abs_v_gap": float(np.mean(pair_gap)),
        }
    out["data"] = {
        "v_relationship_income": cramers_v(X[:, rel], X[:, inc]),
        "v_relationship_marital": cramers_v(X[:, rel], X[:, mar]),
    }
    return out


def risk_difference(records: int, n: int) -> dict[str, float]:
    """Mean |ΔR_MS| between the settings over ``records`` random records of the paper's set-up."""
    dataset = load_dataset(BUNDLED_ADULT)
    base = adult_spec(dataset, generator="synthpop", n=n, targets=records)
    risks = {}
    for splits in SPLITS:
        spec = dataclasses.replace(base, generator_params={"categorical_splits": splits})
        with tempfile.TemporaryDirectory() as root:
            folder = start_run(root, spec, dataset.table, workers=1)
            risks[splits] = folder.records()["risk_model_seeded"].to_numpy()
    delta = np.abs(risks["onehot"] - risks["ordinal"])
    return {
        "records": records,
        "n": n,
        "mean_abs_delta_r_ms": float(delta.mean()),
        "max_abs_delta_r_ms": float(delta.max()),
        "mean_r_ms_ordinal": float(risks["ordinal"].mean()),
        "mean_r_ms_onehot": float(risks["onehot"].mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=10, help="models per setting for fidelity")
    parser.add_argument("--runs", type=int, default=10, help="timed fits per setting and size")
    parser.add_argument("--records", type=int, default=0, help="records for |ΔR_MS| (0: skip)")
    parser.add_argument("--n", type=int, default=40, help="N_shadow = N_eval for |ΔR_MS|")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    X, schema = adult()
    times = fit_times(X, schema, args.runs)
    fid = fidelity(X, schema, args.fits)
    result: dict[str, object] = {
        "fit_ms": {s: {str(n): round(v, 2) for n, v in times[s].items()} for s in SPLITS},
        "onehot_over_ordinal": {
            str(n): round(times["onehot"][n] / times["ordinal"][n], 3) for n in FIT_SIZES
        },
        "fidelity": {k: {m: round(v, 4) for m, v in d.items()} for k, d in fid.items()},
    }
    if args.records > 0:
        result["risk"] = risk_difference(args.records, args.n)
    if args.json:
        print(json.dumps(result))
        return
    for n in FIT_SIZES:
        print(
            f"fit |D| = {n:>6}: ordinal {times['ordinal'][n]:8.1f} ms, onehot {times['onehot'][n]:8.1f} ms "
            f"(onehot / ordinal {times['onehot'][n] / times['ordinal'][n]:.2f}; min of {args.runs})"
        )
    data = fid["data"]
    print(f"fidelity, |D| = 1,000, mean of {args.fits} models:")
    print(
        f"  data (whole table): V(relationship, income) {data['v_relationship_income']:.3f}, "
        f"V(relationship, marital-status) {data['v_relationship_marital']:.3f}; "
        f"hazy's synthpop V(relationship, income) {HAZY_RELATIONSHIP_INCOME:.3f}"
    )
    for splits in SPLITS:
        f = fid[splits]
        print(
            f"  {splits:<8} mean TVD {f['mean_tvd']:.4f}, "
            f"V(relationship, income) {f['v_relationship_income']:.3f}, "
            f"V(relationship, marital-status) {f['v_relationship_marital']:.3f}, "
            f"mean |V_syn - V_train| over categorical pairs {f['mean_abs_v_gap']:.4f}"
        )
    if "risk" in result:
        r = result["risk"]
        print(
            f"R_MS over {r['records']} records, N_shadow = N_eval = {r['n']}: mean |onehot - ordinal| "
            f"{r['mean_abs_delta_r_ms']:.3f} (max {r['max_abs_delta_r_ms']:.3f}); mean R_MS ordinal "
            f"{r['mean_r_ms_ordinal']:.3f}, onehot {r['mean_r_ms_onehot']:.3f}"
        )


if __name__ == "__main__":
    main()
