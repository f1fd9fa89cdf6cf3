"""The frozen run specification: everything that determines a run's results.

A :class:`RunSpec` is built by the CLI or the dashboard, validated, written as ``spec.json``
into the run folder and read back by the engine. How a run is executed (number of workers,
Dask scheduler) is not part of the spec: it never changes the results.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from privgame.core.defaults import (
    ATTACK_NAMES,
    ATTACKERS,
    DEFAULT_CONFIRM_TOP,
    DEFAULT_INFERENCE_THRESHOLD,
    DEFAULT_SCREEN,
    DEFAULT_SCREEN_SHADOWS,
)
from privgame.core.errors import ParameterError
from privgame.core.options import (
    CONFIRM_TOP,
    INFERENCE_THRESHOLD,
    SCREEN,
    SCREEN_SHADOWS,
    generator_options,
    option_problems,
)
from privgame.core.parameters import MAX_N_EVAL, MAX_N_SHADOW, count_problem, seed_problem, threshold_problem

__all__ = [
    "ATTACKERS",
    "DEFAULT_INFERENCE_THRESHOLD",
    "GAMES",
    "MAX_N_EVAL",
    "MAX_N_SHADOW",
    "SCREEN_MODES",
    "SETUP_KINDS",
    "TARGET_MODES",
    "TRADITIONAL_MODES",
    "AttackSettings",
    "InferenceSettings",
    "RunSpec",
    "ScreenSettings",
    "Setup",
    "TargetSelection",
    "package_versions",
]

TargetMode = Literal["all", "random", "outliers", "ids", "plan"]
TARGET_MODES: tuple[str, ...] = ("plan", "all", "random", "outliers", "ids")
SETUP_KINDS: tuple[str, ...] = ("release", "paper")
TRADITIONAL_MODES: tuple[str, ...] = ("pooled", "per-target")


def _builtin_defaults(generator: str) -> dict[str, Any]:
    """The parameters the faces offer for a built-in generator with their declared defaults
    (:data:`privgame.core.options.GENERATOR_OPTIONS`); empty for a plug-in, whose parameters are
    its own."""
    return {option.name: option.default for option in generator_options(generator)}


GAMES: tuple[str, ...] = ("both", "model-seeded")
"""Which games a run plays: both, or the model-seeded game alone (the verdict rests on it)."""


@dataclass(frozen=True)
class TargetSelection:
    """Which records of the target dataset D are evaluated.

    Attributes
    ----------
    mode : {"plan", "all", "random", "outliers", "ids"}
        ``plan``: the audit plan, the ``outliers`` most outlying records of D
        plus a uniform random sample of ``random`` records of D (an unbiased estimate of the
        share of all of D at risk); every record of D; ``k`` random records; the ``k`` most
        outlying records (see :func:`privgame.settings.targets.outlier_scores`); or the records listed
        in ``ids``.
    k : int or None
        Number of records for ``random`` and ``outliers``.
    ids : tuple of int
        Record ids (row numbers of the prepared table) for ``ids``; each must be in D.
    outliers, random : int
        The audit plan's two groups (``plan`` only); either may be 0, not both.
    sample_ids : tuple of int
        ``plan`` only: the random group's records, fixed instead of drawn (``random`` of them).
        A leave-out remedy keeps its parent's random sample this way (see
        :mod:`privgame.runs.remedy`); empty (the default) draws a uniform random sample of D.
    """

    mode: TargetMode = "random"
    k: int | None = 20
    ids: tuple[int, ...] = ()
    outliers: int = 0
    random: int = 0
    sample_ids: tuple[int, ...] = ()

    def problems(self) -> list[str]:
        """Every problem with these settings, one sentence each."""
        out: list[str] = []
        if self.mode not in TARGET_MODES:
            out.append(f"target selection {self.mode!r} is unknown; use one of {list(TARGET_MODES)}.")
        if self.mode in ("random", "outliers") and (self.k is None or self.k < 1):
            out.append(f"the number of target records must be at least 1 (got {self.k}).")
        if self.mode == "ids" and not self.ids:
            out.append("no record was chosen: pick at least one record of D to audit.")
        if self.mode == "ids" and len(set(self.ids)) != len(self.ids):
            out.append("a record was chosen twice: list each record once.")
        if self.mode == "plan":
            for name in ("outliers", "random"):
                value = getattr(self, name)
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    out.append(f"--{name} must be a whole number of records, 0 or more; got {value!r}.")
            if self.outliers == 0 and self.random == 0:
                out.append("the audit plan is empty: give --outliers or --random a number above 0.")
            if self.sample_ids and len(self.sample_ids) != self.random:
                out.append(
                    f"the fixed random sample lists {len(self.sample_ids)} records but --random is "
                    f"{self.random}; they must agree."
                )
        if self.sample_ids and self.mode != "plan":
            out.append("a fixed random sample (sample_ids) belongs to the audit plan (mode 'plan') only.")
        if len(set(self.sample_ids)) != len(self.sample_ids):
            out.append("the fixed random sample lists a record twice: list each record once.")
        return out

    @classmethod
    def plan(cls, outliers: int = 20, random: int = 20) -> TargetSelection:
        """The audit plan: the ``outliers`` most outlying records plus ``random`` random ones."""
        return cls(mode="plan", k=None, outliers=outliers, random=random)


@dataclass(frozen=True)
class Setup:
    """Where D, the attacker's data and the reference records come from.

    ``paper``
        The paper's instrument: one table is split into D_aux and D_eval, and a target dataset
        D of ``sizes["target"]`` records is drawn from D_eval (Table 2's proportions).
    ``release``
        D is the data the release is trained on. The population the attacker knows, D_aux, and
        the reference records come from a *holdout* of the owner's table that is never released
        (``population="holdout"``) or from a second table (``population="table"``, stored after
        the owner's rows in the run's table). D_aux and the reference records are disjoint; the
        traditional game's pool is D_eval = D + the reference records.

    Attributes
    ----------
    kind : {"paper", "release"}
    population : {"holdout", "table"} or None
        ``release`` only: where the population comes from.
    data_rows : int
        ``release`` only: rows of the owner's (prepared) table; with a population table, the run's
        table holds these rows first and the population's after them.
    population_rows : int
        ``release`` only: rows of the holdout, or of the population table.
    population_name : str or None
        The population table's file name, for display.
    shadow_size : int or None
        Rows of each shadow training dataset; ``None`` means ``|D|``, as in the paper.
    shadow_replace : bool
        Whether shadow datasets are drawn from D_aux with replacement (the default when D_aux has
        fewer rows than a shadow dataset needs).
    data_fingerprint, population_fingerprint : str or None
        SHA-256 of D and of the population part (see :func:`privgame.data.fingerprint_table`).
    synthetic_rows : int or None
        Rows of every synthetic dataset the attack sees, and of the release; ``None`` means
        ``|D|``. A leave-out remedy keeps its parent's size, so the release stays as large and
        the parent's trained attacks stay exactly valid (see :mod:`privgame.runs.remedy`).
    """

    kind: Literal["paper", "release"] = "paper"
    population: Literal["holdout", "table"] | None = None
    data_rows: int = 0
    population_rows: int = 0
    population_name: str | None = None
    shadow_size: int | None = None
    shadow_replace: bool = False
    data_fingerprint: str | None = None
    population_fingerprint: str | None = None
    synthetic_rows: int | None = None

    def problems(self) -> list[str]:
        """Every problem with these settings, one sentence each."""
        out: list[str] = []
        if self.kind not in SETUP_KINDS:
            out.append(f"set-up {self.kind!r} is unknown; use one of {list(SETUP_KINDS)}.")
        if self.kind == "release" and self.population not in ("holdout", "table"):
            out.append("a release set-up needs a population: a holdout of the table or a second table.")
        if self.shadow_size is not None and (
            isinstance(self.shadow_size, bool)
            or not isinstance(self.shadow_size, int)
            or self.shadow_size < 2
        ):
            out.append(f"--shadow-size must be a whole number of at least 2; got {self.shadow_size!r}.")
        if self.synthetic_rows is not None and (
            isinstance(self.synthetic_rows, bool)
            or not isinstance(self.synthetic_rows, int)
            or self.synthetic_rows < 2
        ):
            out.append(f"synthetic_rows must be a whole number of at least 2; got {self.synthetic_rows!r}.")
        return out


@dataclass(frozen=True)
class AttackSettings:
    """The TAPAS attack's settings (the attacker's knowledge is fixed by the threat model).

    ``n_shadow`` defaults to 1,000, the paper's: with 200 shadow datasets the attack is weaker and
    its model-seeded risks are biased low (Synthpop on Adult: by 0.046 ± 0.012 on average against
    1,000; see ``benchmarks/shadow_strength.py`` and REPRODUCTION.md), which would turn records
    at risk into "not at risk".

    ``traditional`` says how the traditional game's evaluation datasets are made. ``"pooled"``
    (the default) serves every target from one seeded sequence of |D|-row datasets drawn from
    D_eval, so a generator is trained once per pool dataset instead of once per target and run;
    each target's game is exactly the same (see :mod:`privgame.games.pool`). ``"per-target"``
    draws and trains every target's datasets separately. Specs written before the option existed
    read as ``"per-target"``, so their runs resume unchanged.

    ``games`` is ``"both"`` (the default) or ``"model-seeded"``: a remedy's re-audit plays the
    model-seeded game alone unless asked for both, since the verdict rests on it; the traditional
    game's columns then read "not run".

    ``attacker`` names the threat model the attack is trained under (:mod:`privgame.games.threat`):
    ``"population"`` (the paper's: shadow datasets drawn from D_aux; the dataclass default, so
    specs written before the option read as it) or ``"leave-one-out"`` (the attacker knows D but
    the target; the command line's and the dashboard's default in the release set-up). The
    leave-one-out attacker plays the model-seeded game alone: the traditional game draws a fresh
    dataset for every run, so no attacker can know "every other record" of it, and its risks
    would not be comparable with the model-seeded ones.
    """

    n_shadow: int = 1000
    n_eval: int = 200
    classifier: Literal["random_forest", "logistic"] = "random_forest"
    max_exact_columns: int = 20
    traditional: Literal["pooled", "per-target"] = "pooled"
    games: Literal["both", "model-seeded"] = "both"
    attacker: Literal["population", "leave-one-out"] = "population"
    attacks: tuple[str, ...] = ("tapas",)

    def __post_init__(self) -> None:
        if isinstance(self.attacks, str):
            object.__setattr__(self, "attacks", tuple(a for a in self.attacks.split(",") if a))
        else:
            object.__setattr__(self, "attacks", tuple(self.attacks))

    def problems(self) -> list[str]:
        """Every problem with these settings, one sentence each."""
        out: list[str] = []
        unknown = [a for a in self.attacks if a not in ATTACK_NAMES]
        if unknown or not self.attacks:
            out.append(
                f"--attacks {','.join(self.attacks) or '(none)'!r}: "
                f"{'unknown ' + ', '.join(map(repr, unknown)) if unknown else 'no attack named'}; use 'all' "
                f"or a comma-separated list of {', '.join(ATTACK_NAMES)}."
            )
        for name, most in (("n_shadow", MAX_N_SHADOW), ("n_eval", MAX_N_EVAL)):
            problem = count_problem(name, getattr(self, name), most)
            if problem is not None:
                out.append(problem)
        if self.classifier not in ("random_forest", "logistic"):
            out.append(f"classifier {self.classifier!r} is unknown; use 'random_forest' or 'logistic'.")
        if not 1 <= self.max_exact_columns <= 24:
            out.append(
                f"max_exact_columns must be between 1 and 24 (2^d features); got {self.max_exact_columns}."
            )
        if self.traditional not in TRADITIONAL_MODES:
            out.append(
                f"--traditional {self.traditional!r} is unknown; use 'pooled' (one pool of datasets "
                "serves every target, the default) or 'per-target'."
            )
        if self.games not in GAMES:
            out.append(f"--games {self.games!r} is unknown; use 'model-seeded' or 'both'.")
        if self.attacker not in ATTACKERS:
            out.append(
                f"--attacker {self.attacker!r} is unknown; use 'leave-one-out' (knows every record of D "
                "but the target, the worst case) or 'population' (knows a sample of the population, "
                "the paper's)."
            )
        elif self.attacker == "leave-one-out" and self.games == "both":
            out.append(
                "--attacker leave-one-out plays the model-seeded game only: the traditional game draws a "
                "fresh dataset for every run, so no attacker knows 'every other record' of it, and its "
                "risks cannot be set against the leave-one-out ones. Use --games model-seeded, or "
                "--attacker population to compare the two games under one attacker."
            )
        return out


SCREEN_MODES: tuple[str, ...] = SCREEN.choices
"""``--screen``: screen every record of D (``all``) or none."""


@dataclass(frozen=True)
class ScreenSettings:
    """The screening pass over every record of D (see :mod:`privgame.games.screen`).

    ``mode`` is ``"none"`` for the dataclass (specs written before the screen existed read as
    it); the command line and the dashboard set ``"all"`` in the release set-up.

    Attributes
    ----------
    mode : {"all", "none"}
    shadows : int
        Screening datasets, each D with a random ``swap`` share of its records swapped for
        reference records; every record is 'out' in about ``swap * shadows`` of them.
    swap : float
        The share of D swapped out of each screening dataset, in (0, 0.5].
    confirm_top : int
        The top-screened records (highest screening risk) not already in the audit plan that
        the exact game plays too.
    """

    mode: Literal["all", "none"] = "none"
    shadows: int = DEFAULT_SCREEN_SHADOWS
    swap: float = 0.2
    confirm_top: int = DEFAULT_CONFIRM_TOP

    @classmethod
    def for_setup(cls, setup: str, mode: str | None = None, **settings: Any) -> ScreenSettings:
        """The screen of a run in ``setup`` (``"release"`` or ``"paper"``): ``mode`` when given,
        else the set-up's default (:data:`~privgame.core.defaults.DEFAULT_SCREEN`); ``settings``
        that are None keep their defaults."""
        chosen = mode or DEFAULT_SCREEN.get(setup, "none")
        return cls(mode=chosen, **{k: v for k, v in settings.items() if v is not None})  # type: ignore[arg-type]

    @property
    def on(self) -> bool:
        """Whether the run screens every record."""
        return self.mode == "all"

    def problems(self) -> list[str]:
        """Every problem with these settings, one sentence each."""
        out: list[str] = []
        if self.mode not in SCREEN_MODES:
            out.append(f"--screen {self.mode!r} is unknown; use 'all' (screen every record) or 'none'.")
        for option, value in ((SCREEN_SHADOWS, self.shadows), (CONFIRM_TOP, self.confirm_top)):
            if (problem := option.flag_problem(value)) is not None:
                out.append(problem)
        if not isinstance(self.swap, int | float) or not 0 < float(self.swap) <= 0.5:
            out.append(
                f"the screen's swap (the share of D swapped out of each screening dataset) must be in "
                f"(0, 0.5]; got {self.swap!r} (the default is 0.2)."
            )
        return out


@dataclass(frozen=True)
class InferenceSettings:
    """The per-record attribute-inference game (see :mod:`privgame.games.inference`).

    Attributes
    ----------
    secrets : tuple of str
        The secret columns; the attacker knows every other column of the target. Empty: the
        game is not played.
    threshold : float
        A record is *at risk* of inference when its inference gain's interval lies above this.
    """

    secrets: tuple[str, ...] = ()
    threshold: float = DEFAULT_INFERENCE_THRESHOLD

    @property
    def on(self) -> bool:
        """Whether the run plays the inference game."""
        return bool(self.secrets)

    def problems(self, schema: Mapping[str, Any] | None = None) -> list[str]:
        """Every problem with these settings (and their columns, given the spec's schema)."""
        out: list[str] = []
        if (problem := INFERENCE_THRESHOLD.flag_problem(self.threshold)) is not None:
            out.append(problem)
        if not all(isinstance(s, str) and s for s in self.secrets):
            out.append(f"--secret takes column names; got {list(self.secrets)!r}.")
        elif schema is not None and self.secrets:
            from privgame.attack.inference import secret_problems
            from privgame.data.schema import Schema

            out.extend(secret_problems(Schema.from_dict(schema), self.secrets))
        return out


def package_versions() -> dict[str, str]:
    """Versions of the packages that can change a run's numbers."""
    import numpy
    import pandas
    import sklearn

    from privgame import _version

    return {
        "privgame": _version.__version__,
        "numpy": numpy.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
    }


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's results, frozen and JSON-serialisable.

    Attributes
    ----------
    data_name : str
        A human name for the data (file name), for display only.
    data_fingerprint : str
        SHA-256 of the prepared table.
    schema : dict
        :meth:`privgame.data.Schema.to_dict` of the prepared table.
    sizes : dict
        ``{"aux": |D_aux|, "eval": |D_eval|, "target": |D|}``; in the release set-up
        ``eval`` is ``|D|`` plus the reference records.
    generator : str
        Registry name of the generator.
    generator_params : dict
        Its parameters.
    attack : AttackSettings
    targets : TargetSelection
    threshold : float
        The high-risk threshold t used by reports (reports may pick another).
    seed : int
        The root seed of every random choice.
    versions : dict
        Package versions, recorded for provenance.
    setup : Setup
        The paper's set-up or the release set-up (specs written before set-ups existed read as
        the paper's).
    left_out : tuple of int
        Record ids taken out of D by a leave-out remedy: they are in neither D nor D_eval, so
        neither the audit nor the release uses them (record ids stay the rows of the table).
    parent : dict or None
        A remedy run's lineage: ``{"run_id", "path", "remedies": [...], "description"}`` of the
        run it was made from (see :mod:`privgame.runs.remedy`); None for an ordinary run.
    screen : ScreenSettings
        The screening pass over every record of D (off unless asked for).
    inference : InferenceSettings
        The per-record attribute-inference game (off unless secret columns are named).
    """

    data_name: str
    data_fingerprint: str
    schema: dict[str, Any]
    sizes: dict[str, int]
    generator: str
    generator_params: dict[str, Any] = field(default_factory=dict)
    attack: AttackSettings = field(default_factory=AttackSettings)
    targets: TargetSelection = field(default_factory=TargetSelection)
    threshold: float = 0.8
    seed: int = 0
    versions: dict[str, str] = field(default_factory=package_versions)
    setup: Setup = field(default_factory=Setup)
    left_out: tuple[int, ...] = ()
    parent: dict[str, Any] | None = None
    screen: ScreenSettings = field(default_factory=ScreenSettings)
    inference: InferenceSettings = field(default_factory=InferenceSettings)

    def __post_init__(self) -> None:
        # A built-in generator's spec names every one of its parameters, its defaults included, so
        # that the same settings make the same spec from every face (the dashboard shows each
        # parameter, the command line passes only those given) and a run folder keeps its meaning
        # when a default changes; Synthpop JSON written before its splits option reads as ordinal
        # (from_dict).
        missing = {
            key: value
            for key, value in _builtin_defaults(self.generator).items()
            if key not in self.generator_params
        }
        if missing:
            object.__setattr__(self, "generator_params", {**self.generator_params, **missing})

    def validate(self) -> RunSpec:
        """Check every setting and raise one :class:`ParameterError` listing all problems."""
        from privgame.generators import available, is_known

        problems = [
            *self.attack.problems(),
            *self.targets.problems(),
            *self.setup.problems(),
            *self.screen.problems(),
            *self.inference.problems(self.schema),
        ]
        problems += option_problems(
            {option.name: option for option in generator_options(self.generator)}, self.generator_params
        )
        if not is_known(self.generator):
            problems.append(
                f"generator {self.generator!r} is unknown; use one of {available()}, an installed plug-in, "
                "or a plug-in class as module.path:ClassName."
            )
        for problem in (threshold_problem(self.threshold, numbers_only=True), seed_problem(self.seed)):
            if problem is not None:
                problems.append(problem)
        if set(self.sizes) != {"aux", "eval", "target"}:
            problems.append("sizes must give 'aux', 'eval' and 'target'.")
        if problems:
            raise ParameterError("The run settings are not valid.", problems)
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (infinite epsilon is written as the string "inf")."""
        data = asdict(self)
        data["targets"]["ids"] = list(self.targets.ids)
        if self.targets.sample_ids:
            data["targets"]["sample_ids"] = list(self.targets.sample_ids)
        else:  # written only when set, so the specs of existing runs serialise exactly as before
            del data["targets"]["sample_ids"]
        data["generator_params"] = {k: _json_number(v) for k, v in self.generator_params.items()}
        # Written only when set, so the specs of existing runs serialise exactly as before.
        for key, default in (("left_out", ()), ("parent", None)):
            if getattr(self, key) == default:
                del data[key]
            elif key == "left_out":
                data[key] = list(self.left_out)
        if self.attack.games == AttackSettings.games:
            del data["attack"]["games"]
        if self.attack.attacker == AttackSettings.attacker:  # specs written before the option read so
            del data["attack"]["attacker"]
        if self.attack.attacks == ("tapas",):  # specs written before portfolios read as TAPAS alone
            del data["attack"]["attacks"]
        else:
            data["attack"]["attacks"] = list(self.attack.attacks)
        if self.setup.synthetic_rows is None:
            del data["setup"]["synthetic_rows"]
        if not self.screen.on:  # written only when on, so the specs of existing runs read as before
            del data["screen"]
        if not self.inference.on:  # likewise
            del data["inference"]
        else:
            data["inference"]["secrets"] = list(self.inference.secrets)
        return data

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys), identical for identical specs."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSpec:
        """Rebuild a spec from :meth:`to_dict` output."""
        targets = dict(data.get("targets", {}))
        targets["ids"] = tuple(int(i) for i in targets.get("ids", ()))
        targets["sample_ids"] = tuple(int(i) for i in targets.get("sample_ids", ()))
        params = {k: _from_json_number(v) for k, v in dict(data.get("generator_params", {})).items()}
        if data.get("generator") == "synthpop":
            # A Synthpop spec written before the option existed split categories as ordered codes.
            params.setdefault("categorical_splits", "ordinal")
        return cls(
            data_name=str(data["data_name"]),
            data_fingerprint=str(data["data_fingerprint"]),
            schema=dict(data["schema"]),
            sizes={k: int(v) for k, v in dict(data["sizes"]).items()},
            generator=str(data["generator"]),
            generator_params=params,
            # A spec written before pooling existed played the per-target traditional game.
            attack=AttackSettings(**{"traditional": "per-target", **dict(data.get("attack", {}))}),
            targets=TargetSelection(**targets),
            threshold=float(data.get("threshold", 0.8)),
            seed=int(data.get("seed", 0)),
            versions=dict(data.get("versions", {})),
            setup=Setup(**dict(data.get("setup", {}))),
            left_out=tuple(int(i) for i in data.get("left_out", ())),
            parent=dict(data["parent"]) if data.get("parent") is not None else None,
            screen=ScreenSettings(**dict(data.get("screen", {}))),
            inference=_inference_settings(data.get("inference")),
        )

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        """Parse :meth:`to_json` output."""
        return cls.from_dict(json.loads(text))


def _inference_settings(data: Mapping[str, Any] | None) -> InferenceSettings:
    if not data:
        return InferenceSettings()
    return InferenceSettings(
        secrets=tuple(str(s) for s in data.get("secrets", ())),
        threshold=float(data.get("threshold", DEFAULT_INFERENCE_THRESHOLD)),
    )


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _from_json_number(value: Any) -> Any:
    if value in ("inf", "-inf"):
        return float(value)
    return value


def parse_ids(values: Sequence[str]) -> tuple[int, ...]:
    """Parse record ids given as text, with a clear error for anything that is not an integer."""
    out = []
    bad = []
    for v in values:
        try:
            out.append(int(v))
        except ValueError:
            bad.append(v)
    if bad:
        raise ParameterError(f"Record ids must be whole numbers; these are not: {bad}.")
    return tuple(out)
