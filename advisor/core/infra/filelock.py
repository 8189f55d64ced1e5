"""An advisory lock between processes (and threads) around a read-modify-write of a file.

The lock is taken on a separate `<name>.lock` file beside the data file, never on the data
file itself: an atomic write replaces the data file, and a lock held on the replaced file
would guard nothing. `fcntl.flock` on POSIX, `msvcrt.locking` on Windows; both are released
by the operating system when the process ends, so a killed process never leaves the lock
held. The lock file stays (empty); it is never a sign of anything.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from advisor.core.infra.errors import StorageError, os_reason

LOCK_TIMEOUT_S = 30.0
_POLL_S = 0.01

# flock locks belong to an open file description, so two threads of one process opening the
# lock file each get their own lock, as wanted; msvcrt locks belong to the process. A lock per
# path inside the process makes both behave alike.
_in_process: dict[str, threading.Lock] = {}
_in_process_guard = threading.Lock()


def lock_path(path: Path) -> Path:
    """The lock file guarding `path`."""
    return path.with_name(path.name + ".lock")


def _thread_lock(path: Path) -> threading.Lock:
    with _in_process_guard:
        return _in_process.setdefault(str(path.resolve()), threading.Lock())


if sys.platform == "win32":  # pragma: no cover - exercised on Windows CI
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the lock of `path` for the block: every process and thread that locks the same
    path waits its turn. StorageError (one sentence naming the folder) when the lock file
    cannot be made, or another holder keeps it for `timeout_s`."""
    target = Path(path)
    guard = _thread_lock(target)
    if not guard.acquire(timeout=timeout_s):
        raise _busy(target, timeout_s)
    try:
        fd = _open_lock_file(target)
        try:
            deadline = time.monotonic() + timeout_s
            while not _try_lock(fd):
                if time.monotonic() > deadline:
                    raise _busy(target, timeout_s)
                time.sleep(_POLL_S)
            try:
                yield
            finally:
                _unlock(fd)
        finally:
            os.close(fd)
    finally:
        guard.release()


def _open_lock_file(target: Path) -> int:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return os.open(lock_path(target), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StorageError(
            f"The folder {target.parent} cannot be written ({os_reason(exc)}), so "
            f"{target.name} cannot be changed and is left as it was; check the folder, or set "
            "ADVISOR_HOME to another one."
        ) from exc


def _busy(target: Path, timeout_s: float) -> StorageError:
    return StorageError(
        f"{target.name} in {target.parent} has been in use by another advisor process for "
        f"{timeout_s:.0f} s; wait for it to finish, then try again."
    )
