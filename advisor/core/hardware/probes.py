"""Running external commands and reading /proc and /sys, without ever hanging or crashing.

Every command runs with a timeout, stdin from /dev/null, no shell, output decoded with
errors="replace", and (on POSIX) in its own process group so a timeout kills the whole tree.
On Windows no console window flashes. Failures come back as values (CommandResult.error,
FileResult.error), never as exceptions, so a probe can always say "unknown" with a reason.
"""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Protocol

# Linux tools translate their labels ('Modellname' in a German lscpu): parse the C locale.
_POSIX_ENV_OVERRIDES = {"LC_ALL": "C", "LANG": "C", "LANGUAGE": "C"}
_MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class CommandResult:
    """What one command did. `error` is None only when it ran to completion."""

    stdout: str
    stderr: str
    returncode: int | None
    error: str | None
    duration_s: float
    timed_out: bool = False
    not_found: bool = False  # the program does not exist on this machine


class CommandRunner(Protocol):
    """Runs one external command; detection takes any object with this method (tests fake it)."""

    def run(self, args: list[str], timeout_s: float) -> CommandResult:
        """Run args (no shell) for at most timeout_s seconds; never raise for a failed run."""
        ...


def decode_output(data: bytes | None) -> str:
    """Bytes to text: UTF-16 when it carries a BOM or looks like it (wmic), else UTF-8."""
    if not data:
        return ""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    # UTF-16-LE ASCII text has a NUL after most characters.
    if len(data) >= 4 and data[1:20:2].count(0) >= min(5, len(data[1:20:2])):
        return data.decode("utf-16-le", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kill a timed-out command and everything it started."""
    try:
        import psutil

        children = psutil.Process(proc.pid).children(recursive=True)
    except Exception:  # psutil missing, or the process is already gone
        children = []
    if os.name != "nt":
        with contextlib.suppress(OSError):
            # start_new_session made the child a group leader: its pgid is its pid.
            os.killpg(proc.pid, signal.SIGKILL)
    for child in children:
        with contextlib.suppress(Exception):
            child.kill()
    with contextlib.suppress(OSError):
        proc.kill()


class SubprocessRunner:
    """The real CommandRunner: subprocess with the safety rules above."""

    def __init__(self, extra_env: dict[str, str] | None = None) -> None:
        self._extra_env = dict(extra_env or {})

    def run(self, args: list[str], timeout_s: float) -> CommandResult:
        """Run args for at most timeout_s seconds and return what happened."""
        start = time.monotonic()
        kwargs: dict[str, object] = {
            "stdin": subprocess.DEVNULL,
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "shell": False,
        }
        if os.name == "nt":
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0x08000000) | (
                getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x00000200)
            )
            if self._extra_env:
                kwargs["env"] = {**os.environ, **self._extra_env}
        else:
            kwargs["start_new_session"] = True
            kwargs["env"] = {**os.environ, **_POSIX_ENV_OVERRIDES, **self._extra_env}
        try:
            proc = subprocess.Popen(args, **kwargs)  # type: ignore[call-overload]
        except FileNotFoundError:
            return CommandResult(
                "", "", None, f"{args[0]} is not installed", time.monotonic() - start, False, True
            )
        except OSError as exc:
            return CommandResult(
                "", "", None, f"could not start {args[0]}: {exc}", time.monotonic() - start
            )
        try:
            out, err = proc.communicate(timeout=max(timeout_s, 0.01))
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            try:
                out, err = proc.communicate(timeout=1.0)
            except (subprocess.TimeoutExpired, OSError, ValueError):
                # A grandchild that escaped the kill may hold the pipes open: give up on them.
                for stream in (proc.stdout, proc.stderr):
                    with contextlib.suppress(Exception):
                        stream.close()
                out, err = b"", b""
            return CommandResult(
                decode_output(out),
                decode_output(err),
                proc.returncode,
                f"{args[0]} did not finish within {timeout_s:.1f} s and was stopped",
                time.monotonic() - start,
                timed_out=True,
            )
        except Exception as exc:  # e.g. MemoryError on a runaway output
            _kill_tree(proc)
            return CommandResult("", "", None, f"{args[0]} failed: {exc}", time.monotonic() - start)
        return CommandResult(
            decode_output(out),
            decode_output(err),
            proc.returncode,
            None,
            time.monotonic() - start,
        )


@dataclass(frozen=True)
class FileResult:
    """Text of a file, or why it could not be read."""

    text: str | None
    error: str | None


class FileReader(Protocol):
    """Reads small text files and lists paths; detection takes any object with these methods."""

    def read_text(self, path: str) -> FileResult:
        """The file's text (at most a few MB), or an error in words."""
        ...

    def glob(self, pattern: str) -> list[str]:
        """Sorted paths matching a glob pattern; empty when none or unreadable."""
        ...


class LocalFileReader:
    """The real FileReader for /proc, /sys and friends."""

    def read_text(self, path: str) -> FileResult:
        """Read a text file, capturing every error as a reason."""
        try:
            with open(path, "rb") as handle:
                data = handle.read(_MAX_FILE_BYTES)
        except FileNotFoundError:
            return FileResult(None, f"{path} does not exist")
        except PermissionError:
            return FileResult(None, f"{path} is not readable without root")
        except OSError as exc:
            return FileResult(None, f"{path}: {exc.strerror or exc}")
        return FileResult(data.decode("utf-8", errors="replace"), None)

    def glob(self, pattern: str) -> list[str]:
        """Sorted matches of a glob pattern (errors read as no match)."""
        try:
            return sorted(glob.glob(pattern))
        except OSError:
            return []
