"""The generators against an earlier revision, interleaved in one process: paired CPU-time ratios.

Usage: ``python benchmarks/ab.py REV [--rows 1000,31655] [--rounds 40] [--drawn-from M]``, e.g.
``python benchmarks/ab.py HEAD~3``. ``--drawn-from 9044`` draws each table with replacement from M
random Adult rows, as the release set-up's shadow datasets are drawn (Synthpop then grows its trees
on the distinct rows, with weights).

Wall-clock benchmarks on a shared machine drift by a third within an hour, so a change is judged
here by running the old and the new code alternately on the same inputs in one process and
taking the median of their per-round CPU-time ratios. The old ``_cart.py`` (Synthpop's trees) and
``bayesnet.py`` (Baynet, PrivBayes) are read from ``REV`` with ``git show`` and loaded as separate
modules; the rest of the package is today's. Each case also checks that the two give the same
output on the first round (the forests' draws, the networks' samples), and says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _adult import adult
from _host import StealMeter

import privgame.generators.registry as registry
from privgame.core.seeding import stream
from privgame.data import Schema
from privgame.generators import _cart, bayesnet

ROOT = Path(__file__).resolve().parents[1]


def _old_module(rev: str, path: str, name: str, folder: Path) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    file = folder / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    register = registry.register
    registry.register = lambda cls: cls  # the old classes must not replace today's in the registry
    try:
        spec.loader.exec_module(module)
    finally:
        registry.register = register
    return module


def _paired(
    run: Callable[[ModuleType, int], np.ndarray], old: ModuleType, new: ModuleType, rounds: int
) -> str:
    same = np.array_equal(run(old, 0), run(new, 0))  # also the first call's compilation
    times: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(rounds):
        order = (("old", old), ("new", new)) if r % 2 else (("new", new), ("old", old))
        for key, module in order:
            start = time.process_time()
            run(module, r)
            times[key].append(time.process_time() - start)
    ratio = statistics.median(n / o for n, o in zip(times["new"], times["old"], strict=True))
    old_ms, new_ms = (statistics.median(times[key]) * 1000 for key in ("old", "new"))
    verdict = "same output" if same else "OUTPUT DIFFERS"
    return f"old {old_ms:8.2f} ms, new {new_ms:8.2f} ms, paired ratio {ratio:.3f}; {verdict}"


def _table(X: np.ndarray, n: int, drawn_from: int | None, rng: np.random.Generator) -> np.ndarray:
    """``n`` random rows of ``X``, or ``n`` rows drawn with replacement from ``drawn_from`` random rows."""
    if drawn_from is None:
        return np.ascontiguousarray(X[rng.choice(len(X), size=n, replace=False)])
    pool = rng.choice(len(X), size=drawn_from, replace=False)
    return np.ascontiguousarray(X[rng.choice(pool, size=n, replace=True)])


def _synthpop(tables: list[np.ndarray], categorical: np.ndarray, module: ModuleType, r: int) -> np.ndarray:
    """Grow Synthpop's forest (one-hot splits, the default) on table ``r % 8`` and sample |D| rows."""
    forest = module.grow_forest(tables[r % 8], categorical, 5, categorical)
    return module.sample_forest(forest, stream(3, r).random((len(tables[0]), len(categorical))))


def _network(
    tables: list[np.ndarray], schema: Schema, kind: str, params: dict[str, float], module: ModuleType, r: int
) -> np.ndarray:
    """Fit a Baynet or PrivBayes generator of ``module`` on table ``r % 8`` and sample |D| rows."""
    generator = getattr(module, kind)(**params)
    return generator.fit_sample(tables[r % 8], schema, len(tables[0]), rng=stream(4, r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the earlier revision (a commit, tag or HEAD~N)")
    parser.add_argument("--rows", type=lambda text: [int(v) for v in text.split(",")], default=[1000, 31655])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--drawn-from", type=int, default=None, help="draw with replacement from M rows")
    args = parser.parse_args()
    X, schema = adult()
    categorical = schema.is_categorical
    meter = StealMeter()
    with tempfile.TemporaryDirectory() as folder:
        old_cart = _old_module(args.rev, "privgame/generators/_cart.py", "old_cart", Path(folder))
        old_bayes = _old_module(args.rev, "privgame/generators/bayesnet.py", "old_bayesnet", Path(folder))
        for n in args.rows:
            tables = [_table(X, n, args.drawn_from, stream(2026, i)) for i in range(8)]
            rounds = args.rounds if n <= 5000 else max(4, args.rounds // 4)
            cases = [
                ("synthpop grow + sample", partial(_synthpop, tables, categorical), old_cart, _cart),
                (
                    "baynet k=1",
                    partial(_network, tables, schema, "BaynetGenerator", {"degree": 1}),
                    old_bayes,
                    bayesnet,
                ),
                (
                    "privbayes k=1 eps=1",
                    partial(_network, tables, schema, "PrivBayesGenerator", {"degree": 1, "epsilon": 1.0}),
                    old_bayes,
                    bayesnet,
                ),
            ]
            for label, run, old, new in cases:
                drawn = f" (drawn from {args.drawn_from:,})" if args.drawn_from else ""
                print(f"{label:<24} rows {n:>6}{drawn}: {_paired(run, old, new, rounds)}", flush=True)
    print(meter.describe())


if __name__ == "__main__":
    main()
