"""``python -m privgame export RUN_DIR -o OUT``: write a run's results for use elsewhere.

``--what`` picks the export:

``high-risk`` (default)
    The records with model-seeded risk above ``t``, riskiest first
    (:func:`privgame.outputs.run_report.high_risk`).
``records``
    Every evaluated record with its values, both risks, their bounds, their verdicts at ``t``
    and ``missed_by_traditional``.
``screen``
    Every record of D, from a run that screened them: ``record_id``, ``screen_risk``,
    ``screen_low``, ``screen_high``, ``screen_verdict`` at ``t``, and, for the records the exact
    game played, ``risk_model_seeded`` and ``verdict_model_seeded``; then the record's values.
``spec``
    The run's settings (``spec.json``), always JSON.
``html``
    A self-contained HTML report (:func:`privgame.outputs.run_report.html_report`).

Tables are written as CSV (neutralised against CSV injection), CSV for a spreadsheet
(``csv-excel``: UTF-8 byte-order mark, ``;`` separator, decimal comma), JSON or Parquet
(``--format``); CSV and JSON round the risks to 4 decimals. Both tables have the same columns in
the same order (:func:`privgame.service.export_frame`, which the Export page uses too).
The file is written like every output (:func:`privgame.outputs.files.write_output`: owner-only,
atomically, refusing a pipe or a device). ``-o -`` writes the exact bytes to stdout when it is a
pipe or a file; on a terminal, text is shown with its control characters escaped and Parquet is
refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from privgame.cli.terminal import raw_stream, terminal_safe
from privgame.core.defaults import EXPORT_FORMATS
from privgame.core.errors import ParameterError, RunError

if TYPE_CHECKING:
    from privgame.store.folders import RunFolder

__all__ = ["WHAT", "add_parser", "export_bytes", "run"]

WHAT: tuple[str, ...] = ("high-risk", "records", "screen", "spec", "html")
"""What ``export`` can write."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``export`` sub-parser."""
    parser = subparsers.add_parser(
        "export",
        help="write a run's high-risk records, all records, settings or an HTML report",
        description=(
            "Write part of a finished run to a file: the high-risk records (default), every "
            "evaluated record, the run's settings (JSON) or a self-contained HTML report. Tables "
            "are CSV (safe to open in a spreadsheet), JSON or Parquet."
        ),
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run folder")
    parser.add_argument(
        "--what", choices=WHAT, default="high-risk", help="what to export (default: high-risk)"
    )
    parser.add_argument(
        "--screened",
        action="store_true",
        help="high-risk: add the records the screen puts at risk that the exact game did not play "
        "(a column 'source' says which are which)",
    )
    parser.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default=None,
        help="table format for high-risk and records: csv, csv-excel (for spreadsheets: UTF-8 "
        "byte-order mark, ';' between cells, decimal comma), json or parquet (default: csv)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="high-risk threshold t of the verdicts in high-risk, records and html (default: the run's)",
    )
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the file to write ('-': stdout)"
    )
    parser.set_defaults(handler=run)


def export_bytes(
    folder: RunFolder,
    what: str,
    fmt: str | None = None,
    threshold: float | None = None,
    *,
    screened: bool = False,
) -> bytes:
    """The bytes of one export of a run.

    Parameters
    ----------
    folder : RunFolder
        The run.
    what : {"high-risk", "records", "spec", "html"}
        What to export.
    fmt : {"csv", "csv-excel", "json", "parquet"}, optional
        Table format for ``high-risk`` and ``records`` (default ``csv``; see
        :func:`privgame.outputs.run_report.to_bytes`). ``spec`` is always
        JSON and ``html`` always HTML; asking for another format for them is an error.
    threshold : float, optional
        High-risk threshold ``t`` for ``high-risk`` and ``html``; the run's own by default.
    screened : bool, default False
        ``high-risk`` only: add the records the screen puts at risk.

    Returns
    -------
    bytes

    Raises
    ------
    ParameterError
        For an unknown ``what`` or format, or a format that does not apply.
    RunError
        If the run has no results yet (every export but ``spec``).
    """
    from privgame.service import export_frame, html_report, to_bytes

    if what not in WHAT:
        raise ParameterError(f"Unknown export {what!r}; use one of {list(WHAT)}.")
    if what == "spec":
        if fmt not in (None, "json"):
            raise ParameterError(
                f"The run's settings are exported as JSON only; drop --format {fmt} or use json."
            )
        return folder.spec().to_json().encode("utf-8")
    if what == "html":
        if fmt is not None:
            raise ParameterError(
                f"The report is a single HTML file; drop --format {fmt} when exporting html."
            )
        return html_report(folder, threshold).encode("utf-8")
    if screened and what != "high-risk":
        raise ParameterError(f"--screened applies to the high-risk export; drop it for --what {what}.")
    folder.require_done()
    if (what == "screen" or screened) and not folder.has_screen():
        raise ParameterError(
            f"Run {folder.run_id} did not screen every record (it ran with --screen none); export "
            "--what records or high-risk without --screened, or run the audit again with --screen all."
        )
    t = folder.spec().threshold if threshold is None else threshold
    return to_bytes(export_frame(folder, what, t, screened=screened), fmt or "csv")


def run(args: argparse.Namespace) -> int:
    """Write the chosen export to ``args.output`` (``-``: stdout)."""
    from privgame.service import RunFolder, check_output_path, write_output

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise RunError(f"{run_dir} is not a folder; give the folder a run was written to.")
    folder = RunFolder(run_dir)
    if args.output == "-":
        return _to_stdout(
            export_bytes(folder, args.what, args.format, args.threshold, screened=args.screened), args
        )
    check_output_path(args.output, what=f"the {args.what} export")  # before any work
    data = export_bytes(folder, args.what, args.format, args.threshold, screened=args.screened)
    out = write_output(args.output, data, what=f"the {args.what} export")
    print(
        f"wrote {args.what} of run {folder.run_id} to {terminal_safe(out, one_line=True)} "
        f"({len(data):,} bytes)",
        file=sys.stderr,
    )
    return 0


def _to_stdout(data: bytes, args: argparse.Namespace) -> int:
    """The export on stdout: the exact bytes into a pipe or file, text only on a terminal."""
    stdout = raw_stream(sys.stdout)
    if not stdout.isatty():
        stdout.flush()
        stdout.buffer.write(data)
        stdout.buffer.flush()
        return 0
    if (args.format or "csv") == "parquet" and args.what in ("high-risk", "records", "screen"):
        raise ParameterError(
            "Parquet is binary and stdout is a terminal; write it to a file (-o FILE) or pipe it."
        )
    # A terminal acts on the control characters of the data's values: show them escaped.
    print(data.decode("utf-8", errors="replace"), end="")
    return 0
