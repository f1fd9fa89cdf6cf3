"""The paper's studies end to end at a tiny scale: CLI, study folders, tables, figures, resume.

Every study runs on 600 rows of Adult with N_shadow = N_eval = 8 and one worker (in-process, no
worker start-up), with the ``marginals`` generator (and PrivBayes for the epsilon study), so the
whole file takes a few seconds.
"""

from __future__ import annotations

import json
import math
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from builders import at_once

from privgame.cli.main import main
from privgame.core import metrics
from privgame.core.errors import ParameterError, RunError, SizeError
from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import start_run
from privgame.outputs.study_figures import study_chart, write_png
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.store.folders import RunFolder
from privgame.studies import (
    StudyFolder,
    StudySpec,
    create_study,
    estimation_noise,
    execute_study,
    list_studies,
    open_study,
    plan_jobs,
    studies_dir,
    study_cost,
    study_results,
)

TINY = ["--n-shadow", "8", "--workers", "1", "--quiet", "--aux-size", "300", "--eval-size", "300"]


def _study(name: str, data: Path, out: Path, *options: str) -> int:
    """``python -m privgame study NAME`` at the tiny scale (N_eval 8 unless the study sets it)."""
    n_eval = [] if name == "convergence" else ["--n-eval", "8"]
    return main(["study", name, "--data", str(data), *options, *n_eval, "--out", str(out), *TINY])


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(600)
    path = tmp_path_factory.mktemp("data") / "adult600.csv"
    table.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def dataset(adult_csv: Path):
    return load_dataset(adult_csv)


def _base(dataset, generator: str = "marginals", **kwargs: object) -> RunSpec:
    options: dict[str, object] = {
        "attack": AttackSettings(n_shadow=8, n_eval=8),
        "targets": TargetSelection("random", 2),
        "seed": 5,
    }
    options.update(kwargs)
    return RunSpec(
        data_name="adult600.csv",
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes={"aux": 300, "eval": 300, "target": 40},
        generator=generator,
        **options,  # type: ignore[arg-type]
    )


def _only_study(out: Path) -> StudyFolder:
    found = list_studies(out)
    assert len(found) == 1
    return StudyFolder(found[0].path)


def _outputs(folder: StudyFolder) -> pd.DataFrame:
    assert folder.status()["state"] == "done"
    for name in ("table.csv", "points.csv", "figure.html", "study.json"):
        assert (folder.path / name).stat().st_size > 0
    assert "plotly" in (folder.path / "figure.html").read_text()
    return pd.read_csv(folder.path / "table.csv")


# -- each study from the command line -------------------------------------------------------


def test_size_study_from_the_cli(adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = _study(
        "size", adult_csv, tmp_path, "--generator", "marginals", "--sizes", "20", "40", "80", "--targets", "3"
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert "root mean squared difference" in printed
    folder = _only_study(tmp_path)
    table = _outputs(folder)
    assert table["size"].tolist() == [20, 40, 80]
    assert table["records"].tolist() == [3, 3, 3]
    assert ((table["rmsd"] >= 0) & (table["rmsd"] <= 1)).all()
    assert (table["rmsd_noise"] > 0).all()
    expected = np.sqrt(np.maximum(table["rmsd"] ** 2 - table["rmsd_noise"] ** 2, 0))
    assert np.allclose(table["rmsd_corrected"], expected)
    points = pd.read_csv(folder.path / "points.csv")
    assert len(points) == 9
    # The same records at every size, and nested datasets D_20 < D_40 < D_80 drawn from one split.
    ids = folder.spec().target_ids
    assert len(ids) == 3
    assert all(sorted(points.loc[points["size"] == n, "record_id"]) == sorted(ids) for n in (20, 40, 80))
    chart = study_chart(folder.spec(), study_results(folder))
    assert isinstance(chart.figure, go.Figure)
    assert list(chart.data["size"]) == [20, 40, 80]
    assert chart.caption.endswith(".")


def test_a_size_study_against_the_leave_one_out_attacker_plays_the_model_seeded_game(
    adult_csv: Path, tmp_path: Path
) -> None:
    status = _study(
        "size", adult_csv, tmp_path, "--generator", "marginals", "--sizes", "20", "40", "--targets", "2",
        "--attacker", "leave-one-out",
    )  # fmt: skip
    assert status == 0
    folder = _only_study(tmp_path)
    assert folder.spec().base.attack.attacker == "leave-one-out"
    table = _outputs(folder)
    assert table["records"].tolist() == [2, 2]
    assert table["mean_model_seeded"].between(0, 1).all()
    assert table["mean_traditional"].isna().all() and table["rmsd"].isna().all()


def test_epsilon_study_from_the_cli(adult_csv: Path, tmp_path: Path) -> None:
    status = _study(
        "epsilon", adult_csv, tmp_path, "--epsilons", "inf", "10", "0.5", "--size", "40", "--targets", "2"
    )
    assert status == 0
    folder = _only_study(tmp_path)
    table = _outputs(folder)
    assert [str(v) for v in table["epsilon"]] == ["inf", "10.0", "0.5"]
    run_specs = [RunFolder(folder.path / "runs" / job.key).spec() for job in plan_jobs(folder.spec())]
    assert [s.generator_params["epsilon"] for s in run_specs] == [math.inf, 10.0, 0.5]
    assert {s.generator for s in run_specs} == {"privbayes"}
    chart = study_chart(folder.spec(), study_results(folder))
    assert len(chart.data) == 6  # 2 records x 3 budgets
    assert "ε = ∞" in chart.caption


def test_an_mst_epsilon_study_draws_each_budget_s_proven_cap(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from privgame.data.domain import domain_template
    from privgame.generators.mst import risk_cap

    domain = tmp_path / "domain.json"
    template = domain_template(load_dataset(adult_csv).schema)
    domain.write_text(template if isinstance(template, str) else json.dumps(template))
    options = ["--generator", "mst", "--epsilons", "inf", "0.5", "--size", "40", "--targets", "2"]
    assert _study("epsilon", adult_csv, tmp_path, *options, "--domain", str(domain)) == 0
    folder = _only_study(tmp_path)
    run_specs = [RunFolder(folder.path / "runs" / job.key).spec() for job in plan_jobs(folder.spec())]
    assert {s.generator for s in run_specs} == {"mst"}
    chart = study_chart(folder.spec(), study_results(folder))
    (cap,) = [trace for trace in chart.figure.data if trace.name == "cap proven by DP"]
    assert list(cap.x) == ["ε = 0.5"] and list(cap.y) == [pytest.approx(risk_cap(0.5))]  # none at ∞
    assert "MST privacy budget" in chart.figure.layout.xaxis.title.text and "green bars" in chart.caption
    capsys.readouterr()
    assert _study("epsilon", adult_csv, tmp_path / "x", "--generator", "mst", "--degree", "2") == 2
    assert "--degree does not apply to the mst generator; remove it." in capsys.readouterr().err


def test_datasets_study_from_the_cli(adult_csv: Path, tmp_path: Path) -> None:
    status = _study(
        "datasets", adult_csv, tmp_path, "--generator", "marginals", "--datasets", "4", "--size", "40"
    )
    assert status == 0
    folder = _only_study(tmp_path)
    table = _outputs(folder)
    assert table["dataset"].tolist() == [1, 2, 3, 4]
    (x,) = folder.spec().target_ids
    assert set(table["record_id"]) == {x}
    # Every D_k holds the record and |D| rows, and they differ; the traditional game does not
    # depend on D_k, so its risk is the same in every job.
    datasets = []
    for job in plan_jobs(folder.spec()):
        context = json.loads((folder.path / "runs" / job.key / "context.json").read_text())
        rows = context["target_dataset"]
        assert x in rows
        assert len(rows) == len(set(rows)) == 40
        datasets.append(tuple(rows))
    assert len(set(datasets)) == 4
    assert table["risk_traditional"].nunique() == 1
    assert np.allclose(table["difference"], table["risk_model_seeded"] - table["risk_traditional"])
    assert (
        "traditional game gives the record one risk"
        in study_chart(folder.spec(), study_results(folder)).caption
    )


def test_convergence_study_from_the_cli(adult_csv: Path, tmp_path: Path) -> None:
    options = ["--n-evals", "4", "8", "12", "--repeats", "3", "--targets", "2", "--size", "40"]
    status = _study("convergence", adult_csv, tmp_path, "--generator", "marginals", *options)
    assert status == 0
    folder = _only_study(tmp_path)
    table = _outputs(folder)
    assert table["n_eval"].tolist() == [4, 8, 12]
    assert (table["repeats"] == 3).all()
    assert (table[["sd_model_seeded", "sd_traditional"]] >= 0).all().all()
    # Repeats hold 12 runs per game: three blocks of N_eval = 4, one of 8 or 12.
    same = table.set_index("n_eval")[["sd_same_attack_model_seeded", "sd_same_attack_traditional"]]
    assert same.loc[4].notna().all() and (same.loc[4] >= 0).all()
    assert same.loc[[8, 12]].isna().all().all()
    expected = [metrics.hoeffding_half_width(n // 2, 0.2) for n in (4, 8, 12)]
    assert np.allclose(table["hoeffding_half_width"], expected)
    # At the largest N_eval the prefix is the whole evaluation: the job's own risks.
    points = study_results(folder).points
    for job in plan_jobs(folder.spec()):
        records = RunFolder(folder.path / "runs" / job.key).records().set_index("record_id")
        mine = points[(points["repeat"] == job.index) & (points["n_eval"] == 12)]
        for row in mine.itertuples():
            assert row.risk == pytest.approx(records.loc[row.record_id, f"risk_{row.game}"])
    # Repeats use different evaluation seeds, the same split and records.
    seeds = {
        json.loads((folder.path / "runs" / job.key / "context.json").read_text())["evaluation_seed"]
        for job in plan_jobs(folder.spec())
    }
    assert len(seeds) == 3


# -- the engine's runs, resume, determinism ---------------------------------------------------


def test_a_size_job_is_exactly_an_engine_run(dataset, tmp_path: Path) -> None:
    spec = StudySpec("size", _base(dataset), sizes=(40,))
    folder = execute_study(create_study(tmp_path / "s", spec, dataset.table), workers=1)
    (job,) = plan_jobs(folder.spec())
    engine = start_run(tmp_path / "r", job.spec, dataset.table, workers=1)
    mine = RunFolder(folder.path / "runs" / job.key)
    assert (mine.path / "records.csv").read_bytes() == (engine.path / "records.csv").read_bytes()
    pd.testing.assert_frame_equal(mine.scores(), engine.scores())


def test_cancelled_study_resumes_to_the_same_table(dataset, tmp_path: Path) -> None:
    spec = StudySpec("size", _base(dataset), sizes=(20, 40))
    whole = execute_study(create_study(tmp_path / "a", spec, dataset.table), workers=1)
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) >= 2

    part = execute_study(create_study(tmp_path / "b", spec, dataset.table), workers=1, cancel=cancel)
    assert part.status()["state"] == "cancelled"
    assert not part.has_results()
    assert study_results(part).jobs_done < 2
    caption = study_chart(part.spec(), study_results(part)).caption
    assert caption.startswith("Partial:") or "No run" in caption or "first run" in caption
    first_attempt = part.status()["seconds"]
    execute_study(part, workers=1)
    assert (part.path / "table.csv").read_bytes() == (whole.path / "table.csv").read_bytes()
    assert part.status()["seconds"] > first_attempt  # the time of both attempts


def test_study_json_round_trips_and_describes_itself(dataset, tmp_path: Path) -> None:
    spec = StudySpec("epsilon", _base(dataset, "privbayes"), epsilons=(math.inf, 1.0))
    folder = create_study(tmp_path, spec, dataset.table)
    loaded = folder.spec()
    assert loaded.epsilons == (math.inf, 1.0)
    assert StudySpec.from_dict(json.loads(loaded.to_json())) == loaded
    assert len(loaded.target_ids) == 2
    assert "privbayes" in loaded.describe() and "inf" in loaded.describe()
    assert study_cost(loaded)["jobs"] == 2
    assert folder.status()["state"] == "created"
    assert open_study(tmp_path, folder.study_id).path == folder.path
    assert folder.path.parent == studies_dir(tmp_path)
    assert stat.S_IMODE(folder.path.stat().st_mode) == 0o700


def test_a_study_started_by_clicks_on_concurrent_threads_is_made_once(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second click on "Start the study" runs on another thread while the first is still
    resolving the records: both find or make the same one study, and a finished one does not count."""
    import time

    import privgame.studies.folder as study_folder

    started: list[str] = []

    def launch(folder: StudyFolder, **kwargs: object) -> None:
        folder.write_status(state="queued")
        started.append(folder.study_id)

    real = study_folder.create_study

    def create_slowly(*args: object, **kwargs: object) -> StudyFolder:
        time.sleep(0.3)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(study_folder, "launch_study", launch)
    monkeypatch.setattr(study_folder, "create_study", create_slowly)
    spec = StudySpec("size", _base(dataset), sizes=(40,))

    def click() -> tuple[str, bool]:
        folder, new = study_folder.launch_study_once(tmp_path, spec, dataset.table)
        return folder.study_id, new

    made = at_once(click)
    assert len({study_id for study_id, _ in made}) == 1 and sorted(n for _, n in made) == [False, False, True]
    assert started == [made[0][0]] and len(list_studies(tmp_path)) == 1
    open_study(tmp_path, made[0][0]).write_status(state="done")
    again, new = study_folder.launch_study_once(tmp_path, spec, dataset.table)
    assert new and again.study_id != made[0][0]


# -- errors ------------------------------------------------------------------------------------


def test_settings_that_do_not_fit_are_refused_with_the_fix(dataset, tmp_path: Path) -> None:
    with pytest.raises(
        ParameterError, match=r"generator must be one of \['privbayes', 'mst'\], not 'marginals'"
    ):
        create_study(tmp_path, StudySpec("epsilon", _base(dataset), epsilons=(1.0,)), dataset.table)
    with pytest.raises(ParameterError, match="a spread needs two"):
        bad = StudySpec("convergence", _base(dataset), n_evals=(8,), repeats=1)
        create_study(tmp_path, bad, dataset.table)
    with pytest.raises(ParameterError, match="even whole number"):
        create_study(
            tmp_path, StudySpec("convergence", _base(dataset), n_evals=(5,), repeats=2), dataset.table
        )
    with pytest.raises(ParameterError, match="follows one record"):
        create_study(tmp_path, StudySpec("datasets", _base(dataset), n_datasets=2), dataset.table)
    with pytest.raises(SizeError, match="do not fit") as caught:
        create_study(tmp_path, StudySpec("size", _base(dataset), sizes=(40, 400)), dataset.table)
    assert any("|D| = 400" in p for p in caught.value.problems)
    outside = next(i for i in range(600) if _in_aux(dataset, i))
    targets = TargetSelection("ids", None, (outside,))
    with pytest.raises(ParameterError, match="not in the evaluation pool"):
        create_study(
            tmp_path, StudySpec("datasets", _base(dataset, targets=targets), n_datasets=1), dataset.table
        )
    assert list_studies(tmp_path) == []  # nothing was written for refused settings


def _in_aux(dataset, record_id: int) -> bool:
    from privgame.data.splits import Sizes, split_indices

    return record_id in set(split_indices(len(dataset.table), Sizes(300, 300, 40), 5).aux.tolist())


def test_cli_reports_bad_input_without_a_traceback(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = _study("size", adult_csv, tmp_path, "--generator", "marginals", "--sizes", "20", "5000")
    err = capsys.readouterr().err
    assert status == 2
    assert "|D| = 5,000" in err and "Traceback" not in err
    assert main(["study", "show", str(tmp_path)]) == 2
    assert "not a privgame study folder" in capsys.readouterr().err
    with pytest.raises(RunError, match="not a study id"):
        open_study(tmp_path, "../etc")
    assert list_studies(tmp_path / "nothing-here") == []


# -- PNG images ----------------------------------------------------------------------------------


def test_png_needs_a_browser_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVGAME_CHROMIUM", str(tmp_path / "no-such-browser"))
    with pytest.raises(ParameterError, match="could not render"):
        write_png(go.Figure(), tmp_path / "x.png")


def test_png_command_renders_a_study_and_a_run(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stand-in browser: writes the bytes of a PNG header to the --screenshot path it is given.
    fake = tmp_path / "fake-browser"
    script = (
        'for a in "$@"; do case $a in --screenshot=*) printf \'\\211PNG\' > "${a#--screenshot=}";; esac; done'
    )
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PRIVGAME_CHROMIUM", str(fake))
    study = execute_study(
        create_study(tmp_path / "s", StudySpec("size", _base(dataset), sizes=(40,)), dataset.table), workers=1
    )
    run = RunFolder(study.path / "runs" / plan_jobs(study.spec())[0].key)
    assert main(["study", "png", str(study.path), "-o", str(tmp_path / "png"), "--name", "size"]) == 0
    assert main(["study", "png", str(run.path), "-o", str(tmp_path / "png"), "--name", "run"]) == 0
    names = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert names == [
        "run-fig1a-risk-scatter.png",
        "run-fig1b-difference-histogram.png",
        "run-fig2a-miss-rate.png",
        "run-fig2b-risk-cdfs.png",
        "size.png",
    ]
    assert (tmp_path / "png" / "size.png").read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()


def test_estimation_noise_is_zero_for_a_perfect_attack_and_grows_with_noise() -> None:
    rng = stream(0, 1)
    rows = []
    for record_id, spread in ((1, 0.0), (2, 0.0)):
        for game in ("model_seeded", "traditional"):
            labels = np.repeat([1, 0], 20)
            scores = labels + spread * rng.normal(size=40)
            rows.append(
                pd.DataFrame(
                    {
                        "record_id": record_id,
                        "game": game,
                        "label": labels,
                        "index": np.arange(40),
                        "score": scores,
                    }
                )
            )
    perfect = estimation_noise(pd.concat(rows, ignore_index=True))
    assert perfect == {"noise_model_seeded": 0.0, "noise_traditional": 0.0, "rmsd_noise": 0.0}
    noisy = pd.concat(rows, ignore_index=True).assign(score=lambda f: rng.normal(size=len(f)))
    result = estimation_noise(noisy)
    assert 0 < result["noise_model_seeded"] < 0.5
    assert result["rmsd_noise"] == pytest.approx(
        np.hypot(result["noise_model_seeded"], result["noise_traditional"])
    )
