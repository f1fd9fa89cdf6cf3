"""The density-ratio attack (DOMIAS, van Breugel et al. 2023): is the synthetic data denser around
the target than the population is?

A generator that overfits its training data puts more synthetic mass near its training records
than the population has there. DOMIAS scores a record by the ratio of the synthetic data's density
at it to the population's density at it. Here the densities are Gaussian kernel estimates on the
scale of :func:`~privgame.attack.distance.distances` (a categorical mismatch counts as one
deviation), at three bandwidths, and the population's density is the attacker's reference data's. The features
of one synthetic table are ``log p_synthetic(x) - log p_reference(x)`` at each bandwidth; the
meta-classifier learns on the shadow datasets which of them moves with membership.
"""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.attack.base import AttackContext, register
from privgame.attack.distance import Distances, ScaledDistanceAttack

__all__ = ["DensityRatioAttack"]

BANDWIDTHS = (0.3, 1.0, 3.0)
"""The kernels' bandwidths, in deviations of each column."""

_REFERENCE_ROWS = 20_000
"""The most reference rows the population's density is estimated from."""


def log_densities(squared: np.ndarray, bandwidths: tuple[float, ...] = BANDWIDTHS) -> np.ndarray:
    """``log mean_i exp(-squared_i / (2 h^2))`` for each bandwidth ``h`` (a log-sum-exp, so a table
    with no row near the target gives a large negative number, not ``-inf``), shape (len(h),)."""
    out = np.empty(len(bandwidths))
    if squared.size == 0:
        out[:] = -np.inf
        return out
    for i, h in enumerate(bandwidths):
        z = -squared / (2.0 * h * h)
        top = z.max()
        out[i] = top + np.log(np.mean(np.exp(z - top)))
    return out


@register
class DensityRatioAttack(ScaledDistanceAttack):
    """The synthetic data's kernel density at the target over the population's."""

    name = "density"
    title = "density ratio"
    description = "how much denser the synthetic data is around the record than the population is"

    def prepare(self, context: AttackContext) -> Self:
        super().prepare(context)
        self._reference = np.asarray(context.reference, dtype=np.float64)[:_REFERENCE_ROWS]
        return self

    def _reference_density(self, target: np.ndarray) -> np.ndarray:
        return self._per_target(
            target, lambda: log_densities(self.distances(self._reference, target).squared)
        )

    def features_from(self, distances: Distances, target: np.ndarray) -> np.ndarray:
        ratio = log_densities(distances.squared) - self._reference_density(target)
        return np.maximum(ratio, -1e6).astype(np.float32)
