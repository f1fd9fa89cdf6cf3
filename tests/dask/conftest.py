"""A real Dask cluster for the tests: a scheduler and two workers, each its own process on 127.0.0.1.

They are started the way a user would (``dask scheduler``, ``dask worker``) from a folder outside
the repository, so the workers import the installed privgame; every process is killed at the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from privgame.data import BUNDLED_ADULT

START_SECONDS = 90.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    """The processes of a local Dask cluster and a client to inspect it."""

    address: str
    folder: Path
    client: Any = None
    scheduler: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def _spawn(self, name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with (self.folder / f"{name}.log").open("wb") as log:
            # A session of its own, so that the process and its children (the nanny's worker)
            # can be killed together.
            return subprocess.Popen(
                [sys.executable, "-m", "dask", *args],
                cwd=self.folder,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )

    def start_scheduler(self) -> None:
        """Start the scheduler on this cluster's address."""
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._spawn(
            "scheduler", "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"
        )

    def start_worker(self, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start one more single-threaded worker process (``env``: extra environment variables)."""
        worker = self._spawn(
            f"worker-{len(self.workers)}",
            "worker",
            self.address,
            "--nworkers",
            "1",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--local-directory",
            str(self.folder / "scratch"),
            env=env,
        )
        self.workers.append(worker)
        return worker

    def kill_worker(self, worker: subprocess.Popen[bytes]) -> None:
        """SIGKILL a worker and its nanny, as if its host died."""
        kill(worker)

    def wait_for_workers(self, n: int) -> None:
        """Block until ``n`` workers are connected."""
        self.client.wait_for_workers(n, timeout=START_SECONDS)

    def logs(self) -> str:
        """The tail of every process's log, for failure messages."""
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(self.folder.glob("*.log")))


def kill(process: subprocess.Popen[bytes]) -> None:
    """Kill a process started by :class:`Cluster` and its children."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


@contextlib.contextmanager
def running_cluster(folder: Path, workers: int, env: dict[str, str] | None = None) -> Iterator[Cluster]:
    """A scheduler and ``workers`` workers on a free port of 127.0.0.1, killed on exit."""
    from distributed import Client

    folder.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(address=f"tcp://127.0.0.1:{_free_port()}", folder=folder)
    try:
        cluster.start_scheduler()
        for _ in range(workers):
            cluster.start_worker(env)
        cluster.client = Client(cluster.address, timeout=f"{START_SECONDS:g}s", set_as_default=False)
        cluster.wait_for_workers(workers)
        yield cluster
    finally:
        if cluster.client is not None:
            cluster.client.close()
        for process in [*cluster.workers, cluster.scheduler]:
            if process is not None:
                kill(process)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("dask"), workers=2) as cluster:
        yield cluster


@pytest.fixture
def start_cluster() -> Callable[..., contextlib.AbstractContextManager[Cluster]]:
    """:func:`running_cluster`, for a test that needs a cluster of its own."""
    return running_cluster


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "adult-small.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=1500).to_csv(path, index=False)
    return path
