"""Logging, set up once at the entry point: a rotating file in the app's log folder."""

from __future__ import annotations

import logging
import logging.handlers
import platform
import sys

from advisor.core.infra.paths import AppPaths

_configured = False


_to_file = False


def logging_to_file() -> bool:
    """Is the log file in use (False: the log folder could not be used, warnings go to stderr)?"""
    return _to_file


def setup_logging(paths: AppPaths, *, level: int = logging.INFO, component: str = "app") -> None:
    """Log to logs/advisor.log (1 MB x 3 files) and write a start-up line with versions.

    Never raises: when the log folder cannot be used (a file stands there, no permission, a
    read-only disk), warnings and errors go to stderr instead and the app runs on."""
    global _configured, _to_file
    if _configured:
        return
    handler: logging.Handler
    try:
        paths.logs.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            paths.log_file, maxBytes=1_000_000, backupCount=3, encoding="utf-8", delay=True
        )
        if paths.log_file.exists() and not paths.log_file.is_file():
            raise IsADirectoryError(str(paths.log_file))
        _to_file = True
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        _to_file = False
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
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
