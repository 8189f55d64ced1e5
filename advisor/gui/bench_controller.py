"""The GUI's one controller for benchmark runs: a thin Qt adapter over BenchJob.

The child process does the work; a Python thread reads its events and parks them in a queue;
only a bare notice crosses to the GUI thread through Qt (no Python object travels in a queued
signal: that miscounts references on some PySide6 builds), and there this QObject re-emits the
events as Qt signals: `progressed` (throttled), then exactly one of `finished` or `failed`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from advisor.bench.controller import BenchJob
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.events import Failure, Progress
from advisor.core.runs.results import RunResult
from advisor.gui.qt import QtCore

PROGRESS_MIN_INTERVAL_S = 0.1


class BenchController(QtCore.QObject):
    started = QtCore.Signal()
    progressed = QtCore.Signal(object)  # Progress, emitted on the GUI thread
    finished = QtCore.Signal(object)  # RunResult, emitted on the GUI thread
    failed = QtCore.Signal(object)  # Failure, emitted on the GUI thread
    _arrived = QtCore.Signal()  # from the reading thread: events wait in the queue

    def __init__(
        self, job_factory: Callable[..., BenchJob] = BenchJob, parent: QtCore.QObject | None = None
    ):
        super().__init__(parent)
        self._job_factory = job_factory
        self._job: BenchJob | None = None
        self._thread: threading.Thread | None = None
        self._events: queue.SimpleQueue[Progress | RunResult | Failure] = queue.SimpleQueue()
        self._arrived.connect(self._on_arrived, QtCore.Qt.ConnectionType.QueuedConnection)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, config: BenchConfig, hardware: dict[str, Any] | None = None) -> None:
        if self.running:
            return
        self._job = self._job_factory(config, hardware=hardware)
        self._thread = threading.Thread(
            target=self._pump, args=(self._job,), daemon=True, name="bench-events"
        )
        self.started.emit()
        self._thread.start()

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()

    def shutdown(self, timeout_s: float = 3.0) -> None:
        """Stop any run and wait for the child to be gone (the window is closing)."""
        job, thread = self._job, self._thread
        if job is not None and thread is not None and thread.is_alive():
            job.cancel()
            thread.join(timeout_s)
            job.kill()

    def _pump(self, job: BenchJob) -> None:
        last = 0.0
        pending: Progress | None = None
        final: RunResult | Failure | None = None
        try:
            job.start()  # spawning a process takes tens of ms: not on the GUI thread
            for event in job.events():
                if isinstance(event, Progress):
                    now = time.monotonic()
                    if now - last >= PROGRESS_MIN_INTERVAL_S or event.tokens_per_s:
                        self._post(event)
                        last, pending = now, None
                    else:
                        pending = event
                    continue
                final = event
        except Exception as exc:  # never leave the GUI waiting
            final = Failure(f"The benchmark stopped unexpectedly ({exc}).", repr(exc))
        if pending is not None:
            self._post(pending)
        self._post(final if final is not None else Failure("The benchmark ended without a result."))

    def _post(self, event: Progress | RunResult | Failure) -> None:
        """Called in the reading thread: park the event, wake the GUI thread."""
        self._events.put(event)
        self._arrived.emit()

    def _on_arrived(self) -> None:
        """On the GUI thread: the parked events, in order, as the public signals."""
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
            if isinstance(event, Progress):
                self.progressed.emit(event)
            elif isinstance(event, RunResult):
                self.finished.emit(event)
            else:
                self.failed.emit(event)
