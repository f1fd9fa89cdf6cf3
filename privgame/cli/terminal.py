"""Text-only terminal output: nothing the command line prints can drive the terminal.

Column names, category values and file names come from the user's data, and a terminal acts on
the control characters in what it is sent: ``ESC [ 2 J`` clears the screen, an OSC sequence
(``ESC ] 8 ;; URL``) makes a link or sets the window title, a carriage return or backspace
overwrites what was printed, a C1 character (``\\x9b``) is a one-byte ``ESC [`` on some
terminals, and the bidirectional overrides (``U+202E``) reorder what is shown.

:func:`terminal_safe` renders every such character as a visible escape (``\\x1b``,
``\\u202e``) and leaves all other text alone. The command line applies it at one choke point:
:func:`safe_output` puts a :class:`SafeStream` in front of ``sys.stdout`` and ``sys.stderr`` for
the whole command (:func:`privgame.cli.main.main`), so every ``print`` of every command, argparse's
messages and warnings included, is escaped; line breaks and tabs, which give the output its
shape, pass. Where one line of output holds a name that could hold a line break (an error
message, a cell of the schema table, a line of the summary), ``one_line=True`` escapes line
breaks and tabs too. :func:`json_text` writes JSON whose strings escape the same characters,
so that it stays valid JSON. The progress bar's carriage return is written past the filter
with :func:`carriage_return`.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["SafeStream", "carriage_return", "json_text", "raw_stream", "safe_output", "terminal_safe"]

# C0 controls but tab and line feed, DEL, C1 controls, the bidirectional embeddings, overrides
# and isolates, and the line and paragraph separators.
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_UNSAFE = re.compile(f"[{_CONTROL}]")
_UNSAFE_ONE_LINE = re.compile(f"[{_CONTROL}\t\n]")
# What json.dumps(ensure_ascii=False) leaves raw in a string: all of the above but C0.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with every character that a terminal would act on shown as a visible escape.

    Escaped: the C0 control characters (ESC, BEL, backspace, carriage return, ...), DEL, the C1
    control characters (``\\x80``-``\\x9f``), the bidirectional formatting characters and the
    Unicode line and paragraph separators. Line feeds and tabs pass unless ``one_line``.

    Parameters
    ----------
    text : object
        The text (anything else is passed through ``str`` first).
    one_line : bool, default False
        Escape line feeds and tabs too, for a name or message that must stay on its line.

    Returns
    -------
    str
        ``"\\x1b[31m"`` for ESC ``[31m``, ``"\\u202e"`` for a right-to-left override; all
        other characters unchanged.
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_visible, str(text))


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)``, with no character a terminal acts on.

    JSON escapes the C0 control characters already; DEL, the C1 controls and the bidirectional
    characters are written as ``\\u00XX`` escapes too, which JSON readers decode to the same
    strings.

    Parameters
    ----------
    value : object
        Anything ``json.dumps`` accepts.
    **options
        More options of ``json.dumps`` (``sort_keys``, ``default``, ``indent``...).

    Returns
    -------
    str
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class SafeStream:
    """A text stream that writes through :func:`terminal_safe` to another.

    Every other attribute (``flush``, ``isatty``, ``fileno``, ``encoding``, ``buffer``...) is the
    wrapped stream's. ``raw`` is the wrapped stream itself.

    Parameters
    ----------
    stream : TextIO
        The stream to protect (``sys.stdout`` or ``sys.stderr``).
    """

    def __init__(self, stream: TextIO) -> None:
        self.raw = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters escaped; returns ``len(text)``."""
        self.raw.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line through :meth:`write`."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: TextIO | SafeStream) -> TextIO:
    """The stream behind a :class:`SafeStream` (the stream itself otherwise)."""
    return stream.raw if isinstance(stream, SafeStream) else stream


def carriage_return(stream: TextIO | SafeStream) -> None:
    """Write a carriage return past the filter (the progress bar's start of line)."""
    raw_stream(stream).write("\r")


@contextlib.contextmanager
def safe_output() -> Iterator[None]:
    """Put a :class:`SafeStream` in front of ``sys.stdout`` and ``sys.stderr`` while inside.

    The streams in place on entry are put back on exit. Streams that are already safe are left
    as they are.
    """
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
