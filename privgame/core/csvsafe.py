"""Spreadsheet-safe text: a cell that starts like a formula is shown as text.

A low-level helper shared by the run store, the reports, the release and the exports, so that
every CSV privgame writes is safe to open in a spreadsheet; it needs only pandas.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["csv_safe", "neutralise_cell"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value: Any) -> Any:
    """Make one cell harmless for spreadsheets.

    A string that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return would be
    read as a formula by spreadsheet programs; it gets a leading apostrophe, which they show as
    text. Anything else, numbers included, is returned unchanged.

    Parameters
    ----------
    value : object
        A cell.

    Returns
    -------
    object
        ``"'" + value`` for a dangerous string, else ``value``.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names are safe to open in a spreadsheet.

    Every string cell (and column name) is passed through :func:`neutralise_cell`; numeric,
    boolean and missing cells are left exactly as they are, with their dtypes.

    Parameters
    ----------
    df : DataFrame

    Returns
    -------
    DataFrame
    """
    out = df.copy()
    for name in out.columns:
        column = out[name]
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
            continue
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        out[name] = column.map(neutralise_cell)
    out.columns = [neutralise_cell(c) for c in out.columns]
    return out
