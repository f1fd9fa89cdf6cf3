"""One-row refits against fresh fits, interleaved in one process: paired CPU-time ratios.

Usage: ``python benchmarks/refit.py [--rows 31655] [--rounds 40] [--only NAME]``; ``--rows
1000,31655`` runs both sizes, ``--only synthpop`` one generator.

For every registered generator whose class has ``refit_swap`` (an exact refit of a fitted model
with one training row replaced), a base model is fitted once on D, |D| random Adult rows. Each
round then swaps one random position of D for a random Adult row outside D and times, in
alternating order, a fresh fit on the swapped table + sampling |D| rows, and the base's
``refit_swap`` + sampling |D| rows, both with the same seed. The two outputs must be identical
(the contract of ``refit_swap``); each line says whether they were on every round.

Per case it prints the median CPU time of each, the median of the per-round ratios (refit +
sample over fit + sample), the same for the fit and the refit alone, the share of fit + sample
spent sampling (a floor for the first ratio) and the first refit's time (a refit may build
caches on the base the first time). A last line gives the share of CPU time the hypervisor
stole during the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult
from _host import StealMeter

from privgame.core.seeding import stream
from privgame.data import Schema
from privgame.generators import create, registry

# Cases beyond each generator's defaults.
EXTRA: dict[str, list[dict[str, Any]]] = {"baynet": [{"degree": 2}]}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    """Every registered generator with ``refit_swap``, with its defaults and the extra cases."""
    cases: list[tuple[str, dict[str, Any]]] = []
    for name, cls in registry.GENERATORS.items():
        if callable(getattr(cls, "refit_swap", None)):
            cases += [(name, {})] + [(name, params) for params in EXTRA.get(name, [])]
    return cases


def _run(
    name: str, params: dict[str, Any], X: np.ndarray, schema: Schema, n: int, rounds: int, seed: int
) -> str:
    """Time ``rounds`` paired rounds of one case at ``n`` rows; one line of figures."""
    picker = np.random.default_rng(seed)
    inside = picker.choice(len(X), size=n, replace=False)
    outside = np.setdiff1d(np.arange(len(X)), inside)
    D = np.ascontiguousarray(X[inside])
    clock = time.process_time
    start = clock()
    base = create(name, **params).fit(D, schema, rng=stream(seed, 0))
    base_fit = clock() - start
    times: dict[str, list[float]] = {key: [] for key in ("fit", "fit_sample", "refit", "refit_sample")}
    identical, first_refit = True, float("nan")
    for r in range(rounds + 1):  # round 0 warms up (compilation, the base's caches), untimed
        position = int(picker.integers(n))
        row = X[outside[picker.integers(len(outside))]]
        swapped = D.copy()
        swapped[position] = row
        outputs: dict[str, np.ndarray] = {}
        for key in ("fresh", "refit") if r % 2 else ("refit", "fresh"):
            rng = stream(seed, 1, r)
            t0 = clock()
            if key == "fresh":
                model = create(name, **params).fit(swapped, schema, rng=rng)
            else:
                model = base.refit_swap(position, row, rng=rng)
            t1 = clock()
            outputs[key] = model.sample(n, rng=rng)
            t2 = clock()
            prefix = "fit" if key == "fresh" else "refit"
            times[prefix].append(t1 - t0)
            times[f"{prefix}_sample"].append(t2 - t0)
        if r == 0:
            first_refit = times["refit"][0]
            for values in times.values():
                values.clear()
        identical &= outputs["fresh"].tobytes() == outputs["refit"].tobytes()

    def ratio(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))

    ms = {key: statistics.median(values) * 1000 for key, values in times.items()}
    sampling = statistics.median(
        (fs - f) / fs for f, fs in zip(times["fit"], times["fit_sample"], strict=True)
    )
    label = f"{name} {' '.join(f'{k}={v}' for k, v in params.items())}".strip()
    return (
        f"{label:<18} rows {n:>6}: fit+sample {ms['fit_sample']:7.2f} ms, refit+sample "
        f"{ms['refit_sample']:7.2f} ms, paired ratio {ratio('refit_sample', 'fit_sample'):.3f} | fit "
        f"{ms['fit']:7.2f} ms, refit {ms['refit']:6.2f} ms, ratio {ratio('refit', 'fit'):.3f} | "
        f"sampling {sampling:.0%} of fit+sample | base fit {base_fit * 1000:.0f} ms, first refit "
        f"{first_refit * 1000:.1f} ms | identical: {'yes' if identical else 'NO'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=lambda text: [int(v) for v in text.split(",")], default=[31655])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", default=None, help="run only the generator of this name")
    args = parser.parse_args()
    X, schema = adult()
    meter = StealMeter()
    cases = [case for case in _cases() if args.only is None or case[0] == args.only]
    if not cases:
        print("no registered generator has refit_swap")
    for n in args.rows:
        for name, params in cases:
            print(_run(name, params, X, schema, n, args.rounds, args.seed), flush=True)
    print(meter.describe())


if __name__ == "__main__":
    main()
