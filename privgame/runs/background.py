"""Launching a run in a background process that outlives the dashboard session.

The dashboard writes the run folder (spec and data), then starts ``python -m privgame resume``
on it in a new session, with its output in ``engine.log``. Closing the browser does not stop it;
the dashboard finds it again through the folder's ``status.json``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from privgame.store.folders import RunFolder, iter_run_folders, launching

if TYPE_CHECKING:
    import pandas as pd

    from privgame.runs.remedy import Remedy
    from privgame.settings.run_spec import RunSpec

__all__ = [
    "RemedyLaunch",
    "dismiss_extension",
    "extension_state",
    "forget_remedy_launch",
    "launch",
    "launch_extend",
    "launch_once",
    "launch_remedy",
    "remedy_launches",
    "resume_stopped",
    "start_detached",
    "start_remedy_launch",
]


def launch(
    folder: RunFolder,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    estimate: float | None = None,
) -> int:
    """Start the engine on ``folder`` in a detached process and return its pid.

    ``estimate`` (the run's estimated seconds) is kept in the status: the engine shows it as the
    time left until units have finished (see :func:`privgame.games.engine.execute`).
    """
    command = [sys.executable, "-m", "privgame", "resume", str(folder.path), "--quiet"]
    folder.write_status(state="queued")
    if estimate is not None and math.isfinite(estimate):
        folder.write_status(estimate_seconds=float(estimate))
    pid = start_detached(folder.path / "engine.log", command + _executor(workers, scheduler))
    folder.write_status(state="queued", pid=pid)
    return pid


def _same_settings(spec: RunSpec) -> dict[str, object]:
    return {**spec.to_dict(), "versions": None}


def _resume_unless_active(found: RunFolder, workers: int | None, scheduler: str | None = None) -> bool:
    if found.needs_engine() and found.damage() is None:
        launch(found, workers=workers, scheduler=scheduler)
        return True
    return False


def resume_stopped(folder: RunFolder, *, workers: int | None = None, scheduler: str | None = None) -> bool:
    """Resume ``folder`` from its checkpoints in a detached process, unless an engine holds it or
    is starting for it, it is finished, or its status or spec is damaged.

    As ``python -m privgame resume RUN_DIR`` does, once however often it is asked for: the check
    and the start hold the runs folder's launch lock (:func:`privgame.store.folders.launching`).

    Returns
    -------
    bool
        Whether it was started now.
    """
    with launching(folder.path.parent):
        return _resume_unless_active(folder, workers, scheduler)


def launch_once(
    root: str | os.PathLike[str],
    spec: RunSpec,
    table: pd.DataFrame,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    estimate: float | None = None,
) -> tuple[RunFolder, bool]:
    """Create a run under ``root`` and start it in a detached process, unless it is under way.

    A run under ``root`` with the same settings (package versions aside) that is not finished
    (created, queued or running) is that launch asked for again, by a second click or a reload:
    it is returned, and resumed if no engine holds it, instead of starting a duplicate that would
    compete for the cores and give the same results. A finished run with the same settings does
    not stop a new launch.

    Returns
    -------
    folder : RunFolder
    new : bool
        Whether it was made now (False: the same run was under way).

    Raises
    ------
    ParameterError, SizeError, DataError
        From :func:`privgame.games.preflight.create_run`, before anything is written.
    """
    from privgame.games.preflight import create_run

    wanted = _same_settings(spec)
    with launching(root):
        for other in iter_run_folders(root):
            try:
                same = other.status().get("state") in ("created", "queued", "running") and (
                    _same_settings(other.spec()) == wanted
                )
            except ValueError:  # a damaged run is never the one asked for
                continue
            if same:
                _resume_unless_active(other, workers, scheduler)
                return other, False
        folder = create_run(root, spec, table)
        launch(folder, workers=workers, scheduler=scheduler, estimate=estimate)
        return folder, True


def launch_extend(
    folder: RunFolder,
    *,
    n_eval: int,
    threshold: float | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
) -> int:
    """Start ``python -m privgame extend`` on a finished run in a detached process; return its pid.

    It adds evaluation runs to the records undecided at ``threshold`` (the run's own by default)
    up to ``n_eval`` per game, exactly as the command does. ``status.json`` records the request
    under ``extending`` until the extension ends (:func:`privgame.games.engine.extend` clears it).

    Raises
    ------
    ParameterError
        For an ``n_eval`` that is odd, below 4, or not above the run's own.
    """
    from privgame.core.errors import ParameterError

    current = folder.spec().attack.n_eval
    if isinstance(n_eval, bool) or not isinstance(n_eval, int) or n_eval < 4 or n_eval % 2:
        raise ParameterError(
            f"The evaluation runs per game must be an even whole number >= 4; got {n_eval!r}."
        )
    if n_eval <= current:
        raise ParameterError(
            f"The run already has {current} evaluation runs per game; ask for more than {current}."
        )
    command = [
        sys.executable,
        "-m",
        "privgame",
        "extend",
        str(folder.path),
        "--n-eval",
        str(n_eval),
        "--quiet",
    ]
    if threshold is not None:
        command += ["--threshold", repr(float(threshold))]
    request = {"n_eval": n_eval, "threshold": threshold, "requested": time.time()}
    folder.write_status(extending=request)  # before the start: a quick extension clears it itself
    pid = start_detached(folder.path / "engine.log", command + _executor(workers, scheduler))
    if folder.status().get("extending"):
        folder.write_status(extending=request | {"pid": pid})
    return pid


def launch_remedy(
    parent: RunFolder, remedy: Remedy, *, workers: int | None = None, estimate: float | None = None
) -> tuple[RunFolder, bool]:
    """Create a remedy run of ``parent`` and start its re-audit in a detached process, once.

    The folder is made here, as ``python -m privgame remedy --no-run`` makes it (with the
    parent's reusable checkpoints, :func:`privgame.runs.remedy.create_remedy`); the re-audit is then
    ``python -m privgame resume`` on it, like any launched run, so its progress is the new run's
    ``status.json``. When the same remedy of the same parent was made before
    (:func:`privgame.runs.remedy.find_remedy`), no second run is made: that run is returned, and
    resumed if it is neither running nor done (a cancelled or failed re-audit goes on from its
    checkpoints). Looking for it and making it hold the runs folder's launch lock
    (:func:`privgame.store.folders.launching`), so that clicks answered on concurrent threads make
    one run. ``estimate`` (the re-audit's estimated seconds,
    :func:`privgame.runs.remedy.estimate_remedy`) is shown as its time left until units have finished.

    Returns
    -------
    folder : RunFolder
        The remedy run.
    new : bool
        Whether it was made now (False: it existed).

    Raises
    ------
    ParameterError
        For a remedy that cannot be made (see :func:`privgame.runs.remedy.plan_remedy`).
    """
    from privgame.runs.remedy import create_remedy, find_remedy, plan_remedy

    planned = plan_remedy(parent, remedy)
    with launching(parent.path.parent):
        found = find_remedy(parent, planned[0])
        if found is not None:
            _resume_unless_active(found, workers)
            return found, False
        folder, _ = create_remedy(parent, remedy, planned=planned)
        launch(folder, workers=workers, estimate=estimate)
        return folder, True


@dataclass
class RemedyLaunch:
    """A :func:`launch_remedy` made on a thread of its own (:func:`start_remedy_launch`).

    ``folder`` and ``new`` are what :func:`launch_remedy` returned, ``error`` what it raised;
    all None while the launch is being made (:meth:`making`).
    """

    parent: str
    remedy: Remedy
    folder: RunFolder | None = None
    new: bool | None = None
    error: Exception | None = None
    thread: threading.Thread | None = field(default=None, repr=False)

    def making(self) -> bool:
        """Whether the remedy run is still being made."""
        return self.thread is not None and self.thread.is_alive()


_LAUNCHES: dict[tuple[str, str], RemedyLaunch] = {}
_LAUNCHES_LOCK = threading.Lock()


def start_remedy_launch(
    parent: RunFolder, remedy: Remedy, *, workers: int | None = None, estimate: float | None = None
) -> RemedyLaunch:
    """Make and start the remedy run (:func:`launch_remedy`) on a thread of this process; return
    at once.

    A click in the dashboard answers on a script run that the next click or a reload may stop
    before it reaches the launch; a thread of its own makes the run whatever the page does. The
    same remedy of the same parent asked for while it is being made gets the launch under way.
    """
    key = (str(parent.path), repr(remedy))
    with _LAUNCHES_LOCK:
        under_way = _LAUNCHES.get(key)
        if under_way is not None and under_way.making():
            return under_way
        launch = RemedyLaunch(parent=str(parent.path), remedy=remedy)

        def make() -> None:
            try:
                launch.folder, launch.new = launch_remedy(parent, remedy, workers=workers, estimate=estimate)
            except Exception as error:  # reported to the page that follows the launch
                launch.error = error

        launch.thread = threading.Thread(target=make, name=f"remedy of {parent.run_id}", daemon=True)
        _LAUNCHES[key] = launch
        launch.thread.start()
    return launch


def remedy_launches(parent: RunFolder) -> list[RemedyLaunch]:
    """The launches of remedies of ``parent`` this process has made or is making, oldest first."""
    with _LAUNCHES_LOCK:
        return [launch for launch in _LAUNCHES.values() if launch.parent == str(parent.path)]


def forget_remedy_launch(launch: RemedyLaunch) -> None:
    """Forget an ended launch once its outcome has been shown."""
    with _LAUNCHES_LOCK:
        _LAUNCHES.pop((launch.parent, repr(launch.remedy)), None)


def extension_state(folder: RunFolder) -> str:
    """Where the extension requested by :func:`launch_extend` stands.

    Returns
    -------
    str
        ``"none"`` (no extension requested, or it ended: the results are up to date),
        ``"running"`` (starting, queued or adding runs), or ``"died"`` (its process ended without
        finishing, e.g. on a refused request; ``engine.log`` says why).
    """
    status = folder.status()
    request = status.get("extending")
    if not isinstance(request, dict):
        return "none"
    if folder.is_running():
        return "running"
    if status.get("state") in ("queued", "running"):
        return "died" if folder.status_is_stale() else "running"
    # Not yet holding the run's lock: a process that is still starting, or one that ended early.
    requested = request.get("requested")
    starting = isinstance(requested, (int, float)) and time.time() - requested < 60
    return "running" if starting else "died"


def dismiss_extension(folder: RunFolder) -> None:
    """Forget an extension request whose process died; the run keeps its results."""
    folder.write_status(extending=None)


def _executor(workers: int | None, scheduler: str | None) -> list[str]:
    options = ["--workers", str(int(workers))] if workers else []
    return options + (["--scheduler", scheduler] if scheduler else [])


def start_detached(log_path: Path, command: list[str]) -> int:
    """Start ``command`` in a new session, its output appended to ``log_path`` (created private,
    mode 0600); return its pid. The process outlives its caller (the dashboard's session)."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    return process.pid
