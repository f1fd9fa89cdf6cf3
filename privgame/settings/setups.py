"""The two set-ups of a run, from the data owner's tables to what a run spec needs.

``release`` (the default)
    D is the data the release is trained on. The population the attacker knows (D_aux) and the
    reference records come from a second table (:func:`load_population`) or from a seeded
    holdout of the owner's table that is not released.
``paper``
    The paper's instrument: |D| records drawn from an evaluation pool, with Table 2's
    proportions (:func:`paper_inputs`).

The CLI and the Evaluate page both call :func:`release_inputs` or :func:`paper_inputs` and build
a :class:`~privgame.settings.run_spec.RunSpec` from the :class:`AuditInputs` they return, so both say and do
the same thing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pandas as pd

from privgame.core.defaults import DEFAULT_HOLDOUT
from privgame.core.errors import DataError, ParameterError, SchemaError, SizeError
from privgame.data import Dataset, fingerprint_table, load_dataset, prepare_table
from privgame.data.schema import CATEGORICAL, Schema
from privgame.data.splits import (
    Sizes,
    check_sizes,
    default_aux_rows,
    default_sizes,
    holdout_rows,
    release_split,
)
from privgame.settings.run_spec import Setup

__all__ = [
    "DEFAULT_HOLDOUT",
    "AuditInputs",
    "check_population",
    "load_population",
    "paper_inputs",
    "parse_holdout",
    "release_inputs",
    "with_setup",
]


@dataclass(frozen=True, eq=False)
class AuditInputs:
    """The table a run stores and the parts of its spec that the set-up decides.

    Attributes
    ----------
    table : DataFrame
        The run's table: the owner's rows, then the population's when it is a second table.
    schema : Schema
        Its schema (domains over every row of ``table``).
    sizes : dict
        ``{"aux": ..., "eval": ..., "target": ...}`` for :class:`~privgame.settings.run_spec.RunSpec`.
    setup : Setup
    fingerprint : str
        SHA-256 of ``table`` (the spec's ``data_fingerprint``).
    """

    table: pd.DataFrame
    schema: Schema
    sizes: dict[str, int]
    setup: Setup
    fingerprint: str


def parse_holdout(text: str | float | int) -> float | int:
    """``"0.3"`` -> 0.3 (a fraction), ``"5000"`` -> 5000 (rows); anything else is a clear error."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return text
    value = str(text).strip().replace("_", "")
    if "," in value:
        # "0,3" is 0.3 in much of Europe and 3 with a thousands separator: never guess which.
        raise ParameterError(
            f"--holdout {text!r} has a comma, which could be a decimal comma or a thousands separator; "
            "write a fraction with a point (0.3) or a number of rows without separators (5000)."
        )
    try:
        number = float(value)
    except ValueError:
        raise ParameterError(
            f"--holdout must be a fraction in (0, 1) such as 0.3, or a number of rows such as 5000; "
            f"got {text!r}."
        ) from None
    return int(number) if number >= 1 and number.is_integer() else number


def _categories(values: pd.Series) -> set[str]:
    return {str(v) for v in values.dropna().unique()}


def check_population(data: Dataset, population: pd.DataFrame, name: str = "the population table") -> None:
    """Check that a population table has the data's columns and can take the data's roles.

    Raises
    ------
    SchemaError
        One error listing every difference: columns missing or extra, a continuous column with
        values that are not numbers, a categorical column that shares no value with the data.
    """
    problems: list[str] = []
    data_columns = [c.name for c in data.schema.columns]
    present = [str(c) for c in population.columns]
    missing = [c for c in data_columns if c not in present]
    extra = [c for c in present if c not in data_columns]
    if missing:
        problems.append(f"columns of the data missing from {name}: {missing}; add them, with the same names.")
    if extra:
        problems.append(f"columns of {name} that the data does not have: {extra}; remove them.")
    for col in data.schema.used:
        if col.name not in present:
            continue
        values = population[col.name]
        if col.role == CATEGORICAL:
            shared = _categories(values) & _categories(data.table[col.name])
            if values.notna().any() and not shared:
                sample = sorted(_categories(values))[:3]
                problems.append(
                    f"column {col.name!r} is categorical in the data, but none of its values in {name} "
                    f"({', '.join(map(repr, sample))}, ...) occur in the data: the two tables code it "
                    "differently; use the same codes."
                )
        else:
            numbers = pd.to_numeric(values.dropna(), errors="coerce")
            bad = int(numbers.isna().sum())
            if bad:
                problems.append(
                    f"column {col.name!r} is continuous in the data, but {bad:,} of its values in {name} "
                    "are not numbers; fix them, or give the column the same role in both tables."
                )
    if problems:
        raise SchemaError(f"{name} does not match the data table.", problems)


def load_population(
    source: str | os.PathLike[str] | bytes,
    data: Dataset,
    *,
    filename: str | None = None,
    what: str = "population table",
) -> Dataset:
    """Load a population table (or another table with the data's columns, called ``what`` in
    messages) with the data table's roles and missing-value policy.

    Raises
    ------
    SchemaError
        Listing every difference from the data table (see :func:`check_population`).
    DataError
        When the file cannot be read as a table, or the data's roles do not fit it.
    """
    from privgame.data import load_table

    name = filename or (source if isinstance(source, str | os.PathLike) else f"the {what}")
    label = f"the {what} {os.path.basename(str(name))}"
    raw = load_table(source, filename=os.path.basename(str(name)))
    check_population(data, raw, label)
    roles = {c.name: c.role for c in data.schema.columns}
    try:
        loaded = load_dataset(
            source,
            filename=os.path.basename(str(name)),
            roles=roles,
            missing_policy=data.schema.missing_policy,
        )
    except DataError as error:
        raise SchemaError(
            f"{label} does not match the data table.", error.problems or [error.summary]
        ) from None
    if len(loaded.table) < 2:
        raise SizeError(
            f"{label} has {len(loaded.table):,} usable rows; it needs at least 2 (the attacker's data "
            "and at least one reference record)."
        )
    return loaded


def release_inputs(
    data: Dataset,
    *,
    seed: int,
    population: Dataset | None = None,
    holdout: float | int = DEFAULT_HOLDOUT,
    aux_rows: int | None = None,
    shadow_size: int | None = None,
) -> AuditInputs:
    """The release set-up for ``data``: D is the release's training data.

    Parameters
    ----------
    data : Dataset
        The owner's table, the one the release is trained on.
    seed : int
        The run's root seed (it draws the holdout and the attacker's share of the population).
    population : Dataset, optional
        A second table playing the population (see :func:`load_population`); D is then all of
        ``data``. Without it, a holdout of ``data`` plays the population and is not released.
    holdout : float or int, default 0.3
        The holdout, as a fraction of ``data``'s rows or a number of rows (no population only).
    aux_rows : int, optional
        Rows of the population that the attacker knows (D_aux); two thirds by default (the
        paper's ratio). The rest are the reference records.
    shadow_size : int, optional
        Rows of each shadow training dataset, drawn without replacement. By default shadow
        datasets have |D| rows, drawn with replacement when D_aux is smaller than that.

    Raises
    ------
    SizeError, ParameterError
        When the parts do not fit, naming the part and the fix.
    """
    n_data = len(data.table)
    if population is not None and population.fingerprint == data.fingerprint:
        raise SizeError(
            f"The population table {population.source_name} is the data table itself: the records of D "
            "cannot play the population they are tested against. Give a table of other people from the "
            "same population, or leave --population out to hold back part of the data."
        )
    if population is not None:
        table = pd.concat([data.table, population.table[list(data.table.columns)]], ignore_index=True)
        schema = prepare_table(table, data.schema).schema
        population_rows = len(population.table)
        target_rows = n_data
    else:
        table, schema = data.table, data.schema
        population_rows = holdout_rows(n_data, holdout)
        target_rows = n_data - population_rows
    aux = default_aux_rows(population_rows) if aux_rows is None else int(aux_rows)
    split = release_split(
        n_data, population_rows, aux=aux, seed=seed, separate_population=population is not None
    )
    problems = []
    if shadow_size is not None and not 2 <= shadow_size <= aux:
        problems.append(
            f"--shadow-size {shadow_size:,}: shadow datasets of that size are drawn from D_aux "
            f"({aux:,} rows) without replacement; choose 2 <= --shadow-size <= {aux:,}, or leave "
            "it out to draw |D| rows with replacement."
        )
    if problems:
        raise SizeError("The shadow datasets do not fit the attacker's data.", problems)
    pop_ids = split.aux.tolist() + split.reference.tolist()
    setup = Setup(
        kind="release",
        population="table" if population is not None else "holdout",
        data_rows=n_data,
        population_rows=population_rows,
        population_name=population.source_name if population is not None else None,
        shadow_size=shadow_size,
        shadow_replace=shadow_size is None and aux < target_rows,
        data_fingerprint=fingerprint_table(table.iloc[split.target].reset_index(drop=True)),
        population_fingerprint=fingerprint_table(table.iloc[sorted(pop_ids)].reset_index(drop=True)),
    )
    sizes = {"aux": aux, "eval": len(split.eval), "target": len(split.target)}
    return AuditInputs(
        table=table, schema=schema, sizes=sizes, setup=setup, fingerprint=fingerprint_table(table)
    )


def paper_inputs(
    data: Dataset, *, size: int | None = None, aux: int | None = None, eval_size: int | None = None
) -> AuditInputs:
    """The paper's set-up: |D| records drawn from D_eval, defaults scaled from Table 2.

    ``aux`` alone gives D_eval the remaining rows.

    Raises
    ------
    SizeError
        When the sizes do not fit the table.
    """
    n_rows = len(data.table)
    base = default_sizes(n_rows)
    aux_size = base.aux if aux is None else aux
    if eval_size is None:
        eval_size = base.eval if aux is None else n_rows - aux_size
    sizes = Sizes(aux=aux_size, eval=eval_size, target=base.target if size is None else size)
    check_sizes(n_rows, sizes)
    return AuditInputs(
        table=data.table,
        schema=data.schema,
        sizes=sizes.to_dict(),
        setup=Setup(kind="paper"),
        fingerprint=data.fingerprint,
    )


def with_setup(spec_kwargs: dict[str, Any], inputs: AuditInputs) -> dict[str, Any]:
    """``spec_kwargs`` with the set-up's schema, sizes, set-up and fingerprint filled in."""
    return {
        **spec_kwargs,
        "schema": inputs.schema.to_dict(),
        "sizes": dict(inputs.sizes),
        "setup": inputs.setup,
        "data_fingerprint": inputs.fingerprint,
    }
