"""The discipline every file the app owns follows (history, saved workloads, settings and
prices, caches):

- read with the one JSON reader (`safe_json`): depth, size and number limits;
- a file that is damaged (not JSON, too deep, the wrong shape, a folder where the file should
  be) is set aside under a name of its own, never deleted and never overwritten, and the
  caller says so in one sentence; a file that cannot be read *now* (permission, another
  program holding it) is left alone;
- written atomically (temporary file, fsync, rename), so a crash leaves the old content or
  the new, never half;
- a read-modify-write holds the file's inter-process lock (`filelock.locked`);
- a folder that cannot be written (full, read-only, no permission) is one sentence that names
  the folder and says what was kept.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.infra.atomic import atomic_write_bytes
from advisor.core.infra.errors import StorageError, os_reason
from advisor.core.infra.safe_json import JsonRefused, loads

OK = "ok"
MISSING = "missing"
DAMAGED = "damaged"
UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Owned:
    """One read of an owned file: its JSON value when `state` is OK; else why not."""

    state: str
    value: Any = None
    reason: str = ""  # for DAMAGED and UNREADABLE: "is nested more than 64 levels deep"
    # DAMAGED only because the reader refused a value (too deep, a huge number): the text, so
    # a caller can keep the good records with `safe_json.object_members`
    text: str = ""


def read_owned(path: Path, *, max_bytes: int) -> Owned:
    """Read an owned JSON file without ever raising: OK, MISSING, DAMAGED or UNREADABLE."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            return Owned(DAMAGED, reason="is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):  # a pipe would block the read, a device never end
            return Owned(DAMAGED, reason="is not a regular file (a device or a pipe)")
        if info.st_size > max_bytes:
            return Owned(DAMAGED, reason=f"is larger than {max_bytes / 1e6:,.0f} MB")
        raw = path.read_bytes()
    except FileNotFoundError:
        return Owned(MISSING)
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:  # a file stands where its folder should be
            return Owned(UNREADABLE, reason=f"cannot be read ({os_reason(exc)})")
        return Owned(UNREADABLE, reason=f"cannot be read now ({os_reason(exc)})")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Owned(DAMAGED, reason="is not UTF-8 text")
    try:
        return Owned(OK, loads(text))
    except JsonRefused as exc:
        return Owned(DAMAGED, reason=exc.reason, text=text)
    except ValueError as exc:
        return Owned(DAMAGED, reason=f"is not valid JSON ({_short(exc)})")


def _short(exc: ValueError) -> str:
    msg = getattr(exc, "msg", None) or str(exc)
    return msg.lower()[:80]


def aside_path(path: Path) -> Path:
    """A new name for a damaged copy of `path`: <stem>.corrupt-<time>-<random><suffix>."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return path.with_name(f"{path.stem}.corrupt-{stamp}-{uuid.uuid4().hex[:6]}{path.suffix}")


def set_aside(path: Path, *, copy: bool = False) -> Path | None:
    """Keep a damaged file (or a folder standing where the file should be) under a name of its
    own; earlier copies are never overwritten. With `copy` the original stays. None when it
    cannot be kept (the caller says so)."""
    aside = aside_path(path)
    try:
        if copy:
            shutil.copyfile(path, aside)
        else:
            os.replace(path, aside)
    except OSError:
        return None
    return aside


def write_owned(path: Path, data: bytes, *, what: str, kept: str) -> None:
    """Write an owned file atomically. StorageError, one sentence naming the folder and why,
    when it cannot be: `what` says what could not be saved ("The workload 'team'"), `kept`
    what is intact ("your earlier workloads are untouched")."""
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise storage_error(exc, path.parent, what, kept) from exc


def storage_error(exc: OSError, folder: Path, what: str, kept: str) -> StorageError:
    """The one sentence for a folder the app cannot write: what, where, why, what is kept."""
    advice = (
        "free some space and try again"
        if exc.errno == errno.ENOSPC
        else "check the folder, or set ADVISOR_HOME to another one"
    )
    return StorageError(
        f"{what} could not be saved in {folder} ({os_reason(exc)}); {kept}; {advice}."
    )
