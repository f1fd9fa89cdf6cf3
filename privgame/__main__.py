"""``python -m privgame``: the command line.

An interrupt (Ctrl-C, or SIGTERM) answers with a message and an exit status at any moment
privgame's own code runs, not only while a command works (:func:`privgame.cli.main.main`): while
the command line loads, it says that nothing was done and how to run the command again; once the
command has returned, the interpreter's shutdown (a second or so of freeing memory) is not
interrupted, so that the command's exit status stands. Only the interpreter's own start, before
any of privgame runs, still ends by the signal.
"""

import signal
import sys


def _interrupted_while_loading(signum: int) -> int:
    """Say that the command was interrupted before it started, and how to run it again."""
    import shlex

    from privgame.cli.terminal import terminal_safe

    command = "python -m privgame " + shlex.join(sys.argv[1:])
    print(
        "\nprivgame: interrupted before the command started; nothing was done.\n"
        f"Resume it with: {terminal_safe(command, one_line=True)}",
        file=sys.stderr,
        flush=True,
    )
    return 128 + signum


def _run() -> int:
    received = [signal.SIGINT]

    def interrupt(signum: int, frame: object) -> None:
        received[0] = signal.Signals(signum)
        raise KeyboardInterrupt

    # SIGTERM as Ctrl-C while loading too (the command line's own handler takes over in main).
    if signal.getsignal(signal.SIGTERM) != signal.SIG_IGN:
        signal.signal(signal.SIGTERM, interrupt)
    try:
        from privgame.cli.main import main
    except KeyboardInterrupt:
        return _interrupted_while_loading(received[0])
    try:
        try:
            return main()
        except KeyboardInterrupt:
            # An interrupt that escaped the command (a command answers its own with what to do):
            # still the status of an interrupted command, never a death by the signal.
            print("\nprivgame: interrupted.", file=sys.stderr, flush=True)
            return 128 + received[0]
    finally:
        # The command is done: an interrupt now would only turn its exit status into a death by
        # the signal, with a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    raise SystemExit(_run())
