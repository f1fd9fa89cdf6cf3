"""Column-by-column gaps between synthetic rows and a target record, on one scale for every column,
and the base of the attacks that read them.

A continuous column's gap is ``|s_j - x_j|`` divided by the column's standard deviation in the
attacker's reference data; a categorical column's gap is 0 when the values are equal and 1 when
they differ (the scale of a standardised continuous gap of one deviation). The closest-record and
density attacks sum these gaps into a distance.
"""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.attack.base import Attack, AttackContext

__all__ = ["ScaledDistanceAttack", "column_scales", "gaps"]


def column_scales(reference: np.ndarray, is_categorical: np.ndarray) -> np.ndarray:
    """Each continuous column's standard deviation in ``reference`` (1 where it is 0 or the column
    is categorical), shape (d,)."""
    reference = np.asarray(reference, dtype=np.float64)
    scales = np.ones(reference.shape[1])
    if len(reference) > 1:
        std = reference.std(axis=0)
        continuous = ~np.asarray(is_categorical, dtype=bool)
        scales[continuous] = np.where(std[continuous] > 0, std[continuous], 1.0)
    return scales


def gaps(
    synthetic: np.ndarray, target: np.ndarray, scales: np.ndarray, is_categorical: np.ndarray
) -> np.ndarray:
    """The gap of every synthetic row to ``target`` in every column, shape (m, d), float64.

    Parameters
    ----------
    synthetic : ndarray, shape (m, d)
    target : ndarray, shape (d,)
    scales : ndarray, shape (d,)
        From :func:`column_scales`.
    is_categorical : ndarray of bool, shape (d,)
    """
    out = np.abs(np.asarray(synthetic, dtype=np.float64) - np.asarray(target, dtype=np.float64))
    out /= scales
    categorical = np.asarray(is_categorical, dtype=bool)
    out[:, categorical] = out[:, categorical] > 0
    return out


class ScaledDistanceAttack(Attack):
    """An attack that reads distances on the reference data's scale (closest record, density).

    Attributes
    ----------
    scales_ : ndarray of float64, shape (d,)
        Each continuous column's deviation in the reference data (set by :meth:`prepare`).
    """

    def prepare(self, context: AttackContext) -> Self:
        super().prepare(context)
        self.scales_ = column_scales(context.reference, context.is_categorical)
        return self

    def squared_distances(self, rows: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The squared distance of every row to ``target``: the sum of its squared gaps."""
        return (gaps(rows, target, self.scales_, self.context_.is_categorical) ** 2).sum(axis=1)

    def distances(self, rows: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The distance of every row to ``target``: the sum of its gaps."""
        return gaps(rows, target, self.scales_, self.context_.is_categorical).sum(axis=1)
