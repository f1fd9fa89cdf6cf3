"""Launching a run in a background process that outlives the dashboard session.

The dashboard writes the run folder (spec and data), then starts ``python -m privgame resume``
on it in a new session, with its output in ``engine.log``. Closing the browser does not stop it;
the dashboard finds it again through the folder's ``status.json``.
"""

from __future__ import annotations

import os
import subprocess
import sys

from privgame.store import RunFolder

__all__ = ["launch"]


def launch(folder: RunFolder, *, workers: int | None = None, scheduler: str | None = None) -> int:
    """Start the engine on ``folder`` in a detached process and return its pid."""
    command = [sys.executable, "-m", "privgame", "resume", str(folder.path), "--quiet"]
    if workers:
        command += ["--workers", str(int(workers))]
    if scheduler:
        command += ["--scheduler", scheduler]
    folder.write_status(state="queued")
    fd = os.open(folder.path / "engine.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    folder.write_status(state="queued", pid=process.pid)
    return process.pid
