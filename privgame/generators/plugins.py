"""Generators privgame does not ship: plug-ins named ``module.path:ClassName`` or by an entry point.

A plug-in is any class with the protocol of :class:`~privgame.generators.base.SyntheticGenerator`
(subclassing it is optional): a constructor taking the generator's parameters as keywords,
``fit(X, schema, *, rng)`` returning the generator itself, and ``sample(n, *, rng)`` returning a
numeric array of shape ``(n, len(schema.used))`` in the encoding of :mod:`privgame.data.encoding`.
Optional class attributes ``label``, ``deterministic_fit`` and ``leaks_training_data`` default to
the class name, False and False.

A plug-in is named either ``module.path:ClassName`` (the module must be importable, in worker
processes too) or by the name of an entry point in the group ``privgame.generators``::

    [project.entry-points."privgame.generators"]
    noisy = "mypkg.gens:NoisyCopy"

:func:`check_contract` runs a plug-in once on a small slice of data and reports, all together,
everything privgame relies on that it does not do.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Self

import numpy as np

from privgame.core.defaults import PLUGIN_TIME_LIMIT_SECONDS
from privgame.core.defaults import PLUGIN_TIME_LIMIT_SETTING as TIME_LIMIT_SETTING
from privgame.core.errors import GeneratorContractError, ParameterError, PrivgameError
from privgame.core.seeding import stream
from privgame.data.schema import CATEGORICAL, Schema
from privgame.generators.base import SyntheticGenerator
from privgame.generators.external import ExternalCommand
from privgame.generators.registry import GENERATORS

__all__ = [
    "ENTRY_POINT_GROUP",
    "ContractReport",
    "PluginGenerator",
    "check_contract",
    "installed_plugins",
    "plugin_time_limit",
    "resolve",
]

ENTRY_POINT_GROUP = "privgame.generators"
EXTERNAL = ExternalCommand.name
"""The name of the generator that runs an external command (taken before any entry point's)."""
CONTRACT_ROWS = 200
# Entry-point names resolved so far: the engine creates a generator for every fit, and reading
# every installed package's metadata each time would cost more than a small fit.
_resolved: dict[str, type] = {}


def _read_entry_points() -> Iterable[importlib.metadata.EntryPoint]:
    """The entry points of the group (the one place that reads installed metadata)."""
    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def installed_plugins() -> dict[str, str]:
    """Plug-ins registered by installed packages, without importing them.

    Returns
    -------
    dict of str to str
        Entry-point name -> ``"module:Class"``. Malformed entry points are skipped, and unreadable
        package metadata gives an empty dict, so listing plug-ins never fails.
    """
    try:
        points = list(_read_entry_points())
    except Exception:  # broken metadata of some unrelated package must not stop privgame
        return {}
    found: dict[str, str] = {}
    for point in points:
        try:
            module, attr = point.module, point.attr
        except Exception:  # a value that is not "module:attr" at all
            continue
        if module and attr:  # a bare module names no generator class
            found.setdefault(point.name, f"{module}:{attr}")
    return found


def _import_class(target: str, *, via: str) -> type:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ParameterError(
            f"{via} is not a plug-in name; write it as module.path:ClassName, e.g. mypkg.gens:NoisyCopy."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ParameterError(
            f"{via}: module {module_name!r} cannot be imported ({exc}); install it, or run "
            "`python -m privgame` from the folder that holds it (or add that folder to PYTHONPATH)."
        ) from None
    except Exception as exc:  # the module's own code failed while importing
        raise ParameterError(
            f"{via}: importing module {module_name!r} failed ({type(exc).__name__}: {exc}); fix that module."
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ParameterError(
                f"{via}: module {module_name!r} has no class {attr!r}; check the spelling of the class name."
            )
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise ParameterError(
            f"{via}: {target} is a {type(obj).__name__}, not a class; name the generator class itself."
        )
    return obj


def _method_problems(cls: type) -> list[str]:
    return [
        f"{cls.__name__} has no callable {method}() method; add {signature}."
        for method, signature in (
            ("fit", "def fit(self, X, schema, *, rng) -> Self that ends with `return self`"),
            ("sample", "def sample(self, n, *, rng) -> np.ndarray"),
        )
        if not callable(getattr(cls, method, None))
    ]


def resolve(name: str) -> type:
    """The generator class called ``name``.

    Built-in names come first, then ``"external"`` (a command run in another environment, see
    :mod:`privgame.generators.external`), then ``module.path:ClassName``, then entry points of the
    group ``privgame.generators``.

    Parameters
    ----------
    name : str
        A built-in name (``"synthpop"``), ``"external"``, ``"module.path:ClassName"`` or an
        entry-point name.

    Returns
    -------
    type
        The class; a plug-in class need not subclass :class:`SyntheticGenerator`.

    Raises
    ------
    ParameterError
        For an unknown name, a module that cannot be imported, or a missing class.
    GeneratorContractError
        For a class without callable ``fit`` and ``sample`` methods.
    """
    if name in GENERATORS:
        return GENERATORS[name]
    if name == EXTERNAL:
        return ExternalCommand
    if ":" in name:
        cls = _import_class(name, via=f"Generator {name!r}")
    elif name in _resolved:
        return _resolved[name]
    else:
        plugins = installed_plugins()
        if name not in plugins:
            installed = ", ".join(sorted(plugins)) or "none installed"
            raise ParameterError(
                f"Unknown generator {name!r}; choose one of {', '.join(GENERATORS)}, an installed plug-in "
                f"({installed}), a plug-in class named module.path:ClassName, or {EXTERNAL} (a "
                "command run in another environment)."
            )
        cls = _import_class(plugins[name], via=f"Generator {name!r} (entry point {plugins[name]})")
    problems = _method_problems(cls)
    if problems:
        raise GeneratorContractError(f"Generator {name!r} does not follow the generator protocol.", problems)
    if ":" not in name:
        _resolved[name] = cls
    return cls


def plugin_time_limit() -> float:
    """The limit on one plug-in call in this process: ``$PRIVGAME_PLUGIN_TIME_LIMIT`` seconds, else
    :data:`PLUGIN_TIME_LIMIT_SECONDS`.

    Raises
    ------
    ParameterError
        For a setting that is not a positive number of seconds.
    """
    text = os.environ.get(TIME_LIMIT_SETTING, "").strip()
    if not text:
        return PLUGIN_TIME_LIMIT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ParameterError(
            f"{TIME_LIMIT_SETTING}={text!r} is not a time limit; give a positive number of seconds "
            f"(--plugin-time-limit on the command line), or unset it for {PLUGIN_TIME_LIMIT_SECONDS:.0f} s."
        )
    return seconds


class _TimedOut(BaseException):
    """Raised into a plug-in call by the alarm; a BaseException so that plug-in code catching
    ``Exception`` cannot swallow it."""


class _OverTime(GeneratorContractError):
    """A plug-in call ran over the time limit."""


def _over_time(name: str, what: str, limit: float) -> GeneratorContractError:
    return _OverTime(
        f"The plug-in generator {name} took longer than the limit of {limit:g} s in one call of "
        f"{what}(), so the run stops here. Make the plug-in faster or fix what it waits for, or give "
        f"it more time with --plugin-time-limit SECONDS (or ${TIME_LIMIT_SETTING}), then resume the run."
    )


@contextlib.contextmanager
def _time_limit(name: str, what: str, limit: float) -> Iterator[None]:
    """Stop the call after ``limit`` seconds.

    On the main thread of a process (the engine's worker processes, and a run in one process) a
    real-time alarm interrupts the call, even one that sleeps or waits; elsewhere (a Dask worker's
    threads, where signals cannot be delivered) the limit is checked when the call returns.
    """
    started = time.perf_counter()
    alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if alarm:

        def stop(signum: int, frame: Any) -> None:
            raise _TimedOut

        previous = signal.signal(signal.SIGALRM, stop) or signal.SIG_DFL
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        try:
            yield
        finally:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimedOut:  # also when the alarm rang just as the call returned
        raise _over_time(name, what, limit) from None
    finally:
        if alarm:
            signal.signal(signal.SIGALRM, previous)
    if time.perf_counter() - started > limit:
        raise _over_time(name, what, limit)


@contextlib.contextmanager
def _plugin_call(name: str, what: str, limit: float) -> Iterator[None]:
    """Run plug-in code: its prints go to stderr (stdout carries privgame's output, JSON
    included), a call longer than ``limit`` seconds is stopped, and its failures become a
    :class:`GeneratorContractError` naming the plug-in, with ``sys.exit`` among them (a plug-in
    must never end the engine, least of all with success).
    """
    try:
        with _time_limit(name, what, limit), contextlib.redirect_stdout(sys.stderr):
            yield
    except GeneratorContractError:
        raise
    except SystemExit as exc:
        raise GeneratorContractError(
            f"The plug-in generator {name} called sys.exit({exc.code!r}) in {what}(); a generator must "
            "return its result or raise an exception, never end the process. Fix the plug-in and "
            "resume the run."
        ) from None
    except Exception as exc:  # plug-in code: any failure is the plug-in's, named as such
        raise GeneratorContractError(
            f"The plug-in generator {name} failed in {what}(): {type(exc).__name__}: {exc}. Fix the "
            "plug-in (privgame.generators.check_contract lists what it breaks) and resume the run."
        ) from exc


def _label(cls: type) -> str:
    return str(getattr(cls, "label", "") or cls.__name__)


class PluginGenerator(SyntheticGenerator):
    """A plug-in generator behind the engine's interface and its guards.

    :func:`privgame.generators.create` wraps every plug-in in this class, whether or not it
    subclasses :class:`SyntheticGenerator`, so the engine can call ``fit_sample``, ``metadata``
    and ``get_params`` on every generator alike, and so that every output of a plug-in is checked,
    every call is held to the time limit (:func:`plugin_time_limit`) and its prints stay off
    privgame's stdout.

    Parameters
    ----------
    plugin : object
        The plug-in instance.
    name : str
        The name it was created under (``"mypkg.gens:NoisyCopy"`` or an entry-point name).
    """

    def __init__(self, plugin: Any, *, name: str) -> None:
        cls = type(plugin)
        self._plugin = plugin
        # Instance attributes shadow the class defaults: the engine reads them off the instance.
        self.name = name  # type: ignore[misc]
        self.label = _label(cls)  # type: ignore[misc]
        self.deterministic_fit = bool(getattr(cls, "deterministic_fit", False))  # type: ignore[misc]
        self.leaks_training_data = bool(getattr(cls, "leaks_training_data", False))  # type: ignore[misc]
        self._time_limit = plugin_time_limit()

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        with _plugin_call(self.name, "fit", self._time_limit):
            self._plugin.fit(X, schema, rng=rng)
        self._schema = schema
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """The plug-in's sample, checked on every call (shape, finite numbers, codes in range,
        values within the schema's bounds): a bad output never reaches the attack or a release.

        Raises
        ------
        GeneratorContractError
            Naming the plug-in and every check its output failed.
        """
        with _plugin_call(self.name, "sample", self._time_limit):
            out = self._plugin.sample(n, rng=rng)
        schema = getattr(self, "_schema", None)
        problems = _output_problems(out, n, schema) if schema is not None else []
        if problems:
            raise GeneratorContractError(
                f"The plug-in generator {self.name} returned output privgame cannot use, so the run "
                "stops here (nothing of it can be released); fix the plug-in and resume the run.",
                problems,
            )
        return np.asarray(out, dtype=np.float64)

    @property
    def metadata(self) -> dict[str, Any]:
        """The plug-in's own ``metadata`` when it subclasses :class:`SyntheticGenerator`."""
        if isinstance(self._plugin, SyntheticGenerator):
            with _plugin_call(self.name, "metadata", self._time_limit):
                return {**dict(self._plugin.metadata), "generator": self.name}
        return super().metadata

    def get_params(self) -> dict[str, Any]:
        """The plug-in's ``get_params()`` if it has one, else its public non-fitted attributes."""
        if callable(getattr(self._plugin, "get_params", None)):
            return dict(self._plugin.get_params())
        return {k: v for k, v in vars(self._plugin).items() if not k.endswith("_") and not k.startswith("_")}

    def __repr__(self) -> str:
        return f"PluginGenerator({self._plugin!r}, name={self.name!r})"


@dataclass(frozen=True)
class ContractReport:
    """What :func:`check_contract` measured on a generator that meets the contract.

    Attributes
    ----------
    name : str
        The generator's name (``module:Class`` for a class passed directly).
    fit_seconds : float
        Time of one fit on ``rows`` rows.
    sample_seconds : float
        Time of one sample of ``rows`` rows.
    rows : int
        Training rows used (and rows sampled).
    deterministic_fit : bool
        The class's declaration (False when it declares nothing).
    """

    name: str
    fit_seconds: float
    sample_seconds: float
    rows: int
    deterministic_fit: bool


class _Findings(list[str]):
    """The problems :func:`check_contract` found, and the lines of another program's output that
    some of them introduce (an external command's last lines of stderr, from its first failure)."""

    def __init__(self, problems: Iterable[str] = ()) -> None:
        super().__init__(problems)
        self.quoted: list[str] = []
        self.block: tuple[int, int] | None = None  # the problems that introduce the quoted lines

    def quote(self, start: int, lines: list[str]) -> None:
        """Keep ``lines``, introduced by the problems from index ``start`` to the end."""
        self.block, self.quoted = (start, len(self)), list(lines)

    def error(self, summary: str) -> GeneratorContractError:
        """The error listing every problem, those that introduce the quoted lines last."""
        if self.block is None:
            return GeneratorContractError(summary, self)
        start, stop = self.block
        return GeneratorContractError(
            summary, [*self[:start], *self[stop:], *self[start:stop]], quoted=self.quoted
        )


def _call(problems: list[str], what: str, fix: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, or None with a problem recorded when it raises, calls
    ``sys.exit`` or runs over the time limit (its prints go to stderr).

    An error that quotes another program's output (:attr:`PrivgameError.quoted`) is recorded with
    its own problems, and its lines kept as lines, when ``problems`` can keep them (a
    :class:`_Findings` that keeps none yet); else by its summary only.
    """
    limit = plugin_time_limit()
    try:
        with _time_limit("", what, limit), contextlib.redirect_stdout(sys.stderr):
            return function(*args, **kwargs)
    except _OverTime:
        problems.append(
            f"{what} took longer than the limit of {limit:g} s; {fix}, or allow more time with "
            "--plugin-time-limit SECONDS."
        )
        return None
    except SystemExit as exc:
        problems.append(
            f"{what} called sys.exit({exc.code!r}); raise an exception instead, never end the process."
        )
        return None
    except Exception as exc:  # any failure of plug-in code is a finding, not a crash
        if not (isinstance(exc, PrivgameError) and exc.quoted):
            problems.append(f"{what} raised {type(exc).__name__}: {exc}; {fix}.")
            return None
        start = len(problems)
        problems.append(f"{what} raised {type(exc).__name__}: {exc.summary}")
        if isinstance(problems, _Findings) and problems.block is None:
            problems += exc.problems
            problems.quote(start, exc.quoted)
        return None


def _class_problems(cls: Any, name: str) -> list[str]:
    """What makes ``cls`` unusable before any of its code runs."""
    if not isinstance(cls, type):
        return [f"{name} is a {type(cls).__name__}, not a class; name the generator class itself."]
    problems = _method_problems(cls)
    for flag in ("deterministic_fit", "leaks_training_data"):
        value = getattr(cls, flag, False)
        if not isinstance(value, bool):
            problems.append(f"the class attribute {flag} must be True or False, not {value!r}.")
    return problems


def _same(a: Any, b: Any) -> bool:
    """Whether two outputs are equal, value for value (NaN equal to NaN)."""
    try:
        return bool(
            np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True)
        )
    except (TypeError, ValueError):
        return True  # output that is not numbers is reported on its own; nothing to compare


def _output_problems(out: Any, n: int, schema: Schema) -> list[str]:
    """Everything wrong with ``sample(n)``'s output ``out``."""
    problems: list[str] = []
    if not isinstance(out, np.ndarray):
        problems.append(
            f"sample() returned a {type(out).__name__}, not a numpy array; return "
            "np.asarray(rows, dtype=np.float64)."
        )
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError):
            return problems
    used = schema.used
    if out.shape != (n, len(used)):
        problems.append(
            f"sample({n}) returned shape {out.shape}, expected ({n}, {len(used)}): one row per requested "
            "row and one column per used column of the schema, in schema order."
        )
        return problems
    if out.dtype.kind not in "iuf":
        problems.append(f"sample() returned dtype {out.dtype}; return numbers (float64 as in the encoding).")
        return problems
    if not np.isfinite(out).all():
        problems.append("sample() returned NaN or infinite values; every value must be a finite number.")
        return problems
    for j, col in enumerate(used):
        values = out[:, j]
        if col.role == CATEGORICAL:
            k = len(col.categories or ())
            if not (
                np.array_equal(values, np.round(values))
                and values.min(initial=0) >= 0
                and values.max(initial=0) < k
            ):
                problems.append(
                    f"column {col.name!r} is categorical: sample() must return integer codes 0..{k - 1} "
                    "(indices into the schema's categories), as the training array holds."
                )
        elif (col.lower is not None and values.min(initial=col.lower) < col.lower) or (
            col.upper is not None and values.max(initial=col.upper) > col.upper
        ):
            problems.append(
                f"column {col.name!r} has values outside its domain [{col.lower}, {col.upper}]; "
                "clip continuous output to the schema's bounds."
            )
    return problems


def _refit_problems(
    cls: type, params: Mapping[str, Any], generator: Any, train: np.ndarray, schema: Schema, n: int, seed: int
) -> list[str]:
    """What an optional ``refit_swap`` gets wrong: its refit of row 0 swapped for row 1 must give
    what a fresh fit on the swapped rows gives with the same rng, and leave the fitted model as it
    was (the engine refits from one model on D hundreds of times)."""
    problems: list[str] = []
    before = generator.sample(n, rng=stream(seed, 5))
    swapped = train.copy()
    swapped[0] = train[1]
    fresh = _call(problems, "fit()", "fix fit", cls(**params).fit, swapped, schema, rng=stream(seed, 6))
    refit = _call(
        problems,
        "refit_swap()",
        "fix refit_swap",
        generator.refit_swap,
        0,
        train[1].copy(),
        rng=stream(seed, 6),
    )
    if problems or fresh is None or refit is None:
        return problems
    expected = _call(problems, "sample()", "fix sample", fresh.sample, n, rng=stream(seed, 7))
    got = _call(
        problems, "sample() of the refitted model", "fix refit_swap", refit.sample, n, rng=stream(seed, 7)
    )
    if expected is not None and got is not None and not _same(expected, got):
        problems.append(
            "refit_swap(position, row, rng=...) did not give what fit() gives on the rows with that row "
            "replaced; make it an exact refit, or remove refit_swap (the engine then fits afresh)."
        )
    if not _same(before, generator.sample(n, rng=stream(seed, 5))):
        problems.append(
            "refit_swap() changed the fitted model; return a new model and leave this one as it is."
        )
    return problems


def check_contract(
    name_or_cls: str | type,
    X: np.ndarray,
    schema: Schema,
    *,
    params: Mapping[str, Any] | None = None,
    rows: int | None = None,
    seed: int = 0,
) -> ContractReport:
    """Run a generator once on a slice of ``X`` and check everything the engine relies on.

    The checks: the constructor takes ``params``; ``fit`` returns the generator itself and leaves
    ``X`` unchanged; ``sample(n, rng=...)`` returns a numpy array of shape ``(n, d)``, ``d`` the
    number of used columns, of finite numbers, with integer codes inside the domain of every
    categorical column and values inside the bounds of every continuous one; equal seeds give equal
    output; a declared ``deterministic_fit = True`` holds (the fitted model ignores fit's rng); and
    an optional ``refit_swap`` is an exact one-row refit that leaves the fitted model unchanged.

    Parameters
    ----------
    name_or_cls : str or type
        A generator name (see :func:`resolve`) or the class itself.
    X : ndarray of shape (n_rows, len(schema.used))
        Encoded training rows (see :func:`privgame.data.encode`).
    schema : Schema
        Their schema.
    params : mapping, optional
        Keyword arguments for the constructor.
    rows : int, optional
        Training rows to fit on, and rows to sample; default ``min(200, len(X))``.
    seed : int, default 0
        Root seed of the streams handed to ``fit`` and ``sample``.

    Returns
    -------
    ContractReport

    Raises
    ------
    ParameterError
        When the name cannot be resolved, or ``X`` does not fit ``schema``.
    GeneratorContractError
        Listing every part of the contract the generator breaks, each with its fix.
    """
    if isinstance(name_or_cls, str):
        name, cls = name_or_cls, resolve(name_or_cls)
    else:
        cls = name_or_cls
        name = f"{getattr(cls, '__module__', '?')}:{getattr(cls, '__qualname__', repr(cls))}"
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != len(schema.used) or len(X) == 0:
        raise ParameterError(
            f"X has shape {X.shape}; the contract check needs rows with {len(schema.used)} columns, the "
            "schema's used columns (see privgame.data.encode)."
        )
    n = min(len(X), CONTRACT_ROWS if rows is None else max(1, int(rows)))
    train = np.array(X[:n], copy=True)
    params = dict(params or {})
    summary = f"Generator {name!r} does not meet privgame's generator contract."
    problems = _Findings(_class_problems(cls, name))
    if problems:
        raise problems.error(summary)
    declared = bool(getattr(cls, "deterministic_fit", False))

    def fit_sample(fit_stream: int, sample_stream: int) -> Any:
        """A fresh fit + sample, or None (with the failure recorded) when either raises."""
        before = len(problems)
        fresh = _call(problems, "the constructor", "fix it", cls, **params)
        if len(problems) == before:
            _call(problems, "fit()", "fix fit", fresh.fit, train.copy(), schema, rng=stream(seed, fit_stream))
        if len(problems) == before:
            return _call(problems, "sample()", "fix sample", fresh.sample, n, rng=stream(seed, sample_stream))
        return None

    generator = _call(
        problems,
        f"{cls.__name__}(**{params!r})",
        "make the constructor accept these keyword arguments",
        cls,
        **params,
    )
    if generator is None:
        raise problems.error(summary)
    started = time.perf_counter()
    fitted = _call(problems, "fit()", "fix fit", generator.fit, train, schema, rng=stream(seed, 0))
    fit_seconds = time.perf_counter() - started
    if problems:
        raise problems.error(summary)
    if fitted is not generator:
        problems.append(
            f"fit() returned {type(fitted).__name__}, not the generator; end fit with `return self` "
            "(the engine calls generator.fit(...).sample(...))."
        )
    if not np.array_equal(train, X[:n]):
        problems.append("fit() changed its input X in place; work on a copy (X.copy()).")
    before = len(problems)
    started = time.perf_counter()
    first = _call(problems, "sample()", "fix sample", generator.sample, n, rng=stream(seed, 1))
    sample_seconds = time.perf_counter() - started
    if len(problems) > before:
        raise problems.error(summary)
    problems += _output_problems(first, n, schema)
    one = _call(problems, "sample(1)", "fix sample", generator.sample, 1, rng=stream(seed, 2))
    if (
        one is not None
        and np.shape(one) != (1, len(schema.used))
        and np.shape(first) == (n, len(schema.used))
    ):
        problems.append(
            f"sample(1) returned shape {np.shape(one)}, expected (1, {len(schema.used)}); return as many "
            "rows as asked for."
        )
    again = fit_sample(0, 1)
    if again is not None and not _same(first, again):
        problems.append(
            "the same seed gave different output; draw every random number from the rng argument of fit "
            "and sample, never from np.random.* functions, the random module or an unseeded generator."
        )
    refit = fit_sample(3, 1) if again is not None and declared and _same(first, again) else None
    if refit is not None and not _same(first, refit):
        problems.append(
            "deterministic_fit is True but the fitted model depends on fit's rng; set "
            "deterministic_fit = False, or make fit ignore its rng."
        )
    if not problems and callable(getattr(generator, "refit_swap", None)) and n >= 2:
        problems += _refit_problems(cls, params, generator, train, schema, n, seed)
    if problems:
        raise problems.error(summary)
    return ContractReport(
        name=name, fit_seconds=fit_seconds, sample_seconds=sample_seconds, rows=n, deterministic_fit=declared
    )
