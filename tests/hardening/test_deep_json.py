"""JSON from users is parsed within bounds: deep nesting or a huge text ends in a typed error.

Python's ``json`` recurses into nested brackets, so ``[[[[...]]]]`` a few thousand levels deep
raises ``RecursionError``. Every JSON text privgame reads from a user (a ``--domain`` file, the
Data page's domain upload, a ``--param`` value, a file that is JSON posing as CSV) is measured
before it is parsed (:mod:`privgame.core.jsonlimits`).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privgame.cli.main import main
from privgame.core.errors import DataError, ParameterError
from privgame.core.jsonlimits import check_limits, loads_limited, nesting_depth
from privgame.data import load_table, parse_domain
from privgame.data.domain import MAX_DOMAIN_BYTES, MAX_DOMAIN_DEPTH

DEEP = 200_000
HOSTILE_DOMAINS: dict[str, bytes] = {
    "brackets": b"[" * DEEP + b"]" * DEEP,
    "unclosed": b"[" * DEEP,
    "objects": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    "in-bounds": b'{"bounds": {"age": ' + b"[" * DEEP + b"]" * DEEP + b"}}",
    "in-categories": b'{"categories": {"x": [' + b"[" * 20 + b"]" * 20 + b"]}}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_DOMAINS))
def test_a_deeply_nested_domain_is_refused_before_it_is_parsed(name: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ParameterError, match=r"The domain nests arrays or objects [\d,]+ levels deep"):
        parse_domain(HOSTILE_DOMAINS[name])
    assert time.perf_counter() - started < 2


def test_a_valid_domain_is_well_within_the_depth_limit() -> None:
    text = '{"bounds": {"age": [17, 90]}, "categories": {"race": ["A", "B"]}}'
    assert nesting_depth(text) == 3 < MAX_DOMAIN_DEPTH
    assert parse_domain(text).bounds == {"age": (17.0, 90.0)}


def test_brackets_in_strings_do_not_count() -> None:
    assert nesting_depth('{"categories": {"x": ["[[[[[[[[[[", "\\"[[[["]}}') == 3
    assert nesting_depth("12") == 0
    assert nesting_depth("]]]][") == 1


def test_an_oversized_domain_is_refused_by_its_length() -> None:
    with pytest.raises(ParameterError, match=r"The domain is [\d,]+ bytes long, over the limit"):
        parse_domain(b" " * (MAX_DOMAIN_BYTES + 1))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='[]{}"\\:,1a ', max_size=400))
def test_any_bracket_soup_gives_a_domain_or_a_parameter_error(text: str) -> None:
    with contextlib.suppress(ParameterError):
        parse_domain(text)


def test_limits_apply_to_any_user_json() -> None:
    with pytest.raises(ParameterError, match=r"--param x nests arrays or objects 40 levels deep"):
        check_limits("[" * 40 + "]" * 40, what="--param x")
    with pytest.raises(ParameterError, match="over the limit of 10"):
        loads_limited("[1, 2, 3, 4, 5]", what="it", max_chars=10)
    with pytest.raises(ParameterError, match=r"it is not valid JSON \(line 1, column 2"):
        loads_limited("[}", what="it")
    assert loads_limited('{"a": [1, {"b": null}]}', what="it") == {"a": [1, {"b": None}]}


@pytest.mark.parametrize(
    "text",
    [
        "[ " * 20_000 + "1" + " ]" * 20_000 + "\n",
        '{"a": ' * 20_000 + "1" + "}" * 20_000 + "\n",
    ],
    ids=["arrays", "objects"],
)
def test_a_deeply_nested_json_file_posing_as_csv_is_refused(text: str) -> None:
    with pytest.raises(DataError, match=r"looks like JSON, not CSV|cannot be read"):
        load_table(text.encode(), filename="deep.csv")


@pytest.fixture
def small_csv(tmp_path: Path, adult_rows) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / "small.csv"
    adult_rows.iloc[:400, :6].to_csv(path, index=False)
    return path


@pytest.mark.parametrize("name", ["brackets", "objects", "in-bounds"])
def test_the_cli_refuses_a_deep_domain_with_status_2(
    name: str, small_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    domain = tmp_path / "domain.json"
    domain.write_bytes(HOSTILE_DOMAINS[name])
    out = tmp_path / "synthetic.csv"
    argv = ["synth", "--data", str(small_csv), "--generator", "marginals", "--rows", "10"]
    assert main([*argv, "--domain", str(domain), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"privgame: --domain {domain}: The domain nests arrays or objects" in err
    assert "Traceback" not in err and not out.exists()


def test_the_cli_refuses_a_domain_that_is_a_device_or_a_pipe(
    small_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "domain.fifo"
    os.mkfifo(fifo)  # no writer will come: a blocking open would wait for ever
    argv = ["synth", "--data", str(small_csv), "--generator", "marginals", "--rows", "10"]
    for path in (fifo, Path("/dev/zero"), tmp_path):
        started = time.perf_counter()
        assert main([*argv, "--domain", str(path), "-o", str(tmp_path / "s.csv")]) == 2
        assert time.perf_counter() - started < 5
        err = capsys.readouterr().err
        assert "is not a regular file" in err or "(Is a directory)" in err, err


def test_a_deep_plugin_parameter_is_a_typed_problem(
    small_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "synth",
        "--data",
        str(small_csv),
        "--generator",
        "tests.generators.plugin_example:IndependentBootstrap",
    ]
    deep = "[" * 50_000 + "]" * 50_000
    code = main([*argv, "--rows", "10", "--param", f"jitter={deep}", "-o", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--param jitter nests arrays or objects 50,000 levels deep" in err
