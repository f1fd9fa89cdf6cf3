"""Attribute inference from the command line: ``run --secret`` (repeatable) through to the report,
the exports, the HTML report, the release card and the Python API; bad secrets refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import privgame
from privgame.cli.main import main
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder


@pytest.fixture(scope="module")
def adult600(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("data") / "adult600.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=600).dropna().to_csv(data, index=False)
    return data


@pytest.fixture(scope="module")
def inferred(adult600: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    out = tmp_path_factory.mktemp("runs")
    args = ["run", "--data", str(adult600), "--generator", "identity", "--holdout", "0.5", "--screen", "none"]
    args += ["--outliers", "2", "--random", "4", "--n-shadow", "8", "--n-eval", "60", "--workers", "1"]
    args += ["--secret", "income", "--secret", "race", "--inference-threshold", "0.2", "--seed", "1"]
    args += ["--out", str(out), "--quiet"]
    assert main(args) == 0
    (folder,) = [RunFolder(p) for p in out.iterdir() if p.is_dir()]
    return folder


def test_the_secrets_reach_the_spec_the_records_and_the_report(inferred: RunFolder, capsys) -> None:
    spec = inferred.spec()
    assert spec.inference.secrets == ("income", "race") and spec.inference.threshold == 0.2
    records = inferred.records()
    assert {"inference_gain_income", "verdict_inference_race", "inferred_in_income"} <= set(records.columns)
    assert main(["report", str(inferred.path)]) == 0
    said = capsys.readouterr().out
    assert "inference           'income':" in said
    assert "'race':" in said
    assert "non-members" in said  # the aggregate view beside the per-record one


def test_the_identity_release_puts_records_with_a_rare_secret_at_risk(inferred: RunFolder) -> None:
    """The identity generator copies every record: where no attack names a record's race without
    it (its neighbours and the population's usual value say another), its own copy does, and the
    record is at risk of inference; where one does, the record's presence adds nothing."""
    records = inferred.records()
    rare = records.loc[records["inference_out_race"] <= 0.05]
    assert len(rare) >= 1
    assert (rare["inference_in_race"] == 1.0).all()
    assert (rare["verdict_inference_race"] == "at risk").all()
    common = records.loc[records["inference_out_race"] == 1.0]
    assert (common["inference_gain_race"] == 0.0).all()


def test_the_exports_carry_the_inference_verdicts(inferred: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "high.csv"
    assert main(["export", str(inferred.path), "--what", "high-risk", "-o", str(out)]) == 0
    table = pd.read_csv(out)
    records = inferred.records()
    at_risk = records.loc[
        (records["verdict_inference_income"] == "at risk") | (records["verdict_inference_race"] == "at risk"),
        "record_id",
    ]
    assert set(at_risk) <= set(table["record_id"])
    assert table["at_risk_of"].str.contains("inference of").any()
    html = tmp_path / "report.html"
    assert main(["export", str(inferred.path), "--what", "html", "-o", str(html)]) == 0
    assert "Attribute inference (per record)" in html.read_text()


def test_records_not_shown_safe_of_inference_hold_the_release_back(inferred: RunFolder) -> None:
    from privgame.outputs.release import INFERENCE_AT_RISK, INFERENCE_UNDECIDED, not_safe_ids

    unsafe = not_safe_ids(inferred, 0.8)
    assert INFERENCE_AT_RISK in unsafe and INFERENCE_UNDECIDED in unsafe
    records = inferred.records()
    flagged = records.loc[
        records[["verdict_inference_income", "verdict_inference_race"]]
        .isin(["at risk", "undecided"])
        .any(axis=1),
        "record_id",
    ]
    held = {r for ids in unsafe.values() for r in ids}
    assert set(flagged) <= held  # each one held back, under membership or inference


def test_a_record_safe_of_membership_but_at_risk_of_inference_is_held_back(
    inferred: RunFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privgame.core.errors import ReleaseError
    from privgame.outputs.release import INFERENCE_AT_RISK, make_release, not_safe_ids

    records = inferred.records()
    records["risk_model_seeded_low"], records["risk_model_seeded_high"] = 0.5, 0.6  # not at risk at 0.8
    for secret in ("income", "race"):
        records[f"verdict_inference_{secret}"] = "not at risk"
    chosen = int(records["record_id"].iloc[0])
    records.loc[records["record_id"] == chosen, "verdict_inference_race"] = "at risk"
    monkeypatch.setattr(RunFolder, "records", lambda self: records)
    unsafe = not_safe_ids(inferred, 0.8)
    assert unsafe[INFERENCE_AT_RISK] == [chosen]
    assert sum(len(ids) for ids in unsafe.values()) == 1
    with pytest.raises(ReleaseError, match="or infer a secret"):
        make_release(inferred)


def test_the_release_card_records_the_inference_game(inferred: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "release.csv"
    assert main(["release", str(inferred.path), "-o", str(out), "--accept-risk"]) == 0
    card = json.loads((tmp_path / "release.card.json").read_text())
    assert card["audit"]["inference"]["secrets"] == ["income", "race"]
    assert card["audit"]["inference"]["text"]


@pytest.mark.parametrize(
    ("secret", "said"),
    [("salary", "'salary' is not in the table"), ("income", "named twice")],
)
def test_a_bad_secret_is_refused_by_name_before_any_work(
    adult600: Path, tmp_path: Path, capsys, secret, said
) -> None:
    args = [
        "run",
        "--data",
        str(adult600),
        "--generator",
        "marginals",
        "--secret",
        "income",
        "--secret",
        secret,
    ]
    args += ["--out", str(tmp_path), "--quiet"]
    assert main(args) != 0
    assert said in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_python_api_takes_secrets(adult600: Path, tmp_path: Path) -> None:
    audit = privgame.audit(
        adult600,
        "marginals",
        secrets="income",
        outliers=1,
        random=2,
        n_shadow=8,
        n_eval=8,
        screen="none",
        workers=1,
        runs=tmp_path,
        progress=False,
    )
    assert audit.folder.spec().inference.secrets == ("income",)
    assert "verdict_inference" in audit.records().columns
