"""'Charts': the measured numbers against their physical ceilings, in four pyqtgraph plots.

1. prefill and decode tokens/s against their ceilings on this machine;
2. decode tokens/s against context depth: measured, bandwidth ceiling, predicted;
3. batched decode: aggregate and per-user tokens/s against concurrent streams;
4. a roofline: achieved FLOP/s against arithmetic intensity, with the bandwidth slope and the
   compute roof.

Plot items are made once; a new run only calls setData/setOpts on them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from advisor.core.runs.results import RunResult
from advisor.gui.qt import QtCore, QtGui, QtWidgets, plotting
from advisor.gui.widgets import escape, heading, muted, value_label
from advisor.usecases.charts import RunCurves, charts_caption

MEASURED = "#1f77b4"
CEILING = "#d62728"
PREDICTED = "#ff7f0e"
PER_USER = "#2ca02c"


def _palette_colours() -> tuple[QtGui.QColor, QtGui.QColor]:
    palette = QtWidgets.QApplication.instance().palette()
    return (
        palette.color(QtGui.QPalette.ColorRole.Base),
        palette.color(QtGui.QPalette.ColorRole.Text),
    )


def _plot(title: str, x_label: str, y_label: str, grid: bool = True) -> Any:
    """A themed chart. `grid=False` for a chart shown right after a run: pyqtgraph replays its
    grid on every repaint, 12-16 ms a time on a 2-core machine, and the page repaints 5 times
    as its answer arrives (the grid made the longest GUI-thread stall 190 ms instead of 70)."""
    background, foreground = _palette_colours()
    w = plotting().PlotWidget()
    w.setBackground(background)
    item = w.getPlotItem()
    item.setTitle(title, color=foreground.name(), size="11pt")
    for axis, label in (("bottom", x_label), ("left", y_label)):
        ax = item.getAxis(axis)
        ax.setLabel(label, color=foreground.name())
        ax.setPen(foreground)
        ax.setTextPen(foreground)
    if grid:
        item.showGrid(x=True, y=True, alpha=0.2)
    legend_fill = QtGui.QColor(background)
    legend_fill.setAlpha(220)  # readable where a curve or a bar passes behind it
    item.addLegend(offset=(-10, 10), labelTextColor=foreground.name(), brush=legend_fill)
    w.setMinimumHeight(200)
    return w


class _ChartBox(QtWidgets.QWidget):
    """A chart with its 'Save PNG' button."""

    def __init__(self, plot: Any, name: str):
        super().__init__()
        self.plot, self.name = plot, name
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(plot, 1)
        self.save_button = QtWidgets.QPushButton("Save PNG…")
        self.save_button.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Maximum, QtWidgets.QSizePolicy.Policy.Fixed
        )
        layout.addWidget(self.save_button, 0, QtCore.Qt.AlignmentFlag.AlignRight)
        self.save_button.clicked.connect(self._on_save_clicked)

    def export_png(self, path: str) -> None:
        import pyqtgraph.exporters

        exporter = pyqtgraph.exporters.ImageExporter(self.plot.getPlotItem())
        exporter.parameters()["width"] = 1200
        exporter.export(path)

    def _on_save_clicked(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Save chart", str(Path.home() / f"{self.name}.png"), "PNG image (*.png)"
        )
        if path:
            self.export_png(path)


class ChartsPanel(QtWidgets.QWidget):
    def __init__(self, services, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.state = services.state
        self._stale = True  # drawn when first shown (and after a run, when shown again)
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(16, 16, 16, 16)
        outer.addWidget(heading("Charts"))
        self.caption = value_label(
            muted(
                "Run a benchmark to see your numbers against the physical limits of this machine."
            )
        )
        outer.addWidget(self.caption)
        self._grid = QtWidgets.QGridLayout()
        outer.addLayout(self._grid, 1)
        self.boxes: list[_ChartBox] = []  # built when first needed (ensure_built)
        # a resumed run arrives before (or after) its machine and model: redraw on each
        for signal in (
            self.state.run_changed,
            self.state.machine_changed,
            self.state.model_changed,
        ):
            signal.connect(self._on_state_run_changed)

    def ensure_built(self) -> None:
        """The four charts, built the first time the page is shown or its charts are saved
        (pyqtgraph is not loaded with the window)."""
        if self.boxes:
            return
        self._build_bars()
        self._build_depth()
        self._build_batch()
        self._build_roofline()
        self.boxes = [
            _ChartBox(self.bars, "measured-vs-ceiling"),
            _ChartBox(self.depth, "decode-vs-depth"),
            _ChartBox(self.batch, "many-users"),
            _ChartBox(self.roof, "roofline"),
        ]
        for i, box in enumerate(self.boxes):
            self._grid.addWidget(box, i // 2, i % 2)

    def _build_bars(self) -> None:
        pg = plotting()
        self.bars = _plot("1 · Measured vs ceiling", "", "tokens/s (log scale)")
        # named items join the plot's legend when added: one entry each, no manual adds
        self.bar_measured = pg.BarGraphItem(
            x=[], height=[], width=0.35, brush=MEASURED, name="measured"
        )
        self.bar_ceiling = pg.BarGraphItem(
            x=[], height=[], width=0.35, brush=CEILING, name="physical ceiling"
        )
        self.bars.addItem(self.bar_measured)
        self.bars.addItem(self.bar_ceiling)

    def _build_depth(self) -> None:
        pg = plotting()
        self.depth = _plot("2 · Decode vs context depth", "tokens already in context", "tokens/s")
        self.depth_ceiling = self.depth.plot(
            [],
            [],
            pen=pg.mkPen(CEILING, width=2, style=QtCore.Qt.PenStyle.DashLine),
            name="bandwidth ceiling",
        )
        self.depth_predicted = self.depth.plot(
            [], [], pen=pg.mkPen(PREDICTED, width=2), name="predicted"
        )
        self.depth_measured = self.depth.plot(
            [], [], pen=None, symbol="o", symbolSize=9, symbolBrush=MEASURED, name="measured"
        )

    def _build_batch(self) -> None:
        pg = plotting()
        self.batch = _plot("3 · Many users at once", "concurrent streams", "tokens/s")
        self.batch_ceiling = self.batch.plot(
            [],
            [],
            pen=pg.mkPen(CEILING, width=2, style=QtCore.Qt.PenStyle.DashLine),
            name="bandwidth ceiling (total)",
        )
        self.batch_total = self.batch.plot(
            [], [], pen=pg.mkPen(PREDICTED, width=2), name="predicted total"
        )
        self.batch_user = self.batch.plot(
            [], [], pen=pg.mkPen(PER_USER, width=2), name="predicted per user"
        )
        self.batch_measured = self.batch.plot(
            [], [], pen=None, symbol="o", symbolSize=9, symbolBrush=MEASURED, name="measured total"
        )
        self.batch_measured_user = self.batch.plot(
            [],
            [],
            pen=None,
            symbol="t",
            symbolSize=9,
            symbolBrush=PER_USER,
            name="measured per user",
        )

    def _build_roofline(self) -> None:
        pg = plotting()
        self.roof = _plot(
            "4 · Roofline", "arithmetic intensity (FLOP per byte, log)", "achieved TFLOP/s (log)"
        )
        self.roof.getPlotItem().setLogMode(True, True)
        self.roof.getPlotItem().getAxis("left").enableAutoSIPrefix(False)
        # below the compute roof, right of the slope, is empty: the legend goes there
        self.roof.getPlotItem().legend.setOffset((-10, -10))
        self.roof_line = self.roof.plot(
            [], [], pen=pg.mkPen(CEILING, width=2), name="bandwidth slope / compute roof"
        )
        self.roof_points = self.roof.plot(
            [], [], pen=None, symbol="o", symbolSize=10, symbolBrush=MEASURED, name="your tests"
        )
        self.roof_labels: list[Any] = []

    def export_all(self, path: str) -> list[str]:
        """Save the four charts beside `path`, named after it: bench.png gives
        bench-measured-vs-ceiling.png, bench-decode-vs-depth.png, ... Raises OSError when a
        file could not be written."""
        self.ensure_built()
        target = Path(path)
        paths = []
        for box in self.boxes:
            out = target.with_name(f"{target.stem}-{box.name}.png")
            box.export_png(str(out))
            if not out.is_file():
                raise OSError(f"{out.name} could not be written in {out.parent}")
            paths.append(str(out))
        return paths

    # --- updates -----------------------------------------------------------------------

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        self.ensure_built()
        if self._stale:
            self._on_state_run_changed()

    def _on_state_run_changed(self) -> None:
        # a hidden page does no work: it draws when it is shown (the answer a run ends on
        # never waits behind charts nobody looks at)
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        run = self.state.run
        if run is None or self.state.profile is None:
            return
        self.caption.setText(escape(charts_caption(run)))
        self._update_bars(run)
        self._update_roofline(run)
        self._clear_curves()  # never leave an earlier run's curves under this run's caption
        self._curves_for = run.id
        self.services.curves(run, lambda curves: self._on_curves_ready(run, curves))

    def _clear_curves(self) -> None:
        for item in (
            self.depth_ceiling, self.depth_predicted, self.depth_measured, self.batch_ceiling,
            self.batch_total, self.batch_user, self.batch_measured, self.batch_measured_user,
        ):  # fmt: skip
            item.setData([], [])

    def _on_curves_ready(self, run: RunResult, curves: RunCurves | None) -> None:
        if curves is None or getattr(self, "_curves_for", None) != run.id:
            return  # an older run's curves arrived late, or the run's device is unknown
        deep = [t for t in run.tests if t.kind == "decode" and t.batch == 1]
        self.depth_ceiling.setData(curves.depth_ceiling.x, curves.depth_ceiling.y)
        self.depth_predicted.setData(curves.depth_predicted.x, curves.depth_predicted.y)
        self.depth_measured.setData(
            [t.depth + t.n_gen / 2 for t in deep], [t.tokens_per_s for t in deep]
        )
        batched = [t for t in run.tests if t.kind == "decode" and t.depth == 0]
        self.batch_ceiling.setData(curves.batch_ceiling.x, curves.batch_ceiling.y)
        self.batch_total.setData(curves.batch_total.x, curves.batch_total.y)
        self.batch_user.setData(curves.batch_per_user.x, curves.batch_per_user.y)
        self.batch_measured.setData([t.batch for t in batched], [t.tokens_per_s for t in batched])
        self.batch_measured_user.setData(
            [t.batch for t in batched], [t.per_stream_tps or t.tokens_per_s for t in batched]
        )

    def _update_bars(self, run: RunResult) -> None:
        tests = [
            t
            for t in run.tests
            if (t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps)
        ]
        x = np.arange(len(tests), dtype=float)
        measured = [max(t.tokens_per_s, 1e-3) for t in tests]
        ceilings = [
            t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps for t in tests
        ]
        # bars on a log axis: heights in log10 units
        self.bar_measured.setOpts(x=x - 0.18, height=np.log10(measured), width=0.35)
        self.bar_ceiling.setOpts(
            x=x + 0.18, height=np.log10(np.maximum(ceilings, 1e-3)), width=0.35
        )
        axis = self.bars.getPlotItem().getAxis("bottom")
        axis.setTicks([[(i, t.name) for i, t in enumerate(tests)]])
        left = self.bars.getPlotItem().getAxis("left")
        top = int(np.ceil(max(np.log10(ceilings + measured)) if tests else 3))
        decade_ticks(left, [1.0, 10.0**top])
        self.bars.setYRange(0, top, padding=0.05)
        self.bars.setXRange(-0.6, max(len(tests) - 0.4, 0.6), padding=0)

    def _update_roofline(self, run: RunResult) -> None:
        pg = plotting()
        # the roofline of the machine the run was measured on, as the run recorded it
        peak = run.config.peak_flops_per_s
        bandwidth = (
            run.config.bandwidth_spec_bytes_per_s or run.config.bandwidth_measured_bytes_per_s
        )
        points = [t for t in run.tests if t.arithmetic_intensity and t.achieved_flops_per_s]
        for label in self.roof_labels:
            self.roof.removeItem(label)
        self.roof_labels = []
        if not peak or not bandwidth:
            self.roof_line.setData([], [])
            self.roof_points.setData([], [])
            return
        x = np.logspace(-1, 4, 200)
        self.roof_line.setData(x, np.minimum(peak, bandwidth * x) / 1e12)
        self.roof_points.setData(
            [t.arithmetic_intensity for t in points],
            [t.achieved_flops_per_s / 1e12 for t in points],
        )
        values = [peak / 1e12, bandwidth * 0.1 / 1e12]
        values += [t.achieved_flops_per_s / 1e12 for t in points]
        decade_ticks(self.roof.getPlotItem().getAxis("left"), values)
        decade_ticks(self.roof.getPlotItem().getAxis("bottom"), [0.1, 1e4])
        _, foreground = _palette_colours()
        for t in points:
            # labels of high-intensity points (prefill) sit to their left, inside the plot
            right = t.arithmetic_intensity > 300
            label = pg.TextItem(t.name, color=foreground, anchor=(1, 1) if right else (0, 1))
            label.setPos(np.log10(t.arithmetic_intensity), np.log10(t.achieved_flops_per_s / 1e12))
            self.roof.addItem(label)
            self.roof_labels.append(label)


def _decade_label(k: int) -> str:
    return f"{10.0**k:,.0f}" if k >= 0 else f"{10.0**k:.{-k}f}"


def decade_ticks(axis: Any, values: list[float]) -> None:
    """Labels at whole powers of ten on a log axis (pyqtgraph's own label every minor tick
    of a short range, and they overprint: '0.008 0.007 0.006' in one smudge)."""
    logs = [np.log10(v) for v in values if v > 0]
    if not logs:
        return
    low, high = int(np.floor(min(logs))), int(np.ceil(max(logs)))
    axis.setTicks([[(k, _decade_label(k)) for k in range(low, high + 1)], []])
