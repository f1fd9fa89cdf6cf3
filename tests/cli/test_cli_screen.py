"""The screen from the command line: a run that screens every record, its report, its exports and
a remedy that leaves out the records the screen puts at risk."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privgame.cli.main import main
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder


@pytest.fixture(scope="module")
def screened(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    data = tmp_path_factory.mktemp("data") / "adult600.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=600).dropna().to_csv(data, index=False)
    out = tmp_path_factory.mktemp("runs")
    args = ["run", "--data", str(data), "--generator", "synthpop", "--holdout", "0.5"]
    args += ["--outliers", "1", "--random", "3", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    args += ["--screen-shadows", "60", "--confirm-top", "2", "--seed", "1", "--out", str(out), "--quiet"]
    assert main(args) == 0
    (folder,) = [RunFolder(p) for p in out.iterdir() if p.is_dir()]
    return folder


def test_the_release_set_up_screens_every_record_by_default(screened: RunFolder, capsys) -> None:
    spec = screened.spec()
    assert spec.screen.on and spec.screen.shadows == 60 and spec.screen.confirm_top == 2
    assert len(screened.screen()) == spec.sizes["target"]
    assert main(["report", str(screened.path)]) == 0
    said = capsys.readouterr().out
    assert "screened            every one of the" in said
    assert "screen vs exact     on 3 random records" in said
    assert "top screened" in said


def test_export_screen_has_one_row_per_record_of_d(screened: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "screen.csv"
    assert main(["export", str(screened.path), "--what", "screen", "-o", str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) == screened.spec().sizes["target"]
    assert list(table.columns[:5]) == [
        "record_id",
        "screen_risk",
        "screen_low",
        "screen_high",
        "screen_verdict",
    ]
    played = table["verdict_model_seeded"].notna()
    assert set(table.loc[played, "record_id"]) == set(screened.records()["record_id"])
    assert table["risk_model_seeded"].notna().sum() == len(screened.records())


def test_the_high_risk_export_with_the_screened_records(screened: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "high.csv"
    assert main(["export", str(screened.path), "--screened", "-o", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["source"]) <= {"exact", "screened"}
    screened_rows = table.loc[table["source"] == "screened"]
    assert (screened_rows["screen_verdict"] == "at risk").all()
    exact_rows = table.loc[table["source"] == "exact", "record_id"]
    assert not set(screened_rows["record_id"]) & set(exact_rows)
    assert main(["export", str(screened.path), "--what", "records", "--screened", "-o", str(out)]) == 2


def test_a_remedy_can_leave_out_the_screened_records_and_says_so(screened: RunFolder, tmp_path: Path) -> None:
    from privgame.runs.remedy import screened_leave_out_ids

    # Synthpop copies its records' values: the screen puts records at risk. A t at which it puts
    # some, not nearly all, of this small D at risk (each leave-out must keep 2 records).
    n = screened.spec().sizes["target"]
    found = {t: screened_leave_out_ids(screened, "at-risk", t) for t in (0.6, 0.7, 0.8, 0.9, 0.95)}
    t, wanted = next((t, ids) for t, ids in found.items() if 0 < len(ids) < n - 10)
    args = ["remedy", str(screened.path), "--leave-out", "at-risk", "--screened", "--threshold", str(t)]
    assert main([*args, "--no-run", "--out", str(tmp_path)]) == 0
    (child,) = [RunFolder(p) for p in tmp_path.iterdir() if p.is_dir()]
    spec = child.spec()
    assert set(wanted) <= set(spec.left_out)
    assert f"{len(wanted):,} of them by the screen's verdicts" in spec.parent["description"]
    assert spec.parent["remedies"]["screened"] is True
    assert spec.parent["remedies"]["sample"] == "fresh"


def test_screen_none_writes_no_screen_and_export_says_why(tmp_path: Path, capsys) -> None:
    data = tmp_path / "adult300.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(data, index=False)
    args = ["run", "--data", str(data), "--generator", "marginals", "--holdout", "0.5", "--targets", "2"]
    args += [
        "--n-shadow",
        "8",
        "--n-eval",
        "8",
        "--workers",
        "1",
        "--screen",
        "none",
        "--out",
        str(tmp_path / "r"),
    ]
    assert main([*args, "--quiet"]) == 0
    (folder,) = [RunFolder(p) for p in (tmp_path / "r").iterdir()]
    assert not folder.has_screen() and not folder.spec().screen.on
    capsys.readouterr()
    assert main(["export", str(folder.path), "--what", "screen", "-o", str(tmp_path / "s.csv")]) == 2
    assert "did not screen every record" in capsys.readouterr().err
