"""What the command line says when a long command is interrupted (Ctrl-C, or SIGTERM, which
:func:`privgame.cli.main.main` turns into the same interrupt): where, and how to go on."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from privgame.cli.terminal import terminal_safe

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "execution_flags", "interrupted", "privgame_command"]

EXIT_INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as a shell reports it."""

EXIT_TERMINATED = 143
"""The exit status after SIGTERM (128 + SIGTERM), as a shell reports it; the command line returns it
where a command interrupted by SIGTERM returned :data:`EXIT_INTERRUPTED`."""


def privgame_command(*parts: object) -> str:
    """``python -m privgame`` followed by ``parts``, each quoted for a POSIX shell."""
    return "python -m privgame " + shlex.join(str(part) for part in parts)


def execution_flags(args: argparse.Namespace) -> list[str]:
    """The ``--workers``, ``--scheduler`` and ``--plugin-time-limit`` options given on the command
    line, to repeat them."""
    flags: list[str] = []
    if getattr(args, "workers", None) is not None:
        flags += ["--workers", str(args.workers)]
    if getattr(args, "scheduler", None):
        flags += ["--scheduler", args.scheduler]
    if getattr(args, "plugin_time_limit", None) is not None:
        flags += ["--plugin-time-limit", f"{args.plugin_time_limit:g}"]
    return flags


def interrupted(what: str, path: str | os.PathLike[str], command: str) -> int:
    """Print that ``what`` (``"run"``, ``"study"``) in ``path`` was interrupted and how to resume it.

    Parameters
    ----------
    what : str
        What was interrupted, for the message.
    path : path-like
        Its folder, which keeps every finished unit of work.
    command : str
        The exact command that finishes it (:func:`privgame_command`).

    Returns
    -------
    int
        :data:`EXIT_INTERRUPTED`, the exit status to return.
    """
    where = terminal_safe(str(path), one_line=True)
    print(
        f"\nprivgame: interrupted. The {what} folder {where} keeps every finished unit of work.\n"
        f"Resume it with: {terminal_safe(command, one_line=True)}",
        file=sys.stderr,
        flush=True,
    )
    return EXIT_INTERRUPTED
