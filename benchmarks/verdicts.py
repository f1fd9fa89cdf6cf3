"""The verdicts' error rates, simulated on privgame's own interval and verdict code.

Usage: ``python benchmarks/verdicts.py [--reps 10000] [--threshold 0.8] [--audits 2000]``

A record's game is simulated with binormal scores: 'in' runs ~ N(d, 1), 'out' runs ~ N(0, 1),
d = sqrt(2) Phi^-1(AUC), so its true risk is AUC. Runs are indexed as in the engine: a record
extended from 200 to 1,000 runs keeps its first 200. Four procedures, each as privgame plays it:

* ``fixed 200`` and ``fixed 1000``: one look at N_eval runs;
* ``extend 1000``: a look at 200, then the undecided records get 1,000 (``extend --n-eval 1000``);
* ``resolve 1000``: 200, then the undecided records double to 400, 800, 1,000
  (``run --resolve-to 1000``), stopping when decided.

Each under two rules: *before* (the plain DeLong interval at 95% at every look, privgame until
2026-12) and *now* (the logit DeLong interval, look k at :func:`privgame.core.metrics.look_level`).
Printed per procedure: the share of records called *at risk* at a true AUC of exactly t (should
be at most 2.5%), the share called *not at risk* at a true AUC of t (the limit of the false "not
at risk" rate just above t; also at most 2.5%), and the power: the share called at risk at
AUC = t + 0.05.

Then the share of all records at risk: simulated audits of a table whose records' true AUCs are
known, a uniform sample of 20 records each played at N_eval = 200; the share bracket of
:func:`privgame.core.metrics.share_bracket` (verdicts) against the Clopper-Pearson interval of the
point estimates above t (before), and how often each covers the true share. Two tables: *spread*
(80% of records far below t, 12% near it, 8% far above) and *near t* (half the records just
below t, at t - 0.02, the other half at 0.6: none is at risk, but a point estimate lands above t
about a third of the time).

The last line reads ``worst false at-risk rate: X``, the largest of the *now* procedures' rates at
AUC = t.
"""

from __future__ import annotations

import argparse
import math
import time
from statistics import NormalDist

import numpy as np

from privgame.core import metrics

PROCEDURES: dict[str, tuple[int, ...]] = {
    "fixed 200": (200,),
    "fixed 1000": (1000,),
    "extend 1000": (200, 1000),
    "resolve 1000": (200, 400, 800, 1000),
}


def _interval(scores: np.ndarray, labels: np.ndarray, look: int, rule: str) -> tuple[float, float]:
    if rule == "before":
        return metrics.auc_ci(scores, labels, method="wald")
    return metrics.auc_ci(scores, labels, level=metrics.look_level(look))


def play(auc: float, looks: tuple[int, ...], rule: str, t: float, rng: np.random.Generator) -> str:
    """One record's final verdict under a procedure: look at each N in turn while undecided."""
    d = math.sqrt(2) * NormalDist().inv_cdf(auc)
    most = looks[-1] // 2
    ins, outs = rng.normal(d, 1.0, most), rng.normal(0.0, 1.0, most)
    verdict = "undecided"
    for k, n in enumerate(looks, start=1):
        h = n // 2
        scores = np.r_[ins[:h], outs[:h]]
        labels = np.r_[np.ones(h), np.zeros(h)]
        low, high = _interval(scores, labels, k, rule)
        verdict = str(metrics.verdicts([low], [high], t)[0])
        if verdict != "undecided":
            break
    return verdict


def rates(auc: float, looks: tuple[int, ...], rule: str, t: float, reps: int, seed: int) -> dict[str, float]:
    """Shares of the final verdicts over ``reps`` records of true risk ``auc``."""
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(reps)]
    found = [play(auc, looks, rule, t, rng) for rng in rngs]
    return {v: found.count(v) / reps for v in metrics.VERDICTS}


def _table(kind: str, t: float, rng: np.random.Generator) -> np.ndarray:
    """The true AUCs of a table of 5,000 records."""
    if kind == "spread":
        return np.concatenate(
            [rng.uniform(0.5, 0.7, 4000), rng.uniform(t - 0.05, t + 0.05, 600), rng.uniform(0.9, 0.99, 400)]
        )
    return np.concatenate([np.full(2500, t - 0.02), np.full(2500, 0.6)])


def share_coverage(
    t: float, audits: int, seed: int, kind: str = "spread", sample: int = 20, n_eval: int = 200
) -> dict[str, float]:
    """How often the share's interval covers the true share, over simulated audits."""
    root = np.random.SeedSequence(seed)
    before = now = 0
    widths: dict[str, list[float]] = {"before": [], "now": []}
    for child in root.spawn(audits):
        rng = np.random.default_rng(child)
        true = _table(kind, t, rng)
        share = float(np.mean(true > t))
        picked = rng.choice(true, size=sample, replace=False)
        point, verdict = [], []
        for auc in picked:
            d = math.sqrt(2) * NormalDist().inv_cdf(auc)
            h = n_eval // 2
            scores = np.r_[rng.normal(d, 1.0, h), rng.normal(0.0, 1.0, h)]
            labels = np.r_[np.ones(h), np.zeros(h)]
            point.append(metrics.auc(scores, labels))
            low, high = metrics.auc_ci(scores, labels, level=metrics.look_level(1))
            verdict.append(str(metrics.verdicts([low], [high], t)[0]))
        above = int(np.sum(np.array(point) > t))
        lo_b, hi_b = metrics.binomial_interval(above, sample)
        at_risk = verdict.count("at risk")
        not_safe = at_risk + verdict.count("undecided") + verdict.count("attack failed")
        lo_n, hi_n = metrics.share_bracket(at_risk, not_safe, sample)
        before += lo_b <= share <= hi_b
        now += lo_n <= share <= hi_n
        widths["before"].append(hi_b - lo_b)
        widths["now"].append(hi_n - lo_n)
    return {
        "before": before / audits,
        "now": now / audits,
        "width_before": float(np.mean(widths["before"])),
        "width_now": float(np.mean(widths["now"])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10_000, help="records simulated per cell")
    parser.add_argument("--threshold", type=float, default=0.8, help="the high-risk threshold t")
    parser.add_argument("--audits", type=int, default=2_000, help="audits simulated for the share")
    args = parser.parse_args()
    t, reps = args.threshold, args.reps
    started = time.time()
    se = math.sqrt(0.025 * 0.975 / reps)
    print(
        f"verdict error rates, {reps:,} records per cell (simulation error about +/- {1.96 * se:.2%} at 2.5%)"
    )
    print(f"{'procedure':<14} {'rule':<7} {'at risk @ t':>12} {'not at risk @ t':>16} {'power @ t+0.05':>15}")
    worst = 0.0
    for name, looks in PROCEDURES.items():
        for rule in ("before", "now"):
            at_t = rates(t, looks, rule, t, reps, seed=1)
            above = rates(t + 0.05, looks, rule, t, reps, seed=2)
            print(
                f"{name:<14} {rule:<7} {at_t['at risk']:>12.2%} {at_t['not at risk']:>16.2%} "
                f"{above['at risk']:>15.2%}",
                flush=True,
            )
            if rule == "now":
                worst = max(worst, at_t["at risk"])
    print(f"share of all records at risk, {args.audits:,} audits per table (20 sampled records, N_eval 200)")
    for kind in ("spread", "near t"):
        cover = share_coverage(t, args.audits, seed=3, kind=kind)
        print(
            f"  {kind:<7} before (point estimates, Clopper-Pearson) covers {cover['before']:.1%}, mean "
            f"width {cover['width_before']:.2f}; now (verdict bracket) covers {cover['now']:.1%}, mean "
            f"width {cover['width_now']:.2f}",
            flush=True,
        )
    print(f"wall {time.time() - started:.0f} s")
    print(f"worst false at-risk rate: {worst:.4f}")


if __name__ == "__main__":
    main()
