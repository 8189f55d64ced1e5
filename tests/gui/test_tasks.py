"""Background work: answers come back on the GUI thread; computations take turns on one thread."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from advisor.gui.tasks import TaskRunner


@pytest.fixture
def tasks(qapp):
    """The app's task runner as main() makes it (projections on its compute thread here)."""
    runner = TaskRunner(qapp)
    yield runner
    runner.shutdown(5000)
    runner.deleteLater()


def test_computations_take_turns_and_answer_on_the_gui_thread(qtbot, tasks):
    spans: list[tuple[float, float, int]] = []
    answers: list[tuple[int, bool]] = []
    gui = threading.get_ident()

    def work(n: int):
        def fn() -> int:
            start = time.perf_counter()
            time.sleep(0.05)  # long enough that two workers would overlap
            spans.append((start, time.perf_counter(), threading.get_ident()))
            return n

        return fn

    for n in range(3):
        tasks.run_compute(
            work(n), lambda n: answers.append((n, threading.get_ident() == gui)), lambda e, d: None
        )
    qtbot.waitUntil(lambda: len(answers) == 3, timeout=5000)
    assert sorted(answers) == [(0, True), (1, True), (2, True)]
    spans.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
    assert all(thread != gui for _, _, thread in spans)


def test_a_computation_that_fails_answers_with_its_error_and_the_next_one_runs(qtbot, tasks):
    errors: list[str] = []
    results: list[int] = []

    def boom() -> int:
        raise ValueError("no such model")

    tasks.run_compute(boom, results.append, lambda e, d: errors.append(str(e)))
    tasks.run_compute(lambda: 7, results.append, lambda e, d: errors.append(str(e)))
    qtbot.waitUntil(lambda: results == [7], timeout=5000)
    assert errors == ["no such model"]


def test_a_request_overtaken_before_it_starts_is_dropped_and_the_newest_answers(qtbot, tasks):
    gate = threading.Event()
    ran: list[str] = []
    answers: list[str] = []

    def job(name: str):
        def fn() -> str:
            ran.append(name)
            return name

        return fn

    # the compute thread is busy: the next requests wait in its queue
    tasks.run_compute(lambda: gate.wait(5) and "busy", answers.append, lambda e, d: None)
    for n in range(3):
        tasks.run_compute(job(f"table {n}"), answers.append, lambda e, d: None, kind="table")
    tasks.run_compute(job("verdict"), answers.append, lambda e, d: None, kind="verdict")
    gate.set()
    qtbot.waitUntil(lambda: len(answers) == 3, timeout=5000)
    qtbot.wait(100)  # nothing else arrives
    assert answers == ["busy", "table 2", "verdict"]
    assert ran == ["table 2", "verdict"]  # the overtaken ones never computed
    assert tasks.dispatcher.pending() == 0  # and leave nothing waiting for an answer


def test_the_window_waits_for_every_pool(tasks):
    assert set(tasks.pools()) == {tasks.io_pool, tasks.compute_pool}
    assert tasks.compute_pool.maxThreadCount() == 1


def test_two_runners_share_nothing(qapp, tasks):
    """No module-level runner: each window's services get their own (main() makes one)."""
    other = TaskRunner(qapp)
    try:
        assert other.dispatcher is not tasks.dispatcher
        assert not set(other.pools()) & set(tasks.pools())
    finally:
        other.shutdown(1000)
