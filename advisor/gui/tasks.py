"""Run blocking work off the GUI thread; deliver exactly one result or one error on it.

A slot turns a UI event into one call on a service; the service uses `run_task` for anything
that touches the disk, a subprocess or a long computation, so the window never freezes.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from advisor.gui.qt import QtCore

log = logging.getLogger(__name__)


class _Signals(QtCore.QObject):
    finished = QtCore.Signal(object)
    failed = QtCore.Signal(object, str)


class _Task(QtCore.QRunnable):
    def __init__(self, fn: Callable[[], Any], signals: _Signals):
        super().__init__()
        self.fn = fn
        self.signals = signals
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            try:
                result = self.fn()
            except Exception as exc:  # delivered to the caller's error slot, never lost
                log.debug("task failed", exc_info=True)
                self.signals.failed.emit(exc, traceback.format_exc())
            else:
                self.signals.finished.emit(result)
        except RuntimeError:  # the app quit while this ran: nobody is left to tell
            log.debug("task finished after the app closed", exc_info=True)


_alive: set[_Signals] = set()


def run_task(
    fn: Callable[[], Any],
    on_result: Callable[[Any], None],
    on_error: Callable[[BaseException, str], None],
    pool: QtCore.QThreadPool | None = None,
) -> None:
    """Run `fn()` in the thread pool; call `on_result(value)` or `on_error(exc, details)` on
    the GUI thread."""
    signals = _Signals()
    _alive.add(signals)

    def done(value: Any) -> None:
        _alive.discard(signals)
        on_result(value)

    def failed(exc: BaseException, details: str) -> None:
        _alive.discard(signals)
        on_error(exc, details)

    signals.finished.connect(done, QtCore.Qt.ConnectionType.QueuedConnection)
    signals.failed.connect(failed, QtCore.Qt.ConnectionType.QueuedConnection)
    (pool or QtCore.QThreadPool.globalInstance()).start(_Task(fn, signals))
