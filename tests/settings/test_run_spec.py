from __future__ import annotations

import math
from dataclasses import replace

import pytest
from builders import bare_spec

from privgame.core.errors import ParameterError
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection, parse_ids


def _spec(**kwargs: object) -> RunSpec:
    return bare_spec(
        **{"generator": "privbayes", "generator_params": {"epsilon": math.inf, "degree": 1}, **kwargs}
    )


def test_spec_round_trips_through_json_including_infinite_epsilon() -> None:
    spec = _spec(targets=TargetSelection(mode="ids", k=None, ids=(3, 1)))
    again = RunSpec.from_json(spec.to_json())
    assert again == spec
    assert '"epsilon": "inf"' in spec.to_json()
    assert spec.to_json() == again.to_json()


def test_validation_collects_every_problem() -> None:
    spec = _spec(
        generator="nope",
        threshold=1.5,
        seed=-1,
        attack=AttackSettings(n_shadow=3, n_eval=0, classifier="svm"),  # type: ignore[arg-type]
        targets=TargetSelection(mode="random", k=0),
    )
    with pytest.raises(ParameterError, match="not valid") as info:
        spec.validate()
    text = "\n".join(info.value.problems)
    for fragment in ("n_shadow", "n_eval", "svm", "at least 1", "nope", "threshold", "seed"):
        assert fragment in text
    assert len(info.value.problems) == 7


def test_parse_ids_names_the_bad_values() -> None:
    assert parse_ids(["1", "22"]) == (1, 22)
    with pytest.raises(ParameterError, match=r"\['x1'\]"):
        parse_ids(["1", "x1"])


def test_a_synthpop_spec_names_its_categorical_splits_and_old_specs_keep_ordinal() -> None:
    import inspect

    from privgame.generators.synthpop import SynthpopGenerator

    default = inspect.signature(SynthpopGenerator).parameters["categorical_splits"].default
    spec = RunSpec(
        data_name="x",
        data_fingerprint="f",
        schema={"columns": []},
        sizes={"aux": 1, "eval": 2, "target": 1},
        generator="synthpop",
    )
    assert spec.generator_params["categorical_splits"] == default
    assert RunSpec.from_json(spec.to_json()) == spec  # a new run keeps its splits on resume
    old = spec.to_dict()
    del old["generator_params"]["categorical_splits"]  # written before the option existed
    assert RunSpec.from_dict(old).generator_params["categorical_splits"] == "ordinal"
    other = RunSpec.from_dict({**old, "generator": "baynet", "generator_params": {}})
    assert "categorical_splits" not in other.generator_params


def test_a_kept_random_sample_round_trips_and_is_checked() -> None:
    kept = replace(TargetSelection.plan(outliers=2, random=3), sample_ids=(9, 4, 7))
    spec = _spec(targets=kept)
    assert RunSpec.from_json(spec.to_json()) == spec
    assert '"sample_ids"' in spec.to_json()
    assert '"sample_ids"' not in _spec(targets=TargetSelection.plan()).to_json()  # old specs unchanged
    problems = replace(kept, random=2, sample_ids=(4, 4)).problems()
    assert any("twice" in p for p in problems)
    assert any("must agree" in p for p in replace(kept, random=5).problems())
    assert any(
        "audit plan (mode 'plan') only" in p
        for p in TargetSelection(mode="random", k=3, sample_ids=(1,)).problems()
    )


@pytest.mark.parametrize(
    ("generator", "defaults"),
    [
        ("synthpop", {"min_samples_leaf": 5, "categorical_splits": "onehot"}),
        ("baynet", {"degree": 1, "bins": 10}),
        ("privbayes", {"degree": 1, "epsilon": 1.0, "bins": 10}),
        ("marginals", {}),
    ],
)
def test_a_built_in_generator_spec_names_every_parameter_so_both_faces_store_one_spec(
    generator: str, defaults: dict
) -> None:
    bare = bare_spec(generator=generator, generator_params={})
    assert bare.generator_params == defaults
    assert bare.to_json() == bare_spec(generator=generator, generator_params=dict(defaults)).to_json()
    plugin = bare_spec(generator="tests.plugin:Gen", generator_params={"jitter": 0.1})
    assert plugin.generator_params == {"jitter": 0.1}  # a plug-in's parameters are its own
