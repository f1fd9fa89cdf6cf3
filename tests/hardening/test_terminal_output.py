"""Everything the command line prints is text: no control sequence from the data reaches the terminal.

Column names, category values and file names carry ANSI and OSC sequences (colours, a cleared
screen, a hyperlink, a window title), C1 controls, a bell, backspaces, carriage returns, line
breaks and a right-to-left override. Every command that echoes them (``schema``, its JSON, the
errors, ``run`` with its progress bar and summary, ``report``, ``export``, ``synth``,
``release``) must show them as visible escapes (:mod:`privgame.cli.terminal`).
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _hardening import REPO, cli_command
from hypothesis import given
from hypothesis import strategies as st

from privgame.cli.main import main
from privgame.cli.terminal import SafeStream, json_text, safe_output, terminal_safe

ESC = "\x1b"
# What a terminal would act on (tab and line feed give the output its shape).
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HOSTILE_NAMES = [
    f"{ESC}[31mred{ESC}[0m",
    f"{ESC}]8;;http://127.0.0.1:9/x{ESC}\\link{ESC}]8;;{ESC}\\",
    f"title{ESC}]0;pwned\x07",
    "csi\x9b2J",
    "bidi\u202etxt",
    "multi\nline",
    "back\x08\x08space\x7f",
]
HOSTILE_FILE = f"ho{ESC}[5mst\nile{ESC}]0;x\x07.csv"


def _raw(text: str, *, carriage_return: bool = False) -> list[str]:
    """The control characters in ``text`` that a terminal would act on."""
    found = RAW_CONTROL.findall(text)
    return [c for c in found if not (carriage_return and c == "\r")]


@pytest.fixture(scope="module")
def hostile_csv(adult_rows: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = adult_rows.iloc[:1500, : len(HOSTILE_NAMES) + 1].copy()
    table.columns = ["age", *HOSTILE_NAMES]
    table.iloc[:40, 1] = f"{ESC}[2Jboom"  # category values too
    path = tmp_path_factory.mktemp("hostile") / HOSTILE_FILE
    table.to_csv(path, index=False)
    return path


# ---- the function ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"{ESC}[2J", "\\x1b[2J"),
        ("\x07\x08\r\x7f\x9b", "\\x07\\x08\\x0d\\x7f\\x9b"),
        ("a\u202eb\u2066c", "a\\u202eb\\u2066c"),
        ("line\nand\ttab", "line\nand\ttab"),
        ("café 中文 ü", "café 中文 ü"),
    ],
)
def test_control_characters_become_visible_escapes(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_one_line_escapes_line_breaks_and_tabs_too() -> None:
    assert terminal_safe("a\nb\tc\r", one_line=True) == "a\\x0ab\\x09c\\x0d"


@given(st.text())
def test_no_text_keeps_a_raw_control_character(text: str) -> None:
    assert not _raw(terminal_safe(text))
    assert "\n" not in terminal_safe(text, one_line=True)


@given(
    st.recursive(st.text() | st.integers(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner))
)
def test_json_text_is_valid_json_of_the_same_value_and_inert(value: object) -> None:
    text = json_text(value)
    assert json.loads(text) == value
    assert not _raw(text) and "\n" not in text


def test_the_guarded_streams_escape_and_are_put_back(capsys: pytest.CaptureFixture[str]) -> None:
    before = sys.stdout, sys.stderr
    with safe_output():
        assert isinstance(sys.stdout, SafeStream) and isinstance(sys.stderr, SafeStream)
        print(f"{ESC}[31mred")
        print(f"{ESC}]0;title\x07", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    out, err = capsys.readouterr()
    assert out == "\\x1b[31mred\n" and err == "\\x1b]0;title\\x07\n"


# ---- every command that echoes the data --------------------------------------------------------


def test_schema_shows_hostile_names_escaped(hostile_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", str(hostile_csv)]) == 0
    out, err = capsys.readouterr()
    assert not _raw(out) and not _raw(err)
    assert out.startswith("ho\\x1b[5mst\\x0aile\\x1b]0;x\\x07.csv: 8 columns")
    assert "\\x1b[31mred\\x1b[0m" in out and "multi\\x0aline" in out and "bidi\\u202etxt" in out
    assert "back\\x08\\x08space\\x7f" in out


def test_schema_json_is_inert_and_exact(hostile_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", str(hostile_csv), "--json"]) == 0
    out, err = capsys.readouterr()
    assert not _raw(out) and not _raw(err)
    assert [c["name"] for c in json.loads(out)["columns"]] == ["age", *HOSTILE_NAMES]


def test_errors_show_hostile_names_escaped_on_one_line(
    hostile_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["--out", str(tmp_path)]
    domain = ["--domain", str(tmp_path / f"d{ESC}[2J\n.json"), "-o", str(tmp_path / "s.csv")]
    cases = [
        ["schema", str(hostile_csv), "--role", f"{HOSTILE_NAMES[0]}=continuous"],  # a role error
        ["schema", str(tmp_path / HOSTILE_FILE)],  # no such file
        ["run", "--data", str(hostile_csv), "--generator", f"no{ESC}[2Jsuch", "--out", str(tmp_path)],
        ["run", "--data", str(hostile_csv), "--generator", "marginals", "--target-ids", f"1{ESC}[2J", *out],
        ["synth", "--data", str(hostile_csv), "--generator", "marginals", "--rows", "5", *domain],
        ["report", str(tmp_path / f"run{ESC}]0;t\x07")],
    ]
    for argv in cases:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert not _raw(out) and not _raw(err), (argv, err)
        assert err.startswith("privgame: ") and "Traceback" not in err
        lines = err.splitlines()
        assert all(line.startswith(("privgame: ", "  - ")) for line in lines), err
    hostile = tmp_path / f"bad{ESC}[31m\nname.csv"
    hostile.write_bytes(b"a,b\n1,2\n")
    assert main(["schema", str(hostile)]) == 2
    err = capsys.readouterr().err
    assert "bad\\x1b[31m\\x0aname.csv" in err and not _raw(err)


@pytest.fixture(scope="module")
def hostile_run(hostile_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """``privgame run`` on the hostile file, with its progress bar: (run folder, stdout, stderr)."""
    out = tmp_path_factory.mktemp("runs")
    population = out.parent / f"pop{ESC}[8m\nulation.csv"  # named in the set-up's description
    pd.read_csv(hostile_csv).iloc[::-1].to_csv(population, index=False)
    argv = ["run", "--data", str(hostile_csv), "--population", str(population), "--generator", "marginals"]
    argv += ["--targets", "3", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    result = subprocess.run(
        cli_command(*argv, "--out", str(out)),
        cwd=REPO,
        capture_output=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder, result.stdout.decode(), result.stderr.decode()  # bytes: keep the \r as written


def test_run_its_progress_bar_and_summary_print_text_only(hostile_run: tuple[Path, str, str]) -> None:
    _, out, err = hostile_run
    assert not _raw(out)
    assert not _raw(err, carriage_return=True)  # the progress bar's own carriage returns only
    assert "\r[" in err and "units" in err
    assert "(pop\\x1b[8m\\x0aulation.csv)" in out and "(pop\\x1b[8m\\x0aulation.csv)" in err


def test_report_and_export_print_text_only(
    hostile_run: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = hostile_run[0]
    for argv in (
        ["report", str(folder)],
        ["report", str(folder), "--json"],
        ["export", str(folder), "--what", "records", "-o", str(tmp_path / f"r{ESC}[2J\n.csv")],
        ["export", str(folder), "--what", "spec", "-o", str(tmp_path / "spec.json")],
        ["release", str(folder), "--rows", "5", "--accept-risk", "-o", str(tmp_path / f"rel{ESC}[2J\n.csv")],
        ["extend", str(folder), "--n-eval", "10", "--all", "--workers", "1", "--quiet"],
    ):
        assert main(argv) == 0, argv
        out, err = capsys.readouterr()
        assert not _raw(out) and not _raw(err), argv
    exported = pd.read_csv(tmp_path / f"r{ESC}[2J\n.csv")
    assert f"value:{HOSTILE_NAMES[0]}" in exported.columns  # the file keeps the exact names


def _on_a_terminal(argv: list[str]) -> tuple[int, str, str]:
    """Run ``argv`` with its stdout on a pseudo-terminal: (status, what the terminal got, stderr)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        process = subprocess.Popen(argv, cwd=REPO, stdout=follower, stderr=subprocess.PIPE, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.stderr is not None
        err = process.stderr.read().decode()
        process.stderr.close()
        code = process.wait(timeout=120)
    finally:
        os.close(leader)
    return code, b"".join(chunks).decode("utf-8", errors="replace"), err


def test_export_to_a_pipe_is_exact_and_to_a_terminal_is_inert(hostile_run: tuple[Path, str, str]) -> None:
    folder = hostile_run[0]
    argv = cli_command("export", str(folder), "--what", "records", "--format", "csv", "-o", "-")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    piped = subprocess.run(argv, cwd=REPO, capture_output=True, timeout=120, check=True, env=env)
    assert f",value:{HOSTILE_NAMES[0]},".encode() in piped.stdout  # the exact bytes into a pipe

    code, shown, err = _on_a_terminal(argv)
    assert code == 0, err
    assert "value:\\x1b[31mred" in shown or "value:\x1b[31mred" in shown
    assert not _raw(shown, carriage_return=True)  # the terminal's own \r\n line ends only

    code, shown, err = _on_a_terminal([*argv[:-4], "--format", "parquet", "-o", "-"])
    assert code == 2 and "Parquet is binary and stdout is a terminal" in err and not shown
