"""The pooled traditional game: exact pool datasets, only used ones trained, determinism, resume."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import small_spec
from same_runs import assert_same_runs

from privgame.cli.main import main
from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.games import context, pool
from privgame.games.engine import build_context, execute, extend, plan_summary, start_run
from privgame.games.preflight import create_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.store.folders import RunFolder

RESULT_FILES = ("records.csv", "scores.parquet", "summary.json")


def _spec(path: Path, traditional: str = "pooled", **kwargs: object) -> tuple[RunSpec, pd.DataFrame]:
    attack = AttackSettings(n_shadow=20, n_eval=20, traditional=traditional)  # type: ignore[arg-type]
    return small_spec(path, **{"attack": attack, **kwargs})


def _same_results(a: RunFolder, b: RunFolder, *, modes_differ: bool = False) -> None:
    """Byte-identical result files; ``modes_differ``: the summaries differ only in naming the mode."""
    for name in RESULT_FILES:
        if modes_differ and name == "summary.json":
            left, right = a.summary(), b.summary()
            assert left.pop("setup_text") != right.pop("setup_text")  # "pooled" against "per record"
            assert left == right
            continue
        assert (a.path / name).read_bytes() == (b.path / name).read_bytes(), name


# ---- the pool itself ---------------------------------------------------------------------------


def test_pool_datasets_are_uniform_subsets_of_d_eval(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    ctx, _ = build_context(spec, table)
    pool_size = 400
    counts = pd.Series(0, index=ctx.eval_pool)
    for i in range(pool_size):
        rows, _ = pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, i)
        assert len(rows) == ctx.n == 60
        assert len(np.unique(rows)) == ctx.n  # drawn without replacement
        assert np.isin(rows, ctx.eval_pool).all()
        counts[rows] += 1
    # Each row of D_eval is in a pool dataset with probability |D| / |D_eval| = 0.1.
    p = ctx.n / len(ctx.eval_pool)
    expected = pool_size * p
    assert counts.mean() == pytest.approx(expected)
    # Pearson's statistic over the 600 rows, with the binomial variance: about chi-square(599)
    # (sd 35); a biased draw (rows favoured by position, or with replacement) moves it far off.
    statistic = float(((counts - expected) ** 2).sum() / (expected * (1 - p)))
    assert abs(statistic - (len(counts) - 1)) < 6 * math.sqrt(2 * (len(counts) - 1))
    assert counts.min() > 0
    # Indexed: dataset i is the same whenever it is drawn.
    again, _ = pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, 17)
    first, _ = pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, 17)
    assert np.array_equal(again, first)


def test_a_targets_in_datasets_are_the_first_that_contain_it_and_its_out_datasets_the_first_that_do_not(
    small_adult: Path,
) -> None:
    spec, table = _spec(small_adult, targets=TargetSelection("random", 5))
    ctx, targets = build_context(spec, table)
    plan = pool.plan_pool(ctx, targets, 20)
    assert plan.half == 10 and (plan.in_ids >= 0).all() and (plan.out_ids >= 0).all()
    members = np.array(
        [np.isin(targets, pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, i)[0]) for i in range(plan.scanned)]
    )
    for row, x in enumerate(targets):
        ins, outs = plan.runs(int(x))
        assert np.array_equal(ins, np.flatnonzero(members[:, row])[:10])
        assert np.array_equal(outs, np.flatnonzero(~members[:, row])[:10])
        for i in ins:
            assert x in pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, int(i))[0]
        for i in outs:
            assert x not in pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, int(i))[0]
    # The scan stops at the first dataset that completes every target.
    last = plan.scanned - 1
    assert max(plan.in_ids.max(), plan.out_ids.max()) == last
    # A target's plan does not depend on the other targets.
    alone = pool.plan_pool(ctx, targets[:1], 20)
    assert np.array_equal(alone.runs(int(targets[0]))[0], plan.runs(int(targets[0]))[0])
    # Only used datasets are counted, once each.
    used = np.union1d(plan.in_ids.ravel(), plan.out_ids.ravel())
    assert plan.fits() == len(used) <= plan.scanned
    assert plan.fits() < 2 * plan.half * len(targets)


def test_a_target_short_of_pool_datasets_gets_its_own_draws(small_adult: Path) -> None:
    spec, table = _spec(small_adult)
    ctx, targets = build_context(spec, table)
    plan = pool.plan_pool(ctx, targets, 20, limit=30)  # about 3 'in' datasets each in 30
    for x in targets:
        ins, outs = plan.runs(int(x))
        found = np.flatnonzero(ins >= 0)
        assert np.array_equal(found, np.arange(len(found)))  # pool datasets first, then draws
        assert (ins[len(found) :] == pool.EXTRA).all() and len(found) < 10
        assert plan.extra_streams(int(x))[0] == len(found)
        assert plan.extra_fits(int(x)) == (ins < 0).sum() + (outs < 0).sum()
    with pytest.raises(ParameterError, match="not in the evaluation pool"):
        pool.plan_pool(ctx, [int(ctx.aux[0])], 20)


def test_features_are_packed_exactly() -> None:
    rng = np.random.default_rng(0)
    for row in (
        rng.integers(0, 60, 511).astype(np.float32),
        rng.integers(0, 200_000, 511).astype(np.float32),
        rng.normal(size=511).astype(np.float32),
        np.zeros(7, dtype=np.float32),
    ):
        code, data = pool.pack_features(row)
        back = pool.unpack_features(code, data)
        assert back.dtype == np.float32 and np.array_equal(back, row)
    assert pool.pack_features(np.arange(5, dtype=np.float32))[0] == 1  # 16-bit counts


def test_expected_pool_fits_is_close_to_the_exact_count(small_adult: Path) -> None:
    spec, table = _spec(small_adult, targets=TargetSelection("random", 20), seed=11)
    guess = plan_summary(spec, 20)  # no table, and no context built for this spec yet
    exact = plan_summary(spec, 20, table=table)
    assert exact["exact"] and not guess["exact"]
    assert abs(guess["pool_fits"] - exact["pool_fits"]) <= 0.15 * exact["pool_fits"]
    assert guess["text"].startswith("about ")
    # Once this process built the spec's context (as the dashboard does), the count is exact.
    again = plan_summary(spec, 20)
    assert again["exact"] and again["total_fits"] == exact["total_fits"]


def test_expected_extra_fits_is_close_to_the_per_target_draws_of_a_short_pool(small_adult: Path) -> None:
    # p = |D| / |D_eval| = 0.1: after 80 pool datasets a target has about 8 'in' ones of the 10
    # it needs, so most targets fall short and get per-target draws.
    spec, table = _spec(small_adult, targets=TargetSelection("random", 60), seed=5)
    ctx, targets = build_context(spec, table)
    plan = pool.plan_pool(ctx, targets, spec.attack.n_eval, limit=80)
    exact = sum(plan.extra_fits(int(r)) for r in targets)
    guess = pool.expected_extra_fits(60, 600, spec.attack.n_eval, len(targets), limit=80)
    assert exact > 0 and abs(guess - exact) <= 0.2 * exact
    assert pool.expected_extra_fits(60, 600, spec.attack.n_eval, len(targets)) == 0  # the full pool


def test_a_very_large_plan_is_estimated_without_scanning_the_pool(
    small_adult: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, table = _spec(small_adult, targets=TargetSelection("random", 20))
    monkeypatch.setattr(context, "EXACT_POOL_PAIRS", 20 * spec.attack.n_eval - 1)

    def no_scan(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pool was scanned")

    monkeypatch.setattr(pool, "plan_pool", no_scan)
    summary = plan_summary(spec, 20, table=table)
    assert not summary["exact"] and summary["text"].startswith("about ") and summary["pool_fits"] > 0


# ---- runs --------------------------------------------------------------------------------------


def test_only_used_pool_datasets_are_trained_and_the_plan_counts_every_fit(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, table = _spec(small_adult)
    ctx, targets = build_context(spec, table)
    plan = pool.plan_pool(ctx, targets, spec.attack.n_eval)
    trained: list[bytes] = []
    real = pool.synthesise

    def counting(ctx_: object, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        trained.append(np.sort(rows).tobytes())
        return real(ctx_, rows, rng)  # type: ignore[arg-type]

    monkeypatch.setattr(pool, "synthesise", counting)
    folder = create_run(tmp_path, spec, table)
    # Small model-seeded chunks: Synthpop's deterministic fit on D is still made once.
    folder.write_status(unit_plan={"shadow_out": 3, "ms_in": 2, "targets": 1})
    execute(folder, workers=1)
    used = np.union1d(plan.in_ids.ravel(), plan.out_ids.ravel())
    expected = {np.sort(pool.pool_rows(ctx.seed, ctx.eval_pool, ctx.n, int(i))[0]).tobytes() for i in used}
    assert len(trained) == len(set(trained)) == plan.fits()
    assert set(trained) == expected
    status = folder.status()
    summary = plan_summary(spec, len(targets), table=table)
    assert status["fits_total"] == status["fits_done"] == summary["total_fits"]
    assert status["pool"]["pool_fits"] == summary["pool_fits"] == plan.fits()
    for x in targets:
        data = folder.load_target(int(x))
        ins, outs = plan.runs(int(x))
        assert np.array_equal(data["t_pool_index"], np.concatenate([ins, outs]))


def test_a_pool_that_holds_nothing_plays_the_per_target_game_exactly(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run is then the target's own draw: the per-target game's streams, byte for byte."""
    spec, table = _spec(small_adult)
    per_target = start_run(
        tmp_path / "a", replace(spec, attack=replace(spec.attack, traditional="per-target")), table, workers=1
    )
    monkeypatch.setattr(pool, "POOL_LIMIT", 0)
    pooled = start_run(tmp_path / "b", spec, table, workers=1)
    _same_results(pooled, per_target, modes_differ=True)
    assert pooled.status()["pool"]["pool_fits"] == 0
    assert pooled.status()["fits_total"] == per_target.status()["fits_total"]


def test_results_do_not_depend_on_workers_or_units(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, table = _spec(small_adult)
    one = start_run(tmp_path / "a", spec, table, workers=1)
    monkeypatch.setattr(pool, "MIN_UNIT_SECONDS", 1e-9)  # a pool unit per dataset
    two = start_run(tmp_path / "b", spec, table, workers=2)
    _same_results(one, two)
    assert len(two.pool_names()) > len(one.pool_names()) >= 1
    pd.testing.assert_frame_equal(one.scores(), two.scores())


def test_a_record_gets_the_same_pooled_risk_whichever_records_are_audited_with_it(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = _spec(small_adult)
    together = start_run(tmp_path / "a", spec, table, workers=1).records()
    record_id = int(together["record_id"].iloc[2])
    alone_spec, _ = _spec(small_adult, targets=TargetSelection("ids", None, (record_id,)))
    alone = start_run(tmp_path / "b", alone_spec, table, workers=1).records()
    assert alone["risk_traditional"].iloc[0] == together["risk_traditional"].iloc[2]


def test_pooled_and_per_target_scores_have_the_same_distribution(small_adult: Path, tmp_path: Path) -> None:
    """Each target's classifier is the same in both games (same attack streams), so its scores on
    the pooled and on the per-target evaluation datasets are two samples of one distribution, role
    by role. A pool that mislabelled membership would move the 'in' scores towards the 'out'
    ones (the traditional risks here are well above 1/2)."""
    attack = AttackSettings(n_shadow=40, n_eval=120)
    targets = TargetSelection("random", 6)
    spec, table = _spec(small_adult, attack=attack, targets=targets)
    pooled = start_run(tmp_path / "a", spec, table, workers=2)
    per_target = start_run(
        tmp_path / "b", replace(spec, attack=replace(attack, traditional="per-target")), table, workers=2
    )
    a, b = pooled.records(), per_target.records()
    assert a["risk_model_seeded"].tolist() == b["risk_model_seeded"].tolist()  # the same attacks
    assert b["risk_traditional"].mean() > 0.58
    # Pooled against per-target scores, role by role: AUC 1/2 when they are alike (sd about 0.05
    # each, so about 0.02 for a role's mean over the 6 targets).
    aucs: dict[int, list[float]] = {1: [], 0: []}
    for x in a["record_id"]:
        mine, theirs = pooled.load_target(int(x)), per_target.load_target(int(x))
        for label in (1, 0):
            left = mine["t_scores"][mine["t_labels"] == label]
            right = theirs["t_scores"][theirs["t_labels"] == label]
            scores = np.concatenate([left, right])
            aucs[label].append(metrics.auc(scores, np.repeat([1, 0], [len(left), len(right)])))
    for label in (1, 0):
        assert abs(np.mean(aucs[label]) - 0.5) < 0.08
        assert max(abs(v - 0.5) for v in aucs[label]) < 0.25
    # And the risks: the same per-record quantity, estimated twice (each sd about 0.04).
    difference = a["risk_traditional"].to_numpy() - b["risk_traditional"].to_numpy()
    assert abs(difference.mean()) < 0.08
    assert np.sqrt(np.mean(difference**2)) < 0.15


def test_extending_a_pooled_run_equals_the_run_made_at_the_larger_n_eval(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short pool, so that targets need their own draws too, at both N_eval.
    monkeypatch.setattr(pool, "POOL_LIMIT", 60)
    spec, table = _spec(small_adult, attack=AttackSettings(n_shadow=20, n_eval=8))
    extended = start_run(tmp_path / "a", spec, table, workers=1)
    everyone = [int(r) for r in extended.records()["record_id"]]
    extend(extended, 16, record_ids=everyone, workers=2)
    wider, _ = _spec(small_adult, attack=AttackSettings(n_shadow=20, n_eval=16))
    fresh = start_run(tmp_path / "b", wider, table, workers=1)
    assert_same_runs(extended, fresh)
    index = [extended.load_target(r)["t_pool_index"] for r in everyone]
    assert all(
        np.array_equal(i, fresh.load_target(r)["t_pool_index"]) for i, r in zip(index, everyone, strict=True)
    )
    assert any((i >= 0).any() and (i < 0).any() for i in index)


def test_a_cancelled_pooled_run_resumes_to_identical_results_and_recomputes_a_damaged_unit(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "MIN_UNIT_SECONDS", 1e-9)  # a pool unit per dataset
    spec, table = _spec(small_adult)
    reference = start_run(tmp_path / "ref", spec, table, workers=1)
    folder = create_run(tmp_path / "runs", spec, table)
    execute(folder, workers=1, cancel=lambda: len(folder.pool_names()) >= 3)
    assert folder.status()["state"] == "cancelled" and not folder.has_results()
    done = folder.pool_names()
    assert len(done) == 3
    damaged = folder.path / "pool" / f"{done[0]}.npz"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert folder.load_pool(done[0]) is None
    seen = []
    execute(folder, workers=2, progress=seen.append)
    _same_results(folder, reference)
    assert folder.load_pool(done[0]) is not None  # recomputed
    assert seen[-1].fits_done == seen[-1].fits_total == reference.status()["fits_total"]


# ---- the option ---------------------------------------------------------------------------------


def test_specs_written_before_pooling_read_as_per_target_and_bad_values_are_refused(
    small_adult: Path,
) -> None:
    spec, _ = _spec(small_adult)
    assert AttackSettings().traditional == "pooled"
    old = spec.to_dict()
    del old["attack"]["traditional"]
    assert RunSpec.from_dict(old).attack.traditional == "per-target"
    assert RunSpec.from_json(spec.to_json()) == spec
    with pytest.raises(ValueError, match="--traditional 'both' is unknown"):
        replace(spec, attack=replace(spec.attack, traditional="both")).validate()  # type: ignore[arg-type]


def test_the_run_command_takes_traditional(
    small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--data", str(small_adult), "--generator", "synthpop", "--setup", "paper"]
    args += ["--size", "60", "--eval-size", "300"]
    args += ["--targets", "2", "--n-shadow", "8", "--n-eval", "8", "--workers", "1", "--out", str(tmp_path)]
    assert main([*args, "--traditional", "sometimes"]) == 2
    assert "--traditional 'sometimes' is unknown" in capsys.readouterr().err
    assert main([*args, "--traditional", "per-target", "--quiet"]) == 0
    (folder,) = [RunFolder(p) for p in tmp_path.iterdir() if p.is_dir()]
    assert folder.spec().attack.traditional == "per-target" and not folder.pool_names()
    assert main([*args]) == 0
    err = capsys.readouterr().err
    assert "for the traditional game's pool of datasets" in err


def test_study_jobs_play_the_per_target_game(small_adult: Path) -> None:
    from privgame.studies import StudySpec, plan_jobs

    spec, _ = _spec(small_adult)
    study = StudySpec(study="epsilon", base=replace(spec, generator="privbayes"), epsilons=(1.0,))
    assert [job.spec.attack.traditional for job in plan_jobs(study)] == ["per-target"]
