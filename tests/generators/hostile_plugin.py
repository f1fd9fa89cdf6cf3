"""A plug-in that meets the contract at first and turns hostile after some samples (for tests).

``mode`` says how: ``nan-values``, ``bad-codes``, ``wrong-shape``, ``raises``, ``exits`` or
``prints``; ``after`` is how many samples in this process behave first (the contract check
before a run takes a few). ``CALLS`` counts them; a test resets it.
"""

from __future__ import annotations

import sys

import numpy as np

CALLS = 0


class TurnsHostile:
    def __init__(self, mode: str = "nan-values", after: int = 12) -> None:
        self.mode = mode
        self.after = after

    def fit(self, X, schema, *, rng):  # type: ignore[no-untyped-def]
        self.rows_ = np.asarray(X, dtype=np.float64)
        return self

    def sample(self, n, *, rng):  # type: ignore[no-untyped-def]
        global CALLS
        CALLS += 1
        out = self.rows_[rng.integers(0, len(self.rows_), n)].copy()
        if self.after >= CALLS:
            return out
        if self.mode == "nan-values":
            out[0, 0] = np.nan
        elif self.mode == "bad-codes":
            out[:, -1] = 999.0
        elif self.mode == "wrong-shape":
            out = out[:-1]
        elif self.mode == "raises":
            raise RuntimeError("the plug-in broke")
        elif self.mode == "exits":
            sys.exit(0)
        elif self.mode == "prints":
            print("HOSTILE PRINT")
        return out
