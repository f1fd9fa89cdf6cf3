"""Execution under failure (issue 18, groups 9 and 14): worker processes die with the engine, and
a scheduler address that is not Dask's ends in a clear error instead of a hang."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _hardening import REPO, cli_command
from builders import small_spec

import privgame.settings.executors as execution
from privgame.core.errors import RunError
from privgame.games.preflight import create_run
from privgame.settings.run_spec import AttackSettings, TargetSelection

# -- group 9: no orphaned workers ----------------------------------------------------------------


def _children(pid: int) -> set[int]:
    """The live (not zombie) processes whose parent is ``pid``."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[1]) == pid:
            found.add(int(entry))
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_exit_when_the_engine_is_killed(small_adult: Path, tmp_path: Path) -> None:
    spec, table = small_spec(
        small_adult,
        generator="synthpop",
        attack=AttackSettings(n_shadow=400, n_eval=100),
        targets=TargetSelection("random", 6),
    )
    folder = create_run(tmp_path / "runs", spec, table)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    engine = subprocess.Popen(
        cli_command("resume", str(folder.path), "--workers", "2", "--quiet"),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(private_tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while time.monotonic() < deadline and engine.poll() is None:
            workers = _children(engine.pid)
            if len(workers) >= 3 and list(private_tmp.glob("privgame-shared-*")):  # 2 workers + tracker
                break
            time.sleep(0.1)
        assert engine.poll() is None, "the run ended before its workers could be seen"
        assert len(workers) >= 3, workers
        time.sleep(0.5)
        workers |= _children(engine.pid)
    finally:
        os.kill(engine.pid, signal.SIGKILL)
        engine.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = _alive(workers)
    for pid in survivors:  # a failing test must not leave them behind either
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"worker processes outlived the engine: {survivors}"
    # The resource tracker (the last of them) deletes the arrays shared with the workers.
    while list(private_tmp.glob("privgame-shared-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(private_tmp.glob("privgame-shared-*"))
    assert not folder.is_running()


def test_workers_exit_with_their_parent_in_process() -> None:
    """A worker pool of this process: its workers watch this process."""
    calls = [(i, os.getppid, ()) for i in range(4)]
    parents = {result for _, result, _ in execution.run_calls(calls, workers=2)}
    assert parents == {os.getpid()}


# -- group 14: a scheduler address that is not Dask ----------------------------------------------


@pytest.fixture()
def silent_listener() -> Iterator[str]:
    """An address that accepts TCP connections and never says anything."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


@pytest.fixture()
def http_server() -> Iterator[str]:
    """An HTTP server (as Dask's dashboard port would be)."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("peer", ["silent_listener", "http_server"])
def test_an_address_that_is_not_a_dask_scheduler_fails_in_bounded_time(
    peer: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    address = request.getfixturevalue(peer)
    monkeypatch.setattr(execution, "CONNECT_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(RunError) as caught:
        list(execution.run_calls([(0, os.getpid, ())], scheduler=address))
    assert time.monotonic() - started < 15
    message = str(caught.value)
    assert address in message and "did not answer as a Dask scheduler" in message
    assert "8786" in message  # the fix: the scheduler's port, not the dashboard's


def test_a_closed_port_says_it_cannot_be_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(execution, "CONNECT_SECONDS", 1.0)
    with pytest.raises(RunError, match=rf"Cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        execution._connect(f"tcp://127.0.0.1:{port}")
