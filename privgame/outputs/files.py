"""Every file privgame writes where the user asks: owner-only, whole, and never into a pipe or device.

The synthetic table (``privgame synth -o``), the exports (``privgame export -o``: the records,
the high-risk list, the spec, the HTML report), the release and its card (``privgame release
-o``) and the figures (``privgame study png``) hold private rows or what is derived from them.
:func:`write_output` writes each of them the same way:

* the path must be a new path or an existing regular file: a folder, a FIFO, a socket or a
  device node (``/dev/null``, ``/dev/sda``) is refused, so that nothing is streamed into another
  program or replaces a device node (an atomic rename would replace the node itself);
* its folder must exist (nothing is created where the user did not ask);
* the bytes go to a temporary file created with mode ``0600`` in the same folder, are flushed,
  and are renamed over the path (:func:`privgame.store.folders.atomic_write`), so the file is readable
  by its owner only whatever the umask, and a reader never sees part of it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from privgame.core.errors import ParameterError
from privgame.store.folders import atomic_write

__all__ = ["OUTPUT_MODE", "check_output_path", "write_output"]

OUTPUT_MODE = 0o600
"""The mode of every file :func:`write_output` writes."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_output_path(path: str | os.PathLike[str], *, what: str = "the output") -> Path:
    """Refuse an output path that is not a new path or an existing regular file.

    Parameters
    ----------
    path : path-like
        Where the output would go. A symbolic link counts as what it points to.
    what : str, default "the output"
        What would be written, for messages (e.g. ``"the synthetic table"``).

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    ParameterError
        When the path is a folder, a pipe, a socket or a device, its folder does not exist, or it
        lies inside a run folder (where it could replace the run's checksummed files).
    """
    out = Path(path)
    try:
        mode = os.stat(out).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ParameterError(
            f"Cannot write {what} to {out} ({exc.strerror or exc}); check the path."
        ) from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = next((name for check, name in _KINDS if check(mode)), "not a regular file")
        raise ParameterError(
            f"Cannot write {what} to {out}: it is {kind}, not a regular file. Give a new file name "
            "or an existing regular file."
        )
    parent = out.parent
    if not parent.is_dir():
        raise ParameterError(
            f"Cannot write {what} to {out}: the folder {parent} does not exist; create it first."
        )
    for folder in out.resolve().parents:
        if (folder / "spec.json").is_file() and (folder / "data.parquet").is_file():
            raise ParameterError(
                f"Cannot write {what} to {out}: it lies inside the run folder {folder}, whose "
                "checksummed files it could replace. Write it outside run folders."
            )
    return out


def write_output(path: str | os.PathLike[str], data: bytes, *, what: str = "the output") -> Path:
    """Write ``data`` to ``path`` atomically, with mode ``0600``, after :func:`check_output_path`.

    Parameters
    ----------
    path : path-like
        A new path or an existing regular file (replaced).
    data : bytes
        The whole content.
    what : str, default "the output"
        What is written, for messages.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ParameterError
        When the path is refused (see :func:`check_output_path`).
    OSError
        When the write itself fails (a full disk, a read-only folder).
    """
    out = check_output_path(path, what=what)
    atomic_write(out, data)
    return out
