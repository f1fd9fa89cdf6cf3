"""Tests of privgame.data.duplicates: exact twins, counted and dropped, in the run, report and schema."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.cli.main import main
from privgame.data import load_dataset
from privgame.data.duplicates import (
    count_twins,
    drop_duplicate_rows,
    has_twin,
    row_keys,
    twin_note,
    twins_of,
)
from privgame.store.folders import RunFolder


def _has_twin_slow(X: np.ndarray, ids: np.ndarray, among: np.ndarray) -> np.ndarray:
    """The obvious reference: compare every pair of rows."""
    return np.array([any(j != i and np.array_equal(X[i], X[j]) for j in among) for i in ids], dtype=bool)


@pytest.mark.parametrize("seed", range(5))
def test_has_twin_matches_the_pairwise_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(60, 3)).astype(float)
    ids = rng.choice(60, size=20, replace=False)
    among = rng.choice(60, size=30, replace=False)
    keys = row_keys(X)
    assert np.array_equal(has_twin(keys, ids, among), _has_twin_slow(X, ids, among))


def test_row_keys_are_equal_exactly_for_equal_rows() -> None:
    X = np.array([[1.0, 2.0], [1.0, 2.5], [1.0, 2.0], [0.0, 0.0]])
    keys = row_keys(X)
    assert keys[0] == keys[2]
    assert len({keys[0], keys[1], keys[3]}) == 3
    assert row_keys(np.empty((0, 2))).size == 0


def test_a_record_is_not_its_own_twin_and_counts_follow_where_twins_are() -> None:
    X = np.array([[0.0], [0.0], [1.0], [2.0], [2.0], [3.0]])
    keys = row_keys(X)
    d, population = np.array([0, 1, 2, 3]), np.array([4, 5])
    counts = count_twins(keys, d, population, audited=np.array([0, 3]))
    assert counts.in_d == 2  # records 0 and 1 are each other's twin
    assert counts.in_population == 1  # record 3's twin is 4
    assert counts.audited_in_population == 1
    assert "2 record(s) of D have an exact twin" in counts.sentence()
    assert twins_of(keys, 3, np.arange(6)).tolist() == [4]
    assert not has_twin(keys, np.array([2]), np.array([2])).any()


def test_twin_note_names_where_the_twin_is() -> None:
    twins = {"audited_with_population_twin": [7], "audited_with_twin_in_d": [7, 9]}
    assert twin_note(twins, 7) is not None and "population" in twin_note(twins, 7)  # type: ignore[operator]
    assert "in D" in (twin_note(twins, 9) or "") and "population" not in (twin_note(twins, 9) or "")
    assert twin_note(twins, 8) is None
    assert twin_note(None, 7) is None


def _table_with_twins(path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 400
    table = pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue", "green", "grey"], n),
            "size": rng.choice(["S", "M", "L"], n),
            "weight": np.round(rng.normal(70.0, 12.0, n), 4),
        }
    )
    table = pd.concat([table, table.iloc[:15]], ignore_index=True)  # 15 rows repeated once
    out = path / "twins.csv"
    table.to_csv(out, index=False)
    return out


def test_drop_duplicate_rows_keeps_one_copy(tmp_path: Path) -> None:
    data = load_dataset(_table_with_twins(tmp_path))
    dropped, n = drop_duplicate_rows(data)
    assert n == 15
    assert len(dropped.table) == len(data.table) - 15
    assert not dropped.table.duplicated().any()
    assert dropped.fingerprint != data.fingerprint
    assert drop_duplicate_rows(dropped)[1] == 0


def _run(tmp_path: Path, *extra: str) -> RunFolder:
    out = tmp_path / "runs"
    args = [
        "run", "--data", str(_table_with_twins(tmp_path)), "--generator", "baynet", "--targets", "4",
        "--n-shadow", "10", "--n-eval", "10", "--workers", "1", "--quiet", "--out", str(out),
        "--i-know-its-large", *extra,
    ]  # fmt: skip
    assert main(args) == 0
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return RunFolder(run_dir)


def test_a_run_counts_twins_and_the_report_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _run(tmp_path)
    twins = folder.summary()["twins"]
    # 15 rows repeated: each pair lies in D, in the holdout, or across both.
    assert twins["in_d"] + twins["in_population"] > 0
    assert twins["in_d"] % 2 == 0  # twins inside D come in pairs
    capsys.readouterr()
    assert main(["report", str(folder.path)]) == 0
    assert "exact twins" in capsys.readouterr().out


def test_drop_duplicates_leaves_no_twin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _run(tmp_path, "--drop-duplicates")
    twins = folder.summary()["twins"]
    assert twins["in_d"] == 0 and twins["in_population"] == 0
    assert len(folder.load_table()) == 400
