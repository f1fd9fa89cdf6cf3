"""``python -m privgame``: the command line."""

from privgame.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
