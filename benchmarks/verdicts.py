"""The verdicts' error rates, simulated on privgame's own interval and verdict code.

Usage: ``python benchmarks/verdicts.py [--reps 2000] [--thresholds 0.8,0.9,0.95,0.97]
[--shapes ...] [--audits 2000] [--compare]``

A record's game is simulated with scores whose true AUC is known, in five shapes:

* ``binormal``: 'in' ~ N(d, 1), 'out' ~ N(0, 1), d = sqrt(2) Phi^-1(AUC);
* ``wide in`` and ``narrow in``: unequal variances, 'in' ~ N(mu, 2) or N(mu, 0.5);
* ``ties at top`` (a leak mixture): a share 2 AUC - 1 of the 'in' runs tied at one score above
  every 'out' run, the rest of the 'in' runs and the 'out' runs U(0, 1) (at t = 0.97, 94% of the
  'in' scores tied at the top, as a random forest's probabilities of 1.0 are);
* ``discrete``: binormal scores rounded to a grid of 0.5, so that ties are everywhere.

Runs are indexed as in the engine: a record extended from 200 to 1,000 runs keeps its first 200.
Seven procedures, each as privgame plays it: one look at N_eval = 100, 200 or 1,000; ``extend
1000`` (a look at 200, then 1,000); ``resolve`` 100 -> 800 and 200 -> 1,000 (the undecided records
double their runs while undecided, ``run --resolve-to``); and ``greedy 19``, a look after every 50
more runs from 100 to 1,000. Look k uses :func:`privgame.core.metrics.look_level`.

Printed per shape, threshold and procedure: the share of records called *at risk* at a true AUC of
exactly t (every one of them false; at most 2.5% is the claim), the share called *not at risk*
at a true AUC of t (the limit of the false "not at risk" rate just above t; also at most 2.5%),
and the power: the share called at risk at AUC = t + min(0.05, (1 - t) / 2). ``--compare`` adds
the same figures for the logit interval alone (without the Wilson bound that
:data:`privgame.core.metrics.FEW_DISCORDANT` adds).

Then the share of all records at risk: simulated audits of a table whose records' true AUCs are
known, a uniform sample of 20 records each played at N_eval = 200; the share bracket of
:func:`privgame.core.metrics.share_bracket` (verdicts) against the Clopper-Pearson interval of the
point estimates above t (before), and how often each covers the true share, at the lowest
threshold.

The last line reads ``worst false at-risk rate: X``, the largest of the at-risk rates at AUC = t
over every shape, threshold and procedure.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from statistics import NormalDist

import numpy as np

from privgame.core import metrics

PROCEDURES: dict[str, tuple[int, ...]] = {
    "fixed 100": (100,),
    "fixed 200": (200,),
    "fixed 1000": (1000,),
    "extend 1000": (200, 1000),
    "resolve 800": (100, 200, 400, 800),
    "resolve 1000": (200, 400, 800, 1000),
    "greedy 19": tuple(range(100, 1001, 50)),
}

Sampler = Callable[[int, np.random.Generator], np.ndarray]


def _normal(mean: float, sd: float) -> Sampler:
    return lambda n, rng: rng.normal(mean, sd, n)


def _binormal(auc: float, sd: float) -> tuple[Sampler, Sampler]:
    mu = math.sqrt(1 + sd * sd) * NormalDist().inv_cdf(auc)
    return _normal(mu, sd), _normal(0.0, 1.0)


def _uniform(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0, 1, n)


def _ties_at_top(auc: float) -> tuple[Sampler, Sampler]:
    def ins(n: int, rng: np.random.Generator) -> np.ndarray:
        scores = rng.uniform(0, 1, n)
        scores[rng.uniform(size=n) < 2 * auc - 1] = 2.0
        return scores

    return ins, _uniform


def _rounded(mean: float) -> Sampler:
    return lambda n, rng: np.round(rng.normal(mean, 1.0, n) * 2) / 2


def _discrete(auc: float) -> tuple[Sampler, Sampler]:
    # Rounded scores have another AUC than the unrounded ones: find the separation whose rounded
    # scores have the AUC asked for, on a large fixed sample.
    grid = np.random.default_rng(0).normal(0.0, 1.0, (2, 200_000))
    labels = np.r_[np.ones(200_000), np.zeros(200_000)]
    low, high = 0.0, 8.0
    for _ in range(40):
        d = (low + high) / 2
        value = metrics.auc(np.r_[np.round((grid[0] + d) * 2) / 2, np.round(grid[1] * 2) / 2], labels)
        low, high = (d, high) if value < auc else (low, d)
    return _rounded((low + high) / 2), _rounded(0.0)


SHAPES: dict[str, Callable[[float], tuple[Sampler, Sampler]]] = {
    "binormal": lambda auc: _binormal(auc, 1.0),
    "wide in": lambda auc: _binormal(auc, 2.0),
    "narrow in": lambda auc: _binormal(auc, 0.5),
    "ties at top": _ties_at_top,
    "discrete": _discrete,
}


def play(
    samplers: tuple[Sampler, Sampler], looks: tuple[int, ...], t: float, rng: np.random.Generator
) -> str:
    """One record's final verdict under a procedure: look at each N in turn while undecided."""
    most = looks[-1] // 2
    ins, outs = samplers[0](most, rng), samplers[1](most, rng)
    verdict = "undecided"
    for k, n in enumerate(looks, start=1):
        h = n // 2
        scores = np.r_[ins[:h], outs[:h]]
        labels = np.r_[np.ones(h), np.zeros(h)]
        low, high = metrics.auc_ci(scores, labels, level=metrics.look_level(k))
        verdict = str(metrics.verdicts([low], [high], t)[0])
        if verdict != "undecided":
            break
    return verdict


def rates(shape: str, auc: float, looks: tuple[int, ...], t: float, reps: int, seed: int) -> dict[str, float]:
    """Shares of the final verdicts over ``reps`` records of true risk ``auc``."""
    samplers = SHAPES[shape](auc)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(reps)]
    found = [play(samplers, looks, t, rng) for rng in rngs]
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
    parser.add_argument("--reps", type=int, default=2_000, help="records simulated per cell")
    parser.add_argument("--thresholds", default="0.8,0.9,0.95,0.97", help="the thresholds t, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="score shapes, comma-separated")
    parser.add_argument("--procedures", default=",".join(PROCEDURES), help="procedures, comma-separated")
    parser.add_argument("--audits", type=int, default=2_000, help="audits simulated for the share")
    parser.add_argument("--compare", action="store_true", help="also the logit interval alone")
    args = parser.parse_args()
    thresholds = [float(x) for x in args.thresholds.split(",")]
    reps = args.reps
    started = time.time()
    se = math.sqrt(0.025 * 0.975 / reps)
    print(
        f"verdict error rates, {reps:,} records per cell (simulation error about +/- {1.96 * se:.2%} at 2.5%)"
    )
    rules = [("now", metrics.FEW_DISCORDANT)] + ([("logit", 0)] if args.compare else [])
    print(
        f"{'shape':<12} {'t':>5} {'procedure':<13} {'rule':<6} {'at risk @ t':>12} "
        f"{'not at risk @ t':>16} {'power':>7}"
    )
    worst, worst_at = 0.0, ""
    for shape in args.shapes.split(","):
        for t in thresholds:
            power_at = t + min(0.05, (1 - t) / 2)
            for name in args.procedures.split(","):
                for rule, few in rules:
                    metrics.FEW_DISCORDANT = few  # the logit interval alone, for --compare
                    at_t = rates(shape, t, PROCEDURES[name], t, reps, seed=1)
                    above = rates(shape, power_at, PROCEDURES[name], t, reps, seed=2)
                    metrics.FEW_DISCORDANT = rules[0][1]
                    print(
                        f"{shape:<12} {t:>5.2f} {name:<13} {rule:<6} {at_t['at risk']:>12.2%} "
                        f"{at_t['not at risk']:>16.2%} {above['at risk']:>7.1%}",
                        flush=True,
                    )
                    if rule == "now" and at_t["at risk"] > worst:
                        worst, worst_at = at_t["at risk"], f"{shape}, t = {t}, {name}"
    t = min(thresholds)
    print(
        f"share of all records at risk at t = {t}, {args.audits:,} audits per table "
        "(20 sampled records, N_eval 200)"
    )
    for kind in ("spread", "near t"):
        cover = share_coverage(t, args.audits, seed=3, kind=kind)
        print(
            f"  {kind:<7} before (point estimates, Clopper-Pearson) covers {cover['before']:.1%}, mean "
            f"width {cover['width_before']:.2f}; now (verdict bracket) covers {cover['now']:.1%}, mean "
            f"width {cover['width_now']:.2f}",
            flush=True,
        )
    print(f"wall {time.time() - started:.0f} s")
    print(f"worst false at-risk rate: {worst:.4f} ({worst_at})")


if __name__ == "__main__":
    main()
