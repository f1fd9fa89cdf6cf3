"""No run may ask for unbounded work: absurd counts are refused, and so is a run estimated too long.

``--n-shadow 1000000000`` or ``--n-eval 10**12`` once started a run of centuries. Now the counts
have hard limits (:data:`privgame.settings.run_spec.MAX_N_SHADOW`,
:data:`privgame.settings.run_spec.MAX_N_EVAL`), checked
before anything is read or written, and a run whose estimated CPU time is over
:data:`privgame.games.estimate.COST_LIMIT_SECONDS` (30 days) is refused before any work with its
estimate, unless ``--i-know-its-large`` (a check box on the Evaluate page) says it is meant.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import small_spec
from streamlit.testing.v1 import AppTest

import privgame.games.engine
import privgame.games.estimate
from privgame.cli.main import main
from privgame.core.errors import ParameterError
from privgame.data import Sizes, load_dataset
from privgame.games.estimate import Calibration, check_cost, in_words
from privgame.settings.run_spec import MAX_N_EVAL, MAX_N_SHADOW, AttackSettings

REPO = Path(__file__).resolve().parents[2]


def _runs(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.is_dir()] if out.exists() else []


@pytest.mark.parametrize(
    "extra",
    [
        ["--n-shadow", "1000000000"],
        ["--n-eval", str(10**12)],
        ["--n-shadow", str(MAX_N_SHADOW + 2)],
        ["--n-eval", str(MAX_N_EVAL + 2)],
        ["--resolve-to", str(10**12)],
    ],
    ids=["n-shadow-1e9", "n-eval-1e12", "n-shadow-over-the-cap", "n-eval-over-the-cap", "resolve-to-1e12"],
)
def test_absurd_counts_are_refused_before_any_work(
    extra: list[str], small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    started = time.perf_counter()
    argv = ["run", "--data", str(small_adult), "--generator", "synthpop", "--out", str(out), *extra]
    assert main(argv) == 2
    assert time.perf_counter() - started < 20
    err = capsys.readouterr().err
    assert "a hard limit" in err or "at most 100,000" in err, err
    assert "Traceback" not in err and not _runs(out)


def test_extend_refuses_an_absurd_n_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extend", str(tmp_path), "--n-eval", str(10**12)]) == 2
    assert "--n-eval must be at most 100,000, a hard limit" in capsys.readouterr().err


def test_the_spec_refuses_counts_beyond_the_hard_limits(small_adult: Path) -> None:
    spec, _ = small_spec(small_adult)
    for attack in (AttackSettings(n_shadow=MAX_N_SHADOW + 2), AttackSettings(n_eval=10**12)):
        with pytest.raises(ParameterError, match="a hard limit"):
            replace(spec, attack=attack).validate()
    assert not AttackSettings(n_shadow=MAX_N_SHADOW, n_eval=MAX_N_EVAL).problems()


def test_a_run_far_over_the_limit_is_refused_with_its_estimate(
    adult_rows: pd.DataFrame,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every record of a 3,150-row D with 100,000 shadow datasets and evaluation runs each, both
    games against the population attacker: weeks of CPU time (about 23 days measured, 85 on a
    cold cache), refused here against a limit of 2 days so that no machine's speed makes it pass."""
    data = tmp_path / "adult.csv"
    adult_rows.iloc[:, :6].to_csv(data, index=False)
    out = tmp_path / "runs"

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started instead of being refused")  # never a run of weeks

    monkeypatch.setattr(privgame.games.engine, "execute", started)
    monkeypatch.setattr(
        privgame.games.estimate, "COST_LIMIT_SECONDS", 2 * privgame.games.estimate.DAY_SECONDS
    )
    argv = ["run", "--data", str(data), "--generator", "synthpop", "--all-targets"]
    argv += ["--n-shadow", "100000", "--n-eval", "100000", "--attacker", "population"]
    assert main([*argv, "--workers", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "privgame: This run would take about" in err and re.search(r"(days|years) of CPU time", err)
    assert "over the limit of about 2.0 days of CPU time" in err and "--i-know-its-large" in err
    assert not _runs(out)


def test_the_limit_can_be_overridden_on_the_command_line(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(privgame.games.estimate, "COST_LIMIT_SECONDS", 0.001)  # every run is over it
    out = tmp_path / "runs"
    argv = ["run", "--data", str(small_adult), "--generator", "marginals", "--setup", "paper"]
    argv += ["--size", "60", "--targets", "2", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    argv += ["--out", str(out), "--quiet"]
    assert main(argv) == 2
    assert "over the limit" in capsys.readouterr().err and not _runs(out)
    assert main([*argv, "--i-know-its-large"]) == 0
    err = capsys.readouterr().err
    assert "over the limit; running it anyway (--i-know-its-large)" in err
    assert len(_runs(out)) == 1


def test_check_cost_reports_the_estimate_and_obeys_the_override(small_adult: Path) -> None:
    spec, table = small_spec(small_adult, generator="marginals")
    cal = Calibration(fit_sample=0.01, features=0.001, classifier=0.1)
    fine = check_cost(spec, table, workers=2, calibration=cal)
    assert not fine.over and fine.cpu_seconds > 0 and fine.wall_seconds > 0
    assert "with 2 worker processes" in fine.text and "of CPU time" in fine.text
    slow = Calibration(fit_sample=1e6, features=0.001, classifier=0.1)
    with pytest.raises(ParameterError, match=r"over the limit of about 30\.0 days") as caught:
        check_cost(spec, table, workers=2, calibration=slow)
    assert "years of CPU time" in caught.value.summary
    large = check_cost(spec, table, workers=2, calibration=slow, allow_large=True)
    assert large.over and large.cpu_seconds > 30 * 86_400


def test_a_generator_that_cannot_be_timed_is_not_refused(
    small_adult: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, table = small_spec(small_adult, generator="marginals")

    def broken(*args: object, **kwargs: object) -> Calibration:
        raise RuntimeError("a plug-in that fails outside the run")

    monkeypatch.setattr(privgame.games.estimate, "calibrate", broken)
    found = check_cost(spec, table, workers=1)
    assert not found.over and np.isnan(found.cpu_seconds) and "no estimate" in found.text


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (90, "about 1.5 minutes"),
        (3 * 3600, "about 3.0 hours"),
        (3 * 86_400, "about 3.0 days"),
        (1e12, "about 31,688.1 years"),
        (float("inf"), "longer than can be estimated"),
    ],
)
def test_durations_in_words(seconds: float, words: str) -> None:
    assert in_words(seconds) == words


# ---- the Evaluate page ---------------------------------------------------------------------------


def _evaluate_page(adult_rows: pd.DataFrame) -> AppTest:
    """The Evaluate page with 300 complete rows of Adult and a tiny paper set-up."""
    table = adult_rows.replace("?", np.nan).dropna().head(300)
    dataset = load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60).run()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = {"kind": "paper", "sizes": Sizes(aux=150, eval=150, target=30)}
    for key, value in (("generator", "marginals"), ("n_shadow", 8), ("n_eval", 8), ("workers", 1)):
        at.session_state[key] = value  # a run of a second, so the page times it quickly
    return at.switch_page("pages/2_Evaluate.py").run()


def test_the_evaluate_page_refuses_a_run_over_the_limit_unless_ticked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, adult_rows: pd.DataFrame
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(privgame.games.estimate, "COST_LIMIT_SECONDS", 0.001)
    at = _evaluate_page(adult_rows)
    at.selectbox(key="generator").set_value("marginals")
    at.number_input(key="n_shadow").set_value(8)
    at.number_input(key="n_eval").set_value(8)
    at.number_input(key="workers").set_value(1)
    at.radio(key="target_mode").set_value("random").run()
    at.number_input(key="target_k").set_value(2)
    at.run()
    assert not at.exception
    assert any("over the limit" in str(e.value) for e in at.error)
    assert not [b for b in at.button if b.key == "launch"], "no launch button over the limit"
    at.checkbox(key="i_know_its_large").check().run()
    assert [b for b in at.button if b.key == "launch"]
    at.number_input(key="n_shadow").set_value(MAX_N_SHADOW + 2).run()
    assert any("a hard limit" in str(e.value) for e in at.error)


def test_the_evaluate_page_launches_a_normal_run_without_a_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, adult_rows: pd.DataFrame
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    at = _evaluate_page(adult_rows)
    at.selectbox(key="generator").set_value("marginals").run()
    assert not at.exception and not at.error, [str(e.value) for e in at.error]
    assert not [c for c in at.checkbox if c.key == "i_know_its_large"]
    assert [b for b in at.button if b.key == "launch"]
