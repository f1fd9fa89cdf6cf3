"""The command line: ``python -m privgame`` and its commands."""
