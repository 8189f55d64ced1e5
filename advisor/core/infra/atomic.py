"""Atomic file writes: a crash or a full disk never leaves a half-written file behind."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, fsync it, then rename it over `path`.

    On any error the temporary file is removed and `path` keeps its previous content.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        _replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable (POSIX)
        with contextlib.suppress(OSError):
            dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def _replace(tmp: str, target: Path) -> None:
    """os.replace, retried for a moment on Windows, where a file another process is reading
    at that instant cannot be replaced (access denied); POSIX replaces it at once."""
    tries = 20 if sys.platform == "win32" else 1
    for attempt in range(tries):
        try:
            os.replace(tmp, target)
            return
        except PermissionError:
            if attempt == tries - 1:
                raise
            time.sleep(0.05)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
