"""The run store: one folder per run, written atomically, readable by its owner only.

This module holds :class:`RunFolder` and the runs folder (creating, listing, opening runs); the
bytes on disk are :mod:`privgame.store.files`' (atomic writes, the checksum log, encodings), the
checkpoints' names and encodings :mod:`privgame.store.checkpoints`', ``status.json`` and
``engine.lock`` :mod:`privgame.store.status`', and reads through the checksum log
:mod:`privgame.store.checked`'. The names the rest of privgame uses are re-exported here.

Layout of a run folder::

    spec.json            the frozen RunSpec (see privgame.settings.run_spec)
    data.parquet         the prepared table the run audits (so a run is self-contained)
    status.json          state, progress, executor, timings, error message
    cancel               present when a cancel was requested
    engine.lock          locked (flock) by the engine working on the run, while it works
    plan.json            the unit plan: datasets per shared checkpoint, targets per task
    shared/              checkpoints of the shared synthetic datasets (shadow 'out', model-seeded 'in')
    targets/             one checkpoint per evaluated target record: scores and labels of both games
    pool/                checkpoints of the pooled traditional game (see privgame.games.pool)
    attacks/             a remedy run's trained attacks, copied from its parent (see privgame.runs.remedy)
    scores.parquet       every score: record_id, game, label, index, score
    records.parquet/csv  one row per evaluated record: values, risks, bounds, difference
    summary.json         the Table-1 style summary at the spec's threshold
    utility.json         the utility figures (privgame.analysis.utility), once measured
    anonymity.json       anonymeter's three risks (privgame.analysis.anonymity), once measured
    checksums.sha256     the SHA-256 of every file above except status.json, cancel and engine.lock

Every file is written to a temporary name in the same folder, flushed, then renamed, so no
reader ever sees half a file. After the rename its SHA-256 is appended to ``checksums.sha256``
(one ``<hex>  <relative path>`` line per write, the format ``sha256sum -c`` reads; the last line
for a path wins), and every read of a file the store trusts checks it: a file that does not match,
or has no line (the engine was killed between the rename and the append, or the line was
removed), raises :class:`~privgame.core.errors.RunError` naming the file and the fix, and a checkpoint
that does not match counts as not done, so resuming the run recomputes it. A folder without
``checksums.sha256`` has no trusted file at all.

``status.json`` changes after every unit and is not checksummed; it is checked against a schema
when read (:func:`status_problem`), and a status that does not fit reads as the state
``"damaged"`` with the reason, so one damaged run never breaks a list of runs. The unit plan (how
many datasets each shared checkpoint holds) is kept in the checksummed ``plan.json``, so that a
damaged status can never make a resumed run mix checkpoints of two plans.

An engine claims a folder by holding an exclusive :func:`fcntl.flock` on ``engine.lock`` for as
long as it works on it (:meth:`privgame.store.status.StatusFolder.claim`). The kernel releases
the lock when the process dies, however it dies, so a claim can neither outlive its holder nor be
confused with another process that happens to get the same PID later; "is an engine running on
this folder?" is answered by trying the lock (:meth:`~privgame.store.status.StatusFolder.is_running`),
never by looking up a PID.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.errors import RunError
from privgame.settings.run_spec import RunSpec
from privgame.store.checked import CheckedFolder, refuse_link
from privgame.store.checkpoints import (
    SyntheticTables,
    attack_name,
    datasets_from,
    pool_name,
    safe_role,
    screen_name,
    shared_arrays,
    shared_name,
    tables_from,
    target_name,
)
from privgame.store.files import (
    CHECKSUMS,
    append_checksum,
    atomic_write,
    json_bytes,
    npz_bytes,
    parquet_bytes,
    read_parquet_bytes,
    sha256_hex,
    write_checked,
    write_error,
)
from privgame.store.status import DAMAGED, LOCK, fcntl, is_count, is_number, status_problem

__all__ = [
    "CHECKSUMS",
    "DAMAGED",
    "LOCK",
    "PLAN",
    "RunFolder",
    "RunInfo",
    "append_checksum",
    "atomic_write",
    "default_runs_root",
    "launching",
    "list_runs",
    "new_run_folder",
    "real_folders",
    "refuse_link",
    "remove_folder",
    "run_name_part",
    "sha256_hex",
    "status_problem",
    "symlinked_entries",
    "write_checked",
    "write_error",
]

_RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[a-z0-9_]+-[0-9a-f]{6}$")
_GENERATOR_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")

PLAN = "plan.json"
UTILITY = "utility.json"
ANONYMITY = "anonymity.json"
SIMILARITY = "similarity.json"
SCREEN = "screen.parquet"
_SHARED_FILE = re.compile(r"^([a-z_]{1,32})-([0-9]{6,})\.npz$")
_PLAN_KEYS = ("shadow_out", "ms_in", "targets")


def default_runs_root() -> Path:
    """``$PRIVGAME_RUNS`` if set, else ``./runs``."""
    return Path(os.environ.get("PRIVGAME_RUNS", "runs"))


@dataclass(frozen=True)
class RunInfo:
    """What the runs list shows of one run.

    ``state`` is :data:`DAMAGED` when the run's ``status.json`` or ``spec.json`` is damaged;
    ``problem`` then says what is wrong and what to do.
    """

    run_id: str
    path: Path
    state: str
    created: float
    generator: str
    data_name: str
    n_targets: int | None
    progress: float
    problem: str | None = None


class RunFolder(CheckedFolder):
    """Read and write one run folder.

    Parameters
    ----------
    path : path-like
        The run folder (it must exist, hold ``spec.json``, and not be a symbolic link).
    """

    inputs = ("spec.json", "data.parquet")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        refuse_link(self.path, "run")
        if not (self.path / "spec.json").is_file():
            raise RunError(
                f"{self.path} is not a privgame run folder (it has no spec.json); "
                "give the folder a run was written to."
            )

    @property
    def run_id(self) -> str:
        """The folder's name."""
        return self.path.name

    def _fix(self, relative: str) -> str:
        if relative == PLAN:
            return (
                "its checkpoints of shared datasets cannot be matched to their units any more: delete "
                f"{self.path / 'shared'} and resume the run, which makes them again (the targets' "
                f"checkpoints are kept): python -m privgame resume {self.path}"
            )
        if relative == UTILITY:
            return f"measure it again: python -m privgame utility {self.path}"
        if relative == ANONYMITY:
            return f"measure it again: python -m privgame anonymity {self.path}"
        return super()._fix(relative)

    # -- spec and data -------------------------------------------------------------------
    def spec(self) -> RunSpec:
        """The frozen run spec."""
        data = self._read_checked("spec.json")
        try:
            return RunSpec.from_json(data.decode())
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise RunError(f"{self.path / 'spec.json'} is corrupt ({exc}); the run cannot be read.") from None

    def write_spec(self, spec: RunSpec) -> None:
        """Replace the spec (only :func:`privgame.games.engine.extend` does: more evaluation runs)."""
        write_checked(self.path, "spec.json", spec.to_json().encode())

    def load_table(self) -> pd.DataFrame:
        """The prepared table the run audits."""
        data = self._read_checked("data.parquet")
        try:
            return read_parquet_bytes(data)
        except Exception as exc:  # pyarrow raises several unrelated types for a corrupt file
            raise RunError(
                f"data.parquet of run {self.run_id} is unreadable ({type(exc).__name__}); the run "
                "cannot be used: start a new run from the original data file."
            ) from None

    # -- the unit plan ----------------------------------------------------------------------
    def unit_plan(self) -> dict[str, Any] | None:
        """The run's unit plan from ``plan.json`` (checked), or None when none was written yet.

        Raises
        ------
        RunError
            When ``plan.json`` does not match its checksum, has none, or does not hold a plan.
        """
        try:
            data = self._read_checked(PLAN)
        except FileNotFoundError:
            return None
        try:
            plan = json.loads(data)
        except (ValueError, RecursionError):
            plan = None
        if not (isinstance(plan, dict) and all(is_count(plan.get(k)) and plan[k] >= 1 for k in _PLAN_KEYS)):
            raise RunError(f"{PLAN} of run {self.run_id} does not hold a unit plan; {self._fix(PLAN)}")
        return plan

    def write_unit_plan(self, plan: Mapping[str, Any]) -> None:
        """Write the unit plan once, before the first checkpoint (``plan.json``, checksummed)."""
        write_checked(self.path, PLAN, json_bytes(dict(plan)))

    def shared_starts(self, role: str) -> list[int]:
        """The first dataset index of every checkpoint file of ``role``, sorted (names only)."""
        role = safe_role(role)
        starts = []
        for path in (self.path / "shared").glob(f"{role}-*.npz"):
            match = _SHARED_FILE.match(path.name)
            if match and match.group(1) == role:
                starts.append(int(match.group(2)))
        return sorted(starts)

    # -- checkpoints ----------------------------------------------------------------------
    def save_shared(self, role: str, start: int, datasets: np.ndarray) -> None:
        """Checkpoint shared synthetic datasets ``start .. start + len(datasets)`` of ``role``."""
        write_checked(self.path, shared_name(role, start), npz_bytes(shared_arrays(datasets)))

    def shared_done(self, role: str, start: int) -> bool:
        """Whether that chunk is checkpointed and matches its checksum (else it is recomputed)."""
        return self._intact(shared_name(role, start))

    def load_shared(self, role: str) -> np.ndarray:
        """Every checkpointed chunk of ``role`` in index order, as one float64 (m, n, d) array
        (:meth:`load_tables` holds them in a fifth of the memory or less).

        Raises
        ------
        RunError
            As :meth:`load_tables`.
        """
        return np.asarray(self.load_tables(role))

    def load_tables(self, role: str) -> SyntheticTables:
        """Every checkpointed chunk of ``role`` in index order, column by column in its narrow dtype.

        The chunks must follow each other without overlap or gap (each starts where the one
        before it ends), as the chunks of one unit plan do; chunks of two plans are never mixed.

        Raises
        ------
        RunError
            When there is none, one does not match its checksum, or they do not fit together.
        """
        starts = self.shared_starts(role)
        if not starts:
            raise RunError(f"No shared datasets {role!r} in {self.path}; run the engine first.")

        def chunks() -> Iterator[dict[str, np.ndarray]]:
            made = 0
            for start in starts:
                if start != made:
                    raise RunError(
                        f"The checkpoints of the shared datasets {role!r} of run {self.run_id} do not "
                        f"fit together: one starts at dataset {start}, the ones before it end at {made} "
                        f"(they were made with two different unit plans); {self._fix(PLAN)}"
                    )
                arrays = self._load_npz(shared_name(role, start))
                made += int(arrays["shape"][0]) if "shape" in arrays else len(arrays["datasets"])
                yield arrays

        return tables_from(chunks())

    def load_shared_chunk(self, role: str, start: int) -> np.ndarray:
        """The datasets of one checkpointed chunk of ``role`` (checked against its checksum)."""
        return datasets_from(self._load_npz(shared_name(role, start)))

    def save_target(self, record_id: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one evaluated target."""
        write_checked(self.path, target_name(record_id), npz_bytes(arrays))

    def target_done(self, record_id: int) -> bool:
        """Whether that target is checkpointed and matches its checksum (else it is recomputed)."""
        return self._intact(target_name(record_id))

    def load_target(self, record_id: int) -> dict[str, np.ndarray]:
        """The checkpoint of one target (scores, labels, reference ids, timings).

        Raises
        ------
        RunError
            When the target was not evaluated, or its checkpoint does not match its checksum.
        """
        relative = target_name(record_id)
        if not (self.path / relative).is_file():
            raise RunError(f"Record {record_id} was not evaluated in run {self.run_id}.")
        return self._load_npz(relative)

    def _load_npz(self, relative: str) -> dict[str, np.ndarray]:
        data = self._read_checked(relative)
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                return {k: arrays[k] for k in arrays.files}
        except Exception as exc:  # a legacy folder's file, unchecked and damaged
            raise RunError(
                f"{relative} of run {self.run_id} is unreadable ({type(exc).__name__}); resume the "
                f"run to recompute it after deleting the file: python -m privgame resume {self.path}"
            ) from None

    def save_attack(self, record_id: int, classifier: np.ndarray) -> None:
        """Store a target's trained attack (pickled meta-classifier bytes) for the engine to reuse."""
        write_checked(self.path, attack_name(record_id), npz_bytes({"classifier": classifier}))

    def load_attack(self, record_id: int) -> np.ndarray | None:
        """A stored attack of ``record_id``, or None when there is none or it fails its checksum
        (the engine then trains it, which gives the same classifier)."""
        if not self._intact(attack_name(record_id)):
            return None
        return self._load_npz(attack_name(record_id))["classifier"]

    def save_pool(self, name: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint one unit of the pooled traditional game as ``pool/<name>.npz``."""
        write_checked(self.path, pool_name(name), npz_bytes(arrays))

    def pool_names(self) -> list[str]:
        """Names of every pool checkpoint present (intact or not), sorted."""
        folder = self.path / "pool"
        return sorted(p.stem for p in folder.glob("*.npz")) if folder.is_dir() else []

    def load_pool(self, name: str) -> dict[str, np.ndarray] | None:
        """A pool checkpoint, or None when it does not match its checksum (it is then recomputed)."""
        relative = pool_name(name)
        try:
            data = (self.path / relative).read_bytes()
        except FileNotFoundError:
            return None
        if self._checksum_problem(relative, data) is not None:
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                return {k: arrays[k] for k in arrays.files}
        except Exception:  # a legacy folder's file, unchecked and damaged: recompute it
            return None

    # -- the screen (privgame.games.screen) ------------------------------------------------
    def save_screen_chunk(self, start: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Checkpoint screening datasets ``start ..`` (every record's statistics on each)."""
        write_checked(self.path, screen_name(start), npz_bytes(arrays))

    def screen_chunk_done(self, start: int) -> bool:
        """Whether that screening chunk is checkpointed and intact (else it is recomputed)."""
        return self._intact(screen_name(start))

    def load_screen_chunk(self, start: int) -> dict[str, np.ndarray]:
        """One checkpointed screening chunk (checked against its checksum)."""
        return self._load_npz(screen_name(start))

    def write_screen(self, screened: pd.DataFrame) -> None:
        """Write the screen's per-record table (``screen.parquet``)."""
        write_checked(self.path, SCREEN, parquet_bytes(screened))

    def has_screen(self) -> bool:
        """Whether the run screened every record and wrote the table."""
        return (self.path / SCREEN).is_file()

    def screen(self) -> pd.DataFrame:
        """The screen's per-record table: one row per record of D.

        Raises
        ------
        RunError
            When the run has no screen (``--screen none``, or it has not finished screening), or
            the table does not match its checksum.
        """
        if not self.has_screen():
            raise RunError(
                f"Run {self.run_id} has no screen: it was started with --screen none, or has not finished "
                f"screening (resume it with: python -m privgame resume {self.path})."
            )
        return self._read_parquet(SCREEN)

    def finished_targets(self) -> list[int]:
        """Record ids of every checkpointed target (with a recorded checksum)."""
        folder = self.path / "targets"
        if not folder.is_dir():
            return []
        ids = sorted(int(p.stem) for p in folder.glob("*.npz") if p.stem.isdigit())
        checksums = self._checksums() or {}
        return [i for i in ids if target_name(i) in checksums]

    # -- results ------------------------------------------------------------------------
    def write_results(self, records: pd.DataFrame, scores: pd.DataFrame, summary: Mapping[str, Any]) -> None:
        """Write the final per-record results, every score and the summary.

        ``records.parquet`` is written last, so that :meth:`has_results` implies the others exist.
        """
        write_checked(self.path, "scores.parquet", parquet_bytes(scores))
        write_checked(self.path, "summary.json", json_bytes(dict(summary)))
        from privgame.core.csvsafe import csv_safe  # a spreadsheet must not run a record's text

        write_checked(
            self.path,
            "records.csv",
            csv_safe(records).to_csv(index=False, lineterminator="\n").encode(),
        )
        write_checked(self.path, "records.parquet", parquet_bytes(records))

    def has_results(self) -> bool:
        """Whether the final results are written."""
        return (self.path / "records.parquet").is_file()

    def is_done(self) -> bool:
        """Whether the run finished: its state is ``done`` and its results are written."""
        return self.status().get("state") == "done" and self.has_results()

    def current_status(self) -> dict[str, Any]:
        """:meth:`status` as it stands: a run whose engine is gone (:meth:`engine_gone`) reads as
        ``failed``, its ``error`` saying so and how to resume it.

        Its ``status.json`` is left as it is: only an engine that holds the run writes it.
        """
        status = self.status()
        if status.get("state") == "running" and self.engine_gone():
            status = {**status, "state": "failed", "error": self._gone()}
        return status

    def _gone(self) -> str:
        return (
            f"Run {self.run_id} failed: the process that ran it ended before the run finished, "
            "without recording why (it was killed or interrupted, or the generator ended the "
            "process itself, as a plug-in calling os._exit does). Its finished units are kept; "
            f"resume it with: python -m privgame resume {self.path}"
        )

    def require_done(self, *, what: str = "results exist") -> None:
        """Raise a clear error, with the command that finishes the run, unless it is done.

        Raises
        ------
        RunError
            ``"Run … is running; results exist only once it is done (resume it with: …)"``, with
            ``what`` in place of "results exist"; for a run whose engine is gone, that it failed.
        """
        if not self.is_done():
            if self.engine_gone():
                raise RunError(self._gone())
            state = self.status().get("state")
            if state == "done":  # its status says done, but its results are gone
                raise RunError(
                    f"Run {self.run_id} is marked done but its results (records.parquet) are missing; "
                    f"resume it to write them again from its checkpoints: python -m privgame resume "
                    f"{self.path}"
                )
            raise RunError(
                f"Run {self.run_id} is {state}; {what} only once it is done "
                f"(resume it with: python -m privgame resume {self.path})."
            )

    def records(self) -> pd.DataFrame:
        """The per-record results.

        Raises
        ------
        RunError
            When the run has no results yet, or ``records.parquet`` does not match its checksum.
        """
        if not self.has_results():
            raise RunError(f"Run {self.run_id} has no results yet (state: {self.status().get('state')}).")
        from privgame.core.records import normalise_records  # an older run's layout, read as today's

        return normalise_records(self._read_parquet("records.parquet"))

    def scores(self) -> pd.DataFrame:
        """Every attack score of the run: record_id, game, label, index, score."""
        if not (self.path / "scores.parquet").is_file():
            raise RunError(f"Run {self.run_id} has no scores yet.")
        return self._read_parquet("scores.parquet")

    def _read_parquet(self, relative: str) -> pd.DataFrame:
        data = self._read_checked(relative)
        try:
            return read_parquet_bytes(data)
        except Exception as exc:  # a legacy folder's file, unchecked and damaged
            raise RunError(
                f"{relative} of run {self.run_id} is unreadable ({type(exc).__name__}); resume the "
                f"run to rewrite it: python -m privgame resume {self.path}"
            ) from None

    def summary(self) -> dict[str, Any]:
        """The summary written at the end of the run."""
        try:
            data = self._read_checked("summary.json")
        except FileNotFoundError:
            raise RunError(f"Run {self.run_id} has no summary yet.") from None
        try:
            return json.loads(data)
        except ValueError:
            raise RunError(
                f"summary.json of run {self.run_id} is unreadable; resume the run to rewrite it: "
                f"python -m privgame resume {self.path}"
            ) from None

    # -- utility ------------------------------------------------------------------------
    def write_utility(self, utility: Mapping[str, Any]) -> None:
        """Write the run's utility figures (``utility.json``, checksummed; see
        :mod:`privgame.analysis.utility`)."""
        write_checked(self.path, UTILITY, json_bytes(dict(utility)))

    def read_utility(self) -> dict[str, Any] | None:
        """The stored utility figures, or None when none were measured.

        Raises
        ------
        RunError
            When ``utility.json`` does not match its checksum, has none, or is not a JSON object.
        """
        try:
            data = self._read_checked(UTILITY)
        except FileNotFoundError:
            return None
        try:
            utility = json.loads(data)
        except (ValueError, RecursionError):
            utility = None
        if not isinstance(utility, dict):
            raise RunError(f"{UTILITY} of run {self.run_id} is unreadable; {self._fix(UTILITY)}")
        return utility

    # -- the three risks (anonymeter) ---------------------------------------------------
    def write_anonymity(self, anonymity: Mapping[str, Any]) -> None:
        """Write anonymeter's three risks of the run's release (``anonymity.json``, checksummed;
        see :mod:`privgame.analysis.anonymity`)."""
        write_checked(self.path, ANONYMITY, json_bytes(dict(anonymity)))

    def read_anonymity(self) -> dict[str, Any] | None:
        """The stored three risks, or None when they were never measured.

        Raises
        ------
        RunError
            When ``anonymity.json`` does not match its checksum, has none, or is not a JSON object.
        """
        try:
            data = self._read_checked(ANONYMITY)
        except FileNotFoundError:
            return None
        try:
            figures = json.loads(data)
        except (ValueError, RecursionError):
            figures = None
        if not isinstance(figures, dict):
            raise RunError(f"{ANONYMITY} of run {self.run_id} is unreadable; {self._fix(ANONYMITY)}")
        return figures

    # -- the release's similarity checks -------------------------------------------------
    def write_similarity(self, similarity: Mapping[str, Any]) -> None:
        """Write the audited release's similarity figures (``similarity.json``, checksummed; see
        :mod:`privgame.games.closeness`)."""
        write_checked(self.path, SIMILARITY, json_bytes(dict(similarity)))

    def read_similarity(self) -> dict[str, Any] | None:
        """The stored similarity figures, or None when none were measured (or they are damaged:
        the engine measures them again).
        """
        try:
            data = self._read_checked(SIMILARITY)
        except (FileNotFoundError, RunError):
            return None
        try:
            similarity = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return similarity if isinstance(similarity, dict) else None

    def damage(self) -> str | None:
        """What is wrong with the run's status or spec (the fix included), or None when both read."""
        status = self.status()
        if status.get("state") == DAMAGED:
            return str(status.get("error"))
        try:
            self.spec()
        except RunError as error:
            return str(error)
        return None

    def info(self) -> RunInfo:
        """A short description for lists (state :data:`DAMAGED` when the status or spec is)."""
        status = self.status()
        state = str(status.get("state", "created"))
        problem = status.get("error") if state == DAMAGED else None
        try:
            spec = self.spec()
            generator, data_name = spec.generator, spec.data_name
        except RunError as error:
            generator, data_name = "?", "?"
            state, problem = DAMAGED, problem or str(error)
        created = status.get("created")
        if not is_number(created):
            try:
                created = (self.path / "spec.json").stat().st_mtime
            except OSError:
                created = 0.0
        # Progress is counted in generator fits everywhere (the pages, the command line's bar):
        # units differ in size, so a share of units is not a share of the work.
        total = status.get("fits_total") or status.get("total_units") or 0
        done = status.get("fits_done") if status.get("fits_total") else status.get("done_units")
        if status.get("phase") == "screen" and status.get("screen_total"):
            # The screen of every record runs first, one fit per screening dataset.
            total, done = status.get("screen_total"), status.get("screen_done")
        done = done or 0
        return RunInfo(
            run_id=self.run_id,
            path=self.path,
            state=state,
            created=float(created),
            generator=generator,
            data_name=data_name,
            n_targets=status.get("n_targets"),
            progress=min(1.0, done / total) if total else 0.0,
            problem=problem,
        )

    def delete(self) -> None:
        """Remove the run folder and everything in it (a symbolic link: the link only).

        Raises
        ------
        RunError
            When an engine is running the run, or the folder cannot be removed.
        """
        status = self.status()
        if self.is_running() or (status.get("state") in ("queued", "running") and not self.status_is_stale()):
            raise RunError(f"Run {self.run_id} is running; cancel it before deleting it.")
        remove_folder(self.path, f"run {self.run_id}")


def remove_folder(path: Path, what: str) -> None:
    """Remove ``path`` (a symbolic link: only the link), turning an OS error into a RunError.

    Raises
    ------
    RunError
        When the folder cannot be removed completely, naming what to do.
    """
    try:
        if path.is_symlink():
            path.unlink()
        else:
            shutil.rmtree(path)
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        raise RunError(
            f"Could not delete {what} completely: {error.strerror or error}{where}; check the "
            f"permissions of {path} and remove what is left by hand."
        ) from None


def _id_generator(name: str) -> str | None:
    """The generator's part of a run id, or None when ``name`` cannot give one.

    A registered name is used as it is. A plug-in (``module.path:ClassName``, or an installed
    entry point whose name is not ``[a-z0-9_]``) becomes ``plugin_<class or entry point name>``,
    lower-cased with every other character run replaced by ``_``; the spec keeps the full name.
    """
    if _GENERATOR_NAME.match(name):
        return name
    if ":" in name:
        label = name.rpartition(":")[2].rpartition(".")[2]
    else:
        from privgame.generators import installed_plugins

        if name not in installed_plugins():
            return None
        label = name
    slug = _NOT_SLUG.sub("_", label.lower()).strip("_")
    return f"plugin_{slug}"[:64].rstrip("_") if slug else "plugin"


def run_name_part(generator: str) -> str:
    """The part of a run folder's name that names its generator (see :func:`new_run_folder`).

    Raises
    ------
    RunError
        When the generator name could not be part of a folder name.
    """
    part = _id_generator(generator)
    if part is None:
        raise RunError(
            f"Generator name {generator!r} cannot name a run folder; generator names use "
            "only lower-case letters, digits and underscores, and plug-ins are named module.path:ClassName."
        )
    return part


def new_run_folder(root: str | os.PathLike[str], spec: RunSpec, table: pd.DataFrame) -> RunFolder:
    """Write a new run folder under ``root`` holding ``spec`` and the prepared ``table``.

    Nothing is checked here but what the folder itself needs: a run is created with
    :func:`privgame.games.preflight.create_run`, which checks first everything that can be checked
    before the run starts. If writing fails (a full disk), what was written is removed, so no copy
    of the table is left behind.

    The folder name is ``YYYYmmdd-HHMMSS-<generator>-<6 hex>``; it never contains user text (a
    generator name is one of the registered names, checked here against ``[a-z0-9_]``, or a
    plug-in's ``plugin_<slug>``, see :func:`_id_generator`). The folder is readable by its owner
    only (0700), whatever the umask, and so are its files (0600).

    Raises
    ------
    RunError
        When the generator name could not be part of a folder name.
    OutputError
        When the folder cannot be written (``root`` is a file, read-only, or the disk is full).
    """
    generator = run_name_part(spec.generator)
    data = parquet_bytes(table)
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise write_error(root, error) from None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for _ in range(10):
        run_id = f"{stamp}-{generator}-{secrets.token_hex(3)}"
        path = root / run_id
        try:
            path.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
        except OSError as error:
            raise write_error(path, error) from None
    else:  # pragma: no cover - ten random collisions in one second
        raise RunError(f"Could not create a new run folder under {root}.")
    try:
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask; an odd umask must not widen it
        write_checked(path, "data.parquet", data)
        write_checked(path, "spec.json", spec.to_json().encode())
        folder = RunFolder(path)
        folder.write_status(state="created", created=time.time(), done_units=0, total_units=None)
    except BaseException as error:
        shutil.rmtree(path, ignore_errors=True)  # no half-made run, and no stray copy of the table
        if isinstance(error, OSError):
            raise write_error(path, error) from None
        raise
    return folder


@contextlib.contextmanager
def launching(root: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the launch lock of the runs folder ``root`` (made if missing) for the ``with`` block:
    an exclusive ``flock`` on the folder itself, so that no lock file is left among the runs.

    The dashboard answers a second click at once, on a new thread, while the first click's launch
    is still checking the generator; a reload or a second tab does the same from another session.
    Under this lock, looking for a run with the same settings and making it when there is none is
    one step for every thread and process, so a launch is made once however often it is asked for.
    """
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:  # e.g. $PRIVGAME_RUNS names a file: the same words on every face
        raise write_error(root, error) from None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def real_folders(root: Path) -> Iterator[Path]:
    """The folders directly under ``root``, sorted; symbolic links are skipped, never followed."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return
    for path in entries:
        if not path.is_symlink() and path.is_dir():
            yield path


def symlinked_entries(root: str | os.PathLike[str]) -> list[str]:
    """Names of the entries directly under ``root`` that are symbolic links (never listed as runs)."""
    try:
        return sorted(p.name for p in Path(root).iterdir() if p.is_symlink())
    except OSError:
        return []


def iter_run_folders(root: str | os.PathLike[str]) -> Iterator[RunFolder]:
    """Every run folder directly under ``root`` (a symbolic link to a folder is not one)."""
    root = Path(root)
    if not root.is_dir():
        return
    for path in real_folders(root):
        if _RUN_ID.match(path.name) and (path / "spec.json").is_file():
            yield RunFolder(path)


def list_runs(root: str | os.PathLike[str]) -> list[RunInfo]:
    """Every run under ``root``, newest first; a damaged run is listed with the state ``damaged``."""
    return sorted((f.info() for f in iter_run_folders(root)), key=lambda i: i.created, reverse=True)


def open_run(root: str | os.PathLike[str], run_id: str) -> RunFolder:
    """Open the run ``run_id`` under ``root``; ``run_id`` must be a run folder name.

    Raises
    ------
    RunError
        For a name that is not a run id, a symbolic link, or a folder that is not a run's.
    """
    if not _RUN_ID.match(run_id):
        raise RunError(f"{run_id!r} is not a run id (expected e.g. 20261130-101500-synthpop-1a2b3c).")
    return RunFolder(Path(root) / run_id)
