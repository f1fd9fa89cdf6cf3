"""Column roles and their inference.

A :class:`Schema` gives every column of a table one role:

``categorical``
    A finite set of values (strings, booleans, integer codes). Encoded as integer codes.
``continuous``
    Numbers with an order. Encoded as floats; ``integer`` columns are rounded on output.
``excluded``
    Not used by generators or the attack (identifiers, constants, columns the user left out).

The domain of each used column (categories, or lower/upper bounds) is part of the schema.
By default it is read off the data; a user can declare it instead, which PrivBayes needs for
its differential-privacy guarantee to hold (``domain_public``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from privgame.core.errors import SchemaError

__all__ = [
    "CATEGORICAL",
    "CONTINUOUS",
    "EXCLUDED",
    "Column",
    "Role",
    "Schema",
    "infer_schema",
]

Role = Literal["categorical", "continuous", "excluded"]
CATEGORICAL: Role = "categorical"
CONTINUOUS: Role = "continuous"
EXCLUDED: Role = "excluded"
ROLES: tuple[Role, ...] = (CATEGORICAL, CONTINUOUS, EXCLUDED)

DEFAULT_MAX_CODE_DISTINCT = 15
_ID_NAME = re.compile(r"(^|[_\-\s.])(id|uuid|guid|key|index|idx)$|^(id|uuid|guid|row|rowid|index)$|Id$")
# Calendar dates as files write them, with an optional time: 2021-03-04, 2021/03/04, 04/03/2021,
# 04.03.2021, 2021-03-04T10:00:00. Each pattern is tried with the formats that read it.
_DATE_FORMATS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?"), ("ISO8601",)),
    (re.compile(r"\d{4}/\d{1,2}/\d{1,2}"), ("%Y/%m/%d",)),
    (re.compile(r"\d{1,2}[/.\-]\d{1,2}[/.\-]\d{4}"), ("%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d-%m-%Y")),
)


@dataclass(frozen=True)
class Column:
    """One column of a table and its role.

    Attributes
    ----------
    name : str
        The column's name in the table.
    role : {"categorical", "continuous", "excluded"}
        How generators and the attack use the column.
    dtype : str
        The pandas dtype the column was read as.
    distinct : int
        Number of distinct non-missing values.
    missing : int
        Number of missing values.
    reason : str or None
        Why inference chose this role, when the choice is not the obvious one.
    categories : tuple or None
        The domain of a categorical column, in code order.
    lower, upper : float or None
        The bounds of a continuous column.
    integer : bool
        Whether a continuous column holds whole numbers (output is rounded).
    domain_public : bool
        True when the user declared the domain; False when it was read off the data.
    """

    name: str
    role: Role
    dtype: str = "object"
    distinct: int = 0
    missing: int = 0
    reason: str | None = None
    categories: tuple[Any, ...] | None = None
    lower: float | None = None
    upper: float | None = None
    integer: bool = False
    domain_public: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description of the column."""
        out: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "dtype": self.dtype,
            "distinct": int(self.distinct),
            "missing": int(self.missing),
            "reason": self.reason,
        }
        if self.role == CATEGORICAL and self.categories is not None:
            out["categories"] = [_json_scalar(c) for c in self.categories]
        if self.role == CONTINUOUS:
            out["lower"] = self.lower
            out["upper"] = self.upper
            out["integer"] = self.integer
        if self.role != EXCLUDED:
            out["domain_public"] = self.domain_public
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Column:
        """Rebuild a column from :meth:`to_dict` output."""
        cats = data.get("categories")
        return cls(
            name=str(data["name"]),
            role=data["role"],
            dtype=str(data.get("dtype", "object")),
            distinct=int(data.get("distinct", 0)),
            missing=int(data.get("missing", 0)),
            reason=data.get("reason"),
            categories=tuple(cats) if cats is not None else None,
            lower=data.get("lower"),
            upper=data.get("upper"),
            integer=bool(data.get("integer", False)),
            domain_public=bool(data.get("domain_public", False)),
        )


def _json_scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class Schema:
    """The roles and domains of every column of a table, in table order."""

    columns: tuple[Column, ...]
    missing_policy: Literal["drop", "category"] = "drop"
    notes: tuple[str, ...] = field(default=())

    @property
    def used(self) -> tuple[Column, ...]:
        """The columns generators and the attack work on (not excluded), in table order."""
        return tuple(c for c in self.columns if c.role != EXCLUDED)

    @property
    def names(self) -> list[str]:
        """Names of the used columns."""
        return [c.name for c in self.used]

    @property
    def is_categorical(self) -> np.ndarray:
        """Boolean mask over the used columns: True where the column is categorical."""
        return np.array([c.role == CATEGORICAL for c in self.used], dtype=bool)

    @property
    def cardinalities(self) -> np.ndarray:
        """Number of categories of each used categorical column (0 for continuous ones)."""
        return np.array(
            [len(c.categories or ()) if c.role == CATEGORICAL else 0 for c in self.used],
            dtype=np.int64,
        )

    @property
    def domain_public(self) -> bool:
        """True when every used column's domain was declared by the user."""
        return all(c.domain_public for c in self.used)

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise SchemaError(f"No column named {name!r}; the columns are {[c.name for c in self.columns]}.")

    def with_roles(self, roles: Mapping[str, str], table: pd.DataFrame | None = None) -> Schema:
        """Return a schema with some roles overridden.

        Parameters
        ----------
        roles : mapping of str to str
            Column name to new role.
        table : DataFrame, optional
            The table, needed to compute the domain of a column that becomes used.

        Raises
        ------
        SchemaError
            Listing every unknown column, unknown role, or impossible role.
        """
        problems: list[str] = []
        known = {c.name for c in self.columns}
        for name, role in roles.items():
            if name not in known:
                problems.append(f"column {name!r}: no such column; choose one of {sorted(known)}.")
            if role not in ROLES:
                problems.append(f"column {name!r}: unknown role {role!r}; use one of {list(ROLES)}.")
        if problems:
            raise SchemaError("The role overrides do not fit the table.", problems)
        new_columns = []
        for col in self.columns:
            role = roles.get(col.name, col.role)
            # An explicit exclusion is recorded even for a column inference already excluded:
            # validation treats the user's choice differently (an empty column is then fine).
            if role == EXCLUDED and col.name in roles:
                new_columns.append(replace(col, role=EXCLUDED, reason="excluded by the user"))
                continue
            if role == col.role:
                new_columns.append(col)
                continue
            if table is None:
                raise SchemaError(
                    f"column {col.name!r}: its new role {role!r} needs the table to learn its domain."
                )
            values = table[col.name].dropna()
            if role == CONTINUOUS:
                numeric = pd.to_numeric(values, errors="coerce")
                bad = int(numeric.isna().sum())
                if bad:
                    problems.append(
                        f"column {col.name!r}: {bad} values are not numbers, so it cannot be "
                        "continuous; keep it categorical or exclude it."
                    )
                    continue
                new_columns.append(_continuous_column(col.name, table[col.name], numeric, "set by the user"))
            else:
                new_columns.append(_categorical_column(col.name, table[col.name], "set by the user"))
        if problems:
            raise SchemaError("The role overrides do not fit the table.", problems)
        return replace(self, columns=tuple(new_columns))

    def with_domain(
        self,
        *,
        categories: Mapping[str, Sequence[Any]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
    ) -> Schema:
        """Return a schema whose domains are declared (public) rather than read off the data.

        Parameters
        ----------
        categories : mapping, optional
            Categorical column name to its full list of categories.
        bounds : mapping, optional
            Continuous column name to ``(lower, upper)``.
        """
        categories = dict(categories or {})
        bounds = dict(bounds or {})
        problems: list[str] = []
        by_name = {c.name: c for c in self.columns}
        for name in categories:
            if name not in by_name or by_name[name].role != CATEGORICAL:
                problems.append(f"column {name!r}: categories can only be declared for a categorical column.")
        for name, (lo, hi) in bounds.items():
            if name not in by_name or by_name[name].role != CONTINUOUS:
                problems.append(f"column {name!r}: bounds can only be declared for a continuous column.")
            elif not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                problems.append(
                    f"column {name!r}: bounds must be finite with lower < upper, got ({lo}, {hi})."
                )
        if problems:
            raise SchemaError("The declared domain does not fit the schema.", problems)
        new_columns = []
        for col in self.columns:
            if col.name in categories:
                cats = tuple(dict.fromkeys(categories[col.name]))
                new_columns.append(replace(col, categories=cats, domain_public=True))
            elif col.name in bounds:
                lo, hi = bounds[col.name]
                new_columns.append(replace(col, lower=float(lo), upper=float(hi), domain_public=True))
            else:
                new_columns.append(col)
        return replace(self, columns=tuple(new_columns))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description of the schema."""
        return {
            "missing_policy": self.missing_policy,
            "columns": [c.to_dict() for c in self.columns],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schema:
        """Rebuild a schema from :meth:`to_dict` output."""
        return cls(
            columns=tuple(Column.from_dict(c) for c in data["columns"]),
            missing_policy=data.get("missing_policy", "drop"),
            notes=tuple(data.get("notes", ())),
        )


def _is_integer_valued(numeric: pd.Series) -> bool:
    values = numeric.dropna().to_numpy(dtype=float)
    return (
        bool(values.size) and bool(np.all(np.isfinite(values))) and bool(np.all(values == np.round(values)))
    )


def _continuous_column(name: str, raw: pd.Series, numeric: pd.Series, reason: str | None) -> Column:
    values = numeric.dropna().to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    lower = float(finite.min()) if finite.size else None
    upper = float(finite.max()) if finite.size else None
    return Column(
        name=name,
        role=CONTINUOUS,
        dtype=str(raw.dtype),
        distinct=int(raw.nunique(dropna=True)),
        missing=int(raw.isna().sum()),
        reason=reason,
        lower=lower,
        upper=upper,
        integer=_is_integer_valued(numeric),
    )


def _sorted_categories(values: pd.Series) -> tuple[Any, ...]:
    uniques = pd.unique(values.dropna())
    try:
        ordered = sorted(uniques.tolist())
    except TypeError:  # mixed types: order by their text, which is stable
        ordered = sorted(uniques.tolist(), key=str)
    return tuple(_json_scalar(v) for v in ordered)


def _categorical_column(name: str, raw: pd.Series, reason: str | None) -> Column:
    return Column(
        name=name,
        role=CATEGORICAL,
        dtype=str(raw.dtype),
        distinct=int(raw.nunique(dropna=True)),
        missing=int(raw.isna().sum()),
        reason=reason,
        categories=_sorted_categories(raw),
    )


def _date_span(raw: pd.Series) -> tuple[str, str] | None:
    """The first and last date of a text column whose every value is a calendar date, else None."""
    if pd.api.types.is_numeric_dtype(raw.dtype) or pd.api.types.is_bool_dtype(raw.dtype):
        return None
    text = pd.Series(pd.unique(raw.dropna()), dtype=object).astype(str).str.strip()
    if text.empty:
        return None
    for pattern, formats in _DATE_FORMATS:
        # The first value rules most text columns out before the whole column is matched.
        if not pattern.fullmatch(text.iloc[0]) or not text.str.fullmatch(pattern).all():
            continue
        for fmt in formats:
            parsed = pd.to_datetime(text, format=fmt, errors="coerce")
            if parsed.notna().all():
                return str(text[parsed.idxmin()]), str(text[parsed.idxmax()])
    return None


def infer_schema(
    table: pd.DataFrame,
    *,
    max_code_distinct: int = DEFAULT_MAX_CODE_DISTINCT,
    roles: Mapping[str, str] | None = None,
    missing_policy: Literal["drop", "category"] = "drop",
) -> Schema:
    """Infer one role per column of ``table``.

    Rules, in order: a column with every value missing, or a single distinct value, is excluded;
    a column of calendar dates is excluded, with its first and last date in the reason; a column
    named like an identifier (``id``, ``user_id``, ``uuid``, ...) or whose text or whole-number
    values are unique on every row (20 rows or more) is excluded; booleans and strings are
    categorical; integer columns with at most ``max_code_distinct`` distinct values are
    categorical (they are usually codes); other numbers are continuous. ``roles`` overrides any
    of these choices.

    Numbers with a fractional part that are unique on every row (an income, a height) are
    measurements, not identifiers: they are continuous. Dates are excluded rather than turned
    into numbers of days: as text, each date would become a category of its own (hundreds of
    levels a generator cannot learn), and as days the synthetic data and the Record page would
    show day counts that nobody reads as dates, while the generator never releases an excluded
    column. The reason tells the user how to audit a date: add it to the file as a number (days
    since a reference date) and that column is continuous.

    Parameters
    ----------
    table : DataFrame
        The table as loaded (missing values as NaN/None).
    max_code_distinct : int, default 15
        Integer columns with at most this many distinct values are treated as categorical codes.
    roles : mapping, optional
        Column name to forced role.
    missing_policy : {"drop", "category"}
        Recorded in the schema; see :func:`privgame.data.prepare_table`.

    Returns
    -------
    Schema
    """
    columns: list[Column] = []
    n_rows = len(table)
    for name in table.columns:
        raw = table[name]
        name = str(name)
        distinct = int(raw.nunique(dropna=True))
        missing = int(raw.isna().sum())
        base = {"name": name, "dtype": str(raw.dtype), "distinct": distinct, "missing": missing}
        if distinct == 0:
            columns.append(Column(role=EXCLUDED, reason="every value is missing", **base))
            continue
        if distinct == 1:
            columns.append(Column(role=EXCLUDED, reason="constant: a single distinct value", **base))
            continue
        span = _date_span(raw)
        if span is not None:
            reason = (
                f"dates ({span[0]} to {span[1]}): excluded, since privgame models numbers and "
                "categories; to audit it, add it to the file as a number of days"
            )
            columns.append(Column(role=EXCLUDED, reason=reason, **base))
            continue
        if _ID_NAME.search(name.strip()) and not pd.api.types.is_float_dtype(raw.dtype):
            columns.append(Column(role=EXCLUDED, reason="named like an identifier", **base))
            continue
        is_bool = pd.api.types.is_bool_dtype(raw.dtype)
        is_numeric = pd.api.types.is_numeric_dtype(raw.dtype) and not is_bool
        integer_valued = is_numeric and _is_integer_valued(raw)
        unique_everywhere = distinct == n_rows - missing and n_rows >= 20
        if unique_everywhere and (not is_numeric or integer_valued):
            columns.append(Column(role=EXCLUDED, reason="identifier-like: unique on every row", **base))
            continue
        if not is_numeric:
            columns.append(_categorical_column(name, raw, None))
        elif integer_valued and distinct <= max_code_distinct:
            columns.append(
                _categorical_column(
                    name,
                    raw,
                    f"whole numbers with only {distinct} distinct values: treated as codes",
                )
            )
        else:
            columns.append(_continuous_column(name, raw, raw.astype(float), None))
    schema = Schema(columns=tuple(columns), missing_policy=missing_policy)
    if roles:
        schema = schema.with_roles(roles, table)
    return schema
