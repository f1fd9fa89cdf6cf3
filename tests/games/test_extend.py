"""More evaluation runs where the verdict is undecided: exact extension, and --resolve-to."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from same_runs import assert_same_runs

from privgame.cli.main import main
from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import extend, start_run, undecided_records
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import AuditInputs, release_inputs
from privgame.store.folders import RunFolder

RESULT_FILES = ("records.csv", "scores.parquet", "summary.json", "spec.json")


@pytest.fixture(scope="module")
def owner_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("extend") / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=600).dropna().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def inputs(owner_csv: Path) -> AuditInputs:
    return release_inputs(load_dataset(owner_csv), seed=1)


def _spec(inputs: AuditInputs, n_eval: int) -> RunSpec:
    return RunSpec(
        data_name="owner.csv",
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator="baynet",
        attack=AttackSettings(n_shadow=8, n_eval=n_eval),
        targets=TargetSelection.plan(outliers=2, random=2),
        seed=1,
        setup=inputs.setup,
    )


def test_extending_every_record_equals_the_run_made_at_the_larger_n_eval(
    inputs: AuditInputs, tmp_path: Path
) -> None:
    extended = start_run(tmp_path / "a", _spec(inputs, 8), inputs.table, workers=1)
    everyone = [int(r) for r in extended.records()["record_id"]]
    result = extend(extended, 16, record_ids=everyone, workers=2)
    assert result["extended"] == everyone
    fresh = start_run(tmp_path / "b", _spec(inputs, 16), inputs.table, workers=1)
    assert_same_runs(extended, fresh)
    assert set(extended.records()["n_eval"]) == {16}


def test_extending_some_records_leaves_the_others_and_the_spec_alone(
    inputs: AuditInputs, tmp_path: Path
) -> None:
    folder = start_run(tmp_path, _spec(inputs, 8), inputs.table, workers=1)
    before = folder.records().set_index("record_id")
    chosen = [int(before.index[0])]
    result = extend(folder, 12, record_ids=chosen, workers=1)
    after = folder.records().set_index("record_id")
    # 12 asked goes to the nearest rung of the doubling ladder: 16, one doubling, one more look.
    assert result["requested"] == 12 and result["n_eval"] == 16
    assert after.loc[chosen[0], "n_eval"] == 16 and after.loc[chosen[0], "looks"] == 2
    others = [r for r in after.index if r != chosen[0]]
    assert (after.loc[others, "n_eval"] == 8).all()
    pd.testing.assert_frame_equal(after.loc[others], before.loc[others].assign(n_eval=8), check_like=True)
    assert folder.spec().attack.n_eval == 8
    # Nothing is played twice: the first 4 runs of each role are the ones already made.
    scores = folder.scores()
    mine = scores[(scores["record_id"] == chosen[0]) & (scores["game"] == "model_seeded")]
    assert len(mine) == 16
    # Two doublings in one step count two looks, as if it had stopped on the rung between.
    extend(folder, 64, record_ids=chosen, workers=1)
    assert folder.records().set_index("record_id").loc[chosen[0], ["n_eval", "looks"]].tolist() == [64, 4]


def test_extend_refuses_bad_requests(inputs: AuditInputs, tmp_path: Path) -> None:
    folder = start_run(tmp_path, _spec(inputs, 8), inputs.table, workers=1)
    with pytest.raises(ParameterError, match="even whole number"):
        extend(folder, 13)
    with pytest.raises(ParameterError, match="were not audited"):
        extend(folder, 16, record_ids=[10**6])


def test_undecided_records_follow_the_three_way_verdict(inputs: AuditInputs, tmp_path: Path) -> None:
    folder = start_run(tmp_path, _spec(inputs, 8), inputs.table, workers=1)
    records = folder.records()
    verdict = metrics.verdicts(records["risk_model_seeded_low"], records["risk_model_seeded_high"], 0.8)
    assert undecided_records(folder) == [int(r) for r in records.loc[verdict == "undecided", "record_id"]]
    assert undecided_records(folder, 1.0) == []  # every upper bound is at or below 1


def _run_args(owner_csv: Path, out: Path) -> list[str]:
    args = ["run", "--data", str(owner_csv), "--generator", "baynet", "--outliers", "2", "--random", "2"]
    args += [
        "--n-shadow",
        "8",
        "--n-eval",
        "8",
        "--seed",
        "1",
        "--workers",
        "1",
        "--quiet",
        "--screen",  # these tests follow the exact game's extensions alone
        "none",
        "--out",
        str(out),
    ]
    return args


def _run(owner_csv: Path, out: Path, *extra: str) -> RunFolder:
    assert main([*_run_args(owner_csv, out), *extra]) == 0
    (folder,) = [RunFolder(p) for p in out.iterdir() if p.is_dir()]
    return folder


def test_resolve_to_stops_when_nothing_is_undecided(
    owner_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if every verdict of the first pass were decided (t = 1 did that before t had to lie
    # strictly below 1).
    monkeypatch.setattr("privgame.games.engine.undecided_records", lambda folder, threshold=None: [])
    folder = _run(owner_csv, tmp_path, "--resolve-to", "32")
    assert folder.status().get("extensions") is None
    assert set(folder.records()["n_eval"]) == {8}


def test_resolve_to_doubles_until_the_cap(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _run(owner_csv, tmp_path, "--resolve-to", "24")
    passes = folder.status().get("extensions") or []
    assert [p["n_eval"] for p in passes] == [16, 24][: len(passes)]
    assert passes, "a tiny audit at N_eval = 8 leaves records undecided"
    runs = folder.records().set_index("record_id")["n_eval"]
    undecided = set(undecided_records(folder))
    assert all(runs[r] == passes[-1]["n_eval"] for r in undecided)
    assert "resolved" in capsys.readouterr().err
    # Each pass a record took part in is one more look at its verdict, at a stricter level.
    looks = folder.records().set_index("record_id")["looks"]
    for record_id in looks.index:
        taken = 1 + sum(record_id in p["extended"] for p in passes)
        assert looks[record_id] == taken


def test_an_interrupted_resolve_to_resumes_its_passes_to_the_same_results(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The passes extend some records only (the run's N_eval stays 8): resuming must skip a
    # finished pass. At N_shadow = N_eval = 8 the attack's training noise leaves every record
    # undecided, so a record reads as decided here, in every run of the test alike.
    from privgame.games import engine

    real_undecided = engine.undecided_records

    def all_but_the_first(folder: RunFolder, threshold: float | None = None) -> list[int]:
        return real_undecided(folder, threshold)[1:]

    monkeypatch.setattr(engine, "undecided_records", all_but_the_first)
    extra = ["--threshold", "0.99", "--resolve-to", "24"]
    whole = _run(owner_csv, tmp_path / "whole", *extra)
    passes = whole.status().get("extensions") or []
    assert [p["n_eval"] for p in passes] == [16, 24]
    assert len(passes[0]["extended"]) < 4 and whole.spec().attack.n_eval == 8
    capsys.readouterr()
    # Ctrl-C in the last pass, as its first record's new runs are about to be checkpointed.
    real_extend, real_save = engine.extend, RunFolder.save_target
    extending: list[bool] = []

    def spy_extend(*args: object, **kwargs: object) -> dict[str, object]:
        extending.append(True)
        return real_extend(*args, **kwargs)  # type: ignore[arg-type]

    def save_then_interrupt(self: RunFolder, record_id: int, arrays: dict[str, np.ndarray]) -> None:
        if len(extending) == len(passes):
            raise KeyboardInterrupt
        real_save(self, record_id, arrays)

    with monkeypatch.context() as interrupting:
        interrupting.setattr(engine, "extend", spy_extend)
        interrupting.setattr(RunFolder, "save_target", save_then_interrupt)
        out = tmp_path / "interrupted"
        assert main([*_run_args(owner_csv, out), *extra]) == 130
    (folder,) = [RunFolder(p) for p in out.iterdir() if p.is_dir()]
    command = capsys.readouterr().err.split("Resume it with: ", 1)[1].splitlines()[0]
    assert command == f"python -m privgame resume {shlex.quote(str(folder.path))} --workers 1 --resolve-to 24"
    assert len(folder.status()["extensions"]) == len(passes) - 1  # the last pass did not finish

    assert main([*shlex.split(command)[3:], "--quiet"]) == 0
    assert "records got more runs" in capsys.readouterr().err
    for name in RESULT_FILES:
        assert (folder.path / name).read_bytes() == (whole.path / name).read_bytes(), name
    assert [p["n_eval"] for p in folder.status()["extensions"]] == [16, 24]
    # Resuming again asks for nothing more.
    assert main([*shlex.split(command)[3:], "--quiet"]) == 0
    assert len(folder.status()["extensions"]) == len(passes)


def test_a_cancelled_resolve_to_pass_says_how_to_go_on(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from privgame.games import engine

    def cancelled(*args: object, **kwargs: object) -> dict[str, object]:
        return {"cancelled": True}  # as a cancel request from the dashboard ends a pass

    monkeypatch.setattr(engine, "extend", cancelled)
    assert main([*_run_args(owner_csv, tmp_path), "--resolve-to", "24"]) == 3
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    expected = f"python -m privgame resume {shlex.quote(str(folder))} --workers 1 --resolve-to 24"
    assert f"cancelled; continue with: {expected}" in capsys.readouterr().err


def test_resume_refuses_a_bad_resolve_to(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _run(owner_csv, tmp_path)
    assert main(["resume", str(folder.path), "--resolve-to", "13"]) == 2
    assert "--resolve-to must be an even number from 4" in capsys.readouterr().err
    assert main(["resume", str(folder.path), "--resolve-to", "8", "--quiet"]) == 0  # nothing to add
    assert folder.status().get("extensions") is None


def test_resolve_to_must_exceed_n_eval(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "--data",
            str(owner_csv),
            "--generator",
            "baynet",
            "--n-eval",
            "8",
            "--resolve-to",
            "8",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2 and "--resolve-to must be an even number above" in capsys.readouterr().err


def test_the_extend_command(owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _run(owner_csv, tmp_path)
    assert main(["extend", str(folder.path), "--n-eval", "12", "--all", "--quiet", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "N_eval 16 (12 asked, rounded to the doubling ladder" in out and "4 records got more runs" in out
    assert set(folder.records()["n_eval"]) == {16} and folder.spec().attack.n_eval == 16
    assert np.isfinite(folder.records()["risk_model_seeded"]).all()


def test_a_cancelled_extension_keeps_the_results_of_before(inputs: AuditInputs, tmp_path: Path) -> None:
    folder = start_run(tmp_path, _spec(inputs, 8), inputs.table, workers=1)
    before = (folder.path / "records.csv").read_bytes()
    everyone = [int(r) for r in folder.records()["record_id"]]
    result = extend(folder, 16, record_ids=everyone, workers=1, cancel=lambda: True)
    assert result["cancelled"] is True
    status = folder.status()
    assert status["state"] == "done"
    assert status.get("extending") is None
    assert (folder.path / "records.csv").read_bytes() == before
    # The next extension finishes the job, with the same runs as a run made at 16.
    extend(folder, 16, record_ids=everyone, workers=1)
    fresh = start_run(tmp_path / "fresh", _spec(inputs, 16), inputs.table, workers=1)
    assert_same_runs(folder, fresh)


def test_the_dashboard_extension_runs_in_the_background(inputs: AuditInputs, tmp_path: Path) -> None:
    import time

    from privgame.runs.background import launch_extend

    folder = start_run(tmp_path, _spec(inputs, 8), inputs.table, workers=1)
    with pytest.raises(ParameterError, match="already has 8 evaluation runs"):
        launch_extend(folder, n_eval=8)
    with pytest.raises(ParameterError, match="even whole number"):
        launch_extend(folder, n_eval=13)
    launch_extend(folder, n_eval=12, threshold=0.51, workers=1)
    assert folder.status()["extending"]["n_eval"] == 12
    deadline = time.time() + 240
    while folder.status().get("extending") and time.time() < deadline:
        time.sleep(0.5)
    status = folder.status()
    assert status.get("extending") is None, (folder.path / "engine.log").read_text()
    assert status["state"] == "done"
    assert status["extensions"][-1]["n_eval"] == 16  # 12 asked: the nearest rung of the ladder


@pytest.mark.parametrize("after", ["ctrl-c", "kill -9"])
@pytest.mark.parametrize("how", ["extend", "resume"])
def test_an_interrupted_extend_resumes_as_it_says_to_the_uninterrupted_bytes(
    owner_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    after: str,
    how: str,
) -> None:
    whole = _run(owner_csv, tmp_path / "whole")
    assert main(["extend", str(whole.path), "--n-eval", "16", "--all", "--quiet", "--workers", "1"]) == 0
    folder = _run(owner_csv, tmp_path / "cut")
    capsys.readouterr()
    real_save = RunFolder.save_target
    saved: list[int] = []

    def save_then_interrupt(self: RunFolder, record_id: int, arrays: dict[str, np.ndarray]) -> None:
        real_save(self, record_id, arrays)
        saved.append(record_id)
        if len(saved) == 2:  # two of the four records have their new runs
            raise KeyboardInterrupt

    monkeypatch.setattr(RunFolder, "save_target", save_then_interrupt)
    assert main(["extend", str(folder.path), "--n-eval", "16", "--all", "--quiet", "--workers", "1"]) == 130
    monkeypatch.undo()
    command = capsys.readouterr().err.split("Resume it with: ", 1)[1].splitlines()[0]
    assert command.startswith("python -m privgame extend ")
    assert folder.status()["state"] == "done"  # the results of before still stand
    assert set(folder.records()["n_eval"]) == {8}
    if after == "kill -9":  # the process died with the run marked running and nobody holding it
        folder.write_status(state="running")
    if how == "extend":
        assert main([*shlex.split(command)[3:], "--quiet"]) == 0
    else:
        assert main(["resume", str(folder.path), "--workers", "1", "--quiet"]) == 0
        assert "records got more runs" in capsys.readouterr().err
    assert folder.status()["state"] == "done" and not folder.status().get("extension")
    for name in RESULT_FILES:
        assert (folder.path / name).read_bytes() == (whole.path / name).read_bytes(), name
