"""The child process the answers' projections run in (advisor.usecases.offload).

Projections are pure Python: in a thread of the app they took the GIL from the GUI thread, and
every one of Qt's calls into Python during a repaint waited behind them (the window stalled
95-177 ms after a run on 2 cores). In a child process they run beside the window, not in its
way. Requests go as plain dataclasses; the answer is unpickled in the executor's own thread
(1-4 ms for the candidates) and delivered on the GUI thread by the task runner's dispatcher.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.gui.tasks import _Dispatcher

log = logging.getLogger(__name__)


class Offload:
    """One child process, started on first use (or by `start`), computing one request at a
    time; a newer request of the same kind cancels an older one that has not started."""

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._latest: dict[str, tuple[Future, int]] = {}
        self._ready: Future | None = None
        self.broken = False

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            from advisor.usecases import offload

            # spawn: a fresh interpreter, never a fork of a process with Qt's threads in it
            self._executor = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=offload.start_child,
            )
        return self._executor

    def start(self) -> None:
        """Start the child and let it load (after the window is up)."""
        if not self.broken and self._ready is None:
            self._ready = self._submit("ready", {})

    def ready_now(self) -> bool:
        """The child has started and loaded (benchmarks wait for it before they time)."""
        return self._ready is not None and self._ready.done()

    def _submit(self, name: str, kwargs: dict[str, Any]) -> Future:
        from advisor.usecases import offload

        return self._pool().submit(offload.answer, name, kwargs)

    def submit(
        self, name: str, kwargs: dict[str, Any], task_id: int, kind: str | None,
        dispatcher: _Dispatcher,
    ) -> None:  # fmt: skip
        try:
            future = self._submit(name, kwargs)
        except (BrokenProcessPool, RuntimeError) as exc:
            self.broken = True
            dispatcher.complete(task_id, False, exc, "the projection process could not start")
            return
        if kind is not None:
            with self._lock:
                older = self._latest.get(kind)
                self._latest[kind] = (future, task_id)
            if older is not None and older[0].cancel():
                dispatcher.forget(older[1])  # overtaken before it started: never answered

        def done(f: Future) -> None:
            try:
                value = f.result()
            except CancelledError:
                return
            except BrokenProcessPool as exc:
                self.broken = True
                dispatcher.complete(task_id, False, exc, "the projection process stopped")
            except Exception as exc:  # the request's own error, raised in the child
                dispatcher.complete(task_id, False, exc, str(exc.__cause__ or ""))
            else:
                dispatcher.complete(task_id, True, value)

        future.add_done_callback(done)

    def close(self) -> None:
        """Stop the child (the window is closing): requests not started are cancelled."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
