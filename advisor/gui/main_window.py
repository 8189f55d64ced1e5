"""The main window: composes the panels, restores its geometry, computes nothing."""

from __future__ import annotations

from advisor import APP_NAME
from advisor.gui.about import AboutDialog, NoticesDialog, qt_versions
from advisor.gui.errors import ErrorBanner
from advisor.gui.panels.bench import BenchPanel
from advisor.gui.panels.charts import ChartsPanel
from advisor.gui.panels.compare import ComparePanel
from advisor.gui.panels.history import HistoryPanel
from advisor.gui.panels.machine import MachinePanel
from advisor.gui.panels.model import ModelPanel
from advisor.gui.panels.upgrade import UpgradePanel
from advisor.gui.panels.workload import WorkloadPanel
from advisor.gui.qt import QtCore, QtGui, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.steps import StepStrip

PAGES = (
    "This machine", "Model", "Benchmark", "Upgrade", "Your workload", "Charts",
    "Compare all devices", "History",
)  # fmt: skip
ICONS = {
    "This machine": "SP_ComputerIcon",
    "Model": "SP_FileIcon",
    "Benchmark": "SP_MediaPlay",
    "Upgrade": "SP_ArrowUp",
    "Your workload": "SP_DialogOpenButton",
    "Charts": "SP_FileDialogContentsView",
    "Compare all devices": "SP_FileDialogDetailedView",
    "History": "SP_BrowserReload",
}


class MainWindow(QtWidgets.QMainWindow):
    def __init__(
        self, services: AppServices, banner: ErrorBanner, qsettings: QtCore.QSettings | None = None
    ):
        super().__init__()
        self.services = services
        self.qsettings = qsettings
        self.setWindowTitle(APP_NAME)
        self.resize(1280, 800)
        central = QtWidgets.QWidget()
        outer = QtWidgets.QVBoxLayout(central)
        outer.setContentsMargins(8, 8, 8, 8)
        outer.addWidget(banner)
        self.banner = banner
        self.steps = StepStrip(self.show_page)
        outer.addWidget(self.steps)
        body = QtWidgets.QHBoxLayout()
        outer.addLayout(body, 1)

        self.nav = QtWidgets.QListWidget()
        self.nav.setFixedWidth(190)
        self.nav.setIconSize(QtCore.QSize(18, 18))
        self.nav.setSpacing(2)
        font = self.nav.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.nav.setFont(font)
        self.stack = QtWidgets.QStackedWidget()
        self.machine = MachinePanel(services)
        self.model = ModelPanel(services)
        self.bench = BenchPanel(services)
        self.charts = ChartsPanel(services)
        self.compare = ComparePanel(services)
        self.upgrade = UpgradePanel(services)
        self.workload = WorkloadPanel(services)
        self.history = HistoryPanel(services, export_charts=self.charts.export_all)
        panels = (
            self.machine, self.model, self.bench, self.upgrade, self.workload, self.charts,
            self.compare, self.history,
        )  # fmt: skip
        style = self.style()
        for name, panel in zip(PAGES, panels, strict=True):
            icon = style.standardIcon(getattr(QtWidgets.QStyle.StandardPixmap, ICONS[name]))
            self.nav.addItem(QtWidgets.QListWidgetItem(icon, name))
            if panel in (self.charts, self.compare, self.upgrade):
                # these fill the window and scroll inside (plots, table): no outer scrollbar
                self.stack.addWidget(panel)
                continue
            scroll = QtWidgets.QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
            scroll.setWidget(panel)
            self.stack.addWidget(scroll)
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage("Offline: nothing leaves this computer.")
        help_menu = self.menuBar().addMenu("&Help")
        self.about_action = help_menu.addAction(f"About {APP_NAME}")
        self.notices_action = help_menu.addAction("Third-party notices")
        self.about_dialog: AboutDialog | None = None
        self.notices_dialog: NoticesDialog | None = None

        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.nav.currentRowChanged.connect(self._update_steps)
        self.upgrade.full_table_requested.connect(lambda: self.show_page("Compare all devices"))
        self.upgrade.measure_again_requested.connect(self._on_measure_again_requested)
        self.compare.measure_again_requested.connect(self._on_measure_again_requested)
        services.state.status_message.connect(self.statusBar().showMessage)
        for signal in (
            services.state.machine_changed,
            services.state.model_changed,
            services.state.run_changed,
        ):
            signal.connect(self._update_steps)
        self.about_action.triggered.connect(self._on_about_triggered)
        self.notices_action.triggered.connect(self._on_notices_triggered)
        self.history.open_requested.connect(self._on_history_open_requested)
        self.bench.run_finished.connect(self._on_bench_run_finished)
        services.state.model_changed.connect(self._on_state_model_changed)
        self.nav.setCurrentRow(0)
        self._restore()

    def show_page(self, name: str) -> None:
        self.nav.setCurrentRow(PAGES.index(name))

    def _on_measure_again_requested(self) -> None:
        """'Measure again' under a disturbed run's warning: the Benchmark page runs it."""
        self.show_page("Benchmark")
        self.bench.run()

    def _on_history_open_requested(self, run) -> None:
        self.services.open_run(run)
        self.show_page("Charts")

    def _on_bench_run_finished(self, run) -> None:
        self.statusBar().showMessage(f"Run saved: {run.id}. The answer is on Upgrade.")
        # a turn of the event loop after the pages took the new run: never both in one turn
        QtCore.QTimer.singleShot(0, lambda: self.show_page("Upgrade"))

    def _update_steps(self, *_args) -> None:
        state = self.services.state
        done = [
            state.profile is not None,
            state.model is not None,
            state.run is not None,
            self.nav.currentRow() == PAGES.index("Upgrade") or False,
        ]
        self.steps.set_state(PAGES[max(0, self.nav.currentRow())], done)

    def _on_about_triggered(self) -> None:
        if self.about_dialog is None:
            self.about_dialog = AboutDialog(self)
            self.about_dialog.notices_requested.connect(self._on_notices_triggered)
        self.services.about(qt_versions(), self.about_dialog.set_facts)
        self.about_dialog.show()
        self.about_dialog.raise_()

    def _on_notices_triggered(self) -> None:
        if self.notices_dialog is None:
            self.notices_dialog = NoticesDialog(self)
            self.services.notices(qt_versions()[0], self.notices_dialog.set_text)
        self.notices_dialog.show()
        self.notices_dialog.raise_()

    def _on_state_model_changed(self) -> None:
        choice = self.services.state.model
        if choice is not None:
            self.setWindowTitle(f"{APP_NAME} — {choice.label}")

    # --- state -------------------------------------------------------------------------

    def _restore(self) -> None:
        if self.qsettings is None:
            return
        geometry = self.qsettings.value("window/geometry")
        if isinstance(geometry, (QtCore.QByteArray, bytes)):
            self.restoreGeometry(geometry)
        page = self.qsettings.value("window/page")
        if isinstance(page, str) and page in PAGES:
            self.show_page(page)

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        if self.qsettings is not None:
            self.qsettings.setValue("window/geometry", self.saveGeometry())
            self.qsettings.setValue("window/page", PAGES[self.nav.currentRow()])
        self.services.bench.shutdown()
        self.services.settings.flush()
        # answers still on their way have no window left to land in
        self.services.tasks.drop_pending()
        super().closeEvent(event)
