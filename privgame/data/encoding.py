"""Table <-> numeric array.

Generators and the attack never see strings: a table becomes one ``float64`` array of shape
``(n_rows, n_used_columns)`` where a categorical column holds integer codes ``0 .. k-1`` (the
index of the value in ``Column.categories``) and a continuous column holds its numbers. Decoding
maps codes back to categories and rounds integer continuous columns, so output keeps the input's
values and dtypes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privgame.core.errors import SchemaError
from privgame.data.schema import CATEGORICAL, Schema

__all__ = ["decode", "encode"]


def encode(table: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Encode the used columns of ``table`` as a float array.

    Parameters
    ----------
    table : DataFrame
        Rows to encode; must hold every used column of ``schema`` with no missing value.
    schema : Schema
        Roles and domains.

    Returns
    -------
    ndarray of shape (n_rows, n_used_columns), float64

    Raises
    ------
    SchemaError
        Listing every column with a missing column, a value outside its declared categories,
        or a missing value.
    """
    used = schema.used
    out = np.empty((len(table), len(used)), dtype=np.float64)
    problems: list[str] = []
    for j, col in enumerate(used):
        if col.name not in table.columns:
            problems.append(f"column {col.name!r} is in the schema but not in the table.")
            continue
        values = table[col.name]
        if col.role == CATEGORICAL:
            cats = list(col.categories or ())
            # get_indexer gives -1 for a value outside the categories (an explicit membership test).
            codes = pd.Index(_align_categories(cats, values), dtype=object).get_indexer(values.astype(object))
            bad = (codes < 0) | values.isna().to_numpy()
            if bad.any():
                examples = pd.unique(values[bad].astype(str))[:3].tolist()
                problems.append(
                    f"column {col.name!r}: {int(bad.sum())} values are not among its categories "
                    f"(e.g. {examples}); add them to the declared categories or drop those rows."
                )
            out[:, j] = codes
        else:
            numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(numeric)
            if bad.any():
                problems.append(
                    f"column {col.name!r}: {int(bad.sum())} values are missing or not finite numbers; "
                    "drop those rows or change the column's role."
                )
            out[:, j] = numeric
    if problems:
        raise SchemaError("The table does not fit its schema.", problems)
    return out


def _align_categories(cats: list[object], values: pd.Series) -> list[object]:
    """Categories in the dtype of ``values`` so that pandas matches them (e.g. 1 vs '1')."""
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        try:
            floats = [float(c) if not isinstance(c, bool) else c for c in cats]
        except (TypeError, ValueError, OverflowError):
            return cats
        # Integers beyond 2**53 (a uint64 id) may have no float of their own (2**53 + 1 rounds
        # to 2**53, matching nothing): keep the categories exact unless every one is a float.
        exact = all(_is_float_exactly(f, c) for f, c in zip(floats, cats, strict=True))
        return floats if exact and len(set(floats)) == len(cats) else cats
    return cats


def _is_float_exactly(f: object, c: object) -> bool:
    """Whether the float ``f`` made of category ``c`` stands for exactly the same number."""
    if isinstance(c, bool | float | np.floating):
        return True
    if isinstance(c, int | np.integer):
        return f == int(c)  # a Python int: compared with the float exactly (numpy would round)
    if isinstance(c, str):
        try:
            return f == int(c)  # an integer written out: exact only if the float equals it
        except ValueError:
            return True  # a decimal written out: the float is what it means
    return f == c


_INT64_SAFE = 2.0**63 - 2.0**10
"""Floats below this in absolute value round to an int64 without overflow."""


def decode(array: np.ndarray, schema: Schema) -> pd.DataFrame:
    """Turn an encoded array back into a table with the schema's used columns.

    Categorical codes become their categories (as an object column, or an integer column when
    every category is an integer); integer continuous columns are rounded to ``int64``.
    """
    used = schema.used
    if array.ndim != 2 or array.shape[1] != len(used):
        raise SchemaError(
            f"Cannot decode an array of shape {array.shape}: the schema has {len(used)} used columns."
        )
    data: dict[str, object] = {}
    for j, col in enumerate(used):
        column = array[:, j]
        if col.role == CATEGORICAL:
            cats = np.asarray(col.categories, dtype=object)
            values = cats[column.astype(np.int64)]
            if len(cats) and all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in cats):
                data[col.name] = values.astype(np.int64)
            elif len(cats) and all(isinstance(c, (float, np.floating)) for c in cats):
                data[col.name] = values.astype(np.float64)
            else:
                data[col.name] = pd.array(values, dtype=object)
        elif col.integer and np.all(np.abs(column) < _INT64_SAFE):
            data[col.name] = np.round(column).astype(np.int64)
        elif col.integer:
            # Whole numbers beyond int64 (a column reaching 1e308): rounded, kept as floats, never
            # wrapped around to -9223372036854775808.
            data[col.name] = np.round(column).astype(np.float64)
        else:
            data[col.name] = column.astype(np.float64)
    return pd.DataFrame(data)
