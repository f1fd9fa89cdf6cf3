"""Utility beside privacy: the metrics on hand-made tables, and a run's utility stored and reloaded."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.analysis.utility import (
    BALANCED_ACCURACY,
    Spread,
    UtilityReport,
    association_difference,
    association_matrix,
    default_target_column,
    downstream_score,
    measure_utility,
    per_column_table,
    stored_utility,
    total_variation,
    utility_row,
    utility_split,
)
from privgame.cli.main import main
from privgame.core.errors import ParameterError, RunError
from privgame.core.seeding import Role, stream
from privgame.data import BUNDLED_ADULT, Sizes, encode, infer_schema, load_dataset
from privgame.data.schema import Schema
from privgame.games.engine import execute
from privgame.games.plan import run_split
from privgame.games.preflight import create_run
from privgame.generators import create
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs, with_setup
from privgame.store.folders import RunFolder


def _table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Two strongly linked categorical columns, a continuous column that follows them, and noise."""
    rng = stream(seed, 99)
    colour = rng.choice(["red", "green", "blue"], size=n)
    shade = np.where(rng.random(n) < 0.9, colour, rng.choice(["red", "green", "blue"], size=n))
    size = np.select([colour == "red", colour == "green"], [10.0, 20.0], 30.0) + rng.normal(0, 2, n)
    return pd.DataFrame(
        {
            "colour": colour,
            "shade": shade,
            "size": size,
            "weight": 2 * size + rng.normal(0, 1, n),
            "noise": rng.choice(["a", "b"], size=n),
        }
    )


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return _table()


@pytest.fixture(scope="module")
def schema(table: pd.DataFrame) -> Schema:
    return infer_schema(table)


def test_the_hand_made_table_has_the_roles_the_tests_rely_on(schema: Schema) -> None:
    roles = {c.name: c.role for c in schema.used}
    assert roles == {
        "colour": "categorical",
        "shade": "categorical",
        "size": "continuous",
        "weight": "continuous",
        "noise": "categorical",
    }


def test_identical_tables_are_at_distance_zero(table: pd.DataFrame, schema: Schema) -> None:
    distances = total_variation(table, table.copy(), schema)
    assert set(distances) == set(schema.names)
    assert all(value == 0.0 for value in distances.values())
    assert association_difference(table, table.copy(), schema) == 0.0


def test_the_association_matrix_sees_the_links(table: pd.DataFrame, schema: Schema) -> None:
    m = association_matrix(table, schema)
    assert list(m.index) == schema.names and np.allclose(m.to_numpy(), m.to_numpy().T)
    assert np.allclose(np.diag(m), 1.0)
    assert m.loc["colour", "shade"] > 0.8  # Cramér's V of two linked categories
    assert m.loc["colour", "size"] > 0.9  # correlation ratio: size follows colour
    assert m.loc["size", "weight"] > 0.9  # |Pearson's r|
    assert m.loc["noise", "colour"] < 0.1 and m.loc["noise", "size"] < 0.1


def test_a_shuffled_column_breaks_its_associations_but_keeps_its_distribution(
    table: pd.DataFrame, schema: Schema
) -> None:
    shuffled = table.assign(colour=stream(1, 99).permutation(table["colour"].to_numpy()))
    distances = total_variation(table, shuffled, schema)
    assert distances["colour"] == 0.0  # the same values, in another order
    assert association_difference(table, shuffled, schema) > 0.15
    m = association_matrix(shuffled, schema)
    assert m.loc["colour", "shade"] < 0.1 and m.loc["colour", "size"] < 0.1


def test_a_changed_distribution_has_a_positive_distance(table: pd.DataFrame, schema: Schema) -> None:
    changed = table.assign(
        size=table["size"] + 15.0, colour=np.where(table["colour"] == "blue", "red", table["colour"])
    )
    distances = total_variation(table, changed, schema)
    assert distances["size"] > 0.3  # shifted beyond most of the real quantile bins
    assert distances["colour"] == pytest.approx((table["colour"] == "blue").mean())
    assert distances["shade"] == distances["weight"] == distances["noise"] == 0.0


def test_a_continuous_column_with_a_mass_of_ties_keeps_the_mass_apart() -> None:
    real = pd.DataFrame({"gain": [0.0] * 80 + list(1.5 * np.arange(1, 21)), "flag": ["x", "y"] * 50})
    schema = infer_schema(real)
    assert schema.column("gain").role == "continuous"
    # Bins of the real data: 0 (80%), (0, q90] (10%), above q90 (10%). Moving 30 zeros into the
    # middle bin and the top 10% into it too: TVD = (0.3 + 0.4 + 0.1) / 2.
    moved = real.assign(gain=[0.0] * 50 + [0.5] * 50)
    assert total_variation(real, moved, schema)["gain"] == pytest.approx(0.4)


def test_downstream_on_a_learnable_target_beats_chance(table: pd.DataFrame, schema: Schema) -> None:
    train, test = table.iloc[:1000], table.iloc[1000:]
    score = downstream_score(train, test, "colour", schema, seed=3)
    assert score > 0.9  # chance is 1/3: shade and size give colour away
    assert downstream_score(train, test, "noise", schema, seed=3) < 0.6  # nothing to learn: chance
    r2 = downstream_score(train, test, "weight", schema, seed=3)
    assert r2 > 0.9


def test_downstream_scores_a_class_missing_from_the_test_set_without_a_warning(
    table: pd.DataFrame, schema: Schema
) -> None:
    rest = table.iloc[1000:]
    test = rest[rest["noise"] == "a"]  # only class "a"; the model guesses "b" too
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score = downstream_score(table.iloc[:1000], test, "noise", schema, seed=3)
    assert 0.0 < score < 1.0  # the recall of "a": some rows were predicted "b", absent from the test


def test_a_bad_target_column_names_the_columns(table: pd.DataFrame, schema: Schema) -> None:
    with pytest.raises(ParameterError, match=r"'income' is not a column.*colour, shade, size, weight, noise"):
        downstream_score(table, table, "income", schema, seed=0)


def test_the_default_target_is_the_last_categorical_column(schema: Schema) -> None:
    assert default_target_column(schema) == "noise"
    adult = load_dataset(BUNDLED_ADULT)
    assert adult.schema.names[-1] == "income"
    assert default_target_column(adult.schema) == "income"
    numbers = infer_schema(pd.DataFrame({"a": np.arange(50.0) / 3, "b": np.arange(50.0) / 7}))
    assert default_target_column(numbers) == "b"


def test_a_report_round_trips_through_a_dict() -> None:
    report = UtilityReport(
        fidelity=Spread(0.1, 0.01, 3),
        association=Spread(0.2, 0.02, 3),
        downstream=Spread(0.7, 0.05, 3),
        downstream_real=0.8,
        target_column="income",
        per_column={"age": Spread(0.05, 0.01, 3)},
        samples=3,
        downstream_metric=BALANCED_ACCURACY,
    )
    assert UtilityReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    row = utility_row(report)
    assert row["fidelity_tvd"] == 0.1 and row["downstream"] == 0.7 and row["downstream_real"] == 0.8
    assert row["target_column"] == "income" and row["utility_samples"] == 3
    assert set(utility_row(None)) == set(row) and all(v is None for v in utility_row(None).values())
    with pytest.raises(ValueError, match="spread"):
        UtilityReport.from_dict({**report.to_dict(), "fidelity": {"mean": "x"}})


# -- a run's utility ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    """A finished paper set-up run on 300 rows of Adult: |D| = 60, generator "marginals"."""
    adult = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    data = load_dataset(adult.to_csv(index=False).encode(), filename="adult300.csv")
    spec = RunSpec(
        data_name=data.source_name,
        data_fingerprint=data.fingerprint,
        schema=data.schema.to_dict(),
        sizes=Sizes(aux=150, eval=150, target=60).to_dict(),
        generator="marginals",
        attack=AttackSettings(n_shadow=8, n_eval=8),
        targets=TargetSelection(mode="random", k=2),
        seed=5,
    ).validate()
    return execute(create_run(tmp_path_factory.mktemp("runs"), spec, data.table), workers=1)


def test_measure_utility_stores_figures_that_reload_equal(tiny_run: RunFolder) -> None:
    assert stored_utility(tiny_run) is None
    report = measure_utility(tiny_run, samples=3)
    assert report.samples == 3 and report.target_column == "income"
    assert report.downstream_metric == BALANCED_ACCURACY
    assert report.fidelity.n == report.association.n == 3
    assert 0.0 < report.fidelity.mean < 1.0 and report.fidelity.sd > 0.0
    assert 0.0 < report.association.mean < 1.0
    assert report.downstream is not None and 0.0 <= report.downstream.mean <= 1.0
    assert report.downstream_real is not None and 0.0 <= report.downstream_real <= 1.0
    assert set(report.per_column) == set(Schema.from_dict(tiny_run.spec().schema).names)
    columns = per_column_table(report)
    assert columns["column"].iloc[0] == max(report.per_column, key=lambda c: report.per_column[c].mean)
    assert columns["total variation distance"].is_monotonic_decreasing
    assert stored_utility(RunFolder(tiny_run.path)) == report
    assert measure_utility(tiny_run, samples=3) == report  # the same run: the same figures


def test_more_samples_extend_the_fewer(tiny_run: RunFolder) -> None:
    two, three = measure_utility(tiny_run, samples=2), measure_utility(tiny_run, samples=3)
    assert two.downstream_real == three.downstream_real  # the model on D does not depend on samples
    # The third sample is the generator fitted on D with stream (seed, 0, UTILITY, 0, 2).
    spec = tiny_run.spec()
    schema = Schema.from_dict(spec.schema)
    X = encode(tiny_run.load_table(), schema)
    d, _ = utility_split(spec, len(X))
    third = create("marginals").fit_sample(X[d], schema, len(d), rng=stream(spec.seed, 0, Role.UTILITY, 0, 2))
    expected = float(np.mean(list(total_variation(X[d], third, schema).values())))
    assert 3 * three.fidelity.mean - 2 * two.fidelity.mean == pytest.approx(expected, abs=1e-12)


def test_the_test_set_is_every_record_not_in_d(tiny_run: RunFolder) -> None:
    spec = tiny_run.spec()
    d, test = utility_split(spec, 300)
    assert len(d) == 60 and len(test) == 240
    assert not set(d) & set(test) and set(d) | set(test) == set(range(300))
    left_out = test[:5]  # records a remedy left out: neither in D nor test records
    assert np.array_equal(utility_split(spec, 300, exclude=left_out)[1], test[5:])
    big = replace(spec, sizes=Sizes(aux=30_000, eval=20_000, target=1_000).to_dict())
    d, test = utility_split(big, 50_000)
    assert len(test) == 10_000 and not set(d) & set(test)  # a seeded subset of the 49,000 others
    assert np.array_equal(test, utility_split(big, 50_000)[1]) and np.all(np.diff(test) > 0)


def test_in_the_release_set_up_the_test_set_is_the_holdout(tmp_path: Path) -> None:
    adult = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(200)
    data = load_dataset(adult.to_csv(index=False).encode(), filename="adult200.csv")
    inputs = release_inputs(data, seed=2, holdout=0.3)
    spec = RunSpec(
        **with_setup(
            {
                "data_name": data.source_name,
                "generator": "marginals",
                "attack": AttackSettings(n_shadow=8, n_eval=8),
                "targets": TargetSelection.plan(outliers=1, random=1),
                "seed": 2,
            },
            inputs,
        )
    ).validate()
    split = run_split(spec, len(inputs.table))
    d, test = utility_split(spec, len(inputs.table))
    assert np.array_equal(d, split.target)
    assert set(test) == set(split.aux) | set(split.reference) and len(test) == 60  # the 0.3 holdout
    report = measure_utility(create_run(tmp_path, spec, inputs.table), samples=2)
    assert report.downstream is not None and report.downstream_real is not None


def test_measure_utility_refuses_a_bad_target_column_and_sample_count(tiny_run: RunFolder) -> None:
    with pytest.raises(ParameterError, match=r"'salary' is not a column.*age, workclass.*income"):
        measure_utility(tiny_run, samples=2, target_column="salary")
    with pytest.raises(ParameterError, match="--samples must be a whole number from 2"):
        measure_utility(tiny_run, samples=1)


def test_a_damaged_utility_file_is_a_run_error(tiny_run: RunFolder, tmp_path: Path) -> None:
    measure_utility(tiny_run, samples=2, target_column="gender")
    path = tiny_run.path / "utility.json"
    original = path.read_bytes()
    try:
        path.write_bytes(original.replace(b"gender", b"gendex"))
        with pytest.raises(RunError, match=r"utility.json .* does not match .* python -m privgame utility"):
            stored_utility(tiny_run)
    finally:
        path.write_bytes(original)


def test_the_cli_prints_the_figures_in_plain_words(
    tiny_run: RunFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["utility", str(tiny_run.path), "--samples", "2"]) == 0
    out = capsys.readouterr()
    assert "no --target-column given: predicting 'income'" in out.err
    assert "Fidelity:" in out.out and "± " in out.out and "over 2 synthetic samples" in out.out
    assert "trained on D it scores" in out.out
    assert main(["utility", str(tiny_run.path), "--samples", "2", "--target-column", "nope"]) == 2
    assert "'nope' is not a column" in capsys.readouterr().err
