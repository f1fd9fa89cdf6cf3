"""Checks that a loaded table, with its schema, can be audited.

:func:`validate_table` collects every problem at once, each one sentence naming the column and
the fix, so that a user fixes a file in one go rather than one error at a time. Problems with the
file itself (empty, binary, ragged, ...) are found earlier by :func:`privgame.data.load_table`.

:func:`missing_code_warnings` points out what may be wrong without stopping an audit: numbers such
as ``-9`` or ``9999`` that a survey writes for "no answer", which privgame would otherwise read as
real values (missing values are the cells it reads as missing, :data:`privgame.data.MISSING_MARKERS`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privgame.data.schema import CATEGORICAL, CONTINUOUS, EXCLUDED, Column, Schema

__all__ = [
    "DEFAULT_MAX_CATEGORIES",
    "MISSING_CODES",
    "MISSING_CODE_MIN_COUNT",
    "MISSING_CODE_MIN_SHARE",
    "missing_code_warnings",
    "validate_table",
]

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


MISSING_CODES: tuple[int, ...] = (
    -1,
    *(-int("9" * digits) for digits in range(1, 8)),
    *(int("9" * digits) for digits in range(2, 8)),
)
"""Numbers that files commonly use for "no answer", "unknown" or "not asked": -1, -9, -99, ...,
-9,999,999 and 99, 999, ..., 9,999,999."""

MISSING_CODE_MIN_SHARE = 0.01
"""The share of a column's values a code must hold to be pointed out (1%): Adult's capital-gain
holds its top value 99,999 in 0.5% of rows, a real amount, and is not pointed out."""

MISSING_CODE_MIN_COUNT = 5
"""The fewest rows a code must hold to be pointed out."""


def missing_code_warnings(table: pd.DataFrame, schema: Schema) -> list[str]:
    """Numbers in the used columns that look like codes for a missing value, one sentence each.

    A value of :data:`MISSING_CODES` is pointed out in a numeric column (every non-missing value a
    number) when it holds at least :data:`MISSING_CODE_MIN_SHARE` of the column's values and
    :data:`MISSING_CODE_MIN_COUNT` rows, and lies far from the column's other values: a negative
    code in a column otherwise never negative, or one beyond the other values by more than their
    whole range (``-9`` among ages 17 to 90; ``9999`` among years 1950 to 2020; not ``99`` among
    ages 17 to 90). These are warnings, not problems: the value may be real.

    Parameters
    ----------
    table : DataFrame
        The table as loaded.
    schema : Schema
        Its roles; excluded columns are not checked.

    Returns
    -------
    list of str
        One sentence per column and value, naming the column, the value and its count, and how
        to declare it missing; empty when nothing looks like a code.
    """
    out: list[str] = []
    for col in schema.used:
        if col.name not in table.columns:
            continue
        raw = table[col.name]
        if pd.api.types.is_bool_dtype(raw):
            continue
        numeric = pd.to_numeric(raw, errors="coerce")
        if int(numeric.notna().sum()) < int(raw.notna().sum()):
            continue  # not a column of numbers: a code there is a category like any other
        values = numeric.dropna().to_numpy(dtype=np.float64)
        for code in MISSING_CODES:
            hit = values == code
            count = int(hit.sum())
            if count < MISSING_CODE_MIN_COUNT or count < MISSING_CODE_MIN_SHARE * values.size:
                continue
            rest = values[~hit]
            if rest.size == 0 or not _far(float(code), float(rest.min()), float(rest.max())):
                continue
            out.append(
                f"column {col.name!r}: {count:,} of {values.size:,} values ({count / values.size:.1%}) are "
                f"{code}, far from its other values ({rest.min():g} to {rest.max():g}); {code} may be a "
                "code for 'no answer' or 'unknown' rather than a number. If it means missing, declare "
                "it missing: leave those cells empty (or write NA) in the file, which privgame reads as "
                "missing, and choose the missing-value policy; otherwise the generator learns it as a "
                "real value and those records stand out as outliers."
            )
    return out


def _far(code: float, low: float, high: float) -> bool:
    """Whether ``code`` lies far from values spanning ``low`` to ``high``."""
    if code < 0 and low >= 0:
        return True  # a negative code in a column otherwise never negative
    if code == -1:
        return False  # -1 is pointed out only where nothing else is negative
    spread = high - low
    return code > high + spread if code > 0 else code < low - spread
