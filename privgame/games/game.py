"""The two privacy games as objects: what each one is called, where its results live, and how
its evaluation datasets are drawn.

Both games measure a record's risk as the AUC of the attack over evaluation runs, half of them
trained on data with the target x ('in') and half without ('out'). They differ in the data:

=================  ===============================================  ===============================
game               'in' dataset                                     'out' dataset
=================  ===============================================  ===============================
``model-seeded``   D itself (only the generator's seed varies)      D with x swapped for a uniform
                                                                    reference record of D_eval \\ D
``traditional``    |D| - 1 records of D_eval + x, fresh every run   |D| records of D_eval \\ {x}
=================  ===============================================  ===============================

The model-seeded game measures the risk of x in *this* dataset, the traditional game the risk
averaged over datasets (the paper's Algorithm 1 and section 3). Each game owns its names
(:attr:`Game.name` on the command line, :attr:`Game.key` in the result columns, :attr:`Game.prefix`
in the checkpoints), its seeding roles and the draws of its evaluation datasets, so that code
outside this module loops over :data:`GAMES` (or :func:`played`) instead of spelling them.
The threat models of :mod:`privgame.games.threat` have the same shape for the attack's shadow
datasets.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from privgame.core.seeding import Role
from privgame.games import plan

if TYPE_CHECKING:
    from privgame.games.work import Context

__all__ = [
    "GAMES",
    "GAME_KEYS",
    "MODEL_SEEDED",
    "TRADITIONAL",
    "Game",
    "ModelSeeded",
    "Traditional",
    "played",
]


class Game(ABC):
    """One privacy game.

    Class attributes
    ----------------
    name : str
        As the command line and the spec write it (``--games``).
    key : str
        In the result tables and the summary: ``risk_<key>``, ``verdict_<key>``, ``mean_<key>``.
    prefix : str
        In a target's checkpoint: ``<prefix>_scores``, ``<prefix>_labels``.
    title : str
        In words, e.g. "model-seeded game".
    in_role, out_role : Role
        The seeding roles of the 'in' and 'out' evaluation runs.
    """

    name: ClassVar[str] = ""
    key: ClassVar[str] = ""
    prefix: ClassVar[str] = ""
    title: ClassVar[str] = ""
    in_role: ClassVar[Role]
    out_role: ClassVar[Role]

    def array(self, what: str) -> str:
        """The checkpoint array ``what`` of this game, e.g. ``ms_scores``."""
        return f"{self.prefix}_{what}"

    def column(self, suffix: str = "") -> str:
        """The result column of this game's risk, or of ``suffix`` of it (``low``, ``high``...)."""
        return f"risk_{self.key}" + (f"_{suffix}" if suffix else "")

    @property
    def verdict_column(self) -> str:
        """The result column of this game's verdicts."""
        return f"verdict_{self.key}"

    @abstractmethod
    def in_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> np.ndarray:
        """The training rows of one 'in' evaluation run for target ``record_id``."""

    @abstractmethod
    def out_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> tuple[np.ndarray, int]:
        """The training rows of one 'out' evaluation run, and the reference record swapped in for
        the target (-1 when none is)."""


class ModelSeeded(Game):
    """The risk of x in this dataset: D fixed, the generator's seed varied."""

    name = "model-seeded"
    key = "model_seeded"
    prefix = "ms"
    title = "model-seeded game"
    in_role = Role.MS_IN
    out_role = Role.MS_OUT

    def in_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> np.ndarray:
        return plan.ms_in_rows(ctx.target)

    def out_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> tuple[np.ndarray, int]:
        return plan.ms_out_rows(rng, ctx.target, ctx.reference, record_id)


class Traditional(Game):
    """The risk of x averaged over datasets: a fresh dataset from D_eval for every run."""

    name = "traditional"
    key = "traditional"
    prefix = "t"
    title = "traditional game"
    in_role = Role.T_IN
    out_role = Role.T_OUT

    def in_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> np.ndarray:
        return plan.t_in_rows(rng, ctx.eval_pool, record_id, ctx.n)

    def out_rows(self, ctx: Context, rng: np.random.Generator, record_id: int) -> tuple[np.ndarray, int]:
        return plan.t_out_rows(rng, ctx.eval_pool, record_id, ctx.n), -1


MODEL_SEEDED = ModelSeeded()
TRADITIONAL = Traditional()
GAMES: tuple[Game, ...] = (MODEL_SEEDED, TRADITIONAL)
"""Both games, the model-seeded one first (its verdict is the audit's)."""

GAME_KEYS: tuple[str, ...] = tuple(game.key for game in GAMES)
"""The games as the results tables name them (``game`` columns, ``risk_<key>``), in that order."""

SHARED_ROLES: dict[str, Role] = {
    "shadow_out": Role.SHADOW_OUT,
    "shadow_in": Role.SHADOW_IN,
    MODEL_SEEDED.array("in"): MODEL_SEEDED.in_role,
}
"""The datasets made once per run and shared by every target (the run folder's names), with the
seeding role of each: the attacker's shadow datasets and the model-seeded game's 'in' datasets."""


def played(games: str) -> tuple[Game, ...]:
    """The games a run with the setting ``games`` (``"both"`` or ``"model-seeded"``) plays.

    Raises
    ------
    ValueError
        For another setting.
    """
    if games == "both":
        return GAMES
    if games == MODEL_SEEDED.name:
        return (MODEL_SEEDED,)
    raise ValueError(f"--games {games!r} is unknown; use 'model-seeded' or 'both'.")
