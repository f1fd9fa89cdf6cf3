"""The executor locally: scheduler addresses, unit sizing, joblib in-process and loky runs.

Runs on a real Dask cluster are tested in tests/dask/.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from privgame.core.errors import ParameterError, RunError
from privgame.settings import executors as execution
from privgame.settings.executors import (
    MIN_UNITS,
    batch_size,
    describe_executor,
    run_calls,
    scheduler_address,
)
from privgame.store.checkpoints import SyntheticTables


def _touch_after(path: Path, seconds: float) -> str:
    time.sleep(seconds)
    path.touch()
    return path.name


def test_the_scheduler_comes_from_the_argument_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRIVGAME_SCHEDULER", "tcp://env-host:8786")
    assert scheduler_address("tcp://cli-host:1") == "tcp://cli-host:1"
    assert scheduler_address(None) == "tcp://env-host:8786"
    monkeypatch.setenv("PRIVGAME_SCHEDULER", "  ")
    assert scheduler_address(None) is None
    monkeypatch.delenv("PRIVGAME_SCHEDULER")
    assert scheduler_address(None) is None


def test_a_scheduler_address_without_a_protocol_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"give it as tcp://HOST:PORT"):
        scheduler_address("localhost:8786")


def test_a_run_records_its_executor() -> None:
    assert describe_executor(4, "tcp://h:1") == {
        "executor": "dask",
        "scheduler": "tcp://h:1",
        "workers": None,
    }
    assert describe_executor(4, None) == {"executor": "loky", "workers": 4, "scheduler": None}
    assert describe_executor(1, None)["executor"] == "in-process"


@pytest.mark.parametrize(
    ("item_seconds", "count", "options", "expected"),
    [
        (0.01, 10_000, {}, 100),  # a second's worth of 10 ms items
        (0.05, 80, {}, 80 // MIN_UNITS),  # a 4 s phase: MIN_UNITS units of 0.5 s
        (0.001, 80, {}, 80),  # a 0.08 s phase: one unit, not units below the 0.1 s floor
        (0.001, 80, {"floor_seconds": 0.0}, 80 // MIN_UNITS),  # no floor: MIN_UNITS units
        (0.001, 7, {"floor_seconds": 0.0}, 1),
        (2.5, 500, {}, 1),  # slow items: one per unit
        (0.0, 10_000, {"max_items": 7}, 7),  # free items: capped by max_items
        (0.01, 1, {}, 1),
        (0.01, 0, {}, 1),
    ],
)
def test_units_take_about_a_second_unless_the_phase_is_short(
    item_seconds: float, count: int, options: dict[str, float], expected: int
) -> None:
    assert batch_size(item_seconds, count, **options) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("item_seconds", [1e-5, 1e-3, 0.01, 0.3, 2.0])
@pytest.mark.parametrize("count", [2, 9, 50, 1000, 100_000])
def test_units_are_a_second_long_or_the_phase_is_spread_over_min_units_units(
    item_seconds: float, count: int
) -> None:
    size = batch_size(item_seconds, count)
    units = -(-count // size)
    unit_seconds = size * item_seconds
    assert 1 <= size <= count
    assert unit_seconds >= 0.1 or size == count  # never tiny units, unless the phase is tiny
    at_floor = unit_seconds < 0.1 + item_seconds
    assert unit_seconds >= 1.0 - item_seconds or units >= min(MIN_UNITS, count) or at_floor
    assert unit_seconds < 1.0 + item_seconds or size == 1  # no bigger than needed


@pytest.mark.parametrize("workers", [1, 2])
def test_every_call_is_run_once_with_its_key_and_worker_time(workers: int) -> None:
    shared = np.arange(300_000, dtype=np.float64)  # above joblib's memory-map threshold
    calls = [(k, np.add, (shared[k], k)) for k in range(6)] + [("sum", np.sum, (shared,))]
    results = list(run_calls(calls, workers=workers, shared=[shared]))
    assert sorted(map(str, (key for key, _, _ in results))) == sorted(map(str, [*range(6), "sum"]))
    values = {key: value for key, value, _ in results}
    assert values["sum"] == shared.sum()
    assert all(values[k] == 2 * k for k in range(6))
    assert all(seconds >= 0 for _, _, seconds in results)
    assert list(run_calls([], workers=workers)) == []


@dataclass(frozen=True)
class _Holder:
    X: np.ndarray
    small: np.ndarray
    name: str = "h"


def _describe(holder: _Holder) -> tuple[str, bool, float]:
    return type(holder.X).__name__, bool(holder.X.flags.writeable), float(holder.X.sum())


def test_shared_arrays_reach_local_processes_as_memory_maps(tmp_path: Path) -> None:
    holder = _Holder(X=np.arange(300_000, dtype=np.float64), small=np.arange(3))
    mapped = execution._memory_mapped(holder, tmp_path, "ctx")
    assert isinstance(mapped.X, np.memmap) and np.array_equal(mapped.X, holder.X)
    assert mapped.small is holder.small and mapped.name == "h"
    assert not isinstance(holder.X, np.memmap)  # the caller's object is left alone

    results = list(run_calls([(k, _describe, (holder,)) for k in range(3)], workers=2, shared=[holder]))
    assert {value for _, value, _ in results} == {("memmap", False, float(holder.X.sum()))}


def _describe_tables(tables: SyntheticTables) -> tuple[list[str], float]:
    return [type(c).__name__ for c in tables.columns], float(sum(t.sum() for t in tables))


def test_synthetic_tables_reach_local_processes_column_by_column_as_memory_maps() -> None:
    datasets = np.arange(3 * 200_000 * 2, dtype=np.float64).reshape(3, 200_000, 2) % 1_000
    tables = SyntheticTables.of(datasets)
    results = list(
        run_calls([(k, _describe_tables, (tables,)) for k in range(2)], workers=2, shared=[tables])
    )
    assert {(tuple(kinds), total) for _, (kinds, total), _ in results} == {
        (("memmap", "memmap"), float(datasets.sum()))
    }


def test_closing_the_results_early_stops_the_remaining_calls(tmp_path: Path) -> None:
    calls = [(k, _touch_after, (tmp_path / f"{k}.done", 0.4)) for k in range(12)]
    results = run_calls(calls, workers=2)
    next(results)
    results.close()
    time.sleep(1.0)
    # 12 calls on 2 workers take 2.4 s; after a close only the calls in flight may still finish.
    assert len(list(tmp_path.glob("*.done"))) <= 6


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(execution, "CONNECT_SECONDS", 1.0)
    calls = [(0, np.sum, ([1, 2],))]
    with pytest.raises(
        RunError, match=r"Cannot reach the Dask scheduler at tcp://127\.0\.0\.1:\d+.*dask worker"
    ):
        list(run_calls(calls, scheduler=f"tcp://127.0.0.1:{port}"))
