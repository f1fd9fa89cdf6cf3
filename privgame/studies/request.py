"""What a person asks of a study, and the one way it becomes a :class:`~privgame.studies.StudySpec`.

A :class:`StudyRequest` holds a study's settings as plain values, the same whether they came from
``python -m privgame study``'s flags (``privgame.cli.commands.study``) or from the dashboard's
Studies page; :func:`prepare_study` turns it into the validated spec. :func:`study_command` writes
the command line that asks for the same study, so the page can show it: the command line's parser
reads that command back into the same request (a test checks it).
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from privgame.core.defaults import (
    DEFAULT_DATASETS,
    DEFAULT_EPSILONS,
    DEFAULT_N_EVALS,
    DEFAULT_SIZES,
    EPSILON_GENERATORS,
)
from privgame.core.errors import ParameterError
from privgame.core.options import CLASSIFIER, GENERATOR_OPTIONS, N_EVAL, SEED, THRESHOLD
from privgame.core.parameters import parse_epsilon

if TYPE_CHECKING:
    from privgame.data import Dataset
    from privgame.data.splits import Sizes
    from privgame.studies.spec import StudySpec

__all__ = [
    "DEFAULT_REPEATS",
    "DEFAULT_RHO",
    "STUDY_N_SHADOW",
    "STUDY_TARGETS",
    "VARIED",
    "StudyRequest",
    "prepare_study",
    "read_count",
    "read_varied",
    "study_command",
]

STUDY_N_SHADOW = 200
"""A study's shadow datasets per record: fewer than an audit's, as in the paper's studies."""
STUDY_TARGETS: dict[str, int] = {"size": 20, "epsilon": 20, "convergence": 10}
"""The records each study follows by default (the datasets study follows one)."""
DEFAULT_REPEATS = 10
"""The convergence study's full evaluations per record."""
DEFAULT_RHO = 0.2
"""The convergence study's Hoeffding failure probability."""


def read_count(text: str) -> int:
    """A whole number from text (a study's ``--sizes``, ``--datasets`` or ``--n-evals`` value).

    Raises
    ------
    ParameterError
        For text that is not a whole number.
    """
    try:
        return int(str(text).strip())
    except ValueError:
        raise ParameterError(f"Give whole numbers, not {text!r}.") from None


VARIED: dict[str, tuple[str, str, Callable[[str], Any], bool]] = {
    "size": ("sizes", "Dataset sizes |D|", read_count, True),
    "epsilon": ("epsilons", "Privacy budgets ε (numbers, or inf for no noise)", parse_epsilon, True),
    "datasets": ("datasets", "Datasets drawn around the record", read_count, False),
    "convergence": ("n_evals", "Evaluation runs per game to compare", read_count, True),
}
"""What each study varies: the request's field (and the flag of that name), its label, how one
value is read from text (the command line reads each with it too), and whether it takes several."""


def read_varied(study: str, text: str) -> Any:
    """The values ``study`` varies, read from ``text`` (space-separated) as its flag reads them.

    Raises
    ------
    ParameterError
        For a value its reader refuses, or several values where the study takes one.
    """
    name, _, read, several = VARIED[study]
    values = [read(word) for word in str(text).split()]
    if several:
        return tuple(values)
    if len(values) != 1:
        raise ParameterError(f"--{name.replace('_', '-')} takes one value; got {len(values)}.")
    return values[0]


@dataclass(frozen=True, kw_only=True)
class StudyRequest:
    """A study's settings, as a person gives them (each field is the ``study`` flag of the same
    name, dashes for underscores; ``generator_params`` are the generator's own flags).

    Attributes
    ----------
    study : {"size", "epsilon", "datasets", "convergence"}
        Which study.
    generator, generator_params
        The generator and its parameters (the epsilon study: PrivBayes or MST, ``degree`` and
        ``bins`` only, since it varies ``epsilon`` itself).
    sizes, epsilons, datasets, n_evals, repeats, rho
        The values each study varies (only its own are read).
    size, aux_size, eval_size
        The split (None: scaled from the table as the paper's Adult set-up).
    targets, target_ids, target_selection, record_id
        The records followed (``targets`` None: the study's default).
    n_shadow, n_eval, classifier, attacker, threshold, seed
        The attack and the run's settings.
    """

    study: Literal["size", "epsilon", "datasets", "convergence"]
    generator: str = "synthpop"
    generator_params: Mapping[str, Any] = field(default_factory=dict)
    sizes: Sequence[int] = DEFAULT_SIZES
    epsilons: Sequence[float] = DEFAULT_EPSILONS
    datasets: int = DEFAULT_DATASETS
    n_evals: Sequence[int] = DEFAULT_N_EVALS
    repeats: int = DEFAULT_REPEATS
    rho: float = DEFAULT_RHO
    size: int | None = None
    aux_size: int | None = None
    eval_size: int | None = None
    targets: int | None = None
    target_ids: Sequence[int] = ()
    target_selection: Literal["random", "outliers"] = "random"
    record_id: int | None = None
    n_shadow: int = STUDY_N_SHADOW
    n_eval: int = N_EVAL.default
    classifier: str = CLASSIFIER.default
    attacker: str = "population"
    threshold: float = THRESHOLD.default
    seed: int = SEED.default


def _sizes(request: StudyRequest, n_rows: int, target: int) -> Sizes:
    from privgame.data.splits import Sizes, default_sizes

    base = default_sizes(n_rows)
    aux = base.aux if request.aux_size is None else request.aux_size
    if request.eval_size is not None:
        eval_size = request.eval_size
    else:
        eval_size = base.eval if request.aux_size is None else n_rows - aux
    return Sizes(aux=aux, eval=eval_size, target=target)


def prepare_study(request: StudyRequest, dataset: Dataset) -> StudySpec:
    """The validated study spec that ``request`` asks for, on ``dataset`` (the table as read, its
    public domain declared).

    Raises
    ------
    ParameterError
        Listing every problem of the request together.
    """
    from privgame.data.splits import default_sizes
    from privgame.games.threat import default_games
    from privgame.settings.generator_options import given_generator_params
    from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
    from privgame.studies.spec import StudySpec

    name = request.study
    if name == "epsilon" and "epsilon" in request.generator_params:
        raise ParameterError("The epsilon study varies epsilon itself; give the budgets as --epsilons.")
    params = given_generator_params(request.generator, dict(request.generator_params))
    n_rows = len(dataset.table)
    if name == "size":
        if not request.sizes:
            raise ParameterError("Give at least one dataset size with --sizes.")
        target = min(request.sizes)
    else:
        target = default_sizes(n_rows).target if request.size is None else request.size
    if name == "datasets":
        if request.record_id is not None:
            selection = TargetSelection(mode="ids", k=None, ids=(int(request.record_id),))
        else:
            selection = TargetSelection(mode=request.target_selection, k=1)
    elif request.target_ids:
        selection = TargetSelection(mode="ids", k=None, ids=tuple(int(i) for i in request.target_ids))
    else:
        k = STUDY_TARGETS[name] if request.targets is None else request.targets
        selection = TargetSelection(mode=request.target_selection, k=k)
    n_eval = max(request.n_evals) if name == "convergence" and request.n_evals else request.n_eval
    base = RunSpec(
        data_name=dataset.source_name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes=_sizes(request, n_rows, target).to_dict(),
        generator=request.generator,
        generator_params=params,
        attack=AttackSettings(
            n_shadow=request.n_shadow,
            n_eval=n_eval,
            classifier=request.classifier,
            attacker=request.attacker,
            games=default_games(request.attacker),
        ),
        targets=selection,
        threshold=request.threshold,
        seed=request.seed,
    )
    return StudySpec(
        study=name,
        base=base,
        sizes=tuple(request.sizes) if name == "size" else (),
        epsilons=tuple(request.epsilons) if name == "epsilon" else (),
        n_datasets=request.datasets if name == "datasets" else 0,
        n_evals=tuple(sorted(request.n_evals)) if name == "convergence" else (),
        repeats=request.repeats if name == "convergence" else 0,
        rho=request.rho if name == "convergence" else DEFAULT_RHO,
    ).validate()


_OWN_FIELDS = {
    "size": ("sizes",),
    "epsilon": ("epsilons", "size"),
    "datasets": ("datasets", "record_id", "size"),
    "convergence": ("n_evals", "repeats", "rho", "size"),
}
"""The fields only some studies take (the flags their sub-command has); the rest are shared."""
_SHARED_FIELDS = (
    "aux_size",
    "eval_size",
    "targets",
    "target_ids",
    "target_selection",
    "n_shadow",
    "n_eval",
    "classifier",
    "attacker",
    "threshold",
    "seed",
)


def _flag_values(value: Any) -> list[str]:
    values = value if isinstance(value, list | tuple) else [value]
    return [
        "inf" if isinstance(v, float) and math.isinf(v) else f"{v:g}" if isinstance(v, float) else str(v)
        for v in values
    ]


def study_command(request: StudyRequest, *, data: str, out: str) -> str:
    """The ``python -m privgame study`` command that asks for ``request`` on the table ``data``
    with its folder under ``out``: each setting that differs from the command's default, as its
    flag (a generator parameter as its declared flag, a plug-in's as ``--param KEY=VALUE``)."""
    default = StudyRequest(study=request.study, generator=request.generator)
    argv = [request.study]
    if request.generator != (EPSILON_GENERATORS[0] if request.study == "epsilon" else None):
        argv += ["--generator", request.generator]
    flags = {option.name: option.flag for options in GENERATOR_OPTIONS.values() for option in options}
    for key, value in request.generator_params.items():
        if key in flags and request.generator in GENERATOR_OPTIONS:
            argv += [flags[key], *_flag_values(value)]
        else:
            argv += ["--param", f"{key}={json.dumps(value)}"]
    names = [f.name for f in fields(StudyRequest)]
    taken = {*_OWN_FIELDS[request.study], *_SHARED_FIELDS}
    if request.study == "datasets":
        taken -= {"targets", "target_ids"}
    if request.study == "convergence":
        taken -= {"n_eval"}
    varied = VARIED[request.study][0]
    for name in names:
        value = getattr(request, name)
        if name not in taken or value is None or value == ():
            continue
        usual = STUDY_TARGETS.get(request.study) if name == "targets" else getattr(default, name)
        if name != varied and _same(value, usual):  # the varied values are always shown
            continue
        flag = "--" + name.replace("_", "-")
        argv += [flag, *_flag_values(value)]
    argv += ["--data", data, "--out", out]
    return "python -m privgame study " + " ".join(shlex.quote(a) for a in argv)


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, list | tuple) and isinstance(default, list | tuple):
        return list(value) == list(default)
    return bool(value == default)
