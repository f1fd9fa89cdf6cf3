"""The split of a table into the auxiliary data, the evaluation pool and the target dataset.

Following the paper, the rows are split into two disjoint parts: the auxiliary data ``D_aux``
(the attacker's knowledge, from which shadow datasets are drawn) and the evaluation pool
``D_eval``. The target dataset ``D`` (the data the release was generated from) is drawn from
``D_eval``; the rest of ``D_eval`` are the reference records that the model-seeded game swaps in
for a target record, and the traditional game draws its datasets from ``D_eval`` without the
target record.

A split is a pure function of ``(n_rows, sizes, seed)``.

The *release* set-up (:func:`release_split`) maps the same parts onto a data owner's release: D
is the data the release is trained on, and D_aux and the reference records come from a holdout
of the owner's table that is never released, or from a second table (the population).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from numbers import Integral
from typing import Any

import numpy as np

from privgame.core.errors import ParameterError, SizeError
from privgame.core.seeding import Role, stream

__all__ = [
    "MIN_ROWS",
    "Sizes",
    "Split",
    "check_sizes",
    "default_aux_rows",
    "default_sizes",
    "holdout_rows",
    "release_split",
    "split_indices",
]

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
        problems.append(f"the target dataset D has {t:,} record(s); it needs at least 2.")
    if a < t:
        problems.append(
            f"the attacker's data ({a:,} rows) is smaller than the target dataset D ({t:,} rows): "
            f"the attacker's shadow datasets of |D| rows are drawn from it; give it at least {t:,} rows."
        )
    if e <= t:
        problems.append(
            f"the evaluation pool ({e:,} rows) is not larger than the target dataset D ({t:,} rows): "
            f"D is drawn from the pool and at least one reference record must remain outside D; "
            f"give the pool at least {t + 1:,} rows."
        )
    if a + e > n_rows:
        problems.append(
            f"the attacker's data and the evaluation pool ({a + e:,} rows together) are more than "
            f"the table's {n_rows:,} rows: they share no row; choose sizes that add up to at most "
            f"{n_rows:,}."
        )
    if problems:
        raise SizeError(
            f"The sizes (attacker's data {a:,}, evaluation pool {e:,}, D {t:,} rows) do not fit a "
            f"table of {n_rows:,} rows; "
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


def holdout_rows(n_rows: int, holdout: float | int) -> int:
    """The number of rows a holdout of ``holdout`` takes from a table of ``n_rows`` rows.

    Parameters
    ----------
    n_rows : int
        Rows of the owner's (prepared) table.
    holdout : float or int
        A fraction strictly between 0 and 1 (rounded to the nearest row), or a whole number of
        rows (at least :data:`MIN_POPULATION_ROWS`).

    Raises
    ------
    SizeError
        When the holdout leaves fewer than 2 rows for D or has fewer than 2 rows itself.
    ParameterError
        When ``holdout`` is neither a fraction in (0, 1) nor a whole number of rows.
    """
    if isinstance(holdout, bool):
        raise ParameterError(f"--holdout must be a fraction in (0, 1) or a number of rows; got {holdout!r}.")
    if isinstance(holdout, Integral) or (
        isinstance(holdout, float) and holdout >= 1 and holdout.is_integer()
    ):
        rows = int(holdout)
    elif isinstance(holdout, float) and 0.0 < holdout < 1.0:
        rows = round(n_rows * holdout)
    else:
        raise ParameterError(
            f"--holdout must be a fraction strictly between 0 and 1 (e.g. 0.3) or a whole number of "
            f"rows (e.g. 5000); got {holdout!r}."
        )
    if rows < MIN_POPULATION_ROWS or n_rows - rows < 2:
        raise SizeError(
            f"A holdout of {rows:,} rows from a table of {n_rows:,} rows does not work: the holdout "
            f"needs at least {MIN_POPULATION_ROWS} rows (at least {MIN_ATTACKER_ROWS} for the "
            f"attacker's data D_aux and {MIN_REFERENCE_ROWS} reference records) and the released data "
            f"D at least 2; choose a holdout between {MIN_POPULATION_ROWS} rows and "
            f"{max(n_rows - 2, MIN_POPULATION_ROWS):,} rows, or give a population table."
        )
    return rows


MIN_ATTACKER_ROWS = 20
"""The fewest rows of the population the attacker may know (D_aux). With fewer, every shadow
dataset repeats a handful of rows and the attack learns how its shadows were drawn, not the
record: a run that answered "not at risk" for every record of a 2-row holdout taught us this."""

MIN_REFERENCE_ROWS = 10
"""The fewest reference records (the population rows that take an audited record's place in D):
with fewer, a model-seeded 'out' run measures one or two particular records, not the population."""

MIN_POPULATION_ROWS = MIN_ATTACKER_ROWS + MIN_REFERENCE_ROWS
"""The fewest rows a holdout or a population table may have (30)."""


def default_aux_rows(population_rows: int) -> int:
    """Rows of the population given to the attacker (D_aux): two thirds, as in the paper.

    The rest are the reference records (the model-seeded 'out' records and, with D, the
    traditional game's pool). Adult's 30,000 / 15,222 split is the paper's ratio.
    """
    return min(max(1, (2 * population_rows) // 3), population_rows - 1)


def release_split(
    n_data: int, population_rows: int, *, aux: int, seed: int, separate_population: bool
) -> Split:
    """The release set-up's split: D, D_aux and the reference records.

    With ``separate_population`` the run's table holds the owner's ``n_data`` rows first and the
    population's ``population_rows`` rows after them: D is every row of the owner's table, and a
    permutation of the population (from ``stream(seed, Role.SPLIT)``) gives D_aux (its first
    ``aux`` rows) and the reference records (the rest). Otherwise the table has ``n_data`` rows,
    and one permutation of them gives the holdout (its first ``population_rows`` rows, never
    released) and D (the rest); the holdout's first ``aux`` rows are D_aux, the rest the
    reference records. D_eval is D plus the reference records.

    Parameters
    ----------
    n_data : int
        Rows of the owner's table.
    population_rows : int
        Rows of the holdout, or of the population table.
    aux : int
        Rows of the population that go to D_aux: at least :data:`MIN_ATTACKER_ROWS`, leaving at
        least :data:`MIN_REFERENCE_ROWS` reference records.
    seed : int
        The run's root seed.
    separate_population : bool
        Whether the population is a second table (stored after the owner's rows).

    Raises
    ------
    SizeError
        When the parts do not fit.
    """
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ParameterError(f"The seed must be a non-negative whole number, got {seed!r}.")
    problems = []
    target_rows = n_data if separate_population else n_data - population_rows
    if target_rows < 2:
        problems.append(f"the released data D has {target_rows:,} rows; it needs at least 2.")
    if population_rows < MIN_POPULATION_ROWS:
        problems.append(
            f"the population has {population_rows:,} rows; it needs at least {MIN_POPULATION_ROWS} (at "
            f"least {MIN_ATTACKER_ROWS} for the attacker's data D_aux and {MIN_REFERENCE_ROWS} reference "
            "records): hold back more rows, or give a larger population table."
        )
    elif not MIN_ATTACKER_ROWS <= aux <= population_rows - MIN_REFERENCE_ROWS:
        problems.append(
            f"D_aux = {aux:,} rows of a population of {population_rows:,}: the attacker's data needs "
            f"at least {MIN_ATTACKER_ROWS} rows and at least {MIN_REFERENCE_ROWS} reference records "
            f"must remain; choose {MIN_ATTACKER_ROWS} <= aux <= {population_rows - MIN_REFERENCE_ROWS:,}."
        )
    if problems:
        raise SizeError("The release set-up does not fit the data.", problems)
    order = stream(int(seed), Role.SPLIT).permutation(n_data if not separate_population else population_rows)
    if separate_population:
        target = np.arange(n_data)
        population = order + n_data
    else:
        population, target = order[:population_rows], order[population_rows:]
    reference = population[aux:]
    return Split(
        aux=_frozen(population[:aux]),
        eval=_frozen(np.concatenate([target, reference])),
        target=_frozen(target),
        reference=_frozen(reference),
    )
