"""Loading CSV and Parquet files: sniffing, missing markers, and each bad input's own error."""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.core.errors import DataError
from privgame.data import BUNDLED_ADULT, DEFAULT_MAX_BYTES, MISSING_MARKERS, load_table

EXPECTED = pd.DataFrame(
    {
        "city": ["Zürich", "Montréal", "Québec"],
        "weight": [1.5, 2.25, 3.0],
        "count": [1, 2, 3],
    }
)


def write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def problems_of(error: pytest.ExceptionInfo[DataError]) -> list[str]:
    return error.value.problems


# ---- the bundled Adult data -------------------------------------------------------------------


def test_adult_loads_with_question_marks_as_missing(adult_raw: pd.DataFrame) -> None:
    assert adult_raw.shape == (48_842, 15)
    assert int(adult_raw.isna().sum().sum()) == 6_465
    assert len(adult_raw.dropna()) == 45_222
    assert not (adult_raw == "?").any().any()
    numeric = [c for c in adult_raw.columns if pd.api.types.is_integer_dtype(adult_raw[c])]
    assert numeric == [
        "age",
        "fnlwgt",
        "educational-num",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
    ]


def test_adult_loads_the_same_from_uploaded_bytes(adult_raw: pd.DataFrame) -> None:
    uploaded = load_table(BUNDLED_ADULT.read_bytes(), filename="adult.csv.gz")
    pd.testing.assert_frame_equal(uploaded, adult_raw)


# ---- the formats and dialects that must be read -----------------------------------------------


def test_semicolon_latin1_csv_with_decimal_commas(tmp_path: Path) -> None:
    text = "city;weight;count\nZürich;1,5;1\nMontréal;2,25;2\nQuébec;3,0;3\n"
    path = write(tmp_path, "semicolon.csv", text.encode("latin-1"))
    pd.testing.assert_frame_equal(load_table(path), EXPECTED, check_dtype=False)
    assert load_table(path)["weight"].dtype == np.float64


def test_utf8_bom_csv_keeps_the_first_column_name(tmp_path: Path) -> None:
    text = "city,weight,count\nZürich,1.5,1\nMontréal,2.25,2\nQuébec,3.0,3\n"
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbf" + text.encode("utf-8"))
    table = load_table(path)
    assert list(table.columns) == ["city", "weight", "count"]
    pd.testing.assert_frame_equal(table, EXPECTED, check_dtype=False)


def test_utf16_csv_with_bom(tmp_path: Path) -> None:
    text = "city\tweight\tcount\nZürich\t1.5\t1\nMontréal\t2.25\t2\nQuébec\t3.0\t3\n"
    path = write(tmp_path, "utf16.csv", text.encode("utf-16"))
    pd.testing.assert_frame_equal(load_table(path), EXPECTED, check_dtype=False)


def test_gzip_csv_from_path_and_bytes(tmp_path: Path) -> None:
    text = "city,weight,count\nZürich,1.5,1\nMontréal,2.25,2\nQuébec,3.0,3\n"
    packed = gzip.compress(text.encode("utf-8"))
    from_path = load_table(write(tmp_path, "table.csv.gz", packed))
    from_bytes = load_table(packed, filename="upload.csv.gz")
    pd.testing.assert_frame_equal(from_path, EXPECTED, check_dtype=False)
    pd.testing.assert_frame_equal(from_bytes, from_path)


def test_parquet_from_path_and_bytes_strips_and_marks_missing(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "colour": [" red", "blue ", "?", None, "NA"],
            "size": [1, 2, 3, 4, 5],
            "kind": pd.Categorical(["a", "b", "a", "b", "a"]),
        }
    )
    path = tmp_path / "table.parquet"
    frame.to_parquet(path)
    table = load_table(path)
    assert table["colour"].tolist()[:2] == ["red", "blue"]
    assert table["colour"].isna().tolist() == [False, False, True, True, True]
    assert table["size"].tolist() == [1, 2, 3, 4, 5]
    assert table["kind"].tolist() == ["a", "b", "a", "b", "a"]
    uploaded = load_table(path.read_bytes(), filename="table.parquet")
    pd.testing.assert_frame_equal(uploaded, table)


def test_bytes_upload_with_filename_hint_names_the_file_in_errors() -> None:
    table = load_table(b"a,b\n1,x\n2,y\n", filename="upload.csv")
    assert table.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    with pytest.raises(DataError, match=r"my-upload\.csv is empty"):
        load_table(b"", filename="my-upload.csv")


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiter_is_sniffed(delimiter: str) -> None:
    text = delimiter.join(["a", "b", "c"]) + "\n" + delimiter.join(["1", "x y", "2.5"]) + "\n"
    table = load_table(text.encode(), filename="t.csv")
    assert list(table.columns) == ["a", "b", "c"]
    assert table.iloc[0].tolist() == [1, "x y", 2.5]


def test_quoted_fields_keep_delimiters_and_single_quotes_are_sniffed() -> None:
    double = load_table(b'name,note\n"Smith, J",ok\n"Doe, A","a ""b"""\n', filename="t.csv")
    assert double["name"].tolist() == ["Smith, J", "Doe, A"]
    assert double["note"].tolist() == ["ok", 'a "b"']
    single = load_table(b"name,note\n'Smith, J',ok\n'Doe, A',fine\n", filename="t.csv")
    assert single["name"].tolist() == ["Smith, J", "Doe, A"]


@pytest.mark.parametrize("marker", MISSING_MARKERS)
def test_every_missing_marker_is_missing_even_with_spaces(marker: str) -> None:
    text = f"a,b\n1,x\n2, {marker} \n3,y\n"
    table = load_table(text.encode(), filename="t.csv")
    assert table["b"].isna().tolist() == [False, True, False]


def test_adult_style_spaces_are_stripped_and_numbers_stay_numbers() -> None:
    text = "age, workclass, hours\n 39, State-gov, 40\n 50, ?, 13\n"
    table = load_table(text.encode(), filename="t.csv")
    assert list(table.columns) == ["age", "workclass", "hours"]
    assert table["age"].tolist() == [39, 50]
    assert table["age"].dtype == np.int64
    assert table["workclass"].iloc[0] == "State-gov"
    assert pd.isna(table["workclass"].iloc[1])


def test_blank_lines_trailing_delimiters_and_an_unnamed_index_column() -> None:
    trailing = load_table(b"a,b,\n1,x,\n\n2,y,\n", filename="t.csv")
    assert list(trailing.columns) == ["a", "b"]
    assert len(trailing) == 2
    some_trailing = load_table(b"a,b\n1,x,\n2,y\n3,z,,\n", filename="t.csv")
    assert some_trailing.to_dict("list") == {"a": [1, 2, 3], "b": ["x", "y", "z"]}
    indexed = load_table(b",a,b\n0,1,x\n1,2,y\n", filename="t.csv")
    assert list(indexed.columns) == ["Unnamed: 0", "a", "b"]


def test_a_numeric_column_with_a_word_stays_text_and_missing_numbers_are_float() -> None:
    table = load_table(b"a,b\n1,1\n2,NA\nthree,3\n", filename="t.csv")
    assert table["a"].tolist() == ["1", "2", "three"]
    assert table["b"].dtype == np.float64
    assert table["b"].isna().tolist() == [False, True, False]


def test_default_size_limit_is_200_mib() -> None:
    assert DEFAULT_MAX_BYTES == 200 * 1024 * 1024


# ---- bad inputs: each gives its own error --------------------------------------------------------

BAD_FILES: dict[str, tuple[bytes, str]] = {
    "empty.csv": (b"", r"empty.csv is empty"),
    "blank.csv": (b"\n  \n\n", r"blank.csv is empty"),
    "header_only.csv": (b"a,b,c\n", r"has a header line but no data rows"),
    "no_header.csv": (
        b"39,State-gov,77516,Bachelors\n50,Self-emp,83311,Bachelors\n38,Private,215646,HS-grad\n",
        r"line 1 looks like data, not a header",
    ),
    "duplicate.csv": (b"age,name,age\n1,x,2\n3,y,4\n", r"column name 'age' appears 2 times"),
    "ragged.csv": (
        b"a,b\n1,2\n3\n4,5,6\n7,8\n",
        r"ragged rows: 2 lines do not have .*\(line 3 has 1, line 4 has 3\)",
    ),
    "open_quote.csv": (b'a,b\n1,"x\n2,y\n3,z\n', r'line 2: a quote " opened there is never closed'),
    "binary.csv": (b"a,b\n\x00\x01\x02\x03\x00", r"binary file \(it contains NUL bytes\)"),
    "workbook.csv": (b"PK\x03\x04" + bytes(range(200)), r"looks like a ZIP archive \(an Excel"),
    "garbage.csv": (bytes(range(1, 9)) * 50 + b"\n", r"unreadable as text"),
    "fake.parquet": (b"a,b\n1,2\n", r"named like a Parquet file but is not one"),
    "corrupt.parquet": (b"PAR1" + b"\x07" * 64 + b"PAR1", r"not a readable Parquet file"),
    "corrupt.csv.gz": (b"\x1f\x8b\x08\x00" + b"\xff" * 40, r"not a valid gzip file"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_each_bad_file_gives_its_own_error(tmp_path: Path, name: str) -> None:
    content, message = BAD_FILES[name]
    path = write(tmp_path, name, content)
    with pytest.raises(DataError, match=message) as error:
        load_table(path)
    assert len(problems_of(error)) == 1
    others = [m for n, (_, m) in BAD_FILES.items() if n != name]
    assert not any(re.search(m, str(error.value)) for m in others)


def test_ragged_rows_name_the_first_few_lines_and_count_the_rest() -> None:
    lines = ["a,b"] + [f"{i},{i}" if i % 2 else f"{i}" for i in range(1, 41)]
    with pytest.raises(DataError, match=r"20 lines do not .*line 3 has 1, .*line 11 has 1 and 15 more"):
        load_table("\n".join(lines).encode(), filename="t.csv")


def test_several_problems_are_reported_together() -> None:
    with pytest.raises(DataError) as error:
        load_table(b"a,a,b\n1,2,3\n4,5\n", filename="t.csv")
    text = "\n".join(problems_of(error))
    assert "column name 'a' appears 2 times" in text
    assert "ragged rows: 1 line does not have the header's 3 fields (line 3 has 2)" in text


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = write(tmp_path, "big.csv", b"a,b\n" + b"1,2\n" * 1000)
    with pytest.raises(DataError, match=r"big.csv is 0.0 MiB, over the limit of 0.0 MiB"):
        load_table(path, max_bytes=1000)
    with pytest.raises(DataError, match=r"upload.csv is .* over the limit"):
        load_table(path.read_bytes(), filename="upload.csv", max_bytes=1000)
    assert len(load_table(path, max_bytes=10_000)) == 1000


def test_a_decompression_bomb_is_refused() -> None:
    bomb = gzip.compress(b"a,b\n" + b"1,2\n" * 2_000_000)  # 8 MB of text in ~8 kB
    assert len(bomb) < 100_000
    with pytest.raises(DataError, match=r"bomb.csv.gz decompresses to more than 1.0 MiB"):
        load_table(bomb, filename="bomb.csv.gz", max_bytes=1024 * 1024)


def test_a_missing_path_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_table(tmp_path / "nowhere.csv")


def test_gzip_members_are_read_whole() -> None:
    packed = gzip.compress(b"a,b\n1,2\n") + gzip.compress(b"3,4\n")
    assert load_table(io.BytesIO(packed).getvalue(), filename="t.csv.gz")["a"].tolist() == [1, 3]


def test_windows_and_old_mac_line_endings_and_windows_1252() -> None:
    crlf = load_table("a;b;c\r\n1,5;x;€\r\n3;y;z\r\n".encode("cp1252"), filename="t.csv")
    assert crlf.to_dict("list") == {"a": [1.5, 3.0], "b": ["x", "y"], "c": ["€", "z"]}
    bare_cr = load_table(b'a,b\r1,"x\ry"\r2,z\r', filename="t.csv")
    assert bare_cr["a"].tolist() == [1, 2]
    assert bare_cr["b"].tolist()[1] == "z"


@pytest.mark.parametrize("huge", ["1e308", "-1e200"])
def test_a_continuous_value_too_large_to_compute_with_is_refused_with_the_fix(huge: str) -> None:
    from privgame.data import load_dataset

    rows = "\n".join(f"{20 + i % 30},{'ab'[i % 2]}" for i in range(40))
    with pytest.raises(DataError, match="cannot be used for an audit") as caught:
        load_dataset(f"age,job\n{rows}\n{huge},a\n".encode(), filename="t.csv")
    assert "column 'age': a value of magnitude" in str(caught.value.problems)
    assert "divide the column by a power of ten" in str(caught.value.problems)
    load_dataset(f"age,job\n{rows}\n1e20,a\n".encode(), filename="t.csv")  # large, but fine
