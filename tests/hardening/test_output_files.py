"""Every file the command line writes is owner-only, spreadsheet-safe, whole, and never a pipe or device.

``synth -o``, ``export -o`` (records, high-risk list, spec, HTML report), ``release -o`` and its
card go through one helper (:func:`privgame.outputs.files.write_output`): a FIFO, a socket, a device
node or a folder is refused before any work, the file is created with mode 0600 whatever the
umask, and the synthetic table's text cells are neutralised like every CSV privgame writes,
while numbers (negative ones included) stay numbers.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from builders import small_spec

from privgame.cli.main import main
from privgame.core.errors import ParameterError
from privgame.games.engine import start_run
from privgame.outputs.files import check_output_path, write_output
from privgame.store.folders import RunFolder

FORMULAS = ['=HYPERLINK("http://x")', "+SUM(A1)", "-2+3", "@cmd", "plain"]


@pytest.fixture
def open_umask() -> Iterator[None]:
    """Run with umask 000, the most permissive: only an explicit mode keeps a file private."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture(scope="module")
def formula_csv(adult_rows: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = adult_rows.iloc[:300, :4].copy()
    table["note"] = (FORMULAS * 60)[:300]
    table["balance"] = [-3.5, -1.25, 0.0, 2.75, -10.0] * 60
    path = tmp_path_factory.mktemp("formulas") / "formulas.csv"
    table.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def finished(small_adult: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    spec, table = small_spec(small_adult, generator="marginals")
    return start_run(tmp_path_factory.mktemp("runs"), spec, table, workers=1)


def _special_paths(folder: Path) -> dict[str, Path]:
    """A FIFO, a socket, a folder and (where this user may make one) a device node, in ``folder``."""
    paths = {"fifo": folder / "pipe.csv", "folder": folder / "a-folder.csv"}
    os.mkfifo(paths["fifo"])
    paths["folder"].mkdir()
    server = socket.socket(socket.AF_UNIX)
    paths["socket"] = folder / "sock.csv"
    server.bind(str(paths["socket"]))
    server.close()
    try:
        os.mknod(folder / "null.csv", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a /dev/null of our own
        paths["device"] = folder / "null.csv"
    except (PermissionError, OSError):
        pass
    return paths


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---- synth ---------------------------------------------------------------------------------------


def test_synth_neutralises_formulas_and_keeps_numbers(
    formula_csv: Path, tmp_path: Path, open_umask: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "synthetic.csv"
    argv = ["synth", "--data", str(formula_csv), "--generator", "identity", "--rows", "300"]
    assert main([*argv, "-o", str(out)]) == 0, capsys.readouterr().err
    assert _mode(out) == 0o600  # the identity generator writes the private rows themselves
    written = pd.read_csv(out)
    assert set(written["note"]) <= {'\'=HYPERLINK("http://x")', "'+SUM(A1)", "'-2+3", "'@cmd", "plain"}
    assert not written["note"].str.match(r"^[=+\-@]").any()
    assert written["balance"].dtype.kind == "f" and (written["balance"] < 0).any()
    assert set(written["balance"]) <= {-3.5, -1.25, 0.0, 2.75, -10.0}
    assert written["age"].dtype.kind == "i"


def test_synth_replaces_an_existing_file_with_an_owner_only_one(
    formula_csv: Path, tmp_path: Path, open_umask: None
) -> None:
    out = tmp_path / "synthetic.csv"
    out.write_text("old")
    out.chmod(0o666)
    argv = ["synth", "--data", str(formula_csv), "--generator", "marginals", "--rows", "20"]
    assert main([*argv, "-o", str(out)]) == 0
    assert _mode(out) == 0o600 and out.read_text().startswith("age,")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_synth_refuses_a_pipe_a_socket_a_device_or_a_folder_before_any_work(
    formula_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["synth", "--data", str(formula_csv), "--generator", "synthpop", "--rows", "300"]
    for kind, path in _special_paths(tmp_path).items():
        started = time.perf_counter()
        assert main([*argv, "-o", str(path)]) == 2, kind
        assert time.perf_counter() - started < 2, kind  # refused before the generator is trained
        err = capsys.readouterr().err
        assert f"Cannot write the synthetic table to {path}: it is" in err and "not a regular file" in err
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.csv").st_mode)  # left as it was
    assert main([*argv, "-o", str(tmp_path / "missing" / "s.csv")]) == 2
    assert "does not exist; create it first" in capsys.readouterr().err


# ---- export and release --------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["records", "high-risk", "spec", "html"])
def test_every_export_is_owner_only(finished: RunFolder, what: str, tmp_path: Path, open_umask: None) -> None:
    out = tmp_path / f"export.{what}"
    assert main(["export", str(finished.path), "--what", what, "-o", str(out)]) == 0
    assert _mode(out) == 0o600 and out.stat().st_size > 0


def test_export_refuses_a_pipe_a_socket_a_device_or_a_folder(
    finished: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind, path in _special_paths(tmp_path).items():
        for what in ("records", "html"):
            assert main(["export", str(finished.path), "--what", what, "-o", str(path)]) == 2, kind
            assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.csv").st_mode)
    if (tmp_path / "null.csv").exists():
        assert stat.S_ISCHR(os.stat(tmp_path / "null.csv").st_mode)  # the node was not replaced


def test_a_link_to_a_regular_file_is_replaced_not_followed(finished: RunFolder, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.csv"
    target.write_text("keep me")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert main(["export", str(finished.path), "--what", "records", "-o", str(link)]) == 0
    assert not link.is_symlink() and _mode(link) == 0o600
    assert target.read_text() == "keep me"


def test_release_refuses_a_special_path_for_the_table_or_its_card_before_training(
    finished: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "synthetic.card.json")  # the card's path is a pipe
    (tmp_path / "other").mkdir()
    table_fifo = _special_paths(tmp_path / "other")["fifo"]  # the table's path is a pipe
    for out in (tmp_path / "synthetic.csv", table_fifo):
        started = time.perf_counter()
        assert main(["release", str(finished.path), "-o", str(out)]) == 2
        assert time.perf_counter() - started < 2
        assert "not a regular file" in capsys.readouterr().err
    assert not (tmp_path / "synthetic.csv").exists()


def test_release_and_card_are_owner_only(finished: RunFolder, tmp_path: Path, open_umask: None) -> None:
    out = tmp_path / "release.csv"
    assert main(["release", str(finished.path), "--rows", "20", "--accept-risk", "-o", str(out)]) == 0
    assert _mode(out) == 0o600 and _mode(tmp_path / "release.card.json") == 0o600


# ---- the helper ----------------------------------------------------------------------------------


def test_the_helper_writes_whole_owner_only_files(tmp_path: Path, open_umask: None) -> None:
    path = write_output(tmp_path / "out.bin", b"\x00" * 1000, what="the test output")
    assert path.read_bytes() == b"\x00" * 1000 and _mode(path) == 0o600
    with pytest.raises(ParameterError, match=r"Cannot write the figure to .*: it is a pipe \(FIFO\)"):
        os.mkfifo(tmp_path / "fig.png")
        check_output_path(tmp_path / "fig.png", what="the figure")
    with pytest.raises(ParameterError, match="it is a character device"):
        check_output_path("/dev/null")
