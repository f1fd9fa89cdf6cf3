"""The command line's one-line progress bar."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from privgame.cli.terminal import carriage_return

if TYPE_CHECKING:
    from privgame.games.engine import Progress

__all__ = ["ProgressBar", "duration"]


class ProgressBar:
    """A one-line progress bar on stderr."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.last = 0.0
        self.phase = ""

    def __call__(self, p: Progress) -> None:
        if self.quiet:
            return
        now = time.time()
        if self.phase == "screen" and p.phase != "screen":
            print(file=sys.stderr)  # the screen's bar stays on its line; the exact game's starts below
        elif now - self.last < 0.2 and p.phase not in ("done", self.phase):
            return
        self.phase = p.phase
        self.last = now
        width = 30
        filled = int(width * p.fraction)
        eta = "--" if p.eta is None else duration(p.eta)
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {100 * p.fraction:5.1f}%  "
            f"units {p.done}/{p.total}  fits {p.fits_done:,}/{p.fits_total:,}  "
            f"elapsed {duration(p.elapsed)}  eta {eta}  ({p.phase})"
        )
        carriage_return(sys.stderr)  # back to the start of the line, past the terminal filter
        print(line, end="\n" if p.phase == "done" else "", file=sys.stderr, flush=True)


def duration(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``."""
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
