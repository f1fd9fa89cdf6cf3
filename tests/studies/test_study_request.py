"""A study asked for as data (:class:`~privgame.studies.request.StudyRequest`): the command the
Studies page shows reads back, through the command line's own parser, into the same request."""

from __future__ import annotations

import math
import shlex

import pytest

from privgame.cli.commands.study import study_arguments, study_request
from privgame.core.errors import ParameterError
from privgame.studies.request import StudyRequest, read_varied, study_command

REQUESTS = [
    StudyRequest(study="size"),
    StudyRequest(study="size", generator="marginals", sizes=(20, 40), targets=2, n_shadow=8, n_eval=8),
    StudyRequest(
        study="epsilon",
        generator="mst",
        generator_params={"bins": 5},
        epsilons=(math.inf, 1.0, 0.25),
        n_shadow=8,
        n_eval=8,
        seed=3,
        attacker="leave-one-out",
        threshold=0.9,
    ),
    StudyRequest(study="epsilon", generator="privbayes", generator_params={"degree": 2}, size=300),
    StudyRequest(
        study="datasets", generator="baynet", generator_params={"degree": 2}, datasets=3, record_id=5
    ),
    StudyRequest(study="datasets", target_selection="outliers", aux_size=900, eval_size=300),
    StudyRequest(
        study="convergence", n_evals=(100, 200), targets=3, repeats=4, rho=0.1, classifier="logistic"
    ),
    StudyRequest(
        study="convergence", generator="synthpop", generator_params={"min_samples_leaf": 3}, target_ids=(4, 9)
    ),
]


@pytest.mark.parametrize("request_", REQUESTS)
def test_the_command_shown_reads_back_into_the_same_request(request_: StudyRequest) -> None:
    command = study_command(request_, data="my table.csv", out="runs")
    words = shlex.split(command)
    assert words[:4] == ["python", "-m", "privgame", "study"]
    assert words[words.index("--data") + 1] == "my table.csv"
    assert study_request(study_arguments(words[4:])) == request_


def test_the_varied_values_are_read_as_their_flag_reads_them() -> None:
    assert read_varied("size", "200 500") == (200, 500)
    assert read_varied("epsilon", "inf 1 0.5") == (math.inf, 1.0, 0.5)
    assert read_varied("datasets", " 7 ") == 7
    with pytest.raises(ParameterError, match="Give whole numbers, not 'twenty'"):
        read_varied("size", "twenty")
    with pytest.raises(ParameterError, match="--datasets takes one value; got 2"):
        read_varied("datasets", "3 4")
    with pytest.raises(ParameterError, match="inf for no noise"):
        read_varied("epsilon", "0")
    with pytest.raises(ParameterError, match=r"give whole numbers, not .twenty."):
        study_arguments(["size", "--sizes", "twenty"])
