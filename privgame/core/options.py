"""Options as data: a setting a person gives, declared once with its type, range, default and help.

An :class:`Option` is what the command line turns into a flag (``privgame.cli.arguments``), what the
dashboard turns into a widget (``pages/__init__.py``) and what the run spec and the Python API check
a value against, so each setting has one name, one range, one default and one sentence of help
wherever it is given. The generators declare theirs (:data:`GENERATOR_OPTIONS`); the attack's are
in :mod:`privgame.settings.attacks`.

This module imports nothing of privgame but its errors and :mod:`privgame.core.parameters`, so
every layer can use it, and a command's ``--help`` loads no numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal

from privgame.core.defaults import (
    ATTACKERS,
    DEFAULT_CONFIRM_TOP,
    DEFAULT_INFERENCE_THRESHOLD,
    DEFAULT_SCREEN_SHADOWS,
)
from privgame.core.errors import ParameterError
from privgame.core.parameters import (
    MAX_N_EVAL,
    MAX_N_SHADOW,
    count_problem,
    read_epsilon,
    seed_problem,
    threshold_problem,
)

__all__ = [
    "ATTACKER",
    "BINS",
    "CATEGORICAL_SPLITS",
    "CLASSIFIER",
    "CONFIRM_TOP",
    "DEGREE",
    "DELTA",
    "EPSILON",
    "GENERATOR_OPTIONS",
    "INFERENCE_THRESHOLD",
    "MIN_SAMPLES_LEAF",
    "N_EVAL",
    "N_SHADOW",
    "SCREEN",
    "SCREEN_OPTIONS",
    "SCREEN_SHADOWS",
    "SEED",
    "TARGET_SELECTION",
    "THRESHOLD",
    "Option",
    "OptionKind",
    "generator_options",
    "option_problems",
]

OptionKind = Literal["int", "float", "epsilon", "choice"]
"""``int``: a whole number; ``float``: a finite number; ``epsilon``: a positive number or
infinity (no noise); ``choice``: one of :attr:`Option.choices`."""


@dataclass(frozen=True, kw_only=True)
class Option:
    """One setting, as data.

    Attributes
    ----------
    name : str
        The keyword (the Python API's, the constructor's, the run spec's) and the argparse ``dest``.
    kind : {"int", "float", "epsilon", "choice"}
        Its type (see :data:`OptionKind`).
    default : object
        Its default, which the faces show and the constructor takes.
    help : str
        One sentence: what it does. The command line's ``--help`` adds the default; the pages show
        it as the widget's help.
    label : str
        The widget's label on the pages.
    flag : str
        The command-line flag (default ``--`` + the name with dashes).
    low, high : float or None
        The range (None: unbounded on that side); ``open_low``/``open_high`` exclude the end.
    choices : tuple of str
        The values a ``choice`` takes.
    page_high : float or None
        A tighter upper end for the page's widget than the rule itself (a sensible range to offer).
    page_format : str or None
        The page widget's number format (``"%.1e"``).
    page_step : float or None
        The page widget's step (2 for counts that are half 'in', half 'out').
    ruled_by : callable or None
        The setting's own rule in :mod:`privgame.core.parameters` (value -> problem or None),
        where it has one, used instead of the range: the run spec checks the value with the same
        function, so each setting keeps one rule and one message.
    """

    name: str
    kind: OptionKind
    default: Any
    help: str
    label: str
    flag: str = ""
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    choices: tuple[str, ...] = ()
    page_high: float | None = None
    page_format: str | None = None
    page_step: float | None = None
    ruled_by: Callable[[Any], str | None] | None = None

    def __post_init__(self) -> None:
        if not self.flag:
            object.__setattr__(self, "flag", "--" + self.name.replace("_", "-"))
        problem = self.problem(self.default)
        if problem is not None:  # a declaration's own default must pass its rule
            raise ValueError(f"option {self.name}: its default {problem}")

    @property
    def rule(self) -> str:
        """What a value must be, as words: ``"a whole number >= 2"``."""
        if self.kind == "choice":
            return " or ".join(repr(choice) for choice in self.choices)
        if self.kind == "epsilon":
            return "a positive number, or inf for no noise"
        noun = "a whole number" if self.kind == "int" else "a number"
        if self.low is not None and self.high is not None:
            if self.open_low and self.open_high:
                return f"{noun} strictly between {_text(self.low)} and {_text(self.high)}"
            low = ">" if self.open_low else ">="
            high = "<" if self.open_high else "<="
            return f"{noun} {low} {_text(self.low)} and {high} {_text(self.high)}"
        if self.low is not None:
            return f"{noun} {'>' if self.open_low else '>='} {_text(self.low)}"
        if self.high is not None:
            return f"{noun} {'<' if self.open_high else '<='} {_text(self.high)}"
        return noun

    def problem(self, value: Any) -> str | None:
        """The problem with ``value`` for this option, as one sentence, or None when it passes.

        Text is not read here (see :meth:`read`): the API and the run spec hold typed values.
        """
        if self.ruled_by is not None:
            return self.ruled_by(value)
        if self._fits(value):
            return None
        return f"{self.name} must be {self.rule}; got {value!r}."

    def flag_problem(self, value: Any) -> str | None:
        """:meth:`problem` as the command line says it: the flag, the rule, the value and the
        default (``"--confirm-top must be a whole number >= 0; got -1 (the default is 20)."``)."""
        if self.problem(value) is None:
            return None
        return f"{self.flag} must be {self.rule}; got {value!r} (the default is {self.default})."

    def check(self, value: Any) -> Any:
        """``value`` as this option's type, once it passes.

        Raises
        ------
        ParameterError
            Naming the rule and an example, for a value that does not pass.
        """
        problem = self.problem(value)
        if problem is not None:
            raise ParameterError(problem)
        if self.kind == "int":
            return int(value)
        if self.kind in ("float", "epsilon"):
            return float(value)
        return value

    def read(self, text: str) -> Any:
        """``text`` (a flag's value) as this option's type; its range is checked later, with the
        other settings, so that every problem is named at once.

        Raises
        ------
        ParameterError
            For text that is not of the type.
        """
        if self.kind == "epsilon":
            return read_epsilon(text)
        if self.kind == "choice":
            return str(text)
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        whole = self.kind == "int" and math.isfinite(number) and number == int(number) and "." not in text
        if self.kind == "int" and whole:
            return int(number)
        if self.kind == "float" and math.isfinite(number):
            return number
        raise ParameterError(f"Give {self.rule}, not {text!r}.")

    def _fits(self, value: Any) -> bool:
        if self.kind == "choice":
            return isinstance(value, str) and value in self.choices
        if isinstance(value, bool) or not isinstance(value, Real):
            return False
        if self.kind == "int" and not isinstance(value, Integral):
            return False
        number = float(value)
        if math.isnan(number):
            return False
        if self.kind == "epsilon":
            return number > 0
        if math.isinf(number):
            return False
        if self.low is not None and (number <= self.low if self.open_low else number < self.low):
            return False
        return not (self.high is not None and (number >= self.high if self.open_high else number > self.high))


def _text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def option_problems(options: Mapping[str, Option], values: Mapping[str, Any]) -> list[str]:
    """Every problem of ``values`` against the ``options`` of the same name, one sentence each;
    a value without an option is left to its owner."""
    return [
        problem
        for name, value in values.items()
        if name in options and (problem := options[name].problem(value)) is not None
    ]


# --- the built-in generators' parameters -------------------------------------------------------

MIN_SAMPLES_LEAF = Option(
    name="min_samples_leaf",
    flag="--min-leaf",
    kind="int",
    default=5,
    low=1,
    label="Records per leaf (min_samples_leaf)",
    help="Fewest training records in a leaf of each CART tree; smaller leaves copy the data more closely.",
)
CATEGORICAL_SPLITS = Option(
    name="categorical_splits",
    kind="choice",
    default="onehot",
    choices=("onehot", "ordinal"),
    label="Categorical splits",
    help="How a tree splits a categorical column: onehot (one category against the others, as "
    "hazy's synthpop in the paper) or ordinal (a threshold on its codes).",
)
DEGREE = Option(
    name="degree",
    kind="int",
    default=1,
    low=0,
    page_high=6,
    label="Parents per column (degree k)",
    help="Most parents of each column in the Bayesian network (k); 0 makes every column independent.",
)
BINS = Option(
    name="bins",
    kind="int",
    default=10,
    low=2,
    label="Bins per continuous column",
    help="Equal-width bins per continuous column, between the schema's bounds.",
)
EPSILON = Option(
    name="epsilon",
    kind="epsilon",
    default=1.0,
    low=0,
    open_low=True,
    label="Privacy budget ε",
    help="The privacy budget ε of the differential-privacy guarantee; smaller is more private, inf "
    "adds no noise.",
)
DELTA = Option(
    name="delta",
    kind="float",
    default=1e-9,
    low=0,
    high=1,
    open_low=True,
    open_high=True,
    page_high=0.5,
    page_format="%.1e",
    label="δ",
    help="The chance δ that the ε guarantee fails; keep it far below 1 / (rows of D).",
)

GENERATOR_OPTIONS: dict[str, tuple[Option, ...]] = {
    "synthpop": (MIN_SAMPLES_LEAF, CATEGORICAL_SPLITS),
    "baynet": (DEGREE, BINS),
    "privbayes": (DEGREE, EPSILON, BINS),
    "mst": (EPSILON, DELTA, BINS),
    "marginals": (),
    "identity": (),
}
"""The parameters each built-in generator offers, by registry name: the generator class reads its
own (``SyntheticGenerator.parameters``), and the faces read them here without importing the
generators (numpy, numba)."""


def generator_options(name: str) -> tuple[Option, ...]:
    """The options the built-in generator ``name`` offers; empty for a plug-in (or a built-in
    without any)."""
    return GENERATOR_OPTIONS.get(name, ())


# --- the attack's and the run's settings --------------------------------------------------------

N_SHADOW = Option(
    name="n_shadow",
    kind="int",
    default=1000,
    low=4,
    high=MAX_N_SHADOW,
    page_step=2,
    label="Shadow datasets",
    help="Synthetic datasets the attack is trained on, half with the target record (N_shadow in the "
    "paper's notation).",
    ruled_by=lambda value: count_problem("n_shadow", value, MAX_N_SHADOW),
)
N_EVAL = Option(
    name="n_eval",
    kind="int",
    default=200,
    low=4,
    high=MAX_N_EVAL,
    page_step=2,
    label="Evaluation runs per game",
    help="Runs of each privacy game per record, half with the target record (N_eval).",
    ruled_by=lambda value: count_problem("n_eval", value, MAX_N_EVAL),
)
CLASSIFIER = Option(
    name="classifier",
    kind="choice",
    default="random_forest",
    choices=("random_forest", "logistic"),
    label="Meta-classifier",
    help="The attack's meta-classifier.",
)
ATTACKER = Option(
    name="attacker",
    kind="choice",
    default=ATTACKERS[0],
    choices=tuple(ATTACKERS),
    label="The attacker the release is judged against",
    help="The threat model: leave-one-out knows every record of D but the target (the worst case; "
    "plays the model-seeded game only); population knows a sample of the population and none of D "
    "(the paper's attacker; plays both games).",
)
TARGET_SELECTION = Option(
    name="target_selection",
    kind="choice",
    default="random",
    choices=("random", "outliers"),
    label="Which records",
    help="With --targets: random records of D or its most outlying ones.",
)
THRESHOLD = Option(
    name="threshold",
    kind="float",
    default=0.8,
    low=0.5,
    high=1.0,
    open_low=True,
    open_high=True,
    label="High-risk threshold t",
    help="A record is at risk when its risk (the attack's AUC) is above t.",
    ruled_by=lambda value: threshold_problem(value, numbers_only=True),
)
SEED = Option(
    name="seed",
    kind="int",
    default=0,
    low=0,
    label="Seed",
    help="The root of every random choice: the same seed gives the same results.",
    ruled_by=seed_problem,
)


# --- the screen of every record -----------------------------------------------------------------

SCREEN = Option(
    name="screen",
    kind="choice",
    default="all",
    choices=("all", "none"),
    label="Screen every record of D",
    help="Screen every record of D (all) or none: a screening pass gives every record a risk, an "
    "interval and a verdict, labelled 'screened', from shadow fits all records share.",
)
CONFIRM_TOP = Option(
    name="confirm_top",
    kind="int",
    default=DEFAULT_CONFIRM_TOP,
    low=0,
    page_step=5,
    label="Top-screened records to confirm",
    help="The records with the highest screening risk, not already in the audit plan, that the exact "
    "game plays too.",
)
SCREEN_SHADOWS = Option(
    name="screen_shadows",
    kind="int",
    default=DEFAULT_SCREEN_SHADOWS,
    low=20,
    high=100_000,
    label="Screening datasets",
    help="Screening datasets, each D with a fifth of its records swapped for reference records.",
)
SCREEN_OPTIONS: tuple[Option, ...] = (SCREEN, CONFIRM_TOP, SCREEN_SHADOWS)
"""The screen's settings, as the command line, the Evaluate page and the Python API offer them."""


# --- attribute inference -------------------------------------------------------------------------

INFERENCE_THRESHOLD = Option(
    name="inference_threshold",
    kind="float",
    default=DEFAULT_INFERENCE_THRESHOLD,
    low=0.0,
    high=1.0,
    open_high=True,
    page_high=0.95,
    page_step=0.05,
    label="Inference threshold",
    help="A record is at risk of inference when its gain's interval lies above this (0.1: the release "
    "names its secret 10 points more often because the record was in D).",
)
