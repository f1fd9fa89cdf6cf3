"""The release set-up: the split, the population table, the holdout, the shadow datasets, the CLI."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.cli.main import main
from privgame.core.errors import ParameterError, SchemaError, SizeError
from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.data.splits import default_aux_rows, holdout_rows, release_split
from privgame.games import plan
from privgame.games.audit import describe_setup
from privgame.games.engine import build_audit
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import load_population, parse_holdout, release_inputs


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    adult = pd.read_csv(BUNDLED_ADULT, nrows=900).dropna()
    folder = tmp_path_factory.mktemp("setups")
    paths = {"data": folder / "data.csv", "population": folder / "population.csv"}
    adult.iloc[:500].to_csv(paths["data"], index=False)
    adult.iloc[500:].to_csv(paths["population"], index=False)
    return paths


@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_d_the_attackers_data_and_the_reference_records_never_overlap(separate: bool, seed: int) -> None:
    split = release_split(300, 120, aux=80, seed=seed, separate_population=separate)
    d, aux, ref = set(split.target), set(split.aux), set(split.reference)
    assert not d & aux and not d & ref and not aux & ref
    assert len(aux) == 80 and len(ref) == 40
    assert set(split.eval) == d | ref
    if separate:
        assert d == set(range(300)) and aux | ref == set(range(300, 420))
    else:
        assert len(d) == 180 and d | aux | ref == set(range(300))


def test_the_split_is_a_pure_function_of_its_inputs() -> None:
    a = release_split(300, 90, aux=60, seed=5, separate_population=False)
    assert a == release_split(300, 90, aux=60, seed=5, separate_population=False)
    assert a != release_split(300, 90, aux=60, seed=6, separate_population=False)


@pytest.mark.parametrize(
    ("holdout", "rows"),
    [(0.3, 60), (0.25, 50), (40, 40), (40.0, 40), (parse_holdout("0.3"), 60), (parse_holdout("5_0"), 50)],
)
def test_a_holdout_is_a_fraction_or_a_row_count(holdout: float, rows: int) -> None:
    assert holdout_rows(200, holdout) == rows


@pytest.mark.parametrize("text", ["0,3", "5,000", "1,5"])
def test_a_comma_in_the_holdout_is_refused_not_guessed(text: str) -> None:
    with pytest.raises(ParameterError, match=r"has a comma.*\(0\.3\).*\(5000\)"):
        parse_holdout(text)


def test_a_holdout_or_population_too_small_for_an_attack_is_refused() -> None:
    # 2 rows gave the attacker 1 row, repeated in every shadow dataset: "not at risk" for all.
    with pytest.raises(SizeError, match="at least 30 rows"):
        holdout_rows(500, 2)
    with pytest.raises(SizeError, match="at least 30"):
        release_split(100, 29, aux=19, seed=0, separate_population=True)
    with pytest.raises(SizeError, match="at least 20 rows and at least 10 reference records"):
        release_split(100, 40, aux=35, seed=0, separate_population=True)
    release_split(100, 30, aux=20, seed=0, separate_population=True)  # the least that works


def test_the_data_table_as_its_own_population_is_refused(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    with pytest.raises(SizeError, match="is the data table itself"):
        release_inputs(data, seed=1, population=load_population(tables["data"], data))


@pytest.mark.parametrize("bad", [0.0, 1.5, -3, True, "x"])
def test_a_bad_holdout_is_refused_with_the_fix(bad: object) -> None:
    with pytest.raises((ParameterError, SizeError), match="holdout"):
        holdout_rows(100, parse_holdout(bad) if isinstance(bad, str) else bad)  # type: ignore[arg-type]


def test_a_holdout_that_leaves_no_data_is_refused() -> None:
    with pytest.raises(SizeError, match="between 30 rows and 98 rows"):
        holdout_rows(100, 99)


def test_the_attacker_gets_two_thirds_of_the_population() -> None:
    assert default_aux_rows(13_567) == 9_044
    assert default_aux_rows(2) == 1


def test_release_inputs_with_a_holdout(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    inputs = release_inputs(data, seed=3, holdout=0.3)
    n = len(data.table)
    assert inputs.setup.population == "holdout" and inputs.setup.population_rows == round(0.3 * n)
    assert inputs.sizes["target"] == n - round(0.3 * n)
    assert inputs.sizes["aux"] == default_aux_rows(round(0.3 * n))
    # D_aux is smaller than D: shadow datasets of |D| rows are drawn with replacement.
    assert inputs.setup.shadow_replace and inputs.setup.shadow_size is None


def test_a_population_table_keeps_all_of_the_data_as_d(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    population = load_population(tables["population"], data)
    inputs = release_inputs(data, seed=0, population=population)
    assert inputs.sizes["target"] == len(data.table)
    assert len(inputs.table) == len(data.table) + len(population.table)
    pd.testing.assert_frame_equal(inputs.table.iloc[: len(data.table)], data.table, check_dtype=False)
    assert inputs.setup.population_name == "population.csv"


def test_a_mismatched_population_lists_every_difference(tables: dict[str, Path], tmp_path: Path) -> None:
    data = load_dataset(tables["data"])
    bad = pd.read_csv(tables["population"]).drop(columns=["race"])
    bad["age"] = "old"
    bad["gender"] = bad["gender"].map({"Male": "M", "Female": "F"})
    bad["extra"] = 1
    path = tmp_path / "bad.csv"
    bad.to_csv(path, index=False)
    with pytest.raises(SchemaError, match="does not match the data table") as caught:
        load_population(path, data)
    text = "\n".join(caught.value.problems)
    assert "['race']" in text and "['extra']" in text
    assert "'age' is continuous" in text and "'gender' is categorical" in text
    assert len(caught.value.problems) == 4


def test_shadow_datasets_follow_the_set_up() -> None:
    aux = np.arange(10)
    with_replacement = plan.shadow_out_rows(stream(0, 1), aux, 50, replace=True)
    assert len(with_replacement) == 50 and set(with_replacement) <= set(aux)
    without = plan.shadow_out_rows(stream(0, 1), aux, 8)
    assert len(set(without)) == 8
    shadow_in = plan.shadow_in_rows(stream(0, 2), aux, 99, 50, replace=True)
    assert shadow_in[-1] == 99 and len(shadow_in) == 50


def test_a_shadow_size_above_the_attackers_data_is_refused(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    with pytest.raises(SizeError, match="--shadow-size"):
        release_inputs(data, seed=0, shadow_size=10_000)


def _spec(inputs: object, data_name: str, **kwargs: object) -> RunSpec:
    return RunSpec(
        data_name=data_name,
        data_fingerprint=inputs.fingerprint,  # type: ignore[attr-defined]
        schema=inputs.schema.to_dict(),  # type: ignore[attr-defined]
        sizes=inputs.sizes,  # type: ignore[attr-defined]
        generator="synthpop",
        attack=AttackSettings(n_shadow=8, n_eval=8),
        setup=inputs.setup,  # type: ignore[attr-defined]
        **kwargs,  # type: ignore[arg-type]
    ).validate()


def test_the_audit_plan_audits_outliers_and_a_random_sample_of_d(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    inputs = release_inputs(data, seed=1)
    spec = _spec(inputs, "data.csv", targets=TargetSelection.plan(outliers=4, random=6), seed=1)
    ctx, groups = build_audit(spec, inputs.table)
    assert len(groups["outlier"]) == 4 and len(groups["random"]) == 6
    d = set(ctx.target.tolist())
    assert set(groups["outlier"]) <= d and set(groups["random"]) <= d
    assert ctx.shadow_replace and ctx.n_shadow_rows == len(ctx.target)


def test_the_set_up_is_said_in_words(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    inputs = release_inputs(data, seed=1, holdout=100)
    text = " ".join(describe_setup(_spec(inputs, "data.csv")))
    n_d = len(data.table) - 100
    assert f"The release is trained on these {n_d:,} rows. 100 rows are held back" in text
    assert "they are not released" in text
    assert "weaker than the paper's" in text  # D_aux (66 rows) is smaller than D
    assert "traditional game draws its datasets" in text
    assert "The traditional game was pooled" in text  # new specs pool it by default
    per_target = _spec(inputs, "data.csv")
    per_target = replace(per_target, attack=replace(per_target.attack, traditional="per-target"))
    assert "datasets of its own for each audited record" in " ".join(describe_setup(per_target))
    alone = replace(per_target, attack=replace(per_target.attack, games="model-seeded"))
    said = " ".join(describe_setup(alone))
    assert "was not played" in said and "draws its datasets" not in said
    # Before the run starts (the Evaluate page, `run`'s preamble) it says what the run will do.
    planned = " ".join(describe_setup(_spec(inputs, "data.csv"), planned=True))
    assert "The traditional game will be pooled" in planned and "was pooled" not in planned
    assert "will not be played" in " ".join(describe_setup(alone, planned=True))
    assert "will draw datasets of its own" in " ".join(describe_setup(per_target, planned=True))


def test_spec_json_round_trips_the_set_up(tables: dict[str, Path]) -> None:
    data = load_dataset(tables["data"])
    spec = _spec(release_inputs(data, seed=1), "data.csv", targets=TargetSelection.plan(3, 2))
    assert RunSpec.from_json(spec.to_json()) == spec


def test_an_old_spec_without_a_set_up_reads_as_the_papers() -> None:
    spec = RunSpec(
        data_name="x",
        data_fingerprint="f",
        schema={"columns": []},
        sizes={"aux": 1, "eval": 2, "target": 1},
        generator="synthpop",
    )
    data = spec.to_dict()
    del data["setup"]
    assert RunSpec.from_dict(data).setup.kind == "paper"


def test_the_cli_refuses_paper_sizes_in_the_release_set_up(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "--data",
            str(tables["data"]),
            "--generator",
            "synthpop",
            "--size",
            "50",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "--size: remove it (or use --setup paper" in capsys.readouterr().err


def test_the_cli_refuses_the_plan_with_another_selection(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "--data",
            str(tables["data"]),
            "--generator",
            "synthpop",
            "--outliers",
            "2",
            "--targets",
            "3",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "give one of them" in capsys.readouterr().err


def test_the_cli_reports_a_mismatched_population(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = pd.read_csv(tables["population"]).drop(columns=["income"])
    path = tmp_path / "pop.csv"
    bad.to_csv(path, index=False)
    code = main(
        [
            "run",
            "--data",
            str(tables["data"]),
            "--population",
            str(path),
            "--generator",
            "synthpop",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "does not match the data table" in err and "['income']" in err
