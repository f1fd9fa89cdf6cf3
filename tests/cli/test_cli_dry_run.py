"""``privgame run --dry-run``: the plan and the estimate, and nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from privgame.cli.main import main


def test_a_dry_run_prints_the_plan_and_the_estimate_and_writes_no_folder(
    small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    args = ["run", "--data", str(small_adult), "--generator", "baynet", "--outliers", "2", "--random", "3"]
    args += ["--n-shadow", "20", "--n-eval", "20", "--workers", "1", "--out", str(out), "--dry-run"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("dry run: nothing was written and no run started.")
    assert "estimated time: about" in printed
    # The release set-up screens every record and confirms the 20 top-screened ones by default.
    said = " ".join(printed.split())  # the plan's sentence is wrapped at 100 columns
    assert "500 generator fits screen every record of D" in said
    assert "for each of the 25 target records, 20 of them the top-screened records" in said
    assert "fits)" in printed
    assert not out.exists()


def test_a_dry_run_checks_the_settings_as_a_run_does(
    small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    assert (
        main(
            [
                "run",
                "--data",
                str(small_adult),
                "--generator",
                "baynet",
                "--threshold",
                "2",
                "--dry-run",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "threshold" in capsys.readouterr().err
    assert not out.exists()
