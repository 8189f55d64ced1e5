"""The projections run in a child process and answer on the GUI thread with what a thread of
the app would have computed; only plain data crosses threads (the benchmark's events too)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import psutil

from advisor.core.predict.conditions.workloads import get_workload
from advisor.core.runs.events import Progress
from advisor.gui.bench_controller import BenchController
from advisor.gui.offload import Offload
from advisor.usecases import offload


def _children() -> list[psutil.Process]:
    """The projections' worker processes (multiprocessing's resource tracker, which lives as
    long as the app, is not one)."""
    return [
        p
        for p in psutil.Process().children(recursive=True)
        if p.is_running() and any("spawn_main" in part for part in p.cmdline())
    ]


def test_the_answers_come_from_a_child_process_and_match_a_thread(make_window, qtbot):
    window, services = make_window(offload=Offload())
    services.warm_up()
    qtbot.waitUntil(services.tasks.offload.ready_now, timeout=60_000)
    assert _children(), "the projections' process is running"
    services.choose_shape("llama-3.2-1b", "q4_k_m")
    window.show_page("Upgrade")
    panel = window.upgrade
    qtbot.waitUntil(lambda: "Best within your budget" in panel.answer.text(), timeout=30_000)

    # the same request on a thread of this process: the same table
    profile = services.state.profile
    request = dict(
        facts=services.state.model.facts, workload=get_workload("chat"), host=profile.host,
        reference=None, this_machine=profile, user_prices={},
    )  # fmt: skip
    answers, gui = [], threading.get_ident()
    services.tasks.run_offloaded(
        "table", request, lambda t: answers.append((t, threading.get_ident())), print
    )
    qtbot.waitUntil(lambda: answers != [], timeout=30_000)
    table, thread = answers[0]
    assert thread == gui  # delivered on the GUI thread
    here = offload.answer("table", request, services.catalogue, services.speed_model())
    assert [p.to_json() for p in table.projections] == [p.to_json() for p in here.projections]
    assert table.prices == here.prices

    window.close()
    services.tasks.shutdown(5000)
    deadline = time.monotonic() + 10
    while _children() and time.monotonic() < deadline:
        qtbot.wait(100)
    assert not _children(), "the child process ends with the window"


class _Job:
    """A benchmark job whose events come from the controller's reading thread."""

    def __init__(self, config, hardware=None):
        self.result = _Job.result

    def start(self) -> None:
        pass

    def events(self):
        for step in range(3):
            yield Progress(step=step, total=3, phase="decode", tokens_per_s=10.0 + step)
        yield self.result

    def cancel(self) -> None:
        pass

    def kill(self) -> None:
        pass


def test_the_benchmarks_events_arrive_on_the_gui_thread_in_order(qtbot, tiny_run):
    _Job.result = replace(tiny_run, id="from-the-thread")
    controller = BenchController(job_factory=_Job)
    seen, gui = [], threading.get_ident()
    controller.progressed.connect(
        lambda e: seen.append(("progress", e.step, threading.get_ident()))
    )
    controller.finished.connect(lambda r: seen.append(("finished", r.id, threading.get_ident())))
    with qtbot.waitSignal(controller.finished, timeout=10_000):
        controller.start(tiny_run.config)
    assert [s[:2] for s in seen] == [
        ("progress", 0),
        ("progress", 1),
        ("progress", 2),
        ("finished", "from-the-thread"),
    ]
    assert {s[2] for s in seen} == {gui}
    controller.shutdown()
