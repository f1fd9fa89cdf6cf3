"""Synthetic data generators and their registry."""

# isort: skip_file
# Importing the generator modules registers them, in the order the dashboard lists them; sorting
# these imports would change that order.
from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import GENERATORS, available, create, register
from privgame.generators import synthpop as _synthpop
from privgame.generators import bayesnet as _bayesnet
from privgame.generators import marginals as _marginals
from privgame.generators import identity as _identity

__all__ = ["GENERATORS", "SyntheticGenerator", "available", "create", "register"]

del _synthpop, _bayesnet, _marginals, _identity
