"""Fixtures of the generator tests."""

from __future__ import annotations

import pytest

from privgame.generators import _cart


@pytest.fixture(autouse=True)
def refit_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthpop's one-row refits on tables of every size: the tests' tables are small, and below
    ``_REFIT_MIN_ROWS`` rows ``refit_swap`` would grow a fresh forest instead of refitting."""
    monkeypatch.setattr(_cart, "_REFIT_MIN_ROWS", 0)
