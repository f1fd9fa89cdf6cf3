"""What watching a run costs: the dashboard process's CPU while a page follows a run.

Usage: ``python benchmarks/watching.py [--seconds 20]``

Starts the dashboard (``streamlit run app.py``) on a free local port with a runs folder holding
one small finished run, then opens its Results page in a headless Chromium (the system's
``chromium``) three ways, measuring the dashboard process's CPU time (``psutil``, the process and
its children) over ``--seconds`` each:

- ``idle``: the Results page of the finished run (nothing to follow);
- ``following``: the same page while the run is being extended: the run's status says so and is
  rewritten every second by this script, as an engine would (no engine runs, so that the figure is
  the dashboard's own);
- ``home``: the Home page, for comparison.

Prints the share of one core each took; the goal of issue 32 is at most 5% while a page follows a
run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import psutil

from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.engine import execute
from privgame.games.preflight import create_run
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs, with_setup

ROOT = Path(__file__).resolve().parents[1]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def dashboard(runs: Path) -> Iterator[tuple[str, psutil.Process]]:
    port = _port()
    env = dict(os.environ, PRIVGAME_RUNS=str(runs), PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--server.headless", "true"]
    command += ["--browser.gatherUsageStats", "false"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r,
            ):
                if r.read().strip() == b"ok":
                    break
            time.sleep(0.3)
        yield url, psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=20)


def cpu(process: psutil.Process) -> float:
    total = sum(process.cpu_times()[:2])
    for child in process.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            total += sum(child.cpu_times()[:2])
    return total


def measure(process: psutil.Process, seconds: float) -> float:
    """The share of one core the dashboard used over ``seconds``."""
    start, wall = cpu(process), time.perf_counter()
    time.sleep(seconds)
    return (cpu(process) - start) / (time.perf_counter() - wall)


def small_run(runs: Path) -> Path:
    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    dataset = load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")
    inputs = release_inputs(dataset, seed=0)
    kwargs = {
        "data_name": dataset.source_name,
        "generator": "marginals",
        "attack": AttackSettings(n_shadow=8, n_eval=8),
        "targets": TargetSelection.plan(outliers=2, random=2),
        "threshold": 0.8,
        "seed": 0,
    }
    spec = RunSpec(**with_setup(kwargs, inputs)).validate()
    return execute(create_run(runs, spec, inputs.table), workers=1).path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from privgame.store.folders import RunFolder

    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        folder = RunFolder(small_run(runs))
        saved = folder.status()
        results: dict[str, float] = {}
        with dashboard(runs) as (url, process), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), headless=True)
            page = browser.new_page()
            page.goto(f"{url}/Results?run={folder.run_id}")
            page.get_by_role("heading", name="Results", exact=True).wait_for(timeout=60_000)
            time.sleep(3)
            results["idle (Results of a finished run)"] = measure(process, args.seconds)
            stop = threading.Event()

            def engine() -> None:  # the status an extending engine writes, once a second
                done = 0
                while not stop.is_set():
                    done += 1
                    folder.write_status(
                        state="running",
                        extending={"n_eval": 100, "requested": time.time()},
                        fits_done=done,
                        fits_total=10_000,
                        eta=600.0,
                    )
                    time.sleep(1.0)

            thread = threading.Thread(target=engine, daemon=True)
            thread.start()
            time.sleep(1.5)
            page.reload()
            page.get_by_text("getting more evaluation runs", exact=False).wait_for(timeout=60_000)
            time.sleep(3)
            results["following (Results during an extension)"] = measure(process, args.seconds)
            stop.set()
            thread.join()
            folder.write_status(**{**saved, "extending": None})
            page.goto(f"{url}/home")
            time.sleep(3)
            results["home"] = measure(process, args.seconds)
            browser.close()
    for name, share in results.items():
        print(f"{name:45s} {share:6.1%} of a core")
    following = results["following (Results during an extension)"]
    print(f"goal: at most 5% while following: {'met' if following <= 0.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
