"""Threat models: what the attacker knows, and so how its shadow datasets are drawn.

The attack (TAPAS' query-based attack) is the same under every threat model: shadow datasets
with and without the target x, the generator trained on each, counting-query features of their
synthetic output, a meta-classifier. What changes is the attacker's knowledge, which decides the
datasets the shadow generators are trained on. Every model has one half of its shadow datasets
*shared* by every target (made once per run) and the other half the target's *own*:

=================  ==================================================  ==============================
threat model       shared shadow datasets (every target)               the target's own
=================  ==================================================  ==============================
``leave-one-out``  'in': D itself, a fresh generator seed each         'out': D with x swapped for a
                   (one fit, many samples when the fit is              uniform reference record
                   deterministic)                                      (one-row refits)
``population``     'out': |D| rows of D_aux                            'in': |D| - 1 rows of D_aux + x
=================  ==================================================  ==============================

``leave-one-out`` is the worst case a release is judged against: an attacker who knows every
record of D but the target (TAPAS' "exact data knowledge"; differential privacy's neighbouring
datasets are the same pair). Its shadow datasets are drawn exactly as the model-seeded game's
evaluation datasets are, from independent streams, so its attack is trained on the distribution
it is evaluated on. It plays the model-seeded game only: the traditional game draws a fresh
dataset for every run, and no attacker knows "every other record" of it.

``population`` is the paper's attacker: it knows D_aux, a sample of the population disjoint
from D, and nothing of D. It is kept for the paper's set-up and for comparing the two games
under one attacker.

The registry is a dict with :func:`register` and :func:`create`; :func:`create` raises a
:class:`~privgame.core.errors.ParameterError` (a ``ValueError``) for an unknown name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from privgame.core.errors import ParameterError
from privgame.core.seeding import Role
from privgame.games import plan

if TYPE_CHECKING:
    from privgame.games.work import Context

__all__ = [
    "THREAT_MODELS",
    "LeaveOneOut",
    "Population",
    "ThreatModel",
    "create",
    "default_games",
    "describe",
    "register",
]


class ThreatModel(ABC):
    """What an attacker knows, as the shadow datasets it can draw.

    Class attributes
    ----------------
    name : str
        The registry name (``--attacker NAME``).
    knows : str
        The attacker in plain words, to follow "against ..." in a verdict sentence.
    summary : str
        One sentence for the pages and the command line's help.
    shared_label : int
        The membership label of the shared shadow datasets (1: 'in', 0: 'out').
    plays_traditional : bool
        Whether the traditional game can be played against this attacker.
    in_setup : str
        The sentence that says, where a run's set-up is described, what this attacker knows.
    no_traditional : str
        Why a run against this attacker did not play the traditional game ("" when it can).
    choice : str
        The attacker as a choice on the pages ("Knows every other record of your data ...").
    games_note : str
        Which games an audit against this attacker plays, and why, for the pages.
    knows_d : bool
        Whether the attacker knows the rest of D: its shadow datasets are D's own, so a remedy
        that changes D trains its attacks again, and it may read the release against D.
    remedy_note : str
        Why a remedy's re-audit against this attacker makes every shadow dataset again, where it
        must whatever the remedy ("" where that depends on the remedy).
    """

    name: ClassVar[str] = ""
    knows: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    in_setup: ClassVar[str] = ""
    no_traditional: ClassVar[str] = ""
    shared_label: ClassVar[int] = 0
    plays_traditional: ClassVar[bool] = True
    choice: ClassVar[str] = ""
    games_note: ClassVar[str] = ""
    knows_d: ClassVar[bool] = False
    remedy_note: ClassVar[str] = ""

    @property
    def shared_role(self) -> Role:
        """The stream role of the shared shadow datasets."""
        return Role.SHADOW_IN if self.shared_label == 1 else Role.SHADOW_OUT

    @property
    def own_role(self) -> Role:
        """The stream role of a target's own shadow datasets."""
        return Role.SHADOW_OUT if self.shared_label == 1 else Role.SHADOW_IN

    @property
    def shared_name(self) -> str:
        """The run folder's name of the shared shadow checkpoints (``shared/<name>-*.npz``)."""
        return "shadow_in" if self.shared_label == 1 else "shadow_out"

    @property
    def shared_on_d(self) -> bool:
        """Whether every shared shadow dataset is D itself (so one deterministic fit serves all)."""
        return self.shared_label == 1

    @abstractmethod
    def shared_rows(self, ctx: Context, rng: np.random.Generator) -> np.ndarray:
        """The training rows of one shared shadow dataset, drawn from ``rng``."""

    @abstractmethod
    def own_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> tuple[np.ndarray, int]:
        """The training rows of one of target ``record_id``'s own shadow datasets.

        Returns the rows and the reference record swapped in for the target (-1 when none is).
        """


class Population(ThreatModel):
    """The paper's attacker: it knows D_aux, a sample of the population disjoint from D."""

    name = "population"
    knows = "an attacker who knows a sample of the population, not D"
    summary = (
        "The paper's attacker: it knows other records from the same population (D_aux), none of D. "
        "Weaker than the worst case; use it to reproduce the paper and to compare the two games."
    )
    in_setup = (
        "The attacker knows a sample of the population (D_aux) and none of D: the paper's attacker, "
        "weaker than one who knows the rest of D (--attacker leave-one-out, the worst case)."
    )
    shared_label = 0
    plays_traditional = True
    choice = "Knows a sample of the population, none of your data (the paper's)"
    games_note = (
        "The audit plays both games: the model-seeded game measures each record's risk in this "
        "release, the traditional game its risk averaged over other datasets drawn from the same "
        "pool, and the two are compared."
    )
    knows_d = False

    def shared_rows(self, ctx: Context, rng: np.random.Generator) -> np.ndarray:
        return plan.shadow_out_rows(rng, ctx.aux, ctx.n_shadow_rows, replace=ctx.shadow_replace)

    def own_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> tuple[np.ndarray, int]:
        rows = plan.shadow_in_rows(rng, ctx.aux, record_id, ctx.n_shadow_rows, replace=ctx.shadow_replace)
        return rows, -1


class LeaveOneOut(ThreatModel):
    """The worst case: the attacker knows every record of D but the target."""

    name = "leave-one-out"
    knows = "an attacker who knows every other record"
    summary = (
        "The worst case: the attacker knows every record of your data but the one it tests, and "
        "trains on exactly the two worlds the model-seeded game compares. 'Not at risk' then means "
        "this attacker tried and failed. Plays the model-seeded game only."
    )
    in_setup = (
        "The attacker knows every record of D but the one it tests (the leave-one-out attacker, "
        "the worst case): it trains on the generator fitted on D and on D with the record swapped "
        "for a reference record, exactly the two worlds the model-seeded game compares. A record "
        "'not at risk' is one this attacker tried and failed to find."
    )
    no_traditional = (
        "the leave-one-out attacker plays the model-seeded game only; compare the two games under "
        "the population attacker"
    )
    shared_label = 1
    plays_traditional = False
    choice = "Knows every other record of your data (leave-one-out, the worst case)"
    games_note = (
        "The audit plays the model-seeded game, which measures each record's risk in this very "
        "release; the traditional game, which averages over other datasets, needs the population "
        "attacker."
    )
    knows_d = True
    remedy_note = (
        "the leave-one-out attacker knows D, which the remedy changes: every shadow dataset and "
        "attack is made again for the new D."
    )

    def shared_rows(self, ctx: Context, rng: np.random.Generator) -> np.ndarray:
        return plan.ms_in_rows(ctx.target)

    def own_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> tuple[np.ndarray, int]:
        return plan.ms_out_rows(rng, ctx.target, ctx.reference, record_id)


THREAT_MODELS: dict[str, type[ThreatModel]] = {}
"""Registered threat models by name."""


def register(cls: type[ThreatModel]) -> type[ThreatModel]:
    """Add a threat model class to the registry under its ``name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name to register under.")
    THREAT_MODELS[cls.name] = cls
    return cls


register(LeaveOneOut)
register(Population)


def create(name: str) -> ThreatModel:
    """The threat model registered as ``name``.

    Raises
    ------
    ParameterError
        For an unknown name (a ``ValueError``).
    """
    try:
        return THREAT_MODELS[name]()
    except (KeyError, TypeError):
        raise ParameterError(f"--attacker {name!r} is unknown; use one of {sorted(THREAT_MODELS)}.") from None


def describe(name: str) -> str:
    """The attacker ``name`` in plain words (e.g. "an attacker who knows every other record")."""
    return create(name).knows


def default_games(name: str) -> str:
    """The games a run against the attacker ``name`` plays unless told otherwise: both where the
    traditional game can be played against it, the model-seeded game alone where it cannot."""
    return "both" if create(name).plays_traditional else "model-seeded"
