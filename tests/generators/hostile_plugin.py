"""A plug-in that meets the contract at first and turns hostile after some samples (for tests).

``mode`` says how: ``nan-values``, ``bad-codes``, ``wrong-shape``, ``raises``, ``exits``,
``prints`` or ``sleeps``; ``after`` is how many samples of the run behave first. The plug-in
behaves until a test sets ``ARMED`` as the run starts (the contract check and the calibration
before it sample as often as they need); ``CALLS`` counts the samples since.

Modes ``ends-worker`` and ``killed`` end any process but ``main_pid`` (the engine's worker
processes) at their first sample, with ``os._exit(3)`` and with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from privgame.generators import SyntheticGenerator

CALLS = 0
ARMED = False


class TurnsHostile:
    def __init__(self, mode: str = "nan-values", after: int = 4, main_pid: int = 0) -> None:
        self.mode = mode
        self.after = after
        self.main_pid = main_pid

    def fit(self, X, schema, *, rng):  # type: ignore[no-untyped-def]
        self.rows_ = np.asarray(X, dtype=np.float64)
        return self

    def sample(self, n, *, rng):  # type: ignore[no-untyped-def]
        global CALLS
        CALLS += ARMED
        out = self.rows_[rng.integers(0, len(self.rows_), n)].copy()
        if self.mode in ("ends-worker", "killed") and os.getpid() != self.main_pid:
            if self.mode == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        # A worker process exists only in the run proper: it is armed from its first sample.
        if os.getpid() != self.main_pid and self.mode == "sleeps":
            time.sleep(600)
        if not ARMED or self.after >= CALLS:
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
        elif self.mode == "sleeps":
            time.sleep(600)
        return out


class HostileSubclass(TurnsHostile, SyntheticGenerator):
    """The same behaviour from a plug-in that subclasses the base class: it is checked alike."""

    name = "tests.generators.hostile_plugin:HostileSubclass"
