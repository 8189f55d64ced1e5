"""The Compare page: what a person picked stays picked."""

from __future__ import annotations


def test_the_devices_picked_for_the_side_by_side_survive_a_refresh(make_window, qtbot):
    # a refresh (a run saved, detection finishing) resets the table's rows: the two cards a
    # person had selected vanished from the side-by-side chart and its verdict
    window, services = make_window()
    services.choose_shape("llama-3.1-8b", "q4_k_m")
    window.show_page("Compare all devices")
    compare = window.compare
    qtbot.waitUntil(lambda: compare.model.rowCount() > 100, timeout=30_000)
    compare.filter.setText("RTX 40")
    compare.table.selectRow(1)
    compare.table.selectRow(2)  # a click on another row replaces the selection
    picked = [(p.device_id, p.count) for p in compare.selected()]
    assert len(picked) == 1
    with qtbot.waitSignal(compare.model.modelReset, timeout=30_000):
        compare.refresh()
    assert [(p.device_id, p.count) for p in compare.selected()] == picked
    qtbot.waitUntil(lambda: "faster" in compare.verdict.text(), timeout=20_000)
