"""The upgrade answer page: ranked candidates, editable prices that survive a restart, the pro
toggle, two-card setups, the report card."""

from __future__ import annotations

import re

import pytest

from advisor.gui.panels.upgrade import CandidateTableModel
from advisor.gui.qt import QtCore
from advisor.gui.table_models import DISPLAY

MODEL = ("llama-3.1-8b", "q4_k_m")


def _ready(window, qtbot, services):
    services.choose_shape(*MODEL)
    window.show_page("Upgrade")
    qtbot.waitUntil(lambda: window.upgrade.model.rowCount() > 20, timeout=20_000)
    return window.upgrade


def _answer(make_window, qtbot, shape: tuple[str, str], waiting_for: str):
    """The Upgrade page for a built-in shape, once its answer says `waiting_for`."""
    window, services = make_window()
    services.choose_shape(*shape)
    window.show_page("Upgrade")
    panel = window.upgrade
    qtbot.waitUntil(lambda: waiting_for in panel.answer.text(), timeout=30_000)
    return panel


def _names(panel) -> list[str]:
    return [c.name for c in panel.ranking.candidates]


def test_ranked_candidates_with_two_cards_and_a_verdict(make_window, qtbot):
    window, services = make_window()
    panel = _ready(window, qtbot, services)
    names = _names(panel)
    assert "GeForce RTX 3090 x2" in names
    assert not any("H100" in n or "MI300" in n for n in names)  # pro cards are behind a toggle
    fitting = [c for c in panel.ranking.candidates if c.projection.fits == "yes"]
    times = [c.projection.request_s for c in fitting]
    assert times == sorted(times)  # fastest first within the budget
    qtbot.waitUntil(lambda: "Best within your budget" in panel.answer.text(), timeout=10_000)
    assert any(c.on_frontier for c in panel.ranking.candidates)


def test_the_pro_toggle_adds_datacenter_cards(make_window, qtbot):
    window, services = make_window()
    panel = _ready(window, qtbot, services)
    before = len(panel.ranking.candidates)
    panel.pro.setChecked(True)
    qtbot.waitUntil(lambda: any("H100" in n for n in _names(panel)), timeout=20_000)
    assert len(panel.ranking.candidates) > before
    assert services.settings.current.show_pro_devices


def test_a_price_edit_reorders_and_survives_a_restart(make_window, qtbot):
    window, services = make_window()
    panel = _ready(window, qtbot, services)
    panel.budget.setValue(500)
    qtbot.waitUntil(lambda: panel.ranking.candidates[0].within_budget, timeout=5000)
    out = next(c for c in panel.ranking.candidates if c.name == "GeForce RTX 4090")
    assert not out.within_budget
    row = panel.ranking.candidates.index(out)
    index = panel.model.index(row, CandidateTableModel.PRICE)
    assert panel.model.setData(index, "$450", QtCore.Qt.ItemDataRole.EditRole)
    top = panel.ranking.candidates[0]
    assert top.name == "GeForce RTX 4090" and top.within_budget  # now in budget, and fastest
    assert panel.model.index(0, CandidateTableModel.PRICE).data(DISPLAY) == "$450 yours"
    services.settings.flush()
    assert services.settings.current.prices_usd["nvidia-geforce-rtx-4090"] == 450
    # a bad price is one sentence, nothing changes
    assert not panel.model.setData(index, "-3", QtCore.Qt.ItemDataRole.EditRole)
    qtbot.waitUntil(window.banner.isVisible, timeout=3000)
    assert "The price takes a number" in window.banner.message.text()
    window.close()

    again, services2 = make_window()
    panel2 = _ready(again, qtbot, services2)
    assert panel2.budget.value() == 500
    assert panel2.ranking.candidates[0].name == "GeForce RTX 4090"


def test_report_card_png_and_html_without_outside_links(make_window, qtbot, tmp_path):
    from advisor.gui.qt import QtGui

    window, services = make_window()
    panel = _ready(window, qtbot, services)
    qtbot.waitUntil(lambda: "Best within" in panel.answer.text(), timeout=10_000)
    with qtbot.waitSignal(services.state.status_message, timeout=10_000):
        html_path, png_path = panel.save_report_card(str(tmp_path / "card"))
    text = html_path.read_text(encoding="utf-8")
    assert "Would an upgrade pay off?" in text and "data:image/png;base64," in text
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:|//)", text)
    assert "<script" not in text.lower()
    image = QtGui.QImage(str(png_path))
    assert not image.isNull() and image.width() == 900 and image.height() > 300


@pytest.mark.parametrize("workload", ["summarise"])
def test_changing_the_workload_reprojects(make_window, qtbot, workload):
    window, services = make_window()
    panel = _ready(window, qtbot, services)
    first = panel.projected
    panel.workload.setCurrentIndex(panel.workload.findData(workload))
    qtbot.waitUntil(lambda: panel.projected is not first, timeout=20_000)
    assert panel.projected.workload.id == workload


def test_a_card_the_build_does_not_use_is_marked_yours(make_window, qtbot, recorded_report):
    """A machine with an RTX 4090 and llama.cpp built for the CPU only (pip's default): the
    answer compared the CPU with a list that offered the 4090 as an upgrade, never saying the
    user already has one."""
    from dataclasses import replace

    from advisor.core.hardware import parsers as P
    from advisor.core.hardware.profile import build_profile, match_catalogue
    from tests.conftest import REPO

    xml = REPO / "tests/core/hardware/fixtures/nvidia/smi-q-x-rtx4090.xml"
    report = replace(recorded_report, gpus=tuple(P.parse_nvidia_smi_xml(xml.read_text())))

    def detect(paths, *, probe_bandwidth=True, use_cache=True, chosen_device_id=None,
               catalogue=None):  # fmt: skip
        matched = match_catalogue(report, catalogue)
        return matched, build_profile(matched, catalogue, chosen_device_id=chosen_device_id)

    window, services = make_window(detect=detect)
    assert services.state.profile.backend == "cpu"
    panel = _ready(window, qtbot, services)
    assert "You already have a GeForce RTX 4090, which this" in panel.caption.text()
    shown = [panel.model.data(panel.model.index(r, CandidateTableModel.DEVICE), DISPLAY)
             for r in range(panel.model.rowCount())]  # fmt: skip
    assert [s for s in shown if "(yours)" in s] == [
        s for s in shown if s.startswith("GeForce RTX 4090  ")
    ]
    assert any(s.startswith("GeForce RTX 4090  (yours)") for s in shown)
    assert not any("RTX 4090 x2  (yours" in s for s in shown)  # two cards are not what you have
    assert "not used" in window.machine.notes.text()
    # the Compare page marks it too
    window.show_page("Compare all devices")
    compare = window.compare.model
    qtbot.waitUntil(lambda: compare.rowCount() > 100, timeout=20_000)
    marked = [compare.data(compare.index(r, compare.DEVICE), DISPLAY)
              for r in range(compare.rowCount())]  # fmt: skip
    assert [m for m in marked if "(yours" in m] == ["GeForce RTX 4090  (yours, unused here)"]


def test_the_answer_names_a_cheaper_card_that_feels_the_same(make_window, qtbot):
    from advisor.core.predict.advising.feel import Waits, would_notice
    from advisor.usecases.upgrade import best_within_budget, enough_for_less

    panel = _answer(make_window, qtbot, ("llama-3.2-1b", "q4_k_m"), "Same feel for less:")
    streamed = panel.current_workload().streamed
    best, cheaper = best_within_budget(panel.ranking), enough_for_less(panel.ranking, streamed)
    assert cheaper is not None and cheaper.price.usd < best.price.usd
    label = f"the {cheaper.name} (${cheaper.price.usd:,.0f} ({cheaper.price.label});"
    assert label in panel.answer.text()

    def noticed(c) -> bool:
        a, b = c.projection, best.projection
        low = a.per_user_tps * min(1.0, a.decode_tps_low / a.decode_tps)  # the band's low end
        return would_notice(streamed, Waits.between(a, b, decode_before_tps=low))

    assert not noticed(cheaper)
    # every card cheaper still that fits within the budget would be noticed
    for c in panel.ranking.candidates:
        if c.price and c.price.usd < cheaper.price.usd and c.projection.fits == "yes":
            assert noticed(c), c.name
    # a budget below that card's price: no line naming it
    panel.budget.setValue(int(cheaper.price.usd) - 1)
    qtbot.waitUntil(lambda: f"the {cheaper.name} (" not in panel.answer.text(), timeout=10_000)


def test_a_history_beyond_the_trained_context_is_said_not_blamed_on_the_budget(make_window, qtbot):
    window, services = make_window()
    services.choose_shape("qwen2.5-32b", "q4_k_m")  # trained on 32,768 tokens
    window.show_page("Upgrade")
    panel = window.upgrade
    panel.workload.setCurrentIndex(panel.workload.findData("long-chat"))  # 32,768 of history
    qtbot.waitUntil(lambda: "No card helps here." in panel.answer.text(), timeout=20_000)
    assert "beyond the 32,768 this model was trained on" in panel.answer.text()
    assert "budget" not in panel.answer.text()
    assert not panel.chart.isVisibleTo(panel)  # no empty axes around zero
    assert panel.chart_png() == b""
    panel.workload.setCurrentIndex(panel.workload.findData("chat"))
    qtbot.waitUntil(lambda: "Best within your budget" in panel.answer.text(), timeout=20_000)
    assert panel.chart.isVisibleTo(panel)


def test_a_pick_without_a_price_says_so_and_how_to_give_it_one(make_window, qtbot):
    # a 70B at 8 bits (75 GB): on the default list every card has a street price, and the
    # fastest that holds it whole is an M5 Ultra at Apple's price; with datacenter cards shown,
    # a B200 (no price in the catalogue) is faster, and the answer names it with no price
    panel = _answer(make_window, qtbot, ("llama-3.1-70b", "q8_0"), "Best within your budget")
    pick = panel.pick()
    assert pick is not None and "M5 Ultra" in pick.name and pick.price.kind == "new"
    assert "$5,499 (new, 2026-08)" in panel.answer.text()
    assert all(c.price is not None for c in panel.ranking.candidates)
    panel.pro.setChecked(True)
    qtbot.waitUntil(lambda: "B200" in panel.answer.text(), timeout=30_000)
    pick = panel.pick()
    assert pick.price is None and pick.aside == "a workstation or datacenter card"
    assert "no price known: type one in its Price cell" in panel.answer.text()
    row = panel.ranking.candidates.index(pick)
    index = panel.model.index(row, CandidateTableModel.PRICE)
    assert panel.model.setData(index, "$9,999", QtCore.Qt.ItemDataRole.EditRole)
    qtbot.waitUntil(lambda: "$9,999" in panel.answer.text(), timeout=10_000)
    assert "no price known" not in panel.answer.text()


def test_a_model_bigger_than_any_card_ranks_hybrid_cards_and_a_ram_upgrade(make_window, qtbot):
    """gpt-oss 120B with 64 GB of RAM read at 30 GB/s: cards that run it with the experts in
    RAM ranked by speed beside what holds it whole, the command for the chosen one, and
    faster RAM named where it pays off; the RAM figures are shared with Compare."""
    window, services = make_window()
    services.choose_shape("gpt-oss-120b", "mxfp4")
    window.show_page("Upgrade")
    panel = window.upgrade
    panel.host.ram.setText("64")
    panel.host.ram.editingFinished.emit()
    panel.host.speed.setText("30")
    panel.host.speed.editingFinished.emit()
    assert services.state.host_choice.ram_gb == 64
    assert services.state.host_choice.ram_bandwidth_gbs == 30

    def ready() -> bool:
        r = panel.ranking
        return r is not None and any("faster RAM" in c.kind for c in r.candidates)

    qtbot.waitUntil(ready, timeout=30_000)
    candidates = panel.ranking.candidates
    hybrid = [c for c in candidates if c.projection.fits == "hybrid" and c.kind == "card"]
    assert len(hybrid) >= 5
    faster = next(c for c in candidates if "faster RAM" in c.kind)
    assert "DDR5-6000" in faster.name and faster.price is not None
    row = candidates.index(hybrid[0])
    assert panel.model.index(row, CandidateTableModel.FITS).data(DISPLAY) == "card + RAM"
    panel.table.selectRow(row)
    qtbot.waitUntil(lambda: "llama-server -m MODEL.gguf" in panel.answer.text(), timeout=10_000)
    assert "--n-cpu-moe" in panel.answer.text() or "-ngl" in panel.answer.text()
    # the option's price is computed, not typed
    option_row = candidates.index(faster)
    index = panel.model.index(option_row, CandidateTableModel.PRICE)
    assert not panel.model.flags(index) & QtCore.Qt.ItemFlag.ItemIsEditable
    # Compare shows the same figures in its fields
    assert window.compare.host.ram.text() == "64" and window.compare.host.speed.text() == "30"


@pytest.mark.parametrize("text", ["0", "-4", "nan", "inf", "1e9", "lots"])
def test_a_bad_ram_figure_is_one_sentence_and_changes_nothing(make_window, qtbot, text):
    window, services = make_window()
    panel = window.upgrade
    panel.host.speed.setText(text)
    with qtbot.waitSignal(services.state.status_message, timeout=3000) as said:
        panel.host.speed.editingFinished.emit()
    assert said.args[0].startswith("The RAM read speed") and "\n" not in said.args[0]
    assert services.state.host_choice.ram_bandwidth_gbs is None
