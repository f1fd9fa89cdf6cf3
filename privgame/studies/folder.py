"""The study folder: create, list, open and launch studies; read their status and results."""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from privgame.core.errors import RunError
from privgame.settings.run_spec import TargetSelection
from privgame.store.files import parquet_bytes
from privgame.store.folders import (
    DAMAGED,
    CheckedFolder,
    RunFolder,
    append_checksum,
    atomic_write,
    json_bytes,
    launching,
    real_folders,
    refuse_link,
    remove_folder,
    sha256_hex,
    write_checked,
)
from privgame.studies.jobs import Job, _check_sizes, _resolve_targets, study_cost
from privgame.studies.spec import _STUDY_ID, StudySpec

__all__ = [
    "StudyFolder",
    "StudyInfo",
    "StudyResult",
    "create_study",
    "launch_study",
    "launch_study_once",
    "list_studies",
    "open_study",
    "studies_dir",
]

# --------------------------------------------------------------------------------------------
# The study folder
# --------------------------------------------------------------------------------------------


def studies_dir(runs_root: str | os.PathLike[str]) -> Path:
    """The folder that holds the study folders: ``<runs root>/studies``."""
    return Path(runs_root) / "studies"


@dataclass(frozen=True)
class StudyInfo:
    """What a list of studies shows of one study."""

    study_id: str
    path: Path
    study: str
    state: str
    created: float
    description: str
    progress: float


@dataclass(frozen=True)
class StudyResult:
    """A study's numbers.

    Attributes
    ----------
    table : DataFrame
        The study's table: one row per value of the varied setting.
    points : DataFrame
        The numbers behind the figure: one row per record and value (``size``, ``epsilon``), per
        dataset (``datasets``) or per record, repeat, game and N_eval (``convergence``).
    jobs_done, jobs_total : int
        Finished jobs and all jobs; the result is partial while they differ.
    """

    table: pd.DataFrame
    points: pd.DataFrame
    jobs_done: int
    jobs_total: int

    @property
    def complete(self) -> bool:
        """Whether every job is finished."""
        return self.jobs_done == self.jobs_total


class StudyFolder(CheckedFolder):
    """Read and write one study folder.

    Parameters
    ----------
    path : path-like
        The study folder (it must hold ``study.json``, and not be a symbolic link).
    """

    kind = "study"
    inputs = ("study.json", "data.parquet")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        refuse_link(self.path, "study")
        if not (self.path / "study.json").is_file():
            raise RunError(
                f"{self.path} is not a privgame study folder (it has no study.json); give the "
                "folder a study was written to (under <runs>/studies/)."
            )

    @property
    def study_id(self) -> str:
        """The folder's name."""
        return self.path.name

    def _fix(self, relative: str) -> str:
        if relative in self.inputs:
            return "the study cannot be used: start a new study from the original data file."
        return f"resume the study to write it again: python -m privgame study resume {self.path}"

    def spec(self) -> StudySpec:
        """The study's settings (``study.json``, checked against its checksum)."""
        data = self._read_checked("study.json")
        try:
            return StudySpec.from_dict(json.loads(data))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise RunError(
                f"{self.path / 'study.json'} is corrupt ({exc}); the study cannot be read."
            ) from None

    def load_table(self) -> pd.DataFrame:
        """The prepared table the study audits (``data.parquet``, checked against its checksum)."""
        data = self._read_checked("data.parquet")
        try:
            return pd.read_parquet(io.BytesIO(data))
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise RunError(
                f"data.parquet of study {self.study_id} is unreadable ({type(exc).__name__}); "
                f"{self._fix('data.parquet')}"
            ) from None

    def delete(self) -> None:
        """Remove the study folder and every run in it (a symbolic link: the link only).

        Raises
        ------
        RunError
            When a process is running the study, or the folder cannot be removed.
        """
        if self.is_running():
            raise RunError(f"Study {self.study_id} is running; cancel it before deleting it.")
        remove_folder(self.path, f"study {self.study_id}")

    def job_folder(self, job: Job) -> RunFolder:
        """The run folder of ``job``, created (spec and table, checksummed) if it does not exist yet.

        A job folder whose ``spec.json`` or ``data.parquet`` is missing or does not match its
        checksum (a study killed while creating it) gets them written again: both follow from the
        study's own, checked, files.
        """
        path = self.path / "runs" / job.key
        if (path / "spec.json").is_file():
            folder = RunFolder(path)
            if folder._intact("data.parquet") and folder._intact("spec.json"):
                return folder
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        table = self._read_checked("data.parquet")
        data = path / "data.parquet"
        with contextlib.suppress(FileNotFoundError):
            data.unlink()
        try:
            os.link(self.path / "data.parquet", data)  # the study's, checked just above
        except OSError:  # another file system, or links not allowed
            atomic_write(data, table)
        append_checksum(path, "data.parquet", sha256_hex(table))
        if not (path / "status.json").is_file():
            folder_status = {"state": "created", "created": time.time(), "done_units": 0, "total_units": None}
            atomic_write(path / "status.json", json_bytes(folder_status))
        write_checked(path, "spec.json", job.spec.to_json().encode())
        return RunFolder(path)

    def job_done(self, job: Job) -> bool:
        """Whether ``job`` has its results (a symbolic link in place of its folder has none)."""
        path = self.path / "runs" / job.key
        return (
            not path.is_symlink()
            and (path / "records.parquet").is_file()
            and RunFolder(path).status().get("state") == "done"
        )

    def has_results(self) -> bool:
        """Whether the final table was written."""
        return (self.path / "table.csv").is_file()

    def info(self) -> StudyInfo:
        """A short description for lists (state ``damaged`` when the status or study.json is)."""
        status = self.status()
        state = str(status.get("state", "created"))
        try:
            spec = self.spec()
            name, description = spec.study, spec.describe()
        except RunError as error:
            name, description = "?", f"unreadable study.json: {error}"
            state = DAMAGED
        if status.get("state") == DAMAGED:
            description = str(status.get("error"))
        total = status.get("fits_total") or 0
        created = status.get("created")
        if created is None:
            try:
                created = (self.path / "study.json").stat().st_mtime
            except OSError:
                created = 0.0
        return StudyInfo(
            study_id=self.study_id,
            path=self.path,
            study=name,
            state=state,
            created=float(created),
            description=description,
            progress=min(1.0, (status.get("fits_done") or 0) / total) if total else 0.0,
        )


def create_study(runs_root: str | os.PathLike[str], spec: StudySpec, table: pd.DataFrame) -> StudyFolder:
    """Validate ``spec`` against ``table``, resolve its targets, and write a new study folder.

    Parameters
    ----------
    runs_root : path-like
        The folder that holds run folders; the study goes to ``<runs_root>/studies/<id>``.
    spec : StudySpec
    table : DataFrame
        The prepared table (as :func:`privgame.data.load_dataset` returns it).

    Returns
    -------
    StudyFolder
        The new study (state ``created``); run it with :func:`execute_study`.

    Raises
    ------
    ParameterError, SizeError
        For settings that do not fit the study or the table.
    """
    spec.validate()
    _check_sizes(spec, len(table))
    ids = _resolve_targets(spec, table)
    resolved = replace(spec, base=replace(spec.base, targets=TargetSelection(mode="ids", k=None, ids=ids)))
    root = studies_dir(runs_root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for _ in range(10):
        path = root / f"{stamp}-{spec.study}-{secrets.token_hex(3)}"
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - ten random collisions in one second
        raise RunError(f"Could not create a new study folder under {root}.")
    try:
        write_checked(path, "data.parquet", parquet_bytes(table))
        write_checked(path, "study.json", resolved.to_json().encode())
        folder = StudyFolder(path)
        cost = study_cost(resolved)
        folder.write_status(state="created", created=time.time(), fits_done=0, fits_total=cost["fits"])
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)  # no half-made study, and no stray copy of the table
        raise
    return folder


def list_studies(runs_root: str | os.PathLike[str]) -> list[StudyInfo]:
    """Every study under ``<runs_root>/studies``, newest first."""
    root = studies_dir(runs_root)
    if root.is_symlink() or not root.is_dir():
        return []  # a link is never followed out of the runs folder
    found = [
        StudyFolder(p).info()
        for p in real_folders(root)
        if _STUDY_ID.match(p.name) and (p / "study.json").is_file()
    ]
    return sorted(found, key=lambda i: i.created, reverse=True)


def open_study(runs_root: str | os.PathLike[str], study_id: str) -> StudyFolder:
    """Open the study ``study_id`` under ``<runs_root>/studies``."""
    if not _STUDY_ID.match(study_id):
        raise RunError(f"{study_id!r} is not a study id (expected e.g. 20261130-101500-size-1a2b3c).")
    return StudyFolder(studies_dir(runs_root) / study_id)


def launch_study(folder: StudyFolder, *, workers: int | None = None) -> int:
    """Run the study in a detached ``python -m privgame study resume`` process; return its pid."""
    command = [sys.executable, "-m", "privgame", "study", "resume", str(folder.path), "--quiet"]
    if workers:
        command += ["--workers", str(int(workers))]
    from privgame.runs.background import start_detached

    folder.write_status(state="queued")
    pid = start_detached(folder.path / "engine.log", command)
    folder.write_status(state="queued", pid=pid)
    return pid


def launch_study_once(
    runs_root: str | os.PathLike[str], spec: StudySpec, table: pd.DataFrame, *, workers: int | None = None
) -> tuple[StudyFolder, bool]:
    """Create a study (:func:`create_study`) and start it (:func:`launch_study`), once.

    A study under ``runs_root`` made from the same request (the same settings on the same table)
    that is not finished is that start asked for again, by a second click answered on another
    thread or by a reload: it is returned instead of a duplicate, and resumed if it was never
    started. Looking for it and making it hold the studies folder's launch lock
    (:func:`privgame.store.folders.launching`).

    Returns
    -------
    folder : StudyFolder
    new : bool
        Whether it was made now.
    """
    from privgame.data import fingerprint_table

    request = sha256_hex(spec.to_json().encode() + fingerprint_table(table).encode())
    root = studies_dir(runs_root)
    with launching(root):
        for path in real_folders(root):
            if not (_STUDY_ID.match(path.name) and (path / "study.json").is_file()):
                continue
            other = StudyFolder(path)
            status = other.status()
            state = status.get("state")
            if status.get("request") == request and state in ("created", "queued", "running"):
                if other.needs_engine():
                    launch_study(other, workers=workers)
                return other, False
        folder = create_study(runs_root, spec, table)
        folder.write_status(request=request)
        launch_study(folder, workers=workers)
        return folder, True
