"""Checks made before a run folder is written: a run that cannot start leaves nothing behind.

:func:`check_run` finds, before :func:`privgame.store.create_run` writes a copy of the private
table, every problem the engine would otherwise meet only after the folder exists: settings out
of range, records to audit that are not in D (or more of them than D holds), sizes that do not fit
the table, and generator parameters the generator refuses (epsilon, bins, leaf size, degree), by
fitting the generator once on the smallest training set the run uses.
"""

from __future__ import annotations

import pandas as pd

from privgame.seeding import Role, stream
from privgame.spec import RunSpec

__all__ = ["check_run"]


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
    from privgame.games.engine import build_audit

    spec.validate()
    ctx, _ = build_audit(spec, table)
    rows = ctx.X[ctx.target]
    # The shadow datasets may be smaller than D: a limit such as bins <= rows must hold there too.
    smallest = max(1, min(len(rows), ctx.n_shadow_rows))
    ctx.new_generator().fit(rows[:smallest], ctx.schema, rng=stream(spec.seed, 0, Role.GENERATOR))
