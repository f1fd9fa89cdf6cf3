"""The run store under damage and contention (issue 18, groups 4 to 8, 15 and 16).

One damaged run never breaks the others; nothing is trusted without its checksum; a resumed run
never mixes checkpoints of two unit plans; one engine per folder, by a lock that dies with its
holder; symbolic links are never followed; a run that cannot start leaves no copy of the table;
a write that fails says so, names the path, and leaves the run ``failed``.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _hardening import REPO, cli, cli_command
from builders import small_spec

from privgame.core.errors import OutputError, RunError
from privgame.games.engine import execute, start_run
from privgame.games.preflight import create_run
from privgame.settings.executors import default_workers, describe_executor, resolve_workers
from privgame.settings.run_spec import AttackSettings, TargetSelection
from privgame.store.folders import (
    CHECKSUMS,
    DAMAGED,
    PLAN,
    RunFolder,
    list_runs,
    open_run,
    status_problem,
    symlinked_entries,
    write_error,
)

# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(small_adult: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    spec, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 2))
    return start_run(tmp_path_factory.mktemp("finished"), spec, table, workers=1)


@pytest.fixture()
def root(finished: RunFolder, tmp_path: Path) -> Path:
    """A runs root holding two copies of a finished run: ``good`` and one to damage."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(finished.path, runs / finished.run_id)
    other = finished.run_id[:-6] + "abcdef"
    shutil.copytree(finished.path, runs / other)
    return runs


def _damaged(root: Path) -> RunFolder:
    return RunFolder(sorted(p for p in root.iterdir() if p.name.endswith("abcdef"))[0])


def _good(root: Path) -> RunFolder:
    return RunFolder(sorted(p for p in root.iterdir() if not p.name.endswith("abcdef"))[0])


def _strip_checksum(folder: RunFolder, relative: str) -> None:
    log = folder.path / CHECKSUMS
    lines = [line for line in log.read_text().splitlines() if not line.endswith(f"  {relative}")]
    log.write_text("".join(f"{line}\n" for line in lines))


# -- group 4: a damaged status.json ---------------------------------------------------------------

DAMAGED_STATUS = {
    "null": b"null",
    "a number": b"42",
    "a list": b"[1, 2]",
    "text": b'"running"',
    "not JSON": b"{state: running",
    "truncated": b'{"state": "done", "crea',
    "binary": bytes(range(256)),
    "an unknown state": json.dumps({"state": "exploded"}).encode(),
    "state not text": json.dumps({"state": 3}).encode(),
    "text for a time": json.dumps({"state": "done", "created": "yesterday"}).encode(),
    "text for a count": json.dumps({"state": "running", "done_units": "x", "total_units": 10}).encode(),
    "a negative count": json.dumps({"state": "done", "n_targets": -1}).encode(),
    "a float count": json.dumps({"state": "done", "n_targets": 2.5}).encode(),
    "a bool count": json.dumps({"state": "done", "total_units": True}).encode(),
    "NaN time": b'{"state": "done", "created": NaN}',
    "infinite eta": b'{"state": "running", "eta": Infinity}',
    "a list for the error": json.dumps({"state": "failed", "error": ["x"]}).encode(),
    "text ids": json.dumps({"state": "done", "target_ids": ["a"]}).encode(),
    "groups not lists": json.dumps({"state": "done", "audit_groups": {"random": 3}}).encode(),
    "a plan of text": json.dumps({"state": "done", "unit_plan": {"targets": "x"}}).encode(),
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("content", list(DAMAGED_STATUS.values()), ids=list(DAMAGED_STATUS))
def test_a_damaged_status_is_listed_as_damaged_and_the_other_runs_still_list(
    root: Path, content: bytes
) -> None:
    bad, good = _damaged(root), _good(root)
    (bad.path / "status.json").write_bytes(content)
    assert status_problem(json.loads((good.path / "status.json").read_text())) is None
    status = bad.status()
    assert status["state"] == DAMAGED
    assert "status.json" in status["error"] and "Resume" in status["error"]
    infos = {info.run_id: info for info in list_runs(root)}
    assert infos[good.run_id].state == "done" and infos[good.run_id].problem is None
    assert infos[bad.run_id].state == DAMAGED
    assert "status.json" in (infos[bad.run_id].problem or "")
    assert bad.damage() is not None and good.damage() is None
    assert not bad.status_is_stale(seconds=1e12)  # a damaged status has no time: it is stale
    bad.write_status(state="failed", error="x")  # a write replaces a damaged status
    assert bad.status()["state"] == "failed"


def test_a_status_that_cannot_be_read_is_damaged_too(root: Path) -> None:
    bad = _damaged(root)
    status = bad.path / "status.json"
    status.unlink()
    status.mkdir()
    assert bad.status()["state"] == DAMAGED
    status.rmdir()
    outside = root.parent / "elsewhere.json"
    outside.write_text(json.dumps({"state": "done"}))
    status.symlink_to(outside)  # never read through a link
    assert bad.status()["state"] == DAMAGED
    status.unlink()
    status.write_bytes(b" " * (5 * 2**20) + b"{}")
    assert "larger than" in bad.status()["error"]


def test_a_damaged_run_resumes_to_its_results(root: Path, finished: RunFolder) -> None:
    bad = _damaged(root)
    (bad.path / "status.json").write_bytes(b"null")
    execute(bad, workers=1)
    assert bad.status()["state"] == "done"
    pd.testing.assert_frame_equal(bad.records(), finished.records())


def test_a_damaged_spec_lists_the_run_as_damaged(root: Path) -> None:
    bad = _damaged(root)
    (bad.path / "spec.json").write_text("{}")
    info = {i.run_id: i for i in list_runs(root)}[bad.run_id]
    assert info.state == DAMAGED and info.generator == "?"
    assert "spec.json" in (info.problem or "")


def _page(name: str | None = None):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60).run()
    if name is not None:
        at.switch_page(f"pages/{name}.py").run()
    return at


@pytest.mark.parametrize("content", [b"null", json.dumps({"state": "done", "created": "x"}).encode()])
def test_every_page_still_works_beside_a_damaged_run(
    root: Path, content: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(root))
    bad, good = _damaged(root), _good(root)
    (bad.path / "status.json").write_bytes(content)
    for page in (None, "2_Evaluate", "3_Results", "5_Runs"):
        at = _page(page)
        assert not at.exception, (page, [e.value for e in at.exception])
        errors = "\n".join(str(e.value) for e in at.error)
        assert "Something went wrong" not in errors, (page, errors)
        if page is None:
            text = "\n".join(str(m.value) for m in at.markdown)
            assert good.run_id in text
    # The Runs page: the damaged run says why, and offers resume and delete.
    at = _page("5_Runs")
    at.selectbox(key="runs-picker").set_value(bad.run_id).run()
    assert not at.exception
    assert "is damaged" in "\n".join(str(e.value) for e in at.error)
    assert any(b.key == "runs-resume" for b in at.button)
    at.button(key="runs-delete").click().run()
    at.button(key="runs-delete-yes").click().run()
    assert not at.exception
    assert not bad.path.exists() and good.path.exists()


def test_a_damaged_study_status_lists_as_damaged(small_adult: Path, tmp_path: Path) -> None:
    from privgame.studies import StudySpec, create_study, list_studies

    base, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 1))
    folder = create_study(tmp_path, StudySpec("size", base, sizes=(40,)), table)
    (folder.path / "status.json").write_bytes(b'{"state": "running", "fits_done": "many"}')
    (info,) = list_studies(tmp_path)
    assert info.state == DAMAGED and "fits_done" in info.description
    folder.write_status(state="created")
    assert list_studies(tmp_path)[0].state == "created"


# -- group 5: the unit plan and the claim ----------------------------------------------------------

PLAN_3 = {"shadow_out": 3, "ms_in": 4, "targets": 1}


def _partial(small_adult: Path, root: Path, units: int) -> RunFolder:
    """A run with a plan of 3 / 4 datasets per chunk, cancelled after ``units`` units."""
    spec, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 2))
    folder = create_run(root, spec, table)
    folder.write_unit_plan({**PLAN_3, "shadow_out_count": 10, "ms_in_count": 10})
    done = iter(range(units, -1, -1))
    execute(folder, workers=1, cancel=lambda: next(done) <= 1)
    assert folder.status()["state"] == "cancelled"
    return folder


def test_resume_after_a_damaged_status_keeps_the_unit_plan(
    small_adult: Path, tmp_path: Path, finished: RunFolder
) -> None:
    folder = _partial(small_adult, tmp_path, units=3)
    plan_bytes = (folder.path / PLAN).read_bytes()
    assert folder.shared_starts("shadow_out")[:2] == [0, 3]
    (folder.path / "status.json").write_bytes(b"null")  # the plan was never only here
    execute(folder, workers=1)
    assert (folder.path / PLAN).read_bytes() == plan_bytes
    assert folder.shared_starts("shadow_out") == [0, 3, 6, 9]
    assert folder.shared_starts("ms_in") == [0, 4, 8]
    assert len(folder.load_shared("shadow_out")) == 10 and len(folder.load_shared("ms_in")) == 10
    pd.testing.assert_frame_equal(folder.records(), finished.records())


def test_checkpoints_of_another_plan_are_refused_not_mixed(small_adult: Path, tmp_path: Path) -> None:
    folder = _partial(small_adult, tmp_path, units=3)
    folder.write_unit_plan({"shadow_out": 5, "ms_in": 5, "targets": 1})  # a second, valid plan
    with pytest.raises(RunError, match=r"do not fit its unit plan .* made with another plan"):
        execute(folder, workers=1)
    assert folder.status()["state"] == "failed"
    # Without plan.json, shared checkpoints cannot be matched to a plan: refused too.
    (folder.path / PLAN).unlink()
    with pytest.raises(RunError, match=r"no unit plan \(plan.json\).*delete .*shared"):
        execute(folder, workers=1)
    # A damaged plan.json is refused, naming the fix.
    folder.write_unit_plan(PLAN_3)
    (folder.path / PLAN).write_text(json.dumps({**PLAN_3, "shadow_out": 8}))
    with pytest.raises(RunError, match=r"plan.json of run .* does not match.*delete .*shared"):
        execute(folder, workers=1)
    # Following the fix works: the shared datasets are made again with the recorded plan.
    shutil.rmtree(folder.path / "shared")
    folder.write_unit_plan(PLAN_3)
    execute(folder, workers=1)
    assert folder.status()["state"] == "done"


def test_loading_overlapping_chunks_is_refused(tmp_path: Path, finished: RunFolder) -> None:
    folder = RunFolder(shutil.copytree(finished.path, tmp_path / finished.run_id))
    (n, d) = folder.load_shared("shadow_out").shape[1:]
    for path in (folder.path / "shared").glob("shadow_out-*.npz"):
        path.unlink()
    folder.save_shared("shadow_out", 0, np.zeros((4, n, d)))
    folder.save_shared("shadow_out", 3, np.ones((7, n, d)))
    with pytest.raises(RunError, match=r"do not fit together: one starts at dataset 3.*end at 4"):
        folder.load_shared("shadow_out")


def test_a_second_resume_while_one_runs_is_refused(small_adult: Path, tmp_path: Path) -> None:
    # The first resume is paused (SIGSTOP) once it holds the run, so the two overlap however
    # fast or slow the machine is; it then goes on to the end.
    spec, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 4))
    folder = create_run(tmp_path, spec, table)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = cli_command("resume", str(folder.path), "--workers", "1", "--quiet")
    first = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not folder.is_running():
            assert first.poll() is None, "the first resume ended before it was seen running"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.kill(first.pid, signal.SIGSTOP)
        second = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 2, second.stderr
    assert "already being run by another process" in second.stderr and "Traceback" not in second.stderr
    assert first.wait(timeout=300) == 0, first.stderr.read() if first.stderr else ""
    assert folder.status()["state"] == "done"
    assert not folder.is_running()


_HOLD = (
    "import sys, time; from privgame.store.folders import RunFolder; "
    "f = RunFolder(sys.argv[1]); c = f.claim(); c.__enter__(); print('held', flush=True); time.sleep(120)"
)


def _holder(folder: RunFolder) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(folder.path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_the_claim_dies_with_its_holder(tmp_path: Path, finished: RunFolder) -> None:
    folder = RunFolder(shutil.copytree(finished.path, tmp_path / finished.run_id))
    assert not folder.is_running()
    process = _holder(folder)
    try:
        assert folder.is_running()
        held = rf"already being run by another process \(pid {process.pid}\)"
        with pytest.raises(RunError, match=held), folder.claim():
            pass
        with pytest.raises(RunError, match="is running; cancel it"):
            folder.delete()
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert not folder.is_running()
    with folder.claim():  # at once: no PID to time out, no stale state to wait for
        assert folder.is_running()
        # One claim per folder within a process too.
        with pytest.raises(RunError, match="already being run"), folder.claim():
            pass
    assert not folder.is_running()


# -- group 6: PID reuse -----------------------------------------------------------------------------


def test_a_live_unrelated_pid_in_the_status_never_blocks_a_resume(
    tmp_path: Path, finished: RunFolder
) -> None:
    folder = RunFolder(shutil.copytree(finished.path, tmp_path / finished.run_id))
    # After a reboot the recorded PID belongs to another process: here init (1) and this test.
    for pid in (1, os.getpid()):
        status = {"state": "running", "pid": pid, "updated": time.time() - 3600}
        (folder.path / "status.json").write_text(json.dumps(status))
        assert not folder.is_running()
        assert folder.status_is_stale()  # no engine holds it: resumable
    execute(folder, workers=1)
    assert folder.status()["state"] == "done"


# -- group 7: checksums cannot be side-stepped ----------------------------------------------------


def test_an_edited_spec_without_its_checksum_line_is_refused(tmp_path: Path, finished: RunFolder) -> None:
    folder = RunFolder(shutil.copytree(finished.path, tmp_path / finished.run_id))
    spec = folder.path / "spec.json"
    spec.write_text(spec.read_text().replace('"threshold": 0.8', '"threshold": 0.5'))
    _strip_checksum(folder, "spec.json")
    with pytest.raises(RunError, match=r"spec.json of run .* has no checksum"):
        folder.spec()
    done = cli("report", str(folder.path))
    assert done.returncode == 2 and "has no checksum" in done.stderr and "Traceback" not in done.stderr
    for relative in ("records.parquet", "summary.json", "data.parquet", "plan.json"):
        copy = RunFolder(shutil.copytree(finished.path, tmp_path / f"copy-{relative}" / finished.run_id))
        _strip_checksum(copy, relative)
        with pytest.raises(RunError, match=rf"{relative} of run .* has no checksum"):
            {
                "records.parquet": copy.records,
                "summary.json": copy.summary,
                "data.parquet": copy.load_table,
                "plan.json": copy.unit_plan,
            }[relative]()


def test_a_study_checks_its_spec_and_data(small_adult: Path, tmp_path: Path) -> None:
    from privgame.studies import StudySpec, create_study, execute_study

    base, table = small_spec(
        small_adult, generator="marginals", targets=TargetSelection("random", 1), attack=AttackSettings(8, 8)
    )
    folder = create_study(tmp_path, StudySpec("size", base, sizes=(40,)), table)
    logged = {line.split("  ")[1] for line in (folder.path / CHECKSUMS).read_text().splitlines()}
    assert {"study.json", "data.parquet"} <= logged
    data = folder.path / "data.parquet"
    damaged = bytearray(data.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    data.write_bytes(bytes(damaged))
    with pytest.raises(RunError, match=r"data.parquet of study .* does not match"):
        execute_study(folder, workers=1)
    assert folder.status()["state"] == "failed"
    spec = folder.path / "study.json"
    spec.write_text(spec.read_text().replace('"rho": 0.2', '"rho": 0.3'))
    _strip_checksum(folder, "study.json")
    with pytest.raises(RunError, match=r"study.json of study .* has no checksum"):
        folder.spec()


def test_a_study_job_folder_is_checksummed(small_adult: Path, tmp_path: Path) -> None:
    from privgame.outputs.study_figures import figure_html
    from privgame.studies import StudySpec, create_study, execute_study

    base, table = small_spec(
        small_adult, generator="marginals", targets=TargetSelection("random", 1), attack=AttackSettings(8, 8)
    )
    study = create_study(tmp_path, StudySpec("size", base, sizes=(40,)), table)
    folder = execute_study(study, workers=1, figure=figure_html)
    (job,) = (folder.path / "runs").iterdir()
    logged = {line.split("  ")[1] for line in (job / CHECKSUMS).read_text().splitlines()}
    assert {"spec.json", "data.parquet", "records.parquet"} <= logged
    assert {"table.csv", "points.csv", "figure.html"} <= {
        line.split("  ")[1] for line in (folder.path / CHECKSUMS).read_text().splitlines()
    }


# -- group 8: symbolic links ------------------------------------------------------------------------


def test_symlinked_run_folders_are_not_listed_opened_or_followed(root: Path, tmp_path: Path) -> None:
    folder = _good(root)
    outside = tmp_path / "outside"
    target = shutil.copytree(folder.path, outside / "20261130-101500-marginals-0f0f0f")
    link = root / target.name
    link.symlink_to(target, target_is_directory=True)
    assert link.name not in {info.run_id for info in list_runs(root)}
    assert symlinked_entries(root) == [link.name]
    with pytest.raises(RunError, match="symbolic link"):
        open_run(root, link.name)
    with pytest.raises(RunError, match="symbolic link"):
        RunFolder(link)
    # A file of a run replaced by a link: refused by name, not read.
    spec = folder.path / "spec.json"
    (tmp_path / "spec-copy.json").write_bytes(spec.read_bytes())
    spec.unlink()
    spec.symlink_to(tmp_path / "spec-copy.json")
    with pytest.raises(RunError, match=r"spec.json of run .* is a symbolic link"):
        folder.spec()
    assert target.is_dir()  # nothing outside the runs folder was touched


def test_deleting_never_fails_with_a_raw_error(root: Path, tmp_path: Path) -> None:
    from privgame.store.folders import remove_folder

    folder = _good(root)
    outside = shutil.copytree(folder.path, tmp_path / "outside")
    link = root / "20261130-101500-marginals-0f0f0f"
    link.symlink_to(outside, target_is_directory=True)
    remove_folder(link, "run x")  # the link goes, what it points to stays
    assert not link.exists() and not link.is_symlink() and outside.is_dir()
    folder.path.chmod(0o500)
    try:
        if os.geteuid() != 0:
            with pytest.raises(RunError, match="Could not delete run"):
                folder.delete()
    finally:
        folder.path.chmod(0o700)
    folder.delete()
    assert not folder.path.exists()


def test_symlinked_studies_are_not_listed(small_adult: Path, tmp_path: Path) -> None:
    from privgame.studies import StudySpec, create_study, list_studies, studies_dir

    base, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 1))
    folder = create_study(tmp_path / "elsewhere", StudySpec("size", base, sizes=(40,)), table)
    root = tmp_path / "runs"
    studies_dir(root).mkdir(parents=True)
    (studies_dir(root) / folder.study_id).symlink_to(folder.path, target_is_directory=True)
    assert list_studies(root) == []
    (tmp_path / "runs2").mkdir()
    (tmp_path / "runs2" / "studies").symlink_to(studies_dir(tmp_path / "elsewhere"), target_is_directory=True)
    assert list_studies(tmp_path / "runs2") == []


# -- group 15: nothing is written for a run that cannot start -------------------------------------

BAD_OPTIONS = {
    "more targets than D": ["--generator", "marginals", "--targets", "100000"],
    "unknown ids": ["--generator", "marginals", "--target-ids", "99999999"],
    "bad epsilon": ["--generator", "privbayes", "--epsilon", "-1"],
    "too many bins": ["--generator", "baynet", "--bins", "100000"],
    "leaf size": ["--generator", "synthpop", "--min-leaf", "0"],
    "degree": ["--generator", "baynet", "--degree", "-1"],
    "workers": ["--generator", "marginals", "--workers", "-1000"],
}


@pytest.mark.parametrize("options", list(BAD_OPTIONS.values()), ids=list(BAD_OPTIONS))
def test_a_run_that_cannot_start_leaves_no_copy_of_the_table(
    small_adult: Path, tmp_path: Path, options: list[str]
) -> None:
    out = tmp_path / "runs"
    done = cli(
        "run", "--data", str(small_adult), "--out", str(out), "--n-shadow", "8", "--n-eval", "8", "--quiet",
        *options,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("privgame: ")
    assert not list(out.rglob("data.parquet")) and not list(out.glob("*"))


def test_a_failed_creation_removes_what_it_wrote(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame.store.files as store

    spec, table = small_spec(small_adult, generator="marginals")
    real = store.os.replace

    def full_disk(src: object, dst: object) -> None:
        if str(dst).endswith("spec.json"):
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(store.os, "replace", full_disk)
    with pytest.raises(
        OutputError, match=r"Cannot write .*spec.json: No space left on device; free some space"
    ):
        create_run(tmp_path / "runs", spec, table)
    assert list((tmp_path / "runs").iterdir()) == []


# -- group 16: bookkeeping --------------------------------------------------------------------------


def test_a_full_disk_while_the_results_are_written_ends_failed(
    small_adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame.store.files as store

    spec, table = small_spec(small_adult, generator="marginals", targets=TargetSelection("random", 2))
    folder = create_run(tmp_path, spec, table)
    real = store.atomic_write

    def full_disk(path: Path, data: bytes) -> None:
        if path.name in ("records.csv", "status.json") and folder.status().get("phase") == "results":
            raise write_error(path, OSError(errno.ENOSPC, "No space left on device"))
        real(path, data)

    monkeypatch.setattr(store, "atomic_write", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        execute(folder, workers=1)
    status = folder.status()
    assert status["state"] == "failed", status  # written in place: there was no room for a copy
    assert "records.csv" in status["error"] and "No space left" in status["error"]
    assert not list(folder.path.glob(".*.tmp"))


def test_write_errors_name_the_path_and_the_fix(small_adult: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    args = ["--generator", "marginals", "--n-shadow", "8", "--n-eval", "8", "--quiet", "--targets", "2"]
    done = cli("run", "--data", str(small_adult), "--out", str(a_file), *args)
    assert done.returncode == 2
    assert f"Cannot write {a_file}" in done.stderr and "cannot read" not in done.stderr
    assert "a file stands where a folder belongs" in done.stderr
    if os.geteuid() != 0:  # root writes anywhere
        read_only = tmp_path / "read-only"
        read_only.mkdir(mode=0o500)
        done = cli("run", "--data", str(small_adult), "--out", str(read_only), *args)
        assert done.returncode == 2 and "Cannot write" in done.stderr and "permissions" in done.stderr
    for code, fix in (
        (errno.ENOSPC, "free some space"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "permissions"),
    ):
        message = str(write_error(Path("/x/y"), OSError(code, os.strerror(code))))
        assert message.startswith("Cannot write /x/y: ") and fix in message
    done = cli("run", "--data", str(tmp_path), "--out", str(tmp_path / "runs"), *args)
    assert done.returncode == 2
    assert (
        f"{tmp_path} is not a regular file (a folder)" in done.stderr and "cannot read 3" not in done.stderr
    )


def test_workers_minus_one_records_the_real_count(tmp_path: Path, finished: RunFolder) -> None:
    cores = default_workers()
    assert resolve_workers(-1) == cores and resolve_workers(None) == cores and resolve_workers(3) == 3
    assert describe_executor(-1, None)["workers"] == cores
    assert describe_executor(-1, None)["executor"] == ("loky" if cores > 1 else "in-process")
    folder = RunFolder(shutil.copytree(finished.path, tmp_path / finished.run_id))
    (folder.path / "records.parquet").unlink()
    execute(folder, workers=-1)
    assert folder.status()["workers"] == cores


def test_the_cell_limit_applies_to_parquet_too(tmp_path: Path) -> None:
    from privgame.core.errors import DataError
    from privgame.data.loading import load_table

    long = "x" * 131_073
    for name, frame in {
        "plain": pd.DataFrame({"a": [1, 2], "note": ["short", long]}),
        "dictionary": pd.DataFrame({"a": [1, 2, 3], "note": pd.Categorical([long, "b", long])}),
    }.items():
        path = tmp_path / f"{name}.parquet"
        frame.to_parquet(path)
        with pytest.raises(
            DataError, match=r"column 'note' .* 131,073 characters, over the limit of 131,072"
        ):
            load_table(path)
    ok = tmp_path / "ok.parquet"
    pd.DataFrame({"a": [1], "note": ["é" * 131_072]}).to_parquet(ok)  # characters, not bytes
    assert len(load_table(ok)) == 1


def test_the_command_line_reports_a_raw_write_error_as_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import privgame.cli.main as cli_module

    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", "/out/records.csv")

    real = cli_module.build_parser

    def parser():  # type: ignore[no-untyped-def]
        built = real()
        for action in built._subparsers._group_actions:  # type: ignore[union-attr]
            action.choices["report"].set_defaults(handler=full)
        return built

    monkeypatch.setattr(cli_module, "build_parser", parser)
    assert cli_module.main(["report", "somewhere"]) == 2
    err = capsys.readouterr().err
    assert "Cannot write /out/records.csv: No space left on device; free some space" in err
    assert "cannot read" not in err
