"""Checks that a loaded table, with its schema, can be audited.

:func:`validate_table` collects every problem at once, each one sentence naming the column and
the fix, so that a user fixes a file in one go rather than one error at a time. Problems with the
file itself (empty, binary, ragged, ...) are found earlier by :func:`privgame.data.load_table`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privgame.data.schema import CATEGORICAL, CONTINUOUS, EXCLUDED, Column, Schema

__all__ = ["DEFAULT_MAX_CATEGORIES", "validate_table"]

DEFAULT_MAX_CATEGORIES = 1000
# The reason Schema.with_roles gives a column the user excluded: such a column is the user's
# choice, so an empty one is no longer a problem.
_USER_EXCLUDED_REASON = "excluded by the user"


MAX_MAGNITUDE = 1e150
"""The largest magnitude a continuous value may have: a column's range and bins are computed in
floats, and a range from -1e308 to 1e308 overflows."""


def validate_table(
    table: pd.DataFrame, schema: Schema, *, max_categories: int = DEFAULT_MAX_CATEGORIES
) -> list[str]:
    """Every problem that stops ``table`` from being audited under ``schema``.

    The checks: a column of the schema missing from the table; a column whose every value is
    missing (unless the user excluded it); fewer than two used columns; a categorical column
    with more than ``max_categories`` categories; infinite numbers in a continuous column; no
    row left once the schema's missing-value policy is applied.

    Parameters
    ----------
    table : DataFrame
        The table as loaded (before the missing-value policy).
    schema : Schema
        Its roles, e.g. from :func:`privgame.data.infer_schema`.
    max_categories : int, default 1000
        The most categories a used categorical column may have.

    Returns
    -------
    list of str
        One sentence per problem, naming the column and the fix; empty when the table is fine.
    """
    problems: list[str] = []
    absent = [c.name for c in schema.columns if c.name not in table.columns]
    for name in absent:
        problems.append(f"column {name!r} is in the schema but not in the table; infer the schema again.")
    columns = [c for c in schema.columns if c.name not in absent]

    for col in columns:
        if col.reason != _USER_EXCLUDED_REASON and table[col.name].isna().all():
            problems.append(
                f"column {col.name!r}: every value is missing; fill it in, remove it from the "
                "file, or set its role to excluded."
            )

    used = [c for c in columns if c.role != EXCLUDED]
    if len(used) < 2:
        excluded = [f"{c.name!r} ({c.reason})" for c in columns if c.role == EXCLUDED]
        listed = ", ".join(repr(c.name) for c in used) or "none"
        hint = f"; excluded now: {', '.join(excluded[:5])}" if excluded else ""
        problems.append(
            f"only {len(used)} usable column{'' if len(used) == 1 else 's'} ({listed}): an "
            "audit needs at least 2; check that the file's delimiter was recognised, add columns, "
            f"or give an excluded column the role categorical or continuous{hint}."
        )

    for col in used:
        values = table[col.name]
        if col.role == CATEGORICAL:
            n_categories = int(values.nunique(dropna=True))
            if n_categories > max_categories:
                problems.append(
                    f"column {col.name!r}: {n_categories:,} categories, more than the limit of "
                    f"{max_categories:,}; set its role to excluded (or continuous if it holds "
                    "numbers), or group its rare values."
                )
        elif col.role == CONTINUOUS:
            numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
            n_inf = int(np.isinf(numeric).sum())
            if n_inf:
                problems.append(
                    f"column {col.name!r}: {n_inf:,} infinite value{'s' if n_inf > 1 else ''} "
                    "(inf); replace them with finite numbers or leave them empty (missing), or "
                    "set its role to excluded."
                )
            finite = np.abs(numeric[np.isfinite(numeric)])
            if finite.size and float(finite.max()) >= MAX_MAGNITUDE:
                # The generators compute with a column's range and bins, which overflow past this
                # (a range from -1e308 to 1e308 is infinite): refused here, with the fix.
                problems.append(
                    f"column {col.name!r}: a value of magnitude {float(finite.max()):.3g}, at or above "
                    f"the limit of {MAX_MAGNITUDE:.0e}; divide the column by a power of ten (amounts "
                    "in millions, say), or set its role to excluded."
                )

    if used and len(table):
        problems.extend(_no_rows_left(table, schema, used))
    return problems


def _no_rows_left(table: pd.DataFrame, schema: Schema, used: list[Column]) -> list[str]:
    """A problem when the missing-value policy would drop every row."""
    if schema.missing_policy == "category":
        checked = [c.name for c in used if c.role == CONTINUOUS]
        where = "a continuous column"
        fix = "set the role of the emptiest continuous columns to excluded"
    else:
        checked = [c.name for c in used]
        where = "a used column"
        fix = (
            'make missing values a category of their own (missing policy "category"), or set the '
            "role of the emptiest columns to excluded"
        )
    if not checked:
        return []
    missing = table[checked].isna()
    if not missing.any(axis=1).all():
        return []
    counts = missing.sum().sort_values(ascending=False)
    worst = ", ".join(f"{name!r}: {int(n):,} missing" for name, n in counts.head(3).items() if n)
    return [f"every row has a missing value in {where} ({worst}), so no row is left; {fix}."]
