"""Synthetic data generators, their registry, and plug-in generators (see ``plugins``)."""

# isort: skip_file
# Importing the generator modules registers them, in the order the dashboard lists them; sorting
# these imports would change that order.
from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import GENERATORS, available, offered, register
from privgame.generators.plugins import ContractReport, check_contract, installed_plugins, resolve
from privgame.generators.factory import create, is_known
from privgame.generators import synthpop as _synthpop
from privgame.generators import bayesnet as _bayesnet
from privgame.generators import mst as _mst
from privgame.generators import marginals as _marginals
from privgame.generators import identity as _identity

__all__ = [
    "GENERATORS",
    "ContractReport",
    "SyntheticGenerator",
    "available",
    "check_contract",
    "create",
    "installed_plugins",
    "is_known",
    "offered",
    "register",
    "resolve",
]

del _synthpop, _bayesnet, _mst, _marginals, _identity
