"""``python -m privgame schema``: JSON and human output, and bad input without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from privgame.cli.main import COMMANDS, main

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "data" / "adult.csv.gz"
CONTINUOUS = {"age", "fnlwgt", "educational-num", "capital-gain", "capital-loss", "hours-per-week"}


def privgame(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "privgame", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_schema_json_on_adult() -> None:
    done = privgame("schema", "data/adult.csv.gz", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {"rows", "columns", "problems", "duplicate_rows"}
    assert report["duplicate_rows"] > 0  # Adult repeats rows exactly
    assert report["rows"] == 45_222
    assert "Dropped 3,620 of 48,842 rows" in done.stderr
    assert report["problems"] == []
    assert len(report["columns"]) == 15
    for column in report["columns"]:
        assert set(column) == {"name", "role", "dtype", "distinct", "missing", "reason"}
        assert isinstance(column["distinct"], int) and isinstance(column["missing"], int)
        expected = "continuous" if column["name"] in CONTINUOUS else "categorical"
        assert column["role"] == expected, column
    workclass = next(c for c in report["columns"] if c["name"] == "workclass")
    assert (workclass["missing"], workclass["dtype"]) == (2_799, "str")


def test_bad_file_exits_2_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "ragged.csv"
    bad.write_bytes(b"a,b\n1,2\n3\n")
    done = privgame("schema", str(bad))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("privgame: ragged.csv cannot be read as a table.")
    assert "line 3 has 1" in done.stderr
    assert done.stdout == ""


def test_human_form_is_an_aligned_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", str(ADULT)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "rows: 45,222 used, dropped rows: 3,620 (missing-value policy: drop)" in out
    header = next(i for i, line in enumerate(out) if line.startswith("name "))
    assert out[header].split() == ["name", "role", "dtype", "distinct", "missing", "reason"]
    rows = out[header + 1 : header + 16]
    assert [r.split()[0] for r in rows][:3] == ["age", "workclass", "fnlwgt"]
    role_at = out[header].index("role")
    assert all(r[role_at:].split()[0] in ("categorical", "continuous") for r in rows)
    assert any(line.startswith("Dropped 3,620 of 48,842 rows") for line in out)


def test_missing_category_and_role_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["schema", str(ADULT), "--json", "--missing", "category", "--role", "fnlwgt=excluded"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 48_842
    fnlwgt = next(c for c in report["columns"] if c["name"] == "fnlwgt")
    assert (fnlwgt["role"], fnlwgt["reason"]) == ("excluded", "excluded by the user")


def test_table_problems_still_print_json_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "one.csv"
    path.write_text("row_id,colour\n" + "".join(f"{i},{'rgb'[i % 3]}\n" for i in range(30)))
    assert main(["schema", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["rows"] == 30
    assert len(report["problems"]) == 1
    assert report["problems"][0].startswith("only 1 usable column ('colour')")
    assert main(["schema", str(path)]) == 2
    assert "only 1 usable column" in capsys.readouterr().err


def test_bad_roles_missing_paths_and_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", str(ADULT), "--role", "nope=categorical", "--role", "age=big"]) == 2
    err = capsys.readouterr().err
    assert "column 'nope': no such column" in err
    assert "column 'age': unknown role 'big'" in err
    assert main(["schema", str(tmp_path / "nowhere.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("privgame: cannot read ") and "No such file or directory" in err
    with pytest.raises(SystemExit) as exited:
        main(["schema", str(ADULT), "--role", "age"])
    assert exited.value.code == 2
    assert "expected NAME=ROLE" in capsys.readouterr().err


def test_every_command_module_follows_the_contract() -> None:
    for module in COMMANDS:
        assert callable(module.add_parser) and callable(module.run), module.__name__


def test_a_minus_nine_code_is_a_warning_in_both_forms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "survey.csv"
    rows = [f"{['red', 'green', 'blue'][i % 3]},{1000 + 50 * i if i % 10 else -9}\n" for i in range(60)]
    path.write_text("colour,income\n" + "".join(rows))
    assert main(["schema", str(path)]) == 0  # a warning does not stop an audit
    out = capsys.readouterr().out
    assert "warning: column 'income': 6 of 60 values (10.0%) are -9" in out and "declare it missing" in out
    assert main(["schema", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert set(json.loads(captured.out)) == {"rows", "columns", "problems", "duplicate_rows"}
    assert "privgame: warning: column 'income': 6 of 60 values (10.0%) are -9" in captured.err
