"""Defaults and choices that the command line's help shows, in a module that imports no library.

``python -m privgame --help`` builds every sub-command's parser, so what a parser needs must not
pull in numpy, pandas, scikit-learn, numba or plotly (the CLI would take seconds to start). The
modules that use these values (:mod:`privgame.data.splits`, :mod:`privgame.data.dataset`,
:mod:`privgame.outputs.run_report`, :mod:`privgame.studies`) import them from here, so each has one source.
"""

from __future__ import annotations

import math

__all__ = [
    "ATTACKERS",
    "ATTACK_NAMES",
    "DEFAULT_ANONYMITY_ATTACKS",
    "DEFAULT_ATTACKER",
    "DEFAULT_ATTACKS",
    "DEFAULT_CONFIRM_TOP",
    "DEFAULT_DATASETS",
    "DEFAULT_EPSILONS",
    "DEFAULT_HOLDOUT",
    "DEFAULT_INFERENCE_THRESHOLD",
    "DEFAULT_N_EVALS",
    "DEFAULT_SCREEN",
    "DEFAULT_SCREEN_SHADOWS",
    "DEFAULT_SIZES",
    "EXPORT_FORMATS",
    "MISSING_POLICIES",
    "NOT_RUN",
    "PLUGIN_TIME_LIMIT_SECONDS",
    "PLUGIN_TIME_LIMIT_SETTING",
    "STUDIES",
    "STUDY_TITLES",
]

DEFAULT_HOLDOUT = 0.3
"""The share of the owner's table held back to play the population when no population is given."""

ATTACKERS: tuple[str, ...] = ("leave-one-out", "population")
"""The threat models a run can be judged against (see :mod:`privgame.games.threat`): an attacker
who knows every record of D but the target, or one who knows a sample of the population."""

DEFAULT_ATTACKER: dict[str, str] = {"release": "leave-one-out", "paper": "population"}
"""The attacker of each set-up when none is named: a release is judged against the worst case;
the paper's research set-up keeps the paper's attacker."""

ATTACK_NAMES: tuple[str, ...] = ("tapas", "values", "closest", "density", "marginal")
"""The attacks of ``--attacks`` (:mod:`privgame.attack`; a test checks the registry holds exactly
these, in this order): TAPAS' counting queries, exact values, the closest record, the density
ratio and the generator's own marginals."""

DEFAULT_ATTACKS: dict[str, str] = {"release": "all", "paper": "tapas"}
"""The attacks of each set-up when none are named (``--attacks``): a release is judged by every
attack that applies to its generator, the strongest per record; the paper's research set-up keeps
the paper's attack, so that its tables stay reproducible."""

DEFAULT_SCREEN: dict[str, str] = {"release": "all", "paper": "none"}
"""Whether each set-up screens every record of D when not told (``--screen``): a release is
answered for every record; the paper's research set-up plays its chosen targets only."""

DEFAULT_CONFIRM_TOP = 20
"""``--confirm-top``: the top-screened records the exact game confirms, beside the audit plan."""

DEFAULT_SCREEN_SHADOWS = 500
"""``--screen-shadows``: the screening datasets (see :mod:`privgame.games.screen`)."""

PLUGIN_TIME_LIMIT_SECONDS = 3600.0
"""The default limit on one call of a plug-in's ``fit`` or ``sample``: an audit makes thousands of
fits, so a plug-in that needs an hour for one cannot be audited anyway, and one that hangs must
not hold a run for ever."""

PLUGIN_TIME_LIMIT_SETTING = "PRIVGAME_PLUGIN_TIME_LIMIT"
"""The environment variable that sets another limit, in seconds (``--plugin-time-limit`` sets it for
one command; the engine hands it to its worker processes)."""

NOT_RUN = "not run"
"""What every figure and verdict of a game that was not played reads (the traditional game of a
run that played the model-seeded game alone), on the pages, in the reports and in the exports."""

MISSING_POLICIES: tuple[str, ...] = ("drop", "category")
"""What to do with missing values: drop the row, or make them a category of their own."""

EXPORT_FORMATS: tuple[str, ...] = ("csv", "csv-excel", "json", "parquet")
"""The table formats :func:`privgame.outputs.run_report.to_bytes` writes (``csv-excel``: UTF-8 BOM, ``;``)."""

STUDIES: tuple[str, ...] = ("size", "epsilon", "datasets", "convergence")
"""The paper's studies that ``python -m privgame study`` runs."""

STUDY_TITLES: dict[str, str] = {
    "size": "Dataset size (Fig. 3)",
    "epsilon": "Differential privacy: the privacy budget epsilon (Fig. 4)",
    "datasets": "One record in different datasets (Fig. 5)",
    "convergence": "Convergence in N_eval (Fig. 6, Appendix C)",
}
"""A short title of each study, naming the paper's figure it reproduces."""

DEFAULT_SIZES: tuple[int, ...] = (200, 500, 1000, 2000, 5000, 10000)
"""The size study's values of |D|."""

DEFAULT_EPSILONS: tuple[float, ...] = (math.inf, 100.0, 10.0, 1.0)
"""The epsilon study's privacy budgets."""

EPSILON_GENERATORS: tuple[str, ...] = ("privbayes", "mst")
"""The differentially private generators whose budget the epsilon study varies (the first is the
paper's and the default)."""

DEFAULT_DATASETS = 15
"""The datasets study's number of datasets."""

DEFAULT_N_EVALS: tuple[int, ...] = tuple(range(100, 2001, 100))
"""The convergence study's values of N_eval."""

LEAVE_OUT_CHOICES: tuple[str, ...] = ("at-risk", "at-risk-and-undecided", "at-risk-together")
"""``remedy --leave-out``'s choices (the keys of :data:`privgame.runs.remedy.LEAVE_OUT`)."""

SAMPLE_CHOICES: tuple[str, ...] = ("kept", "fresh")
"""``remedy --sample``'s choices: a leave-out re-audit keeps the parent's random sample (the
default) or draws a fresh one (see :mod:`privgame.runs.remedy`)."""

UTILITY_SAMPLES = 5
"""``utility --samples``' default (:data:`privgame.analysis.utility.DEFAULT_SAMPLES`)."""

DEFAULT_INFERENCE_THRESHOLD = 0.1
"""The default inference threshold: a record is at risk of inference when the release names its
secret more often with the record in D than without it by more than this (10 percentage points)."""

DEFAULT_ANONYMITY_ATTACKS = 1_000
"""anonymeter's ``n_attacks`` for ``privgame anonymity``: records of D attacked by each evaluator (and
as many records of the control set); its intervals are about +/-3 points at this many."""
