"""Reading a folder's files through its checksum log: a file that does not match, or has no line,
is refused with the fix (see :mod:`privgame.store.folders`)."""

from __future__ import annotations

import errno
import os
import re
import threading
from pathlib import Path
from typing import Any

from privgame.core.errors import RunError
from privgame.store import files
from privgame.store.status import StatusFolder

__all__ = ["CheckedFolder", "refuse_link"]

_CHECKSUM_LINE = re.compile(r"^([0-9a-f]{64})  ([A-Za-z0-9_.\-/]+)$")


class CheckedFolder(StatusFolder):
    """A status folder whose files are checked against a checksum log (``checksums.sha256``).

    ``inputs`` are the files that cannot be recomputed (a damaged one makes the folder unusable);
    every other checked file is a checkpoint or a result, which resuming recomputes or rewrites.
    """

    inputs: tuple[str, ...] = ()

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # The checksum log, parsed incrementally: (inode, bytes parsed, path -> sha256).
        self._log: tuple[int, int, dict[str, str]] = (-1, 0, {})
        self._log_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}  # a lock does not pickle; the log is parsed again

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self._log = (-1, 0, {})
        self._log_lock = threading.Lock()

    def _checksums(self) -> dict[str, str] | None:
        """Path -> SHA-256 from the checksum log (last line wins); None when there is no log."""
        with self._log_lock:
            try:
                fd = os.open(self.path / files.CHECKSUMS, os.O_RDONLY | files.NOFOLLOW | files.CLOEXEC)
            except OSError:
                return None
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                known_inode, parsed, table = self._log
                if info.st_ino != known_inode or info.st_size < parsed:  # replaced, or cut short
                    parsed, table = 0, {}
                handle.seek(parsed)
                tail = handle.read()
            complete = tail[: tail.rfind(b"\n") + 1]
            table = dict(table)
            for line in complete.decode("ascii", errors="replace").splitlines():
                match = _CHECKSUM_LINE.match(line)
                if match:
                    table[match.group(2)] = match.group(1)
            self._log = (info.st_ino, parsed + len(complete), table)
            return table

    def _read_checked(self, relative: str) -> bytes:
        """The bytes of ``relative``, after checking them against the checksum log.

        Raises
        ------
        FileNotFoundError
            When the file does not exist.
        RunError
            When the file does not match its checksum, has none, or is a symbolic link.
        """
        try:
            data = files.read_file(self.path / relative)
        except FileNotFoundError:
            raise
        except OSError as error:
            what = "a symbolic link" if error.errno == errno.ELOOP else "not a regular file"
            raise RunError(
                f"{relative} of {self.kind} {self.path.name} is {what}; privgame reads only the files "
                f"it wrote, never through a link: {self._fix(relative)}"
            ) from None
        problem = self._checksum_problem(relative, data)
        if problem is not None:
            raise RunError(problem)
        return data

    def _fix(self, relative: str) -> str:
        """What to do about a damaged ``relative``."""
        if relative in self.inputs:
            return f"the {self.kind} cannot be used: start a new {self.kind} from the original data file."
        return (
            f"resume the {self.kind} to recompute it (its other checkpoints are kept): "
            f"python -m privgame resume {self.path}"
        )

    def _checksum_problem(self, relative: str, data: bytes) -> str | None:
        expected = (self._checksums() or {}).get(relative)
        if expected is not None and expected == files.sha256_hex(data):
            return None
        if expected is None:
            what = (
                "has no checksum in checksums.sha256 (it was being written when the engine stopped, "
                "or the line was removed), so it cannot be trusted"
            )
        else:
            what = "does not match the SHA-256 checksum recorded when it was written: it is corrupt"
        return f"{relative} of {self.kind} {self.path.name} {what}; {self._fix(relative)}"

    def _intact(self, relative: str) -> bool:
        """Whether ``relative`` exists and matches its checksum."""
        try:
            data = files.read_file(self.path / relative)
        except OSError:
            return False
        return self._checksum_problem(relative, data) is None


def refuse_link(path: Path, what: str) -> None:
    """Refuse to open ``path`` as a ``what`` folder (``"run"``, ``"study"``) if it is a symbolic link.

    Raises
    ------
    RunError
        When ``path`` is a symbolic link, naming where it points.
    """
    if path.is_symlink():
        raise RunError(
            f"{path} is a symbolic link; privgame opens {what} folders only as real folders, so that "
            f"nothing is read or deleted outside the runs folder. Open the folder it points to "
            f"({path.resolve()}) directly, or remove the link."
        )
