"""Runs with a portfolio of attacks: every attack on the same shadow datasets, one kept per record,
the same bytes across workers, a resume and an extension; the spec reads and writes the choice."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import small_spec
from same_runs import NUMBERS, resumed_run

from privgame.core.defaults import ATTACK_NAMES
from privgame.core.errors import ParameterError
from privgame.games.engine import build_context, extend, start_run
from privgame.settings.attacks import resolve_attacks
from privgame.settings.run_spec import AttackSettings, RunSpec

ALL = AttackSettings(
    n_shadow=20, n_eval=20, games="model-seeded", attacker="leave-one-out", attacks=ATTACK_NAMES
)


def _spec(path: Path, generator: str = "baynet", **kwargs: object) -> tuple[RunSpec, pd.DataFrame]:
    return small_spec(path, generator, **{"attack": ALL, **kwargs})


@pytest.mark.parametrize("attacker", ["leave-one-out", "population"])
def test_a_portfolio_run_resumes_extends_and_spreads_to_a_fresh_runs_bytes(
    small_adult: Path, tmp_path: Path, attacker: str
) -> None:
    games = "model-seeded" if attacker == "leave-one-out" else "both"
    attack = replace(ALL, attacker=attacker, games=games)
    spec, table = _spec(small_adult, attack=attack)
    wide, _ = _spec(small_adult, attack=replace(attack, n_eval=40))
    folder = resumed_run(tmp_path, spec, table)
    records = folder.records()
    assert set(records["attack"]) <= set(ATTACK_NAMES)
    for record_id in records["record_id"]:
        data = folder.load_target(int(record_id))
        assert list(data["attack_names"]) == list(ATTACK_NAMES)
        kept = int(np.flatnonzero(data["attack_names"] == data["attack"])[0])
        # The kept attack is the one with the best held-out AUC on the shadow datasets, or TAPAS
        # when that one beats it by no more than noise.
        assert data["attack_aucs"][kept] == np.nanmax(data["attack_aucs"]) or data["attack"] == "tapas"
        assert float(data["shadow_auc"]) == data["attack_aucs"][kept]
    extend(folder, 40, record_ids=[int(r) for r in records["record_id"]], workers=1)
    fresh = start_run(tmp_path / "wide", wide, table, workers=1)
    # The same runs, scores and risks byte for byte. (The intervals are not compared: the training
    # noise is pooled over the run's three records when its results are first written, at 20
    # evaluation runs for one and 40 for the other, and three records pool it loosely.)
    for name in ("scores.parquet", "spec.json"):
        assert (folder.path / name).read_bytes() == (fresh.path / name).read_bytes(), name
    pd.testing.assert_frame_equal(
        folder.records()[[*NUMBERS, "attack"]], fresh.records()[[*NUMBERS, "attack"]]
    )
    assert folder.records()["attack"].tolist() == records["attack"].tolist()


def test_the_spec_writes_the_attacks_only_when_there_is_more_than_tapas(small_adult: Path) -> None:
    spec, _ = _spec(small_adult)
    data = spec.to_dict()
    assert data["attack"]["attacks"] == list(ATTACK_NAMES)
    assert RunSpec.from_dict(data) == spec
    paper = replace(spec, attack=replace(spec.attack, attacks=("tapas",)))
    assert "attacks" not in paper.to_dict()["attack"]
    assert RunSpec.from_dict(paper.to_dict()).attack.attacks == ("tapas",)
    with pytest.raises(ParameterError, match=r"--attacks 'tapas,lira': unknown 'lira'"):
        replace(spec, attack=replace(spec.attack, attacks=("tapas", "lira"))).validate()


def test_a_spec_naming_an_attack_that_cannot_attack_its_generator_is_refused(small_adult: Path) -> None:
    spec, table = _spec(small_adult, generator="synthpop")
    with pytest.raises(ParameterError, match="marginal cannot attack the synthpop generator"):
        build_context(spec, table)


def test_each_set_up_resolves_its_default_attacks() -> None:
    assert resolve_attacks(None, setup="paper", generator="baynet") == ("tapas",)
    assert resolve_attacks(None, setup="release", generator="baynet") == ATTACK_NAMES
    assert "marginal" not in resolve_attacks(None, setup="release", generator="synthpop")
    assert resolve_attacks("closest,tapas", setup="release", generator="synthpop") == ("tapas", "closest")
    with pytest.raises(ParameterError, match="marginal cannot attack the synthpop generator"):
        resolve_attacks("tapas,marginal", setup="release", generator="synthpop")
