"""Launching runs in the background: once, however often the launch is asked for."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from builders import at_once, small_spec

import privgame.runs.background as background
import privgame.games.preflight as preflight
from privgame.store.folders import RunFolder, iter_run_folders


def _launch_concurrently(root: Path, spec: object, table: object, clicks: int) -> list[tuple[str, bool]]:
    def click() -> tuple[str, bool]:
        folder, new = background.launch_once(root, spec, table)  # type: ignore[arg-type]
        return folder.run_id, new

    return at_once(click, clicks)


@pytest.fixture
def slow_creation(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``create_run`` slowed down (the generator check a second click falls into); ``launch`` only
    records which runs it would start."""
    started: list[str] = []
    real = preflight.create_run

    def create_slowly(*args: object, **kwargs: object) -> object:
        time.sleep(0.3)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(preflight, "create_run", create_slowly)

    def launch(folder: RunFolder, **kwargs: object) -> None:
        folder.write_status(state="queued")  # as the real launch does before its engine starts
        started.append(folder.run_id)

    monkeypatch.setattr(background, "launch", launch)
    return started


def test_clicks_answered_on_concurrent_threads_launch_one_run(
    small_adult: Path, tmp_path: Path, slow_creation: list[str]
) -> None:
    spec, table = small_spec(small_adult)
    made = _launch_concurrently(tmp_path, spec, table, clicks=3)
    assert len(made) == 3 and len({run_id for run_id, _ in made}) == 1
    assert sorted(new for _, new in made) == [False, False, True]
    assert [f.run_id for f in iter_run_folders(tmp_path)] == [made[0][0]]
    # Made once; a queued run whose engine never took it is stale only after two minutes.
    assert slow_creation == [made[0][0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [made[0][0]]  # no lock file left behind


def test_other_settings_or_a_finished_run_launch_a_new_run(
    small_adult: Path, tmp_path: Path, slow_creation: list[str]
) -> None:
    spec, table = small_spec(small_adult)
    first, new = background.launch_once(tmp_path, spec, table)
    assert new
    other, new_other = background.launch_once(tmp_path, dataclasses.replace(spec, seed=8), table)
    assert new_other and other.path != first.path
    first.write_status(state="done")
    again, new_again = background.launch_once(tmp_path, spec, table)
    assert new_again and again.path not in (first.path, other.path)


def test_a_created_run_asked_for_again_is_started_not_doubled(
    small_adult: Path, tmp_path: Path, slow_creation: list[str]
) -> None:
    spec, table = small_spec(small_adult)
    created = preflight.create_run(tmp_path, spec, table)  # e.g. a launch whose process died at once
    folder, new = background.launch_once(tmp_path, spec, table)
    assert not new and folder.path == created.path
    assert slow_creation == [created.run_id]  # resumed


def test_a_runs_folder_that_is_a_file_is_refused_in_words(small_adult: Path, tmp_path: Path) -> None:
    from privgame.core.errors import OutputError

    spec, table = small_spec(small_adult)
    not_a_folder = tmp_path / "runs"
    not_a_folder.write_text("a file where $PRIVGAME_RUNS points")
    with pytest.raises(OutputError, match="a file stands where a folder belongs"):
        background.launch_once(not_a_folder, spec, table)
    assert not_a_folder.read_text() == "a file where $PRIVGAME_RUNS points"
