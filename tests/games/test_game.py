"""The two games as objects: their names, and one contract for how every game draws its datasets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from builders import small_spec

from privgame.core.seeding import Role, stream
from privgame.games.engine import build_context
from privgame.games.game import GAMES, MODEL_SEEDED, TRADITIONAL, Game, played
from privgame.settings.run_spec import AttackSettings


def test_each_game_owns_its_names_and_roles() -> None:
    assert [g.name for g in GAMES] == ["model-seeded", "traditional"]
    assert MODEL_SEEDED.array("scores") == "ms_scores" and TRADITIONAL.array("labels") == "t_labels"
    assert (
        MODEL_SEEDED.column() == "risk_model_seeded" and TRADITIONAL.column("low") == "risk_traditional_low"
    )
    assert TRADITIONAL.verdict_column == "verdict_traditional"
    assert (MODEL_SEEDED.in_role, MODEL_SEEDED.out_role) == (Role.MS_IN, Role.MS_OUT)
    assert (TRADITIONAL.in_role, TRADITIONAL.out_role) == (Role.T_IN, Role.T_OUT)
    # Every role of every game is its own: no two games share a stream.
    roles = [r for g in GAMES for r in (g.in_role, g.out_role)]
    assert len(set(roles)) == len(roles)


def test_the_games_a_setting_plays() -> None:
    assert played("both") == (MODEL_SEEDED, TRADITIONAL)
    assert played("model-seeded") == (MODEL_SEEDED,)
    with pytest.raises(ValueError, match="--games 'traditional' is unknown"):
        played("traditional")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_every_game_draws_in_datasets_with_the_target_and_out_datasets_without(
    game: Game, small_adult: Path
) -> None:
    """The contract of a game: |D| training rows each run, the target once in every 'in' dataset
    and never in an 'out' one; a swapped-in reference record is in the 'out' rows."""
    spec, table = small_spec(
        small_adult, attack=AttackSettings(n_shadow=20, n_eval=20, attacker="population")
    )
    ctx, targets = build_context(spec, table)
    record = int(targets[0])
    for i in range(5):
        rows_in = game.in_rows(ctx, stream(3, i, game.in_role), record)
        rows_out, reference = game.out_rows(ctx, stream(3, i, game.out_role), record)
        assert len(rows_in) == len(rows_out) == ctx.n
        assert np.count_nonzero(rows_in == record) == 1
        assert record not in rows_out
        if reference >= 0:
            assert reference in rows_out and reference in set(ctx.reference.tolist())


def test_the_model_seeded_game_fixes_d_and_swaps_only_the_target(small_adult: Path) -> None:
    spec, table = small_spec(small_adult)
    ctx, targets = build_context(spec, table)
    record = int(targets[0])
    np.testing.assert_array_equal(MODEL_SEEDED.in_rows(ctx, stream(1, 0), record), ctx.target)
    rows, reference = MODEL_SEEDED.out_rows(ctx, stream(1, 1), record)
    changed = np.flatnonzero(rows != ctx.target)
    assert len(changed) == 1 and ctx.target[changed[0]] == record and rows[changed[0]] == reference
    # The traditional game draws a fresh dataset every run.
    first = TRADITIONAL.in_rows(ctx, stream(1, 2), record)
    second = TRADITIONAL.in_rows(ctx, stream(1, 3), record)
    assert not np.array_equal(np.sort(first), np.sort(second))
