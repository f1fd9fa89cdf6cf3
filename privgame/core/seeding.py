"""The one seeding scheme of privgame.

Every random choice comes from ``SeedSequence(root, spawn_key=path)`` where ``path`` is a tuple
of small non-negative integers such as ``(target_index, role, run_index)``; shared streams use
key 0, e.g. ``(0, Role.POOL, i)`` draws pool dataset ``i`` of the pooled traditional game
(:mod:`privgame.games.pool`). Any worker can rebuild
the same stream from plain integers, so results never depend on worker count or scheduling order.
No global random state is ever used.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

__all__ = ["Role", "sklearn_seed", "stream"]


class Role(IntEnum):
    """The second element of a spawn path: what a stream is used for."""

    SPLIT = 0
    SHADOW_IN = 1
    SHADOW_OUT = 2
    MS_IN = 3
    MS_OUT = 4
    T_IN = 5
    T_OUT = 6
    CLASSIFIER = 7
    TARGETS = 8
    QUERIES = 9
    GENERATOR = 10
    STUDY = 11
    RELEASE = 12
    POOL = 13
    UTILITY = 14
    SIMILARITY = 15
    SCREEN = 16
    ATTACK = 17


def stream(root: int, *path: int) -> np.random.Generator:
    """Return the random generator for ``path`` under the run's ``root`` seed.

    Parameters
    ----------
    root : int
        The run's root seed (a non-negative integer).
    *path : int
        Non-negative integers that name the stream, e.g. ``(target, Role.MS_OUT, i)``.

    Returns
    -------
    numpy.random.Generator
        A PCG64 generator, identical for identical ``(root, path)``.
    """
    if root < 0 or any(int(p) < 0 for p in path):
        raise ValueError("seeds and spawn paths must be non-negative integers")
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(int(root), spawn_key=tuple(int(p) for p in path)))
    )


def sklearn_seed(rng: np.random.Generator) -> int:
    """Draw the int seed handed to a scikit-learn estimator's ``random_state``."""
    return int(rng.integers(0, 2**31 - 1))
