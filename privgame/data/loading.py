"""Read a table from a CSV or Parquet file, a path or uploaded bytes.

CSV files are sniffed: gzip compression (by its magic bytes), the text encoding (UTF-8 with or
without a byte-order mark, UTF-16 with one, else Windows-1252 / Latin-1), the delimiter (comma,
semicolon, tab or pipe) and the quote character. String cells are stripped of surrounding spaces
and the usual missing markers (:data:`MISSING_MARKERS`) become missing, so Adult-style ``" ?"``
is missing. A CSV column whose non-missing cells are all numbers becomes numeric; in a file not
separated by commas, numbers may have a decimal comma and thousands grouped by spaces
(``25 983,54``).

Every problem with the file itself (empty, binary, too large, no header, duplicate column names,
ragged rows) is collected and raised together as one :class:`~privgame.core.errors.DataError`.
Problems with the table's content are the job of :mod:`privgame.data.validation`.

Hostile files end in a :class:`~privgame.core.errors.DataError` or a table, in time and memory bounded
by the size limits, before anything is expanded: a gzip file is decompressed in bounded chunks (and
refused at its first chunk when that is binary), a Parquet file's rows, columns and decoded size
are checked from its metadata and dictionaries before its table is built, a path must be a regular
file and is read no further than the limit, and tables wider than ``max_columns`` are refused from
their header. Parquet columns are brought to the CSV vocabulary of numbers and text (decimals
become floats; dates, times, durations and raw bytes become text); nested columns are refused.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from privgame.core.errors import DataError
from privgame.core.jsonlimits import DEFAULT_MAX_DEPTH, nesting_depth

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_COLUMNS", "MISSING_MARKERS", "load_table"]

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_COLUMNS = 1000
MISSING_MARKERS: tuple[str, ...] = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")

_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_CHARS = 64 * 1024
_SNIFF_LINES = 200
_HEADER_SAMPLE_ROWS = 1000
_RAGGED_SHOWN = 5
_GZIP_CHUNK = 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
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
# With a decimal comma, thousands are grouped by a space (French: 25 983,54), a no-break space or
# a narrow no-break space; a dot would be ambiguous with a decimal point.
_GROUPED_DECIMAL_COMMA = re.compile(r"[+-]?\d{1,3}([ \u00a0\u202f]\d{3})+(,\d*)?")
_GROUP_SPACES = re.compile(r"[ \u00a0\u202f]")
# A valid multi-byte UTF-8 sequence: in a file that is not valid UTF-8 as a whole, its presence
# means the file may mix UTF-8 lines with lines in a one-byte encoding.
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")

_Bytes = bytes | bytearray


def load_table(
    source: str | os.PathLike[str] | bytes,
    *,
    filename: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_columns: int = DEFAULT_MAX_COLUMNS,
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
        read in bounded chunks so that a decompression bomb is refused early; for a Parquet
        file, also the size of its table once read (estimated before reading it).
    max_columns : int, default 1000
        The most columns a table may have (an audit of more is out of reach anyway).

    Returns
    -------
    DataFrame
        One column per header field, string columns stripped, missing markers as missing,
        all-numeric CSV columns as ``int64`` or ``float64``.

    Raises
    ------
    DataError
        Listing every problem with the file: too large or too wide, binary or unreadable, JSON
        rather than CSV, empty, no header, duplicate column names, ragged rows (with their line
        numbers), nested Parquet columns.
    OSError
        When ``source`` is a path that cannot be opened.
    """
    data: _Bytes
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        name = filename or "the uploaded file"
    else:
        path = Path(source)
        name = filename or path.name
        data = _read_path(path, name, max_bytes)
    if len(data) > max_bytes:
        raise DataError(f"{name} cannot be read.", [_too_large(name, len(data), max_bytes)])
    if data.startswith(_GZIP_MAGIC):
        data = _gunzip(data, name, max_bytes)
    if data.startswith(_PARQUET_MAGIC):
        return _read_parquet(data, name, max_bytes, max_columns)
    if name.lower().endswith((".parquet", ".pq")):
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is named like a Parquet file but is not one; export it again as Parquet or CSV."],
        )
    return _read_csv(data, name, max_columns)


def _read_path(path: Path, name: str, max_bytes: int) -> bytes:
    """The bytes of a regular file, read no further than ``max_bytes`` (+1 to see it is over).

    Opened without blocking, so that a FIFO is refused at once instead of waiting for a writer.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    mode = os.fstat(fd).st_mode  # before fdopen, which refuses a folder naming only the descriptor
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
        raise DataError(
            f"{name} cannot be read.",
            [f"{path} is not a regular file ({kind}); choose a CSV or Parquet file."],
        )
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise DataError(f"{name} cannot be read.", [_too_large(name, size, max_bytes)])
        return handle.read(max_bytes + 1)  # the file may grow while it is read


def _too_large(name: str, size: int, max_bytes: int) -> str:
    return (
        f"{name} is {_mib(size)}, over the limit of {_mib(max_bytes)}; use a sample of the table "
        "or raise the size limit (max_bytes)."
    )


def _mib(n_bytes: int) -> str:
    return f"{n_bytes / (1024 * 1024):.1f} MiB"


def _gunzip(data: _Bytes, name: str, max_bytes: int) -> bytearray:
    """Decompress in bounded chunks, refusing output larger than ``max_bytes``.

    The output grows in one buffer (no second copy), and a first chunk that is binary rather
    than a CSV or Parquet table (a bomb of zeros, say) is refused before any more is expanded.
    """
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while chunk := stream.read(_GZIP_CHUNK):
                if not out and not chunk.startswith((_PARQUET_MAGIC, *_UTF16_BOMS)):
                    problem = _binary_problem(chunk, name)
                    if problem:
                        raise DataError(f"{name} cannot be read.", [f"decompressed, {problem}"])
                if len(out) + len(chunk) > max_bytes:
                    raise DataError(
                        f"{name} cannot be read.",
                        [
                            f"{name} decompresses to more than {_mib(max_bytes)}, over the size "
                            "limit; use a sample of the table or raise the size limit (max_bytes)."
                        ],
                    )
                out += chunk
    except (OSError, EOFError, zlib.error) as error:
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is not a valid gzip file ({error}); compress it again or upload the plain CSV."],
        ) from error
    return out


def _binary_problem(data: _Bytes, name: str) -> str | None:
    for magic, kind in _BINARY_MAGIC.items():
        if data.startswith(magic):
            return (
                f"{name} looks like {kind}, not a CSV or Parquet table; export the table as CSV or Parquet."
            )
    head = bytes(data[:_SNIFF_CHARS])
    if b"\x00" in head:
        if _looks_like_utf16(head):
            return (
                f"{name} looks like UTF-16 text without a byte-order mark (every other byte is NUL); "
                "save it as CSV (UTF-8)."
            )
        return (
            f"{name} is a binary file (it contains NUL bytes), not a text CSV or Parquet table; "
            "export the table as CSV (UTF-8) or Parquet."
        )
    return None


def _looks_like_utf16(head: bytes) -> bool:
    even, odd = head[0::2], head[1::2]
    return len(head) >= 8 and any(
        half.count(0) == len(half) and other.count(0) == 0 for half, other in ((even, odd), (odd, even))
    )


def _late_nul_problem(data: _Bytes, name: str) -> str | None:
    """A NUL byte past the sniffed start: name its line (C parsers would cut the value there)."""
    position = data.find(b"\x00")
    if position < 0:
        return None
    line = data.count(b"\n", 0, position) + 1
    return (
        f"line {line} of {name} contains a NUL byte, which no text table holds; remove it, or "
        "export the table again as CSV (UTF-8) or Parquet."
    )


def _decode(data: _Bytes, name: str) -> str:
    """Decode text: BOM first, then strict UTF-8, then Windows-1252, then Latin-1.

    A file that is not valid UTF-8 but holds valid UTF-8 sequences may mix encodings (lines pasted
    from another file, say): it is decoded line by line, each line as UTF-8 when it is valid
    UTF-8, else as Windows-1252.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith(_UTF16_BOMS):
        return data.decode("utf-16", errors="replace")
    problem = _binary_problem(data, name) or _late_nul_problem(data, name)
    if problem:
        raise DataError(f"{name} cannot be read.", [problem])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if _UTF8_SEQUENCE.search(data):
        return "\n".join(_one_byte_unless_utf8(line) for line in data.split(b"\n"))
    return _one_byte_unless_utf8(data, utf8=False)


def _one_byte_unless_utf8(data: _Bytes, *, utf8: bool = True) -> str:
    """``data`` as UTF-8 if it is valid UTF-8, else as Windows-1252, else as Latin-1."""
    for encoding in ("utf-8", "cp1252") if utf8 else ("cp1252",):
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
        if "field larger than field limit" in str(error):
            scan.error = (
                f"line {previous_line + 1}: a value is longer than {csv.field_size_limit():,} "
                "characters, the most one cell may hold; shorten it or remove that column (or, if "
                f"a quote {quotechar} opened there is never closed, close it or remove it)."
            )
        else:
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


def _read_csv(data: _Bytes, name: str, max_columns: int) -> pd.DataFrame:
    text = _decode(data, name)
    del data  # the text is all that is needed from here on; let a large file's bytes go
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
    if _looks_like_json(text):
        raise DataError(
            f"{name} cannot be read.",
            [
                f"{name} looks like JSON, not CSV (it starts with {text.lstrip()[0]!r}); export the "
                "table as CSV or Parquet."
            ],
        )
    delimiter, quotechar = _sniff(text)
    scan = _scan(text, delimiter, quotechar)
    if scan.max_width > max_columns:
        raise DataError(
            f"{name} cannot be read as a table.",
            [
                f"{name} has {scan.max_width:,} columns, over the limit of {max_columns:,}; keep "
                "only the columns to audit, or raise the limit (max_columns)."
            ],
        )
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
    named = {h.strip() for h in header}
    for j, raw_name in enumerate(header):
        values = _clean_strings(table[j])
        col_name = raw_name.strip()
        if not col_name:
            if values.isna().all():
                continue  # an unnamed empty column: a delimiter at the end of every line
            col_name = _unnamed(j, named)
            named.add(col_name)
        columns[col_name] = _to_numeric_if_possible(values, decimal_comma=delimiter != ",")
    if not columns:
        raise DataError(
            f"{name} cannot be read as a table.",
            [f"{name} has no named columns with values; add a header line naming each column."],
        )
    return pd.DataFrame(columns)


def _unnamed(j: int, taken: set[str]) -> str:
    """A name for the unnamed column ``j`` (0-based) that no column of the header has.

    ``Unnamed: j`` as pandas names it, unless the header names a column so; then ``Unnamed: j
    (2)``, ``(3)``, ... so that the unnamed column never replaces a named one.
    """
    name, copy = f"Unnamed: {j}", 1
    while name in taken:
        copy += 1
        name = f"Unnamed: {j} ({copy})"
    return name


def _looks_like_json(text: str) -> bool:
    """A JSON document or JSON Lines: starts with '[' or '{' and ends with ']' or '}'."""
    head, tail = text.lstrip()[:1], text.rstrip()[-1:]
    if not (head in ("[", "{") and tail in ("]", "}")):
        return False
    first = text.lstrip()[:_SNIFF_CHARS].split("\n", 1)[0].strip()
    if first in ("[", "{") or first.startswith(("[{", '{"', "[[")):
        return True
    if nesting_depth(first) > DEFAULT_MAX_DEPTH:
        return True  # brackets nested that deep are no CSV header (and would exhaust json's recursion)
    try:
        json.loads(first)
    except ValueError:
        return False
    return True


def _parse(text: str, delimiter: str, quotechar: str, scan: _Scan) -> pd.DataFrame:
    """Read every field as text with pandas' C parser, in the dialect of the scan."""
    return pd.read_csv(
        io.StringIO(text),
        sep=delimiter,
        quotechar=quotechar,
        header=None,
        # Lines before the header are blank, one line each; the header is one record even when a
        # quoted name runs over several lines (the parser counts it as one, so its last line
        # number would skip data rows too).
        skiprows=scan.header_start,
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
        numbers = pd.to_numeric(values)
        # Whole numbers beyond 64 bits come back as Python ints, which no column type holds:
        # they stay text (they are codes or identifiers; as floats they would lose digits).
        return values if numbers.dtype == object else numbers
    if not decimal_comma:
        return values
    plain = uniques.str.fullmatch(_DECIMAL_COMMA)
    grouped = uniques.str.fullmatch(_GROUPED_DECIMAL_COMMA)
    if grouped.any() and (plain | grouped).all():
        ungrouped = values.str.replace(_GROUP_SPACES, "", regex=True)
        return pd.to_numeric(ungrouped.str.replace(",", ".", regex=False))
    if uniques.str.contains(",", regex=False).any() and plain.all():
        return pd.to_numeric(values.str.replace(",", ".", regex=False))
    return values


def _read_parquet(data: _Bytes, name: str, max_bytes: int, max_columns: int) -> pd.DataFrame:
    buffer = _arrow_owned(data)
    del data
    _check_parquet(buffer, name, max_bytes, max_columns)
    try:
        table = pd.read_parquet(pa.BufferReader(buffer))
    except Exception as error:  # pyarrow raises several unrelated types for a corrupt file
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is not a readable Parquet file ({error}); export it again as Parquet or CSV."],
        ) from error
    table = _index_as_columns(table, name)
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
        values = _plain_values(values)
        if isinstance(values.dtype, pd.StringDtype) or (
            values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) == "string"
        ):
            values = _clean_strings(values.astype(str))
        table[col] = values
    return table


def _index_as_columns(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """The table with the index pandas stored in the file brought back as columns of the data.

    A plain row number (a range index without a name) is dropped. Every other level becomes a
    column in front, named as pandas names it (its name, else ``index`` or ``level_<i>``),
    unless a column of the table already has that name: a level that holds the same values as
    that column is a copy of it (``df.set_index("age", drop=False)``) and is dropped, and so is
    an unnamed level; a named level that holds other values is refused, since either choice
    would lose data silently.

    Raises
    ------
    DataError
        For an index level named like a column but holding other values.
    """
    index = table.index
    if isinstance(index, pd.RangeIndex) and index.name is None:
        return table.reset_index(drop=True)
    taken = {str(c).strip() for c in table.columns}
    kept: dict[str, pd.Index] = {}
    problems: list[str] = []
    for i in range(index.nlevels):
        level = index.get_level_values(i)
        given = index.names[i]
        label = str(given).strip() if given is not None else ("index" if index.nlevels == 1 else f"level_{i}")
        if label in taken or label in kept:
            same = kept[label] if label in kept else _column_named(table, label)
            if given is not None and not pd.Index(level).equals(pd.Index(same)):
                problems.append(
                    f"the index {label!r} stored in {name} has the same name as a column but other "
                    "values; rename it, or save the table without its index "
                    "(df.to_parquet(path, index=False))."
                )
            continue  # a copy of a column: nothing is lost by dropping it
        kept[label] = level
    if problems:
        raise DataError(f"{name} cannot be read as a table.", problems)
    table = table.reset_index(drop=True)
    front = pd.DataFrame({label: np.asarray(level) for label, level in kept.items()}, index=table.index)
    return pd.concat([front, table], axis=1) if kept else table


def _column_named(table: pd.DataFrame, label: str) -> pd.Series:
    """The first column whose name, stripped, is ``label``."""
    for j, column in enumerate(table.columns):
        if str(column).strip() == label:
            return table.iloc[:, j]
    raise KeyError(label)


def _arrow_owned(data: _Bytes) -> pa.Buffer:
    """A copy of ``data`` in memory that Arrow owns.

    Arrow's reader threads may drop the last reference to the buffer they read from; a buffer
    of a Python object then needs the GIL, which a thread cannot take while the interpreter
    exits, and the process aborts (seen with ``python -m privgame schema`` on a refused file).
    """
    buffer = pa.allocate_buffer(len(data))
    np.frombuffer(buffer, dtype=np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)
    return buffer


def _check_parquet(data: pa.Buffer, name: str, max_bytes: int, max_columns: int) -> None:
    """Refuse, from the metadata alone, a Parquet file too wide, too large once read, or nested.

    Parquet stores runs of equal values and dictionaries of repeated strings compactly, so a
    small file can expand to a huge table: the rows times the columns, and the total length of
    the text values (summed over each dictionary's entries, without expanding them), must stay
    within ``max_bytes``.
    """
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        fields = list(parquet.schema_arrow)
        metadata = parquet.metadata
        stored = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    except Exception as error:  # pyarrow raises several unrelated types for a corrupt file
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is not a readable Parquet file ({error}); export it again as Parquet or CSV."],
        ) from error
    problems: list[str] = []
    nested = [f for f in fields if _nested(f.type)]
    for f in nested[:_RAGGED_SHOWN]:
        problems.append(
            f"column {f.name!r} holds lists or records ({f.type}), not one value per row; flatten it "
            "into plain columns or remove it."
        )
    if len(nested) > _RAGGED_SHOWN:
        problems.append(f"{len(nested) - _RAGGED_SHOWN} more columns hold lists or records too.")
    names = [f.name.strip() for f in fields]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"column name {dup!r} appears more than once; give every column a unique name.")
    if len(fields) > max_columns:
        problems.append(
            f"{name} has {len(fields):,} columns, over the limit of {max_columns:,}; keep only the "
            "columns to audit, or raise the limit (max_columns)."
        )
    in_memory = max(stored, metadata.num_rows * len(fields) * 8)
    if in_memory > max_bytes:
        problems.append(
            f"{name} holds {metadata.num_rows:,} rows of {len(fields):,} "
            f"column{'s' if len(fields) != 1 else ''}, about "
            f"{_mib(in_memory)} once read, over the limit of {_mib(max_bytes)}; use a sample of "
            "the table or raise the size limit (max_bytes)."
        )
    if problems:
        raise DataError(f"{name} cannot be read as a table.", problems)
    text = [f.name for f in fields if _is_text(f.type)]
    if not text:
        return
    total = metadata.num_rows * len(fields) * 8
    try:
        reader = pq.ParquetFile(pa.BufferReader(data), read_dictionary=text)
        for group in range(metadata.num_row_groups):
            for column_name, column in zip(
                text, reader.read_row_group(group, columns=text).columns, strict=True
            ):
                _check_utf8(column, column_name, name)
                _check_cell_length(column, column_name, name)
                total += _text_bytes(column)
                if total > max_bytes:
                    raise DataError(
                        f"{name} cannot be read as a table.",
                        [
                            f"the text values of {name} add up to more than {_mib(max_bytes)} once "
                            "read, over the size limit; use a sample of the table or raise the "
                            "size limit (max_bytes)."
                        ],
                    )
    except DataError:
        raise
    except Exception as error:  # pyarrow raises several unrelated types for a corrupt file
        raise DataError(
            f"{name} cannot be read.",
            [f"{name} is not a readable Parquet file ({error}); export it again as Parquet or CSV."],
        ) from error


def _nested(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_nested(kind))


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return any(
        check(kind)
        for check in (
            pa.types.is_string,
            pa.types.is_large_string,
            pa.types.is_binary,
            pa.types.is_large_binary,
            pa.types.is_fixed_size_binary,
        )
    )


def _check_utf8(column: pa.ChunkedArray, column_name: str, name: str) -> None:
    """Refuse text that is not valid UTF-8 (Arrow does not check it when reading)."""
    for chunk in column.chunks:
        kind = chunk.type.value_type if pa.types.is_dictionary(chunk.type) else chunk.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            return  # raw bytes: read as UTF-8 with replacement characters later
        try:
            chunk.validate(full=True)
        except pa.ArrowInvalid as error:
            raise DataError(
                f"{name} cannot be read as a table.",
                [
                    f"column {column_name!r} of {name} holds text that is not valid UTF-8 ({error}); "
                    "the file is damaged or was written wrongly: export it again as Parquet or CSV."
                ],
            ) from error


def _check_cell_length(column: pa.ChunkedArray, column_name: str, name: str) -> None:
    """Refuse a text value longer than a CSV cell may be (:func:`csv.field_size_limit` characters)."""
    limit = csv.field_size_limit()
    for chunk in column.chunks:
        values = chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk
        kind = values.type
        measure = (
            pc.utf8_length if pa.types.is_string(kind) or pa.types.is_large_string(kind) else pc.binary_length
        )
        longest = pc.max(measure(values)).as_py() if len(values) else None
        if longest is not None and longest > limit:
            raise DataError(
                f"{name} cannot be read as a table.",
                [
                    f"column {column_name!r} of {name} holds a value of {longest:,} characters, over "
                    f"the limit of {limit:,} one cell may hold; shorten it or remove that column."
                ],
            )


def _text_bytes(column: pa.ChunkedArray) -> int:
    """The total length of a (dictionary-encoded) text column's values, without expanding it."""
    total = 0
    for chunk in column.chunks:
        if isinstance(chunk, pa.DictionaryArray):
            lengths = pc.take(pc.binary_length(chunk.dictionary), chunk.indices)
        else:
            lengths = pc.binary_length(chunk)
        total += int(pc.sum(lengths).as_py() or 0)
    return total


def _plain_values(values: pd.Series) -> pd.Series:
    """Numbers and text only, as a CSV would give: decimals as floats, the rest as text.

    Dates, times, timestamps and durations become their ISO text; raw bytes are read as UTF-8.
    """
    kind = values.dtype
    if pd.api.types.is_datetime64_any_dtype(kind) or pd.api.types.is_timedelta64_dtype(kind):
        return _as_text(values)
    if not pd.api.types.is_object_dtype(kind):
        return values
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred == "decimal":
        return pd.to_numeric(values.map(lambda v: None if v is None else float(v)), errors="coerce")
    if inferred == "bytes":
        return _as_text(values.map(lambda v: v if v is None else v.decode("utf-8", errors="replace")))
    if inferred in ("date", "time", "datetime", "datetime64", "timedelta", "timedelta64", "period"):
        return _as_text(values)
    return values


def _as_text(values: pd.Series) -> pd.Series:
    text = [None if pd.isna(v) else str(v) for v in values]
    return pd.Series(text, index=values.index, dtype=str)
