"""The per-record attribute-inference game (privgame.games.inference) through the engine: planted
leaks found and only them, a release of the population's distribution found to reveal nothing of
any record, the records table's columns, and the refusal of a secret that cannot be one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from blind_generator import blind_generator
from builders import release_spec
from copying_generator import copies_chosen

from privgame.attack.inference import SecretAttack
from privgame.core.errors import ParameterError
from privgame.core.seeding import Role, stream
from privgame.games.context import build_audit
from privgame.games.engine import start_run
from privgame.games.inference import inference_columns
from privgame.outputs.run_report import high_risk
from privgame.settings.run_spec import AttackSettings, InferenceSettings, RunSpec, TargetSelection


@pytest.fixture(scope="module")
def secret_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """800 people: two categorical columns, a continuous one that makes every row unique, and a
    secret independent of all of them (so nothing but a record's own row reveals it)."""
    rng = stream(46, 0, Role.QUERIES, 0)
    n = 800
    table = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east"], n),
            "sex": rng.choice(["f", "m"], n),
            "weight": np.round(rng.normal(70, 12, n), 3),
            "diagnosis": rng.choice(["a", "b", "c", "d"], n),
        }
    )
    path = tmp_path_factory.mktemp("secret") / "people.csv"
    table.to_csv(path, index=False)
    return path


def _spec(path: Path, **changes: object) -> tuple[RunSpec, pd.DataFrame]:
    fields: dict[str, object] = {
        "attack": AttackSettings(n_shadow=8, n_eval=100, attacker="leave-one-out", games="model-seeded"),
        "inference": InferenceSettings(secrets=("diagnosis",)),
        **changes,
    }
    return release_spec(path, "marginals", **fields)  # type: ignore[arg-type]


def test_a_generator_that_copies_ten_records_puts_those_ten_at_risk_of_inference_and_only_them(
    secret_table: Path, tmp_path: Path
) -> None:
    spec, table = _spec(secret_table)
    ctx, _ = build_audit(spec, table)
    # Records whose secret the population does not already reveal: no attack on the public rows
    # names it (where one does, the record's presence adds nothing, rightly).
    attack = SecretAttack.prepare(ctx.schema, "diagnosis", ctx.X[ctx.aux])
    named = attack.predict(ctx.X[ctx.aux], ctx.X[ctx.target])
    truth = attack.classes(ctx.X[ctx.target, attack.secret])
    hidden = ctx.target[(named != truth[None, :]).all(axis=0)]
    leaked, others = hidden[:10], hidden[10:20]
    spec = replace(
        spec, targets=TargetSelection(mode="ids", k=None, ids=tuple(int(r) for r in [*leaked, *others]))
    )
    with copies_chosen(ctx.X[leaked], ctx.X[ctx.aux]) as name:
        spec = RunSpec.from_dict({**spec.to_dict(), "generator": name})
        records = start_run(tmp_path, spec, table, workers=1).records()
    by_id = records.set_index("record_id")
    assert set(by_id.loc[by_id["verdict_inference"] == "at risk"].index) == {int(r) for r in leaked}
    assert (by_id.loc[leaked, "inference_gain"] >= 0.5).all()
    assert (by_id.loc[leaked, "inference_in"] == 1.0).all()
    assert (by_id.loc[leaked, "inference_attack"] == "nearest").all()
    assert (by_id.loc[others, "inference_gain"].abs() < 0.3).all()
    # The high-risk export lists them, and says what they are at risk of.
    listed = high_risk(records, 0.8)
    assert {int(r) for r in leaked} <= set(listed["record_id"])
    assert (
        listed.set_index("record_id").loc[leaked, "at_risk_of"].str.contains("inference of diagnosis")
    ).all()
    # What the record's secret is, and what the attack named in each world, are in the table.
    first = by_id.loc[int(leaked[0])]
    assert first["inferred_in"] == first["secret_value"] == first["value:diagnosis"]


def test_a_release_of_the_population_distribution_puts_no_record_at_risk_of_inference(
    secret_table: Path, tmp_path: Path
) -> None:
    spec, table = _spec(secret_table, targets=TargetSelection.plan(outliers=5, random=10))
    ctx, _ = build_audit(spec, table)
    # Each column drawn on its own from the population (whose columns are independent): the
    # population's distribution, and no row of anyone.
    with blind_generator(ctx.X[ctx.aux]) as name:
        spec = RunSpec.from_dict({**spec.to_dict(), "generator": name})
        folder = start_run(tmp_path, spec, table, workers=1)
    records = folder.records()
    assert len(records) == 15
    assert (records["verdict_inference"] != "at risk").all()
    assert records["inference_gain"].abs().max() < 0.3
    summary = folder.summary()["inference"]
    assert summary["by_secret"]["diagnosis"]["verdicts"]["at risk"] == 0
    # The aggregate view: the release names a member's secret no more often than a non-member's.
    aggregate = summary["aggregate"]["diagnosis"]["nearest"]
    assert aggregate["low"] <= 0 <= aggregate["high"]


def test_several_secrets_get_columns_of_their_own(secret_table: Path, tmp_path: Path) -> None:
    spec, table = _spec(
        secret_table,
        attack=AttackSettings(n_shadow=8, n_eval=8),
        inference=InferenceSettings(secrets=("diagnosis", "region"), threshold=0.2),
    )
    folder = start_run(tmp_path, spec, table, workers=1)
    records = folder.records()
    assert set(inference_columns(("diagnosis", "region"))) <= set(records.columns)
    assert "verdict_inference_region" in inference_columns(("diagnosis", "region"))
    assert "inference_gain" not in records.columns
    assert folder.summary()["inference"]["threshold"] == 0.2
    assert RunSpec.from_json(spec.to_json()) == spec


def test_a_spec_without_secrets_writes_no_inference_and_reads_as_before() -> None:
    spec = RunSpec.from_dict(
        {
            "data_name": "t.csv",
            "data_fingerprint": "x",
            "schema": {"columns": []},
            "sizes": {},
            "generator": "marginals",
        }
    )
    assert not spec.inference.on
    assert "inference" not in spec.to_dict()


def test_a_secret_that_cannot_be_one_is_refused_naming_the_column(secret_table: Path) -> None:
    with pytest.raises(ParameterError) as caught:
        _spec(secret_table, inference=InferenceSettings(secrets=("diagnosis", "salary")))[0].validate()
    assert "'salary' is not in the table" in " ".join(caught.value.problems)
    with pytest.raises(ParameterError) as caught:
        _spec(secret_table, inference=InferenceSettings(secrets=("sex",), threshold=1.5))[0].validate()
    assert "--inference-threshold" in " ".join(caught.value.problems)
