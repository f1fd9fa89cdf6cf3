"""Every game's datasets contain or omit the target exactly as Algorithm 1 defines them."""

from __future__ import annotations

import numpy as np
import pytest

from privgame.core.seeding import stream
from privgame.games import plan

AUX = np.arange(0, 300)
EVAL = np.arange(300, 500)
TARGET = EVAL[::4][:40]  # D, |D| = 40, inside D_eval
REFERENCE = np.setdiff1d(EVAL, TARGET)
N = len(TARGET)


@pytest.mark.parametrize("i", range(20))
def test_shadow_datasets_come_from_aux_and_hold_x_exactly_when_in(i: int) -> None:
    x = int(TARGET[i % N])
    rows = plan.shadow_in_rows(stream(1, i), AUX, x, N)
    assert len(rows) == N and len(set(rows.tolist())) == N
    assert (rows == x).sum() == 1
    assert np.isin(rows[rows != x], AUX).all()
    out = plan.shadow_out_rows(stream(2, i), AUX, N)
    assert len(out) == N and len(set(out.tolist())) == N
    assert np.isin(out, AUX).all() and x not in out


@pytest.mark.parametrize("i", range(20))
def test_model_seeded_datasets_are_d_or_d_with_x_swapped_for_a_reference(i: int) -> None:
    x = int(TARGET[i % N])
    assert np.array_equal(plan.ms_in_rows(TARGET), TARGET)
    rows, ref = plan.ms_out_rows(stream(3, i), TARGET, REFERENCE, x)
    assert len(rows) == N
    assert x not in rows
    assert ref in REFERENCE and ref not in TARGET
    assert np.array_equal(np.sort(rows), np.sort(np.append(np.setdiff1d(TARGET, [x]), ref)))


def test_reference_records_are_drawn_uniformly_from_the_pool_outside_d() -> None:
    x = int(TARGET[0])
    refs = [plan.ms_out_rows(stream(4, i), TARGET, REFERENCE, x)[1] for i in range(3000)]
    assert set(refs) <= set(REFERENCE.tolist())
    counts = np.bincount(np.searchsorted(REFERENCE, refs), minlength=len(REFERENCE))
    # 3000 draws over 160 records: every record expected ~19 times; none should be absent.
    assert counts.min() > 0


@pytest.mark.parametrize("i", range(20))
def test_traditional_datasets_come_from_d_eval_with_x_only_when_in(i: int) -> None:
    x = int(TARGET[i % N])
    rows = plan.t_in_rows(stream(5, i), EVAL, x, N)
    assert len(rows) == N and len(set(rows.tolist())) == N
    assert (rows == x).sum() == 1 and np.isin(rows, EVAL).all()
    out = plan.t_out_rows(stream(6, i), EVAL, x, N)
    assert len(out) == N and len(set(out.tolist())) == N
    assert x not in out and np.isin(out, EVAL).all()


def test_traditional_datasets_vary_from_run_to_run() -> None:
    x = int(TARGET[0])
    a = plan.t_out_rows(stream(7, 0), EVAL, x, N)
    b = plan.t_out_rows(stream(7, 1), EVAL, x, N)
    assert set(a.tolist()) != set(b.tolist())


def test_fit_count_shares_what_the_games_allow() -> None:
    count = plan.count_fits(20, 200, 200, deterministic_fit=True)
    assert count.shared_fits == 100 + 1
    assert count.fits_per_target == 100 + 100 + 200
    assert count.total_fits == 101 + 20 * 400
    assert "8,101 generator fits" in count.describe()
    assert plan.count_fits(1, 10, 20, deterministic_fit=False).shared_fits == 5 + 10
