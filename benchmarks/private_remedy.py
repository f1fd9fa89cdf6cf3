"""DP as a remedy, measured: a Synthpop audit of a 5,000-row sample of Adult, then the same D
re-audited with the release trained by MST at each epsilon (``remedy --private``), each with its
utility; prints ``compare``'s table (the highest measured risk beside the proven cap).

The census' categories and ranges are declared public (the domain of all of Adult), so MST's
guarantee holds. About 6 minutes on 2 cores::

    python benchmarks/private_remedy.py [--out DIR] [--epsilons 0.5,1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.data.domain import domain_template


def privgame(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "privgame", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", default=None, help="folder for the data and the runs (default: a temporary one)"
    )
    parser.add_argument("--epsilons", default="0.5,1")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="privgame-private-"))
    out.mkdir(parents=True, exist_ok=True)
    data, domain, runs = out / "adult5k.csv", out / "domain.json", out / "runs"
    pd.read_csv(BUNDLED_ADULT).sample(5000, random_state=0).to_csv(data, index=False)
    template = domain_template(load_dataset(BUNDLED_ADULT).schema)
    domain.write_text(template if isinstance(template, str) else json.dumps(template))
    walls = {}
    run = ["run", "--data", str(data), "--domain", str(domain), "--generator", "synthpop", "--outliers", "10"]
    run += ["--random", "10", "--n-shadow", "200", "--n-eval", "200", "--screen", "none", "--workers", "2"]
    walls["synthpop"] = privgame(*run, "--quiet", "--out", str(runs))
    (parent,) = list(runs.iterdir())
    for epsilon in args.epsilons.split(","):
        walls[f"mst {epsilon}"] = privgame(
            "remedy", str(parent), "--private", epsilon, "--workers", "2", "--quiet"
        )
    for folder in sorted(runs.iterdir()):
        privgame("utility", str(folder))
    from privgame.analysis.compare import compare_runs
    from privgame.store.folders import RunFolder

    table = compare_runs([RunFolder(p) for p in sorted(runs.iterdir())])
    columns = [
        "remedy",
        "at_risk",
        "undecided",
        "not_at_risk",
        "risk_max",
        "risk_cap",
        "fidelity",
        "downstream",
    ]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table[columns].to_string(index=False))
    print("wall seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in walls.items()))
    print(f"runs: {runs}")


if __name__ == "__main__":
    main()
