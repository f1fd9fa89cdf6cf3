"""MST's estimation step: privgame's closed-form tree estimate against Private-PGM's (the ``mbi``
package, McKenna et al.) on the same noisy measurements of Adult.

``mbi`` needs JAX (its environment here: 738 MB), so it does not install beside privgame; the
benchmark runs in three steps, the middle one in an environment that has ``mbi`` and numpy only::

    python benchmarks/mst_estimation.py measure /tmp/mst.npz            # privgame's environment
    /path/to/mbi-env/bin/python benchmarks/mst_estimation.py pgm /tmp/mst.npz
    python benchmarks/mst_estimation.py compare /tmp/mst.npz

``measure`` discretises all of Adult as MST does (10 bins per continuous column), draws the tree
and the noisy one-way and two-way measurements of MST at each epsilon, and privgame's estimate;
``pgm`` fits Private-PGM's mirror descent to the same measurements; ``compare`` prints, for each
epsilon, each estimate's L1 error on the tree's two-way marginals (as a share of the rows), and
the distance between the two estimates.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

EPSILONS = (0.1, 1.0, 10.0)


def measure(path: str) -> None:
    from privgame.core import privacy
    from privgame.core.seeding import stream
    from privgame.data import BUNDLED_ADULT, encode, load_dataset
    from privgame.generators.bayesnet import _Domain
    from privgame.generators.mst import _pair_counts, estimate_tree, selection_weights, spanning_tree

    dataset = load_dataset(BUNDLED_ADULT)
    X = encode(dataset.table, dataset.schema)
    domain = _Domain(dataset.schema, 10)
    codes = domain.discretise(X, dataset.schema)
    cards = [int(c) for c in domain.cards]
    d = len(cards)
    saved: dict[str, np.ndarray] = {"cards": np.array(cards), "n": np.array(len(X))}
    for k, epsilon in enumerate(EPSILONS):
        rng = stream(2026, k)
        rho = privacy.zcdp_rho(epsilon, 1e-9)
        sigma = math.sqrt(3 / (2 * rho))
        one_scale, two_scale = sigma * math.sqrt(d), sigma * math.sqrt(d - 1)
        one = [
            np.bincount(codes[j], minlength=cards[j]) + rng.normal(0, one_scale, cards[j]) for j in range(d)
        ]
        edges = spanning_tree(
            selection_weights(list(codes), cards, one), d, math.sqrt(8 * (rho / 3) / (d - 1)), rng
        )
        two = {
            (a, b): _pair_counts(codes[a], codes[b], cards[a], cards[b])
            + rng.normal(0, two_scale, (cards[a], cards[b]))
            for a, b in edges
        }
        started = time.perf_counter()
        _, joints = estimate_tree(one, [np.full(c, one_scale**2) for c in cards], two, two_scale**2)
        saved[f"e{k}/privgame_seconds"] = np.array(time.perf_counter() - started)
        saved[f"e{k}/edges"] = np.array(edges)
        saved[f"e{k}/sigmas"] = np.array([one_scale, two_scale])
        for j in range(d):
            saved[f"e{k}/one/{j}"] = one[j]
        for a, b in edges:
            saved[f"e{k}/two/{a}-{b}"] = two[(a, b)]
            saved[f"e{k}/true/{a}-{b}"] = _pair_counts(codes[a], codes[b], cards[a], cards[b])
            saved[f"e{k}/privgame/{a}-{b}"] = joints[(a, b)]
    np.savez_compressed(path, **saved)
    print(f"measurements of {len(X):,} rows, {d} columns, epsilon {EPSILONS}: {path}")


def pgm(path: str) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    from mbi import Domain, LinearMeasurement
    from mbi.estimation import MirrorDescent

    data = dict(np.load(path))
    cards = [int(c) for c in data["cards"]]
    domain = Domain([f"c{j}" for j in range(len(cards))], cards)
    for k in range(len(EPSILONS)):
        one_scale, two_scale = data[f"e{k}/sigmas"]
        measurements = [
            LinearMeasurement(data[f"e{k}/one/{j}"], (f"c{j}",), stddev=float(one_scale))
            for j in range(len(cards))
        ]
        edges = [tuple(e) for e in data[f"e{k}/edges"]]
        measurements += [
            LinearMeasurement(data[f"e{k}/two/{a}-{b}"].ravel(), (f"c{a}", f"c{b}"), stddev=float(two_scale))
            for a, b in edges
        ]
        started = time.perf_counter()
        model = MirrorDescent().estimate(domain, measurements, iters=3000)
        data[f"e{k}/pgm_seconds"] = np.array(time.perf_counter() - started)
        for a, b in edges:
            data[f"e{k}/pgm/{a}-{b}"] = np.asarray(
                model.project((f"c{a}", f"c{b}")).datavector(flatten=False)
            )
    np.savez_compressed(path, **data)
    print(f"Private-PGM's estimates added to {path}")


def compare(path: str) -> None:
    data = dict(np.load(path))
    n = float(data["n"])
    print(
        f"MST's estimation on Adult ({int(n):,} rows, {len(data['cards'])} columns, 10 bins), "
        "L1 error on the tree's two-way marginals / rows"
    )
    print(
        f"{'epsilon':>8} {'privgame':>10} {'Private-PGM':>12} {'between':>9} {'privgame s':>11} {'PGM s':>7}"
    )
    for k, epsilon in enumerate(EPSILONS):
        edges = [tuple(e) for e in data[f"e{k}/edges"]]
        ours = [
            np.abs(data[f"e{k}/privgame/{a}-{b}"] - data[f"e{k}/true/{a}-{b}"]).sum() / n for a, b in edges
        ]
        theirs = [np.abs(data[f"e{k}/pgm/{a}-{b}"] - data[f"e{k}/true/{a}-{b}"]).sum() / n for a, b in edges]
        between = [
            np.abs(data[f"e{k}/pgm/{a}-{b}"] - data[f"e{k}/privgame/{a}-{b}"]).sum() / n for a, b in edges
        ]
        print(
            f"{epsilon:>8g} {np.mean(ours):>10.4f} {np.mean(theirs):>12.4f} {np.mean(between):>9.4f} "
            f"{float(data[f'e{k}/privgame_seconds']):>11.3f} {float(data[f'e{k}/pgm_seconds']):>7.1f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["measure", "pgm", "compare"])
    parser.add_argument("path")
    args = parser.parse_args()
    {"measure": measure, "pgm": pgm, "compare": compare}[args.step](args.path)
