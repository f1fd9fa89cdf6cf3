"""The one exception tree of privgame.

Every error privgame raises on purpose derives from :class:`PrivgameError`, which is a
:class:`ValueError`, so callers can catch bad input with ``except ValueError`` or be precise::

    PrivgameError(ValueError)
    ├── DataError              a file or table cannot be used (collects every problem)
    │   └── SchemaError        a schema or role override is inconsistent with the table
    ├── SizeError              the table is too small for the chosen sizes
    ├── ParameterError         an option has a wrong value (unknown generator, epsilon <= 0, ...)
    │   └── GeneratorContractError  a plug-in generator breaks the generator protocol
    ├── RunError               a run folder is missing, corrupt or in the wrong state
    │   └── WorkerLostError    a worker process died mid-run (killed, out of memory, a crash)
    ├── OutputError            a file or folder cannot be written (full disk, read-only, not a folder)
    └── ReleaseError           a release would not match its audit (the table or the generator changed)

Errors that collect several problems keep them in ``problems`` (one sentence each, naming the
column or line and the fix); ``str(error)`` lists them all. Lines quoted from another program's
output (an external generator's last lines of stderr) are kept apart in ``quoted``, one line each,
so that they can be shown as lines while a line break inside a problem (from a column or file
name) never can.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "DataError",
    "GeneratorContractError",
    "OutputError",
    "ParameterError",
    "PrivgameError",
    "ReleaseError",
    "RunError",
    "SchemaError",
    "SizeError",
    "WorkerLostError",
]


class PrivgameError(ValueError):
    """Base class of every error privgame raises on purpose.

    Parameters
    ----------
    message : str
        A one-paragraph summary.
    problems : iterable of str, optional
        Every individual problem found, each naming what is wrong and how to fix it.
    quoted : iterable of str, optional
        Lines of another program's output that the last problem introduces (its last lines of
        stderr), one line each, shown indented under the problems.
    """

    def __init__(self, message: str, problems: Iterable[str] = (), *, quoted: Iterable[str] = ()) -> None:
        self.problems: list[str] = list(problems)
        self.quoted: list[str] = list(quoted)
        self.summary = message
        text = message
        if self.problems:
            text = message + "\n" + "\n".join(f"  - {p}" for p in self.problems)
        if self.quoted:
            text += "\n" + "\n".join(f"      {line}" for line in self.quoted)
        super().__init__(text)


class DataError(PrivgameError):
    """A file or table cannot be used as it is."""


class SchemaError(DataError):
    """A schema, or an override of a column's role or domain, does not fit the table."""


class SizeError(PrivgameError):
    """The table is too small for the chosen sizes of D_aux, D_eval and D."""


class ParameterError(PrivgameError):
    """An option has a value outside its allowed range, or names something unknown."""


class GeneratorContractError(ParameterError):
    """A plug-in generator does not do what the engine relies on (see ``check_contract``)."""


class RunError(PrivgameError):
    """A run folder is missing, corrupt, or in a state that does not allow the request."""


class WorkerLostError(RunError):
    """A worker process ended in the middle of a unit: killed (often by the system, out of memory),
    a crash in native code, or generator code that ended its own process. The units finished
    before are kept, so the run can be resumed."""

    def name_run_folder(self, path: str) -> None:
        """Write the run folder into the problems' resume command (``RUN_FOLDER`` until known)."""
        self.__init__(  # type: ignore[misc]
            self.summary, [p.replace("RUN_FOLDER", path) for p in self.problems], quoted=self.quoted
        )


class OutputError(PrivgameError):
    """A file or folder cannot be written: the disk is full, it is read-only, or a file stands
    where a folder belongs. The message names the path and the fix."""


class ReleaseError(PrivgameError):
    """A release was asked for with a table or generator settings that differ from the audited ones."""
