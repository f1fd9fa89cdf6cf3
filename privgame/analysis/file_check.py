"""The similarity checks of a synthetic file made elsewhere, with no generator to audit.

A data owner who holds a vendor's synthetic file, and not the generator that made it, can still
run the checks such vendors report: the distance from each record of D to its closest synthetic
record, how unusual that closeness is among non-members (a holdout of the same population), and
the whole-table DCR share and NNDR figures (:mod:`privgame.data.similarity`). What such a check
cannot show is said with every result (:data:`LIMITS`): without the generator there is no
model-seeded game, so no record can be called safe.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privgame.core.errors import SchemaError, SizeError
from privgame.core.seeding import Role, stream
from privgame.data import load_dataset
from privgame.data.dataset import Dataset, prepare_table
from privgame.data.encoding import encode
from privgame.data.similarity import GowerEncoding, TableSimilarity, record_similarity, table_similarity
from privgame.settings.setups import load_population

__all__ = ["LIMITS", "FileCheck", "check_file", "file_check_lines"]

LIMITS = (
    "A similarity check looks at one synthetic file: it finds records the file copies or nearly "
    "copies, and nothing else. A release that passes it can still let an attacker single records "
    "out (the DCR delusion): only an attack on the generator that made the file, trained on data "
    "with and without each record, can show that. Without that generator privgame cannot play the "
    "model-seeded game, so no record is called safe here. To audit the generator too, wrap it as a "
    "plug-in (--generator module:Class, or --generator external for a command in its own "
    "environment) and run python -m privgame run."
)
"""What a similarity check of a file can and cannot show, said with every result."""

ALPHA = 0.05
"""The level of the share test and of a record's DCR p-value."""

MIN_HOLDOUT_ROWS = 50
"""Fewer holdout rows than this leave the share test and the DCR p-values too coarse to show
anything at :data:`ALPHA` (a DCR p-value cannot go below 1 / (holdout rows + 1)): the result then
reads "inconclusive", never "passes"."""


@dataclass(frozen=True)
class FileCheck:
    """The similarity checks of a synthetic file against D and a holdout.

    Attributes
    ----------
    records : DataFrame
        One row per usable record of D, in D's order: ``record_id`` (the row's position among the
        data rows of D's file, from 0; a row dropped for missing values leaves its number out),
        ``dcr`` and ``dcr_p_value``.
    table : TableSimilarity
        The whole-table figures.
    data_name, synthetic_name, holdout_name : str
        The three files' names.
    holdout_dcr : ndarray
        Each holdout record's distance to its closest synthetic record (the null distribution).
    dropped : dict
        Rows of each file left out for missing values (``data``, ``synthetic``, ``holdout``).
    holdout_in_d : int
        Holdout rows equal to a row of D on every column: a holdout must be records the
        generator never saw, so any makes the comparison void.
    """

    records: pd.DataFrame
    table: TableSimilarity
    data_name: str
    synthetic_name: str
    holdout_name: str
    holdout_dcr: np.ndarray
    dropped: dict[str, int]
    holdout_in_d: int = 0

    @property
    def copies(self) -> int:
        """Records of D that appear in the synthetic file exactly (distance 0)."""
        return int(np.count_nonzero(self.records["dcr"].to_numpy(float) == 0))

    @property
    def verdict(self) -> str:
        """The share test's verdict in words: ``passes`` only when nothing voids it.

        ``fails`` when the test finds the file closer to D, or when records of D are copied
        exactly (whatever the test says); ``void`` when holdout rows are in D; ``inconclusive``
        when the holdout is too small (:data:`MIN_HOLDOUT_ROWS`) for the test to show anything.
        """
        if self.copies or not self.table.passes:
            return "fails"
        if self.holdout_in_d:
            return "void"
        if min(self.table.n_train, self.table.n_holdout) < MIN_HOLDOUT_ROWS:
            return "inconclusive"
        return "passes"

    @property
    def close(self) -> int:
        """Records of D at or below :data:`ALPHA` in DCR p-value."""
        return int(np.count_nonzero(self.records["dcr_p_value"].to_numpy(float) <= ALPHA))


def _load_like(
    source: str | os.PathLike[str] | bytes, data: Dataset, what: str, filename: str | None
) -> Dataset:
    try:
        return load_population(source, data, filename=filename, what=what)
    except SizeError:
        raise SizeError(
            f"The {what} has fewer than 2 usable rows; give a table with at least 2 rows."
        ) from None


def check_file(
    data: str | os.PathLike[str] | bytes,
    synthetic: str | os.PathLike[str] | bytes,
    holdout: str | os.PathLike[str] | bytes,
    *,
    seed: int = 0,
    names: tuple[str | None, str | None, str | None] = (None, None, None),
) -> FileCheck:
    """Measure the similarity checks of ``synthetic`` against ``data`` (D) and ``holdout``.

    The three tables are read with D's column roles (the holdout and the synthetic file must have
    exactly D's columns) and encoded together, so a category that only the synthetic file has is
    still compared. Distances are Gower distances (:mod:`privgame.data.similarity`).

    Parameters
    ----------
    data, synthetic, holdout : path or bytes
        D (the table the synthetic file was made from), the synthetic file, and real records of the
        same population that are not in D.
    seed : int
        Seeds the table test's equal-size subsample (``stream(seed, 0, Role.SIMILARITY, 1)``).
    names : tuple
        File names for messages when the sources are bytes (an upload).

    Raises
    ------
    DataError
        When a file cannot be read as a table.
    SchemaError
        One error listing every difference between D's columns and the other file's.
    SizeError
        When a table has fewer than 2 usable rows.
    """
    d_name = names[0] or (os.path.basename(str(data)) if not isinstance(data, bytes) else "the data table")
    dataset = load_dataset(data, filename=d_name)
    problems: list[str] = []
    loaded: dict[str, Dataset] = {}
    for what, source, name in (
        ("synthetic table", synthetic, names[1]),
        ("holdout table", holdout, names[2]),
    ):
        try:
            loaded[what] = _load_like(source, dataset, what, name)
        except SchemaError as error:
            problems.extend(f"{what}: {p}" for p in (error.problems or [error.summary]))
    if problems:
        raise SchemaError(
            f"The other tables do not match the columns of {d_name}; fix these, then check again.", problems
        )
    synth, hold = loaded["synthetic table"], loaded["holdout table"]
    columns = list(dataset.table.columns)
    tables = [dataset.table, hold.table[columns], synth.table[columns]]
    schema = prepare_table(pd.concat(tables, ignore_index=True), dataset.schema).schema
    train, nonmembers, synthetic_rows = (encode(t, schema) for t in tables)
    encoding = GowerEncoding.for_arrays(np.asarray(schema.is_categorical), train, nonmembers, synthetic_rows)
    per_record = record_similarity(train, nonmembers, synthetic_rows, encoding)
    table = table_similarity(
        train, nonmembers, synthetic_rows, encoding, rng=stream(seed, 0, Role.SIMILARITY, 1), alpha=ALPHA
    )
    records = pd.DataFrame(
        {
            "record_id": dataset.file_rows() - 1,
            "dcr": per_record.dcr,
            "dcr_p_value": per_record.p_value,
        }
    )
    return FileCheck(
        records=records,
        table=table,
        data_name=dataset.source_name,
        synthetic_name=synth.source_name,
        holdout_name=hold.source_name,
        holdout_dcr=per_record.holdout_dcr,
        dropped={"data": dataset.dropped_rows, "synthetic": synth.dropped_rows, "holdout": hold.dropped_rows},
        holdout_in_d=_rows_in(nonmembers, train),
    )


def _rows_in(rows: np.ndarray, table: np.ndarray) -> int:
    """How many of ``rows`` equal some row of ``table`` on every column (encoded values)."""
    if len(rows) == 0 or len(table) == 0:
        return 0
    as_bytes = {np.ascontiguousarray(row + 0.0).tobytes() for row in np.asarray(table, dtype=np.float64)}
    return sum(np.ascontiguousarray(row + 0.0).tobytes() in as_bytes for row in np.asarray(rows, np.float64))


def file_check_lines(check: FileCheck) -> list[str]:
    """The result in plain sentences: the share test, the closest records, the limits."""
    t = check.table
    verdict = check.verdict
    n = len(check.records)
    why = {
        "fails": (
            f"{check.copies:,} records of D are copied exactly"
            if check.copies and t.passes
            else f"it fails at {t.alpha:g}"
        ),
        "void": (
            f"{check.holdout_in_d:,} holdout rows are also in D; a holdout must be records the "
            "generator never saw: give one"
        ),
        "inconclusive": (
            f"the holdout has {t.n_holdout:,} usable rows, too few for the test to show anything at "
            f"{t.alpha:g}; give at least {MIN_HOLDOUT_ROWS}"
        ),
        "passes": f"it passes at {t.alpha:g}",
    }[verdict]
    lines = [
        f"Compared {check.synthetic_name} ({t.n_synthetic:,} rows) with {check.data_name} (D, {n:,} rows) "
        f"and {check.holdout_name} (holdout).",
        f"DCR share test {verdict}: {t.dcr_share:.1%} of the synthetic rows are closer to D than to the "
        f"holdout ({min(t.n_train, t.n_holdout):,} rows of each; 50% when the file knows nothing of D "
        f"beyond the population), p = {t.share_p_value:.2g} (one-sided; {why}).",
        f"Distance to the closest record, 5th percentile: {t.dcr_train_p5:.4f} to D, "
        f"{t.dcr_holdout_p5:.4f} to the holdout; nearest-neighbour distance ratio, 5th percentile: "
        f"{t.nndr_train_p5:.3f} to D, {t.nndr_holdout_p5:.3f} to the holdout (Gower distances).",
        f"{check.close:,} of the {n:,} records of D are unusually close to a synthetic row (DCR p-value "
        f"at or below {ALPHA:g}; about {ALPHA * n:,.0f} would be by chance alone).",
    ]
    exact = check.copies
    if exact:
        lines.append(f"{exact:,} records of D appear in the synthetic file exactly.")
    dropped = {k: v for k, v in check.dropped.items() if v}
    if dropped:
        lines.append(
            "Rows left out for missing values: " + ", ".join(f"{k} {v:,}" for k, v in dropped.items()) + "."
        )
    lines.append(LIMITS)
    return lines
