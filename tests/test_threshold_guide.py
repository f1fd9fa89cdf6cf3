"""What a threshold t means: the binormal TPR at a low FPR, and the guide the pages and report show."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.core import metrics
from privgame.core.errors import ParameterError
from privgame.games.audit import threshold_guide


@pytest.mark.parametrize("auc", [0.6, 0.8, 0.9])
def test_the_binormal_tpr_matches_simulated_scores(auc: float) -> None:
    from scipy.stats import norm

    rng = np.random.default_rng(int(auc * 100))
    d = np.sqrt(2) * norm.ppf(auc)
    n = 200_000
    inside, outside = rng.normal(d, 1, n), rng.normal(0, 1, n)
    assert metrics.auc(
        np.r_[inside[:4000], outside[:4000]], np.r_[np.ones(4000), np.zeros(4000)]
    ) == pytest.approx(auc, abs=0.02)
    for fpr in (0.01, 0.1):
        cut = np.quantile(outside, 1 - fpr)
        assert metrics.binormal_tpr(auc, fpr) == pytest.approx(np.mean(inside > cut), abs=0.01)


def test_the_binormal_tpr_edges() -> None:
    assert metrics.binormal_tpr(0.5, 0.01) == pytest.approx(0.01)
    assert metrics.binormal_tpr(1.0, 0.01) == 1.0
    with pytest.raises(ParameterError, match=r"auc must lie in \[0.5, 1\]"):
        metrics.binormal_tpr(0.4, 0.01)
    with pytest.raises(ParameterError, match="fpr"):
        metrics.binormal_tpr(0.8, 0.0)


def test_the_guide_speaks_of_the_chosen_t_and_grows_with_it() -> None:
    guide = threshold_guide(0.75)
    assert [row["t"] for row in guide["rows"]] == [0.6, 0.7, 0.75, 0.8, 0.9]
    assert "t = 0.75" in guide["text"]
    tprs = [row["tpr_at_fpr_0.01"] for row in guide["rows"]]
    assert tprs == sorted(tprs)
    row = guide["rows"][2]
    assert row["precision_at_fpr_0.01"] == pytest.approx(
        row["tpr_at_fpr_0.01"] / (row["tpr_at_fpr_0.01"] + 0.01)
    )
    assert threshold_guide(1.0)["rows"][-1]["tpr_at_fpr_0.01"] == 1.0
