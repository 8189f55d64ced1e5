"""'Upgrade': the answer a hobbyist reads in ten seconds. Would another device pay off for the
way they use their model: in seconds per answer, money and energy, ranked within their budget.

The projections are made once per model, workload and run (a worker thread); prices, the
budget and the electricity price only re-rank them, on the GUI thread, in a few milliseconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from advisor.core.predict.advising.verdict import Verdict
from advisor.core.predict.conditions.workloads import Workload
from advisor.gui import workload_choice
from advisor.gui.host_fields import HostFields
from advisor.gui.panels.candidates import CandidateTableModel
from advisor.gui.panels.charts import _palette_colours, _plot
from advisor.gui.qt import QtCore, QtGui, QtWidgets, plotting
from advisor.gui.report_png import render_png
from advisor.gui.services import AppServices
from advisor.gui.table_models import FIT_COLOURS, FIT_WORDS, OBJECT_ROLE
from advisor.gui.widgets import WarningBox, escape, heading, muted, value_label
from advisor.usecases.report_card import report_card, report_card_html
from advisor.usecases.run_trust import RunTrust
from advisor.usecases.upgrade import (
    Candidate,
    Projected,
    Ranking,
    best_within_budget,
    rank_candidates,
)
from advisor.usecases.upgrade_answer import UpgradeAnswer, upgrade_answer

RESIZE_ROWS = 25  # rows measured when columns are fitted to their contents
CELL_PADDING_PX = 18  # a cell's margins and the sort arrow, beside its widest text


class UpgradePanel(QtWidgets.QWidget):
    full_table_requested = QtCore.Signal()
    measure_again_requested = QtCore.Signal()

    def __init__(self, services: AppServices, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.state = services.state
        self.projected: Projected | None = None
        self.ranking: Ranking | None = None
        self.trust = RunTrust(None, None)
        self.current: UpgradeAnswer | None = None  # what the answer box shows
        self._generation = 0
        self._verdict_generation = 0
        self._rerank_generation = 0
        self._stale = True
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        layout.addWidget(heading("Would an upgrade pay off?"))
        self.caption = value_label(muted("Choose a model (step 2) to see the answer here."))
        layout.addWidget(self.caption)
        self.disturbed = WarningBox("Measure again")
        self.measure_again = self.disturbed.button
        layout.addWidget(self.disturbed)
        layout.addLayout(self._build_controls())
        self.answer = value_label("")
        self.answer.setObjectName("answer")
        self.answer.setStyleSheet(
            "QLabel#answer { padding: 8px 10px; border-radius: 6px; "
            "background: palette(alternate-base); }"
        )
        layout.addWidget(self.answer)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(self._build_table())
        split.addWidget(self._build_chart())
        split.setSizes([330, 210])
        layout.addWidget(split, 1)
        self._connect()

    # --- building ----------------------------------------------------------------------

    def _build_controls(self) -> QtWidgets.QHBoxLayout:
        current = self.services.settings.current
        row = QtWidgets.QHBoxLayout()
        self.workload = QtWidgets.QComboBox()
        workload_choice.fill(self.workload, self.state, current.workload, long=False)
        self.budget = QtWidgets.QSpinBox()
        self.budget.setRange(0, 100_000)
        self.budget.setSingleStep(100)
        self.budget.setPrefix("$")
        self.budget.setSpecialValueText("any budget")
        self.budget.setGroupSeparatorShown(True)
        self.budget.setValue(int(current.budget_usd or 0))
        self.electricity = QtWidgets.QDoubleSpinBox()
        self.electricity.setRange(0.0, 10.0)
        self.electricity.setDecimals(2)
        self.electricity.setSingleStep(0.05)
        self.electricity.setPrefix("$")
        self.electricity.setSuffix(" / kWh")
        self.electricity.setValue(current.electricity_per_kwh)
        self.pro = QtWidgets.QCheckBox("Workstation and datacenter cards")
        self.pro.setChecked(current.show_pro_devices)
        self.report_button = QtWidgets.QPushButton("Save report card…")
        self.full_button = QtWidgets.QPushButton("Full table ›")
        for label, widget in (
            ("Workload", self.workload),
            ("Budget", self.budget),
            ("Electricity", self.electricity),
        ):
            row.addWidget(QtWidgets.QLabel(label))
            row.addWidget(widget)
        row.addWidget(self.pro)
        self.host = HostFields(self.state)
        row.addWidget(self.host)
        row.addStretch(1)
        row.addWidget(self.report_button)
        row.addWidget(self.full_button)
        return row

    def _build_table(self) -> QtWidgets.QTableView:
        self.model = CandidateTableModel(self)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setResizeContentsPrecision(30)
        self.table.setEditTriggers(
            QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked
            | QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self._sized = False
        return self.table

    def _build_chart(self) -> QtWidgets.QWidget:
        # the chart is made with the first ranking (pyqtgraph is not loaded with the window)
        self.chart_area = QtWidgets.QWidget()
        QtWidgets.QVBoxLayout(self.chart_area).setContentsMargins(0, 0, 0, 0)
        self.chart = None
        return self.chart_area

    def _ensure_chart(self) -> None:
        if self.chart is not None:
            return
        pg = plotting()
        self.chart = _plot("Price against speed", "price (US$)", "answers per hour", grid=False)
        self.chart.setMinimumHeight(180)
        self.points = pg.ScatterPlotItem(size=8, name="candidates")
        self.frontier = pg.PlotDataItem(name="value frontier (no cheaper device is faster)")
        self.mine_line = pg.InfiniteLine(angle=0, movable=False, label="this machine")
        self.chart.addItem(self.points)
        self.chart.addItem(self.frontier)
        self.chart.addItem(self.mine_line)
        self.chart_area.layout().addWidget(self.chart)

    def _connect(self) -> None:
        self.workload.currentIndexChanged.connect(self._on_workload_changed)
        self.state.workloads_changed.connect(self._on_saved_workloads)
        self.pro.toggled.connect(self._on_pro_toggled)
        self.budget.valueChanged.connect(self._on_money_changed)
        self.electricity.valueChanged.connect(self._on_money_changed)
        self.model.price_edited.connect(self._on_price_edited)
        self.model.price_refused.connect(lambda text: self.services.errors.report(text))
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.report_button.clicked.connect(self._on_report_clicked)
        self.full_button.clicked.connect(self.full_table_requested)
        self.measure_again.clicked.connect(self.measure_again_requested)
        for signal in (
            self.state.model_changed,
            self.state.machine_changed,
            self.state.run_changed,
            self.state.history_changed,
            self.state.host_changed,
        ):
            signal.connect(self.refresh)

    # --- the workload and money ----------------------------------------------------------

    def current_workload(self) -> Workload:
        return workload_choice.workload_for(self.workload.currentData(), self.state)

    def _on_saved_workloads(self) -> None:
        key = self.workload.currentData()
        workload_choice.fill(self.workload, self.state, key, long=False)
        if self.workload.currentData() != key or (key or "").startswith(workload_choice.SAVED):
            self.refresh()

    def _on_workload_changed(self) -> None:
        self.services.settings.update(workload=self.workload.currentData())
        self.refresh()

    def _on_pro_toggled(self, on: bool) -> None:
        self.services.settings.update(show_pro_devices=on)
        self.refresh()

    def _on_money_changed(self) -> None:
        self.services.settings.update(
            budget_usd=float(self.budget.value()) or None,
            electricity_per_kwh=float(self.electricity.value()),
        )
        self.rerank()

    def _on_price_edited(self, device_id: str, usd: float) -> None:
        prices = dict(self.services.settings.current.prices_usd)
        prices[device_id] = usd
        self.services.settings.update(prices_usd=prices)
        self.rerank()

    # --- computing -------------------------------------------------------------------------

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Project the candidates again (model, machine, run or workload changed); a hidden
        page only notes that it must, and does it when shown."""
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        if self.state.model is None or self.state.profile is None:
            return
        self._generation += 1
        generation = self._generation
        self.model.yours_unused = self.state.profile.unused_gpu_id
        self.trust = self.services.run_trust()
        self._show_answer(self._answer())
        self.services.upgrade_projections(
            self.current_workload(),
            self.pro.isChecked(),
            lambda projected: self._on_projected(projected, generation),
            self.trust,
        )

    def _on_projected(self, projected: Projected, generation: int) -> None:
        if generation != self._generation:  # an older request finished late
            return
        self.projected = projected
        self.rerank()

    def rerank(self) -> None:
        """Prices, budget and energy on the projections we have: milliseconds. The table comes
        at once; the column widths, the chart (made the first time: 20-35 ms), its points and
        the answer follow, one per turn of the event loop, so no turn holds the window long."""
        if self.projected is None:
            return
        current = self.services.settings.current
        self.ranking = rank_candidates(
            self.projected,
            prices=current.prices_usd,
            price_per_kwh=current.electricity_per_kwh,
            budget_usd=current.budget_usd,
        )
        self.model.set_rows(list(self.ranking.candidates))
        self._rerank_generation += 1
        generation = self._rerank_generation
        steps = [self._size_columns, self._ensure_chart, self._draw_chart, self._select_pick]

        def next_step() -> None:
            if generation != self._rerank_generation or not steps:
                return  # a newer ranking took over
            steps.pop(0)()
            if steps:
                QtCore.QTimer.singleShot(0, next_step)

        QtCore.QTimer.singleShot(0, next_step)

    def _size_columns(self) -> None:
        if self._sized or self.ranking is None or not self.ranking.candidates:
            return
        self._sized = True
        # the widest text of the first rows and the header, measured here: Qt's own
        # resizeColumnsToContents asked every cell for a dozen roles through Python (30 ms
        # for 25 rows right after a run)
        header = self.table.horizontalHeader()
        metrics = self.table.fontMetrics()
        rows = range(min(RESIZE_ROWS, self.model.rowCount()))
        for col, title in enumerate(self.model.HEADERS):
            texts = [title, *(self.model.cell_text(r, col) for r in rows)]
            if col == CandidateTableModel.FITS:  # room for the widest fit word ("card + RAM")
                texts += list(FIT_WORDS.values())
            width = max(metrics.horizontalAdvance(t) for t in texts) + CELL_PADDING_PX
            header.resizeSection(col, min(width, 300) if col == 0 else width)

    def _select_pick(self) -> None:
        best = self.pick()
        if best is not None and self.ranking is not None:
            self.table.selectRow(self.ranking.candidates.index(best))
        else:
            self._show_answer(self._answer())

    def pick(self) -> Candidate | None:
        """The recommendation: the fastest candidate within budget that fits."""
        return best_within_budget(self.ranking) if self.ranking is not None else None

    def _on_selection_changed(self, *_args) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or self.ranking is None:
            return
        chosen: Candidate = self.model.index(rows[0].row(), 0).data(OBJECT_ROLE)
        self._show_answer(self._answer(chosen))
        self._verdict_generation += 1
        generation = self._verdict_generation
        self.services.upgrade_verdict(
            chosen.target,
            self.current_workload(),
            lambda v: (
                self._on_verdict(chosen, v) if generation == self._verdict_generation else None
            ),
            self.trust,
        )

    def _on_verdict(self, chosen: Candidate, v: Verdict) -> None:
        self._show_answer(self._answer(chosen, v))

    # --- the answer (advisor.usecases.upgrade_answer words it; this only lays it out) -------

    def _answer(self, chosen: Candidate | None = None, v: Verdict | None = None) -> UpgradeAnswer:
        choice, profile = self.state.model, self.state.profile
        unused = self.services.catalogue.by_id(profile.unused_gpu_id or "") if profile else None
        return upgrade_answer(
            model=choice.label if choice else "",
            machine=profile.name if profile else "this machine",
            trust=self.trust,
            ranking=self.ranking,
            workload=self.current_workload(),
            chosen=chosen,
            verdict=v,
            unused_name=unused.name if unused is not None else None,
            model_facts=choice.facts if choice else None,
        )

    def _show_answer(self, a: UpgradeAnswer) -> None:
        self.current = a
        caption = f"<b>{escape(a.model)}</b> on <b>{escape(a.machine)}</b>, {escape(a.measured)}."
        notes = [escape(x) for x in (a.unused, a.note) if x]
        self.caption.setText("<br>".join([caption, *notes]))
        self.disturbed.say(a.warning)
        if a.chosen is None:
            self.answer.setText(muted(escape(a.headline)))
            return
        _, foreground = _palette_colours()
        lines = [f"<b>{escape(a.headline)}</b>", *(escape(x) for x in a.body_lines())]
        if a.placement:
            lines += [escape(a.placement), f"<code>{escape(a.command)}</code>"]
        body = "<br>".join([*lines, *([escape(a.for_less)] if a.for_less else [])])
        self.answer.setText(
            f"<span style='color:{foreground.name()}'>{body}</span><br>{muted(escape(a.basis))}"
        )

    # --- the chart ---------------------------------------------------------------------

    def _draw_chart(self) -> None:
        assert self.ranking is not None
        self._ensure_chart()
        pg = plotting()
        fit = [
            c
            for c in self.ranking.candidates
            if c.price and c.projection.request_s and c.projection.fits != "no"
        ]
        x = np.array([c.price.usd for c in fit], dtype=float)  # type: ignore[union-attr]
        y = np.array([3600.0 / c.projection.request_s for c in fit], dtype=float)  # type: ignore[operator]
        # nothing with a price and a time to place (a context beyond the model's, nothing that
        # fits): no chart, rather than empty axes around zero
        self.chart.setVisible(bool(fit))
        brushes = [pg.mkBrush(FIT_COLOURS["yes"] if c.on_frontier else "#9aa0a6") for c in fit]
        self.points.setData(x=x, y=y, brush=brushes, data=[c.name for c in fit])
        on = sorted((c for c in fit if c.on_frontier), key=lambda c: c.price.usd)  # type: ignore[union-attr]
        self.frontier.setData(
            [c.price.usd for c in on],  # type: ignore[union-attr]
            [3600.0 / c.projection.request_s for c in on],  # type: ignore[operator]
            pen=pg.mkPen(FIT_COLOURS["yes"], width=2),
        )
        mine = self.ranking.mine
        if mine is not None and mine.request_s:
            self.mine_line.setPos(3600.0 / mine.request_s)
            self.mine_line.show()
        else:
            self.mine_line.hide()

    def chart_png(self) -> bytes:
        if self.chart is None or not self.chart.isVisibleTo(self):
            return b""
        image = self.chart.grab().toImage()
        buffer = QtCore.QBuffer()
        buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")
        return bytes(buffer.data())

    # --- the report card -----------------------------------------------------------------

    def _on_report_clicked(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Save report card", str(Path.home() / "llm-report-card.html"), "HTML (*.html)"
        )
        if path:
            self.save_report_card(path)

    def save_report_card(self, path: str) -> tuple[Path, Path]:
        """Write NAME.html (self-contained) and NAME.png beside it, both made from the answer
        object the page shows (advisor.usecases.report_card); both paths."""
        html_path = Path(path).with_suffix(".html")
        png_path = html_path.with_suffix(".png")
        chart = self.chart_png()
        card = report_card(self.current or self._answer())
        document = report_card_html(card, chart)
        png = render_png(report_card_html(card), chart)
        self.services.write_files(
            {html_path: document.encode("utf-8"), png_path: png},
            f"Report card saved: {html_path.name} and {png_path.name}.",
        )
        return html_path, png_path
