"""'Compare and upgrade': every catalogued device's predicted speed for your model and workload,
this machine first; pick targets for a side-by-side chart and the verdict sentence."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from advisor.core.predict.advising.verdict import Verdict
from advisor.core.predict.conditions.workloads import Workload, custom_workload
from advisor.core.predict.projecting.projection import Projection
from advisor.gui import workload_choice
from advisor.gui.host_fields import HostFields
from advisor.gui.panels.charts import MEASURED, PREDICTED, _palette_colours, _plot, decade_ticks
from advisor.gui.qt import QtCore, QtGui, QtWidgets, plotting
from advisor.gui.services import AppServices
from advisor.gui.table_models import OBJECT_ROLE, PinnedFirstRowProxy, ProjectionTableModel
from advisor.gui.widgets import WarningBox, escape, heading, muted, value_label
from advisor.usecases.compare import ProjectionTable, compare_caption, compare_verdict

RESIZE_ROWS = 25  # rows measured when columns are fitted to their contents
VERDICT_HEADER = (
    "<tr><th align='left'>Workload</th><th>Overall</th><th>Prefill</th><th>Decode</th></tr>"
)


class ComparePanel(QtWidgets.QWidget):
    measure_again_requested = QtCore.Signal()

    def __init__(self, services: AppServices, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.state = services.state
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(8)
        layout.addWidget(heading("Compare all devices"))
        self.caption = value_label(
            muted("Choose a model to see what other hardware would do with it.")
        )
        layout.addWidget(self.caption)
        self.disturbed = WarningBox("Measure again")
        self.measure_again = self.disturbed.button
        layout.addWidget(self.disturbed)
        layout.addLayout(self._build_controls(services.settings.current.workload))
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(self._build_table())
        split.addWidget(self._build_bottom())
        split.setSizes([380, 220])
        layout.addWidget(split, 1)
        self._stale = True
        self._connect()

    def _build_controls(self, workload: str) -> QtWidgets.QHBoxLayout:
        controls = QtWidgets.QHBoxLayout()
        self.workload = QtWidgets.QComboBox()
        workload_choice.fill(self.workload, self.state, workload, long=True, custom=True)
        self.prompt = self._spin(0, 1_000_000, 2000, "tokens in")
        self.answer = self._spin(1, 100_000, 300, "tokens out")
        self.history = self._spin(0, 1_000_000, 0, "history")
        self.users = self._spin(1, 512, 1, "users")
        self.custom_box = QtWidgets.QWidget()
        custom = QtWidgets.QHBoxLayout(self.custom_box)
        custom.setContentsMargins(0, 0, 0, 0)
        for w in (self.prompt, self.answer, self.history, self.users):
            custom.addWidget(w)
        self.custom_box.hide()
        self.filter = QtWidgets.QLineEdit()
        self.filter.setPlaceholderText("Filter: e.g. RTX, Apple, 24 GB…")
        self.filter.setClearButtonEnabled(True)
        self.fits_only = QtWidgets.QCheckBox("Only what fits")
        controls.addWidget(QtWidgets.QLabel("Workload"))
        controls.addWidget(self.workload, 2)
        controls.addWidget(self.custom_box)
        controls.addWidget(self.filter, 1)
        controls.addWidget(self.fits_only)
        self.host = HostFields(self.state)
        controls.addWidget(self.host)
        return controls

    def _build_table(self) -> QtWidgets.QTableView:
        self.model = ProjectionTableModel(self)
        self.proxy = PinnedFirstRowProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setStretchLastSection(True)
        # size columns from the first rows only: measuring hundreds of rows stalls the GUI
        self.table.horizontalHeader().setResizeContentsPrecision(40)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
        self._sized_once = False
        # fastest first, until the user sorts by another column (set before any rows arrive,
        # so each refresh sorts once)
        self.table.sortByColumn(ProjectionTableModel.DECODE, QtCore.Qt.SortOrder.DescendingOrder)
        self._filter_text = ""
        self._verdict_generation = 0
        self._generation = 0
        return self.table

    def _build_bottom(self) -> QtWidgets.QWidget:
        bottom = QtWidgets.QWidget()
        bottom_layout = QtWidgets.QHBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        # the chart is made when the first table arrives (pyqtgraph is not loaded with the
        # window); until then its place is kept
        self.chart_area = QtWidgets.QWidget()
        self.chart_area.setMinimumHeight(200)
        QtWidgets.QVBoxLayout(self.chart_area).setContentsMargins(0, 0, 0, 0)
        self.chart = None
        self.verdict = value_label(
            muted("Select one or more devices in the table to compare them with this machine.")
        )
        self.verdict.setMinimumWidth(320)
        bottom_layout.addWidget(self.chart_area, 3)
        bottom_layout.addWidget(self.verdict, 2)
        return bottom

    def _ensure_chart(self) -> None:
        if self.chart is not None:
            return
        pg = plotting()
        self.chart = _plot("Side by side", "", "tokens/s (log scale)")
        self.decode_bars = pg.BarGraphItem(
            x=[], height=[], width=0.35, brush=MEASURED, name="decode t/s (per user)"
        )
        self.prefill_bars = pg.BarGraphItem(
            x=[], height=[], width=0.35, brush=PREDICTED, name="prefill t/s"
        )
        self.chart.addItem(self.decode_bars)  # named items join the legend
        self.chart.addItem(self.prefill_bars)
        self.chart.setMinimumHeight(200)
        self.chart_area.layout().addWidget(self.chart)

    def _connect(self) -> None:
        self.workload.currentIndexChanged.connect(self._on_workload_changed)
        self.state.workloads_changed.connect(self._on_saved_workloads)
        for w in (self.prompt, self.answer, self.history, self.users):
            w.editingFinished.connect(self.refresh)
        self.filter.textChanged.connect(self._on_filter_changed)
        self.fits_only.toggled.connect(self._on_filter_changed)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.measure_again.clicked.connect(self.measure_again_requested)
        for signal in (
            self.state.model_changed,
            self.state.machine_changed,
            self.state.run_changed,
            self.state.history_changed,
            self.state.host_changed,
        ):
            signal.connect(self.refresh)

    @staticmethod
    def _spin(lo: int, hi: int, value: int, suffix: str) -> QtWidgets.QSpinBox:
        s = QtWidgets.QSpinBox()
        s.setRange(lo, hi)
        s.setValue(value)
        s.setSuffix(f" {suffix}")
        s.setGroupSeparatorShown(True)
        return s

    def current_workload(self) -> Workload:
        key = self.workload.currentData()
        if key == "custom":
            w = custom_workload(self.prompt.value(), self.answer.value(), self.history.value())
            return replace(w, concurrency=self.users.value())
        return workload_choice.workload_for(key, self.state)

    def _on_saved_workloads(self) -> None:
        key = self.workload.currentData()
        workload_choice.fill(self.workload, self.state, key, long=True, custom=True)
        if self.workload.currentData() != key or (key or "").startswith(workload_choice.SAVED):
            self.refresh()

    # --- slots -------------------------------------------------------------------------

    def _on_workload_changed(self) -> None:
        key = self.workload.currentData()
        self.custom_box.setVisible(key == "custom")
        self.services.settings.update(workload=key)
        self.refresh()

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        # a hidden page does no work: it projects when it is shown (a benchmark starting or
        # another page's work never waits on ~250 projections nobody looks at)
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        if self.state.model is None or self.state.profile is None:
            return
        w = self.current_workload()
        trust = self.services.run_trust()
        caption = escape(compare_caption(self.state.model.label, w, trust.used is not None))
        self.caption.setText("<br>".join([caption, *([escape(trust.note)] if trust.note else [])]))
        self.disturbed.say(trust.warning)
        self._generation += 1
        generation = self._generation
        self.model.yours_unused = self.state.profile.unused_gpu_id
        self.services.projections(w, lambda table: self._on_projections_ready(table, generation))

    def _on_projections_ready(self, table: ProjectionTable, generation: int) -> None:
        if generation != self._generation:  # an older request finished late: ignore it
            return
        # the proxy re-sorts once, on the reset, by whatever column the user sorted by
        # a refresh (a new run, detection finishing) resets the rows: the devices picked for
        # the side-by-side stay picked
        keep = {(p.device_id, p.count) for p in self.selected()}
        self.model.set_projections(
            table.projections, table.classes, table.this_machine_id, table.prices
        )
        if keep:
            self._select(keep)
        if not self._sized_once:  # later refreshes keep the widths (no re-measuring)
            self._sized_once = True
            # measure the first rows only: every cell of 100+ rows took over 100 ms of the GUI
            # thread right after a run (Qt's own knob for this)
            self.table.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)
            self.table.resizeColumnsToContents()
            header = self.table.horizontalHeader()
            header.resizeSection(
                ProjectionTableModel.DEVICE,
                min(header.sectionSize(ProjectionTableModel.DEVICE), 260),
            )
        self._on_selection_changed()

    def _on_filter_changed(self) -> None:
        text = self.filter.text().strip()
        if text != self._filter_text:  # each change re-filters and re-sorts every row
            self._filter_text = text
            self.proxy.setFilterFixedString(text)
        self.proxy.set_hide_unfit(self.fits_only.isChecked())

    def _select(self, keys: set[tuple[str, int]]) -> None:
        chosen = QtCore.QItemSelection()
        for r in range(self.proxy.rowCount()):
            p = self.proxy.index(r, 0).data(OBJECT_ROLE)
            if p is not None and (p.device_id, p.count) in keys:
                chosen.select(self.proxy.index(r, 0), self.proxy.index(r, 0))
        flags = QtCore.QItemSelectionModel.SelectionFlag
        self.table.selectionModel().select(chosen, flags.ClearAndSelect | flags.Rows)

    def selected(self) -> list[Projection]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(OBJECT_ROLE) for r in rows]

    def _on_selection_changed(self, *_args) -> None:
        if self.model.rowCount() == 0:
            return
        self._ensure_chart()
        mine = self.model.row_object(0)
        picks = [p for p in self.selected() if p.device_id != mine.device_id][:6]
        shown = [mine, *picks]
        x = np.arange(len(shown), dtype=float)
        decode = [p.per_user_tps or 0.0 for p in shown]
        prefill = [p.prefill_tps or 0.0 for p in shown]
        # a CPU and a datacenter GPU differ a thousandfold: bars on a log axis (heights in
        # log10 units from 1 token/s), labelled in tokens/s
        self.decode_bars.setOpts(x=x - 0.18, height=np.log10(np.maximum(decode, 1.0)), width=0.35)
        self.prefill_bars.setOpts(x=x + 0.18, height=np.log10(np.maximum(prefill, 1.0)), width=0.35)
        self.chart.getPlotItem().getAxis("bottom").setTicks(
            [
                [
                    (i, p.device if len(p.device) < 24 else p.device[:22] + "…")
                    for i, p in enumerate(shown)
                ]
            ]
        )
        top = int(np.ceil(np.log10(max([*decode, *prefill, 10.0]))))
        decade_ticks(self.chart.getPlotItem().getAxis("left"), [1.0, 10.0**top])
        self.chart.setXRange(-0.6, len(shown) - 0.4, padding=0)
        self.chart.setYRange(0, top + 4.0, padding=0)  # headroom for the two-row legend
        self._verdict_generation += 1  # a verdict for an earlier selection is dropped
        generation = self._verdict_generation
        if picks:
            self.services.verdict(
                picks[0].device_id,
                self.current_workload(),
                lambda v: self._on_verdict(v) if generation == self._verdict_generation else None,
                count=picks[0].count,
            )
        else:
            self.verdict.setText(
                muted("Select one or more devices in the table to compare them with this machine.")
            )

    def _on_verdict(self, v: Verdict) -> None:
        a = compare_verdict(v)  # advisor.usecases.compare words it; this only lays it out
        _, foreground = _palette_colours()
        cells = "<td align='right'><b>{}</b></td><td align='right'>{}</td><td align='right'>{}</td>"
        rows = "".join(
            f"<tr><td>{escape(r.workload)}</td>"
            + (
                cells.format(r.overall, r.prefill, r.decode)
                if r.overall
                else f"<td colspan=3>{escape(r.why)}</td>"
            )
            + "</tr>"
            for r in a.rows
        )
        price = f"<br>{escape(a.price)}" if a.price else ""
        self.verdict.setText(
            f"<p style='color:{foreground.name()}'><b>{escape(a.sentence)}</b></p>"
            f"<table cellspacing=4>{VERDICT_HEADER}{rows}</table>{price}<br>" + muted(a.basis)
        )
