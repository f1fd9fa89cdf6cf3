"""A generator run as an external command (``--generator external``): a whole audit and a release
through it, its seeds, and every way the command can fail, none of which leaves a process behind."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil
import pytest

import privgame.games.engine
from privgame.cli.main import main
from privgame.core.defaults import PLUGIN_TIME_LIMIT_SETTING
from privgame.core.errors import GeneratorContractError, ParameterError
from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, Sizes, encode, load_dataset
from privgame.data.schema import Schema
from privgame.games.estimate import calibrate
from privgame.generators import create, resolve
from privgame.generators.external import ExternalCommand
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.store.folders import RunFolder

SCRIPT = Path(__file__).with_name("external_script.py")
PLACES = "--train {train} --output {output} --rows {rows} --seed {seed}"


def _command(*flags: str) -> str:
    return f"{sys.executable} {SCRIPT} {PLACES} {' '.join(flags)}".strip()


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema, pd.DataFrame]:
    table = pd.read_csv(BUNDLED_ADULT, nrows=400).dropna()
    dataset = load_dataset(table.to_csv(index=False).encode(), filename="adult.csv")
    return encode(dataset.table, dataset.schema), dataset.schema, dataset.table


@pytest.fixture
def owner_csv(tmp_path: Path) -> Path:
    path = tmp_path / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=400).dropna().to_csv(path, index=False)
    return path


def _sample(adult: Any, *flags: str, seed: int = 0, n: int = 40) -> np.ndarray:
    X, schema, _ = adult
    generator = create("external", command=_command(*flags))
    return generator.fit(X, schema, rng=stream(seed, 0)).sample(n, rng=stream(seed, 1))


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting for its new parent counts) in time."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _args(owner_csv: Path, out: Path, *flags: str) -> list[str]:
    args = [
        "run",
        "--data",
        str(owner_csv),
        "--generator",
        "external",
        "--param",
        f"command={_command(*flags)}",
    ]
    args += ["--outliers", "2", "--random", "2", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    # Every fit is a process of its own: a small screen, none of its records confirmed.
    args += ["--screen-shadows", "20", "--confirm-top", "0"]
    return [*args, "--quiet", "--out", str(out)]


def test_resolve_names_the_external_command_as_a_plugin() -> None:
    assert resolve("external") is ExternalCommand
    generator = create("external", command=_command())
    assert type(generator).__name__ == "PluginGenerator"  # every plug-in check and the time limit apply
    assert generator.label == "external command" and not generator.deterministic_fit
    assert not generator.leaks_training_data
    assert generator.get_params() == {"command": _command()}


def test_an_external_command_audits_and_releases_end_to_end(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    assert main(_args(owner_csv, out)) == 0
    err = capsys.readouterr().err
    assert "plug-in external: follows the generator protocol" in err  # checked before the run
    (folder,) = [RunFolder(p) for p in out.iterdir()]
    assert folder.spec().generator == "external"
    assert folder.spec().generator_params == {"command": _command()}
    assert len(folder.records()) == 4 and folder.status()["state"] == "done"

    release = tmp_path / "synthetic.csv"
    assert main(["release", str(folder.path), "-o", str(release), "--rows", "30", "--accept-risk"]) == 0
    table = pd.read_csv(release)
    assert len(table) == 30 and set(table.columns) <= set(pd.read_csv(owner_csv, nrows=1).columns)


def test_the_same_seeds_give_the_same_table_and_other_seeds_another(adult: Any) -> None:
    first = _sample(adult, "--schema {schema}", seed=1)
    assert first.shape == (40, len(adult[1].used))
    assert np.array_equal(first, _sample(adult, "--schema {schema}", seed=1))
    assert not np.array_equal(first, _sample(adult, seed=2))
    X, schema, _ = adult
    generator = create("external", command=_command()).fit(X, schema, rng=stream(1, 0))
    # The fit's seed and the sample's both count.
    assert not np.array_equal(generator.sample(40, rng=stream(1, 1)), generator.sample(40, rng=stream(1, 2)))


def test_the_commands_output_never_reaches_privgames_stdout(
    adult: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    _sample(adult)
    captured = capfd.readouterr()
    assert "external-script" not in captured.out and "external-script" not in captured.err


def test_a_failing_command_gives_its_exit_status_and_last_stderr_lines(adult: Any) -> None:
    with pytest.raises(GeneratorContractError, match=r"failed \(exit status 3\)") as caught:
        _sample(adult, "--fail")
    assert "ModelError: the generator broke on purpose" in str(caught.value)
    assert "loading the model..." in str(caught.value)


def test_a_command_failing_mid_run_fails_the_run_with_its_last_stderr_line(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    armed = tmp_path / "armed"
    execute = privgame.games.engine.execute

    def arm(*args: Any, **kwargs: Any) -> Any:
        """The run proper: from here on the command fails (it passed the contract check)."""
        armed.touch()
        return execute(*args, **kwargs)

    monkeypatch.setattr(privgame.games.engine, "execute", arm)
    out = tmp_path / "runs"
    assert main(_args(owner_csv, out, f"--fail-if-exists {armed}")) == 2
    err = capsys.readouterr().err
    assert "ModelError: the generator broke on purpose" in err and "exit status 3" in err
    assert "Traceback" not in err
    (folder,) = [RunFolder(p) for p in out.iterdir()]
    assert folder.status()["state"] == "failed"
    assert "ModelError: the generator broke on purpose" in folder.status()["error"]


def test_a_hanging_command_is_stopped_at_the_time_limit_with_every_process_it_started(
    adult: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLUGIN_TIME_LIMIT_SETTING, "2")
    pids = tmp_path / "pids"
    started = time.perf_counter()
    with pytest.raises(GeneratorContractError, match=r"external took longer than the limit of 2 s"):
        _sample(adult, f"--spawn-child-and-hang {pids}")
    assert time.perf_counter() - started < 30  # the command would sleep for ten minutes
    script, grandchild = (int(pid) for pid in pids.read_text().split())
    assert _gone(script) and _gone(grandchild)


def test_ctrl_c_while_the_command_runs_kills_every_process_it_started(adult: Any, tmp_path: Path) -> None:
    X, schema, _ = adult
    pids = tmp_path / "pids"
    generator = ExternalCommand(_command(f"--spawn-child-and-hang {pids}")).fit(X, schema, rng=stream(0, 0))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            generator.sample(10, rng=stream(0, 1))
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    script, grandchild = (int(pid) for pid in pids.read_text().split())
    assert _gone(script) and _gone(grandchild)


def test_output_with_other_columns_lists_every_difference(adult: Any) -> None:
    _, schema, _ = adult
    first, second, *_ = schema.names
    with pytest.raises(GeneratorContractError, match="columns are not the training table's") as caught:
        _sample(adult, "--bad-columns")
    assert caught.value.problems == [
        f"column {first!r} is missing.",
        f"column {second!r} is missing.",
        "column 'invented' is not a column of the training table; remove it.",
    ]


def test_a_command_with_bad_output_is_stopped_before_the_run(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    assert main(_args(owner_csv, out, "--bad-columns")) == 2
    assert "'invented' is not a column of the training table" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_a_value_outside_the_categories_names_the_column(adult: Any) -> None:
    column = next(c.name for c in adult[1].used if c.role == "categorical")
    with pytest.raises(GeneratorContractError, match="external generator command") as caught:
        _sample(adult, f"--bad-value {column}")
    (problem,) = caught.value.problems
    assert f"column {column!r}" in problem and "no such category" in problem


def test_a_command_that_is_not_there_is_named(adult: Any) -> None:
    X, schema, _ = adult
    generator = create("external", command=f"/no/such/python {PLACES}").fit(X, schema, rng=stream(0, 0))
    with pytest.raises(GeneratorContractError, match="no program '/no/such/python' was found"):
        generator.sample(5, rng=stream(0, 1))


@pytest.mark.parametrize("placeholder", ["{train}", "{output}", "{rows}", "{seed}"])
def test_a_missing_placeholder_is_a_parameter_error(placeholder: str) -> None:
    command = _command().replace(placeholder, "x")
    with pytest.raises(ParameterError, match=rf"no {re.escape(placeholder)} placeholder.*e\.g\. --param"):
        create("external", command=command)


@pytest.mark.parametrize("command", ["", "   ", [], 3, ["python", 3]])
def test_a_command_that_is_not_a_command_line_is_a_parameter_error(command: Any) -> None:
    with pytest.raises(ParameterError, match="external generator's command"):
        create("external", command=command)


def test_a_command_given_as_a_list_runs_as_it_is(adult: Any) -> None:
    X, schema, _ = adult
    argv = [sys.executable, str(SCRIPT), *PLACES.split()]
    out = create("external", command=argv).fit(X, schema, rng=stream(0, 0)).sample(5, rng=stream(0, 1))
    assert out.shape == (5, len(schema.used))


def test_the_estimate_counts_the_time_the_command_takes(adult: Any) -> None:
    _, schema, table = adult
    spec = RunSpec(
        data_name="adult.csv",
        data_fingerprint="x",
        schema=schema.to_dict(),
        sizes=Sizes(aux=120, eval=120, target=30).to_dict(),
        generator="external",
        generator_params={"command": _command("--sleep 0.3")},
        attack=AttackSettings(n_shadow=8, n_eval=8),
        targets=TargetSelection(mode="random", k=2),
    )
    calibration = calibrate(spec, table, fits=1)
    assert calibration.fit_sample >= 0.3 and calibration.shadow_fit_sample >= 0.3


def _quoted_lines(err: str) -> list[str]:
    """The lines of the command's stderr as privgame printed them: real lines, indented."""
    assert "\\x0a" not in err, err  # never one line with escaped line breaks
    lines = err.splitlines()
    start = lines.index("  - its last lines of stderr:")
    return lines[start + 1 :]


def test_the_commands_last_lines_of_stderr_are_printed_as_lines_when_the_check_fails(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args(owner_csv, tmp_path / "runs", "--fail")) == 2
    err = capsys.readouterr().err
    assert "sample() raised GeneratorContractError: The external generator command" in err
    assert _quoted_lines(err) == [
        "      external-script: this goes to stderr",
        "      loading the model...",
        "      ModelError: the generator broke on purpose",
    ]


def test_the_commands_last_lines_of_stderr_are_printed_as_lines_when_the_run_fails(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    armed = tmp_path / "armed"
    execute = privgame.games.engine.execute

    def arm(*args: Any, **kwargs: Any) -> Any:
        armed.touch()
        return execute(*args, **kwargs)

    monkeypatch.setattr(privgame.games.engine, "execute", arm)
    assert main(_args(owner_csv, tmp_path / "runs", f"--fail-if-exists {armed}")) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[lines.index("  - its last lines of stderr:") - 1].startswith(
        "privgame: The external generator command"
    )
    assert _quoted_lines(err)[-2:] == [
        "      loading the model...",
        "      ModelError: the generator broke on purpose",
    ]


def test_control_characters_in_the_commands_stderr_are_escaped_line_by_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from privgame.cli.main import _print_error

    _print_error(
        GeneratorContractError("failed.", ["its last lines of stderr:"], quoted=["a\x1b[2Jb", "c\rd"])
    )
    assert capsys.readouterr().err.splitlines()[-2:] == ["      a\\x1b[2Jb", "      c\\x0dd"]
