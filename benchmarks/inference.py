"""Attribute inference, per record and for the table: issue 46's goals, measured.

On 1,000 Adult rows (D) with 1,000 others as the population (the set-up of the SoK on
reconstruction attacks: secret ``income``, every other column known), prints:

1. Synthpop: the per-record inference verdicts, and the aggregate gap (the attack's accuracy on
   the records of D minus on the population's records, one release) beside the SoK's Synthpop gap,
   +1.65 points [-2.36, +5.65];
2. the cost of the inference game: the same Synthpop audit with and without ``--secret`` (the
   membership results are identical, same seed), paired wall times;
3. the identity generator (a positive control): the gain of every record whose secret the rest of
   D does not already reveal (neither its nearest other records nor the usual value name it),
   against 0.9;
4. the independent-marginals generator (a negative control): the share of records whose gain is
   within +/-0.05 of 0, against 95%, at N_eval = 2,000;
5. with ``--parts ...,anonymeter``, anonymeter's three risks on a Synthpop release of all of Adult
   (|D| = 31,655, the release set-up's holdout as control), timed against 2 minutes;
6. with ``--parts ...,suppression``, cell suppression (``benchmarks/plugins/cell_suppression.py``,
   a plug-in): the second positive control, beside the SoK's +20.0 points for it.

About 5 minutes on 2 cores for the main part (``--parts main``, the default), a minute for each
other::

    python benchmarks/inference.py [--out DIR] [--parts main,anonymeter,suppression] [--records 10,10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from privgame.data import BUNDLED_ADULT

SOK_SYNTHPOP_GAP = (1.65, -2.36, 5.65)
"""The SoK's Synthpop memorisation gap on 1,000 Adult rows, in points: value, 95% interval."""


PLUGINS = Path(__file__).resolve().parent / "plugins"


def privgame(*args: str, plugins: bool = False) -> float:
    started = time.perf_counter()
    env = None
    if plugins:  # the plug-in module must import in the engine's worker processes too
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))
        )
    subprocess.run([sys.executable, "-m", "privgame", *args], check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def only_run(root: Path) -> Path:
    (folder,) = [p for p in root.iterdir() if p.is_dir()]
    return folder


def audit(
    data: Path, population: Path, root: Path, generator: str, *extra: str, plugins: bool = False
) -> tuple[Path, float]:
    args = ["run", "--data", str(data), "--population", str(population), "--generator", generator]
    args += ["--screen", "none", "--workers", "2", "--quiet", "--out", str(root), *extra]
    wall = privgame(*args, plugins=plugins)
    return only_run(root), wall


def records_of(folder: Path) -> pd.DataFrame:
    from privgame.store.folders import RunFolder

    return RunFolder(folder).records()


def summary_of(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def hidden_by_the_rest(folder: Path) -> pd.Series:
    """Whether neither the nearest other records of D nor the usual value name each audited record's
    secret (the identity release without the record): the records whose secret is not the usual
    value for their known columns."""
    from privgame.attack.inference import SecretAttack
    from privgame.games.context import build_audit
    from privgame.store.folders import RunFolder

    run = RunFolder(folder)
    ctx, _ = build_audit(run.spec(), run.load_table())
    attack = SecretAttack.prepare(ctx.schema, "income", ctx.X[ctx.aux])
    out = {}
    for record_id in records_of(folder)["record_id"]:
        others = ctx.X[ctx.target[ctx.target != record_id]]
        x = ctx.X[int(record_id)][None, :]
        named = [attack.predict_nearest(others, x)[0], attack.predict_prior(others, x)[0]]
        out[int(record_id)] = bool(attack.classes(x[:, attack.secret])[0] not in named)
    return pd.Series(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="folder for the data and runs (default: a temporary one)")
    parser.add_argument("--records", default="10,10", help="the audit plan: outliers,random (default 10,10)")
    parser.add_argument("--n-shadow", default="200", help="Synthpop's N_shadow (default 200)")
    parser.add_argument("--n-eval", default="200", help="Synthpop's N_eval (default 200)")
    parser.add_argument(
        "--parts", default="main", help="what to measure, of main, anonymeter, suppression (default main)"
    )
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="privgame-inference-"))
    out.mkdir(parents=True, exist_ok=True)
    adult = pd.read_csv(BUNDLED_ADULT).dropna()
    rows = adult.iloc[np.random.default_rng(0).permutation(len(adult))[:2000]]
    data, population = out / "adult1000.csv", out / "population1000.csv"
    rows.iloc[:1000].to_csv(data, index=False)
    rows.iloc[1000:].to_csv(population, index=False)
    outliers, random = args.records.split(",")
    plan = ["--outliers", outliers, "--random", random]
    secret = ["--secret", "income"]

    parts = set(args.parts.split(","))
    print(f"Adult, |D| = 1,000, population 1,000, secret income, plan {outliers} + {random}")
    if "main" in parts:
        main_part(out, data, population, plan, secret, args)
    if "suppression" in parts:
        suppression(out, data, population, plan, secret)
    if "anonymeter" in parts:
        anonymeter(out)
    print(f"runs: {out}")


def main_part(
    out: Path, data: Path, population: Path, plan: list[str], secret: list[str], args: argparse.Namespace
) -> None:
    """Synthpop with and without the game, the identity and the independent-marginals controls."""
    outliers = plan[1]
    # 1-2. Synthpop, with and without the inference game (paired: same seed, same records).
    sizes = ["--n-shadow", args.n_shadow, "--n-eval", args.n_eval]
    without, wall_without = audit(data, population, out / "synthpop-membership", "synthpop", *plan, *sizes)
    with_, wall_with = audit(data, population, out / "synthpop-inference", "synthpop", *plan, *sizes, *secret)
    same = records_of(without)["risk_model_seeded"].equals(records_of(with_)["risk_model_seeded"])
    inference = summary_of(with_)["inference"]
    counts = inference["by_secret"]["income"]["verdicts"]
    print(
        f"synthpop   per record: {counts['at risk']} at risk, {counts['undecided']} undecided, "
        f"{counts['not at risk']} not at risk; gains {inference['by_secret']['income']['mean_gain']:+.3f} "
        f"on average, {inference['by_secret']['income']['max_gain']:+.3f} at most"
    )
    value, low, high = SOK_SYNTHPOP_GAP
    for name, gap in inference["aggregate"]["income"].items():
        inside = low <= 100 * gap["gap"] <= high
        print(
            f"synthpop   aggregate gap ({name}): {100 * gap['gap']:+.2f} points "
            f"[{100 * gap['low']:+.2f}, {100 * gap['high']:+.2f}] (members {gap['members']:.1%}, "
            f"non-members {gap['nonmembers']:.1%}); the SoK's {value:+.2f} [{low:+.2f}, {high:+.2f}]: "
            f"{'inside' if inside else 'OUTSIDE'}"
        )
    extra = wall_with / wall_without - 1
    print(
        f"cost       the audit without the inference game {wall_without:.0f} s, with it {wall_with:.0f} s: "
        f"{100 * extra:+.1f}% (goal <= +50%); membership risks identical: {same}"
    )

    # 3. The identity generator: every record whose secret the rest of D hides has a gain >= 0.9.
    # Most records' income is the usual value, which no release needs to name: 100 random ones.
    identity, _ = audit(
        data, population, out / "identity", "identity", "--outliers", outliers, "--random", "100",
        "--n-shadow", "8", "--n-eval", "200", *secret,
    )  # fmt: skip
    records = records_of(identity).set_index("record_id")
    hidden = hidden_by_the_rest(identity)
    gains = records.loc[hidden[hidden].index, "inference_gain"]
    print(
        f"identity   {len(gains)} of {len(records)} records have a secret neither their nearest other "
        f"records of D nor the usual value name; gain >= 0.9 on {int((gains >= 0.9).sum())} of them "
        f"(goal: all), "
        f"lowest {gains.min():+.3f}; at risk: {int((records['verdict_inference'] == 'at risk').sum())}"
    )

    # 4. Independent marginals: gains within +/-0.05 of 0.
    marginals, _ = audit(
        data,
        population,
        out / "marginals",
        "marginals",
        *plan,
        "--n-shadow",
        "8",
        "--n-eval",
        "2000",
        *secret,
    )
    records = records_of(marginals)
    signed = records["inference_gain"]
    gain = signed.abs()
    covers = (records["inference_low"] <= 0) & (records["inference_high"] >= 0)
    print(
        f"marginals  |gain| <= 0.05 on {int((gain <= 0.05).sum())} of {len(records)} records "
        f"({(gain <= 0.05).mean():.0%}; goal >= 95%), gains from {signed.min():+.3f} to {signed.max():+.3f}; "
        f"the interval holds 0 for {int(covers.sum())}; at risk: "
        f"{int((records['verdict_inference'] == 'at risk').sum())}"
    )


def suppression(out: Path, data: Path, population: Path, plan: list[str], secret: list[str]) -> None:
    """Cell suppression, a plug-in: the table-wide gap beside the SoK's, and the records at risk."""
    folder, _ = audit(
        data, population, out / "suppression", "cell_suppression:CellSuppression", *plan,
        "--n-shadow", "8", "--n-eval", "200", *secret, plugins=True,
    )  # fmt: skip
    inference = summary_of(folder)["inference"]
    counts = inference["by_secret"]["income"]["verdicts"]
    for name, gap in inference["aggregate"]["income"].items():
        print(
            f"suppression aggregate gap ({name}): {100 * gap['gap']:+.2f} points "
            f"[{100 * gap['low']:+.2f}, {100 * gap['high']:+.2f}] (members {gap['members']:.1%}, "
            f"non-members {gap['nonmembers']:.1%}); the SoK's cell suppression: +20.0"
        )
    print(
        f"suppression per record: {counts['at risk']} at risk, {counts['undecided']} undecided, "
        f"{counts['not at risk']} not at risk; the largest gain "
        f"{inference['by_secret']['income']['max_gain']:+.3f}"
    )


def anonymeter(out: Path) -> None:
    """anonymeter's three risks on a Synthpop release of all of Adult, timed."""
    full = out / "adult-all"
    args_run = ["run", "--data", str(BUNDLED_ADULT), "--generator", "synthpop", "--outliers", "1"]
    args_run += ["--random", "1", "--n-shadow", "4", "--n-eval", "4", "--screen", "none", "--workers", "2"]
    privgame(*args_run, "--quiet", "--out", str(full))
    run = only_run(full)
    wall = privgame("anonymity", str(run), "--workers", "2", "--secret", "income")
    figures = json.loads((run / "anonymity.json").read_text())
    print(
        f"anonymeter all of Adult (|D| = 31,655, control {figures['control_rows']:,}): {wall:.0f} s wall "
        f"(goal <= 120 s); singling out {figures['singling_out']['value']:.3f}, linkability "
        f"{figures['linkability']['value']:.3f}, inference of income "
        f"{figures['inference']['income']['value']:.3f}"
    )


if __name__ == "__main__":
    main()
