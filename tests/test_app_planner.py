"""The Evaluate page's planner: a plan cut to a time budget, put into the form with one click."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from privgame.data import BUNDLED_ADULT, Sizes, load_dataset

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


@pytest.fixture(scope="module")
def dataset():  # type: ignore[no-untyped-def]
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    return load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")


def test_a_plan_cut_to_the_budget_fills_the_form(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    from privgame.analysis import planner
    from privgame.games import estimate

    # A stand-in for the machine: the time grows with N_shadow x N_eval (the real estimate is
    # tested in tests/analysis/test_planner.py); 1,000 x 200 would take 33 minutes.
    monkeypatch.setattr(
        planner, "estimate_seconds", lambda spec, *a, **k: spec.attack.n_shadow * spec.attack.n_eval * 0.01
    )
    # Nor is the generator timed: the page's own timing is tested in tests/test_app.py.
    fixed = estimate.Calibration(fit_sample=0.01, features=0.001, classifier=0.1)
    monkeypatch.setattr(estimate, "calibrate", lambda *a, **k: fixed)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = {"kind": "paper", "sizes": Sizes(aux=150, eval=150, target=30)}
    at.switch_page("pages/2_Evaluate.py").run()
    at.selectbox(key="generator").set_value("marginals")
    at.number_input(key="workers").set_value(1)
    at.number_input(key="plan_outliers").set_value(2)
    at.number_input(key="plan_random").set_value(2).run()
    at.number_input(key="budget_minutes").set_value(10).run()
    at.button(key="propose_plan").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "This plan takes about" in "\n".join(s.value for s in at.success)
    (table,) = [d for d in at.table if "gives up" in d.value.columns]
    # The evaluation runs are cut before the shadow datasets, whose cuts miss risk.
    assert table.value["N_eval"].tolist() == [200, 100, 50]
    assert table.value["N_shadow"].tolist() == [1000, 1000, 1000]
    assert table.value["chosen"].tolist() == [False, False, True]
    at.button(key="use_plan").click().run()
    assert not at.exception
    assert at.number_input(key="n_shadow").value == 1000
    assert at.number_input(key="n_eval").value == 50
    assert at.number_input(key="plan_outliers").value == 2


def test_the_generator_is_timed_again_only_for_a_change_that_changes_its_cost(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """In the release set-up a new seed puts other rows in D (other fingerprints, the same sizes):
    re-estimated at once, without timing the generator again (benchmarks/evaluate_page.py)."""
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path / "runs"))
    from privgame.games import estimate

    timed: list[str] = []

    def calibrate(spec, *args, **kwargs):  # type: ignore[no-untyped-def]
        timed.append(spec.generator)
        return estimate.Calibration(fit_sample=0.01, features=0.001, classifier=0.1)

    monkeypatch.setattr(estimate, "calibrate", calibrate)
    monkeypatch.setattr(estimate, "_TIMINGS", {})  # no timing kept from another test's session
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = {"kind": "release", "population": None, "holdout": 0.3}
    at.switch_page("pages/2_Evaluate.py").run()
    at.selectbox(key="generator").set_value("marginals")
    at.number_input(key="workers").set_value(1).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert timed[-1] == "marginals"
    timed.clear()
    at.number_input(key="seed").set_value(5).run()
    at.number_input(key="n_shadow").set_value(200).run()
    assert not at.exception and timed == []
    at.selectbox(key="generator").set_value("synthpop").run()
    assert timed == ["synthpop"]
