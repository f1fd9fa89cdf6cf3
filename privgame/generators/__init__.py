"""Synthetic data generators and their registry."""

from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import GENERATORS, available, create, register

# Importing the modules registers their generators, in the order the UI lists them.
from privgame.generators import synthpop as _synthpop  # noqa: E402,F401,I001  (registration side effect)
from privgame.generators import bayesnet as _bayesnet  # noqa: E402,F401  (registration side effect)
from privgame.generators import marginals as _marginals  # noqa: E402,F401  (registration side effect)
from privgame.generators import identity as _identity  # noqa: E402,F401  (registration side effect)

__all__ = ["GENERATORS", "SyntheticGenerator", "available", "create", "register"]
