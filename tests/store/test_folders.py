from __future__ import annotations

import gc
import io
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import bare_spec

from privgame.core.errors import RunError
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import RunFolder, atomic_write, list_runs, new_run_folder, open_run


def _spec() -> RunSpec:
    return bare_spec()


def test_create_run_writes_a_private_self_contained_folder(tmp_path: Path) -> None:
    table = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    folder = new_run_folder(tmp_path / "runs", _spec(), table)
    assert stat.S_IMODE(folder.path.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder.path / "spec.json").stat().st_mode) == 0o600
    assert folder.spec() == _spec()
    pd.testing.assert_frame_equal(folder.load_table(), table)
    assert folder.status()["state"] == "created"
    assert [info.run_id for info in list_runs(tmp_path / "runs")] == [folder.run_id]
    assert open_run(tmp_path / "runs", folder.run_id).path == folder.path


def test_shared_datasets_are_stored_narrow_and_restored_bit_for_bit(tmp_path: Path) -> None:
    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    rng = np.random.default_rng(0)
    m, n = 3, 50
    columns = [
        rng.integers(0, 5, (m, n)),  # category codes
        rng.integers(-100, 100, (m, n)),  # negative whole numbers
        rng.integers(0, 1_500_000, (m, n)),  # a wide range (fnlwgt)
        rng.integers(0, 2**40, (m, n)),  # beyond int32: float64 stays
        rng.normal(size=(m, n)),  # fractions: float64 stays
        rng.integers(0, 8, (m, n)) / 4,  # quarters: exact in float32
        np.where(rng.random((m, n)) < 0.5, -0.0, 0.0),  # not the integer 0: float32 keeps its sign
        np.where(rng.random((m, n)) < 0.5, np.nan, np.inf),
    ]
    datasets = np.stack([np.asarray(c, dtype=np.float64) for c in columns], axis=-1)
    folder.save_shared("shadow_out", 0, datasets)
    restored = folder.load_shared("shadow_out")
    assert restored.dtype == np.float64 and restored.shape == datasets.shape
    assert np.array_equal(restored.view(np.uint64), datasets.view(np.uint64))
    assert np.array_equal(folder.load_shared_chunk("shadow_out", 0).view(np.uint64), datasets.view(np.uint64))
    with np.load(folder.path / "shared" / "shadow_out-000000.npz") as stored:
        kinds = [stored[f"column_{j}"].dtype for j in range(len(columns))]
    assert kinds == [np.uint8, np.int8, np.int32, np.float64, np.float64, np.float32, np.float32, np.float32]


def test_shared_codes_take_a_byte_a_cell(tmp_path: Path) -> None:
    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    codes = np.random.default_rng(1).integers(0, 16, (20, 1000, 10)).astype(np.float64)
    folder.save_shared("ms_in", 0, codes)
    size = (folder.path / "shared" / "ms_in-000000.npz").stat().st_size
    assert size < codes.nbytes / 7  # float64 took 8 bytes a cell
    assert np.array_equal(folder.load_shared("ms_in"), codes)


def test_shared_checkpoints_of_one_float64_array_still_load(tmp_path: Path) -> None:
    # Run folders written before the column-by-column layout hold one "datasets" array.
    from privgame.store.checkpoints import shared_name
    from privgame.store.files import npz_bytes, write_checked

    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    old = np.random.default_rng(2).normal(size=(4, 6, 3))
    write_checked(folder.path, shared_name("shadow_out", 0), npz_bytes({"datasets": old}))
    folder.save_shared("shadow_out", 4, old + 1)
    assert np.array_equal(folder.load_shared("shadow_out"), np.concatenate([old, old + 1]))


def test_checkpoints_round_trip_and_are_listed(tmp_path: Path) -> None:
    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    folder.save_shared("shadow_out", 16, np.ones((2, 3, 4)))
    folder.save_shared("shadow_out", 0, np.zeros((16, 3, 4)))
    assert folder.shared_done("shadow_out", 0) and not folder.shared_done("ms_in", 0)
    stacked = folder.load_shared("shadow_out")
    assert stacked.shape == (18, 3, 4) and stacked[:16].sum() == 0 and stacked[16:].min() == 1
    folder.save_target(7, {"ms_scores": np.arange(4.0)})
    assert folder.finished_targets() == [7]
    assert np.array_equal(folder.load_target(7)["ms_scores"], np.arange(4.0))
    with pytest.raises(RunError, match="Record 8 was not evaluated"):
        folder.load_target(8)


def test_cancel_flag_and_results_guard(tmp_path: Path) -> None:
    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    assert not folder.cancel_requested()
    folder.request_cancel()
    assert folder.cancel_requested()
    folder.clear_cancel()
    assert not folder.cancel_requested()
    with pytest.raises(RunError, match="no results yet"):
        folder.records()


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    atomic_write(tmp_path / "f.txt", b"one")
    atomic_write(tmp_path / "f.txt", b"two")
    assert (tmp_path / "f.txt").read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_a_folder_without_spec_or_a_bad_run_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="not a privgame run folder"):
        RunFolder(tmp_path)
    with pytest.raises(RunError, match="not a run id"):
        open_run(tmp_path, "../../etc")


def test_summaries_with_infinite_epsilon_are_written_as_strict_json(tmp_path: Path) -> None:
    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    records = pd.DataFrame({"record_id": [0], "risk_model_seeded": [0.5]})
    scores = pd.DataFrame({"record_id": [0], "score": [0.5]})
    folder.write_results(
        records, scores, {"epsilon": float("inf"), "rate": float("nan"), "x": [np.float64(1.5)]}
    )
    assert folder.summary() == {"epsilon": "inf", "rate": None, "x": [1.5]}


def test_progress_is_the_share_of_generator_fits_done(tmp_path: Path) -> None:
    """Units differ in size (a shared chunk of 16 fits, a target's 200): progress counts fits, as
    the Evaluate page and the command line's bar do, so every page shows the same figure."""
    folder = new_run_folder(tmp_path, _spec(), pd.DataFrame({"a": [1]}))
    folder.write_status(state="running", done_units=97, total_units=100, fits_done=75, fits_total=100)
    (info,) = list_runs(tmp_path)
    assert info.progress == pytest.approx(0.75)
    folder.write_status(state="running", done_units=3, total_units=4, fits_done=None, fits_total=None)
    (info,) = list_runs(tmp_path)
    assert info.progress == pytest.approx(0.75)  # a status without fits: its units


def test_needs_engine_for_a_folder_never_started_or_whose_engine_died(tmp_path: Path) -> None:
    import json
    import time

    folder = new_run_folder(tmp_path / "runs", _spec(), pd.DataFrame({"a": [1, 2, 3]}))
    assert folder.needs_engine()  # created, never started
    status = folder.path / "status.json"
    cases = [
        ({"state": "queued", "updated": time.time()}, False),  # an engine is starting
        ({"state": "queued", "updated": time.time() - 3600}, True),  # it never started
        ({"state": "running", "updated": time.time()}, True),  # no engine holds the lock
        ({"state": "done", "updated": time.time() - 3600}, False),
        ({"state": "failed", "updated": time.time() - 3600}, True),  # resumed where it stopped
    ]
    for fields, expected in cases:
        status.write_text(json.dumps(fields))
        assert folder.needs_engine() is expected, fields
    with folder.claim():  # an engine holds it: never launched twice
        status.write_text(json.dumps({"state": "running", "updated": time.time() - 3600}))
        assert not folder.needs_engine()


def test_a_running_status_no_engine_holds_reads_as_failed_with_the_resume_command(tmp_path: Path) -> None:
    """The process that ran the run ended without writing why (SIGKILL, or a plug-in's os._exit):
    every later read says that the run failed and how to resume it, and leaves the file alone."""
    folder = new_run_folder(tmp_path / "runs", _spec(), pd.DataFrame({"a": [1, 2, 3]}))
    folder.write_status(state="running", fits_done=3, fits_total=10)
    assert folder.engine_gone()
    status = folder.current_status()
    assert status["state"] == "failed" and status["fits_done"] == 3
    assert f"resume it with: python -m privgame resume {folder.path}" in status["error"]
    with pytest.raises(RunError, match=r"failed: the process that ran it ended before the run finished"):
        folder.require_done()
    assert folder.status()["state"] == "running"  # only an engine writes the status
    with folder.claim():  # an engine holds it: it is running
        assert not folder.engine_gone()
        assert folder.current_status()["state"] == "running"
        with pytest.raises(RunError, match="is running; results exist only once it is done"):
            folder.require_done()
    for state in ("created", "cancelled", "failed", "done"):
        folder.write_status(state=state)
        assert not folder.engine_gone() and folder.current_status()["state"] == state


def test_an_interrupt_inside_a_checkpoints_encoding_stays_an_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C landing while ``np.savez`` closes its zip member once came out as zipfile's own
    ValueError ("Can't close the ZIP file while there is an open writing handle"), so ``extend``
    ended with status 1 and a traceback instead of its resume command."""
    import zipfile

    import numpy as np

    from privgame.store.files import npz_bytes, parquet_bytes

    real_close = zipfile._ZipWriteFile.close  # type: ignore[attr-defined]
    calls = []

    def interrupted_close(self: object) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real_close(self)

    monkeypatch.setattr(zipfile._ZipWriteFile, "close", interrupted_close)  # type: ignore[attr-defined]
    with pytest.raises(KeyboardInterrupt):
        npz_bytes({"a": np.arange(3)})
    # The zip member left open is collected now, not during a later compile (CPython 3.11 then
    # fails with "AST constructor recursion depth mismatch").
    gc.collect()
    monkeypatch.undo()
    assert np.load(io.BytesIO(npz_bytes({"a": np.arange(3)})))["a"].tolist() == [0, 1, 2]
    assert parquet_bytes(pd.DataFrame({"x": [1, 2]}))[:4] == b"PAR1"


def test_a_real_ctrl_c_during_an_encoding_arrives_once_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGINT sent while a checkpoint is encoded waits for the encoding to finish: inside zipfile
    it left an abandoned archive whose clean-up printed a traceback beside the resume command."""
    import os
    import signal
    import time

    import numpy as np

    from privgame.store import files

    real = np.savez
    finished = []

    def signalled_savez(buffer: object, **arrays: np.ndarray) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # without holding, the interrupt lands here, before the archive is written
        real(buffer, **arrays)
        finished.append(True)

    handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    monkeypatch.setattr(files.np, "savez", signalled_savez)
    with pytest.raises(KeyboardInterrupt):
        files.npz_bytes({"a": np.arange(3)})
    assert finished == [True]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
