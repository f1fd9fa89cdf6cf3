"""The docs show only commands that exist: every ``python -m privgame ...`` line in a ```bash block
of README.md and docs/*.md parses with the real command-line parser, and nothing is run.

A command is read as a shell would read it for this purpose: lines ending with ``\\`` are joined,
comment lines are skipped, a ``.venv/bin/`` (or any folder) before ``python`` or ``privgame`` is
ignored, and so is everything after a ``|``, ``>``, ``&&`` or ``;``. Positional values are not
checked, so placeholders such as ``RUN_DIR`` or ``runs/<run-id>`` parse; an unknown flag, a
missing value or a choice that does not exist fails.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from privgame.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_BLOCK = re.compile(r"^```bash\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
_STOP = ("|", ">", "&&", ";", "||")
_PYTHONS = {"python", "python3"}


@dataclass(frozen=True)
class DocCommand:
    """One ``privgame`` command shown in a doc: where it is and its arguments after ``privgame``."""

    where: str
    args: tuple[str, ...]


def _logical_lines(block: str) -> list[tuple[int, str]]:
    """The block's lines with continuations joined, each with its offset (in lines) in the block."""
    lines: list[tuple[int, str]] = []
    pending = ""
    start = 0
    for offset, line in enumerate(block.splitlines()):
        if not pending:
            start = offset
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append((start, pending + line))
        pending = ""
    if pending:
        lines.append((start, pending))
    return lines


def _cut(tokens: list[str]) -> list[str]:
    """The tokens before the first shell operator (a pipe, a redirection, ``&&`` or ``;``)."""
    out: list[str] = []
    for token in tokens:
        if token in _STOP or token.startswith((">", "|", "2>")):
            break
        if token.endswith(";"):
            out.append(token[:-1])
            break
        out.append(token)
    return out


def privgame_args(line: str) -> tuple[str, ...] | None:
    """The arguments after ``python -m privgame`` (or the ``privgame`` script) in a shell line, or
    None when the line runs no privgame command."""
    if line.lstrip().startswith("#"):
        return None
    tokens = _cut(shlex.split(line, comments=True))
    programs = [Path(token).name for token in tokens]
    for i, program in enumerate(programs):
        if program in _PYTHONS and tokens[i + 1 : i + 3] == ["-m", "privgame"]:
            return tuple(tokens[i + 3 :])
        if program == "privgame" and all("=" in token for token in tokens[:i]):  # PYTHONPATH=. privgame
            return tuple(tokens[i + 1 :])
    return None


def doc_commands(path: Path) -> list[DocCommand]:
    """Every privgame command in the ```bash blocks of the Markdown file at ``path``."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found: list[DocCommand] = []
    for block in _BLOCK.finditer(text):
        first_line = text.count("\n", 0, block.start(1)) + 1
        for offset, line in _logical_lines(block.group(1)):
            args = privgame_args(line)
            if args is not None:
                found.append(DocCommand(f"{name}:{first_line + offset}", args))
    return found


COMMANDS = [command for path in DOCS for command in doc_commands(path)]


def _parse(parser: argparse.ArgumentParser, args: tuple[str, ...]) -> tuple[int | None, str]:
    """Parse ``args``: (None, "") when they parse, else (the exit status, what argparse printed)."""
    out = io.StringIO()
    with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
        try:
            parser.parse_args(list(args))
        except SystemExit as stop:
            return (stop.code if isinstance(stop.code, int) else 1), out.getvalue()
    return None, ""


def test_the_docs_show_privgame_commands() -> None:
    assert len(COMMANDS) >= 30, [c.where for c in COMMANDS]
    assert any(c.where.startswith("README.md:") for c in COMMANDS)
    shown = {c.args[0] for c in COMMANDS if c.args}
    assert {"run", "report", "export", "release", "remedy", "extend", "study"} <= shown


@pytest.mark.parametrize("command", COMMANDS, ids=[c.where for c in COMMANDS])
def test_every_doc_command_parses(command: DocCommand) -> None:
    status, message = _parse(build_parser(), command.args)
    if "-h" in command.args or "--help" in command.args:
        assert status == 0, f"{command.where}: {message}"
    else:
        shown = shlex.join(command.args)
        assert status is None, f"{command.where}: `privgame {shown}` does not parse:\n{message}"


def _subcommands() -> list[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return sorted(actions[0].choices)


@pytest.mark.parametrize("name", _subcommands())
def test_every_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args([name, "--help"])
    assert stop.value.code == 0
    assert f"privgame {name}" in capsys.readouterr().out


def test_the_check_fails_on_a_flag_that_does_not_exist(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```bash\n# a comment: python -m privgame run --nope\n"
        ".venv/bin/python -m privgame report runs/<run-id> --threshold 0.7 | head > out.txt\n"
        "python -m privgame run --data data/adult.csv.gz --generator synthpop \\\n"
        "    --no-such-flag 3  # a comment\n"
        "PYTHONPATH=. privgame export RUN_DIR --what nothing -o x.csv && echo done\n```\n",
        encoding="utf-8",
    )
    found = doc_commands(doc)
    assert [c.where for c in found] == ["doc.md:3", "doc.md:4", "doc.md:6"]
    found = [c.args for c in found]
    assert found == [
        ("report", "runs/<run-id>", "--threshold", "0.7"),
        ("run", "--data", "data/adult.csv.gz", "--generator", "synthpop", "--no-such-flag", "3"),
        ("export", "RUN_DIR", "--what", "nothing", "-o", "x.csv"),
    ]
    parser = build_parser()
    assert _parse(parser, found[0]) == (None, "")
    status, message = _parse(parser, found[1])
    assert status == 2 and "--no-such-flag" in message
    status, message = _parse(parser, found[2])
    assert status == 2 and "nothing" in message
