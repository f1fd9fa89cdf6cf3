"""What a data owner asks of an audit, and the one way it becomes a run spec and its inputs.

An :class:`AuditRequest` holds an audit's settings in plain values, the same whether they came
from the command line's flags (:func:`privgame.cli.commands.run.build_spec`) or from the Python
API's keywords (:func:`privgame.api.audit`); :func:`prepare_request` reads the data, applies the
set-up and returns the validated :class:`~privgame.settings.run_spec.RunSpec` with the table the
run stores. A setting left None takes its default here, once for both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from privgame.core.defaults import DEFAULT_ATTACKER, DEFAULT_HOLDOUT
from privgame.core.errors import ParameterError
from privgame.core.options import CLASSIFIER, N_EVAL, N_SHADOW, SEED, THRESHOLD
from privgame.data import Dataset
from privgame.settings.attacks import resolve_attacks
from privgame.settings.generator_options import apply_domain, check_generator_params
from privgame.settings.run_spec import (
    DEFAULT_INFERENCE_THRESHOLD,
    AttackSettings,
    InferenceSettings,
    RunSpec,
    ScreenSettings,
    TargetSelection,
)
from privgame.settings.setups import AuditInputs

__all__ = [
    "DEFAULT_OUTLIERS",
    "DEFAULT_RANDOM",
    "AuditRequest",
    "PreparedRequest",
    "members_of",
    "prepare_request",
]

DEFAULT_OUTLIERS = 20
"""The audit plan's most outlying records."""

DEFAULT_RANDOM = 20
"""The audit plan's uniform random records."""

Source = str | os.PathLike[str] | bytes


@dataclass(frozen=True, kw_only=True)
class AuditRequest:
    """An audit's settings, as a data owner gives them (each is the ``run`` flag of the same name).

    Attributes
    ----------
    data : str, path-like, bytes or Dataset
        The table behind the release (D, in the release set-up): a path, a file's bytes with
        ``data_name`` as its name, or a table already read (its domain declared).
    generator : str
        A registered generator, a plug-in ``module:Class`` or an installed plug-in's name.
    generator_params : mapping
        The generator's parameters (``degree``, ``epsilon``, ``bins``, ``min_samples_leaf``,
        ``categorical_splits`` for the built-in ones; anything for a plug-in).
    population : str, path-like, bytes or None
        A second table from the same population, for the attacker and the reference records;
        None holds back a share of ``data`` (``holdout``).
    outliers, random : int or None
        The audit plan: the most outlying records and a uniform random sample (default 20 + 20).
    target_ids, all_targets, targets, target_selection
        Instead of the plan: these record ids, every record, or ``targets`` records chosen by
        ``target_selection``.
    attacker, games, attacks
        None for the set-up's defaults.
    secrets, inference_threshold
        The secret columns of the attribute-inference game (none: not played) and its threshold
        (None: :data:`~privgame.settings.run_spec.DEFAULT_INFERENCE_THRESHOLD`).
    """

    data: Source | Dataset
    data_name: str | None = None
    missing: Literal["drop", "category"] = "drop"
    domain: str | None = None
    drop_duplicates: bool = False
    generator: str = "synthpop"
    generator_params: Mapping[str, Any] = field(default_factory=dict)
    setup: Literal["release", "paper"] = "release"
    population: Source | None = None
    population_name: str | None = None
    holdout: float | int | None = None
    shadow_size: int | None = None
    aux_size: int | None = None
    size: int | None = None
    eval_size: int | None = None
    outliers: int | None = None
    random: int | None = None
    targets: int | None = None
    target_ids: Sequence[int] | None = None
    all_targets: bool = False
    target_selection: Literal["random", "outliers"] = "random"
    n_shadow: int = N_SHADOW.default
    n_eval: int = N_EVAL.default
    classifier: Literal["random_forest", "logistic"] = CLASSIFIER.default
    attacker: str | None = None
    attacks: str | Sequence[str] | None = None
    games: str | None = None
    traditional: Literal["pooled", "per-target"] = "pooled"
    screen: Literal["all", "none"] | None = None
    confirm_top: int | None = None
    screen_shadows: int | None = None
    secrets: Sequence[str] = ()
    inference_threshold: float | None = None
    threshold: float = THRESHOLD.default
    seed: int = SEED.default


@dataclass(frozen=True, eq=False)
class PreparedRequest:
    """A request made ready to run: its validated spec, the set-up's inputs (the table the run
    stores), the data as read, and the rows ``drop_duplicates`` dropped from the data and from the
    population."""

    spec: RunSpec
    inputs: AuditInputs
    dataset: Dataset
    dropped: Mapping[str, int]


def prepare_request(request: AuditRequest, *, inputs: AuditInputs | None = None) -> PreparedRequest:
    """Read the request's tables, apply its set-up and build its validated run spec.

    The one preparation of a run, for every face: the command line and the Python API pass a
    request whose data is a path or bytes; the dashboard passes the table its Data page read (a
    :class:`~privgame.data.Dataset`, its domain declared) and the set-up's ``inputs`` it keeps for
    the session (the request's set-up fields are then not read again).

    Raises
    ------
    ParameterError, DataError, SchemaError, SizeError
        Naming the setting or the table at fault, and the fix.
    """
    from privgame.data import load_dataset
    from privgame.data.duplicates import drop_duplicate_rows

    if request.seed < 0:
        raise ParameterError(f"--seed must be a non-negative whole number; got {request.seed}.")
    if isinstance(request.data, Dataset):
        dataset = request.data
    else:
        dataset = apply_domain(
            load_dataset(request.data, filename=request.data_name, missing_policy=request.missing),
            request.domain,
        )
    dropped: dict[str, int] = {}
    if request.drop_duplicates:
        dataset, dropped["data"] = drop_duplicate_rows(dataset)
    selection = _selection(request)
    if inputs is None:
        inputs = _inputs(request, dataset, dropped)
    attacker, games = attacker_and_games(inputs.setup.kind, request.attacker, request.games)
    params = check_generator_params(request.generator, request.generator_params)
    spec = RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator=request.generator,
        generator_params=params,
        attack=AttackSettings(
            n_shadow=request.n_shadow,
            n_eval=request.n_eval,
            classifier=request.classifier,
            traditional=request.traditional,
            games=games,
            attacker=attacker,
            attacks=resolve_attacks(
                request.attacks, setup=inputs.setup.kind, generator=request.generator, params=params
            ),
        ),
        targets=selection,
        threshold=request.threshold,
        seed=request.seed,
        setup=inputs.setup,
        screen=ScreenSettings.for_setup(
            inputs.setup.kind,
            request.screen,
            confirm_top=request.confirm_top,
            shadows=request.screen_shadows,
        ),
        inference=InferenceSettings(
            secrets=(request.secrets,) if isinstance(request.secrets, str) else tuple(request.secrets),
            threshold=(
                DEFAULT_INFERENCE_THRESHOLD
                if request.inference_threshold is None
                else request.inference_threshold
            ),
        ),
    ).validate()
    return PreparedRequest(spec, inputs, dataset, dropped)


def attacker_and_games(setup: str, attacker: str | None, games: str | None) -> tuple[str, str]:
    """The attacker and games of a run: the set-up's default attacker (the release is judged
    against the leave-one-out attacker, the paper set-up keeps the paper's), and both games
    unless the attacker is leave-one-out, which plays the model-seeded game only."""
    from privgame.games.threat import default_games

    attacker = attacker or DEFAULT_ATTACKER.get(setup, "population")
    return attacker, games or default_games(attacker)


def _selection(request: AuditRequest) -> TargetSelection:
    from privgame.settings.run_spec import parse_ids

    plan_given = request.outliers is not None or request.random is not None
    other = request.all_targets or bool(request.target_ids) or request.targets is not None
    if plan_given and other:
        raise ParameterError(
            "--outliers/--random (the audit plan) and --targets/--target-ids/--all-targets choose the "
            "records in two different ways; give one of them."
        )
    if request.all_targets:
        return TargetSelection(mode="all", k=None)
    if request.target_ids:
        return TargetSelection(mode="ids", k=None, ids=parse_ids([str(i) for i in request.target_ids]))
    if request.targets is not None:
        return TargetSelection(mode=request.target_selection, k=request.targets)
    return TargetSelection.plan(
        outliers=DEFAULT_OUTLIERS if request.outliers is None else request.outliers,
        random=DEFAULT_RANDOM if request.random is None else request.random,
    )


def _inputs(request: AuditRequest, dataset: Dataset, dropped: dict[str, int]) -> AuditInputs:
    """The set-up's table, schema, sizes and set-up."""
    from privgame.data.duplicates import drop_duplicate_rows
    from privgame.settings.setups import load_population, paper_inputs, release_inputs

    if request.setup == "paper":
        misplaced = [
            flag
            for flag, value in (
                ("--population", request.population),
                ("--holdout", request.holdout),
                ("--shadow-size", request.shadow_size),
            )
            if value is not None
        ]
        if misplaced:
            raise ParameterError(
                f"{', '.join(misplaced)} apply to the release set-up only; remove them, or drop "
                "--setup paper."
            )
        return paper_inputs(dataset, size=request.size, aux=request.aux_size, eval_size=request.eval_size)
    misplaced = [
        f for f, v in (("--size", request.size), ("--eval-size", request.eval_size)) if v is not None
    ]
    if request.population is not None and request.holdout is not None:
        misplaced.append("--holdout (a --population table is given, so nothing is held back)")
    if misplaced:
        raise ParameterError(
            "Some options do not apply to the release set-up, where D is the whole table the release "
            "is trained on.",
            [f"{flag}: remove it (or use --setup paper for the paper's sizes)." for flag in misplaced],
        )
    population = None
    if request.population is not None:
        population = load_population(request.population, dataset, filename=request.population_name)
        if request.drop_duplicates:
            population, dropped["population"] = drop_duplicate_rows(population)
    return release_inputs(
        dataset,
        seed=request.seed,
        population=population,
        holdout=DEFAULT_HOLDOUT if request.holdout is None else request.holdout,
        aux_rows=request.aux_size,
        shadow_size=request.shadow_size,
    )


def members_of(inputs: AuditInputs, seed: int) -> np.ndarray:
    """The record ids of D for the set-up's ``inputs`` and ``seed``: D is a pure function of the
    set-up, its sizes and the seed, not of the records a face is about to choose among them."""
    from privgame.games.plan import run_split

    spec = RunSpec(
        data_name="",
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=dict(inputs.sizes),
        generator="marginals",
        setup=inputs.setup,
        seed=seed,
    )
    return run_split(spec, len(inputs.table)).target
