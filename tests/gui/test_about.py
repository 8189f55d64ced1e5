"""Help > About and the third-party notices, offscreen, as a person sees them; and the
History page's line saying what produced the selected run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core.hardware.profile import build_profile
from advisor.gui.qt import QtCore, QtWidgets

COMMIT = "0c1e570-dirty (ggml 0.25.3)"


@pytest.fixture
def detect_with_commit(recorded_report):
    """The recorded machine, its llama.cpp reporting the commit it was built from."""
    report = replace(
        recorded_report, backend=replace(recorded_report.backend, llama_cpp_commit=COMMIT)
    )

    def detect(
        paths, *, probe_bandwidth=True, use_cache=True, chosen_device_id=None, catalogue=None
    ):
        return report, build_profile(report, catalogue, chosen_device_id=chosen_device_id)

    return detect


def _help_action(window, text: str) -> QtWidgets.QAction:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    return next(a for a in menu.actions() if a.text() == text)


def test_about_box_shows_versions_and_copies_them(make_window, qtbot, detect_with_commit):
    window, _services = make_window(detect=detect_with_commit)
    _help_action(window, "About LLM Hardware Advisor").trigger()
    dialog = window.about_dialog
    assert dialog is not None and dialog.isVisible()
    # filled from a worker: the window stays responsive meanwhile
    qtbot.waitUntil(lambda: dialog.copy_button.isEnabled(), timeout=15_000)
    shown = dialog.shown_text()
    for words in (
        "llama.cpp commit: " + COMMIT,
        "llama.cpp backends: CPU",
        "llama-cpp-python: 0.3.36",
        f"Qt: {QtCore.qVersion()}",
        "PySide6:",
        "Python:",
        "devices; newest date in its data 20",
        "published measurements",
        "Log file:",
    ):
        assert words in shown, words
    QtWidgets.QApplication.clipboard().clear()
    qtbot.mouseClick(dialog.copy_button, QtCore.Qt.MouseButton.LeftButton)
    copied = QtWidgets.QApplication.clipboard().text()
    assert copied == dialog.facts.as_text()
    assert COMMIT in copied and "Log file" in copied
    assert "Copied" in dialog.copied.text()


def test_third_party_notices_open_from_the_about_box(make_window, qtbot, detect_with_commit):
    window, _services = make_window(detect=detect_with_commit)
    _help_action(window, "About LLM Hardware Advisor").trigger()
    qtbot.mouseClick(window.about_dialog.notices_button, QtCore.Qt.MouseButton.LeftButton)
    notices = window.notices_dialog
    assert notices is not None and notices.isVisible()
    qtbot.waitUntil(lambda: "Name: Qt" in notices.text.toPlainText(), timeout=15_000)
    text = notices.text.toPlainText()
    assert f"Version: {QtCore.qVersion()}" in text and "LGPL-3.0" in text
    assert "https://download.qt.io/official_releases/qt/" in text
    assert f"Version: {COMMIT}" in text and "Name: pyside6-essentials" in text


def test_history_shows_the_llama_cpp_commit_of_the_selected_run(make_window, qtbot, tiny_run):
    window, services = make_window()
    run = replace(
        tiny_run,
        llama=replace(tiny_run.llama, llama_cpp_commit=COMMIT),
        app_version="0.1.0",
        catalogue_date="2026-08-21",
    )
    services.history.save(run)
    window.show_page("History")
    window.history.reload()
    qtbot.waitUntil(lambda: window.history.model.rowCount() == 1, timeout=5000)
    assert window.history.detail.text() == ""
    window.history.table.selectRow(0)
    detail = window.history.detail.text()
    assert COMMIT in detail and "0.1.0" in detail and "2026-08-21" in detail
