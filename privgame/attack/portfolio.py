"""A portfolio of attacks: every attack's features of each synthetic table side by side, and, per
target record, the attack that separates held-out shadow datasets best.

No attack wins everywhere (Synth-MIA, Ward et al. 2025): TAPAS' counting queries are strong on
outliers, exact-value and distance attacks on generators that copy values, marginal attacks on
generators built from marginals. A record's risk is the AUC of the strongest attack against it,
and "strongest" is decided on the attacker's own shadow datasets only (out of bag for a random
forest, by 5-fold cross-validation for a logistic regression), never on the evaluation runs: the
choice is then independent of the runs it is scored on, and the evaluation AUC and its interval
need no correction for it (a simulation test checks the false "at risk" rate with the choice in).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Self

import numpy as np

from privgame.attack.base import Attack, AttackContext
from privgame.attack.classifier import MetaClassifier
from privgame.attack.distance import Distances, ScaledDistanceAttack
from privgame.core.errors import ParameterError
from privgame.core.metrics import auc, auc_half_width
from privgame.core.seeding import Role, stream

__all__ = ["ChosenAttack", "Portfolio", "held_out_auc"]

FOLDS = 5
"""Cross-validation folds of a logistic attack's held-out AUC."""

PREFER_TAPAS_Z = 1.0
"""Another attack replaces TAPAS only when its held-out AUC is higher by more than this many
standard errors of the difference."""

ONE_SE = 0.6826894921370859
"""The level of a normal interval one standard error each side."""


def _attack_key(name: str) -> int:
    """A stable stream index for an attack's own classifier seed (independent of the portfolio)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "big") & 0x7FFFFFFF


def classifier_stream(root: int, key: int, name: str) -> np.random.Generator:
    """The meta-classifier seed stream of attack ``name`` on target ``key``: TAPAS keeps the
    paper's ``(key, Role.CLASSIFIER)``; every other attack has its own."""
    if name == "tapas":
        return stream(root, key, Role.CLASSIFIER)
    return stream(root, key, Role.ATTACK, _attack_key(name))


def held_out_auc(
    classifier: MetaClassifier, features: np.ndarray, labels: np.ndarray, *, rng: np.random.Generator
) -> float:
    """The attack's AUC on shadow datasets it was not trained on.

    A random forest (``classifier`` fitted) is read out of bag; a logistic regression is
    cross-validated over :data:`FOLDS` folds (each class split by rank, so every fold has both),
    the out-of-fold scores pooled into one AUC. ``nan`` when too few shadow datasets are left out.
    """
    if classifier.kind == "random_forest":
        return float(classifier.shadow_auc_)
    labels = np.asarray(labels)
    folds = np.empty(len(labels), dtype=np.int64)
    for value in (0, 1):
        where = np.flatnonzero(labels == value)
        if where.size < FOLDS:
            return math.nan
        folds[where] = np.arange(where.size) % FOLDS
    scores = np.empty(len(labels))
    for fold in range(FOLDS):
        held = folds == fold
        part = MetaClassifier(classifier.kind, C=classifier.C, halves=False)  # type: ignore[arg-type]
        scores[held] = part.fit(features[~held], labels[~held], rng=rng).score(features[held])
    return float(auc(scores, labels))


@dataclass
class ChosenAttack:
    """The attack a portfolio chose for one target, fitted; it scores the portfolio's features.

    Attributes
    ----------
    name : str
        The chosen attack.
    start, stop : int
        Its columns in the portfolio's features.
    classifier : MetaClassifier
        Its meta-classifier, fitted on every shadow dataset (with its half attacks).
    held_out : dict of str to float
        Every attack's held-out AUC on the shadow datasets, in the portfolio's order.
    """

    name: str
    start: int
    stop: int
    classifier: MetaClassifier
    held_out: dict[str, float] = field(default_factory=dict)

    @property
    def shadow_auc_(self) -> float:
        """The chosen attack's held-out AUC on its shadow datasets."""
        return float(self.held_out.get(self.name, math.nan))

    def _columns(self, features: np.ndarray) -> np.ndarray:
        features = np.asarray(features)
        return features[..., self.start : self.stop]

    def score(self, features: np.ndarray) -> np.ndarray:
        """Membership scores of datasets from their portfolio features."""
        return self.classifier.score(self._columns(features))

    def score_halves(self, features: np.ndarray) -> np.ndarray | None:
        """The chosen attack's two half attacks' scores, shape (2, m); ``None`` without them."""
        return self.classifier.score_halves(self._columns(features))


class Portfolio:
    """Several attacks, their features side by side.

    Parameters
    ----------
    attacks : sequence of Attack
        The attacks, TAPAS first when it is one of them (ties in the choice go to the first).

    Attributes
    ----------
    widths_ : tuple of int
        Each attack's number of features (set by the first :meth:`features`).
    """

    def __init__(self, attacks: Sequence[Attack]) -> None:
        if not attacks:
            raise ParameterError("A portfolio needs at least one attack; pass --attacks tapas or more.")
        self.attacks = tuple(attacks)

    @property
    def names(self) -> tuple[str, ...]:
        """The attacks' names, in order."""
        return tuple(attack.name for attack in self.attacks)

    @property
    def n_features(self) -> int:
        """The features of one table, every attack's together (known after one :meth:`features`)."""
        widths = getattr(self, "widths_", None)
        if widths is None:
            raise ParameterError("The portfolio's width is known once it has made one table's features.")
        return int(sum(widths))

    def describe(self) -> dict[str, object]:
        """A JSON-ready record of the portfolio, for a run's metadata."""
        return {"attacks": [attack.describe() for attack in self.attacks]}

    def prepare(self, context: AttackContext) -> Self:
        """Prepare every attack for a run (see :meth:`Attack.prepare`)."""
        for attack in self.attacks:
            attack.prepare(context)
        return self

    def features(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Every attack's features of one table, concatenated in order, float32."""
        parts = []
        shared: tuple[np.ndarray, np.ndarray, Distances] | None = None
        for attack in self.attacks:
            if isinstance(attack, ScaledDistanceAttack):
                # The closest-record and density attacks read the same distances: made once a table.
                scales, categorical = attack.scales_, attack.context_.is_categorical
                if shared is None or not (
                    np.array_equal(shared[0], scales) and np.array_equal(shared[1], categorical)
                ):
                    synthetic, target = attack._check_table(synthetic, target)
                    shared = (scales, categorical, attack.distances(synthetic, target))
                part = attack.features_from(shared[2], target)
            else:
                part = attack.features(synthetic, target)
            parts.append(np.asarray(part, dtype=np.float32))
        widths = tuple(len(p) for p in parts)
        if getattr(self, "widths_", widths) != widths:
            raise ParameterError(f"The attacks' feature widths changed from {self.widths_} to {widths}.")
        self.widths_ = widths
        return np.concatenate(parts)

    def features_batch(self, datasets: Sequence[np.ndarray], target: np.ndarray) -> np.ndarray:
        """:meth:`features` of each dataset, stacked."""
        return np.stack([self.features(np.asarray(table), target) for table in datasets])

    def fit(self, features: np.ndarray, labels: np.ndarray, *, root: int, key: int) -> ChosenAttack:
        """Fit every attack on the shadow datasets' features, choose the one with the best held-out
        AUC (TAPAS, when it is one of them, unless another beats it by more than noise), and return
        it fitted with its half attacks.

        Parameters
        ----------
        features : ndarray, shape (m, sum(widths_))
            Rows of :meth:`features`, one per shadow dataset.
        labels : ndarray, shape (m,)
            1 = 'in', 0 = 'out'.
        root, key : int
            The run's seed and the target's spawn key: each attack's classifier draws from
            :func:`classifier_stream`, so its fit does not depend on which others are in the
            portfolio.
        """
        widths = getattr(self, "widths_", None)
        if widths is None or sum(widths) != np.shape(features)[1]:
            raise ParameterError(
                f"The features have {np.shape(features)[1]} columns; the portfolio's attacks make "
                f"{widths and sum(widths)}. Compute them with this portfolio's features()."
            )
        features = np.asarray(features, dtype=np.float32)
        edges = np.concatenate([[0], np.cumsum(widths)]).astype(int)
        if len(self.attacks) == 1:
            # Nothing to choose: the attack as it always was (the paper's, for TAPAS alone), with
            # the held-out AUC its classifier gives for free (out of bag; nan for a regression).
            only = self.attacks[0]
            classifier = only.new_classifier().fit(
                features, labels, rng=classifier_stream(root, key, only.name)
            )
            held = {only.name: float(getattr(classifier, "shadow_auc_", math.nan))}
            return ChosenAttack(only.name, 0, int(edges[1]), classifier, held)
        held_out: dict[str, float] = {}
        fitted: dict[str, tuple[MetaClassifier, np.random.Generator]] = {}
        for i, attack in enumerate(self.attacks):
            part = features[:, edges[i] : edges[i + 1]]
            rng = classifier_stream(root, key, attack.name)
            classifier = attack.new_classifier(halves=False)
            if classifier.kind == "random_forest":
                classifier.fit(part, labels, rng=rng)
                fitted[attack.name] = (classifier, rng)
                held_out[attack.name] = held_out_auc(classifier, part, labels, rng=rng)
            else:
                cv_rng = stream(root, key, Role.ATTACK, _attack_key(attack.name), 1)
                held_out[attack.name] = held_out_auc(classifier, part, labels, rng=cv_rng)
        scored = [(-_or_low(held_out[a.name]), i) for i, a in enumerate(self.attacks)]
        best = min(scored)[1]
        best = self._prefer_tapas(best, held_out, np.asarray(labels))
        chosen = self.attacks[best]
        part = features[:, edges[best] : edges[best + 1]]
        if chosen.name in fitted:
            # The same forest, then its halves from where its seed left the stream: what
            # MetaClassifier.fit(halves=True) draws.
            classifier, rng = fitted[chosen.name]
            classifier.add_halves(part, labels, rng=rng)
        else:
            classifier = chosen.new_classifier().fit(
                part, labels, rng=classifier_stream(root, key, chosen.name)
            )
        return ChosenAttack(chosen.name, int(edges[best]), int(edges[best + 1]), classifier, held_out)

    def _prefer_tapas(self, best: int, held_out: dict[str, float], labels: np.ndarray) -> int:
        """The paper's attack unless another beats it on held-out shadows by more than one
        standard error of the difference (Hanley and McNeil's, the two taken as independent):
        between attacks that are equally good, a choice by noise would only move the record's
        risk by noise."""
        names = self.names
        if "tapas" not in names or names[best] == "tapas":
            return best
        tapas, other = held_out["tapas"], held_out[names[best]]
        if not (math.isfinite(tapas) and math.isfinite(other)):
            return best
        n_in, n_out = int(np.count_nonzero(labels == 1)), int(np.count_nonzero(labels == 0))
        if n_in < 1 or n_out < 1:
            return best

        def se(value: float) -> float:
            return auc_half_width(max(value, 1 - value), n_in, n_out, level=ONE_SE)

        margin = PREFER_TAPAS_Z * math.hypot(se(tapas), se(other))
        return names.index("tapas") if other - tapas <= margin else best


def _or_low(value: float) -> float:
    return value if math.isfinite(value) else -math.inf
