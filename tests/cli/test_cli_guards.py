"""What no command may do to the data owner's files or to a run (issue 48's adversarial cases):
pass the release gate with t = 1, write into a run folder, or overwrite the audited table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privgame.cli.main import main
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder


@pytest.fixture(scope="module")
def owner(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunFolder]:
    """The owner's table (owner.csv) and a finished tiny audit of it."""
    folder = tmp_path_factory.mktemp("owner")
    data = folder / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=300).dropna().to_csv(data, index=False)
    out = folder / "runs"
    out.mkdir()
    args = ["run", "--data", str(data), "--generator", "marginals", "--holdout", "0.5", "--targets", "3"]
    args += ["--n-shadow", "8", "--n-eval", "8", "--screen", "none", "--workers", "1", "--quiet"]
    assert main([*args, "--out", str(out)]) == 0
    (run,) = [RunFolder(p) for p in out.iterdir() if p.is_dir()]
    return data, run


@pytest.mark.parametrize("t", ["1", "1.0", "0.5", "0"])
def test_t_at_or_beyond_its_ends_is_refused_everywhere(
    owner: tuple[Path, RunFolder], tmp_path: Path, t, capsys
) -> None:
    data, run = owner
    out = tmp_path / "release.csv"
    assert main(["release", str(run.path), "-o", str(out), "--threshold", t]) == 2
    assert not out.exists()
    assert main(["run", "--data", str(data), "--generator", "marginals", "--threshold", t, "--dry-run"]) == 2
    assert main(["report", str(run.path), "--threshold", t]) == 2
    assert capsys.readouterr().err.count("between 0.5 and 1, both excluded") == 3


@pytest.mark.parametrize("name", ["records.csv", "records.parquet", "spec.json", "new.csv"])
def test_export_never_writes_into_a_run_folder(owner: tuple[Path, RunFolder], name: str, capsys) -> None:
    _, run = owner
    before = {p.name: p.read_bytes() for p in run.path.iterdir() if p.is_file()}
    assert main(["export", str(run.path), "--what", "records", "-o", str(run.path / name)]) == 2
    assert "lies inside the run folder" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in run.path.iterdir() if p.is_file()} == before
    assert main(["report", str(run.path)]) == 0


def test_a_release_never_overwrites_the_audited_table(owner: tuple[Path, RunFolder], capsys) -> None:
    data, run = owner
    before = data.read_bytes()
    assert main(["release", str(run.path), "-o", str(data), "--accept-risk"]) == 2
    assert "has the name of the audited table (owner.csv)" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_bad_settings_name_the_flag_the_owner_gave(owner: tuple[Path, RunFolder], capsys) -> None:
    data, run = owner
    assert main(["extend", str(run.path), "--n-eval", "16", "--threshold", "1.5"]) == 2
    said = capsys.readouterr().err
    assert "between 0.5 and 1, both excluded" in said and "0.05" not in said
    assert run.spec().attack.n_eval == 8 and run.status().get("extensions") is None
    args = ["run", "--data", str(data), "--generator", "marginals", "--holdout", "0.5", "--dry-run"]
    assert main([*args, "--targets", "500"]) == 2
    assert "Cannot audit --targets 500 records" in capsys.readouterr().err
    plan = ["plan", "--data", str(data), "--generator", "marginals", "--holdout", "0.5"]
    assert main([*plan, "--budget", "1e308"]) == 2
    said = capsys.readouterr().err
    assert "got 1e+308" in said and "inf" not in said


def test_compare_as_csv_neutralises_a_run_folder_named_like_a_formula(
    owner: tuple[Path, RunFolder], tmp_path: Path, capsys
) -> None:
    import io
    import shutil

    _, run = owner
    hostile = tmp_path / '=HYPERLINK("x";"y")'
    shutil.copytree(run.path, hostile)
    capsys.readouterr()
    assert main(["compare", str(run.path), str(hostile), "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    cells = [str(v) for v in table.to_numpy().ravel() if isinstance(v, str)]
    assert any("HYPERLINK" in cell for cell in cells)
    leading = [c for c in cells if c.startswith(("=", "+", "-", "@"))]
    assert not [c for c in leading if pd.isna(pd.to_numeric(c, errors="coerce"))]  # numbers may lead with -


def test_a_done_run_whose_results_were_deleted_says_so_and_resume_rewrites_them(
    owner: tuple[Path, RunFolder], tmp_path: Path, capsys
) -> None:
    import shutil

    _, run = owner
    copy = Path(shutil.copytree(run.path, tmp_path / run.run_id))
    (copy / "records.parquet").unlink()
    capsys.readouterr()
    assert main(["report", str(copy)]) == 2
    said = capsys.readouterr().err
    assert "marked done but its results (records.parquet) are missing" in said and "resume" in said
    assert main(["resume", str(copy), "--workers", "1", "--quiet"]) == 0
    assert (copy / "records.parquet").read_bytes() == (run.path / "records.parquet").read_bytes()
