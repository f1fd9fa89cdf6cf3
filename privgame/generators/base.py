"""The protocol every synthetic data generator follows.

A generator works on encoded arrays (see :mod:`privgame.data.encoding`): ``fit`` learns from
a training array and its schema, ``sample`` draws new rows in the same encoding. Randomness
comes only from the ``rng`` arguments, never from global state. Constructors store
hyper-parameters only; ``fit`` validates them and sets attributes ending in ``_``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Self

import numpy as np

from privgame.core.errors import ParameterError
from privgame.core.options import Option
from privgame.data.schema import Schema

__all__ = ["SyntheticGenerator"]


class SyntheticGenerator(ABC):
    """Base class of all generators.

    Class attributes
    ----------------
    name : str
        The registry name (``"synthpop"``, ``"baynet"``, ...).
    label : str
        A short human label shown in the dashboard and reports.
    leaks_training_data : bool
        True for generators that exist only for tests and sanity checks (identity).
    parameters : tuple of Option
        A built-in generator's parameters, as the faces offer them
        (:data:`privgame.core.options.GENERATOR_OPTIONS`): each one's name, type, range, default
        and help, declared once. A plug-in's parameters are its own (``--param KEY=VALUE``).
    without_noise : str
        A differentially private generator's label at ε = ∞, where it is another generator
        (PrivBayes: Baynet); empty otherwise.
    deterministic_fit : bool
        True when ``fit`` does not depend on its ``rng`` (the model is a function of the training
        rows alone), so one fitted model sampled with different streams gives exactly what
        fit + sample with those streams would. The engine then fits the model-seeded 'in'
        models on D once.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    leaks_training_data: ClassVar[bool] = False
    parameters: ClassVar[tuple[Option, ...]] = ()
    without_noise: ClassVar[str] = ""
    deterministic_fit: ClassVar[bool] = False

    @abstractmethod
    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        """Learn from the encoded training rows ``X`` (shape ``(n, len(schema.used))``)."""

    @abstractmethod
    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` encoded synthetic rows; the output keeps the schema's domain."""

    def fit_sample(self, X: np.ndarray, schema: Schema, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """Fit on ``X`` then sample ``n`` rows, both from ``rng``."""
        return self.fit(X, schema, rng=rng).sample(n, rng=rng)

    def get_params(self) -> dict[str, Any]:
        """The constructor's hyper-parameters, as passed."""
        return {k: v for k, v in vars(self).items() if not k.endswith("_") and not k.startswith("_")}

    @property
    def metadata(self) -> dict[str, Any]:
        """Facts about the fitted generator worth recording with a run (e.g. DP caveats)."""
        return {"generator": self.name, "params": self.get_params()}

    def _check_fitted(self) -> None:
        if not hasattr(self, "schema_"):
            raise ParameterError(f"The {self.name} generator must be fitted before it can sample.")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
