"""The layout of a run's records table: privgame's own columns, and the record's values apart.

A run's ``records.*`` has one row per audited record: privgame's results (``record_id``,
``audit_group``, the risks and their bounds, ``difference``, the verdicts, ...) and the record's
own values. The values are stored under :data:`VALUE_PREFIX` + the data's column name
(``value:age``, ``value:record_id``), always, so that no column of the user's data can take the
place of a result: a data column named ``record_id``, ``difference`` or ``risk_model_seeded``
becomes ``value:record_id``, ``value:difference``, ``value:risk_model_seeded``. No result column
starts with the prefix, and prefixing every value column is one-to-one, so the two namespaces
never meet.

Runs written before this layout stored the values under their bare names (where a data column
named like a result was overwritten by it). :func:`normalise_records` brings such a table to the
current layout, so that every reader sees one layout; :meth:`privgame.store.folders.RunFolder.records`
applies it. A table is in the current layout when any of its columns starts with the prefix
(every run table has at least one column, so every current records table has a value column).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

__all__ = [
    "RESULT_COLUMNS",
    "VALUE_PREFIX",
    "identifier_columns",
    "identifiers_first",
    "is_value_column",
    "normalise_records",
    "value_column",
    "value_columns",
    "value_name",
]

VALUE_PREFIX = "value:"
"""The prefix of every column of a records table that holds one of the record's own values."""

_GAMES = ("risk_model_seeded", "risk_traditional")
_SUFFIXES = ("", "_low", "_high", "_tpr_at_fpr_0.01", "_tpr_at_fpr_0.1")
RESULT_COLUMNS: tuple[str, ...] = (
    "record_id",
    "audit_group",
    *(game + suffix for game in _GAMES for suffix in _SUFFIXES),
    "risk_model_seeded_variance",
    "risk_model_seeded_discordant",
    "n_eval",
    "looks",
    "attack",
    "attack_shadow_auc",
    "attack_training_variance",
    "attack_learning_gain",
    "attack_still_learning",
    "difference",
    "outlier_score",
    "dcr",
    "dcr_p_value",
    "verdict_model_seeded",
    "verdict_traditional",
    "missed_by_traditional",
)
"""Every column privgame writes into (or adds to) a records table, none of them a value."""


def value_column(name: Any) -> str:
    """The records-table column that holds the data column ``name``'s value: ``value:<name>``."""
    return f"{VALUE_PREFIX}{name}"


def is_value_column(column: Any) -> bool:
    """Whether a records-table column holds one of the record's own values."""
    return isinstance(column, str) and column.startswith(VALUE_PREFIX)


def value_name(column: str) -> str:
    """The data's own name of a value column (``value:age`` -> ``age``); other names unchanged."""
    return column[len(VALUE_PREFIX) :] if is_value_column(column) else column


def value_columns(columns: pd.DataFrame | Iterable[Any]) -> list[str]:
    """The value columns of a records table (or of a list of column names), in their order."""
    names = columns.columns if isinstance(columns, pd.DataFrame) else columns
    return [c for c in names if is_value_column(c)]


def normalise_records(records: pd.DataFrame) -> pd.DataFrame:
    """A records table in the current layout (values under :data:`VALUE_PREFIX`).

    A table that has a value column is returned as it is. A table of an older run, which stored
    the values under their bare names, gets every column that is not one of
    :data:`RESULT_COLUMNS` renamed to its value column. (A data column that such a run named like
    a result had already been overwritten by the result when it was written; it cannot be
    recovered.)

    Parameters
    ----------
    records : DataFrame
        A run's records table, in either layout.

    Returns
    -------
    DataFrame
        The same rows, with the value columns prefixed.
    """
    if any(is_value_column(c) for c in records.columns):
        return records
    renamed = {c: value_column(c) for c in records.columns if c not in RESULT_COLUMNS}
    return records.rename(columns=renamed) if renamed else records


# Excluded columns that say nothing about who a record is: they are not shown first.
_UNINFORMATIVE = ("constant", "every value is missing")


def identifier_columns(columns: pd.DataFrame | Iterable[Any], schema: Mapping[str, Any]) -> list[str]:
    """The value columns that tell who a record is: the data's columns the generator excluded.

    Identifiers (a person id, a name) are excluded from the generator and the attack, not from the
    report: they are how the data owner recognises a record. Constant and empty columns, though
    excluded too, say nothing about the record and are left out.

    Parameters
    ----------
    columns : DataFrame or iterable
        A records table, or its column names.
    schema : mapping
        The run's schema, as stored in its spec (:meth:`privgame.data.Schema.to_dict`).

    Returns
    -------
    list of str
        The ``value:<name>`` columns of those data columns present in ``columns``, in table order.
    """
    present = set(value_columns(columns))
    out = []
    for column in schema.get("columns", ()):
        if column.get("role") != "excluded":
            continue
        if str(column.get("reason") or "").startswith(_UNINFORMATIVE):
            continue
        name = value_column(column["name"])
        if name in present:
            out.append(name)
    return out


def identifiers_first(records: pd.DataFrame, schema: Mapping[str, Any]) -> pd.DataFrame:
    """``records`` with ``record_id`` first, then the :func:`identifier_columns`, then the rest."""
    lead = [c for c in ("record_id",) if c in records.columns] + identifier_columns(records, schema)
    return records[lead + [c for c in records.columns if c not in lead]]
