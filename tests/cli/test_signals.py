"""SIGTERM ends a command as Ctrl-C does, and no signal leaves a process or a copy of the data.

Every test runs ``python -m privgame`` as a real process and signals it: the external generator's
command (a long ``sleep``, a child of ``sh``) must be ended with privgame, its temporary folder
(which holds the private table as ``train.csv``) removed, in one process and with worker
processes, and the command must print how to resume it. ``extend`` says how to resume it whenever
Ctrl-C comes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "generators" / "external_script.py"
PLACES = ["--train", "{train}", "--output", "{output}", "--rows", "{rows}", "--seed", "{seed}"]


@pytest.fixture(scope="module")
def owner_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("signals") / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=400).dropna().to_csv(path, index=False)
    return path


class Privgame:
    """``python -m privgame ARGS`` as a process of its own, its stderr read as it comes."""

    def __init__(self, args: list[str], tmpdir: Path, *, own_group: bool = False) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmpdir)}
        # A child inherits an ignored SIGINT (a shell starts background jobs so): a handler set
        # here is reset to the default in the child, as in a terminal.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "privgame", *args],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=own_group,  # a process group to signal, as `timeout` does
            )
        finally:
            signal.signal(signal.SIGINT, previous)
        self._said: list[str] = []
        stderr = self.proc.stderr
        assert stderr is not None
        self._reader = threading.Thread(target=lambda: self._said.extend(iter(lambda: stderr.read(1), "")))
        self._reader.start()

    @property
    def stderr(self) -> str:
        return "".join(self._said)

    def wait_for(self, ready: Callable[[], bool], what: str, seconds: float = 60) -> None:
        """Wait until ``ready()``, failing with what the process said if it ends or takes too long."""
        deadline = time.monotonic() + seconds
        while not ready():
            assert self.proc.poll() is None, f"privgame ended before {what}:\n{self.stderr}"
            assert time.monotonic() < deadline, f"no {what} within {seconds:g} s:\n{self.stderr}"
            time.sleep(0.02)

    def kill(self) -> None:
        """End the process if it still runs (a failed test must not leave it behind)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.end()

    def end(self, seconds: float = 60) -> int:
        """Wait for the process to end (killed after ``seconds``) and for all its stderr."""
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise
        finally:
            self._reader.join(timeout=10)
        return self.proc.returncode


def _processes_with(word: str) -> list[int]:
    """The processes whose command line holds ``word`` (zombies have none, so are not counted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if word.encode() in argv:
                found.append(int(entry.name))
    return found


def _none_left(word: str, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while _processes_with(word):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _kill_all(word: str) -> None:
    """Clean up after a failed test: no test may leave a ``sleep`` behind on the machine."""
    for pid in _processes_with(word):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def seconds() -> str:
    """A sleep duration no other process on the machine has: it names the command's ``sleep``."""
    word = f"4321{secrets.randbelow(10**6):06d}"
    yield word
    _kill_all(word)


def _external(marker: Path, seconds: str) -> str:
    """An external generator's command: ``sh`` that, once ``marker`` exists, runs ``sleep seconds``
    as its child (before the run proper the command ends at once, so the contract check passes)."""
    script = f'if [ -e "$0" ]; then sleep {seconds}; fi; exec "$@"'  # $0: the marker
    return shlex.join(["sh", "-c", script, str(marker), sys.executable, str(SCRIPT), *PLACES])


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _run_until_the_command_sleeps(
    owner_csv: Path, tmp_path: Path, seconds: str, workers: int, *, own_group: bool = False
) -> tuple[Privgame, Path, Path]:
    """A run of the external generator, once its command sleeps: (privgame, its TMPDIR, its --out)."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    marker = tmp_path / "sleep-from-now-on"
    out = tmp_path / "runs"
    args = ["run", "--data", str(owner_csv), "--generator", "external"]
    args += ["--param", f"command={_external(marker, seconds)}"]
    args += ["--outliers", "2", "--random", "2", "--n-shadow", "8", "--n-eval", "8"]
    args += ["--screen-shadows", "40", "--confirm-top", "0", "--workers", str(workers), "--quiet"]
    privgame = Privgame([*args, "--out", str(out)], tmpdir, own_group=own_group)
    try:
        privgame.wait_for(lambda: "run folder: " in privgame.stderr, "run folder")
        marker.touch()  # the run proper has started: every command from now on sleeps
        privgame.wait_for(lambda: bool(_processes_with(seconds)), "sleeping command")
        if workers > 1:  # let the other worker start its command too, when it has a unit to run
            time.sleep(1.0)
        assert list(tmpdir.glob("privgame-external-*")), "the command's folder is there while it runs"
    except BaseException:
        privgame.kill()
        raise
    return privgame, tmpdir, out


def _nothing_left(seconds: str, tmpdir: Path) -> None:
    assert _none_left(seconds), "the external command's sleep outlived privgame"
    assert not list(tmpdir.glob("privgame-external-*")), "a copy of the private table was left behind"


@pytest.mark.parametrize(
    ("workers", "whom"),
    [(1, "privgame"), (2, "privgame"), (2, "its process group")],
    ids=["in-process", "worker-processes", "process-group"],
)
def test_sigterm_ends_a_run_like_ctrl_c_with_no_command_or_copy_of_the_data_left(
    owner_csv: Path, tmp_path: Path, seconds: str, workers: int, whom: str
) -> None:
    """SIGTERM to privgame (``kill``), or to every process of its group, workers included (as
    ``timeout`` and service managers send it)."""
    group = whom == "its process group"
    privgame, tmpdir, out = _run_until_the_command_sleeps(
        owner_csv, tmp_path, seconds, workers, own_group=group
    )
    try:
        if group:
            os.killpg(privgame.proc.pid, signal.SIGTERM)
        else:
            privgame.proc.send_signal(signal.SIGTERM)
        status = privgame.end()
    finally:
        privgame.kill()
    stderr = privgame.stderr
    assert status == 128 + signal.SIGTERM, stderr  # as a shell reports a SIGTERM
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    assert f"The run folder {folder} keeps every finished unit of work" in stderr
    resume = stderr.split("Resume it with: ", 1)[1].splitlines()[0]
    assert resume == f"python -m privgame resume {shlex.quote(str(folder))} --workers {workers}"
    _nothing_left(seconds, tmpdir)


def test_a_worker_killed_outright_fails_the_run_and_its_command_and_copy_of_the_data_go_too(
    owner_csv: Path, tmp_path: Path, seconds: str
) -> None:
    """SIGKILL (the system out of memory) runs no clean-up in the worker: the engine sweeps."""
    privgame, tmpdir, out = _run_until_the_command_sleeps(owner_csv, tmp_path, seconds, workers=2)
    try:
        shell = _parent(_processes_with(seconds)[0])
        os.kill(_parent(shell), signal.SIGKILL)  # the worker that runs that command
        status = privgame.end()
    finally:
        privgame.kill()
    stderr = privgame.stderr
    assert status == 2, stderr
    assert "A worker process ended in the middle of its work (SIGKILL(-9))" in stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    assert f"python -m privgame resume {folder}" in stderr
    _nothing_left(seconds, tmpdir)


@pytest.fixture(scope="module")
def finished_run(owner_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished run, with N_eval = 4 for two records (copied by each test that extends it)."""
    out = tmp_path_factory.mktemp("extend-runs")
    args = ["run", "--data", str(owner_csv), "--generator", "marginals", "--outliers", "1", "--random", "1"]
    args += ["--n-shadow", "20", "--n-eval", "4", "--screen", "none", "--workers", "1", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "privgame", *args, "--out", str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def _numpy_loaded(pid: int) -> bool:
    """Whether process ``pid`` has loaded numpy: privgame's own code is running, past Python's start."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


# While the command loads the engine and the run's records (before it names the run folder; a
# Ctrl-C there once ended the process by the signal), as it names the folder, as its first units
# run, and later.
@pytest.mark.parametrize("moment", ["started", "run folder", "units", "later"])
def test_ctrl_c_at_any_moment_of_extend_prints_the_resume_command(
    finished_run: Path, tmp_path: Path, moment: str
) -> None:
    folder = tmp_path / "run"
    shutil.copytree(finished_run, folder)
    privgame = Privgame(["extend", str(folder), "--n-eval", "4000", "--all", "--workers", "1"], tmp_path)
    try:
        if moment == "started":  # loading what the command needs, before it names the run folder
            privgame.wait_for(lambda: _numpy_loaded(privgame.proc.pid), "numpy")
        elif moment == "run folder":
            privgame.wait_for(lambda: "run folder: " in privgame.stderr, "run folder")
        else:
            privgame.wait_for(lambda: "units " in privgame.stderr, "progress")
            if moment == "later":  # N_eval 4 -> 4,096 takes well over 1.5 s (512 took 1 s on CI)
                time.sleep(1.5)
        privgame.proc.send_signal(signal.SIGINT)
        status = privgame.end()
    finally:
        privgame.kill()
    stderr = privgame.stderr
    assert status == 128 + signal.SIGINT, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    resume = stderr.split("Resume it with: ", 1)[1].splitlines()[0]
    assert resume == f"python -m privgame extend {shlex.quote(str(folder))} --n-eval 4000 --all --workers 1"


def test_an_interrupt_that_escapes_the_command_is_still_an_interrupted_status(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A KeyboardInterrupt that gets past the command's own handler (once seen in the full suite
    as a death by SIGINT after `extend` had printed its resume command) ends with status 130."""
    import privgame.__main__ as entry
    import privgame.cli.main

    def interrupted() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(privgame.cli.main, "main", interrupted)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        assert entry._run() == 128 + signal.SIGINT
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    assert "privgame: interrupted." in capsys.readouterr().err
