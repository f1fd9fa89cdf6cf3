"""The exact-values attack's every-record statistic (the screen's ``values``): the fast count
against a slow, obvious one, and the signal it is there for."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.attack import ATTACKS
from privgame.attack import values as values_module
from privgame.attack.screening import STATISTICS, ScreenCells
from privgame.attack.values import ExactValueCounts
from privgame.core.errors import ParameterError


def reference_value_counts(records: np.ndarray, synthetic: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """For each record, summed over the columns (j, j) and pairs (j, k): synthetic rows equal to it
    on both, over the square of the records of D that are."""
    out = np.zeros(len(records))
    for i, record in enumerate(records):
        for j, k in pairs:
            in_d = ((records[:, j] == record[j]) & (records[:, k] == record[k])).sum()
            in_table = ((synthetic[:, j] == record[j]) & (synthetic[:, k] == record[k])).sum()
            out[i] += in_table / in_d**2
    return out


def _tables(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, d = 120, 5
    records = rng.integers(0, 4, size=(n, d)).astype(float)
    records[:, 3] = rng.normal(size=n).round(1)  # continuous, with ties
    records[:, 4] = rng.integers(0, 60, size=n)  # nearly an identifier
    records[:3, 0] = -0.0  # -0.0 is 0.0, as == has it
    synthetic = np.concatenate([records[rng.integers(0, n, size=70)], rng.integers(0, 5, size=(50, d))])
    synthetic[:5, 3] = 99.0  # values D does not hold match no record
    return records, synthetic, np.array([True, True, True, False, False])


@pytest.mark.parametrize("seed", range(5))
def test_the_fast_count_equals_the_reference(seed: int) -> None:
    records, synthetic, mask = _tables(seed)
    counts = ExactValueCounts.of(records, mask)
    assert counts.pairs.shape == (15, 2)  # 5 columns and 10 pairs
    got = counts.statistics(synthetic)
    assert got.shape == (1, len(records)) and got.dtype == np.float32
    np.testing.assert_allclose(got[0], reference_value_counts(records, synthetic, counts.pairs), rtol=1e-5)


def test_past_the_entry_cap_the_columns_and_most_identifying_pairs_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records, synthetic, mask = _tables(7)
    monkeypatch.setattr(values_module, "MAX_PAIR_ENTRIES", 8 * len(records))
    counts = ExactValueCounts.of(records, mask)
    assert len(counts.pairs) == 8
    kept = {tuple(p) for p in counts.pairs.tolist()}
    assert {(j, j) for j in range(5)} <= kept
    kept -= {(j, j) for j in range(5)}
    distinct = {
        (j, k): len({(a, b) for a, b in records[:, [j, k]]}) for j in range(5) for k in range(j + 1, 5)
    }
    assert min(distinct[p] for p in kept) >= max(distinct[p] for p in distinct if p not in kept)
    np.testing.assert_allclose(
        counts.statistics(synthetic)[0], reference_value_counts(records, synthetic, counts.pairs), rtol=1e-5
    )


def test_a_shared_rare_value_with_a_unique_pair_is_seen_by_the_value_count_only() -> None:
    # Every value of column 0 is held by exactly two records of D, which differ in column 1. With
    # the partner comes a row holding the target's column-1 value, so every single-value count is
    # the same in both tables: only the pair count can tell which of the two came back.
    n = 40
    records = np.stack([np.repeat(np.arange(n // 2), 2), np.arange(n) % 7, np.zeros(n)], axis=1).astype(float)
    mask = np.array([False, True, True])
    target, partner = 10, 11
    filler = np.stack([np.full(30, 1000.0), np.arange(30) % 7, np.zeros(30)], axis=1)
    with_target = np.concatenate([records[[target]], filler])
    decoy = [[1000.0, records[target, 1], 0.0]]
    with_partner = np.concatenate([records[[partner]], decoy, filler[1:]])
    with_target = np.concatenate([with_target[:1], [filler[0]], filler[1:]])
    value_counts = ExactValueCounts.of(records, mask)
    cells = ScreenCells.of(records, mask)
    rare = STATISTICS.index("rare")
    assert cells.statistics(with_target)[rare, target] == cells.statistics(with_partner)[rare, target]
    assert value_counts.statistics(with_target)[0, target] > value_counts.statistics(with_partner)[0, target]


def test_the_values_attack_offers_it_to_the_screen_and_tapas_offers_none() -> None:
    assert ATTACKS["values"].record_statistics is ExactValueCounts
    assert ATTACKS["tapas"].record_statistics is None


def test_bad_shapes_name_the_problem() -> None:
    with pytest.raises(ParameterError, match="n >= 1"):
        ExactValueCounts.of(np.zeros((0, 3)), np.array([True, True, True]))
    counts = ExactValueCounts.of(np.zeros((4, 3)), np.array([True, True, True]))
    with pytest.raises(ParameterError, match=r"shape \(m, 3\)"):
        counts.statistics(np.zeros((5, 2)))


@pytest.mark.parametrize("dense_keys", [0, 60, 1 << 23], ids=["all-sorted", "mixed", "all-dense"])
def test_dense_and_sorted_counts_give_the_same_bytes(
    dense_keys: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    records, synthetic, mask = _tables(11)
    counts = ExactValueCounts.of(records, mask)
    expected = reference_value_counts(records, synthetic, counts.pairs)
    monkeypatch.setattr(values_module, "DENSE_KEYS", dense_keys)
    got = counts.statistics(synthetic)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    monkeypatch.setattr(values_module, "DENSE_KEYS", 1 << 23)
    assert np.array_equal(got, counts.statistics(synthetic)[0])
