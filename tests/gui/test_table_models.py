"""Table models without a window: sorting by numbers, 'this machine' pinned first, filtering."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.catalogue.prices import price_of
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.workloads import get_workload
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.projecting.projection import Target, project
from advisor.gui.qt import QtCore
from advisor.gui.table_models import (
    DISPLAY,
    OBJECT_ROLE,
    PinnedFirstRowProxy,
    ProjectionTableModel,
)

MODEL = load_speed_model()  # the shipped fit, as the app uses it


@pytest.fixture
def projections(qapp):
    cat = load_catalogue()
    facts = facts_from_shape(get_shape("llama-3-8b"), "q4_k_m")
    host = Host(32 * GiB, 60e9)
    names = ["Apple M1 (8-core GPU)", "RTX 4090", "RTX 3060 12GB", "L40S", "Tesla T4", "RTX 4070"]
    rows = [
        project(facts, Target(cat.resolve(n)), get_workload("chat"), host=host, model=MODEL)
        for n in names
    ]
    rows[0] = replace(rows[0], device="My Mac")
    classes = {d.id: d.class_label for d in cat}
    return rows, classes


def _column(proxy, col):
    return [proxy.index(r, col).data(DISPLAY) for r in range(proxy.rowCount())]


def test_sorting_is_numeric_and_keeps_this_machine_first(projections):
    rows, classes = projections
    model = ProjectionTableModel()
    model.set_projections(rows, classes, rows[0].device_id)
    proxy = PinnedFirstRowProxy()
    proxy.setSourceModel(model)
    proxy.sort(ProjectionTableModel.DECODE, QtCore.Qt.SortOrder.DescendingOrder)
    objs = [proxy.index(r, 0).data(OBJECT_ROLE) for r in range(proxy.rowCount())]
    assert objs[0].device == "My Mac"
    speeds = [p.per_user_tps for p in objs[1:]]
    assert speeds == sorted(speeds, reverse=True)
    assert objs[1].device.endswith("RTX 4090")  # 1,008 GB/s before 864 (text sort would not)
    proxy.sort(ProjectionTableModel.DECODE, QtCore.Qt.SortOrder.AscendingOrder)
    objs = [proxy.index(r, 0).data(OBJECT_ROLE) for r in range(proxy.rowCount())]
    assert objs[0].device == "My Mac"
    assert [p.per_user_tps for p in objs[1:]] == sorted(speeds)


def test_filter_keeps_this_machine(projections):
    rows, classes = projections
    model = ProjectionTableModel()
    model.set_projections(rows, classes, rows[0].device_id)
    proxy = PinnedFirstRowProxy()
    proxy.setSourceModel(model)
    proxy.setFilterFixedString("RTX")
    names = _column(proxy, ProjectionTableModel.DEVICE)
    assert names[0].startswith("My Mac")
    assert all("RTX" in n for n in names[1:]) and len(names) == 4


@pytest.mark.parametrize(
    "needle", ["RTX", "rtx 40", "apple m", "24 GB", "yes", "", "zzz", "4090\nyes"]
)
def test_the_filter_keeps_the_rows_qts_own_filter_keeps(projections, needle):
    # the proxy searches each row's cached text in one call; Qt's own fixed-string filter on
    # every column (the plain proxy) is the reference: same rows, ignoring case, a cell at a time
    rows, classes = projections
    model = ProjectionTableModel()
    model.set_projections(rows, classes, rows[0].device_id)
    fast, reference = PinnedFirstRowProxy(), QtCore.QSortFilterProxyModel()
    reference.setFilterCaseSensitivity(QtCore.Qt.CaseSensitivity.CaseInsensitive)
    reference.setFilterKeyColumn(-1)
    for proxy in (fast, reference):
        proxy.setSourceModel(model)
        proxy.setFilterFixedString(needle)
    kept = {fast.mapToSource(fast.index(r, 0)).row() for r in range(fast.rowCount())}
    expected = {
        reference.mapToSource(reference.index(r, 0)).row() for r in range(reference.rowCount())
    }
    assert kept == expected | {0}  # this machine stays whatever the filter
    fast.setFilterFixedString("")
    assert fast.rowCount() == len(rows)


def test_cells_say_units_and_fit(projections):
    rows, classes = projections
    cat = load_catalogue()
    prices = [None] + [price_of(cat.by_id(p.device_id), p.count) for p in rows[1:]]
    model = ProjectionTableModel()
    model.set_projections(rows, classes, rows[0].device_id, prices)
    row = next(i for i, p in enumerate(rows) if p.device.endswith("RTX 4090"))
    index = model.index(row, ProjectionTableModel.MEMORY)
    assert index.data(DISPLAY) == "24 GB"
    assert model.index(row, ProjectionTableModel.FITS).data(DISPLAY) == "yes"
    price = model.index(row, ProjectionTableModel.PRICE)
    assert price.data(DISPLAY) == "$2,470 used"  # its street price; kind and month on hover
    assert price.data(QtCore.Qt.ItemDataRole.ToolTipRole).startswith("$2,470 (used, 2026-04)")
    assert model.index(0, ProjectionTableModel.PRICE).data(DISPLAY) == "—"  # yours already
    assert model.index(0, ProjectionTableModel.DEVICE).data(DISPLAY).endswith("(this machine)")
    tip = model.index(row, ProjectionTableModel.BASIS).data(QtCore.Qt.ItemDataRole.ToolTipRole)
    assert "llama.cpp results published for this device" in tip
    # the prefill figure has no range column of its own: its tooltip gives the range and
    # the compute ceiling
    p = rows[row]
    tip = model.index(row, ProjectionTableModel.PREFILL).data(QtCore.Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[0] == (
        f"Likely range {p.prefill_tps_low:,.0f}–{p.prefill_tps_high:,.0f} t/s; compute "
        f"ceiling {p.prefill_ceiling_tps:,.0f} t/s"
    )


def test_only_what_fits_hides_unfit_devices_but_not_this_machine(qapp):
    cat = load_catalogue()
    facts = facts_from_shape(get_shape("llama-3-70b"), "q4_k_m")
    host = Host(16 * GiB, 50e9)
    names = ["RTX 3060 12GB", "H100 SXM", "RTX 4090", "Apple M2 Ultra 76-core GPU"]
    rows = [
        project(facts, Target(cat.resolve(n)), get_workload("chat"), host=host, model=MODEL)
        for n in names
    ]
    assert rows[0].fits == "no"  # this machine (a 12 GB card, 16 GB of RAM) cannot run it
    model = ProjectionTableModel()
    model.set_projections(rows, {d.id: d.class_label for d in cat}, rows[0].device_id)
    proxy = PinnedFirstRowProxy()
    proxy.setSourceModel(model)
    proxy.set_hide_unfit(True)
    kept = [proxy.index(r, 0).data(OBJECT_ROLE).fits for r in range(proxy.rowCount())]
    assert kept[0] == "no" and all(f != "no" for f in kept[1:])
    assert proxy.rowCount() == 1 + sum(p.fits != "no" for p in rows[1:])
    proxy.set_hide_unfit(False)
    assert proxy.rowCount() == len(rows)


def test_the_likely_range_is_of_the_speed_beside_it_with_many_users(qapp):
    """'Decode t/s' shows each user's speed; its range must be that speed's, not one stream's."""
    cat = load_catalogue()
    facts = facts_from_shape(get_shape("llama-3-8b"), "q4_k_m")
    p = project(facts, Target(cat.resolve("RTX 4090")), get_workload("many-users"),
                host=Host(32 * GiB, 60e9), model=MODEL,
)  # fmt: skip
    assert p.per_user_tps < 0.5 * p.decode_tps  # 32 users share the card
    model = ProjectionTableModel()
    model.set_projections([p], {}, None)
    shown = model.index(0, ProjectionTableModel.DECODE).data(DISPLAY)
    low, high = (
        float(x) for x in model.index(0, ProjectionTableModel.BAND).data(DISPLAY).split("–")
    )
    assert low <= float(shown) <= high
    assert (low, high) == pytest.approx(
        (p.decode_tps_low * p.per_user_tps / p.decode_tps,
         p.decode_tps_high * p.per_user_tps / p.decode_tps), abs=0.51)  # fmt: skip


def test_a_detected_memory_size_is_shown_rounded():
    from advisor.gui.table_models import fmt_gb

    assert [fmt_gb(x) for x in (24.0, 23.5402, 0.5, 192.0, 127.96)] == [
        "24 GB", "23.5 GB", "0.5 GB", "192 GB", "128 GB",
    ]  # fmt: skip
