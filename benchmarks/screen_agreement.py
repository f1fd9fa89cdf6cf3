"""How far the screen can agree with the exact game: read from a run that screened every record.

Usage: ``python benchmarks/screen_agreement.py RUN_DIR [--json]``, on a run folder kept by
``python benchmarks/screen.py --keep DIR`` (or any run with the screen and a random sample).

Prints, for the exact game's random records and its outliers:

- the *reliability* of the exact game's risks (:func:`privgame.core.metrics.reliability`): the
  share of their variance across records that is not the estimation noise of each (its
  interval's half-width over 1.96, squared). A score that
  knew every record's true risk would still correlate with the exact game's estimates by only
  about its square root, so Spearman's rho between the screen and the exact game cannot reach
  much above it, whatever the screen;
- Spearman's rho between the exact game and the screen as landed (the strongest statistic) and two
  per-record trained combinations of all the screen's statistics (shrunk LDA and logistic
  regression, each trained on half of the record's screening datasets and measured on the other
  half, both ways);
- the random records' exact verdicts at t, and how many would stay undecided at larger N_eval if
  each interval narrowed as one over the square root of N_eval around the same estimate: the
  share of D at risk can be no narrower than the share of records the exact game leaves undecided.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from privgame.core.metrics import binomial_interval, reliability
from privgame.games.screen_pass import load_statistics
from privgame.store.folders import RunFolder

N_EVALS = (200, 500, 1000, 2000)


def _cross_fitted(model: object, values: np.ndarray, is_in: np.ndarray) -> float:
    """The AUC of a per-record combination trained on one half of the datasets and scored on the
    other, averaged over both halves."""
    from sklearn.base import clone

    first = np.arange(len(is_in)) < len(is_in) // 2
    aucs = []
    for held in (first, ~first):
        train = values[~held]
        centre, scale = train.mean(axis=0), train.std(axis=0) + 1e-12
        fitted = clone(model).fit((train - centre) / scale, is_in[~held])  # type: ignore[arg-type]
        aucs.append(roc_auc_score(is_in[held], fitted.decision_function((values[held] - centre) / scale)))
    return float(np.mean(aucs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    folder = RunFolder(args.run_dir)
    spec = folder.spec()
    threshold = spec.threshold
    records = folder.records().dropna(subset=["risk_model_seeded"])
    screened = folder.screen()
    stats, out, _, _ = load_statistics(folder, spec.screen.shadows)
    column = {int(r): i for i, r in enumerate(screened["record_id"])}
    models = {
        "lda": LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
        "logistic": LogisticRegression(max_iter=500),
    }
    rows = []
    for record in records.itertuples():
        i = column[int(record.record_id)]
        values, is_in = stats[:, :, i].astype(np.float64), ~out[:, i]
        rows.append(
            {
                "record_id": int(record.record_id),
                "group": record.audit_group,
                "exact": float(record.risk_model_seeded),
                "low": float(record.risk_model_seeded_low),
                "high": float(record.risk_model_seeded_high),
                "screen": float(screened["screen_risk"].iloc[i]),
                **{name: _cross_fitted(model, values, is_in) for name, model in models.items()},
            }
        )
    table = pd.DataFrame(rows)
    result: dict[str, object] = {"run": folder.run_id, "threshold": threshold}
    for group in ("random", "outlier"):
        part = table[table["group"] == group]
        if len(part) < 3:
            continue
        share = reliability(part["exact"], part["low"], part["high"]) or 0.0
        result[group] = {
            "records": len(part),
            "exact_variance": round(float(part["exact"].var(ddof=1)), 5),
            "reliability": round(share, 3),
            "spearman_ceiling": round(float(np.sqrt(share)), 3),
            "spearman": {
                name: round(float(spearmanr(part["exact"], part[name])[0]), 3) for name in ("screen", *models)
            },
        }
    sample = records[records["audit_group"] == "random"]
    if len(sample):
        risk = sample["risk_model_seeded"].to_numpy()
        below = risk - sample["risk_model_seeded_low"].to_numpy()
        above = sample["risk_model_seeded_high"].to_numpy() - risk
        projected = {}
        for n_eval in N_EVALS:
            shrink = np.sqrt(spec.attack.n_eval / n_eval)
            low, high = risk - below * shrink, risk + above * shrink
            projected[n_eval] = {
                "at risk": int(np.sum(low > threshold)),
                "undecided": int(np.sum((low <= threshold) & (high > threshold))),
                "not at risk": int(np.sum(high <= threshold)),
            }
        undecided = int(np.sum(sample["verdict_model_seeded"] == "undecided"))
        result["random_undecided"] = {
            "undecided": undecided,
            "sampled": len(sample),
            "share_low_95": round(binomial_interval(undecided, len(sample))[0], 3),
            "projected_by_n_eval": projected,
        }
    if args.json:
        print(json.dumps(result))
        return
    print(f"run {result['run']} (t = {threshold:g})")
    for group in ("random", "outlier"):
        if group in result:
            print(f"  {group:8s} {result[group]}")
    if "random_undecided" in result:
        print(f"  random records undecided in the exact game: {result['random_undecided']}")


if __name__ == "__main__":
    main()
