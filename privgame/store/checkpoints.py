"""How a run's checkpoints are named and encoded: shared synthetic datasets column by column in
their narrowest exact dtype, and one file per target, attack, pool part and screen chunk."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from privgame.core.errors import RunError

__all__ = [
    "SyntheticTables",
    "attack_name",
    "datasets_from",
    "pool_name",
    "screen_name",
    "shared_arrays",
    "shared_name",
    "tables_from",
    "target_name",
]

# Narrower dtypes a column of shared datasets is stored in when it holds them exactly, in order
# of preference (integer types are tried only on whole numbers within their range).
_INTEGER_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.int32)


def _narrowest(column: np.ndarray) -> np.ndarray:
    """``column`` (float64) in the narrowest dtype that casts back to it bit for bit."""
    if column.size == 0:
        return column
    negative_zero = bool(np.any(np.signbit(column) & (column == 0)))
    if not negative_zero and bool(np.all(np.floor(column) == column)):
        low, high = float(column.min()), float(column.max())
        for dtype in _INTEGER_DTYPES:
            info = np.iinfo(dtype)
            if info.min <= low and high <= info.max:
                return column.astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = column.astype(np.float32)
    if np.array_equal(narrow.astype(np.float64).view(np.uint64), column.view(np.uint64)):
        return narrow
    return column


def shared_arrays(datasets: np.ndarray) -> dict[str, np.ndarray]:
    """Synthetic datasets ``(m, n, d)`` as one array per column, each in its narrowest exact dtype.

    Encoded tables are mostly small whole numbers (category codes, ages, counts): stored as float64
    they took 8 bytes a cell, about 760 MB for the 200 shared datasets of a 31,655-row release
    audit; column by column, Adult's take 18% of that. :func:`datasets_from` restores
    the float64 array bit for bit.
    """
    tables = SyntheticTables.of(datasets)
    arrays = {"shape": np.array(tables.shape, dtype=np.int64)}
    arrays.update({f"column_{j}": column for j, column in enumerate(tables.columns)})
    return arrays


def datasets_from(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The float64 datasets of a shared checkpoint (column by column, or one array as of old)."""
    if "datasets" in arrays:
        return np.asarray(arrays["datasets"], dtype=np.float64)
    return np.asarray(tables_from([arrays]))


@dataclass(frozen=True, eq=False)
class SyntheticTables(Sequence[np.ndarray]):
    """Synthetic tables ``(m, n, d)`` held column by column in their narrowest exact dtype.

    A sequence of float64 tables: ``tables[i]`` is table ``i`` as an ``(n, d)`` float64 array, made
    when it is asked for, and ``tables[a:b]`` is another :class:`SyntheticTables` sharing these
    columns. The run's shared datasets are read by every target on every worker: held as float64
    they took 1.9 GB for the 500 shared shadow datasets of a 31,655-row release audit, in the
    engine and again in the memory maps the workers read; column by column, Adult's take 18% of
    that, and a worker decodes one table at a time.

    Parameters
    ----------
    columns : tuple of ndarray, each of shape (m, n)
        Column ``j`` of every table, in any dtype that casts to float64 exactly.
    """

    columns: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        shapes = {np.shape(c) for c in self.columns}
        if not self.columns or len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise ValueError(f"SyntheticTables needs one or more (m, n) columns of one shape, got {shapes}")

    @classmethod
    def of(cls, datasets: np.ndarray | SyntheticTables) -> SyntheticTables:
        """``datasets`` (an ``(m, n, d)`` array) column by column, each in its narrowest exact dtype."""
        if isinstance(datasets, SyntheticTables):
            return datasets
        datasets = np.asarray(datasets, dtype=np.float64)
        if datasets.ndim != 3:
            raise ValueError(f"Synthetic tables are an (m, n, d) array, got shape {datasets.shape}")
        d = datasets.shape[2]
        return cls(tuple(_narrowest(np.ascontiguousarray(datasets[:, :, j])) for j in range(d)))

    @property
    def shape(self) -> tuple[int, int, int]:
        m, n = self.columns[0].shape
        return int(m), int(n), len(self.columns)

    @property
    def nbytes(self) -> int:
        return sum(int(c.nbytes) for c in self.columns)

    def __len__(self) -> int:
        return int(self.columns[0].shape[0])

    @overload
    def __getitem__(self, index: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, index: slice) -> SyntheticTables: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return SyntheticTables(tuple(c[index] for c in self.columns))
        m, n, d = self.shape
        i = int(index)
        if not -m <= i < m:
            raise IndexError(f"table {i} of {m}")
        table = np.empty((n, d), dtype=np.float64)
        for j, column in enumerate(self.columns):
            table[:, j] = column[i]
        return table

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self[i]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = np.empty(self.shape, dtype=np.float64)
        for j, column in enumerate(self.columns):
            out[:, :, j] = column
        return out if dtype is None else out.astype(dtype, copy=False)


def tables_from(chunks: Iterable[Mapping[str, np.ndarray]]) -> SyntheticTables:
    """The tables of consecutive shared checkpoints, joined column by column without widening a
    column more than its chunks need (numpy's promotion of their dtypes, which is exact)."""
    columns: list[list[np.ndarray]] = []
    for arrays in chunks:
        if "datasets" in arrays:  # a checkpoint as of old: one float64 array
            parts = list(SyntheticTables.of(np.asarray(arrays["datasets"])).columns)
        else:
            d = int(arrays["shape"][2])
            parts = [np.asarray(arrays[f"column_{j}"]) for j in range(d)]
        if not columns:
            columns = [[] for _ in parts]
        if len(parts) != len(columns):
            raise RunError(f"Shared checkpoints of {len(columns)} and {len(parts)} columns cannot be joined.")
        for kept, part in zip(columns, parts, strict=True):
            kept.append(part)
    if not columns:
        raise RunError("There are no shared checkpoints to join.")
    joined = []
    while columns:
        parts = columns.pop(0)
        joined.append(parts[0] if len(parts) == 1 else np.concatenate(parts))
    return SyntheticTables(tuple(joined))


def safe_role(role: str) -> str:
    if not re.fullmatch(r"[a-z_]{1,32}", role):
        raise RunError(f"{role!r} is not a role of shared datasets (e.g. 'shadow_out', 'ms_in').")
    return role


def shared_name(role: str, start: int) -> str:
    return f"shared/{safe_role(role)}-{int(start):06d}.npz"


def target_name(record_id: int) -> str:
    return f"targets/{int(record_id):09d}.npz"


def attack_name(record_id: int) -> str:
    return f"attacks/{int(record_id):09d}.npz"


def screen_name(start: int) -> str:
    return f"screen/{int(start):06d}.npz"


def pool_name(name: str) -> str:
    if not re.fullmatch(r"[a-z0-9_\-]{1,80}", name):
        raise RunError(f"{name!r} is not a name of a pool checkpoint (letters, digits, '_' and '-').")
    return f"pool/{name}.npz"
