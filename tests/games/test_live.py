"""Progress while units run: fits counted as they finish, and the heartbeat."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from privgame.games import live


def _fits(count: int, then: threading.Event | None = None) -> str:
    """A unit: ``count`` generator fits, then (with ``then``) a wait until it is set."""
    for _ in range(count):
        live.fit_done()
    if then is not None:
        then.wait(10)
    return "made"


def test_a_units_fits_count_before_it_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "_WRITE_SECONDS", 0.0)
    release = threading.Event()
    calls = [("a", _fits, (3,)), ("b", _fits, (7,)), ("c", _fits, (2, release))]
    with live.Tally(calls, [3, 5, 2]) as tally:
        key, fn, args = tally.calls[0]
        assert fn(*args) == "made" and tally.in_flight() == 3  # counted, not yet returned
        assert tally.finished(key) == "a" and tally.in_flight() == 0  # now the unit's own count
        # A unit counts no more than the plan gives it (5 of its 7 fits here).
        key, fn, args = tally.calls[1]
        fn(*args)
        assert tally.in_flight() == 5
        # A unit still running on another thread (as on a worker) is read while it runs.
        key, fn, args = tally.calls[2]
        running = threading.Thread(target=fn, args=args)
        running.start()
        deadline = time.monotonic() + 5
        while tally.in_flight() < 7 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert tally.in_flight() == 7
        release.set()
        running.join()
    assert tally.in_flight() == 0  # the count file went with the phase


def test_fits_outside_a_counted_unit_count_nowhere() -> None:
    live.fit_done()  # the calibration's fits, a unit run without a tally: no error, no count
    assert live.counted(None, _fits, 2) == "made"


def test_a_slot_that_cannot_be_written_counts_nothing(tmp_path) -> None:
    # A Dask worker on another host cannot see the engine's count file: its fits count at the end.
    assert live.counted(live.Slot(str(tmp_path / "gone"), 0), _fits, 3) == "made"


def test_the_heartbeat_reports_whenever_the_interval_passes_without_a_report() -> None:
    beats: list[float] = []
    with live.Heartbeat(lambda: beats.append(time.monotonic()), interval=0.1) as beat:
        time.sleep(0.55)
        assert len(beats) >= 3
        # Reports of the caller's own put the next beat off.
        count = len(beats)
        for _ in range(6):
            beat.touch()
            time.sleep(0.05)
        assert len(beats) == count
    gaps = [b - a for a, b in itertools.pairwise(beats)]
    assert all(gap < 0.5 for gap in gaps), gaps
    after = len(beats)
    time.sleep(0.3)
    assert len(beats) == after  # stopped with the block


def test_an_error_in_a_beat_is_raised_where_the_block_ends() -> None:
    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), live.Heartbeat(fail, interval=0.05):
        time.sleep(0.3)
