"""The closest-record attack: how near the synthetic data comes to the target, calibrated on shadows.

Similarity checks (distance to the closest record, DCR) read a release as safe when no synthetic
row lies close to a real one. Here the same distances are an attack scored in the same game as the
others: a generator that copies or nearly copies the target puts synthetic rows closer to it when
it was trained on it, and the meta-classifier learns, on the shadow datasets, how much closer.

Features of one synthetic table (distances are :func:`~privgame.attack.distance.distances`):

* the number of exact copies of the target;
* the number of rows within 0.25, 0.5 and 1 of it;
* minus the distance to its 1st, 2nd, 5th and 10th nearest rows (larger = closer).
"""

from __future__ import annotations

import numpy as np

from privgame.attack.base import register
from privgame.attack.distance import Distances, ScaledDistanceAttack

__all__ = ["ClosestRecordAttack"]

_NEAREST = (1, 2, 5, 10)
_RADII = (0.25, 0.5, 1.0)


@register
class ClosestRecordAttack(ScaledDistanceAttack):
    """Distances from the target to its nearest synthetic rows, calibrated on shadow datasets."""

    name = "closest"
    title = "closest record"
    description = "how close the synthetic rows nearest to the record come, and how many copy it"

    def features_from(self, distances: Distances, target: np.ndarray) -> np.ndarray:
        distance = distances.l1
        m = len(distance)
        out = np.zeros(1 + len(_RADII) + len(_NEAREST), dtype=np.float32)
        if m == 0:
            return out
        out[0] = np.count_nonzero(distance == 0)
        for i, radius in enumerate(_RADII):
            out[1 + i] = np.count_nonzero(distance <= radius)
        kth = [min(k, m) - 1 for k in _NEAREST]
        nearest = np.partition(distance, sorted(set(kth)))
        out[1 + len(_RADII) :] = -nearest[kth]
        return out
