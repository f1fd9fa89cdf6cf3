"""The command line's help and start-up: every default is stated, and ``--help`` starts fast."""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from privgame.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _options(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.Action]]:
    """Every option of ``parser`` and of its sub-commands, with the command it belongs to."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _options(subparser, f"{name} {sub}")
        elif action.option_strings and not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield name, action


def _help(action: argparse.Action) -> str:
    return (action.help or "") % {"default": action.default, "prog": "privgame"}


def _default_text(value: object) -> str:
    if isinstance(value, list | tuple):
        value = value[0]
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return str(value)


OPTIONS = list(_options(build_parser(), "privgame"))


def test_the_walk_sees_every_command() -> None:
    commands = {name for name, _ in OPTIONS}
    for expected in ("privgame run", "privgame resume", "privgame extend", "privgame study size"):
        assert expected in commands
    assert len(OPTIONS) > 100


@pytest.mark.parametrize(("command", "action"), OPTIONS, ids=[f"{c}:{a.dest}" for c, a in OPTIONS])
def test_every_option_has_help_that_states_its_default(command: str, action: argparse.Action) -> None:
    text = _help(action)
    assert text.strip(), f"{command} {action.option_strings[0]} has no help"
    if action.required or isinstance(action, argparse._StoreTrueAction) or action.default in (None, []):
        return
    assert "default" in text, f"{command} {action.option_strings[0]}: {text!r}"
    assert _default_text(action.default) in text, f"{command} {action.option_strings[0]}: {text!r}"


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("privgame run", "--missing"),
        ("privgame run", "--target-selection"),
        ("privgame run", "--classifier"),
        ("privgame run", "--epsilon"),
        ("privgame run", "--out"),
        ("privgame resume", "--workers"),
        ("privgame resume", "--scheduler"),
        ("privgame resume", "--quiet"),
        ("privgame study size", "--missing"),
        ("privgame study size", "--classifier"),
        ("privgame study size", "--target-selection"),
        ("privgame study epsilon", "--size"),
        ("privgame study size", "--aux-size"),
    ],
)
def test_the_options_named_in_the_issue_state_their_default(command: str, flag: str) -> None:
    found = [a for c, a in OPTIONS if c == command and flag in a.option_strings]
    assert len(found) == 1
    assert "default" in _help(found[0])


def test_epsilon_help_states_privbayes_default_of_1() -> None:
    from privgame.generators.bayesnet import PrivBayesGenerator

    (action,) = [a for c, a in OPTIONS if c == "privgame run" and "--epsilon" in a.option_strings]
    assert f"default {PrivBayesGenerator().epsilon}" in _help(action)


def test_size_defaults_print_the_numbers_they_scale_to() -> None:
    from privgame.data.splits import default_sizes

    adult = default_sizes(45_222)
    helps = {(c, a.dest): _help(a) for c, a in OPTIONS}
    assert f"{adult.aux:,}" in helps[("privgame run", "aux_size")]
    assert f"{adult.target:,}" in helps[("privgame run", "size")]
    assert f"{adult.eval:,}" in helps[("privgame run", "eval_size")]
    assert f"{adult.target:,}" in helps[("privgame study epsilon", "size")]


def test_out_defaults_to_privgame_runs_or_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from privgame.store.folders import default_runs_root

    args = build_parser().parse_args(["run", "--data", "d.csv", "--generator", "marginals"])
    assert args.out is None
    monkeypatch.delenv("PRIVGAME_RUNS", raising=False)
    assert default_runs_root() == Path("runs")
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path))
    assert default_runs_root() == tmp_path
    study = build_parser().parse_args(["study", "size", "--data", "d.csv", "--generator", "marginals"])
    assert study.out is None


def test_study_help_lists_every_option_of_every_study() -> None:
    for name in ("size", "epsilon", "datasets", "convergence"):
        done = subprocess.run(
            [sys.executable, "-m", "privgame", "study", name, "--help"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        flags = [f for c, a in OPTIONS if c == f"privgame study {name}" for f in a.option_strings]
        assert len(flags) > 10
        missing = [flag for flag in flags if flag not in done.stdout]
        assert not missing, (name, missing)


LAZY = """
import sys
import privgame.cli.main
parser = privgame.cli.main.build_parser()
parser.format_help()
heavy = sorted(
    m for m in sys.modules
    if m.split(".")[0] in ("sklearn", "plotly", "numba", "scipy", "pandas", "streamlit")
)
print(",".join(heavy))
"""


def test_the_command_line_imports_no_heavy_library_to_start() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LAZY], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_version_and_help_run_without_heavy_imports() -> None:
    for flag in ("--version", "--help"):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "privgame", flag],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0
        imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines()}
        assert "privgame" in imported
        assert not imported & {"sklearn", "plotly", "numba", "pandas", "numpy"}, flag
