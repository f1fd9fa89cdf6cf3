"""Read a table from a CSV or Parquet file, a path or uploaded bytes.

CSV files are sniffed: gzip compression (by its magic bytes), the text encoding (UTF-8 with or
without a byte-order mark, UTF-16 with one, else Windows-1252 / Latin-1), the delimiter (comma,
semicolon, tab or pipe) and the quote character. String cells are stripped of surrounding spaces
and the usual missing markers (:data:`MISSING_MARKERS`) become missing, so Adult-style ``" ?"``
is missing. A CSV column whose non-missing cells are all numbers becomes numeric.

Every problem with the file itself (empty, binary, too large, no header, duplicate column names,
ragged rows) is collected and raised together as one :class:`~privgame.errors.DataError`.
Problems with the table's content are the job of :mod:`privgame.data.validation`.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from privgame.errors import DataError

__all__ = ["DEFAULT_MAX_BYTES", "MISSING_MARKERS", "load_table"]

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
MISSING_MARKERS: tuple[str, ...] = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")

_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_CHARS = 64 * 1024
_SNIFF_LINES = 200
_HEADER_SAMPLE_ROWS = 1000
_RAGGED_SHOWN = 5
_GZIP_CHUNK = 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_BINARY_MAGIC: dict[bytes, str] = {
    b"PK\x03\x04": "a ZIP archive (an Excel .xlsx workbook?)",
    b"\xd0\xcf\x11\xe0": "an old Excel/Office document",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"BZh": "a bzip2 archive",
    b"\xfd7zXZ": "an xz archive",
    b"7z\xbc\xaf": "a 7-Zip archive",
    b"SQLite format 3": "an SQLite database",
}
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_DECIMAL_COMMA = re.compile(r"[+-]?(\d+(,\d*)?|,\d+)")


def load_table(
    source: str | os.PathLike[str] | bytes,
    *,
    filename: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> pd.DataFrame:
    """Read a CSV (optionally gzip-compressed) or Parquet table.

    Parameters
    ----------
    source : str, path-like or bytes
        A path to the file, or the file's bytes (an upload).
    filename : str, optional
        The file's name, used in messages and as a hint for the format when ``source`` is bytes.
    max_bytes : int, default 200 MiB
        The largest file accepted; for a gzip file, also the largest decompressed size, which is
        read in bounded chunks so that a decompression bomb is refused early.

    Returns
    -------
    DataFrame
        One column per header field, string columns stripped, missing markers as missing,
        all-numeric CSV columns as ``int64`` or ``float64``.

    Raises
    ------
    DataError
        Listing every problem with the file: too large, binary or unreadable, empty, no header,
        duplicate column names, ragged rows (with their line numbers).
    OSError
        When ``source`` is a path that cannot be opened.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        name = filename or "the uploaded file"
    else:
        path = Path(source)
        name = filename or path.name
        size = path.stat().st_size
        if size > max_bytes:
            raise DataError(f"{name} cannot be read.", [_too_large(name, size, max_bytes)])
        data = path.read_bytes()
    if len(data) > max_bytes:
        raise DataError(f"{name} cannot be read.", [_too_large(name, len(data), max_bytes)])
    if data.startswith(_GZIP_MAGIC):
        data = _gunzip(data, name, max_bytes)
    if data.startswith(_PARQUET_MAGIC):
        return _read_parquet(data, name)
    if name.lower().endswith((".parquet", ".pq")):
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is named like a Parquet file but is not one; export it again as Parquet or CSV."],
        )
    return _read_csv(data, name)


def _too_large(name: str, size: int, max_bytes: int) -> str:
    return (
        f"{name} is {_mib(size)}, over the limit of {_mib(max_bytes)}; use a sample of the table "
        "or raise the size limit (max_bytes)."
    )


def _mib(n_bytes: int) -> str:
    return f"{n_bytes / (1024 * 1024):.1f} MiB"


def _gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """Decompress in bounded chunks, refusing output larger than ``max_bytes``."""
    chunks: list[bytes] = []
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while chunk := stream.read(_GZIP_CHUNK):
                total += len(chunk)
                if total > max_bytes:
                    raise DataError(
                        f"{name} cannot be read.",
                        [
                            f"{name} decompresses to more than {_mib(max_bytes)}, over the size "
                            "limit; use a sample of the table or raise the size limit (max_bytes)."
                        ],
                    )
                chunks.append(chunk)
    except (OSError, EOFError, zlib.error) as error:
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is not a valid gzip file ({error}); compress it again or upload the plain CSV."],
        ) from error
    return b"".join(chunks)


def _binary_problem(data: bytes, name: str) -> str | None:
    for magic, kind in _BINARY_MAGIC.items():
        if data.startswith(magic):
            return (
                f"{name} looks like {kind}, not a CSV or Parquet table; export the table as CSV or Parquet."
            )
    if b"\x00" in data[:_SNIFF_CHARS]:
        return (
            f"{name} is a binary file (it contains NUL bytes), not a text CSV or Parquet table; "
            "export the table as CSV (UTF-8) or Parquet."
        )
    return None


def _decode(data: bytes, name: str) -> str:
    """Decode text: BOM first, then strict UTF-8, then Windows-1252, then Latin-1."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    problem = _binary_problem(data, name)
    if problem:
        raise DataError(f"{name} cannot be read.", [problem])
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _looks_unreadable(text: str) -> bool:
    sample = text[:_SNIFF_CHARS]
    if not sample:
        return False
    control = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f") or 0x7F <= ord(ch) < 0xA0)
    return control > 0.01 * len(sample)


def _sniff(text: str) -> tuple[str, str]:
    """Pick the delimiter and quote character from the first lines of ``text``.

    A candidate delimiter scores by whether the header has the most common field count, by the
    share of lines with that count, then by the count itself; one field everywhere scores last.
    """
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # a cut last line would look ragged
    lines = [line for line in sample.splitlines() if line.strip()][:_SNIFF_LINES]
    if not lines:
        return ",", '"'
    best: tuple[tuple[bool, float, int], str] | None = None
    for delimiter in _DELIMITERS:
        try:
            counts = [len(r) for r in csv.reader(lines, delimiter=delimiter, quotechar='"')]
        except csv.Error:
            continue
        if not counts:
            continue
        values, freq = np.unique(np.asarray(counts), return_counts=True)
        mode = int(values[np.argmax(freq)])
        if mode < 2:
            continue
        score = (counts[0] == mode, float(freq.max()) / len(counts), mode)
        if best is None or score > best[0]:
            best = (score, delimiter)
    delimiter = best[1] if best else ","
    d = re.escape(delimiter)
    starts = {q: len(re.findall(rf"(?:^|{d})\s*{q}", sample, flags=re.MULTILINE)) for q in "\"'"}
    quotechar = "'" if starts["'"] > starts['"'] else '"'
    return delimiter, quotechar


@dataclass
class _Scan:
    """What one pass of the csv module learns about a file's structure."""

    header: list[str] | None = None
    header_start: int = 1
    header_end: int = 0
    n_rows: int = 0
    width: int = 0
    max_width: int = 0
    ragged: list[tuple[int, int, int]] = field(default_factory=list)
    n_ragged: int = 0
    sample: list[list[str]] = field(default_factory=list)
    error: str | None = None


def _scan(text: str, delimiter: str, quotechar: str) -> _Scan:
    scan = _Scan()
    # Universal newlines, so that old Mac files (lines ending in a bare \r) split into lines too.
    lines = io.StringIO(text, newline=None)
    reader = csv.reader(lines, delimiter=delimiter, quotechar=quotechar)
    previous_line = 0
    last: tuple[int, list[str]] | None = None
    try:
        for record in reader:
            start, previous_line = previous_line + 1, reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue  # a blank line, which the parser skips too
            if scan.header is None:
                scan.header, scan.width, scan.max_width = record, len(record), len(record)
                scan.header_start, scan.header_end = start, reader.line_num
                continue
            scan.n_rows += 1
            last = (start, record)
            if len(record) > scan.width and not any(v.strip() for v in record[scan.width :]):
                # Empty fields after the last column: a delimiter ending the line, not a value.
                scan.max_width = max(scan.max_width, len(record))
            elif len(record) != scan.width:
                scan.n_ragged += 1
                if len(scan.ragged) < _RAGGED_SHOWN:
                    scan.ragged.append((start, reader.line_num, len(record)))
            if len(scan.sample) < _HEADER_SAMPLE_ROWS:
                scan.sample.append(record)
    except csv.Error as error:
        scan.error = (
            f"line {previous_line + 1}: the file cannot be split into fields ({error}); a quote "
            f"{quotechar} is probably left open there: close it or remove it."
        )
        return scan
    # Only a quote still open at the end of the file leaves a line break at the end of a value.
    if last is not None and last[1][-1].endswith(("\n", "\r")):
        scan.error = (
            f"line {last[0]}: a quote {quotechar} opened there is never closed, so the rest of the "
            "file reads as one value; close it or remove it."
        )
    return scan


def _header_problems(header: list[str], line: int, sample: list[list[str]]) -> list[str]:
    names = [h.strip() for h in header]
    problems: list[str] = []
    data_like = []
    for j, name in enumerate(names):
        if not name:
            continue
        column_values = {row[j].strip() for row in sample if j < len(row)}
        if _is_number(name) or name in column_values:
            data_like.append(name)
    if len(names) > 1 and len(data_like) * 2 >= len(names):
        shown = ", ".join(repr(v) for v in data_like[:4])
        problems.append(
            f"line {line} looks like data, not a header of column names ({shown} look like "
            "values); add a first line naming each column."
        )
        return problems  # duplicate 'names' would only repeat the same problem
    positions: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        if name:
            positions.setdefault(name, []).append(j + 1)
    for name, where in positions.items():
        if len(where) > 1:
            problems.append(
                f"column name {name!r} appears {len(where)} times in the header (columns "
                f"{', '.join(map(str, where))}); give every column a unique name."
            )
    return problems


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _ragged_problem(scan: _Scan, delimiter: str) -> str:
    parts = []
    for start, end, count in scan.ragged:
        part = f"line {start} has {count}"
        if end > start:
            part += f" (a quote opened there runs on to line {end}: close it or remove it)"
        parts.append(part)
    shown = ", ".join(parts)
    more = f" and {scan.n_ragged - len(scan.ragged)} more" if scan.n_ragged > len(scan.ragged) else ""
    lines = "1 line does" if scan.n_ragged == 1 else f"{scan.n_ragged} lines do"
    return (
        f"ragged rows: {lines} not have the header's {scan.width} fields "
        f"({shown}{more}); fix those lines, or quote the values that contain the delimiter "
        f"({_DELIMITER_NAMES[delimiter]} {delimiter!r})."
    )


def _read_csv(data: bytes, name: str) -> pd.DataFrame:
    text = _decode(data, name)
    if _looks_unreadable(text):
        raise DataError(
            f"{name} cannot be read.",
            [
                f"{name} is unreadable as text (it is full of control characters); export the "
                "table as CSV (UTF-8) or Parquet."
            ],
        )
    if not text.strip():
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is empty; choose a CSV file with a header line and at least one data row."],
        )
    delimiter, quotechar = _sniff(text)
    scan = _scan(text, delimiter, quotechar)
    problems: list[str] = []
    if scan.error:
        problems.append(scan.error)
    elif scan.n_rows == 0:
        problems.append(f"{name} has a header line but no data rows; add the data rows below the header.")
    header = scan.header or []
    if scan.n_rows:
        problems.extend(_header_problems(header, scan.header_start, scan.sample))
    if scan.n_ragged:
        problems.append(_ragged_problem(scan, delimiter))
    if problems:
        raise DataError(f"{name} cannot be read as a table.", problems)
    try:
        table = _parse(text, delimiter, quotechar, scan)
    except (pd.errors.ParserError, ValueError) as error:  # the scan should have caught it first
        raise DataError(
            f"{name} cannot be read as a table.",
            [f"{name} cannot be parsed as CSV ({error}); check its quoting and delimiters."],
        ) from error
    columns: dict[str, pd.Series] = {}
    for j, raw_name in enumerate(header):
        values = _clean_strings(table[j])
        col_name = raw_name.strip()
        if not col_name:
            if values.isna().all():
                continue  # an unnamed empty column: a delimiter at the end of every line
            col_name = f"Unnamed: {j}"
        columns[col_name] = _to_numeric_if_possible(values, decimal_comma=delimiter != ",")
    return pd.DataFrame(columns)


def _parse(text: str, delimiter: str, quotechar: str, scan: _Scan) -> pd.DataFrame:
    """Read every field as text with pandas' C parser, in the dialect of the scan."""
    return pd.read_csv(
        io.StringIO(text),
        sep=delimiter,
        quotechar=quotechar,
        header=None,
        skiprows=scan.header_end,
        names=list(range(scan.max_width)),
        dtype=str,
        keep_default_na=False,
        na_filter=False,
        index_col=False,
        skip_blank_lines=True,
        engine="c",
    )


def _clean_strings(values: pd.Series) -> pd.Series:
    """Strip surrounding spaces and turn missing markers into missing values."""
    stripped = values.str.strip()
    return stripped.mask(stripped.isin(MISSING_MARKERS))


def _to_numeric_if_possible(values: pd.Series, *, decimal_comma: bool) -> pd.Series:
    # Checking the distinct values first keeps text columns cheap: most fail on the first value.
    uniques = pd.Series(values.dropna().unique(), dtype=str)
    if uniques.empty:
        return values
    if pd.to_numeric(uniques, errors="coerce").notna().all():
        return pd.to_numeric(values)
    if (
        decimal_comma
        and uniques.str.contains(",", regex=False).any()
        and uniques.str.fullmatch(_DECIMAL_COMMA).all()
    ):
        return pd.to_numeric(values.str.replace(",", ".", regex=False))
    return values


def _read_parquet(data: bytes, name: str) -> pd.DataFrame:
    try:
        table = pd.read_parquet(io.BytesIO(data))
    except Exception as error:  # pyarrow raises several unrelated types for a corrupt file
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is not a readable Parquet file ({error}); export it again as Parquet or CSV."],
        ) from error
    problems: list[str] = []
    names = [str(c).strip() for c in table.columns]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    for dup in duplicated:
        problems.append(f"column name {dup!r} appears more than once; give every column a unique name.")
    if table.shape[1] == 0:
        problems.append(f"{name} has no columns; export the table again with its columns.")
    elif len(table) == 0:
        problems.append(f"{name} has no rows; export the table again with its data rows.")
    if problems:
        raise DataError(f"{name} cannot be read as a table.", problems)
    table.columns = names
    for col in table.columns:
        values = table[col]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(values.cat.categories.dtype)
        if isinstance(values.dtype, pd.StringDtype) or (
            values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) == "string"
        ):
            values = _clean_strings(values.astype(str))
        table[col] = values
    return table
