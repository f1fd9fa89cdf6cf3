"""Membership-inference attacks behind one interface (:class:`Attack`), their registry, and the
portfolio that picks the strongest per record."""

from privgame.attack.base import (
    ATTACKS,
    Attack,
    AttackContext,
    applicable,
    attack_names,
    create,
    parse_attacks,
)
from privgame.attack.classifier import MetaClassifier
from privgame.attack.closest import ClosestRecordAttack
from privgame.attack.density import DensityRatioAttack
from privgame.attack.marginal import MarginalAttack
from privgame.attack.portfolio import ChosenAttack, Portfolio
from privgame.attack.queries import QuerySet
from privgame.attack.tapas import TapasAttack, make_shadow_datasets
from privgame.attack.values import ExactValuesAttack

__all__ = [
    "ATTACKS",
    "Attack",
    "AttackContext",
    "ChosenAttack",
    "ClosestRecordAttack",
    "DensityRatioAttack",
    "ExactValuesAttack",
    "MarginalAttack",
    "MetaClassifier",
    "Portfolio",
    "QuerySet",
    "TapasAttack",
    "applicable",
    "attack_names",
    "create",
    "make_shadow_datasets",
    "parse_attacks",
]
