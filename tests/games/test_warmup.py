"""A warm-up in the parent compiles every kernel a worker's fit needs, so workers only load them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
import numpy as np
import pandas as pd
from numba.core.registry import CPUDispatcher
from privgame.data.encoding import encode
from privgame.data.schema import infer_schema
from privgame.games.warmup import warm_up
from privgame.games.work import Context
from privgame.attack import queries
from privgame.generators import _cart, bayesnet
from privgame.core.seeding import stream

rng = stream(0, 99)
n = 300
table = pd.DataFrame(
    {
        "a": rng.choice(list("xyz"), n),
        "b": np.round(rng.normal(size=n), 3),
        "c": rng.choice(list("pq"), n),
        "d": rng.integers(0, 50, n),
    }
)
schema = infer_schema(table)
X = encode(table, schema)
ids = np.arange(n)
ctx = Context(
    X=X, schema=schema, aux=ids[:100], eval_pool=ids[100:], target=ids[100:250],
    reference=ids[250:], generator=sys.argv[1],
)
if sys.argv[2] == "warm":
    warm_up(ctx)
else:
    # D itself, and a dataset drawn with replacement (a release set-up's shadow dataset)
    for rows in (ctx.target, rng.choice(ctx.aux, size=150, replace=True)):
        synthetic = ctx.new_generator().fit(X[rows], schema, rng=stream(0, 1)).sample(150, rng=stream(0, 2))
        ctx.queries().features(synthetic, X[ctx.target[0]])
kernels = [
    getattr(m, name) for m in (_cart, bayesnet, queries) for name in dir(m)
    if isinstance(getattr(m, name), CPUDispatcher)
]
print(json.dumps({
    "misses": sum(sum(k.stats.cache_misses.values()) for k in kernels),
    "hits": sum(sum(k.stats.cache_hits.values()) for k in kernels),
}))
"""


def _python(cache: Path, generator: str, mode: str) -> dict[str, int]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, generator, mode],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("generator", ["synthpop", "baynet"])
def test_a_worker_after_a_warm_up_compiles_nothing(tmp_path: Path, generator: str) -> None:
    _python(tmp_path, generator, "warm")  # the parent, before workers start
    worker = _python(tmp_path, generator, "fit")  # a fresh worker process, same cache
    assert worker["hits"] > 0  # it used compiled kernels...
    assert worker["misses"] == 0  # ...and compiled none of its own
