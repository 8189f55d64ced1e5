"""Logging, set up once at the entry point: a rotating file in the app's log folder."""

from __future__ import annotations

import logging
import logging.handlers
import platform
import sys
from pathlib import Path

from advisor.core.infra.paths import AppPaths

_configured = False
_to_file = False
_log_file: Path | None = None
_handler: logging.Handler | None = None


class _LogFile(logging.handlers.RotatingFileHandler):
    """The rotating log file, opened at once (a folder that cannot hold it is found here, not
    in the middle of reporting a crash) and quiet when a write fails later (a full disk):
    the log's own trouble never reaches the terminal as a traceback."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def logging_to_file() -> bool:
    """Is the log file in use (False: the log folder could not be used, warnings go to stderr)?"""
    return _to_file


def log_file_in_use() -> Path | None:
    """The file this process logs to (None when the log folder could not be used)."""
    return _log_file if _to_file else None


def setup_logging(paths: AppPaths, *, level: int = logging.INFO, component: str = "app") -> None:
    """Log to logs/advisor.log (1 MB x 3 files) and write a start-up line with versions.

    Never raises, and never prints a traceback of its own: the file is opened here, and when
    the log folder cannot be used (a file stands there, no permission, a read-only or full
    disk), warnings and errors go to stderr instead and the app runs on."""
    global _configured, _to_file, _log_file, _handler
    if _configured and _log_file == paths.log_file:
        return
    root = logging.getLogger()
    if _handler is not None:  # another app folder in the same process (tests): its own log
        root.removeHandler(_handler)
        _handler.close()
    handler: logging.Handler
    _log_file = paths.log_file
    try:
        paths.logs.mkdir(parents=True, exist_ok=True)
        if paths.log_file.exists() and not paths.log_file.is_file():
            raise IsADirectoryError(str(paths.log_file))
        handler = _LogFile(paths.log_file, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
        _to_file = True
    except OSError:
        # the app has no terminal to spoil; the command line's stderr is the user's one line
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.CRITICAL if component == "cli" else logging.WARNING)
        _to_file = False
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    _handler = handler
    root.setLevel(level)
    _configured = True
    from advisor import __version__

    logging.getLogger("advisor").info(
        "start %s: advisor %s, Python %s, %s %s (%s)",
        component,
        __version__,
        platform.python_version(),
        platform.system(),
        platform.release(),
        platform.machine(),
    )
    if getattr(sys, "frozen", False):
        logging.getLogger("advisor").info("frozen app at %s", sys.executable)
