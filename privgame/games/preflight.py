"""Checks made before a run folder is written: a run that cannot start leaves nothing behind.

:func:`create_run` creates every run. Before :func:`privgame.store.folders.new_run_folder` writes a copy
of the private table, :func:`check_run` finds every problem the engine would otherwise meet only
after the folder exists: settings out of range, records to audit that are not in D (or more of
them than D holds), sizes that do not fit the table, and generator parameters the generator
refuses (epsilon, bins, leaf size, degree), by fitting the generator once on the smallest
training set the run uses.
"""

from __future__ import annotations

import os

import pandas as pd

from privgame.core.seeding import Role, stream
from privgame.games.context import build_audit
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import RunFolder, new_run_folder, run_name_part

__all__ = ["check_run", "create_run"]


def create_run(root: str | os.PathLike[str], spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """Check a run (:func:`check_run`), then create its folder under ``root`` holding ``spec`` and
    the prepared ``table`` (:func:`privgame.store.folders.new_run_folder`).

    Everything that can be checked before the run starts is checked before anything is written:
    the settings, the records to audit against the table, and the generator's parameters by one
    fit on D.

    Raises
    ------
    ParameterError, SizeError, DataError
        From the checks, before anything is written.
    RunError, OutputError
        When the folder cannot be named or written (see :func:`~privgame.store.folders.new_run_folder`).
    """
    run_name_part(spec.generator)  # a name that cannot name a folder is refused first
    check_run(spec, table)
    return new_run_folder(root, spec, table)


def check_run(spec: RunSpec, table: pd.DataFrame) -> None:
    """Raise the error the run would meet at its start, before anything is written.

    Parameters
    ----------
    spec : RunSpec
    table : DataFrame
        The prepared table the run audits.

    Raises
    ------
    ParameterError
        For invalid settings, unknown or too many records to audit, or generator parameters the
        generator refuses.
    SizeError, DataError, SchemaError
        When the sizes or the schema do not fit the table.
    """
    spec.validate()
    ctx, _ = build_audit(spec, table)
    rows = ctx.X[ctx.target]
    # The shadow datasets may be smaller than D: a limit such as bins <= rows must hold there too.
    smallest = max(1, min(len(rows), ctx.n_shadow_rows))
    ctx.new_generator().fit(rows[:smallest], ctx.schema, rng=stream(spec.seed, 0, Role.GENERATOR))
