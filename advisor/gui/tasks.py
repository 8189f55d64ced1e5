"""Run blocking work off the GUI thread; deliver exactly one result or one error on it.

One `TaskRunner`, made in main() (build_window) and handed to the services, is the app's only
way to do so: no module keeps a runner, a pool or a dispatcher of its own. A slot turns a UI
event into one call on a service; the service uses `run_task` for anything that touches the
disk or a subprocess, `run_compute` for a computation in Python, and `run_offloaded` for the
projections behind the answers, which run in a child process (advisor.gui.offload).

Computations in Python take the GIL from the GUI thread, and each of Qt's many calls into
Python during a repaint waits its turn behind them: with the projections on two threads the
window froze for 190-370 ms after a run, on one thread for 95-177 ms (2 cores); in the child
process, 30-40 ms (benchmarks/answer_pause.py, tests/gui/test_app.py). What stays in a thread
(fits, a model's header, the history) takes turns on one compute thread or is short.

One long-lived dispatcher object, living on the GUI thread, carries every answer back: no Qt
object is created in a worker or destroyed across threads, and only an int (the task's id)
crosses threads through Qt. Once the window has closed (`drop_pending`), answers that arrive
late are dropped, not delivered to widgets that no longer exist.
"""

from __future__ import annotations

import itertools
import logging
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from advisor.gui.qt import QtCore

if TYPE_CHECKING:
    from advisor.gui.offload import Offload

log = logging.getLogger(__name__)

OnResult = Callable[[Any], None]
OnError = Callable[[BaseException, str], None]
IO_THREADS = 4  # disk reads, detection, a model's header: short waits, several at once


class _Dispatcher(QtCore.QObject):
    # Only the task id crosses threads through Qt; the value waits in `_done`. Passing Python
    # objects through queued `object` signals miscounts references on some PySide6 builds
    # (seen here: "deallocating None" at exit), an int never does.
    ready = QtCore.Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[OnResult, OnError]] = {}
        self._done: dict[int, tuple[bool, Any, str]] = {}
        self._latest: dict[str, int] = {}  # the newest request of each kind
        self.ready.connect(self._deliver, QtCore.Qt.ConnectionType.QueuedConnection)

    def register(self, on_result: OnResult, on_error: OnError, kind: str | None = None) -> int:
        with self._lock:
            task_id = next(self._ids)
            self._pending[task_id] = (on_result, on_error)
            if kind is not None:
                self._latest[kind] = task_id
        return task_id

    def superseded(self, task_id: int, kind: str) -> bool:
        """Called in the worker before it starts: a newer request of the same kind was made,
        so this one's answer would only be thrown away; it is dropped unanswered."""
        with self._lock:
            if self._latest.get(kind, task_id) == task_id:
                return False
            self._pending.pop(task_id, None)
            return True

    def complete(self, task_id: int, ok: bool, value: Any, details: str = "") -> None:
        """Called in the worker: park the outcome, wake the GUI thread."""
        with self._lock:
            if task_id not in self._pending:
                return  # dropped: the window closed
            self._done[task_id] = (ok, value, details)
        self.ready.emit(task_id)

    def forget(self, task_id: int) -> None:
        """A request overtaken before it started: it will never be answered."""
        with self._lock:
            self._pending.pop(task_id, None)

    def drop_pending(self) -> int:
        with self._lock:
            dropped = len(self._pending)
            self._pending.clear()
            self._done.clear()
        return dropped

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def _deliver(self, task_id: int) -> None:
        with self._lock:
            callbacks = self._pending.pop(task_id, None)
            outcome = self._done.pop(task_id, None)
        if callbacks is None or outcome is None:
            return
        ok, value, details = outcome
        if ok:
            _call_unless_gone(callbacks[0], value)
        else:
            _call_unless_gone(callbacks[1], value, details)


def _call_unless_gone(fn: Callable[..., None], *args: Any) -> None:
    try:
        fn(*args)
    except RuntimeError as exc:
        # The widget this answer was for was closed while the work ran (its C++ side is
        # gone). Nobody is left to show it to; every other error still propagates.
        if "already deleted" not in str(exc):
            raise
        log.debug("answer for a closed widget dropped: %s", exc)


class _Task(QtCore.QRunnable):
    def __init__(
        self, fn: Callable[[], Any], dispatcher: _Dispatcher, task_id: int, kind: str | None
    ):
        super().__init__()
        self.fn = fn
        self.dispatcher = dispatcher
        self.task_id = task_id
        self.kind = kind
        self.setAutoDelete(True)

    def run(self) -> None:
        if self.kind is not None and self.dispatcher.superseded(self.task_id, self.kind):
            return
        try:
            try:
                result = self.fn()
            except Exception as exc:  # delivered to the caller's error slot, never lost
                log.debug("task failed", exc_info=True)
                self.dispatcher.complete(self.task_id, False, exc, traceback.format_exc())
            else:
                self.dispatcher.complete(self.task_id, True, result)
        except RuntimeError:  # the app quit while this ran: nobody is left to tell
            log.debug("task finished after the app closed", exc_info=True)


class TaskRunner(QtCore.QObject):
    """The app's one way to run work off the GUI thread, built once in main() and handed to the
    services: `run_task` for the disk and subprocesses (a small pool), `run_compute` for a
    computation in Python (one thread: computations take turns), `run_offloaded` for the
    projections behind the answers (a child process: it never takes the GIL from the GUI
    thread). Every answer comes back on the GUI thread as exactly one result or one error."""

    def __init__(
        self, parent: QtCore.QObject | None = None, offload: Offload | None = None
    ) -> None:
        super().__init__(parent)
        app = QtCore.QCoreApplication.instance()
        if app is not None and QtCore.QThread.currentThread() is not app.thread():
            raise RuntimeError("the task runner must be made on the GUI thread")
        self.dispatcher = _Dispatcher()
        self.dispatcher.setParent(self)
        self.io_pool = QtCore.QThreadPool(self)
        self.io_pool.setMaxThreadCount(IO_THREADS)
        self.compute_pool = QtCore.QThreadPool(self)
        self.compute_pool.setMaxThreadCount(1)
        self.offload = offload
        # the app's own catalogue and speed model (called on the compute thread), for requests
        # answered there
        self.local: Callable[[], dict[str, Any]] = dict

    def pools(self) -> tuple[QtCore.QThreadPool, ...]:
        """Every pool a task may run in: the window waits for all of them before it goes."""
        return (self.io_pool, self.compute_pool)

    def drop_pending(self) -> int:
        """Forget every answer still on its way (the window is closing); how many were dropped."""
        return self.dispatcher.drop_pending()

    def shutdown(self, wait_ms: int = 3000) -> None:
        """Drop what has not started, give the rest `wait_ms`, and stop the child process."""
        for pool in self.pools():
            pool.clear()
        for pool in self.pools():
            pool.waitForDone(wait_ms)
        if self.offload is not None:
            self.offload.close()

    def run_task(
        self,
        fn: Callable[[], Any],
        on_result: OnResult,
        on_error: OnError,
        pool: QtCore.QThreadPool | None = None,
        kind: str | None = None,
    ) -> None:
        """Run `fn()` in the thread pool; call `on_result(value)` or `on_error(exc, details)`
        on the GUI thread. With a `kind`, a request still waiting to start when a newer one of
        the same kind is made is dropped unanswered (the caller shows only the newest)."""
        task_id = self.dispatcher.register(on_result, on_error, kind)
        (pool or self.io_pool).start(_Task(fn, self.dispatcher, task_id, kind))

    def run_compute(
        self, fn: Callable[[], Any], on_result: OnResult, on_error: OnError, kind: str | None = None
    ) -> None:
        """`run_task` for a computation in Python (fits, curves): on the one compute thread,
        after the computations asked for before it. Give a `kind` where only the newest answer
        is shown: a workload picked five times in a row then computes twice, not five times."""
        self.run_task(fn, on_result, on_error, pool=self.compute_pool, kind=kind)

    def run_offloaded(
        self,
        name: str,
        kwargs: dict[str, Any],
        on_result: OnResult,
        on_error: OnError,
        kind: str | None = None,
    ) -> None:
        """Answer `advisor.usecases.offload.<name>(**kwargs)` in the child process (plain data
        both ways); where there is none, on the compute thread. A newer request of the same
        `kind` overtakes one that has not started."""
        if self.offload is None or self.offload.broken:
            from advisor.usecases import offload

            local = self.local
            self.run_compute(
                lambda: offload.answer(name, kwargs, **local()), on_result, on_error, kind
            )
            return
        task_id = self.dispatcher.register(on_result, on_error, kind)
        self.offload.submit(name, kwargs, task_id, kind, self.dispatcher)


class ProgressRelay(QtCore.QObject):
    """Progress from a worker to the GUI thread as a share in thousandths (an int: nothing but
    an int crosses threads through Qt). `report(done, total)` is safe to call from a worker."""

    changed = QtCore.Signal(int)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._last = -1

    def report(self, done: int, total: int) -> None:
        permille = 1000 if total <= 0 else max(0, min(1000, int(done * 1000 / total)))
        if permille != self._last:
            self._last = permille
            self.changed.emit(permille)

    def reset(self) -> None:
        self._last = -1
