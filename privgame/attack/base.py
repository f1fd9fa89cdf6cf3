"""The attack interface every membership-inference attack implements, and the registry of attacks.

An attack, in TAPAS' vocabulary, is trained on labelled shadow datasets and then scores datasets:
the higher the score, the more likely the dataset was generated from training data that held the
target record. Every attack here has the same two halves:

* a **featuriser**, :meth:`Attack.features`: a fixed-length vector describing one synthetic table
  relative to the target record (counting queries, distances, densities, marginal counts...);
  what the attack knows of the population and of the generator is learned once per run by
  :meth:`Attack.prepare`, from an :class:`AttackContext`;
* a **meta-classifier** (:class:`~privgame.attack.classifier.MetaClassifier`) fitted on the
  features of the shadow datasets, whose probability of 'in' is the score.

The engine computes every attack's features from each synthetic table it makes (one generator fit
serves every attack), and :mod:`privgame.attack.portfolio` picks, per record, the attack that
separates held-out shadow datasets best. The registry is a dict with :func:`register` and
:func:`create`, as for the generators and the threat models.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from privgame.attack.classifier import MetaClassifier
from privgame.core.defaults import ATTACK_NAMES
from privgame.core.errors import ParameterError
from privgame.data.schema import Schema
from privgame.generators.base import SyntheticGenerator

__all__ = [
    "ATTACKS",
    "Attack",
    "AttackContext",
    "RecordStatistics",
    "applicable",
    "attack_names",
    "create",
    "parse_attacks",
    "register",
]


@dataclass(frozen=True, eq=False)
class AttackContext:
    """What the attacker knows before it sees a target: the same for every target of a run.

    Attributes
    ----------
    schema : Schema
        The schema of the encoded tables.
    reference : ndarray, shape (r, d)
        Encoded rows from the population (the attacker's auxiliary data), which the attacks
        measure "how usual" against.
    generator : SyntheticGenerator
        A fresh, unfitted instance of the generator under audit: the attacker knows the algorithm
        and its parameters.
    n : int
        Rows of each synthetic table.
    seed : int
        The run's root seed; an attack that draws anything while preparing draws from its own
        stream under it.
    max_exact_columns : int
        TAPAS' widest table that gets every subset of columns as a query.
    """

    schema: Schema
    reference: np.ndarray
    generator: SyntheticGenerator
    n: int
    seed: int = 0
    max_exact_columns: int = 20

    @property
    def is_categorical(self) -> np.ndarray:
        """True where a used column is categorical."""
        return self.schema.is_categorical


class RecordStatistics(ABC):
    """An attack's untrained statistics of *every* record of D on one synthetic table at once: the
    screen's face of an attack (:mod:`privgame.games.screen`).

    The exact game trains one attack per record; the screen cannot, so an attack that can count
    for all records in one pass over a table offers these statistics, each larger when the table
    is closer to the record ("more likely a member"). The screen calibrates each on every record's
    own 'in' and 'out' screening datasets.

    Class attributes
    ----------------
    names : tuple of str
        One name per statistic, in the order of :meth:`statistics`' rows.
    words : dict of str to str
        Each statistic in plain words, for the pages and reports.
    """

    names: ClassVar[tuple[str, ...]] = ()
    words: ClassVar[dict[str, str]] = {}

    @classmethod
    @abstractmethod
    def of(cls, records: np.ndarray, is_categorical: np.ndarray) -> Self:
        """What every count needs of D (``records``, encoded, shape (n, d)), worked out once."""

    @abstractmethod
    def statistics(self, synthetic: np.ndarray) -> np.ndarray:
        """The statistics of every record of D on one encoded synthetic table.

        Returns
        -------
        ndarray of float32, shape (len(names), n)
        """


class Attack(ABC):
    """A membership-inference attack against one target record.

    Subclasses set the class attributes and implement :meth:`features`; :meth:`prepare` learns
    what is shared by every target of a run. Constructors store settings only.

    Class attributes
    ----------------
    name : str
        As ``--attacks`` and the results' ``attack`` column write it.
    title : str
        A short name in words, e.g. "closest record".
    description : str
        One plain sentence: what the attack looks at.
    classifier_kind : str
        The meta-classifier that turns its features into a score (``"logistic"`` for attacks
        with few features, whose held-out AUC is cross-validated).
    record_statistics : type of RecordStatistics or None
        The attack's statistics of every record at once, which the screen adds to its own when
        the run uses the attack; None for an attack that needs training per record (TAPAS).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    classifier_kind: ClassVar[str] = "logistic"
    classifier_C: ClassVar[float] = 1.0
    record_statistics: ClassVar[type[RecordStatistics] | None] = None

    @classmethod
    def applies_to(cls, generator: SyntheticGenerator) -> bool:
        """Whether this attack can attack ``generator`` (every generator by default)."""
        return True

    def prepare(self, context: AttackContext) -> Self:
        """Learn what the attack needs of the population and the generator, once per run."""
        self.context_ = context
        return self

    @abstractmethod
    def features(self, synthetic: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The attack's features of one encoded synthetic table, relative to ``target``.

        Returns
        -------
        ndarray of float32, shape (n_features,)
        """

    def features_batch(self, datasets: Sequence[np.ndarray], target: np.ndarray) -> np.ndarray:
        """:meth:`features` of each dataset, stacked: shape (len(datasets), n_features)."""
        return np.stack([self.features(np.asarray(table), target) for table in datasets])

    def new_classifier(self, *, halves: bool = True) -> MetaClassifier:
        """A fresh meta-classifier of this attack's kind."""
        return MetaClassifier(self.classifier_kind, C=self.classifier_C, halves=halves)  # type: ignore[arg-type]

    def train(
        self,
        in_tables: Sequence[np.ndarray],
        out_tables: Sequence[np.ndarray],
        target: np.ndarray,
        *,
        rng: np.random.Generator,
    ) -> Self:
        """Fit the meta-classifier on shadow tables made with the target ('in') and without it.

        :meth:`prepare` must have been called.
        """
        self._check_prepared()
        features = self.features_batch([*in_tables, *out_tables], target)
        labels = np.repeat(np.array([1, 0], dtype=np.int8), [len(in_tables), len(out_tables)])
        self.target_ = np.asarray(target, dtype=np.float64)
        self.classifier_ = self.new_classifier().fit(features, labels, rng=rng)
        return self

    def score(self, tables: Sequence[np.ndarray]) -> np.ndarray:
        """Membership scores (probability of 'in') of encoded synthetic tables."""
        if not hasattr(self, "classifier_"):
            raise ParameterError(f"The {self.name} attack must be trained before it can score.")
        return self.classifier_.score(self.features_batch(tables, self.target_))

    def describe(self) -> dict[str, Any]:
        """A JSON-ready record of the attack, for a run's metadata."""
        return {"attack": self.name, "title": self.title, "classifier": self.classifier_kind}

    def _per_target(self, target: np.ndarray, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """``compute()``, kept for the last target: what an attack knows of the population about
        one record is the same for every table it scores. The pair is read once and replaced
        whole, so threads sharing the attack never mix one target's value with another's key."""
        key = np.asarray(target, dtype=np.float64).tobytes()
        cached: tuple[bytes, np.ndarray] | None = getattr(self, "_target_cached", None)
        if cached is None or cached[0] != key:
            cached = (key, compute())
            self._target_cached = cached
        return cached[1]

    def _check_prepared(self) -> AttackContext:
        context = getattr(self, "context_", None)
        if context is None:
            raise ParameterError(f"Call prepare(context) on the {self.name} attack before using it.")
        return context

    def _check_table(self, synthetic: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        synthetic = np.asarray(synthetic, dtype=np.float64)
        target = np.asarray(target, dtype=np.float64)
        d = len(self._check_prepared().schema.used)
        if synthetic.ndim != 2 or synthetic.shape[1] != d or target.shape != (d,):
            raise ParameterError(
                f"The {self.name} attack needs a synthetic table of shape (m, {d}) and a target of "
                f"shape ({d},); got {synthetic.shape} and {target.shape}."
            )
        return synthetic, target


ATTACKS: dict[str, type[Attack]] = {}
"""Every registered attack class by name (see :func:`attack_names` for the portfolio's order). The
built-in ones register when :mod:`privgame.attack` is imported, which any import of one of its
modules does first."""


def register(cls: type[Attack]) -> type[Attack]:
    """Add an attack class to the registry under its ``name`` (usable as a decorator)."""
    if not cls.name:
        raise ParameterError(f"{cls.__name__} needs a non-empty class attribute 'name'.")
    ATTACKS[cls.name] = cls
    return cls


def attack_names() -> tuple[str, ...]:
    """The registered attacks' names in the portfolio's order: the built-in ones as
    :data:`~privgame.core.defaults.ATTACK_NAMES` lists them (TAPAS first), then any other in the
    order registered."""
    built_in = [name for name in ATTACK_NAMES if name in ATTACKS]
    return (*built_in, *(name for name in ATTACKS if name not in ATTACK_NAMES))


def create(name: str, **params: Any) -> Attack:
    """A new attack of the registered class ``name``.

    Raises
    ------
    ParameterError
        For a name no attack is registered under.
    """
    if name not in ATTACKS:
        raise ParameterError(f"Unknown attack {name!r}; choose from {', '.join(ATTACKS)}.")
    return ATTACKS[name](**params)


def applicable(names: Sequence[str], generator: SyntheticGenerator) -> tuple[str, ...]:
    """The attacks of ``names`` that can attack ``generator``, in registry order."""
    chosen = set(names)
    return tuple(name for name in attack_names() if name in chosen and ATTACKS[name].applies_to(generator))


def parse_attacks(text: str | Sequence[str]) -> tuple[str, ...]:
    """``--attacks`` as written (``"tapas,closest"``, ``"all"`` or a sequence) as registry names,
    in registry order.

    Raises
    ------
    ParameterError
        Naming every unknown attack and the known ones.
    """
    known = attack_names()
    items = [t.strip() for t in text.split(",")] if isinstance(text, str) else [str(t).strip() for t in text]
    items = [t for t in items if t]
    if items == ["all"]:
        return known
    unknown = [t for t in items if t not in ATTACKS]
    if unknown or not items:
        what = f"unknown {', '.join(map(repr, unknown))}" if unknown else "no attack named"
        raise ParameterError(
            f"--attacks {','.join(items) or '(empty)'!r}: {what}; "
            f"use 'all' or a comma-separated list of {', '.join(known)}."
        )
    return tuple(name for name in known if name in items)
