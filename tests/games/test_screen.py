"""The screen of every record of D: what it finds with generators whose leaks are known, its
determinism across workers and resumes, and its place in a run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from blind_generator import blind_generator
from builders import release_spec
from copying_generator import copies_chosen

from privgame.attack.screening import STATISTICS
from privgame.data import BUNDLED_ADULT
from privgame.games.context import build_audit
from privgame.games.engine import execute, start_run
from privgame.games.preflight import create_run
from privgame.games.screen import confirm_top, screen_chunk, screen_records
from privgame.settings.run_spec import AttackSettings, RunSpec, ScreenSettings, TargetSelection
from privgame.store.folders import RunFolder

SCREEN = ScreenSettings(mode="all", shadows=150, swap=0.3, confirm_top=2)


@pytest.fixture(scope="module")
def tiny_adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 400 rows of the bundled Adult data, as a CSV file."""
    path = tmp_path_factory.mktemp("data") / "adult-tiny.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=400).to_csv(path, index=False)
    return path


def _release_spec(
    path: Path, generator: str, *, screen: ScreenSettings = SCREEN
) -> tuple[RunSpec, pd.DataFrame]:
    """A release audit of the table at ``path`` (holdout 0.5, seed 3): the audit plan 1 + 2,
    N_shadow = N_eval = 8, the leave-one-out attacker."""
    return release_spec(
        path,
        generator,
        holdout=0.5,
        seed=3,
        attack=AttackSettings(n_shadow=8, n_eval=8, attacker="leave-one-out", games="model-seeded"),
        targets=TargetSelection.plan(outliers=1, random=2),
        screen=screen,
    )


def _screen(spec: RunSpec, table: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    ctx, _ = build_audit(spec, table)
    chunk = screen_chunk(ctx, spec.screen.swap, 0, spec.screen.shadows)
    return screen_records(chunk["stats"], chunk["out"], ctx.target, spec.threshold), ctx.target


def test_the_identity_generator_puts_every_record_at_risk(tiny_adult: Path) -> None:
    # A perfect separation over m 'out' datasets has the Wilson bound m / (m + z^2) as its low
    # end, above 0.8 only from m = 33 at the screen's level (seven statistics): with 150 datasets
    # a record is 'out' in 45 +/- 6 of them and the fewest of 184 records falls below 33 most
    # of the time; with 300 it does not.
    spec, table = _release_spec(tiny_adult, "identity", screen=replace(SCREEN, shadows=300))
    screened, target = _screen(spec, table)
    assert len(screened) == len(target)
    # A record with a twin in D is copied by its twin when out: only the unique ones must be found.
    ctx, _ = build_audit(spec, table)
    rows = ctx.X[target]
    unique = (rows[:, None, :] == rows[None, :, :]).all(axis=2).sum(axis=1) == 1
    assert (screened.loc[unique, "screen_verdict"] == "at risk").all()
    assert (screened.loc[unique, "screen_statistic"] == "exact").all()


def test_a_generator_that_ignores_its_data_puts_no_record_at_risk(tiny_adult: Path) -> None:
    spec, table = _release_spec(tiny_adult, "identity")
    ctx, _ = build_audit(spec, table)
    with blind_generator(ctx.X[ctx.aux]) as name:
        spec = RunSpec.from_dict({**spec.to_dict(), "generator": name})
        screened, _ = _screen(spec, table)
    verdicts = screened["screen_verdict"].value_counts()
    assert verdicts.get("at risk", 0) == 0
    assert verdicts.get("undecided", 0) <= 0.05 * len(screened)
    # A useless statistic's interval lies wholly below 0.5 about 1.5% of the time: such a record
    # reads "attack failed", never more than a few.
    assert verdicts.get("attack failed", 0) <= 0.05 * len(screened)
    # The highest of seven useless statistics' AUCs leans above 0.5, by a few hundredths.
    assert 0.5 <= screened["screen_risk"].mean() < 0.6


def test_a_planted_leak_of_ten_records_is_found_and_only_it(tiny_adult: Path) -> None:
    spec, table = _release_spec(tiny_adult, "identity")
    ctx, _ = build_audit(spec, table)
    rows = ctx.X[ctx.target]
    unique = np.flatnonzero((rows[:, None, :] == rows[None, :, :]).all(axis=2).sum(axis=1) == 1)
    chosen = ctx.target[unique[:: max(1, len(unique) // 10)][:10]]
    with copies_chosen(ctx.X[chosen], ctx.X[ctx.aux]) as name:
        spec = RunSpec.from_dict({**spec.to_dict(), "generator": name})
        screened, _ = _screen(spec, table)
    at_risk = set(screened.loc[screened["screen_verdict"] == "at risk", "record_id"].astype(int))
    assert at_risk == {int(c) for c in chosen}


def test_confirm_top_takes_the_highest_risks_not_planned() -> None:
    screened = pd.DataFrame(
        {
            "record_id": [5, 6, 7, 8],
            "screen_risk": [0.9, 0.95, 0.9, np.nan],
            "screen_low": [0.7, 0.8, 0.75, np.nan],
        }
    )
    assert confirm_top(screened, np.array([6]), 2).tolist() == [5, 7]
    assert confirm_top(screened, np.array([], dtype=np.int64), 10).tolist() == [5, 6, 7]
    assert confirm_top(screened, np.array([6]), 0).size == 0


@pytest.fixture(scope="module")
def screened_run(tiny_adult: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    spec, table = _release_spec(tiny_adult, "synthpop")
    return start_run(tmp_path_factory.mktemp("runs"), spec, table, workers=1)


def test_a_run_screens_every_record_and_confirms_the_top(screened_run: RunFolder) -> None:
    spec = screened_run.spec()
    screened = screened_run.screen()
    records = screened_run.records()
    assert len(screened) == spec.sizes["target"]
    groups = records["audit_group"].astype(str)
    top = records.loc[groups == "screened", "record_id"].tolist()
    assert len(top) == spec.screen.confirm_top
    planned = records.loc[groups != "screened", "record_id"]
    assert top == confirm_top(screened, planned.to_numpy(), spec.screen.confirm_top).tolist()
    summary = screened_run.summary()
    assert summary["screen"]["records"] == len(screened)
    assert summary["share_at_risk"]["method"] == "screen"
    assert "Screened, every one of the" in summary["answer"]["text"]


def test_the_screen_is_the_same_with_two_workers_and_after_a_cancel(
    tiny_adult: Path, tmp_path: Path, screened_run: RunFolder
) -> None:
    spec, table = _release_spec(tiny_adult, "synthpop")
    two = start_run(tmp_path / "two", spec, table, workers=2)
    expected = (screened_run.path / "screen.parquet").read_bytes()
    assert (two.path / "screen.parquet").read_bytes() == expected
    # Cancelled after the first screening chunk, then resumed: the same screen, and the same results.
    folder = _cancelled_after_the_first_chunk(tmp_path / "cancel", spec, table)
    execute(folder, workers=1)
    assert (folder.path / "screen.parquet").read_bytes() == expected
    assert (folder.path / "records.csv").read_bytes() == (screened_run.path / "records.csv").read_bytes()


def _cancelled_after_the_first_chunk(root: Path, spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """A run cancelled once its first screening chunk is checkpointed, before the screen is done."""
    folder = create_run(root, spec, table)
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 1

    execute(folder, workers=1, cancel=cancel)
    assert folder.status()["state"] == "cancelled" and not folder.has_screen()
    return folder


@pytest.mark.parametrize("seed", range(4))
def test_the_vectorised_intervals_equal_auc_ci_column_by_column(seed: int) -> None:
    from privgame.core import metrics
    from privgame.games.screen import column_intervals

    rng = np.random.default_rng(seed)
    k, n = 40, 60
    values = rng.integers(0, 4, size=(k, n)).astype(float)  # many ties
    values[:, :5] = 1.0  # every value tied
    values[:, 5:10] = rng.random((k, 5))
    is_in = rng.random((k, n)) < 0.7
    is_in[:, 10] = np.arange(k) < 1  # a single 'in' dataset: undefined
    values[:, 11] = is_in[:, 11]  # perfect separation: the Wilson bound
    auc, low, high = column_intervals(values, is_in, level=0.97)
    for i in range(n):
        want = metrics.auc_ci(values[:, i], is_in[:, i].astype(np.int8), level=0.97)
        np.testing.assert_allclose((low[i], high[i]), want, rtol=1e-9, atol=1e-12)
        if np.isfinite(want[0]):
            assert auc[i] == pytest.approx(metrics.auc(values[:, i], is_in[:, i].astype(np.int8)))


def test_the_values_attack_adds_its_pair_count_to_the_screen(tiny_adult: Path) -> None:
    from privgame.games.screen import statistic_names, statistic_words

    assert statistic_names(["tapas"]) == STATISTICS
    assert statistic_names(["tapas", "values", "closest"]) == (*STATISTICS, "values")
    assert "values" in statistic_words()
    spec, table = _release_spec(tiny_adult, "identity")
    attack = AttackSettings(
        n_shadow=8, n_eval=8, attacker="leave-one-out", games="model-seeded", attacks=("tapas", "values")
    )
    ctx, _ = build_audit(replace(spec, attack=attack), table)
    chunk = screen_chunk(ctx, spec.screen.swap, 0, 3)
    assert chunk["stats"].shape == (3, len(STATISTICS) + 1, len(ctx.target))
    screened = screen_records(
        chunk["stats"], chunk["out"], ctx.target, spec.threshold, names=statistic_names(ctx.attacks)
    )
    assert set(screened["screen_statistic"]) <= {*STATISTICS, "values"}
    with pytest.raises(ValueError, match="8 statistics but 7 names"):
        screen_records(chunk["stats"], chunk["out"], ctx.target, spec.threshold)


def test_a_resumed_screen_remakes_the_chunks_another_version_counted(
    tiny_adult: Path, tmp_path: Path
) -> None:
    screen = ScreenSettings(mode="all", shadows=30, swap=0.3)
    spec, table = _release_spec(tiny_adult, "identity", screen=screen)
    whole = start_run(tmp_path / "whole", spec, table, workers=1)
    folder = _cancelled_after_the_first_chunk(tmp_path / "cancel", spec, table)
    assert folder.screen_chunk_done(0)
    chunk = folder.load_screen_chunk(0)
    folder.save_screen_chunk(0, {**chunk, "stats": chunk["stats"][:, :5]})  # as if fewer statistics
    execute(folder, workers=1)
    assert (folder.path / "screen.parquet").read_bytes() == (whole.path / "screen.parquet").read_bytes()


def test_the_agreement_says_how_far_the_exact_risks_noise_allows_it() -> None:
    from privgame.games.screen import agreement

    ids = np.arange(12)
    exact_risk = np.linspace(0.70, 0.92, 12)
    exact = pd.DataFrame(
        {
            "record_id": ids,
            "risk_model_seeded": exact_risk,
            "risk_model_seeded_low": exact_risk - 0.1,
            "risk_model_seeded_high": exact_risk + 0.1,
        }
    )
    screened = pd.DataFrame(
        {
            "record_id": ids,
            "screen_risk": exact_risk[::-1],
            "screen_low": exact_risk[::-1] - 0.2,
            "screen_high": exact_risk[::-1] + 0.05,
        }
    )
    check = agreement(screened, exact, 0.8, np.full(12, "undecided", dtype=object))
    assert check["spearman"] == pytest.approx(-1.0)
    # Spread 0.071, noise 0.1 / 1.96 = 0.051 a record: a reliability of about 0.5.
    assert 0.6 < check["spearman_ceiling"] < 0.8
    assert "own estimation noise alone would hold the rank correlation to about 0.7" in check["note"]
    without = agreement(screened, exact[["record_id", "risk_model_seeded"]], 0.8, np.full(12, "undecided"))
    assert without["spearman_ceiling"] is None and "noise" not in without["note"]


def test_a_weak_agreement_names_its_spearman_once_in_the_sentence() -> None:
    from privgame.games.screen import summarise_screen

    ids = np.arange(12)
    risk = np.linspace(0.70, 0.92, 12)
    screened = pd.DataFrame(
        {
            "record_id": ids,
            "screen_risk": risk[::-1],
            "screen_low": risk[::-1] - 0.2,
            "screen_high": risk[::-1],
        }
    )
    sample = pd.DataFrame({"record_id": ids, "risk_model_seeded": risk})
    text = summarise_screen(screened, sample, np.full(12, "undecided", dtype=object), 0.8)["text"]
    assert "rank alike only weakly" in text
    assert text.count("Spearman") == 1, text
