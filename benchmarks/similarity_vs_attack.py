"""Where the similarity test and the attack disagree, record by record, on Adult.

Usage: ``python benchmarks/similarity_vs_attack.py [--rows 10000] [--generator synthpop]
[--outliers 10] [--random 10] [--n-shadow 100] [--n-eval 100] [--workers 2] [--out DIR]
[--run RUN_DIR]``

Writes a seeded ``--rows``-row slice of the bundled Adult table (the slice of
``benchmarks/attackers.py``) as a CSV file and audits it with ``python -m privgame run`` in the
release set-up (a 0.3 holdout plays the population; the leave-one-out attacker, the default), or
reads the finished run ``--run``. Prints the command, the release's similarity figures (the
whole-table DCR share test, the DCR and NNDR percentiles), then one row per audited record: its
audit group, model-seeded risk with its 95% interval, verdict at the run's t, its distance to the
release's closest row (Gower) and its DCR p-value, and where the two checks disagree:

- ``at risk, unseen``: the attack puts the record at risk, and the release is no closer to it than
  to a typical non-member (p above 0.05): the similarity test cannot see it;
- ``close, not at risk``: the release sits unusually close to the record, yet the attack does not
  put it at risk.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from attackers import adult_slice  # the same seeded slice as the attackers benchmark

from privgame.cli.main import main as privgame
from privgame.games.audit import records_at, run_summary
from privgame.store.folders import RunFolder


def _audit(args: argparse.Namespace, folder: Path) -> tuple[RunFolder, list[str], float]:
    data = folder / f"adult-{args.rows}.csv"
    adult_slice(args.rows, 0).table.to_csv(data, index=False)
    argv = ["run", "--data", str(data), "--generator", args.generator, "--outliers", str(args.outliers)]
    argv += ["--random", str(args.random), "--n-shadow", str(args.n_shadow), "--n-eval", str(args.n_eval)]
    argv += ["--workers", str(args.workers), "--out", str(args.out or folder / "runs"), "--quiet"]
    started = time.perf_counter()
    if privgame(argv) != 0:
        raise SystemExit("the audit failed; see above")
    seconds = time.perf_counter() - started
    runs = sorted((Path(args.out or folder / "runs")).iterdir(), key=lambda p: p.stat().st_mtime)
    return RunFolder(runs[-1]), argv, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--generator", default="synthpop")
    parser.add_argument("--outliers", type=int, default=10)
    parser.add_argument("--random", type=int, default=10)
    parser.add_argument("--n-shadow", type=int, default=100)
    parser.add_argument("--n-eval", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="keep the run folder here (default: a temporary folder)")
    parser.add_argument("--run", help="read this finished run instead of auditing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.run:
            folder, argv, seconds = RunFolder(args.run), None, None
        else:
            folder, argv, seconds = _audit(args, Path(tmp))
        report(folder, argv, seconds)


def report(folder: RunFolder, argv: list[str] | None, seconds: float | None) -> None:
    """Print the run's similarity figures and the per-record table."""
    spec = folder.spec()
    t = spec.threshold
    summary = run_summary(folder)
    similarity = summary["similarity"]
    if argv is not None:
        print("$ python -m privgame " + " ".join(argv))
        print(f"audit took {seconds:.0f} s; run {folder.run_id}")
    table = similarity["table"]
    print(
        f"release of {similarity['synthetic_rows']:,} rows against D ({spec.sizes['target']:,} rows) and "
        f"{similarity['holdout_rows']:,} non-members"
    )
    print(
        f"DCR share test: {table['dcr_share']:.3f} closer to D (n = {table['n_train']:,} each), "
        f"p = {table['share_p_value']:.3g}, {'passes' if table['passes'] else 'fails'} at {table['alpha']:g}"
    )
    print(
        f"DCR 5th percentile: {table['dcr_train_p5']:.4f} to D, {table['dcr_holdout_p5']:.4f} to the "
        f"holdout; NNDR 5th percentile: {table['nndr_train_p5']:.3f} to D, {table['nndr_holdout_p5']:.3f} "
        "to the holdout"
    )
    print(similarity["text"])
    alpha = float(similarity.get("alpha", 0.05))
    records = records_at(folder.records(), t).sort_values(
        ["audit_group", "risk_model_seeded"], ascending=False
    )
    print(
        f"{'record':>7} {'group':<15} {'R_MS':>6} {'95% interval':<14} {'verdict':<12} {'DCR':>7} "
        f"{'p':>7}  disagreement"
    )
    disagree = {"at risk, unseen": 0, "close, not at risk": 0}
    for _, row in records.iterrows():
        verdict = str(row["verdict_model_seeded"])
        close = row["dcr_p_value"] <= alpha
        note = ""
        if verdict == "at risk" and not close:
            note = "at risk, unseen"
        elif close and verdict != "at risk":
            note = "close, not at risk"
        if note:
            disagree[note] += 1
        print(
            f"{int(row['record_id']):>7} {row['audit_group']!s:<15} {row['risk_model_seeded']:>6.3f} "
            f"[{row['risk_model_seeded_low']:.3f}, {row['risk_model_seeded_high']:.3f}] {verdict:<12} "
            f"{row['dcr']:>7.4f} {row['dcr_p_value']:>7.3f}  {note}"
        )
    print(
        f"{len(records)} records at t = {t:g}: {disagree['at risk, unseen']} at risk that the similarity "
        f"test cannot see, {disagree['close, not at risk']} close to the release but not at risk"
    )


if __name__ == "__main__":
    main()
