"""From a file to the table an audit runs on: load, infer roles, validate, apply the missing policy.

The missing-value policy is declared in the schema:

``drop`` (default)
    Rows with a missing value in any used column are dropped.
``category``
    In a categorical column, missing becomes its own category :data:`MISSING_CATEGORY`; rows with
    a missing value in a continuous column are still dropped.

Either way the user is told how many rows were dropped (``dropped_rows`` and the notes).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from privgame.core.defaults import MISSING_POLICIES
from privgame.core.errors import DataError, ParameterError, SchemaError
from privgame.data.loading import DEFAULT_MAX_BYTES, load_table
from privgame.data.schema import (
    CATEGORICAL,
    CONTINUOUS,
    DEFAULT_MAX_CODE_DISTINCT,
    Column,
    Schema,
    _categorical_column,
    _continuous_column,
    infer_schema,
)
from privgame.data.splits import MIN_ROWS
from privgame.data.validation import DEFAULT_MAX_CATEGORIES, missing_code_warnings, validate_table

__all__ = [
    "MISSING_CATEGORY",
    "MISSING_POLICIES",
    "Dataset",
    "Inspection",
    "PreparedTable",
    "fingerprint_table",
    "inspect_dataset",
    "load_dataset",
    "prepare_table",
]

MISSING_CATEGORY = "<missing>"


@dataclass(frozen=True, eq=False)
class PreparedTable:
    """A table after its schema's missing-value policy.

    Attributes
    ----------
    table : DataFrame
        The rows kept, with a fresh ``0..n-1`` index and every column of the input.
    schema : Schema
        Domains recomputed on the rows kept (with :data:`MISSING_CATEGORY` where it was used);
        each column's ``missing`` still counts the missing values of the input table.
    dropped_rows : int
        Rows of the input that were dropped.
    notes : tuple of str
        What the policy did, in sentences for the user (also appended to ``schema.notes``).
    source_rows : ndarray of int64
        For each row kept, its 0-based position in the input table (the file's data rows, in
        order): row ``i`` of ``table`` is data row ``source_rows[i] + 1`` of the file.
    """

    table: pd.DataFrame
    schema: Schema
    dropped_rows: int
    notes: tuple[str, ...]
    source_rows: np.ndarray


def prepare_table(table: pd.DataFrame, schema: Schema) -> PreparedTable:
    """Apply the schema's missing-value policy to ``table``.

    Parameters
    ----------
    table : DataFrame
        The table as loaded.
    schema : Schema
        Its schema; ``schema.missing_policy`` is ``"drop"`` or ``"category"``.

    Returns
    -------
    PreparedTable

    Raises
    ------
    ParameterError
        For an unknown missing-value policy.
    SchemaError
        When a used column of the schema is not in the table.
    """
    policy = schema.missing_policy
    if policy not in MISSING_POLICIES:
        raise ParameterError(f"Unknown missing-value policy {policy!r}; use one of {list(MISSING_POLICIES)}.")
    used = schema.used
    absent = [c.name for c in used if c.name not in table.columns]
    if absent:
        raise SchemaError(f"The columns {absent} are in the schema but not in the table.")
    fill = [c.name for c in used if c.role == CATEGORICAL] if policy == "category" else []
    checked = [c.name for c in used if c.name not in fill]
    missing = table[checked].isna()
    drop = missing.any(axis=1).to_numpy()
    kept = table.loc[~drop].reset_index(drop=True)

    notes: list[str] = []
    dropped = int(drop.sum())
    if dropped:
        counts = missing.sum()
        per_column = ", ".join(f"{name}: {int(n):,}" for name, n in counts[counts > 0].items())
        where = "a used column" if policy == "drop" else "a continuous column"
        notes.append(
            f"Dropped {dropped:,} of {len(table):,} rows ({dropped / max(len(table), 1):.1%}) "
            f"with a missing value in {where} ({per_column})."
        )
    by_name = {c.name: c for c in schema.columns}
    filled: list[str] = []
    for name in [c.name for c in used]:
        values = _whole_floats_to_int(kept[name]) if by_name[name].missing else kept[name]
        if name in fill and values.isna().any():
            if isinstance(values.dtype, pd.StringDtype):
                values = values.fillna(MISSING_CATEGORY)
            else:
                values = values.astype(object).where(values.notna(), MISSING_CATEGORY)
            filled.append(name)
        kept[name] = values
    if filled:
        notes.append(f"Missing values became the category {MISSING_CATEGORY!r} in {', '.join(filled)}.")

    columns = tuple(
        _recompute(col, kept[col.name], MISSING_CATEGORY if col.name in filled else None)
        for col in schema.columns
    )
    new_schema = replace(schema, columns=columns, notes=schema.notes + tuple(notes))
    return PreparedTable(
        table=kept,
        schema=new_schema,
        dropped_rows=dropped,
        notes=tuple(notes),
        source_rows=np.flatnonzero(~drop).astype(np.int64),
    )


def _whole_floats_to_int(values: pd.Series) -> pd.Series:
    """Undo the float promotion that missing values forced on a column of whole numbers."""
    if not pd.api.types.is_float_dtype(values.dtype):
        return values
    present = values.dropna().to_numpy(dtype=np.float64)
    if not (np.all(np.isfinite(present)) and np.all(present == np.round(present))):
        return values
    if np.any(np.abs(present) >= 2.0**63):
        return values
    if len(present) == len(values):
        return values.astype(np.int64)
    out = values.astype(object)
    mask = values.notna()
    out[mask] = [int(v) for v in present]
    return out


def _recompute(col: Column, values: pd.Series, added: str | None) -> Column:
    """The column's domain on the rows kept, keeping its role, reason and declared domain."""
    if col.role == CATEGORICAL:
        new = _categorical_column(col.name, values, col.reason)
        if col.domain_public:
            declared = tuple(col.categories or ())
            if added is not None and added not in declared:
                declared += (added,)
            new = replace(new, categories=declared, domain_public=True)
    elif col.role == CONTINUOUS:
        new = _continuous_column(col.name, values, pd.to_numeric(values, errors="coerce"), col.reason)
        if col.domain_public:
            new = replace(new, lower=col.lower, upper=col.upper, domain_public=True)
    else:
        new = replace(col, dtype=str(values.dtype), distinct=int(values.nunique(dropna=True)))
    return replace(new, missing=col.missing)


def fingerprint_table(table: pd.DataFrame) -> str:
    """The sha256 hex digest of the table's canonical CSV form (UTF-8, ``\\n``, no index)."""
    text = table.to_csv(index=False, lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, eq=False)
class Dataset:
    """A table ready for an audit.

    Attributes
    ----------
    table : DataFrame
        The prepared table (missing-value policy applied, index ``0..n-1``).
    schema : Schema
        Its roles and domains.
    dropped_rows : int
        Rows of the file dropped by the missing-value policy.
    fingerprint : str
        sha256 hex digest of the prepared table (see :func:`fingerprint_table`).
    source_name : str
        The file's name, for messages and reports.
    source_rows : ndarray of int64 or None
        For each row of ``table`` (each record id), its 0-based data row in the file; None when
        no row was dropped (record id ``i`` is then data row ``i``). See :meth:`file_rows`.
    """

    table: pd.DataFrame
    schema: Schema
    dropped_rows: int
    fingerprint: str
    source_name: str
    source_rows: np.ndarray | None = None

    def file_rows(self) -> np.ndarray:
        """The file's row number of every record id: 1 for the first data row after the header."""
        if self.source_rows is None:
            return np.arange(1, len(self.table) + 1, dtype=np.int64)
        return np.asarray(self.source_rows, dtype=np.int64) + 1


@dataclass(frozen=True, eq=False)
class Inspection:
    """Everything learnt about a file, with its problems listed rather than raised.

    Attributes
    ----------
    source_name : str
        The file's name.
    table : DataFrame
        The table as loaded.
    schema : Schema
        The inferred schema (with the role overrides that fit), before the missing-value policy.
    prepared : PreparedTable
        The table and schema after the missing-value policy.
    problems : tuple of str
        Every problem that stops an audit; empty when the file can be used.
    warnings : tuple of str
        What may be wrong but does not stop an audit: numbers that look like codes for a missing
        value (:func:`privgame.data.validation.missing_code_warnings`).
    """

    source_name: str
    table: pd.DataFrame
    schema: Schema
    prepared: PreparedTable
    problems: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def _source_name(source: str | os.PathLike[str] | bytes, filename: str | None) -> str:
    if filename:
        return filename
    if isinstance(source, bytes | bytearray | memoryview):
        return "the uploaded file"
    return Path(source).name


def inspect_dataset(
    source: str | os.PathLike[str] | bytes,
    *,
    filename: str | None = None,
    roles: Mapping[str, str] | None = None,
    missing_policy: Literal["drop", "category"] = "drop",
    max_code_distinct: int = DEFAULT_MAX_CODE_DISTINCT,
    max_categories: int = DEFAULT_MAX_CATEGORIES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Inspection:
    """Load, infer, validate and prepare, collecting the problems instead of raising them.

    For the parameters see :func:`load_dataset`.

    Raises
    ------
    DataError
        Only when the file cannot be read as a table at all (see :func:`load_table`).
    ParameterError
        For an unknown missing-value policy.
    """
    if missing_policy not in MISSING_POLICIES:
        raise ParameterError(
            f"Unknown missing-value policy {missing_policy!r}; use one of {list(MISSING_POLICIES)}."
        )
    name = _source_name(source, filename)
    table = load_table(source, filename=name, max_bytes=max_bytes)
    problems: list[str] = []
    try:
        schema = infer_schema(
            table, max_code_distinct=max_code_distinct, roles=roles, missing_policy=missing_policy
        )
    except SchemaError as error:
        problems.extend(error.problems or [error.summary])
        schema = infer_schema(table, max_code_distinct=max_code_distinct, missing_policy=missing_policy)
    problems.extend(validate_table(table, schema, max_categories=max_categories))
    prepared = prepare_table(table, schema)
    if 0 < len(prepared.table) < MIN_ROWS:
        problems.append(
            f"only {len(prepared.table)} rows are left after the missing-value policy; an audit "
            f"needs at least {MIN_ROWS}: add rows, or keep more rows by making missing values a "
            'category of their own (missing policy "category").'
        )
    return Inspection(
        source_name=name,
        table=table,
        schema=schema,
        prepared=prepared,
        problems=tuple(problems),
        warnings=tuple(missing_code_warnings(table, schema)),
    )


def load_dataset(
    source: str | os.PathLike[str] | bytes,
    *,
    filename: str | None = None,
    roles: Mapping[str, str] | None = None,
    missing_policy: Literal["drop", "category"] = "drop",
    max_code_distinct: int = DEFAULT_MAX_CODE_DISTINCT,
    max_categories: int = DEFAULT_MAX_CATEGORIES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Dataset:
    """Load a file and make it ready for an audit.

    Load (:func:`~privgame.data.load_table`) -> infer roles (:func:`~privgame.data.infer_schema`)
    -> validate (:func:`~privgame.data.validate_table`) -> apply the missing-value policy
    (:func:`prepare_table`).

    Parameters
    ----------
    source : str, path-like or bytes
        A path, or the bytes of an uploaded file.
    filename : str, optional
        The file's name (for messages, and a format hint for bytes).
    roles : mapping of str to str, optional
        Column name to forced role (``categorical``, ``continuous`` or ``excluded``).
    missing_policy : {"drop", "category"}, default "drop"
        What to do with missing values (see the module docstring).
    max_code_distinct : int, default 15
        Integer columns with at most this many distinct values are categorical codes.
    max_categories : int, default 1000
        The most categories a used categorical column may have.
    max_bytes : int, default 200 MiB
        The largest file (and decompressed size) accepted.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        One error listing every problem with the file, the roles and the table.
    OSError
        When a path cannot be opened.
    """
    found = inspect_dataset(
        source,
        filename=filename,
        roles=roles,
        missing_policy=missing_policy,
        max_code_distinct=max_code_distinct,
        max_categories=max_categories,
        max_bytes=max_bytes,
    )
    if found.problems:
        raise DataError(f"{found.source_name} cannot be used for an audit.", found.problems)
    prepared = found.prepared
    return Dataset(
        table=prepared.table,
        schema=prepared.schema,
        dropped_rows=prepared.dropped_rows,
        fingerprint=fingerprint_table(prepared.table),
        source_name=found.source_name,
        source_rows=prepared.source_rows,
    )
