"""``privgame check-file``: the similarity checks of a synthetic file made elsewhere."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.analysis.file_check import LIMITS, check_file, file_check_lines
from privgame.cli.main import main
from privgame.core.errors import SchemaError
from privgame.data import BUNDLED_ADULT, load_dataset


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """D, a holdout and an independent 'synthetic' table: three disjoint slices of Adult."""
    table = load_dataset(BUNDLED_ADULT).table.iloc[:3600]  # no missing values: every row is usable
    folder = tmp_path_factory.mktemp("check-file")
    paths = {}
    for name, rows in (
        ("data", slice(0, 1000)),
        ("holdout", slice(1000, 2000)),
        ("other", slice(2000, 3000)),
    ):
        paths[name] = folder / f"{name}.csv"
        table.iloc[rows].to_csv(paths[name], index=False)
    return paths


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_copy_of_d_is_at_distance_zero_and_fails_the_share_test(adult: dict[str, Path]) -> None:
    check = check_file(adult["data"], adult["data"], adult["holdout"])
    assert (check.records["dcr"] == 0).all()
    # Every record gets the smallest p-value a record at distance 0 can get.
    smallest = (1 + np.count_nonzero(check.holdout_dcr <= 0)) / (1 + len(check.holdout_dcr))
    assert np.allclose(check.records["dcr_p_value"], smallest)
    assert not check.table.passes
    assert check.close == len(check.records)
    lines = file_check_lines(check)
    assert any("DCR share test fails" in line for line in lines)
    assert any("appear in the synthetic file exactly" in line for line in lines)
    assert lines[-1] == LIMITS


def test_a_file_drawn_without_d_passes_and_its_p_values_are_uniform(adult: dict[str, Path]) -> None:
    check = check_file(adult["data"], adult["other"], adult["holdout"])
    p = check.records["dcr_p_value"].to_numpy()
    n = len(p)
    for alpha in (0.05, 0.1, 0.5):
        margin = 3 * np.sqrt(alpha * (1 - alpha) / n)
        assert abs(np.mean(p <= alpha) - alpha) <= margin, alpha
    assert check.table.passes


def test_the_command_writes_one_row_per_record_and_never_a_file_it_reads(
    adult: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A row with a missing value is dropped: its number is left out, the others keep their place.
    data = pd.read_csv(adult["data"])
    data.loc[3, "age"] = np.nan
    d_path = tmp_path / "d.csv"
    data.to_csv(d_path, index=False)
    before = {p: _digest(p) for p in (d_path, adult["other"], adult["holdout"])}
    out = tmp_path / "per-record.csv"
    args = ["check-file", "--data", str(d_path), "--synthetic", str(adult["other"])]
    args += ["--holdout", str(adult["holdout"])]
    assert main([*args, "-o", str(out)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "DCR share test passes" in printed and "no record is called safe" in printed
    written = pd.read_csv(out)
    assert list(written.columns[:3]) == ["record_id", "dcr", "dcr_p_value"]
    assert len(written) == len(data) - 1
    assert 3 not in set(written["record_id"]) and written["record_id"].iloc[3] == 4
    assert written["record_id"].iloc[0] == 0
    for source in (d_path, adult["holdout"]):
        assert main([*args, "-o", str(source)]) == 2
        assert "which the check reads" in capsys.readouterr().err
    assert {p: _digest(p) for p in before} == before


def test_mismatched_columns_are_refused_with_one_error_listing_every_difference(
    adult: dict[str, Path], tmp_path: Path
) -> None:
    synthetic = pd.read_csv(adult["other"]).drop(columns=["age"]).assign(extra=1)
    holdout = pd.read_csv(adult["holdout"]).rename(columns={"education": "schooling"})
    s_path, h_path = tmp_path / "s.csv", tmp_path / "h.csv"
    synthetic.to_csv(s_path, index=False)
    holdout.to_csv(h_path, index=False)
    with pytest.raises(SchemaError, match=r"do not match the columns of data\.csv") as caught:
        check_file(adult["data"], s_path, h_path)
    problems = "\n".join(caught.value.problems)
    assert "synthetic table" in problems and "'age'" in problems and "'extra'" in problems
    assert "holdout table" in problems and "'education'" in problems and "'schooling'" in problems


def test_a_negative_seed_is_refused(adult: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["check-file", "--data", str(adult["data"]), "--synthetic", str(adult["other"])]
    assert main([*args, "--holdout", str(adult["holdout"]), "--seed", "-1"]) == 2
    assert "--seed must be a non-negative" in capsys.readouterr().err


def test_never_passes_beside_copies_a_holdout_in_d_or_a_holdout_too_small(
    adult: dict[str, Path], tmp_path: Path
) -> None:
    from privgame.analysis.file_check import MIN_HOLDOUT_ROWS

    table = pd.read_csv(adult["data"])
    # A file that copies some records of D and is otherwise independent: the share test alone
    # may pass; the verdict must not.
    copies = tmp_path / "copies.csv"
    pd.concat([table.iloc[:20], pd.read_csv(adult["other"]).iloc[20:]]).to_csv(copies, index=False)
    check = check_file(adult["data"], copies, adult["holdout"])
    assert check.copies == 20 and check.verdict == "fails"
    line = next(text for text in file_check_lines(check) if text.startswith("DCR share test"))
    assert line.startswith("DCR share test fails")
    assert ("20 records of D are copied exactly" in line) == check.table.passes
    # A holdout that shares rows with D voids the comparison.
    shared = tmp_path / "shared-holdout.csv"
    pd.concat([table.iloc[:100], pd.read_csv(adult["holdout"]).iloc[100:]]).to_csv(shared, index=False)
    check = check_file(adult["data"], adult["other"], shared)
    assert check.holdout_in_d == 100 and check.verdict == "void"
    assert any(
        "DCR share test void" in line and "100 holdout rows are also in D" in line
        for line in file_check_lines(check)
    )
    # Eleven holdout rows cannot show anything at 0.05.
    small = tmp_path / "small-holdout.csv"
    pd.read_csv(adult["holdout"]).iloc[:11].to_csv(small, index=False)
    check = check_file(adult["data"], adult["other"], small)
    assert check.verdict == "inconclusive" and MIN_HOLDOUT_ROWS > 11
    assert any("inconclusive" in line and "give at least" in line for line in file_check_lines(check))
    # An independent file with a proper holdout still passes.
    assert check_file(adult["data"], adult["other"], adult["holdout"]).verdict == "passes"
