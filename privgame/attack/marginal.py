"""The marginal attack for generators built from marginals (MAMA-MIA, Golob et al. 2024): the
target's cells in the marginals the generator itself would measure.

A Bayesian-network generator (Baynet, PrivBayes) keeps only a few low-dimensional marginals of its
training data, in its own discretisation, and samples from them: whatever it leaks about a record
leaks through the counts of that record's cells in those marginals (its focal points). The
attacker knows the algorithm in both threat models, so it fits the generator on its own reference
data, reads the marginals it selects (each column with its parents, and the parents alone) and its
discretisation, and describes a synthetic table by the target's cell count in each marginal and in
each one-way marginal, against the count the reference data would give there:
``log((c + 1/2) / (e + 1/2))``.

It applies to generators that declare their marginals (``marginal_sets`` and ``cell_codes``).
"""

from __future__ import annotations

from typing import Self

import numpy as np

from privgame.attack.base import Attack, AttackContext, register
from privgame.core.seeding import Role, stream
from privgame.generators.base import SyntheticGenerator

__all__ = ["MarginalAttack"]


@register
class MarginalAttack(Attack):
    """The target's cells in the generator's own marginals, against the population's.

    Attributes
    ----------
    sets_ : tuple of tuple of int
        The column sets counted: every column alone, then each marginal the generator selected on
        the reference data (and its parents alone), without repeats.
    """

    name = "marginal"
    title = "generator's marginals"
    description = "how the record's cells in the marginals the generator keeps are filled"

    @classmethod
    def applies_to(cls, generator: SyntheticGenerator) -> bool:
        return callable(getattr(generator, "marginal_sets", None)) and callable(
            getattr(generator, "cell_codes", None)
        )

    def prepare(self, context: AttackContext) -> Self:
        super().prepare(context)
        reference = np.asarray(context.reference, dtype=np.float64)
        rng = stream(context.seed, 0, Role.ATTACK)
        rows = reference[rng.permutation(len(reference))[: max(context.n, 1)]]
        model = type(context.generator)(**context.generator.get_params()).fit(rows, context.schema, rng=rng)
        d = len(context.schema.used)
        sets: list[tuple[int, ...]] = [(j,) for j in range(d)]
        for columns in model.marginal_sets():  # type: ignore[attr-defined]
            for candidate in (tuple(sorted(columns)), tuple(sorted(columns[1:]))):
                if candidate and candidate not in sets:
                    sets.append(candidate)
        self.sets_ = tuple(sets)
        self.model_ = model
        self._reference_codes = model.cell_codes(reference)  # type: ignore[attr-defined]
        return self

    def _counts(self, codes: np.ndarray, target_codes: np.ndarray) -> np.ndarray:
        equal = codes == target_codes
        return np.array(
            [np.count_nonzero(equal[:, list(s)].all(axis=1)) for s in self.sets_], dtype=np.float64
        )

    def features(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        synthetic, target = self._check_table(synthetic, target)
        target_codes = self.model_.cell_codes(target[None, :])[0]
        share = self._per_target(
            target,
            lambda: self._counts(self._reference_codes, target_codes) / max(len(self._reference_codes), 1),
        )
        counted = self._counts(self.model_.cell_codes(synthetic), target_codes)
        expected = share * len(synthetic)
        return np.log((counted + 0.5) / (expected + 0.5)).astype(np.float32)
