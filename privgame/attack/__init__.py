"""The TAPAS membership-inference attack: counting-query features and a meta-classifier."""

from privgame.attack.classifier import MetaClassifier
from privgame.attack.queries import QuerySet
from privgame.attack.tapas import TapasAttack, make_shadow_datasets

__all__ = ["MetaClassifier", "QuerySet", "TapasAttack", "make_shadow_datasets"]
