"""The Python API: one call audits a table and returns an Audit whose methods read, report,
release, remedy and extend it, with the same run folder as the command line's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import privgame
from privgame.cli.main import main
from privgame.core.errors import ParameterError, RunError
from privgame.data import BUNDLED_ADULT

SETTINGS = {"outliers": 1, "random": 3, "n_shadow": 8, "n_eval": 8, "screen_shadows": 60, "confirm_top": 1}


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "adult500.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=500).dropna().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def done(adult_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> privgame.Audit:
    seen = []
    audit = privgame.audit(
        adult_csv,
        "synthpop",
        holdout=0.5,
        seed=1,
        workers=1,
        runs=tmp_path_factory.mktemp("runs"),
        progress=seen.append,
        min_samples_leaf=5,
        **SETTINGS,
    )
    assert seen and seen[-1].phase == "done" and {p.phase for p in seen} >= {"screen", "done"}
    return audit


def test_importing_the_api_loads_nothing_heavy() -> None:
    code = (
        "import sys, privgame; from privgame import audit, open, Audit; "
        "print(sorted(m for m in ('numpy', 'pandas', 'sklearn', 'privgame.service') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_audit_is_read_as_the_command_line_reads_it(done: privgame.Audit, capsys) -> None:
    assert done.state == "done" and repr(done).startswith("Audit(")
    spec = done.spec
    assert spec.generator == "synthpop" and spec.generator_params["min_samples_leaf"] == 5
    summary = done.summary()
    assert done.verdict() == summary["answer"]["text"] and "records" in done.verdict()
    assert done.share() == summary["share_at_risk"]
    records = done.records()
    assert len(records) == 5 and {"risk_model_seeded", "verdict_model_seeded"} <= set(records.columns)
    assert len(done.screen()) == spec.sizes["target"]
    assert set(done.high_risk()["record_id"]) <= set(records["record_id"])
    assert len(done.high_risk(screened=True)) >= len(done.high_risk())
    assert main(["report", str(done.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == summary["answer"]
    reopened = privgame.open(done.path)
    assert reopened.records().equals(records)
    assert "<p>" in reopened._repr_html_()


def test_the_api_and_the_command_line_write_the_same_run(
    done: privgame.Audit, adult_csv: Path, tmp_path: Path
) -> None:
    args = ["run", "--data", str(adult_csv), "--generator", "synthpop", "--min-leaf", "5", "--holdout", "0.5"]
    args += ["--outliers", "1", "--random", "3", "--n-shadow", "8", "--n-eval", "8", "--screen-shadows", "60"]
    args += ["--confirm-top", "1", "--seed", "1", "--workers", "1", "--out", str(tmp_path), "--quiet"]
    assert main(args) == 0
    (cli,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    for name in ("records.csv", "screen.parquet", "data.parquet"):
        assert (cli / name).read_bytes() == (done.path / name).read_bytes(), name
    assert (cli / "spec.json").read_text() == (done.path / "spec.json").read_text()


def test_a_dataframe_is_audited_as_its_file_would_be(
    done: privgame.Audit, adult_csv: Path, tmp_path: Path
) -> None:
    table = pd.read_csv(adult_csv)
    again = privgame.audit(
        table,
        "synthpop",
        holdout=0.5,
        seed=1,
        workers=1,
        runs=tmp_path,
        progress=False,
        min_samples_leaf=5,
        **SETTINGS,
    )
    assert again.spec.data_name == "data.parquet"
    assert again.records()["risk_model_seeded"].equals(done.records()["risk_model_seeded"])


def test_report_release_extend_and_remedy(done: privgame.Audit, tmp_path: Path) -> None:
    html = done.report(tmp_path / "report.html")
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    released = done.release(tmp_path / "release.csv", accept_risk=True)
    assert len(pd.read_csv(released)) == done.spec.sizes["target"]
    assert (tmp_path / "release.csv.card.json").exists() or any(tmp_path.glob("*.card.json"))
    fixed = done.remedy(leave_out="at-risk-and-undecided", progress=False)
    assert fixed.state == "done" and fixed.spec.parent["run_id"] == done.folder.run_id
    assert done.remedy(leave_out="at-risk-and-undecided", progress=False).path == fixed.path  # made once
    fixed.extend(16, progress=False)
    assert (fixed.records()["n_eval"] >= 8).all()
    private = done.remedy(private=0.5, progress=False)  # the command line's --private
    assert private.state == "done" and private.spec.generator == "mst"
    assert private.spec.generator_params["epsilon"] == 0.5


def test_bad_input_names_the_problem(adult_csv: Path, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="must be a path, a file's bytes or a pandas DataFrame"):
        privgame.audit(42, runs=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="'depth' is not a parameter of the synthpop generator"):
        privgame.audit(adult_csv, "synthpop", depth=3, runs=tmp_path, progress=False)
    with pytest.raises(ParameterError, match="two different ways"):
        privgame.audit(adult_csv, outliers=2, target_ids=[1], runs=tmp_path, progress=False)
    assert not any(tmp_path.iterdir())  # refused before anything was written
    with pytest.raises(RunError):
        privgame.open(tmp_path)


def test_an_unfinished_audit_says_how_to_finish_it(adult_csv: Path, tmp_path: Path) -> None:
    from privgame.service import AuditRequest, create_run, prepare_request

    prepared = prepare_request(
        AuditRequest(data=adult_csv, n_shadow=8, n_eval=8, outliers=1, random=1, screen="none")
    )
    audit = privgame.Audit(create_run(tmp_path, prepared.spec, prepared.inputs.table))
    with pytest.raises(RunError, match=r"call \.resume\(\) to finish it"):
        audit.records()
    assert audit.resume(workers=1, progress=False).state == "done"


def test_every_declared_generator_parameter_is_a_keyword_and_a_flag(adult_csv: Path, tmp_path: Path) -> None:
    """The API's keywords and ``run``'s flags are the generators' declared options: each is
    accepted by keyword and as its flag (``run --help`` lists it), and a value out of its range is
    refused by both with the declaration's own words, before anything is written."""
    from privgame.core.options import GENERATOR_OPTIONS

    helped = subprocess.run(
        [sys.executable, "-m", "privgame", "run", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name, options in GENERATOR_OPTIONS.items():
        for option in options:
            assert option.flag in helped, option.flag
            bad = "neither" if option.kind == "choice" else 0 if option.kind == "epsilon" else -1
            with pytest.raises(ParameterError) as caught:
                privgame.audit(adult_csv, name, runs=tmp_path, progress=False, **{option.name: bad})
            assert option.problem(bad) in caught.value.problems
            argv = ["run", "--data", str(adult_csv), "--generator", name, option.flag, str(bad)]
            try:
                code = main([*argv, "--out", str(tmp_path)])
            except SystemExit as stop:  # argparse's own refusal of a choice
                code = stop.code
            assert code == 2, (name, option.flag)
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_the_screen_settings_are_declared_keywords_flags_and_checks(adult_csv: Path, tmp_path: Path) -> None:
    """The screen's settings are declared once (``SCREEN_OPTIONS``): each is a keyword of
    ``privgame.audit`` and a flag of ``run``, and a count out of its range is refused by both with
    the declaration's rule, before anything is written."""
    import inspect

    from privgame.core.options import SCREEN_OPTIONS

    helped = subprocess.run(
        [sys.executable, "-m", "privgame", "run", "--help"], capture_output=True, text=True, check=True
    ).stdout
    keywords = inspect.signature(privgame.audit).parameters
    for option in SCREEN_OPTIONS:
        assert option.flag in helped and option.name in keywords, option.name
        if option.kind != "int":
            continue
        with pytest.raises(ParameterError) as caught:
            privgame.audit(adult_csv, runs=tmp_path, progress=False, **{option.name: -1})
        said = caught.value.problems
        assert any(option.flag in p and option.rule in p for p in said), said
        argv = ["run", "--data", str(adult_csv), "--generator", "synthpop", option.flag, "-1"]
        assert main([*argv, "--out", str(tmp_path)]) == 2
    assert not any(tmp_path.iterdir())
