"""The real window, offscreen, driven like a person would: pick a model, run a benchmark through
the real child process, see it in the charts and the comparison, cancel, bad files, history."""

from __future__ import annotations

import signal
import sys
import time

import numpy as np
import psutil
import pytest

from advisor.core.runs import config as config_module
from advisor.core.runs.export import _shared_flags
from advisor.gui.main_window import PAGES
from advisor.gui.qt import QtCore
from advisor.gui.table_models import DISPLAY, ProjectionTableModel
from tests.conftest import live_children

SMALL = {"n_prompt": (64,), "n_gen": (16,), "depths": (0,), "batches": (1,)}
MODEL = ("qwen2.5-0.5b", "q4_0")


def _children() -> list[psutil.Process]:
    return live_children()


@pytest.fixture
def small_presets(monkeypatch):
    """The real benchmark, with tiny test sizes so a run takes seconds on 2 cores."""
    monkeypatch.setitem(config_module.PRESETS, "quick", SMALL)
    monkeypatch.setitem(
        config_module.PRESETS, "thorough", {**SMALL, "depths": (0, 512), "batches": (1, 2)}
    )


@pytest.mark.llama
@pytest.mark.slow
def test_quick_benchmark_end_to_end(make_window, qtbot, small_presets, capsys):
    from advisor.gui.offload import Offload
    from advisor.gui.qt import preload_plotting

    window, services = make_window(offload=Offload())  # the projections' process, as in the app
    services.warm_up()  # as the app does a second after its start, long before a click on Run
    qtbot.waitUntil(services.tasks.offload.ready_now, timeout=60_000)
    services.tasks.compute_pool.waitForDone(60_000)
    preload_plotting().join(60)  # the charts' library, as the app loads it after its start
    services.choose_shape(*MODEL)
    window.show_page("Benchmark")
    assert not window.bench.advanced_body.isVisible()
    window.bench.advanced.setChecked(True)  # the settings apply only when unfolded
    assert window.bench.advanced_body.isVisible()
    window.bench.reps.setValue(2)

    # the event loop must never stall: a 10 ms timer records the longest gap
    gaps, ends, last = [0.0], [0.0], [time.perf_counter()]

    def tick():
        now = time.perf_counter()
        gaps.append(now - last[0])
        ends.append(now)
        last[0] = now

    timer = QtCore.QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    # the clock starts before the click: a stall inside the click handler counts too
    clicked = last[0] = time.perf_counter()
    with qtbot.waitSignal(services.bench.finished, timeout=240_000) as blocker:
        qtbot.mouseClick(window.bench.run_button, QtCore.Qt.MouseButton.LeftButton)
    finished = time.perf_counter()
    run = blocker.args[0]
    assert run.config.reps == 2

    # the run ends on the answer, with no further click: a ranked list and a verdict (the
    # timer still runs: the work after the run must not freeze the window either)
    qtbot.waitUntil(lambda: window.nav.currentRow() == PAGES.index("Upgrade"), timeout=5000)
    qtbot.waitUntil(lambda: window.upgrade.model.rowCount() > 20, timeout=20_000)
    qtbot.waitUntil(
        lambda: "Best within your budget" in window.upgrade.answer.text(), timeout=20_000
    )
    timer.stop()
    with capsys.disabled():
        print(
            f"\n[gui] longest event-loop gap from Run to the answer: {max(gaps) * 1000:.1f} ms "
            f"(ending {ends[gaps.index(max(gaps))] - clicked:.2f} s after Run) over {len(gaps)} "
            f"ticks; the run took {finished - clicked:.2f} s, the answer "
            f"{ends[-1] - finished:.2f} s more"
        )
    during = [g for g, e in zip(gaps, ends, strict=True) if e <= finished]
    after = [g for g, e in zip(gaps, ends, strict=True) if e > finished]
    # the run itself: 30-80 ms here while the benchmark spins both of this machine's 2 cores
    assert max(during) < 0.100
    # showing the answer (page turn, the ranked rows, the chart, the explanation's rich text)
    # while the child process projects: 30-40 ms here (benchmarks/answer_pause.py); with the
    # projections on a thread of the app it was 95-177 ms (advisor/gui/offload.py says why)
    assert max(after, default=0.0) < 0.060
    assert "measured on" in window.upgrade.caption.text()
    qtbot.waitUntil(lambda: "Chat:" in window.upgrade.answer.text(), timeout=20_000)

    # results: the table, the explanation, the charts, the comparison
    assert {t.name for t in run.tests} == {"pp64", "tg16"}
    qtbot.waitUntil(lambda: window.bench.tests_model.rowCount() == 2, timeout=5000)
    assert "tokens/s" in window.bench.explanation.text()
    assert window.bench.progress.text() == "done" or window.bench.progress.format() == "done"
    window.show_page("Charts")
    qtbot.waitUntil(lambda: window.charts.depth_measured.getData()[0] is not None, timeout=10_000)
    xs, ys = window.charts.depth_measured.getData()
    assert len(xs) == 1 and ys[0] == pytest.approx(run.test("tg16").tokens_per_s)
    assert len(window.charts.depth_ceiling.getData()[0]) > 10
    assert window.charts.roof_points.getData()[0] is not None

    window.show_page("Compare all devices")
    model = window.compare.model
    qtbot.waitUntil(
        lambda: model.rowCount() > 150 and model.row_object(0).basis == "measured", timeout=20_000
    )
    first = window.compare.proxy.index(0, ProjectionTableModel.DEVICE).data(DISPLAY)
    assert first.endswith("(this machine)")
    mine = model.row_object(0)
    assert mine.decode_tps == pytest.approx(run.test("tg16").tokens_per_s, rel=0.3)

    # the run is in the history
    qtbot.waitUntil(lambda: window.history.model.rowCount() == 1, timeout=10_000)


@pytest.mark.llama
@pytest.mark.slow
def test_cancel_returns_control_and_leaves_no_process(make_window, qtbot, monkeypatch):
    monkeypatch.setitem(
        config_module.PRESETS,
        "quick",
        {"n_prompt": (64,), "n_gen": (4000,), "depths": (0,), "batches": (1,)},
    )
    window, services = make_window()
    services.choose_shape(*MODEL)
    qtbot.mouseClick(window.bench.run_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: any(p.tokens_per_s for p in [window.bench._last_progress] if p), timeout=120_000
    )
    assert _children(), "the benchmark runs in a child process"
    start = time.perf_counter()
    with qtbot.waitSignal(services.bench.failed, timeout=5000) as blocker:
        qtbot.mouseClick(window.bench.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    elapsed = time.perf_counter() - start
    assert blocker.args[0].cancelled
    assert elapsed < 2.5
    qtbot.waitUntil(lambda: not _children(), timeout=3000)
    assert window.bench.run_button.isEnabled()
    assert not window.banner.isVisible()  # a cancel is not an error


def test_opening_a_text_file_shows_one_sentence(make_window, qtbot, tmp_path):
    window, _services = make_window()
    bad = tmp_path / "notes.gguf"
    bad.write_text("these are my notes, not a model\n")
    window.model.open_path(str(bad))
    qtbot.waitUntil(window.banner.isVisible, timeout=5000)
    text = window.banner.message.text()
    assert "notes.gguf is not a GGUF model" in text
    assert "\n" not in text and "Traceback" not in text
    assert window.isVisible()  # the app keeps running


def test_history_survives_reopening_the_window(make_window, qtbot, tiny_run):
    window, services = make_window()
    services.history.save(tiny_run)
    window.history.reload()
    qtbot.waitUntil(lambda: window.history.model.rowCount() == 1, timeout=5000)
    window.close()
    window2, _ = make_window()
    window2.history.reload()
    qtbot.waitUntil(lambda: window2.history.model.rowCount() == 1, timeout=5000)
    assert window2.history.model.row_object(0).id == tiny_run.id


def test_choose_device_by_hand(make_window, qtbot, recorded_detect):
    window, services = make_window()
    combo = window.machine.device_combo
    combo.setCurrentIndex(combo.findData("nvidia-geforce-rtx-4090"))
    with qtbot.waitSignal(services.state.machine_changed, timeout=5000):
        qtbot.mouseClick(window.machine.use_button, QtCore.Qt.MouseButton.LeftButton)
    assert services.state.profile.name == "GeForce RTX 4090"
    assert services.settings.current.chosen_device_id == "nvidia-geforce-rtx-4090"
    assert "GeForce RTX 4090" in window.machine.runs_on_text.text()
    # this machine's llama.cpp has only the CPU backend: a run would measure the CPU, and
    # must not be saved under the card's name
    services.choose_shape("llama-3.2-1b", "q4_0")
    window.show_page("Benchmark")
    qtbot.mouseClick(window.bench.run_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.banner.isVisible, timeout=5000)
    text = window.banner.message.text()
    assert "no CUDA backend" in text and "own hardware, not the GeForce RTX 4090" in text
    assert text in window.machine.notes.text()  # the Machine page said so before the click
    assert not services.bench.running
    assert window.bench.run_button.isEnabled()


def test_a_name_that_fits_several_variants_asks_with_a_short_picker(make_window, qtbot):
    window, services = make_window()
    machine = window.machine
    machine.device_combo.setCurrentIndex(-1)
    machine.device_combo.setEditText("M4 Max")
    qtbot.mouseClick(machine.use_button, QtCore.Qt.MouseButton.LeftButton)
    assert machine.variants.isVisible()
    labels = [b.text() for b in machine.variants.buttons]
    assert len(labels) == 2 and all("GB/s" in label for label in labels)
    assert services.settings.current.chosen_device_id is None  # nothing guessed
    pick = next(b for b in machine.variants.buttons if "32-core" in b.text())
    with qtbot.waitSignal(services.state.machine_changed, timeout=5000):
        qtbot.mouseClick(pick, QtCore.Qt.MouseButton.LeftButton)
    assert services.settings.current.chosen_device_id == "apple-m4-max-32c"
    assert services.state.profile.name == "Apple M4 Max (32-core GPU)"
    assert not machine.variants.isVisible()


def test_settings_and_window_state_persist(make_window, qtbot):
    window, services = make_window()
    window.show_page("History")
    window.bench.thorough.setChecked(True)
    services.settings.update(bench_preset="thorough", workload="summarise")
    window.close()
    window2, services2 = make_window()
    assert services2.settings.current.bench_preset == "thorough"
    assert window2.bench.thorough.isChecked()
    assert window2.nav.currentRow() == PAGES.index("History")
    assert window2.compare.workload.currentData() == "summarise"


def test_opening_a_saved_run_fills_every_page(make_window, qtbot):
    """A recorded run with depth and batched tests (llama-3.2-1b shape, Q4_0, this CI
    machine): the charts draw it, the benchmark page explains it, and the comparison's own row
    reproduces what was measured (it once showed 8x the measured prefill)."""
    import json

    from advisor.core.runs.results import RunResult
    from tests.conftest import DATA

    run = RunResult.from_json(
        json.loads((DATA / "run-llama1b-q4_0-xeon-depth-batch.json").read_text())
    )
    window, services = make_window()
    services.open_run(run)
    window.show_page("Charts")  # a hidden page draws when it is shown
    charts = window.charts
    # the curves are computed off the GUI thread
    qtbot.waitUntil(lambda: charts.depth_predicted.getData()[0] is not None, timeout=10_000)
    xs, ys = charts.depth_measured.getData()
    assert list(xs) == [64.0, 4096 + 64.0]
    assert ys[1] == pytest.approx(4.74, rel=0.01)
    assert len(charts.batch_measured.getData()[0]) == 2
    # the prediction passes through the deep measurement (its KV cost is taken from it)
    px, py = charts.depth_predicted.getData()
    assert py[np.argmin(abs(px - 4160))] == pytest.approx(4.74, rel=0.05)
    assert "(Q4_0) (Q4_0)" not in charts.caption.text()
    legend_labels = [label.text for _, label in charts.bars.getPlotItem().legend.items]
    assert legend_labels == ["measured", "physical ceiling"]  # once each

    text = window.bench.explanation.text()
    assert "attention" in text  # the depth drop is larger than the extra KV bytes explain
    assert "With 4 users at once" in text
    # the prefill share names the peak it is a share of: the one the run was counted against
    assert "17% of the 1.54 TFLOP/s compute peak" in text, text

    # a custom workload shaped like the run's tests: the machine's own row gives them back
    window.show_page("Compare all devices")
    compare = window.compare
    compare.workload.setCurrentIndex(compare.workload.findData("custom"))
    compare.prompt.setValue(0)
    compare.answer.setValue(128)
    compare.history.setValue(0)
    compare.refresh()
    qtbot.waitUntil(
        lambda: compare.model.rowCount() > 100 and compare.model.row_object(0).workload == "custom",
        timeout=20_000,
    )
    own = compare.model.row_object(0)
    assert own.basis == "measured"
    tg = next(t for t in run.tests if t.name == "tg128")
    pp = next(t for t in run.tests if t.name == "pp512")
    assert own.decode_tps == pytest.approx(tg.tokens_per_s, rel=0.03)
    assert own.prefill_tps == pytest.approx(pp.tokens_per_s, rel=0.10)


@pytest.mark.slow
def test_the_app_starts_and_quits_cleanly_as_a_user_starts_it(tmp_path):
    """`advisor` in a fresh process (the README's command), quitting at once: the window came
    up, and quitting while hardware detection still runs prints no traceback."""
    import os
    import subprocess

    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ADVISOR_HOME": str(tmp_path / "home"),
        "ADVISOR_REPORT_STARTUP": "1",
    }
    out = subprocess.run(
        [sys.executable, "-m", "advisor"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "usable window" in out.stdout
    assert "Traceback" not in out.stderr and "Error" not in out.stderr, out.stderr


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX")
def test_a_terminated_app_closes_as_its_window_does_and_leaves_no_process(tmp_path):
    """SIGTERM (a `kill`, a logout) ends the app the way its close button does: exit code 0,
    and its child processes (the projections' process, its tracker) gone with it. Python's
    default died on the spot and left the projection process running, parented to init."""
    import os
    import subprocess

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ADVISOR_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([sys.executable, "-m", "advisor"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        me = psutil.Process(proc.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(me.children(recursive=True)) < 2:
            time.sleep(0.2)  # the window is up once the projection process has started
        children = me.children(recursive=True)
        assert children, "the app started no projection process"
        time.sleep(1.0)
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, [p.cmdline() for p in alive]
    assert "Traceback" not in err, err


def test_detections_never_overlap_and_the_last_request_wins(make_window, qtbot, recorded_report):
    """Clicking 'Detect again' and choosing a device while a detection runs: one probe at a
    time (two would halve each other's bandwidth reading), and the device chosen last shows."""
    import threading

    from advisor.core.hardware.profile import build_profile

    running, overlaps, calls = [0], [0], []
    lock = threading.Lock()

    def slow_detect(paths, *, probe_bandwidth=True, use_cache=True, chosen_device_id=None,
                    catalogue=None):  # fmt: skip
        with lock:
            running[0] += 1
            overlaps[0] = max(overlaps[0], running[0])
        time.sleep(0.3)
        calls.append(chosen_device_id)
        with lock:
            running[0] -= 1
        return recorded_report, build_profile(
            recorded_report, catalogue, chosen_device_id=chosen_device_id
        )

    window, services = make_window(detect=slow_detect)
    finished = []
    services.state.detection_finished.connect(lambda: finished.append(1))
    qtbot.mouseClick(window.machine.redetect_button, QtCore.Qt.MouseButton.LeftButton)
    services.choose_device("nvidia-geforce-rtx-4090")
    services.choose_device("nvidia-geforce-rtx-3090")
    qtbot.waitUntil(lambda: len(finished) == 1, timeout=10_000)
    assert overlaps[0] == 1
    # the window's own start-up detection, the click's, then the two choices as one
    assert calls == [None, None, "nvidia-geforce-rtx-3090"]
    assert services.state.profile.name == "GeForce RTX 3090"
    assert window.machine.redetect_button.isEnabled() and window.machine.status.text() == ""


def test_charts_export_as_png_named_after_the_chosen_file(make_window, qtbot, tiny_run, tmp_path):
    window, _ = make_window()
    window.history.export_to([tiny_run], str(tmp_path / "bench.png"))
    names = sorted(p.name for p in tmp_path.glob("bench-*.png"))
    assert names == [
        "bench-decode-vs-depth.png",
        "bench-many-users.png",
        "bench-measured-vs-ceiling.png",
        "bench-roofline.png",
    ]
    assert all((tmp_path / n).stat().st_size > 5000 for n in names)


def test_a_settings_file_with_a_wrong_type_opens_with_defaults_and_a_notice(make_window):
    import json

    from advisor.core.infra.paths import app_paths

    settings = app_paths().ensure().settings_file
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"reps": "7", "workload": "summarise", "theme": 3}))
    window, services = make_window()
    assert services.settings.current.reps == 5  # the bad field falls back to its default
    assert services.settings.current.workload == "summarise"  # the good ones are kept
    assert window.bench.reps.value() == 5
    assert window.banner.isVisible()
    text = window.banner.message.text()
    assert "reps" in text and "theme" in text and "kept as settings.corrupt-" in text
    kept = list(settings.parent.glob("settings.corrupt-*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["reps"] == "7"


def test_experts_in_ram_from_the_advanced_settings(make_window, qtbot):
    """The Benchmark page's 'Experts kept in RAM' reaches the run's config (llama.cpp's
    --n-cpu-moe) for a mixture of experts; for a dense model it is one sentence in the
    banner and nothing starts."""
    window, services = make_window()
    services.choose_shape("qwen3-30b-a3b", "q4_k_m")
    config = services.bench_config("quick", cpu_moe=12)
    assert config.cpu_moe == 12 and _shared_flags(config)[-2:] == ["-ncmoe", "12"]
    services.choose_shape("llama-3.1-8b", "q4_k_m")
    window.show_page("Benchmark")
    window.bench.advanced.setChecked(True)
    window.bench.cpu_moe.setValue(4)
    window.bench.run_button.click()
    qtbot.waitUntil(window.banner.isVisible, timeout=10_000)
    assert "is a dense model, with no experts to keep in RAM" in window.banner.message.text()
    assert not services.bench.running
