"""The command line: ``python -m privgame <command> ...``.

Each command lives in its own module of :mod:`privgame.cli.commands` (see there for the contract);
:data:`COMMANDS` lists them. :func:`main` turns every error privgame raises on purpose, and any
unreadable path, into a message on stderr and exit status 2, never a traceback, and prints text
only: control characters from the data are escaped (:mod:`privgame.cli.terminal`). SIGTERM (what
``kill``, ``timeout`` and service managers send) ends a command as Ctrl-C does: the work in flight
is cleaned up (an external generator's command and its copy of the data included), and a long
command says how to resume; only the exit status differs (143 instead of 130).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType, ModuleType

from privgame._version import __version__
from privgame.cli.commands import (
    anonymity,
    check_file,
    compare,
    export,
    extend,
    plan,
    release,
    remedy,
    report,
    run,
    schema,
    study,
    synth,
    utility,
)
from privgame.cli.commands._interrupt import EXIT_INTERRUPTED, EXIT_TERMINATED
from privgame.cli.terminal import safe_output, terminal_safe
from privgame.core.defaults import PLUGIN_TIME_LIMIT_SETTING
from privgame.core.errors import PrivgameError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: list[ModuleType] = [
    schema,
    synth,
    run,
    plan,
    extend,
    remedy,
    compare,
    report,
    release,
    export,
    study,
    utility,
    anonymity,
    check_file,
]

EXIT_BAD_INPUT = 2
_WRITE_ERRORS = {errno.ENOSPC, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-parser per module of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="privgame",
        description=(
            "Audit the per-record membership-inference risk of a synthetic data release "
            "(TAPAS attack; traditional and model-seeded privacy games)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"privgame {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status.

    Everything the command prints goes through :func:`privgame.cli.terminal.safe_output`, so no
    control character from the data (a column or file name) reaches the terminal.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        0 on success; 2 for bad input (the problems are printed on stderr); 130 when interrupted
        (Ctrl-C), 143 when terminated (SIGTERM).
    """
    with safe_output(), _terminate_as_interrupt() as terminated:
        status = _main(argv)
    return EXIT_TERMINATED if terminated and status == EXIT_INTERRUPTED else status


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[list[int]]:
    """While inside, SIGTERM raises :class:`KeyboardInterrupt` in the main thread, as Ctrl-C does.

    Python's default for SIGTERM ends the process at once, running no ``finally`` block: an
    external generator's command would outlive privgame, with its copy of the private table in
    the temporary folder. The handler in place before is put back on exit. Yields a list that
    gets the signal's number once one was received. Nothing changes off the main thread (where
    no handler can be set) or when SIGTERM is ignored (as Python leaves an ignored SIGINT).
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:
        yield received
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # e.g. for `plan` to print a `run` command
    try:
        with _plugin_time_limit(getattr(args, "plugin_time_limit", None)):
            return int(args.handler(args))
    except PrivgameError as error:
        _print_error(error)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # stdout's reader went away (e.g. `| head`): silence the flush at exit (Python docs).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:
        where = f" {terminal_safe(error.filename, one_line=True)}" if error.filename else ""
        reason = error.strerror or str(error)
        if error.errno in _WRITE_ERRORS:  # only a write can fail so: say which, and the fix
            from privgame.service import write_error

            print(f"privgame: {write_error(error.filename or '?', error)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(
            f"privgame: cannot read{where}: {reason}. Check the path and its permissions.",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("privgame: interrupted.", file=sys.stderr)
        return 130


@contextlib.contextmanager
def _plugin_time_limit(seconds: float | None) -> Iterator[None]:
    """Set ``--plugin-time-limit`` for this command only (its worker processes inherit it)."""
    if seconds is None:
        yield
        return
    before = os.environ.get(PLUGIN_TIME_LIMIT_SETTING)
    os.environ[PLUGIN_TIME_LIMIT_SETTING] = f"{seconds:g}"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PLUGIN_TIME_LIMIT_SETTING, None)
        else:
            os.environ[PLUGIN_TIME_LIMIT_SETTING] = before


def _print_error(error: PrivgameError) -> None:
    """Print ``error``'s summary and each of its problems on stderr, each on one line."""
    print(f"privgame: {terminal_safe(error.summary, one_line=True)}", file=sys.stderr)
    for problem in error.problems:
        print(f"  - {terminal_safe(problem, one_line=True)}", file=sys.stderr)
    for line in error.quoted:  # another program's output: its lines as lines, each escaped
        print(f"      {terminal_safe(line, one_line=True)}", file=sys.stderr)
