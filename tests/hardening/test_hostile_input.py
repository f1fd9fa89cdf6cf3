"""A corpus of hostile files: each ends in a typed error or a usable table, in bounded time and memory.

The files are written by the tests: decompression bombs, very wide headers, huge cells, NUL bytes,
mixed encodings, spreadsheet formulas, truncated and nested Parquet, Parquet bombs, JSON posing
as CSV, and paths that are not files. Every one goes through the loader, the schema inference
(:func:`privgame.data.inspect_dataset`) and the command line (``privgame schema``), which must
answer with exit status 0 or 2 and never a traceback.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import gzip
import io
import os
import re
import subprocess
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _hardening import REPO, cli_command

from privgame.cli.main import main
from privgame.core.errors import DataError
from privgame.data import encode, inspect_dataset, load_dataset, load_table
from privgame.games.preflight import create_run
from privgame.settings.run_spec import RunSpec

MIB = 1024 * 1024


def _parquet(table: pa.Table, **options: object) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **options)  # type: ignore[arg-type]
    return buffer.getvalue()


def _gzip_bomb(block: bytes, copies: int) -> bytes:
    """``copies`` gzip members of ``block``: a small file that expands to ``copies * len(block)``."""
    return gzip.compress(block, compresslevel=9) * copies


def _measure(call: Callable[[], object]) -> tuple[object, float, int]:
    """``call()``'s result (or the exception it raised), its seconds and its peak traced bytes."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result: object = call()
    except Exception as error:
        result = error
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, seconds, peak


def _n_rows(n: int) -> dict[str, pa.Array]:
    """Two plain columns of ``n`` rows to go with a hostile one."""
    return {"b": pa.array(np.arange(n) % 3), "c": pa.array(np.linspace(0.0, 1.0, n))}


# ---- refused files: name -> (content, message) ------------------------------------------------


@functools.cache
def _good_parquet() -> bytes:
    return _parquet(pa.table({"a": pa.array(np.arange(200)), **_n_rows(200)}))


_WIDE = ",".join(f"c{i}" for i in range(5000))


def _bad_utf8_parquet() -> bytes:
    """A Parquet file whose text column was damaged on disk (Arrow does not check UTF-8 on read)."""
    content = bytearray(_parquet(pa.table({"a": ["0000é"] * 30, **_n_rows(30)})))
    content[content.find("é".encode())] = 0xFF
    return bytes(content)


# name -> (a function that makes the file's content, the message it must be refused with)
REFUSED: dict[str, tuple[Callable[[], bytes], str]] = {
    "bomb-zeros.csv.gz": (
        lambda: _gzip_bomb(bytes(MIB), 1024),  # 1 GiB of zeros in about 1 MB
        r"decompressed, bomb-zeros.csv.gz is a binary file \(it contains NUL bytes\)",
    ),
    "bomb-text.csv.gz": (
        lambda: _gzip_bomb(b"a,b\n" + b"1,2\n" * (MIB // 4), 1024),  # 1 GiB of CSV text in about 1 MB
        r"decompresses to more than 200.0 MiB, over the size limit",
    ),
    "wide.csv": (
        lambda: f"{_WIDE}\n{_WIDE}\n".encode(),
        r"has 5,000 columns, over the limit of 1,000",
    ),
    "huge-cell.csv": (
        lambda: b"a,b\n" + b"x" * (5 * MIB) + b",1\n2,3\n",
        r"line 2: a value is longer than 131,072 characters",
    ),
    "one-line.csv": (lambda: b"a" * (20 * MIB), r"line 1: a value is longer than 131,072 characters"),
    "nul-early.csv": (lambda: b"a,b\n1,\x00\n", r"binary file \(it contains NUL bytes\)"),
    "nul-late.csv": (
        lambda: b"a,b\n" + b"1,2\n" * 30_000 + b"3,\x004\n",
        r"line 30002 of nul-late.csv contains a NUL",
    ),
    "utf16-no-bom.csv": (
        lambda: "a,b\n1,2\n3,4\n".encode("utf-16-le"),
        r"UTF-16 text without a byte-order mark",
    ),
    "json-array.csv": (lambda: b'[{"a": 1, "b": 2}, {"a": 3, "b": 4}]\n', r"looks like JSON, not CSV"),
    "json-lines.csv": (lambda: b'{"a": 1, "b": 2}\n{"a": 3, "b": 4}\n', r"looks like JSON, not CSV"),
    "only-delimiters.csv": (lambda: b",,,\n,,,\n", r"has no named columns with values"),
    "truncated.parquet": (
        lambda: _good_parquet()[: len(_good_parquet()) // 2],
        r"not a readable Parquet file",
    ),
    "magic-only.parquet": (lambda: b"PAR1", r"not a readable Parquet file"),
    "footer-cut.parquet": (lambda: _good_parquet()[:-3], r"not a readable Parquet file"),
    "garbage-footer.parquet": (
        lambda: b"PAR1" + bytes(range(256)) * 4 + b"\x10\x00\x00\x00PAR1",
        r"not a readable",
    ),
    "nested-list.parquet": (
        lambda: _parquet(pa.table({"a": pa.array([[1, 2], [3]] * 100), **_n_rows(200)})),
        r"column 'a' holds lists or records \(list<",
    ),
    "struct.parquet": (
        lambda: _parquet(pa.table({"a": pa.array([{"x": 1}, {"x": 2}] * 100), **_n_rows(200)})),
        r"column 'a' holds lists or records \(struct<",
    ),
    "map.parquet": (
        lambda: _parquet(
            pa.table(
                {"a": pa.array([[("k", 1)]] * 200, type=pa.map_(pa.string(), pa.int64())), **_n_rows(200)}
            )
        ),
        r"column 'a' holds lists or records \(map<",
    ),
    "dictionary-bomb.parquet": (
        # One 100 kB string referenced by 3,000 rows: under 1 kB on disk, 300 MB once read.
        lambda: _parquet(
            pa.table(
                {
                    "a": pa.DictionaryArray.from_arrays(
                        pa.array(np.zeros(3000, dtype=np.int32)), pa.array(["x" * 100_000])
                    ),
                    **_n_rows(3000),
                }
            ),
            compression="zstd",
        ),
        r"the text values of dictionary-bomb.parquet add up to more than 200.0 MiB",
    ),
    "run-length-bomb.parquet": (
        # 30 million equal values: about 100 kB on disk, 240 MB once read.
        lambda: _parquet(pa.table({"a": pa.array(np.zeros(30_000_000, dtype=np.int8))}), compression="zstd"),
        r"holds 30,000,000 rows of 1 column, about 228.9 MiB once read",
    ),
    "bad-utf8.parquet": (
        _bad_utf8_parquet,
        r"column 'a' of bad-utf8.parquet holds text that is not valid UTF-8",
    ),
    "duplicate-names.parquet": (
        lambda: _parquet(pa.table([pa.array([1, 2] * 50), pa.array([3, 4] * 50)], names=["a", "a"])),
        r"column name 'a' appears more than once",
    ),
}


@functools.cache
def content_of(name: str) -> bytes:
    return REFUSED[name][0]()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name in REFUSED:
        (folder / name).write_bytes(content_of(name))
    return folder


def test_the_bombs_are_small_files() -> None:
    for name in (
        "bomb-zeros.csv.gz",
        "bomb-text.csv.gz",
        "dictionary-bomb.parquet",
        "run-length-bomb.parquet",
    ):
        assert len(content_of(name)) < 2 * MIB, name


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_each_hostile_file_is_refused_with_its_own_message(corpus: Path, name: str) -> None:
    message = REFUSED[name][1]
    result, seconds, _ = _measure(lambda: load_table(corpus / name))
    assert isinstance(result, DataError), f"{name}: {result!r}"
    assert re.search(message, str(result)), str(result)
    assert len(result.problems) >= 1
    assert seconds < 10, f"{name} took {seconds:.1f} s"
    with pytest.raises(DataError, match=message):
        inspect_dataset(corpus / name)


def test_a_gzip_bomb_of_zeros_is_refused_at_its_first_megabyte() -> None:
    content = content_of("bomb-zeros.csv.gz")
    result, seconds, peak = _measure(lambda: load_table(content, filename="bomb.csv.gz"))
    assert isinstance(result, DataError)
    assert seconds < 2
    assert peak < 16 * MIB, f"peak {peak / MIB:.0f} MiB for a 1 GiB bomb"


def test_a_gzip_bomb_of_text_expands_no_further_than_the_limit() -> None:
    content = content_of("bomb-text.csv.gz")
    result, _, peak = _measure(lambda: load_table(content, filename="bomb.csv.gz", max_bytes=16 * MIB))
    assert isinstance(result, DataError) and "more than 16.0 MiB" in str(result)
    assert peak < 3 * 16 * MIB, f"peak {peak / MIB:.0f} MiB"
    result, _, peak = _measure(lambda: load_table(content, filename="bomb.csv.gz"))
    assert isinstance(result, DataError)
    assert peak < 1.5 * 200 * MIB, f"peak {peak / MIB:.0f} MiB under the 200 MiB limit"


def test_parquet_bombs_are_refused_before_they_are_read() -> None:
    for name in ("dictionary-bomb.parquet", "run-length-bomb.parquet"):
        content = content_of(name)
        allocated = pa.total_allocated_bytes()
        result, seconds, peak = _measure(lambda c=content, n=name: load_table(c, filename=n))
        assert isinstance(result, DataError), name
        assert seconds < 5 and peak < 16 * MIB, (name, seconds, peak)
        assert pa.total_allocated_bytes() - allocated < 16 * MIB


def test_a_long_single_line_costs_a_bounded_multiple_of_its_size() -> None:
    content = content_of("one-line.csv")
    result, _, peak = _measure(lambda: load_table(content, filename="one-line.csv"))
    assert isinstance(result, DataError)
    assert peak < 12 * len(content), f"peak {peak / MIB:.0f} MiB for {len(content) / MIB:.0f} MiB"


def test_the_column_limit_can_be_chosen() -> None:
    header = ",".join(f"c{i}" for i in range(20))
    content = f"{header}\n{header.replace('c', '')}\n".encode()
    with pytest.raises(DataError, match=r"has 20 columns, over the limit of 10"):
        load_table(content, filename="t.csv", max_columns=10)
    assert load_table(content, filename="t.csv", max_columns=20).shape == (1, 20)
    wide = _parquet(pa.table({f"c{i}": pa.array([i, i + 1]) for i in range(20)}))
    with pytest.raises(DataError, match=r"has 20 columns, over the limit of 10"):
        load_table(wide, filename="t.parquet", max_columns=10)


# ---- files that are read: the table must be one an audit can use -----------------------------


def test_mixed_utf8_and_windows_1252_lines_are_both_read() -> None:
    content = "city,n\nZürich,1\n".encode() + "Montréal,2\n".encode("cp1252") + b"Paris,3\n"
    table = load_table(content, filename="mixed.csv")
    assert table["city"].tolist() == ["Zürich", "Montréal", "Paris"]


def test_a_gzipped_utf16_file_is_text_not_a_binary_bomb() -> None:
    content = gzip.compress("a,b\nx,1\ny,2\n".encode("utf-16"))
    assert load_table(content, filename="t.csv.gz")["a"].tolist() == ["x", "y"]


def test_spreadsheet_formulas_are_kept_as_inert_text() -> None:
    content = b'a,b\n=1+2,-3\n"=HYPERLINK(""http://x"",""y"")",4\n@SUM(A1),5\n+cmd,6\n'
    table = load_table(content, filename="formulas.csv")
    assert table["a"].tolist() == ["=1+2", '=HYPERLINK("http://x","y")', "@SUM(A1)", "+cmd"]
    assert table["b"].tolist() == [-3, 4, 5, 6]


def test_whole_numbers_beyond_64_bits_stay_text_and_can_be_stored(tmp_path: Path) -> None:
    rows = "".join(f"{10**25 + i % 7},{i % 3},{i * 0.5}\n" for i in range(400))
    content = f"code,group,x\n{rows}".encode()
    table = load_table(content, filename="bigints.csv")
    assert table["code"].iloc[0] == str(10**25)
    _stores(content, "bigints.csv", tmp_path)


def _exotic_parquet(n: int = 400) -> bytes:
    days = [datetime.date(2020, 1, 1 + i % 28) for i in range(n)]
    return _parquet(
        pa.table(
            {
                "price": pa.array(
                    [decimal.Decimal("1.50"), decimal.Decimal("2.25"), None, decimal.Decimal("7")] * (n // 4)
                ),
                "raw": pa.array([b"ab", b"\xff\xfe", None, b"zz"] * (n // 4), type=pa.binary()),
                "day": pa.array(days),
                "stamp": pa.array(
                    [datetime.datetime(2020, 1, 1, i % 24) for i in range(n)],
                    type=pa.timestamp("us", tz="UTC"),
                ),
                "wait": pa.array([datetime.timedelta(seconds=i % 9) for i in range(n)]),
                "clock": pa.array([datetime.time(1, i % 60) for i in range(n)]),
                "flag": pa.array([True, None, False, True] * (n // 4)),
                "half": pa.array(np.linspace(0, 1, n).astype(np.float16)),
                "big": pa.array([2**64 - 1 - i % 5 for i in range(n)], type=pa.uint64()),
                **_n_rows(n),
            }
        )
    )


def test_exotic_parquet_types_become_numbers_and_text(tmp_path: Path) -> None:
    table = load_table(_exotic_parquet(), filename="exotic.parquet")
    assert table["price"].dtype == np.float64 and table["price"].iloc[1] == 2.25
    assert table["price"].isna().sum() == 100
    for name in ("raw", "day", "stamp", "wait", "clock"):
        assert isinstance(table[name].dtype, pd.StringDtype), name
    assert table["day"].iloc[0] == "2020-01-01"
    assert table["raw"].iloc[1] == "\ufffd\ufffd"
    assert table["wait"].nunique() == 9
    _stores(_exotic_parquet(), "exotic.parquet", tmp_path)


def test_a_parquet_index_is_kept_as_a_column() -> None:
    frame = pd.DataFrame({"x": [1, 2, 3] * 10}, index=pd.Index(range(100, 130), name="person"))
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    table = load_table(buffer.getvalue(), filename="indexed.parquet")
    assert list(table.columns) == ["person", "x"]
    assert isinstance(table.index, pd.RangeIndex)


def _stores(content: bytes, name: str, tmp_path: Path) -> None:
    """The file goes all the way: loaded, typed, prepared, checked by a fit on D and written into a
    run folder."""
    dataset = load_dataset(content, filename=name)
    third = len(dataset.table) // 3
    spec = RunSpec(
        data_name=name,
        data_fingerprint=dataset.fingerprint,
        schema=dataset.schema.to_dict(),
        sizes={"aux": third, "eval": third, "target": third // 2},
        generator="marginals",
    ).validate()
    folder = create_run(tmp_path / "runs", spec, dataset.table)
    assert folder.spec() == spec
    assert len(folder.load_table()) == len(dataset.table)


# ---- paths that are not files ------------------------------------------------------------------


def test_a_fifo_or_a_device_is_refused_at_once_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # no writer will ever come: opening it the usual way would block for ever
    for path, name in ((fifo, "pipe.csv"), (Path("/dev/zero"), "zero")):
        if not path.exists():
            continue
        started = time.perf_counter()
        with pytest.raises(DataError, match=rf"{name} is not a regular file"):
            load_table(path)
        assert time.perf_counter() - started < 1


# ---- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_cli_answers_every_hostile_file_with_status_2(
    corpus: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", str(corpus / name)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"privgame: {name} cannot be")
    assert "Traceback" not in err


def test_the_cli_reads_the_odd_but_valid_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "exotic.parquet"
    path.write_bytes(_exotic_parquet())
    assert main(["schema", str(path), "--json"]) == 0
    assert '"name": "price"' in capsys.readouterr().out


def test_a_refused_parquet_file_never_aborts_the_process_at_exit(corpus: Path) -> None:
    """Arrow reader threads once released a Python-owned buffer during interpreter shutdown,
    aborting about one run in ten with status 134 instead of 2; four processes run at once."""
    processes = [
        subprocess.Popen(
            cli_command("schema", str(corpus / "dictionary-bomb.parquet")),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    codes = [p.wait(timeout=120) for p in processes]
    for p in processes:
        assert p.stderr is not None
        assert b"terminate called" not in p.stderr.read()
        p.stderr.close()
    assert codes == [2] * 4


@pytest.mark.parametrize("big", [2**53 + 1, 2**63 - 1])
def test_an_integer_code_without_a_float_of_its_own_encodes(big: int) -> None:
    """2**53 + 1 has no float of its own (it rounds to 2**53): a whole-number column holding it
    is a categorical one whose categories must be matched exactly (found by the fuzzer)."""
    frame = pd.DataFrame({"c0": [0] * 11 + [1], "c1": [0] * 11 + [big]})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    found = inspect_dataset(buffer.getvalue(), filename="table.parquet")
    X = encode(found.prepared.table, found.prepared.schema)
    assert X.shape == (12, 2) and sorted(set(X[:, 1])) == [0.0, 1.0]
