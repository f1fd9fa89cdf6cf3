"""Each setting a person gives has one rule and one message, wherever it is given."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.cli.commands.study import study_arguments
from privgame.cli.main import main
from privgame.core import parameters
from privgame.core.errors import ParameterError
from privgame.core.parameters import (
    MAX_N_EVAL,
    check_threshold,
    count_problem,
    epsilon_problem,
    parse_epsilon,
    seed_problem,
    threshold_problem,
)
from privgame.games.audit import records_at
from privgame.outputs import figures
from privgame.runs.remedy import Remedy
from privgame.settings.run_spec import AttackSettings, RunSpec

T_MATCH = r"^The high-risk threshold t must be a number between 0\.5 and 1, both excluded"
T_RULE = (
    "the high-risk threshold t must be a number between 0.5 and 1, both excluded (0.5 is a coin toss, 1 a "
    "certain identification; the paper uses 0.8)"
)


@pytest.mark.parametrize("value", [0.51, 0.8, 0.99, "0.7", np.float64(0.95)])
def test_a_threshold_strictly_between_a_coin_toss_and_certainty_is_accepted(value: object) -> None:
    assert threshold_problem(value) is None
    assert check_threshold(value) == float(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value", [0, 0.3, 0.5, 1, 1.0, -0.01, 1.01, math.nan, math.inf, "high", None, True, [0.8], "1"]
)
def test_anything_else_is_refused_with_the_one_message(value: object) -> None:
    assert threshold_problem(value) == f"{T_RULE}; got {value!r}."
    with pytest.raises(ParameterError, match=T_MATCH):
        check_threshold(value)


def test_the_spec_takes_numbers_only() -> None:
    assert threshold_problem("0.8", numbers_only=True) == f"{T_RULE}; got '0.8'."


@pytest.mark.parametrize(
    ("value", "ok"),
    [(0, True), (7, True), (2**40, True), (-1, False), (1.0, False), (True, False), ("3", False)],
)
def test_a_seed_is_a_whole_number_of_zero_or_more(value: object, ok: bool) -> None:
    assert (seed_problem(value) is None) is ok


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (4, None),
        (MAX_N_EVAL, None),
        (2, "even integer of at least 4"),
        (7, "even integer of at least 4"),
        (8.0, "even integer of at least 4"),
        (MAX_N_EVAL + 2, "a hard limit"),
    ],
)
def test_counts_are_even_and_bounded(value: object, problem: str | None) -> None:
    found = count_problem("n_eval", value, MAX_N_EVAL)
    assert (found is None) if problem is None else (found is not None and problem in found)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", 1.0), ("0.5", 0.5), (" 2e-1 ", 0.2), ("inf", math.inf), ("Infinity", math.inf), ("∞", math.inf)],
)
def test_epsilon_reads_positive_numbers_and_infinity(text: str, value: float) -> None:
    assert parse_epsilon(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "nan", "1e999", "one", ""])
def test_epsilon_refuses_the_rest(text: str) -> None:
    with pytest.raises(ParameterError, match=r"^Epsilon must be a positive number, or inf for no noise"):
        parse_epsilon(text)
    assert epsilon_problem(math.inf) is None and epsilon_problem(0.0) is not None


# ---- the same rule on every surface -------------------------------------------------------------


def _records() -> pd.DataFrame:
    return pd.DataFrame(
        {"record_id": [1], "risk_model_seeded": [0.9], "risk_traditional": [0.5], "audit_group": ["random"]}
    )


def test_every_surface_states_the_threshold_rule_in_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = RunSpec(
        data_name="x",
        data_fingerprint="f",
        schema={},
        sizes={"aux": 1, "eval": 1, "target": 1},
        generator="marginals",
        threshold=1.5,
    )
    with pytest.raises(ParameterError) as caught:
        spec.validate()
    assert f"{T_RULE}; got 1.5." in caught.value.problems
    assert [T_RULE in p for p in Remedy(leave_out="at-risk", threshold=1.5).problems()] == [True]
    for check in (
        lambda: figures.risk_scatter(_records(), 1.5),
        lambda: records_at(_records(), 1.5),
    ):
        with pytest.raises(ParameterError, match=T_MATCH):
            check()
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": range(50), "b": ["x", "y"] * 25}).to_csv(data, index=False)
    assert (
        main(
            [
                "run",
                "--data",
                str(data),
                "--generator",
                "marginals",
                "--threshold",
                "1.5",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert T_RULE in capsys.readouterr().err


def test_both_epsilon_options_read_the_same_values(capsys: pytest.CaptureFixture[str]) -> None:
    from privgame.cli.main import build_parser

    run = ["run", "--data", "d.csv", "--generator", "privbayes"]
    for text in ("∞", "inf", "0.5"):
        assert build_parser().parse_args([*run, "--epsilon", text]).epsilon == parse_epsilon(text)
        assert study_arguments(["epsilon", "--epsilons", text]).epsilons == [parse_epsilon(text)]
    # `run` refuses it with the other settings, before the data is read (d.csv does not exist).
    assert main([*run, "--epsilon", "0"]) == 2
    assert "epsilon must be a positive number, or inf for no noise; got 0.0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args([*run, "--epsilon", "some"])
    assert "epsilon must be a positive number, or inf for no noise; got 'some'" in capsys.readouterr().err
    with pytest.raises(ParameterError, match="epsilon must be a positive number, or inf for no noise"):
        study_arguments(["epsilon", "--epsilons", "0"])


def test_the_module_imports_nothing_of_privgame_but_its_errors() -> None:
    source = Path(parameters.__file__).read_text()
    imported = {
        line.split()[1]
        for line in source.splitlines()
        if line.startswith(("from privgame", "import privgame"))
    }
    assert imported == {"privgame.core.errors"}
    assert AttackSettings(n_eval=MAX_N_EVAL + 2).problems()  # the spec uses the same limits
