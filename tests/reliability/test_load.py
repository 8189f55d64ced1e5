"""Load: 100 runs in the history and the full catalogue stay fast in the GUI; 20 back-to-back
benchmarks leak no memory and no processes."""

from __future__ import annotations

import gc
import time

import psutil
import pytest

from advisor.bench.controller import BenchJob
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.results import RunResult
from tests.conftest import live_children


def test_100_runs_and_the_catalogue_filter_fast(make_window, qtbot, tiny_run, capsys):
    window, services = make_window()
    for i in range(100):
        services.history.save(
            RunResult.from_json(
                {
                    **tiny_run.to_json(),
                    "id": f"run-{i:03d}",
                    "created_at": tiny_run.created_at + i,
                    "label": f"label {i % 7}",
                }
            )
        )
    window.history.reload()
    qtbot.waitUntil(lambda: window.history.model.rowCount() == 100, timeout=10_000)

    services.choose_shape("llama-3-8b", "q4_k_m")
    window.show_page("Compare all devices")
    qtbot.waitUntil(lambda: window.compare.model.rowCount() > 200, timeout=20_000)

    timings = {}
    for name, action in (
        ("devices: 'RTX'", lambda: window.compare.filter.setText("RTX")),
        ("devices: 'apple m4'", lambda: window.compare.filter.setText("apple m4")),
        ("devices: cleared", lambda: window.compare.filter.setText("")),
        ("history: 'label 3'", lambda: window.history.filter.setText("label 3")),
        ("history: cleared", lambda: window.history.filter.setText("")),
    ):
        start = time.perf_counter()
        action()
        qtbot.wait(0)
        timings[name] = time.perf_counter() - start
    with capsys.disabled():
        print("\n[load] " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in timings.items()))
    assert max(timings.values()) < 0.050
    assert window.history.proxy.rowCount() == 100


@pytest.mark.llama
@pytest.mark.slow
def test_20_back_to_back_benchmarks_leak_nothing(tiny_model, capsys):
    me = psutil.Process()
    config = BenchConfig(model_path=str(tiny_model), n_prompt=(16,), n_gen=(4,), reps=1)

    def one() -> None:
        final = None
        for event in BenchJob(config).events():
            final = event
        assert isinstance(final, RunResult), final

    one()  # warm caches and imports
    gc.collect()
    rss0, threads0, fds0 = me.memory_info().rss, me.num_threads(), me.num_fds()
    for _ in range(20):
        one()
    time.sleep(0.5)  # reader threads finish
    gc.collect()
    rss1, threads1, fds1 = me.memory_info().rss, me.num_threads(), me.num_fds()
    with capsys.disabled():
        print(
            f"\n[load] 20 runs: RSS {rss0 / 1e6:.1f} -> {rss1 / 1e6:.1f} MB, threads "
            f"{threads0} -> {threads1}, open files {fds0} -> {fds1}"
        )
    assert rss1 - rss0 < 20e6
    assert threads1 <= threads0 + 1
    assert fds1 <= fds0 + 2
    assert not live_children()
