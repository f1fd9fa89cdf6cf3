"""JSON from users, parsed within bounds of size and nesting depth.

Python's ``json`` module parses nested arrays and objects recursively, so a short text of deeply
nested brackets (``[[[[...]]]]``) ends in a :class:`RecursionError` instead of a value or a
``ValueError``. :func:`nesting_depth` measures how deep a text nests without parsing it (in linear
time, with no recursion), and :func:`loads_limited` refuses a text that is too long or too deep
before handing it to ``json.loads``. Every JSON text a user supplies (a ``--domain`` file, a
``--param`` value, a file that might be JSON posing as CSV) goes through them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from privgame.core.errors import ParameterError

__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MAX_DEPTH", "check_limits", "loads_limited", "nesting_depth"]

DEFAULT_MAX_CHARS = 32 * 1024 * 1024
"""The longest JSON text accepted by default (32 Mi characters)."""

DEFAULT_MAX_DEPTH = 32
"""The deepest nesting of arrays and objects accepted by default."""

# A JSON string (unrolled so that it matches in linear time), then anything but a bracket.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest, without parsing it.

    Brackets inside strings do not count. The text need not be valid JSON: the count is an
    upper bound of what a parser would have to recurse into (a closing bracket too many counts
    as the start of a new level 0).

    Parameters
    ----------
    text : str

    Returns
    -------
    int
        0 for a scalar, 1 for ``[1, 2]``, 2 for ``{"a": [1]}``, and so on.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    level = np.cumsum(steps)
    # A closing bracket too many cannot make the depth negative: count from the lowest point so far.
    floor = np.minimum.accumulate(np.minimum(level, 0))
    return int((level - floor).max())


def check_limits(
    text: str,
    *,
    what: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> None:
    """Refuse a JSON text longer than ``max_chars`` or nested deeper than ``max_depth``.

    Parameters
    ----------
    text : str
        The JSON text (not parsed here).
    what : str
        What the text is, for messages (e.g. ``"The domain"``).
    max_chars : int, default 32 Mi
        The longest text accepted.
    max_depth : int, default 32
        The deepest nesting of arrays and objects accepted.

    Raises
    ------
    ParameterError
        Naming the length or the depth, the limit, and the fix.
    """
    if len(text) > max_chars:
        raise ParameterError(
            f"{what} is {len(text):,} characters long, over the limit of {max_chars:,}; shorten it."
        )
    depth = nesting_depth(text)
    if depth > max_depth:
        raise ParameterError(
            f"{what} nests arrays or objects {depth:,} levels deep, more than the {max_depth} "
            "allowed; flatten it."
        )


def loads_limited(
    text: str,
    *,
    what: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """``json.loads(text)``, refusing a text longer than ``max_chars`` or nested deeper than ``max_depth``.

    Parameters
    ----------
    text : str
        The JSON text.
    what : str
        What the text is, for messages (e.g. ``"The domain"``).
    max_chars : int, default 32 Mi
        The longest text accepted.
    max_depth : int, default 32
        The deepest nesting of arrays and objects accepted.

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    ParameterError
        For a text that is too long or too deeply nested (checked before parsing), or that is not
        valid JSON (with the line and column).
    """
    check_limits(text, what=what, max_chars=max_chars, max_depth=max_depth)
    try:
        return json.loads(text)
    except RecursionError:  # not reached within the depth limit; kept as a last guard
        raise ParameterError(f"{what} nests arrays or objects too deeply; flatten it.") from None
    except ValueError as exc:
        detail = (
            f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
            if isinstance(exc, json.JSONDecodeError)
            else str(exc)
        )
        raise ParameterError(f"{what} is not valid JSON ({detail}).") from None
