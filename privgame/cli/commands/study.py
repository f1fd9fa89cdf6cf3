"""``python -m privgame study NAME ...``: the paper's studies (Figs. 3-6), each a table and a figure.

``study size``, ``study epsilon``, ``study datasets`` and ``study convergence`` create a study
folder under ``<--out>/studies/`` and run it; ``study resume`` finishes an interrupted one;
``study show`` prints a study's table; ``study png`` writes a study's figure, or a run's four
Section-5 figures, as PNG images (needs a headless Chromium). Its flags are made from the options'
declarations (:mod:`privgame.cli.commands._study_arguments`) and ask for a
:class:`~privgame.studies.request.StudyRequest`, which the dashboard's Studies page builds too.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from privgame.cli.commands._interrupt import execution_flags, interrupted, privgame_command
from privgame.cli.commands._progress import ProgressBar
from privgame.cli.commands._study_arguments import (
    add_study_parser,
    build_study_spec,
    study_arguments,
    study_request,
)
from privgame.cli.terminal import terminal_safe
from privgame.core.defaults import STUDY_TITLES
from privgame.core.errors import RunError

if TYPE_CHECKING:
    from privgame.studies import StudyFolder

__all__ = ["add_parser", "build_study_spec", "run", "study_arguments", "study_request"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``study`` sub-parser and its sub-commands (:mod:`~privgame.cli.commands._study_arguments`)."""
    add_study_parser(subparsers, handler=run)


def _print_table(folder: StudyFolder, *, as_json: bool = False) -> None:
    from privgame.outputs.study_figures import study_chart
    from privgame.service import study_results

    result = study_results(folder)
    if as_json:
        print(result.table.to_json(orient="records"))
        return
    spec = folder.spec()
    print(f"study folder: {folder.path}")
    print(f"{STUDY_TITLES[spec.study]}: {spec.describe()}")
    table = result.table
    if spec.study == "epsilon":
        table = table.assign(epsilon=[("inf" if math.isinf(e) else f"{e:g}") for e in table["epsilon"]])
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(study_chart(spec, result).caption)
    if folder.has_results():
        print(f"table: {folder.path / 'table.csv'}  figure: {folder.path / 'figure.html'}")


def _finish(folder: StudyFolder) -> int:
    state = folder.status().get("state")
    if state == "cancelled":
        print(f"cancelled; resume with: python -m privgame study resume {folder.path}", file=sys.stderr)
        return 3
    _print_table(folder)
    return 0


def _png(args: argparse.Namespace) -> int:
    from privgame.outputs import figures
    from privgame.outputs.study_figures import study_chart, write_png
    from privgame.service import RunFolder, StudyFolder, study_results

    path = Path(args.folder)
    out = Path(args.output_dir)
    name = args.name or path.name
    written = []
    if (path / "study.json").is_file():
        folder = StudyFolder(path)
        chart = study_chart(folder.spec(), study_results(folder))
        written.append(write_png(chart.figure, out / f"{name}.png", width=args.width, height=args.height))
    elif (path / "spec.json").is_file():
        run_folder = RunFolder(path)
        run_folder.require_done()
        records = run_folder.records()
        t = run_folder.spec().threshold if args.threshold is None else args.threshold
        for slug, chart, size in (
            ("fig1a-risk-scatter", figures.risk_scatter(records, t), (760, 700)),
            ("fig1b-difference-histogram", figures.difference_histogram(records), (args.width, args.height)),
            ("fig2a-miss-rate", figures.miss_rate_chart(records), (args.width, args.height)),
            ("fig2b-risk-cdfs", figures.risk_cdfs(records), (args.width, args.height)),
        ):
            written.append(write_png(chart.figure, out / f"{name}-{slug}.png", width=size[0], height=size[1]))
    else:
        raise RunError(f"{path} is neither a study folder (study.json) nor a run folder (spec.json).")
    for p in written:
        print(p)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the ``study`` sub-command in ``args.study_command``."""
    from privgame.outputs.study_figures import figure_html
    from privgame.service import (
        StudyFolder,
        create_study,
        default_runs_root,
        execute_study,
        scheduler_address,
        study_cost,
    )

    command = args.study_command
    if command == "show":
        _print_table(StudyFolder(args.study_dir), as_json=args.json)
        return 0
    if command == "png":
        return _png(args)
    if command == "resume":
        folder = StudyFolder(args.study_dir)
    else:
        spec, dataset = build_study_spec(args)
        if dataset.dropped_rows and not args.quiet:  # type: ignore[attr-defined]
            print(f"note: {dataset.dropped_rows:,} rows with missing values were dropped.", file=sys.stderr)  # type: ignore[attr-defined]
        folder = create_study(default_runs_root() if args.out is None else args.out, spec, dataset.table)  # type: ignore[attr-defined]
        if not args.quiet:
            cost = study_cost(folder.spec())
            print(f"{cost['jobs']} runs, {cost['fits']:,} generator fits.", file=sys.stderr)
    print(f"study folder: {terminal_safe(str(folder.path), one_line=True)}", file=sys.stderr, flush=True)
    try:
        execute_study(
            folder,
            workers=args.workers,
            scheduler=scheduler_address(args.scheduler),
            progress=ProgressBar(args.quiet),
            figure=figure_html,
        )
        return _finish(folder)
    except KeyboardInterrupt:
        command = privgame_command("study", "resume", folder.path, *execution_flags(args))
        return interrupted("study", folder.path, command)
