"""Reference cycles die on the GUI thread, not in a worker that happens to allocate (a worker
collecting a cycle that held a widget destroyed Qt objects off the GUI thread: a segfault)."""

from __future__ import annotations

import gc
import threading
from typing import ClassVar

from advisor.gui import gc_guard


class _Cycle:
    died_on: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.died_on.append(threading.current_thread().name)


KEPT: list[list[list[int]]] = []


def _allocate_in_a_worker() -> None:
    def churn() -> None:
        KEPT.append([[i] for i in range(200_000)])  # crosses every generation's threshold

    worker = threading.Thread(target=churn, name="worker")
    worker.start()
    worker.join()


def test_a_cycle_dropped_while_a_worker_allocates_dies_on_the_gui_thread(qapp, qtbot):
    collector = gc_guard.GuiThreadCollector(qapp)
    try:
        gc.collect()
        _Cycle.died_on.clear()
        _Cycle()  # unreachable at once, but only the cycle collector can free it
        _allocate_in_a_worker()
        assert _Cycle.died_on == []  # the worker's allocations collected nothing
        qtbot.waitUntil(lambda: _Cycle.died_on != [], timeout=5000)
        assert _Cycle.died_on == [threading.main_thread().name]
        assert not gc.isenabled()
    finally:
        KEPT.clear()
        collector.stop()
        collector.deleteLater()
        assert gc.isenabled()


def test_the_collector_runs_the_generation_gc_would_have(qapp):
    collector = gc_guard.GuiThreadCollector()
    try:
        collector.timer.stop()
        gc.collect()
        assert collector.check() is None  # nothing allocated since: nothing due
        junk = [[i] for i in range(collector.thresholds[0] + 10)]
        assert gc.get_count()[0] > collector.thresholds[0]
        assert collector.check() == 0  # the youngest generation, as gc would
        assert gc.get_count()[0] < collector.thresholds[0]
        del junk
    finally:
        collector.stop()  # unfreezes what the collector froze, and collection is automatic
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_without_the_guard_the_worker_would_have_collected_it():
    """The hazard itself, so the test above can fail: automatic collection in a worker."""
    gc.enable()
    gc.collect()
    _Cycle.died_on.clear()
    _Cycle()
    _allocate_in_a_worker()
    KEPT.clear()
    assert _Cycle.died_on == ["worker"]


def test_full_collections_are_rate_limited_and_start_up_is_frozen(qapp, monkeypatch):
    collector = gc_guard.GuiThreadCollector()
    try:
        collector.timer.stop()
        assert gc.get_freeze_count() > 0  # start-up objects are out of every scan
        monkeypatch.setattr(gc, "get_count", lambda: (10_000, 100, 100))
        assert collector.check() == 1  # due, but the last full one was just now
        collector.last_full -= gc_guard.FULL_EVERY_S
        assert collector.check() == 2
        assert collector.check() == 1
    finally:
        monkeypatch.undo()
        collector.stop()
    assert gc.get_freeze_count() == 0 and gc.isenabled()
