"""The subcommands of ``python -m privgame``.

Each subcommand is one module here exposing two functions:

``add_parser(subparsers) -> None``
    Add its parser (or parsers) to the ``argparse`` sub-parsers, each with the function that
    runs it as its default: ``parser.set_defaults(handler=run)``.
``run(args) -> int``
    Do the work and return the exit status (0 for success, 2 for bad input). Raise a
    :class:`~privgame.core.errors.PrivgameError` for a problem the user can fix:
    :func:`privgame.cli.main.main` prints it without a traceback.

:data:`privgame.cli.main.COMMANDS` lists the modules, one line each.

``python -m privgame --help`` imports every one of them, so a command module imports at its top
only what its parser needs (the standard library, :mod:`privgame.core.defaults`,
:mod:`privgame.settings.run_spec`,
:mod:`privgame.core.errors`, :mod:`privgame.cli.terminal`) and imports numpy, pandas, scikit-learn, numba,
plotly and the modules that use them inside ``run``: the CLI then starts in a fraction of a
second (``benchmarks/startup.py``; ``tests/cli/test_cli_help.py`` checks the imports).
"""
