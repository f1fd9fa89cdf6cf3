"""The split of a table into the auxiliary data, the evaluation pool and the target dataset.

Following the paper, the rows are split into two disjoint parts: the auxiliary data ``D_aux``
(the attacker's knowledge, from which shadow datasets are drawn) and the evaluation pool
``D_eval``. The target dataset ``D`` (the data the release was generated from) is drawn from
``D_eval``; the rest of ``D_eval`` are the reference records that the model-seeded game swaps in
for a target record, and the traditional game draws its datasets from ``D_eval`` without the
target record.

A split is a pure function of ``(n_rows, sizes, seed)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from numbers import Integral
from typing import Any

import numpy as np

from privgame.errors import ParameterError, SizeError
from privgame.seeding import Role, stream

__all__ = ["MIN_ROWS", "Sizes", "Split", "check_sizes", "default_sizes", "split_indices"]

_MAX_TARGET = 1000
_ROUND_AUX_FROM = 10_000


@dataclass(frozen=True)
class Sizes:
    """How many records go to each part of the split.

    Attributes
    ----------
    aux : int
        ``|D_aux|``, the auxiliary data.
    eval : int
        ``|D_eval|``, the evaluation pool (disjoint from ``D_aux``).
    target : int
        ``|D|``, the target dataset, drawn from ``D_eval``.
    """

    aux: int
    eval: int
    target: int

    def __post_init__(self) -> None:
        problems = []
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, Integral):
                problems.append(f"size {f.name!r} must be a whole number, got {value!r}.")
            else:
                object.__setattr__(self, f.name, int(value))
        if problems:
            raise ParameterError("The sizes are not whole numbers.", problems)

    def to_dict(self) -> dict[str, int]:
        """``{"aux": ..., "eval": ..., "target": ...}``."""
        return {"aux": self.aux, "eval": self.eval, "target": self.target}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sizes:
        """Rebuild sizes from :meth:`to_dict` output.

        Raises
        ------
        ParameterError
            When a key is missing or unknown, or a value is not a whole number.
        """
        expected = {"aux", "eval", "target"}
        problems = [f"size {k!r} is missing; give it a whole number." for k in sorted(expected - set(data))]
        problems += [
            f"{k!r} is not a size; use only {sorted(expected)}."
            for k in sorted(set(data) - expected, key=str)
        ]
        if problems:
            raise ParameterError("The sizes cannot be read.", problems)
        return cls(aux=data["aux"], eval=data["eval"], target=data["target"])


def _default(n_rows: int) -> Sizes:
    aux = (2 * n_rows) // 3
    if aux >= _ROUND_AUX_FROM:
        aux -= aux % 1000
    eval_ = n_rows - aux
    return Sizes(aux=aux, eval=eval_, target=max(2, min(_MAX_TARGET, eval_ // 4)))


def _smallest_default_table() -> int:
    n = 1
    while True:
        s = _default(n)
        if s.aux >= s.target and s.eval - s.target >= s.target:
            return n
        n += 1


MIN_ROWS: int = _smallest_default_table()
"""The fewest rows for which :func:`default_sizes` works (10)."""


def default_sizes(n_rows: int) -> Sizes:
    """The default sizes for a table of ``n_rows`` rows.

    The rule: ``D_aux`` takes two thirds of the rows (rounded down, and rounded down to a
    multiple of 1,000 once that is 10,000 or more), ``D_eval`` the rest, and the target dataset
    ``D`` a quarter of ``D_eval`` capped at 1,000 records and at least 2. A quarter leaves at
    least as many reference records (``D_eval`` without ``D``) as ``D`` has records, so the
    model-seeded game always has records to swap in and the traditional game's datasets of
    ``|D|`` records from ``D_eval`` without the target record are not mostly ``D`` again.
    Adult's 45,222 rows give ``aux=30000, eval=15222, target=1000``, the paper's sizes.

    Raises
    ------
    SizeError
        When the table has fewer than :data:`MIN_ROWS` rows.
    """
    if n_rows < MIN_ROWS:
        raise SizeError(
            f"The table has {n_rows:,} usable rows; an audit needs at least {MIN_ROWS}: two "
            "thirds for the auxiliary data D_aux, the rest for the evaluation pool D_eval, which "
            "holds a target dataset D of at least 2 records and at least as many reference records."
        )
    return _default(n_rows)


def _rows_needed(sizes: Sizes) -> int:
    target = max(sizes.target, 2)
    return max(sizes.aux, target) + max(sizes.eval, target + 1)


def check_sizes(n_rows: int, sizes: Sizes) -> None:
    """Check that ``sizes`` fit a table of ``n_rows`` rows.

    The constraints: ``target >= 2``; ``aux >= target`` (shadow datasets of ``|D|`` records
    are drawn from ``D_aux``); ``eval > target`` (``D`` is drawn from ``D_eval`` and at least
    one reference record must remain); ``aux + eval <= n_rows`` (the two are disjoint).

    Raises
    ------
    SizeError
        Listing every violated constraint, and saying how many rows the sizes need.
    """
    a, e, t = sizes.aux, sizes.eval, sizes.target
    problems: list[str] = []
    if t < 2:
        problems.append(f"target = {t:,}: the target dataset D needs at least 2 records; choose target >= 2.")
    if a < t:
        problems.append(
            f"aux = {a:,} is smaller than target = {t:,}: shadow datasets of |D| records are drawn "
            f"from D_aux; choose aux >= {t:,}."
        )
    if e <= t:
        problems.append(
            f"eval = {e:,} is not larger than target = {t:,}: D is drawn from D_eval and at least "
            f"one reference record must remain outside D; choose eval >= {t + 1:,}."
        )
    if a + e > n_rows:
        problems.append(
            f"aux + eval = {a + e:,} is more than the table's {n_rows:,} rows: D_aux and D_eval "
            f"are disjoint; choose sizes with aux + eval <= {n_rows:,}."
        )
    if problems:
        raise SizeError(
            f"The sizes aux={a:,}, eval={e:,}, target={t:,} do not fit a table of {n_rows:,} rows; "
            f"they need at least {_rows_needed(sizes):,} rows.",
            problems,
        )


@dataclass(frozen=True, eq=False)
class Split:
    """Row indices of each part of a split, sorted, as read-only ``int64`` arrays.

    Attributes
    ----------
    aux : ndarray
        ``D_aux``.
    eval : ndarray
        ``D_eval``, disjoint from ``aux``.
    target : ndarray
        ``D``, a subset of ``eval``.
    reference : ndarray
        ``D_eval`` without ``D``: the reference records.
    """

    aux: np.ndarray
    eval: np.ndarray
    target: np.ndarray
    reference: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Split):
            return NotImplemented
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))


def _frozen(indices: np.ndarray) -> np.ndarray:
    out = np.sort(indices).astype(np.int64, copy=False)
    out.flags.writeable = False
    return out


def split_indices(n_rows: int, sizes: Sizes, seed: int) -> Split:
    """Split ``range(n_rows)`` into ``D_aux``, ``D_eval`` and ``D``.

    One permutation of the rows, drawn from ``stream(seed, Role.SPLIT)``: its first ``aux``
    entries are ``D_aux``, the next ``eval`` are ``D_eval``, whose first ``target`` are ``D``.

    Parameters
    ----------
    n_rows : int
        Rows in the (prepared) table.
    sizes : Sizes
        Checked with :func:`check_sizes`.
    seed : int
        The run's root seed (non-negative).

    Returns
    -------
    Split

    Raises
    ------
    SizeError
        When the sizes do not fit ``n_rows``.
    ParameterError
        When the seed is not a non-negative whole number.
    """
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ParameterError(f"The seed must be a non-negative whole number, got {seed!r}.")
    check_sizes(n_rows, sizes)
    order = stream(int(seed), Role.SPLIT).permutation(n_rows)
    a, e, t = sizes.aux, sizes.eval, sizes.target
    return Split(
        aux=_frozen(order[:a]),
        eval=_frozen(order[a : a + e]),
        target=_frozen(order[a : a + t]),
        reference=_frozen(order[a + t : a + e]),
    )
