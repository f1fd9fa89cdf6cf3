"""Fuzzing the loader and the schema inference with hypothesis.

Whatever the bytes, :func:`privgame.data.load_table` returns a table or raises a
:class:`~privgame.core.errors.DataError`, and :func:`privgame.data.inspect_dataset` (loader, schema
inference, validation, missing-value policy) returns an inspection or raises one; a table without
problems encodes for the generators. Nothing else may escape (no TypeError, no pyarrow error, no
csv.Error, no UnicodeError).
"""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from privgame.core.errors import DataError
from privgame.data import encode, fingerprint_table, inspect_dataset, load_table
from privgame.data.dataset import Inspection

FUZZ = settings(
    max_examples=200,
    deadline=5000,  # milliseconds: generous for inputs of a few kB on a shared machine
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
NAMES = st.sampled_from([None, "upload.csv", "upload.parquet", "upload.csv.gz", "upload.txt"])
MAGIC = st.sampled_from([b"", b"PAR1", b"\x1f\x8b\x08\x00", b"\xef\xbb\xbf", b"\xff\xfe", b"PK\x03\x04"])
CHARACTERS = st.sampled_from(
    [
        *"ab zé€1.-+e=@",
        *(",", ";", "\t", "|", '"', "'", "\n", "\r", "\r\n"),
        *("\x00", "\x85", "\u2028", "\ufeff", "?", "NA"),
    ]
)


def _check_table(table: pd.DataFrame) -> None:
    """What every table the loader returns must satisfy."""
    assert isinstance(table, pd.DataFrame)
    assert table.shape[1] >= 1
    names = list(table.columns)
    assert all(isinstance(n, str) for n in names)
    assert len(set(names)) == len(names)
    for name in names:
        kind = table[name].dtype
        assert (
            pd.api.types.is_numeric_dtype(kind)
            or pd.api.types.is_bool_dtype(kind)
            or isinstance(kind, pd.StringDtype)
            or pd.api.types.is_object_dtype(kind)
        ), (name, kind)


def _inspect(content: bytes, filename: str | None) -> Inspection | None:
    """The inspection of ``content``, or None when the loader refused it with a DataError."""
    try:
        found = inspect_dataset(content, filename=filename)
    except DataError as error:
        assert error.problems or error.summary
        event("refused")
        return None
    event("inspected, with problems" if found.problems else "inspected, ready for an audit")
    _check_table(found.table)
    assert [c.name for c in found.schema.columns] == list(found.table.columns)
    fingerprint_table(found.prepared.table)
    if not found.problems:
        X = encode(found.prepared.table, found.prepared.schema)
        assert X.shape[0] == len(found.prepared.table)
    return found


@FUZZ
@given(magic=MAGIC, body=st.binary(max_size=2048), filename=NAMES)
def test_random_bytes_give_a_table_or_a_data_error(magic: bytes, body: bytes, filename: str | None) -> None:
    content = magic + body
    try:
        table = load_table(content, filename=filename)
    except DataError:
        event("refused")
        return
    event("table")
    _check_table(table)


BENIGN = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.3g}"),
    st.sampled_from(["x", "y", "Zürich", "a b", "?", "", "NA", "True"]),
)


@st.composite
def csv_like(draw: st.DrawFn) -> bytes:
    """Rows of cells, mostly plain and sometimes hostile, joined by a random delimiter, in a
    random encoding, maybe gzipped; sometimes a header, sometimes ragged."""
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    width = draw(st.integers(1, 6))
    hostile = st.lists(CHARACTERS, max_size=6).map("".join)
    cell = st.sampled_from([BENIGN, BENIGN, BENIGN, hostile]).flatmap(lambda kind: kind)
    ragged = draw(st.booleans()) and draw(st.booleans())
    low, high = (max(1, width - 1), width + 1) if ragged else (width, width)
    rows = draw(st.lists(st.lists(cell, min_size=low, max_size=high), min_size=1, max_size=40))
    if draw(st.booleans()):
        rows.insert(0, [f"col{j}" for j in range(width)])
    text = "\n".join(delimiter.join(row) for row in rows)
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "latin-1", "utf-16"]))
    content = text.encode(encoding, errors="replace")
    if draw(st.booleans()):
        content = gzip.compress(content)
    return content


@FUZZ
@given(content=csv_like(), filename=NAMES)
def test_csv_like_text_gives_an_inspection_or_a_data_error(content: bytes, filename: str | None) -> None:
    _inspect(content, filename)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    """Small tables whose columns are numbers, text, booleans or missing, in any mixture."""
    n = draw(st.integers(1, 60))
    columns: dict[str, object] = {}
    for j in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["int", "float", "text", "bool", "codes", "empty"]))
        if kind == "int":
            values: object = draw(st.lists(st.integers(-(2**62), 2**62), min_size=n, max_size=n))
        elif kind == "float":
            values = draw(
                st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=n, max_size=n)
            )
        elif kind == "text":
            values = draw(st.lists(st.one_of(st.none(), st.text(max_size=8)), min_size=n, max_size=n))
        elif kind == "bool":
            values = draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n))
        elif kind == "codes":
            values = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
        else:
            values = [None] * n
        name = draw(st.one_of(st.text(min_size=1, max_size=6), st.just(f"c{j}")))
        columns[name] = values
    return pd.DataFrame(columns)


@FUZZ
@given(frame=frames())
def test_any_small_table_as_csv_gives_an_inspection_or_a_data_error(frame: pd.DataFrame) -> None:
    _inspect(frame.to_csv(index=False).encode(), "table.csv")


@FUZZ
@given(frame=frames(), flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=3))
def test_any_small_table_as_parquet_even_damaged_gives_an_inspection_or_a_data_error(
    frame: pd.DataFrame, flips: list[tuple[float, int]]
) -> None:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    content = bytearray(buffer.getvalue())
    for where, value in flips:
        content[int(where * (len(content) - 1))] = value
    _inspect(bytes(content), "table.parquet")


def test_the_fuzzers_reach_both_outcomes() -> None:
    """A fuzzer that only ever saw refusals would prove nothing about the tables it accepts."""
    outcomes = set()
    for content in (b"a,b\n1,x\n2,y\n", b"\x00\x01", np.arange(3).tobytes()):
        try:
            load_table(content, filename="t.csv")
            outcomes.add("table")
        except DataError:
            outcomes.add("error")
    assert outcomes == {"table", "error"}
