"""Exact duplicate rows: which records have an identical twin, and where.

A record whose twin (another row equal to it on every column the generator uses) sits in the
attacker's population is not as unique as a membership attack assumes: the attacker's 'out'
shadow datasets may contain the twin, which looks exactly like the record, so the attack cannot
tell the record's presence from its twin's. Meeus et al. filter such records before an audit;
the paper's code does not, and privgame does not by default. These functions count them and
drop them on request (``--drop-duplicates``).

Rows are compared on the encoded table (:func:`privgame.data.encoding.encode`), that is on the
columns the generator is trained on; excluded columns (identifiers) do not make rows different.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privgame.data import Dataset, fingerprint_table
from privgame.data.encoding import encode
from privgame.data.schema import Schema

__all__ = [
    "TwinCounts",
    "count_twins",
    "drop_duplicate_rows",
    "has_twin",
    "row_keys",
    "twin_note",
    "twins_of",
]


def row_keys(X: np.ndarray) -> np.ndarray:
    """One integer per row, equal for equal rows (and only for them).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
        An encoded table.
    """
    if X.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, inverse = np.unique(np.ascontiguousarray(X), axis=0, return_inverse=True)
    return np.asarray(inverse, dtype=np.int64).reshape(-1)


def has_twin(keys: np.ndarray, ids: np.ndarray, among: np.ndarray) -> np.ndarray:
    """For each record id in ``ids``, whether another row of ``among`` equals it.

    Parameters
    ----------
    keys : ndarray of int
        :func:`row_keys` of the whole table; record ids index it.
    ids : ndarray of int
        The records to check.
    among : ndarray of int
        Record ids of the rows to look in; a record in ``among`` is not its own twin.

    Returns
    -------
    ndarray of bool, shape (len(ids),)
    """
    ids = np.asarray(ids, dtype=np.int64)
    among = np.asarray(among, dtype=np.int64)
    if ids.size == 0:
        return np.zeros(0, dtype=bool)
    counts = (
        np.bincount(keys[among], minlength=int(keys.max()) + 1)
        if among.size
        else np.zeros(int(keys.max()) + 1, dtype=np.int64)
    )
    own = np.isin(ids, among).astype(np.int64)
    return (counts[keys[ids]] - own) > 0


@dataclass(frozen=True)
class TwinCounts:
    """How many records have an exact twin, in D and in the population.

    Attributes
    ----------
    in_d : int
        Records of D with a twin elsewhere in D.
    in_population : int
        Records of D with a twin in the population (D_aux and the reference records).
    audited_in_population : int
        Audited records with a twin in the population (``-1`` when no audited records were given).
    """

    in_d: int
    in_population: int
    audited_in_population: int = -1

    def sentence(self) -> str:
        """The counts in plain words, with why they matter."""
        text = (
            f"{self.in_d:,} record(s) of D have an exact twin elsewhere in D and "
            f"{self.in_population:,} have one in the population the attacker knows"
        )
        if self.audited_in_population >= 0:
            text += f" ({self.audited_in_population:,} of them audited)"
        return (
            text + ". A record whose twin is in the population is not as unique as the attack "
            "assumes: the attacker's data may hold a row identical to it."
        )


def count_twins(
    keys: np.ndarray, d_ids: np.ndarray, population_ids: np.ndarray, audited: np.ndarray | None = None
) -> TwinCounts:
    """Count the records of D with a twin in D and in the population (see :class:`TwinCounts`)."""
    in_population = has_twin(keys, d_ids, population_ids)
    audited_count = -1
    if audited is not None:
        audited_count = int(has_twin(keys, np.asarray(audited, dtype=np.int64), population_ids).sum())
    return TwinCounts(
        in_d=int(has_twin(keys, d_ids, d_ids).sum()),
        in_population=int(in_population.sum()),
        audited_in_population=audited_count,
    )


def twins_of(keys: np.ndarray, record_id: int, among: np.ndarray) -> np.ndarray:
    """Record ids in ``among`` (other than ``record_id``) whose row equals ``record_id``'s."""
    among = np.asarray(among, dtype=np.int64)
    same = among[keys[among] == keys[record_id]]
    return same[same != record_id]


def repeated_rows(table: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Boolean mask of the rows that repeat an earlier row on the used columns."""
    keys = row_keys(encode(table, schema))
    return np.asarray(pd.Series(keys).duplicated(keep="first").to_numpy(), dtype=bool)


def drop_duplicate_rows(data: Dataset) -> tuple[Dataset, int]:
    """``data`` with only the first copy of each row that is repeated on the generator's columns.

    Returns the new dataset (index ``0..n-1``, a new fingerprint) and the number of rows dropped.
    After it no record has a twin, which is the filtering of Meeus et al.
    """
    first = ~repeated_rows(data.table, data.schema)
    dropped = int((~first).sum())
    if dropped == 0:
        return data, 0
    table = data.table.loc[first].reset_index(drop=True)
    return (
        Dataset(
            table=table,
            schema=data.schema,
            dropped_rows=data.dropped_rows,
            fingerprint=fingerprint_table(table),
            source_name=data.source_name,
        ),
        dropped,
    )


def twin_note(twins: Mapping[str, Any] | None, record_id: int) -> str | None:
    """The sentence the Record page shows for an audited record with an exact twin, else None.

    ``twins`` is a run summary's ``twins`` entry (absent in runs made before it existed).
    """
    if not twins:
        return None
    in_population = record_id in set(twins.get("audited_with_population_twin") or [])
    in_d = record_id in set(twins.get("audited_with_twin_in_d") or [])
    if not (in_population or in_d):
        return None
    where = " and ".join(
        part
        for part, found in (("in D", in_d), ("in the population the attacker knows", in_population))
        if found
    )
    text = f"This record has an exact twin (a row equal on every used column) {where}."
    if in_population:
        text += (
            " It is not as unique as the attack assumes: the attacker's data may hold a row identical "
            "to it, so its presence is hard to tell from its twin's, whatever the release does."
        )
    return text
