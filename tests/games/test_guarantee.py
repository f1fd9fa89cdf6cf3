"""A differentially private generator's cap on every record's risk, read at the run's threshold."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from privgame.cli.main import main
from privgame.core import privacy
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.data.domain import domain_template
from privgame.games.audit import guarantee_answer, proven_answer, run_summary
from privgame.store.folders import RunFolder


def test_the_guarantee_is_read_only_from_a_proven_bound() -> None:
    assert guarantee_answer(None, 0.8) is None
    assert guarantee_answer({"dp_guarantee": False, "dp_auc_bound": 0.6}, 0.8) is None
    assert guarantee_answer({"dp_guarantee": True}, 0.8) is None
    assert guarantee_answer({"dp_guarantee": True, "dp_auc_bound": math.nan}, 0.8) is None
    below = guarantee_answer({"dp_guarantee": True, "dp_auc_bound": 0.7}, 0.8)
    assert (
        below is not None and below["proves_not_at_risk"] and "no record of D can be at risk" in below["text"]
    )
    above = guarantee_answer({"dp_guarantee": True, "dp_auc_bound": 0.8}, 0.8)
    assert above is not None and not above["proves_not_at_risk"] and "does not rule out" in above["text"]
    assert proven_answer("2 records at risk.", above) == proven_answer("2 records at risk.", None)
    assert proven_answer("2 records at risk.", None) == "2 records at risk."
    assert proven_answer("0 records at risk.", below).endswith("Measured: 0 records at risk.")


@pytest.mark.parametrize(("generator", "epsilon"), [("mst", "0.5"), ("privbayes", "1")])
def test_a_run_with_a_public_domain_carries_the_cap_to_every_face(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], generator: str, epsilon: str
) -> None:
    data = tmp_path / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(data, index=False)
    domain = tmp_path / "domain.json"
    template = domain_template(load_dataset(data).schema)
    domain.write_text(template if isinstance(template, str) else json.dumps(template))
    args = [
        "run",
        "--data",
        str(data),
        "--domain",
        str(domain),
        "--generator",
        generator,
        "--epsilon",
        epsilon,
    ]
    args += ["--outliers", "1", "--random", "1", "--n-shadow", "4", "--n-eval", "4", "--screen", "none"]
    args += ["--workers", "1", "--quiet", "--out", str(tmp_path / "runs")]
    assert main(args) == 0
    (path,) = (tmp_path / "runs").iterdir()
    summary = run_summary(RunFolder(path), 0.8)
    meta = summary["generator_metadata"]
    assert meta["dp_guarantee"] is True
    if generator == "privbayes":  # replacement neighbours: the swap itself
        assert meta["dp_auc_bound"] == pytest.approx(math.exp(1) / (1 + math.exp(1)))
    else:  # add/remove neighbours: the swap costs 8 rho / 3
        swap = privacy.zcdp_epsilon(8 * privacy.zcdp_rho(0.5, 1e-9) / 3, 1e-9)
        assert meta["dp_auc_bound"] == pytest.approx(privacy.auc_bound(swap, 1e-9))
    assert summary["guarantee"]["bound"] == meta["dp_auc_bound"]
    proven = meta["dp_auc_bound"] < 0.8
    assert summary["guarantee"]["proves_not_at_risk"] is proven
    assert summary["answer"]["text"].startswith("No record of D can be at risk") is proven
    from privgame.analysis.compare import compare_runs
    from privgame.generators.mst import risk_cap
    from privgame.runs.remedy import Remedy, plan_remedy, private_note

    # A private remedy of this run says, before it starts, what its epsilon will prove.
    planned, _, _ = plan_remedy(RunFolder(path), Remedy(private=0.25))
    assert risk_cap(0.25) == pytest.approx(0.602, abs=5e-4)
    assert "caps every record's risk at 0.602, below t = 0.8, so it proves" in (private_note(planned) or "")

    row = compare_runs([RunFolder(path)], 0.8).iloc[0]
    assert row["risk_cap"] == meta["dp_auc_bound"]
    assert row["risk_max"] == RunFolder(path).records()["risk_model_seeded"].max()
    capsys.readouterr()
    assert main(["report", str(path)]) == 0
    assert (
        "guarantee           The generator's differential-privacy guarantee caps" in capsys.readouterr().out
    )
    html = tmp_path / "report.html"
    assert main(["export", str(path), "--what", "html", "-o", str(html)]) == 0
    assert f"caps every record&#x27;s risk at {meta['dp_auc_bound']:.3f}" in html.read_text()
