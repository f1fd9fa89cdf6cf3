"""The audited data stays private: no network at run time, owner-only run folders, no user text
as a path, and a dashboard that listens on this machine only."""

from __future__ import annotations

import builtins
import os
import shutil
import socket
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _hardening import REPO, cli
from builders import bare_spec, small_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privgame.core.errors import RunError
from privgame.data import load_table
from privgame.games.engine import start_run
from privgame.games.preflight import create_run
from privgame.settings.run_spec import RunSpec, TargetSelection
from privgame.store.folders import list_runs, new_run_folder, open_run

# ---- no network at run time ----------------------------------------------------------------------


def _without_network() -> list[str] | None:
    """The command prefix that runs a program in a network namespace of its own, if allowed here."""
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    return ["unshare", "-n"] if probe.returncode == 0 else None


def test_a_run_completes_in_a_network_namespace_without_any_network(
    small_adult: Path, tmp_path: Path
) -> None:
    """The CLI, its loky worker processes included, needs no network, not even loopback."""
    prefix = _without_network()
    if prefix is None:
        if os.environ.get("CI"):
            pytest.fail("`unshare -n` is needed to prove that a run needs no network; allow it on CI.")
        pytest.skip("`unshare -n` is not available here (it needs root or unprivileged user namespaces)")
    probe = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-c",
            "import socket; s = socket.socket(); s.settimeout(2); print(s.connect_ex(('192.0.2.1', 9)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() != "0", "the namespace still has a network"
    root = tmp_path / "runs"
    done = cli(
        "run",
        "--setup",
        "paper",
        *("--data", str(small_adult), "--generator", "synthpop"),
        *("--size", "60", "--aux-size", "700", "--eval-size", "600"),
        *("--targets", "2", "--n-shadow", "20", "--n-eval", "20"),
        *("--workers", "2", "--out", str(root), "--quiet"),
        prefix=tuple(prefix),
    )
    assert done.returncode == 0, done.stderr
    (info,) = list_runs(root)
    assert info.state == "done"
    assert len(open_run(root, info.run_id).records()) == 2


def test_a_run_in_this_process_opens_no_connection(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[Any] = []

    def forbidden(name: str, real: Any) -> Any:
        def call(self: socket.socket, address: Any, *args: Any) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6):
                attempts.append((name, address))
                raise OSError(f"{name}({address!r}): network access is forbidden in this test")
            return real(self, address, *args)

        return call

    for name in ("connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, forbidden(name, getattr(socket.socket, name)))

    def no_lookup(*args: Any, **kwargs: Any) -> Any:
        attempts.append(("getaddrinfo", args))
        raise OSError("name lookups are forbidden in this test")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    spec, table = small_spec(small_adult, targets=TargetSelection("random", 2))
    folder = start_run(tmp_path, spec, table, workers=1)
    assert folder.status()["state"] == "done"
    assert len(folder.records()) == 2
    assert attempts == []


# ---- owner-only run folders ----------------------------------------------------------------------


def test_a_run_folder_and_all_it_holds_are_owner_only_whatever_the_umask(
    small_adult: Path, tmp_path: Path
) -> None:
    spec, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 2))
    previous = os.umask(0)
    try:
        folder = start_run(tmp_path / "runs", spec, table, workers=1)
    finally:
        os.umask(previous)
    paths = [folder.path, *folder.path.rglob("*")]
    assert len(paths) > 10
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path.relative_to(tmp_path)}: {mode:o}"


# ---- no user text as a path ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("root") / "runs"
    new_run_folder(root, _spec(), pd.DataFrame({"a": [1, 2]}))
    return root


def _spec(**changes: Any) -> RunSpec:
    return bare_spec(**{"data_fingerprint": "f", **changes})


@pytest.mark.parametrize(
    "run_id",
    ["..", "../runs", "/etc", "a/b", "20261130-101500-x-1a2b3c/../../x", "", "\x00", "~", "runs\\..\\x"],
)
def test_a_run_id_that_is_not_a_run_folder_name_is_refused(runs_root: Path, run_id: str) -> None:
    with pytest.raises(RunError, match=r"is not a run id"):
        open_run(runs_root, run_id)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_id=st.text(max_size=40) | st.from_regex(r"\A[0-9]{8}-[0-9]{6}-[a-z_./]{1,8}-[0-9a-f]{6}\Z"))
def test_no_run_id_reaches_outside_the_runs_root(runs_root: Path, run_id: str) -> None:
    try:
        folder = open_run(runs_root, run_id)
    except RunError as error:
        assert "is not a run id" in str(error) or "not a privgame run folder" in str(error)
        if "not a privgame run folder" in str(error):
            assert (runs_root / run_id).resolve().parent == runs_root.resolve()
        return
    assert folder.path.resolve().parent == runs_root.resolve()


def test_a_hostile_data_name_never_becomes_part_of_a_path(tmp_path: Path) -> None:
    root = tmp_path / "deep" / "runs"
    name = "../../../escaped/\x00evil; rm -rf ~.csv"
    folder = new_run_folder(root, _spec(data_name=name), pd.DataFrame({"a": [1, 2]}))
    assert folder.path.parent == root
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep"]
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["runs"]
    assert folder.spec().data_name == name


@pytest.mark.parametrize("generator", ["../escape", "a/b", "X", "", "a" * 65, "café"])
def test_a_generator_name_that_could_not_name_a_folder_is_refused(tmp_path: Path, generator: str) -> None:
    with pytest.raises(RunError, match=r"cannot name a run folder"):
        create_run(tmp_path / "runs", _spec(generator=generator), pd.DataFrame({"a": [1]}))
    assert list(tmp_path.iterdir()) == []


def test_an_uploaded_file_name_is_only_ever_a_label(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_files(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the loader opened a file: {args!r}")

    monkeypatch.setattr(builtins, "open", no_files)
    monkeypatch.setattr(os, "open", no_files)
    table = load_table(b"a,b\n1,x\n2,y\n", filename="../../../etc/passwd")
    assert table.shape == (2, 2)
    with pytest.raises(ValueError, match=r"/etc/shadow.parquet is named like a Parquet file"):
        load_table(b"a,b\n1,x\n", filename="/etc/shadow.parquet")


# ---- the dashboard ---------------------------------------------------------------------------------


def test_the_dashboard_listens_on_this_machine_only_and_reports_nothing() -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] in ("127.0.0.1", "localhost", "::1")
    assert config["browser"]["gatherUsageStats"] is False
