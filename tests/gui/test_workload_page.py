"""The Your workload page: import with progress, the statistics shown, the workload offered
on Upgrade, sizing answered, a bad file one sentence with saved workloads intact."""

from __future__ import annotations

from tests.workloads.test_workload_cli import _team_log

MODEL = ("mistral-nemo-12b", "q4_k_m")


def _import(window, qtbot, path, name):
    page = window.workload
    window.show_page("Your workload")
    page.set_file(str(path))
    page.name.setText(name)
    page.run_import.click()
    qtbot.waitUntil(lambda: name in window.services.state.saved_workloads, timeout=20_000)
    return page


def test_import_size_and_use_on_the_upgrade_page(make_window, qtbot, tmp_path):
    window, services = make_window()
    window.services = services
    services.choose_shape(*MODEL)
    page = _import(window, qtbot, _team_log(tmp_path / "team.jsonl"), "team")
    qtbot.waitUntil(lambda: page.saved.count() == 1, timeout=5000)
    assert "People at once" in page.stats.text() and "peak 20" in page.stats.text()
    # the upgrade page offers it, and projects for its 20 users
    combo = window.upgrade.workload
    index = combo.findData("saved:team")
    assert index >= 0
    combo.setCurrentIndex(index)
    assert window.upgrade.current_workload().concurrency == 20
    # sizing: the card count and why
    page.device.setText("RTX 4090")
    page.size_button.click()
    qtbot.waitUntil(lambda: "people at once" in page.answer.text(), timeout=20_000)
    assert "GeForce RTX 4090" in page.answer.text()
    assert page.servers.rowCount() > 0
    # a chip named by its CPU: the answer names its GPU and how to pick it here
    page.device.setText("Ryzen AI Max+ 395")
    page.size_button.click()
    qtbot.waitUntil(lambda: "is the chip's CPU" in page.answer.text(), timeout=20_000)
    assert page.answer.text().endswith("enter 'Radeon 8060S (Ryzen AI Max+ 395)' as the card.")


def test_a_bad_file_is_one_sentence_and_the_saved_one_stays(make_window, qtbot, tmp_path):
    window, services = make_window()
    window.services = services
    services.choose_shape(*MODEL)
    page = _import(window, qtbot, _team_log(tmp_path / "team.jsonl"), "team")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\x01binary\x02" * 50)
    page.set_file(str(bad))
    page.name.setText("other")
    page.run_import.click()
    qtbot.waitUntil(window.banner.isVisible, timeout=10_000)
    message = window.banner.message.text()
    assert "\n" not in message and message.endswith(".")
    qtbot.waitUntil(lambda: page.run_import.isEnabled(), timeout=5000)
    assert list(services.state.saved_workloads) == ["team"]
