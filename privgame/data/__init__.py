"""Tables in and out: loading, column roles, validation, the missing policy, encoding, splits.

The usual path is :func:`load_dataset` (load -> infer roles -> validate -> apply the missing-value
policy), then :func:`encode` for the generators and the attack, and :func:`split_indices` for
``D_aux``, ``D_eval`` and the target dataset ``D``.
"""

from __future__ import annotations

from pathlib import Path

from privgame.data.dataset import (
    MISSING_CATEGORY,
    Dataset,
    Inspection,
    PreparedTable,
    fingerprint_table,
    inspect_dataset,
    load_dataset,
    prepare_table,
)
from privgame.data.domain import Domain, declare_domain, domain_template, parse_domain
from privgame.data.encoding import decode, encode
from privgame.data.loading import DEFAULT_MAX_BYTES, MISSING_MARKERS, load_table
from privgame.data.schema import Column, Schema, infer_schema
from privgame.data.splits import MIN_ROWS, Sizes, Split, check_sizes, default_sizes, split_indices
from privgame.data.validation import DEFAULT_MAX_CATEGORIES, missing_code_warnings, validate_table

__all__ = [
    "BUNDLED_ADULT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CATEGORIES",
    "MIN_ROWS",
    "MISSING_CATEGORY",
    "MISSING_MARKERS",
    "Column",
    "Dataset",
    "Domain",
    "Inspection",
    "PreparedTable",
    "Schema",
    "Sizes",
    "Split",
    "check_sizes",
    "declare_domain",
    "decode",
    "default_sizes",
    "domain_template",
    "encode",
    "fingerprint_table",
    "infer_schema",
    "inspect_dataset",
    "load_dataset",
    "load_table",
    "missing_code_warnings",
    "parse_domain",
    "prepare_table",
    "split_indices",
    "validate_table",
]

BUNDLED_ADULT: Path = Path(__file__).parents[2] / "data" / "adult.csv.gz"
"""The UCI Adult data shipped with the repository (48,842 rows; see data/README.md)."""
