"""Numbers as the reports, the command line and the pages write them: one rule for every face.

A figure that does not exist (``None``) or cannot be computed (NaN, e.g. the AUC of a record
whose evaluation runs all fell in one class) reads "undefined" everywhere; it used to read
"undefined" on some pages and "nan" on others.
"""

from __future__ import annotations

import math
import sys
from numbers import Integral, Real
from typing import Any

__all__ = ["UNDEFINED", "number_text"]

UNDEFINED = "undefined"
"""How a missing or not computable figure reads."""


def number_text(value: Any, digits: int = 3) -> str:
    """``value`` written for people.

    Parameters
    ----------
    value : Any
        A figure: a float (numpy's too) is written with ``digits`` decimals, an integer as it is,
        ``None`` and NaN as :data:`UNDEFINED`, a bool as "yes" or "no"; text is left as it is.
    digits : int, default 3

    Returns
    -------
    str
    """
    if value is None:
        return UNDEFINED
    if _is_bool(value):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        number = float(value)
        return UNDEFINED if math.isnan(number) else f"{number:.{digits}f}"
    return str(value)


def _is_bool(value: Any) -> bool:
    # numpy's bool is no Integral; numpy is not imported for it (the command line's help must
    # start without it): a numpy value exists only once numpy is.
    numpy = sys.modules.get("numpy")
    return isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))
