"""Plug-in generators: names, loading, the contract check, and the places that accept their names.

``tests`` has no ``__init__.py``, so ``tests.generators.plugin_example`` is importable only with the
repository root on ``sys.path``; the ``importable`` fixture puts it there, as ``python -m privgame``
does for the current folder.
"""

from __future__ import annotations

import argparse
import re
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd
import pytest

from privgame.cli.commands._arguments import add_generator_options, generator_params
from privgame.core.errors import GeneratorContractError, ParameterError, RunError
from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, encode, load_dataset
from privgame.data.schema import Schema
from privgame.games.preflight import create_run
from privgame.generators import (
    ContractReport,
    SyntheticGenerator,
    available,
    check_contract,
    create,
    installed_plugins,
    is_known,
    plugins,
    resolve,
)
from privgame.generators.marginals import MarginalsGenerator
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import new_run_folder, open_run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "tests.generators.plugin_example:IndependentBootstrap"


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema]:
    dataset = load_dataset(BUNDLED_ADULT)
    return encode(dataset.table.iloc[:300], dataset.schema), dataset.schema


@pytest.fixture
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))


def _use_entry_points(monkeypatch: pytest.MonkeyPatch, points: dict[str, str]) -> None:
    eps = [EntryPoint(name=k, value=v, group=plugins.ENTRY_POINT_GROUP) for k, v in points.items()]
    monkeypatch.setattr(plugins, "_read_entry_points", lambda: eps)
    monkeypatch.setattr(plugins, "_resolved", {})


# Names


@pytest.mark.usefixtures("importable")
def test_resolve_finds_built_ins_module_classes_and_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.generators.plugin_example import IndependentBootstrap

    assert resolve("marginals") is MarginalsGenerator
    assert resolve(EXAMPLE) is IndependentBootstrap
    assert resolve("privgame.generators.marginals:MarginalsGenerator") is MarginalsGenerator
    _use_entry_points(monkeypatch, {"bootstrap": EXAMPLE, "marginals": "nowhere:Nothing"})
    assert resolve("bootstrap") is IndependentBootstrap
    assert resolve("marginals") is MarginalsGenerator, "built-in names come first"
    assert is_known("bootstrap") and is_known(EXAMPLE) and is_known("synthpop")
    assert not is_known("gan") and not is_known("no_such_module_xyz:Gen")
    assert available() == ["synthpop", "baynet", "privbayes", "mst", "marginals", "identity"]


def test_installed_plugins_skips_broken_entry_points_and_never_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _use_entry_points(monkeypatch, {"good": "pkg.mod:Gen", "bare": "pkg.mod", "broken": "not valid!!"})
    assert installed_plugins() == {"good": "pkg.mod:Gen"}

    def unreadable() -> list[EntryPoint]:
        raise OSError("corrupt metadata")

    monkeypatch.setattr(plugins, "_read_entry_points", unreadable)
    assert installed_plugins() == {}


@pytest.mark.usefixtures("importable")
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("gan", r"Unknown generator 'gan'; choose one of synthpop, .*identity, an installed plug-in \(ext\)"),
        ("no_such_module_xyz:Gen", r"module 'no_such_module_xyz' cannot be imported \(No module named"),
        ("tests.generators.plugin_example:Nope", r"has no class 'Nope'; check the spelling"),
        ("tests.generators.plugin_example:np", r"is a module, not a class; name the generator class"),
        ("numpy:ndarray", r"ndarray has no callable fit\(\) method; add def fit"),
        (":Gen", r"write it as module.path:ClassName"),
        ("ext", r"Generator 'ext' \(entry point pkg_missing_xyz:Gen\): module 'pkg_missing_xyz' cannot"),
    ],
)
def test_resolve_errors_name_the_problem_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, name: str, message: str
) -> None:
    _use_entry_points(monkeypatch, {"ext": "pkg_missing_xyz:Gen"})
    with pytest.raises(ParameterError, match=message):
        resolve(name)
    with pytest.raises(ParameterError, match=message):
        create(name)


@pytest.mark.usefixtures("importable")
def test_create_builds_plug_ins_with_the_engine_interface(adult: tuple[np.ndarray, Schema]) -> None:
    X, schema = adult
    generator = create(EXAMPLE, jitter=0.2)
    assert isinstance(generator, SyntheticGenerator)
    assert generator.name == EXAMPLE and generator.deterministic_fit and not generator.leaks_training_data
    assert generator.label == "Independent bootstrap (example plug-in)"
    assert generator.metadata == {"generator": EXAMPLE, "params": {"jitter": 0.2}}
    first = generator.fit_sample(X, schema, 50, rng=stream(1, 0))
    rng = stream(1, 0)
    again = create(EXAMPLE, jitter=0.2).fit(X, schema, rng=rng).sample(50, rng=rng)
    assert first.shape == (50, X.shape[1]) and first.dtype == np.float64
    assert np.array_equal(first, again)
    assert isinstance(create("privgame.generators.marginals:MarginalsGenerator"), MarginalsGenerator)
    bad = rf"Bad parameters for generator {re.escape(repr(EXAMPLE))}: .*smoothing"
    with pytest.raises(ParameterError, match=bad):
        create(EXAMPLE, smoothing=1)


# The contract


@pytest.mark.parametrize("name", available())
def test_every_built_in_generator_meets_the_contract(adult: tuple[np.ndarray, Schema], name: str) -> None:
    X, schema = adult
    report = check_contract(name, X, schema, rows=120)
    assert report.name == name and report.rows == 120
    assert report.deterministic_fit == create(name).deterministic_fit


class _StaleRefit(MarginalsGenerator):
    """A plug-in whose refit_swap forgets the swap: it refits the rows it already has."""

    def refit_swap(self, position: int, row: np.ndarray, *, rng: np.random.Generator) -> Any:
        return type(self)(**self.get_params()).fit(self.rows_, self.schema_, rng=rng)

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        self.rows_ = np.array(X, copy=True)
        return super().fit(X, schema, rng=rng)


class _MutatingRefit(_StaleRefit):
    """A plug-in whose refit_swap is exact but swaps the row in its own training rows."""

    def refit_swap(self, position: int, row: np.ndarray, *, rng: np.random.Generator) -> Any:
        self.rows_[position] = row
        self.fit(self.rows_, self.schema_, rng=rng)
        return self


def test_a_refit_swap_that_is_not_an_exact_refit_breaks_the_contract(
    adult: tuple[np.ndarray, Schema],
) -> None:
    X, schema = adult
    rows = X[:120].copy()
    rows[1] = X[-1]  # row 1, swapped in for row 0, differs from it
    with pytest.raises(GeneratorContractError) as caught:
        check_contract(_StaleRefit, rows, schema, rows=120)
    assert any("did not give what fit() gives" in p for p in caught.value.problems)
    with pytest.raises(GeneratorContractError) as caught:
        check_contract(_MutatingRefit, rows, schema, rows=120)
    assert any("refit_swap() changed the fitted model" in p for p in caught.value.problems)


@pytest.mark.usefixtures("importable")
def test_the_example_plug_in_meets_the_contract(adult: tuple[np.ndarray, Schema]) -> None:
    X, schema = adult
    report = check_contract(EXAMPLE, X, schema, params={"jitter": 0.3})
    assert isinstance(report, ContractReport)
    assert (report.name, report.rows, report.deterministic_fit) == (EXAMPLE, 200, True)
    assert report.fit_seconds >= 0 and report.sample_seconds >= 0


class _Base:
    """A correct plug-in (a column bootstrap); the broken ones below each change one thing."""

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        self.X_ = np.array(X, dtype=np.float64)
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        return self.X_[rng.integers(0, len(self.X_), size=n)]


class NoSample:
    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        return self


class WrongShape(_Base):
    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        return super().sample(n, rng=rng)[:, 1:]


class ReturnsList(_Base):
    def sample(self, n: int, *, rng: np.random.Generator) -> Any:
        return super().sample(n, rng=rng).tolist()


class GlobalRandom(_Base):
    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        # Deliberately wrong: the global generator ignores the seed privgame hands over.
        return self.X_[np.random.randint(0, len(self.X_), size=n)]  # noqa: NPY002


class CodeOutOfRange(_Base):
    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        out = super().sample(n, rng=rng)
        out[0, 1] = 1000.0  # column 1 of Adult (workclass) is categorical with far fewer categories
        return out


class NoParams(_Base):
    def __init__(self) -> None:
        pass


class FitReturnsNoneAndNaN(_Base):
    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> None:  # type: ignore[override]
        super().fit(X, schema, rng=rng)

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        return np.full((n, self.X_.shape[1]), np.nan)


class FalselyDeterministicFit(_Base):
    deterministic_fit = True

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        self.X_ = np.array(X[rng.permutation(len(X))[: len(X) // 2]], dtype=np.float64)
        return self


class MutatesInput(_Base):
    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        X[0, 0] = -1.0
        return super().fit(X, schema, rng=rng)


class ContinuousOutOfBounds(_Base):
    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        out = super().sample(n, rng=rng)
        out[:, 0] += 1000.0  # column 0 of Adult (age) is continuous
        return out


@pytest.mark.parametrize(
    ("cls", "params", "faults"),
    [
        (NoSample, {}, [r"NoSample has no callable sample\(\) method; add def sample"]),
        (WrongShape, {}, [r"sample\(120\) returned shape \(120, 14\), expected \(120, 15\)"]),
        (ReturnsList, {}, [r"sample\(\) returned a list, not a numpy array; return np.asarray"]),
        (GlobalRandom, {}, [r"the same seed gave different output; draw every random number from the rng"]),
        (
            CodeOutOfRange,
            {},
            [r"column 'workclass' is categorical: sample\(\) must return integer codes 0\.\."],
        ),
        (
            NoParams,
            {"jitter": 1},
            [r"NoParams\(\*\*\{'jitter': 1\}\) raised TypeError: .*accept these keyword"],
        ),
        (
            FitReturnsNoneAndNaN,
            {},
            [r"fit\(\) returned NoneType, not the generator; end fit with `return self`", r"NaN or infinite"],
        ),
        (
            FalselyDeterministicFit,
            {},
            [r"deterministic_fit is True but the fitted model depends on fit's rng"],
        ),
        (MutatesInput, {}, [r"fit\(\) changed its input X in place"]),
        (ContinuousOutOfBounds, {}, [r"column 'age' has values outside its domain \[17\.0, 90\.0\]; clip"]),
    ],
)
def test_a_broken_plug_in_gets_every_fault_named(
    adult: tuple[np.ndarray, Schema], cls: type, params: dict[str, Any], faults: list[str]
) -> None:
    X, schema = adult
    with pytest.raises(GeneratorContractError, match="does not meet privgame's generator contract") as caught:
        check_contract(cls, X, schema, params=params, rows=120)
    assert caught.value.problems, "every fault is listed in problems"
    for fault in faults:
        assert any(re.search(fault, problem) for problem in caught.value.problems), (
            fault,
            caught.value.problems,
        )
    assert len(caught.value.problems) == len(faults), caught.value.problems


def test_the_contract_check_refuses_data_that_does_not_fit_the_schema(
    adult: tuple[np.ndarray, Schema],
) -> None:
    X, schema = adult
    with pytest.raises(
        ParameterError, match=r"X has shape \(300, 14\); the contract check needs rows with 15"
    ):
        check_contract("marginals", X[:, 1:], schema)


# The places that take generator names


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_generator_options(parser)
    return parser.parse_args(argv)


@pytest.mark.usefixtures("importable")
def test_generator_params_take_param_for_plug_ins_only() -> None:
    args = _args(
        "--generator", EXAMPLE, "--param", "jitter=0.5", "--param", "mode=fast", "--param", "n=[1, 2]"
    )
    assert generator_params(args) == {"jitter": 0.5, "mode": "fast", "n": [1, 2]}
    assert generator_params(_args("--generator", EXAMPLE)) == {}
    assert generator_params(_args("--generator", "privbayes", "--epsilon", "2")) == {"epsilon": 2.0}
    onehot = _args("--generator", "synthpop", "--min-leaf", "3", "--categorical-splits", "onehot")
    assert generator_params(onehot) == {"min_samples_leaf": 3, "categorical_splits": "onehot"}
    with pytest.raises(ParameterError, match="--categorical-splits does not apply to the baynet generator"):
        generator_params(_args("--generator", "baynet", "--categorical-splits", "ordinal"))
    with pytest.raises(ParameterError, match="Some generator options") as caught:
        generator_params(_args("--generator", EXAMPLE, "--degree", "2", "--min-leaf", "3", "--param", "x"))
    assert caught.value.problems == [
        "--min-leaf applies to built-in generators only; pass plug-in parameters as --param KEY=VALUE.",
        "--degree applies to built-in generators only; pass plug-in parameters as --param KEY=VALUE.",
        "--param 'x' is not KEY=VALUE with KEY a Python name; write e.g. --param jitter=0.1.",
    ]
    with pytest.raises(ParameterError, match="--param jitter is given twice"):
        generator_params(_args("--generator", EXAMPLE, "--param", "jitter=1", "--param", "jitter=2"))
    with pytest.raises(ParameterError) as caught:
        generator_params(_args("--generator", "baynet", "--param", "jitter=1"))
    assert caught.value.problems == [
        "--param applies to plug-in generators only; the baynet generator takes --degree, --bins."
    ]
    with pytest.raises(ParameterError, match="Unknown generator 'gan'"):
        generator_params(_args("--generator", "gan"))


def _spec(generator: str) -> RunSpec:
    return RunSpec(
        data_name="t.csv",
        data_fingerprint="abc",
        schema={"columns": [], "missing_policy": "drop"},
        sizes={"aux": 10, "eval": 10, "target": 5},
        generator=generator,
    )


@pytest.mark.parametrize(
    ("generator", "in_id"),
    [
        ("synthpop", "-synthpop-"),
        (EXAMPLE, "-plugin_independentbootstrap-"),
        ("my.pkg:Outer.Noisy-Copy", "-plugin_noisy_copy-"),
        ("My-Gen", "-plugin_my_gen-"),
        ("pkg:" + "X" * 80, "-plugin_" + "x" * 57 + "-"),
    ],
)
def test_a_plug_in_run_id_holds_a_safe_slug(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, generator: str, in_id: str
) -> None:
    _use_entry_points(monkeypatch, {"My-Gen": "pkg.mod:Gen"})
    folder = new_run_folder(tmp_path, _spec(generator), pd.DataFrame({"a": [1]}))
    assert in_id in folder.run_id
    assert open_run(tmp_path, folder.run_id).spec().generator == generator, "the spec keeps the full name"


def test_a_name_that_is_neither_registered_nor_a_plug_in_still_cannot_name_a_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _use_entry_points(monkeypatch, {})
    with pytest.raises(RunError, match="cannot name a run folder"):
        create_run(tmp_path, _spec("My-Gen"), pd.DataFrame({"a": [1]}))


# The docs' example


def test_the_docs_example_is_the_tested_plug_in() -> None:
    page = (ROOT / "docs" / "generators.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", page, flags=re.DOTALL | re.MULTILINE)
    assert len(blocks) == 1, "docs/generators.md has one python block: the example"
    assert blocks[0].encode() == (ROOT / "tests" / "generators" / "plugin_example.py").read_bytes()
