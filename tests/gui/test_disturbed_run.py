"""A run made while other programs were busy is said where the answer is read (Upgrade, Compare,
the report card), with 'Measure again', which reruns it; with a quiet run of the same model on
record the answer rests on that one and says so."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from advisor.gui.bench_controller import BenchController
from advisor.gui.main_window import PAGES
from advisor.gui.qt import QtCore

WARNING = "Your run was disturbed: other programs used 62% of the CPU while it ran"


def _busy(run):
    tests = tuple(replace(t, other_cpu_load=0.62) for t in run.tests)
    return replace(run, id="busy-run", tests=tests, busy=True, created_at=run.created_at + 60)


class _QuietJob:
    """Stands in for the benchmark child: the rerun finishes at once with a quiet run."""

    made: ClassVar[list] = []

    def __init__(self, config, hardware=None):
        self.config = config
        _QuietJob.made.append(config)

    def start(self) -> None:
        pass

    def events(self):
        yield replace(self.result, id=f"rerun-{len(_QuietJob.made)}", created_at=2e9)

    def cancel(self) -> None:
        pass

    def kill(self) -> None:
        pass


def _upgrade_answer(window, qtbot):
    window.show_page("Upgrade")
    panel = window.upgrade
    qtbot.waitUntil(lambda: "Best within your budget" in panel.answer.text(), timeout=30_000)
    return panel


def test_a_busy_run_is_said_on_upgrade_compare_and_the_card_and_measure_again_reruns_it(
    make_window, qtbot, tiny_run, tmp_path
):
    _QuietJob.result, _QuietJob.made = tiny_run, []
    window, services = make_window(bench=BenchController(job_factory=_QuietJob))
    services.open_run(_busy(tiny_run))
    panel = _upgrade_answer(window, qtbot)
    assert panel.disturbed.isVisible() and panel.disturbed.label.text().startswith(WARNING)
    assert "the speed-ups are probably too high" in panel.disturbed.label.text()
    assert panel.current.warning.startswith(WARNING)

    # the report card says it too, from the answer object
    html_path, png_path = panel.save_report_card(str(tmp_path / "card"))
    qtbot.waitUntil(png_path.exists, timeout=10_000)
    card = html_path.read_text(encoding="utf-8")
    assert "<p class='warning'>Your run was disturbed: other programs used 62% of the CPU" in card

    window.show_page("Compare all devices")
    compare = window.compare
    qtbot.waitUntil(lambda: compare.model.rowCount() > 100, timeout=30_000)
    assert compare.disturbed.isVisible() and compare.disturbed.label.text().startswith(WARNING)

    # 'Measure again' runs the benchmark again, and the quiet rerun's answer has no warning
    with qtbot.waitSignal(services.bench.finished, timeout=20_000):
        qtbot.mouseClick(compare.measure_again, QtCore.Qt.MouseButton.LeftButton)
    assert len(_QuietJob.made) == 1 and _QuietJob.made[0].synthetic == tiny_run.config.synthetic
    qtbot.waitUntil(lambda: window.nav.currentRow() == PAGES.index("Upgrade"), timeout=10_000)
    qtbot.waitUntil(lambda: services.state.run.id == "rerun-1", timeout=10_000)
    qtbot.waitUntil(lambda: not panel.disturbed.isVisible(), timeout=10_000)
    assert "measured on" in panel.caption.text()
    with qtbot.waitSignal(services.bench.finished, timeout=20_000):
        services.open_run(_busy(tiny_run))
        panel.refresh()
        qtbot.mouseClick(panel.measure_again, QtCore.Qt.MouseButton.LeftButton)
    assert len(_QuietJob.made) == 2  # Upgrade's button reruns it too


def test_a_quiet_run_of_the_same_model_is_used_and_said(make_window, qtbot, tiny_run):
    window, services = make_window()
    busy = _busy(tiny_run)
    services.history.save(tiny_run)  # a quiet run of the same model, older, in the history
    services.open_run(busy)  # the history is read again when a run is shown
    panel = _upgrade_answer(window, qtbot)
    qtbot.waitUntil(lambda: panel.trust.used is not busy, timeout=10_000)
    assert not panel.disturbed.isVisible()
    assert panel.trust.used is not busy and panel.trust.used.id == tiny_run.id
    assert "Your latest run of this model was disturbed (other programs used 62% of the CPU " in (
        panel.caption.text()
    )
    assert "this answer uses your quiet run of " in panel.caption.text()
    tg = next(t for t in tiny_run.tests if t.kind == "decode")
    assert f"{tg.tokens_per_s:,.1f} tokens/s writing" in panel.caption.text()


def test_the_report_card_is_made_from_the_answer_not_the_label(make_window, qtbot, tmp_path):
    window, services = make_window()
    services.choose_shape("llama-3.2-1b", "q4_k_m")
    panel = _upgrade_answer(window, qtbot)
    qtbot.waitUntil(lambda: bool(panel.current and panel.current.lines), timeout=30_000)
    real = panel.current.verdict_lines()
    panel.answer.setText("<b>words nobody wrote</b>")  # the widget no longer says the answer
    html_path, png_path = panel.save_report_card(str(tmp_path / "card"))
    qtbot.waitUntil(png_path.exists, timeout=10_000)
    card = html_path.read_text(encoding="utf-8")
    assert "words nobody wrote" not in card
    for line in real:
        assert line.replace("'", "&#x27;") in card
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
