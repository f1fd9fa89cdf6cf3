"""A generator that is an external command: it runs in another environment, from files.

A generator whose dependencies clash with privgame's (one that pins an older pandas, say) can be
audited from its own virtual environment: privgame writes the training table as a CSV file and
runs a command that reads it and writes a synthetic table, seeded. The generator is named
``external`` and takes its command as a parameter::

    privgame run --data owner.csv --generator external --param 'command=/opt/gen/.venv/bin/python
        gen.py --train {train} --output {output} --rows {rows} --seed {seed}'

The command's placeholders are filled in for every sample: ``{train}`` (the training table, a
CSV file of the schema's used columns with real values), ``{output}`` (where the command must
write its CSV file: a header with exactly those columns, in any order, and ``{rows}`` rows),
``{rows}``, ``{seed}`` (an integer below 2**31; the same seed must give the same table) and,
optionally, ``{schema}`` (the schema as JSON). :class:`ExternalCommand` is a plug-in to privgame
(:func:`privgame.generators.plugins.resolve` finds it by its name), so every plug-in check applies
to it, the time limit on one call included; a command that fails, writes a table privgame cannot
use or runs over the limit is stopped with a :class:`~privgame.core.errors.GeneratorContractError`, and
the whole process group it started is killed.

The command's folder (``privgame-external-<engine pid>-*`` in the temporary folder) holds real
rows of the private table, so it must not outlive the call, however the call ends. An exception
(Ctrl-C, SIGTERM turned into one by the command line) runs the call's clean-up; a process that is
told to end at once (a worker's SIGTERM, a worker whose engine died) calls :func:`stop_commands`
first; and the engine sweeps the folders of its workers that died with no clean-up at all
(:func:`remove_leftovers`). Every command runs with ``PRIVGAME_EXTERNAL_FOLDER`` set to its folder,
so that the processes it started can be found even when the command's own process is gone.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd

from privgame.core.errors import GeneratorContractError, ParameterError, SchemaError
from privgame.data.encoding import decode, encode
from privgame.data.schema import CATEGORICAL, Schema
from privgame.generators.base import SyntheticGenerator

__all__ = [
    "PLACEHOLDERS",
    "ExternalCommand",
    "command_seconds",
    "remove_leftovers",
    "set_owner",
    "stop_commands",
]

PLACEHOLDERS = ("{train}", "{output}", "{rows}", "{seed}", "{schema}")
"""The placeholders of a command; all but ``{schema}`` are required."""
_REQUIRED = PLACEHOLDERS[:4]
_EXAMPLE = (
    "e.g. --param 'command=/path/to/other/venv/bin/python gen.py --train {train} --output {output} "
    "--rows {rows} --seed {seed}'"
)
_STDERR_LINES = 20
_TAIL_BYTES = 16_384
# Popen.wait with a timeout polls; a blocking wait would not wake for a signal that the kernel
# hands to another thread, and the plug-in time limit and Ctrl-C are signals to the main thread.
_POLL_SECONDS = 0.5
_SEED_LIMIT = 2**31 - 1
_FOLDER_PREFIX = "privgame-external-"
_FOLDER_SETTING = "PRIVGAME_EXTERNAL_FOLDER"
_waited = 0.0
# The engine process whose pid names this process's command folders (None: this process).
_owner: int | None = None
# The folder of every command running in this process, with the command's process once started.
_running: dict[str, subprocess.Popen[bytes] | None] = {}


def command_seconds() -> float:
    """Wall-clock seconds this process has spent waiting for external commands so far.

    The commands run in processes of their own, whose time :func:`time.process_time` does not
    count; the cost estimate (:mod:`privgame.games.estimate`) adds this to it, as a run's worker is as
    busy waiting for the command as it would be running a generator itself.
    """
    return _waited


class ExternalCommand(SyntheticGenerator):
    """A generator run as an external command that reads a CSV table and writes a synthetic one.

    Parameters
    ----------
    command : str or sequence of str
        The command line, split like a POSIX shell does (:func:`shlex.split`) when a string; no
        shell runs it. It must hold the placeholders ``{train}``, ``{output}``, ``{rows}`` and
        ``{seed}``, and may hold ``{schema}`` (see the module's documentation).

    Raises
    ------
    ParameterError
        For a command that is empty, not text, or misses a required placeholder.
    """

    name: ClassVar[str] = "external"
    label: ClassVar[str] = "external command"
    deterministic_fit: ClassVar[bool] = False
    leaks_training_data: ClassVar[bool] = False

    def __init__(self, command: str | Sequence[str]) -> None:
        self.command = command
        self._argv = _argv(command)

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        """Keep the training rows, their schema and a seed drawn from ``rng``; the command runs
        in :meth:`sample`."""
        self.X_ = np.array(X, dtype=np.float64)
        self.schema_ = schema
        self.seed_ = int(rng.integers(0, _SEED_LIMIT))
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """Run the command on the training table and read its ``n`` synthetic rows.

        The seed handed to the command combines the fit's seed and one drawn from ``rng``, so
        the same streams give the same seed.

        Returns
        -------
        ndarray of shape (n, len(schema.used)), float64
            The command's table, encoded.

        Raises
        ------
        GeneratorContractError
            For a command that cannot start, fails, writes no table, a table with other columns
            or another number of rows, or values outside a column's categories or not numbers.
        """
        self._check_fitted()
        draw = int(rng.integers(0, _SEED_LIMIT))
        seed = int(np.random.SeedSequence((self.seed_, draw)).generate_state(1)[0]) >> 1
        owner = os.getpid() if _owner is None else _owner
        folder = Path(tempfile.mkdtemp(prefix=f"{_FOLDER_PREFIX}{owner}-"))  # mode 0700
        _running[str(folder)] = None
        try:
            paths = {
                "{train}": folder / "train.csv",
                "{output}": folder / "synthetic.csv",
                "{schema}": folder / "schema.json",
            }
            decode(self.X_, self.schema_).to_csv(paths["{train}"], index=False)
            paths["{schema}"].write_text(json.dumps(self.schema_.to_dict()), encoding="utf-8")
            values = {key: str(path) for key, path in paths.items()} | {"{rows}": str(n), "{seed}": str(seed)}
            argv = [_fill(arg, values) for arg in self._argv]
            _run(argv, self._shown, folder)
            return self._read(paths["{output}"], n)
        finally:
            # Removed before it is forgotten: a signal handler in between still finds it.
            shutil.rmtree(folder, ignore_errors=True)
            _running.pop(str(folder), None)

    @property
    def _shown(self) -> str:
        """The command as the user wrote it, for messages."""
        return shlex.join(self._argv)

    def _read(self, path: Path, n: int) -> np.ndarray:
        """The command's output table, checked and encoded."""
        who = f"The external generator command `{self._shown}`"
        if not path.is_file():
            raise GeneratorContractError(
                f"{who} ended without error but wrote no table at the path of {{output}}; write the "
                "synthetic table as a CSV file there."
            )
        try:
            with path.open(newline="", encoding="utf-8-sig") as file:
                header = next(csv.reader(file), [])
            # Every value as written: the categories are matched to their text, never guessed at.
            table = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError, ValueError, csv.Error) as exc:
            raise GeneratorContractError(
                f"{who} wrote a file privgame cannot read as a CSV table ({type(exc).__name__}: {exc}); "
                "write a UTF-8 CSV file with a header line."
            ) from None
        problems = _column_problems(header, [c.name for c in self.schema_.used])
        if problems:
            raise GeneratorContractError(
                f"{who} wrote a table whose columns are not the training table's.", problems
            )
        if len(table) != n:
            raise GeneratorContractError(
                f"{who} wrote {len(table):,} rows, but {n:,} were asked for ({{rows}}); write exactly "
                "that many."
            )
        for col in self.schema_.used:
            if col.role == CATEGORICAL:
                table[col.name] = _as_categories(table[col.name], col.categories or ())
        try:
            return encode(table, self.schema_)
        except SchemaError as error:
            raise GeneratorContractError(
                f"{who} wrote values privgame cannot use; keep each column to the values it can take "
                "(its categories; numbers in a numeric column).",
                error.problems,
            ) from None


def _argv(command: Any) -> list[str]:
    """The command's words, checked."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ParameterError(
                f"The external generator's command cannot be split into words ({exc}); check its "
                f"quotes, {_EXAMPLE}."
            ) from None
    elif isinstance(command, Sequence) and all(isinstance(word, str) for word in command):
        argv = list(command)
    else:
        raise ParameterError(
            f"The external generator's command must be a string or a list of strings, not "
            f"{type(command).__name__}; {_EXAMPLE}."
        )
    if not argv:
        raise ParameterError(f"The external generator's command is empty; {_EXAMPLE}.")
    missing = [key for key in _REQUIRED if not any(key in word for word in argv)]
    if missing:
        raise ParameterError(
            f"The external generator's command has no {', '.join(missing)} placeholder"
            f"{'s' if len(missing) > 1 else ''}; privgame fills in {', '.join(_REQUIRED)} (and "
            f"optionally {{schema}}) for every sample, {_EXAMPLE}."
        )
    return argv


def _fill(word: str, values: dict[str, str]) -> str:
    """``word`` with its placeholders filled; other braces (a script's own) are left alone."""
    for key, value in values.items():
        word = word.replace(key, value)
    return word


def _run(argv: list[str], shown: str, folder: Path) -> None:
    """Run ``argv`` in a session of its own, its output to files in ``folder``.

    Whatever stops the wait (the plug-in time limit's alarm, Ctrl-C, any error) kills the whole
    process group, so that no process the command started outlives the call.

    Raises
    ------
    GeneratorContractError
        When the command cannot start or ends with a non-zero status.
    """
    global _waited
    who = f"The external generator command `{shown}`"
    err_path = folder / "stderr.txt"
    started = time.perf_counter()
    try:
        with (folder / "stdout.txt").open("wb") as out, err_path.open("wb") as err:
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    env={**os.environ, _FOLDER_SETTING: str(folder)},
                )
            except FileNotFoundError:
                raise GeneratorContractError(
                    f"{who} cannot start: no program {argv[0]!r} was found; give the full path of "
                    "the program (e.g. the python of the generator's virtual environment)."
                ) from None
            except OSError as exc:
                raise GeneratorContractError(
                    f"{who} cannot start: {argv[0]!r}: {exc.strerror or exc}; check that it is a "
                    "program you may run."
                ) from None
            _running[str(folder)] = proc
            try:
                code = _wait(proc)
            finally:
                _kill_group(proc)
    finally:
        _waited += time.perf_counter() - started
    if code != 0:
        tail = _tail(err_path)
        raise GeneratorContractError(
            f"{who} failed ({_status(code)}); fix the command and resume the run.",
            ["its last lines of stderr:" if tail else "it wrote nothing on stderr."],
            quoted=tail,
        )


def _wait(proc: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            return proc.wait(timeout=_POLL_SECONDS)
        except subprocess.TimeoutExpired:
            continue


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill every process left in the command's process group (all of it, when it still runs)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        proc.wait()


def set_owner(pid: int) -> None:
    """Name the command folders of this process after the engine process ``pid``.

    A local worker process calls it as it starts, with its engine's pid, so that the engine can
    sweep the folders of a worker that died without clean-up (:func:`remove_leftovers`).
    """
    global _owner
    _owner = int(pid)


def stop_commands() -> None:
    """End every external command running in this process, with every process it started, and
    remove their folders.

    For a process about to end without unwinding (a worker's SIGTERM handler, a worker whose
    engine is gone): the clean-up of :meth:`ExternalCommand.sample` would not run. A command whose
    process is not known yet (it is starting) is found by its folder in the processes' environment.
    """
    for folder, proc in list(_running.items()):
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        _end_processes_of(folder)
        shutil.rmtree(folder, ignore_errors=True)
        _running.pop(folder, None)


def remove_leftovers(owner: int | None = None) -> list[Path]:
    """Remove the command folders of the engine process ``owner`` (this process by default) that
    no command of this process uses, ending every process still working in them.

    The engine calls it once its worker processes are stopped: a worker killed outright (SIGKILL,
    the system out of memory) leaves its folder, with real rows of the private table, and its
    command running.

    Returns
    -------
    list of Path
        The folders removed.
    """
    prefix = f"{_FOLDER_PREFIX}{os.getpid() if owner is None else int(owner)}-"
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        if str(folder) in _running or not folder.is_dir() or folder.is_symlink():
            continue
        _end_processes_of(str(folder))
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _end_processes_of(folder: str) -> None:
    """Kill the process group of every process started in ``folder`` (found by its environment;
    only on systems with ``/proc``, and only processes of this user, whose environment is readable)."""
    marker = f"{_FOLDER_SETTING}={folder}".encode()
    own_group = os.getpgrp()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                if marker not in file.read().split(b"\0"):
                    continue
            group = os.getpgid(int(entry))
            if group == own_group:  # never this process's own group: the process alone
                os.kill(int(entry), signal.SIGKILL)
            else:
                os.killpg(group, signal.SIGKILL)
        except OSError:
            continue


def _status(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by signal {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit status {code}"


def _tail(path: Path) -> list[str]:
    """The last lines of a file."""
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - _TAIL_BYTES))
        text = file.read().decode("utf-8", errors="replace")
    return text.rstrip().splitlines()[-_STDERR_LINES:]


def _column_problems(header: list[str], expected: list[str]) -> list[str]:
    """Every difference between the output's columns and the expected ones."""
    problems = [f"column {name!r} is missing." for name in expected if name not in header]
    problems += [
        f"column {name!r} is not a column of the training table; remove it."
        for name in dict.fromkeys(header)
        if name not in expected
    ]
    problems += [
        f"column {name!r} appears {header.count(name)} times; write it once."
        for name in dict.fromkeys(header)
        if header.count(name) > 1
    ]
    return problems


def _as_categories(texts: pd.Series, categories: Sequence[Any]) -> pd.Series:
    """The categories that ``texts`` spell (a number may be spelt ``3`` or ``3.0``); a text that
    spells none is kept, for :func:`encode` to report."""
    exact = {str(c): c for c in categories}
    numbers: dict[float, Any] = {}
    if all(_is_number(c) for c in categories):
        numbers = {float(c): c for c in categories}

    def category(text: str) -> Any:
        if text in exact:
            return exact[text]
        if numbers:
            with contextlib.suppress(ValueError):
                return numbers.get(float(text), text)
        return text

    return pd.Series([category(text) for text in texts], index=texts.index, dtype=object)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))
