"""Threat models: the leave-one-out and population attackers, end to end on small Adult samples."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from blind_generator import blind_generator
from builders import small_spec
from same_runs import assert_same_runs, resumed_run

from privgame.core.errors import ParameterError
from privgame.core.seeding import Role, stream
from privgame.games import threat
from privgame.games.engine import build_context, extend, start_run
from privgame.games.plan import count_fits
from privgame.games.work import shared_chunk, synthesise, synthesise_swapped
from privgame.generators import _cart
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection

LOO = AttackSettings(n_shadow=20, n_eval=20, games="model-seeded", attacker="leave-one-out")


def _spec(path: Path, generator: str = "synthpop", **kwargs: object) -> tuple[RunSpec, pd.DataFrame]:
    return small_spec(path, generator, **{"attack": LOO, **kwargs})


def test_the_registry_names_every_threat_model_and_refuses_an_unknown_one() -> None:
    assert sorted(threat.THREAT_MODELS) == ["leave-one-out", "population"]
    assert threat.create("leave-one-out").shared_label == 1
    assert threat.create("population").shared_label == 0
    with pytest.raises(ParameterError, match="--attacker 'oracle' is unknown"):
        threat.create("oracle")
    with pytest.raises(ValueError, match="unknown"):  # the error tree is rooted in ValueError
        threat.create("oracle")
    assert threat.describe("leave-one-out") == "an attacker who knows every other record"


def test_the_leave_one_out_attacker_draws_d_and_d_with_the_target_swapped(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    ctx, targets = build_context(spec, table)
    model = ctx.threat
    assert (model.shared_role, model.own_role, model.shared_name) == (
        Role.SHADOW_IN,
        Role.SHADOW_OUT,
        "shadow_in",
    )
    np.testing.assert_array_equal(model.shared_rows(ctx, stream(1, 0)), ctx.target)
    record = int(targets[0])
    rows, reference = model.own_rows(ctx, stream(1, 2), record)
    assert reference in set(ctx.reference.tolist())
    assert record not in rows and reference in rows
    position = int(np.flatnonzero(ctx.target == record)[0])
    expected = ctx.target.copy()
    expected[position] = reference
    np.testing.assert_array_equal(rows, expected)


def test_the_population_attacker_draws_from_d_aux_only(small_adult: Path) -> None:
    spec, table = _spec(
        small_adult,
        attack=replace(LOO, attacker="population", games="both"),
        targets=TargetSelection("random", 1),
    )
    ctx, targets = build_context(spec, table)
    model = ctx.threat
    assert model.shared_name == "shadow_out"
    assert set(model.shared_rows(ctx, stream(1, 0)).tolist()) <= set(ctx.aux.tolist())
    rows, reference = model.own_rows(ctx, stream(1, 1), int(targets[0]))
    assert reference == -1 and rows[-1] == targets[0]
    assert set(rows[:-1].tolist()) <= set(ctx.aux.tolist())


def test_shared_shadow_in_datasets_are_the_generator_on_d_with_streams_of_their_own(
    small_adult: Path,
) -> None:
    spec, table = _spec(small_adult)
    ctx, _ = build_context(spec, table)
    shadows = shared_chunk(ctx, Role.SHADOW_IN, 0, 2)
    ms_in = shared_chunk(ctx, Role.MS_IN, 0, 2)
    assert shadows.shape == ms_in.shape == (2, ctx.n, ctx.X.shape[1])
    assert not np.array_equal(shadows, ms_in)  # independent of the evaluation datasets
    with pytest.raises(ValueError, match="not a shared role of the leave-one-out attacker"):
        shared_chunk(ctx, Role.SHADOW_OUT, 0, 2)


def test_the_leave_one_out_attacker_cannot_play_the_traditional_game(small_adult: Path) -> None:
    with pytest.raises(ParameterError, match="plays the model-seeded game only") as caught:
        _spec(small_adult, attack=replace(LOO, games="both"))
    assert any("--attacker population" in p for p in caught.value.problems)
    with pytest.raises(ParameterError, match="--attacker 'oracle' is unknown"):
        _spec(small_adult, attack=replace(LOO, attacker="oracle"))


def test_the_attacker_is_kept_in_the_spec_and_old_specs_read_as_the_population_attacker(
    small_adult: Path,
) -> None:
    spec, _ = _spec(small_adult)
    assert RunSpec.from_json(spec.to_json()) == spec
    assert json.loads(spec.to_json())["attack"]["attacker"] == "leave-one-out"
    population, _ = _spec(small_adult, attack=replace(LOO, attacker="population"))
    data = json.loads(population.to_json())
    assert "attacker" not in data["attack"]  # specs written before the option serialise as before
    assert RunSpec.from_dict(data).attack.attacker == "population"


def test_the_plan_counts_one_fit_on_d_for_a_deterministic_generator_under_leave_one_out() -> None:
    loo = count_fits(5, 100, 40, deterministic_fit=True, traditional=False, shadows_on_d=True)
    assert (loo.shared_fits, loo.fits_per_target) == (1, 50 + 20)
    population = count_fits(5, 100, 40, deterministic_fit=True, traditional=False)
    assert (population.shared_fits, population.fits_per_target) == (51, 70)
    random_fit = count_fits(5, 100, 40, deterministic_fit=False, traditional=False, shadows_on_d=True)
    assert random_fit.shared_fits == 50 + 20


def test_the_identity_generator_puts_every_record_at_risk_under_leave_one_out(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = _spec(
        small_adult,
        generator="identity",
        attack=replace(LOO, n_eval=40),
        targets=TargetSelection("random", 4),
    )
    records = start_run(tmp_path, spec, table, workers=1).records()
    assert len(records) == 4
    assert (records["verdict_model_seeded"] == "at risk").all(), records["risk_model_seeded"].tolist()
    assert (records["verdict_traditional"] == "not run").all()


def test_a_generator_that_ignores_its_data_puts_no_record_at_risk_under_leave_one_out(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = _spec(
        small_adult,
        generator="marginals",
        attack=replace(LOO, n_eval=100),
        targets=TargetSelection("random", 4),
    )
    ctx, _ = build_context(spec, table)
    with blind_generator(ctx.X[ctx.aux]) as name:
        spec = RunSpec.from_dict({**spec.to_dict(), "generator": name})
        records = start_run(tmp_path, spec, table, workers=1).records()
    assert not (records["verdict_model_seeded"] == "at risk").any()
    assert (records["risk_model_seeded"] - 0.5).abs().max() < 0.25


@pytest.mark.parametrize("attacker", ["leave-one-out", "population"])
def test_resume_extend_and_workers_give_a_fresh_runs_bytes_under_each_attacker(
    small_adult: Path, tmp_path: Path, attacker: str
) -> None:
    games = "model-seeded" if attacker == "leave-one-out" else "both"
    attack = replace(LOO, attacker=attacker, games=games)
    spec, table = _spec(small_adult, attack=attack)
    wide, _ = _spec(small_adult, attack=replace(attack, n_eval=40))
    folder = resumed_run(tmp_path, spec, table)
    extend(folder, 40, record_ids=[int(r) for r in folder.records()["record_id"]], workers=1)
    fresh = start_run(tmp_path / "wide", wide, table, workers=1)
    assert_same_runs(folder, fresh)


def test_the_leave_one_out_attacker_finds_more_risk_than_the_population_attacker(
    small_adult: Path, tmp_path: Path
) -> None:
    # The same records and evaluation runs (the model-seeded game's streams do not depend on the
    # attacker): the attacker who knows D is at least as strong on average.
    targets = TargetSelection("outliers", 3)
    loo, table = _spec(small_adult, attack=replace(LOO, n_shadow=40, n_eval=40), targets=targets)
    population, _ = _spec(
        small_adult, attack=replace(LOO, n_shadow=40, n_eval=40, attacker="population"), targets=targets
    )
    strong = start_run(tmp_path / "loo", loo, table, workers=1).records()
    weak = start_run(tmp_path / "pop", population, table, workers=1).records()
    assert strong["record_id"].tolist() == weak["record_id"].tolist()
    assert strong["risk_model_seeded"].mean() > weak["risk_model_seeded"].mean()


@pytest.mark.parametrize("generator", ["synthpop", "baynet", "privbayes"])
def test_a_swapped_dataset_refitted_from_the_model_on_d_equals_a_fresh_fit(
    small_adult: Path, generator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cart, "_REFIT_MIN_ROWS", 0)  # refit even a small D (see _cart)
    spec, table = _spec(small_adult, generator=generator)
    ctx, targets = build_context(spec, table)
    assert callable(getattr(ctx.new_generator(), "refit_swap", None))
    for k, record in enumerate(targets):
        rows, reference = ctx.threat.own_rows(ctx, stream(3, k), int(record))
        refitted = synthesise_swapped(ctx, rows, int(record), reference, stream(4, k))
        fresh = synthesise(ctx, rows, stream(4, k))
        assert refitted.tobytes() == fresh.tobytes()
