"""'History': past runs; open one, compare two, delete, export (CSV, JSON, Markdown, PNG)."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from advisor.core.runs.export import provenance, run_made_with
from advisor.core.runs.results import RunResult
from advisor.gui.qt import QtCore, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.table_models import OBJECT_ROLE, SORT_ROLE, RunsTableModel, describe_test
from advisor.gui.widgets import heading, muted, value_label


class HistoryPanel(QtWidgets.QWidget):
    open_requested = QtCore.Signal(object)  # RunResult
    loaded = QtCore.Signal(list)  # list[RunResult], newest first

    def __init__(
        self,
        services: AppServices,
        export_charts: Callable[[str], list[str]],
        parent: QtWidgets.QWidget | None = None,
    ):
        super().__init__(parent)
        self._generation = 0
        self.services = services
        self.export_charts = export_charts
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.addWidget(heading("History"))
        self.caption = value_label(muted("Every benchmark you run is kept here."))
        layout.addWidget(self.caption)

        self.model = RunsTableModel(self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterCaseSensitivity(QtCore.Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.filter = QtWidgets.QLineEdit()
        self.filter.setPlaceholderText("Filter runs…")
        self.filter.setClearButtonEnabled(True)
        layout.addWidget(self.filter)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(RunsTableModel.DATE, QtCore.Qt.SortOrder.DescendingOrder)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setStretchLastSection(True)
        # size columns from the first rows only: measuring hundreds of rows stalls the GUI
        self.table.horizontalHeader().setResizeContentsPrecision(40)
        layout.addWidget(self.table, 2)

        buttons = QtWidgets.QHBoxLayout()
        self.open_button = QtWidgets.QPushButton("Open")
        self.compare_button = QtWidgets.QPushButton("Compare two")
        self.delete_button = QtWidgets.QPushButton("Delete")
        self.export_button = QtWidgets.QPushButton("Export…")
        for b in (self.open_button, self.compare_button, self.delete_button, self.export_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        # what produced the selected run: app, llama.cpp commit, catalogue (for bug reports)
        self.detail = value_label("")
        layout.addWidget(self.detail)
        self.comparison = QtWidgets.QTextBrowser()
        self.comparison.setMinimumHeight(160)
        self.comparison.hide()
        layout.addWidget(self.comparison, 1)

        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table.doubleClicked.connect(self._on_open_clicked)
        self.open_button.clicked.connect(self._on_open_clicked)
        self.compare_button.clicked.connect(self._on_compare_clicked)
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self.export_button.clicked.connect(self._on_export_clicked)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        services.state.run_changed.connect(self.reload)
        self._update_buttons()

    def reload(self) -> None:
        self._generation += 1
        generation = self._generation
        self.services.load_history(lambda runs: self._on_history_loaded(runs, generation))

    def _on_history_loaded(self, runs: list[RunResult], generation: int | None = None) -> None:
        if generation is not None and generation != self._generation:
            return  # an older reload finished after a newer one: it may list deleted runs
        self.model.set_rows(runs)
        self.table.resizeColumnsToContents()
        count = "1 saved run" if len(runs) == 1 else f"{len(runs)} saved runs"
        hint = "Select two to compare them." if len(runs) > 1 else "Run more to compare them."
        self.caption.setText(muted(f"{count}. {hint}"))
        self._update_buttons()
        self.loaded.emit(runs)

    def selected_runs(self) -> list[RunResult]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(OBJECT_ROLE) for r in rows]

    def _update_buttons(self, *_args) -> None:
        runs = self.selected_runs()
        n = len(runs)
        self.open_button.setEnabled(n == 1)
        self.compare_button.setEnabled(n == 2)
        self.delete_button.setEnabled(n >= 1)
        self.export_button.setEnabled(n >= 1)
        self.detail.setText(run_detail_html(runs[0]) if n == 1 else "")

    # --- slots -------------------------------------------------------------------------

    def _on_open_clicked(self, *_args) -> None:
        runs = self.selected_runs()
        if len(runs) == 1:
            self.open_requested.emit(runs[0])

    def _on_compare_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 2:
            self.comparison.setHtml(compare_html(*runs))
            self.comparison.show()

    def _on_delete_clicked(self) -> None:
        runs = self.selected_runs()
        if not runs:
            return
        answer = QtWidgets.QMessageBox.question(
            self,
            "Delete runs",
            f"Delete {len(runs)} run(s) from the history? This cannot be undone.",
        )
        if answer != QtWidgets.QMessageBox.StandardButton.Yes:
            return
        self.services.delete_runs([run.id for run in runs], self.reload)

    def _on_export_clicked(self) -> None:
        runs = self.selected_runs()
        if not runs:
            return
        path, _chosen = QtWidgets.QFileDialog.getSaveFileName(
            self,
            "Export runs",
            str(Path.home() / "llm-benchmark.csv"),
            "CSV (*.csv);;JSON (*.json);;Markdown (*.md);;Chart images, PNG (*.png)",
        )
        if not path:
            return
        self.export_to(runs, path)

    def export_to(self, runs: list[RunResult], path: str) -> None:
        if path.lower().endswith(".png"):
            # the charts draw the shown run: show this one (it opens on the Charts page)
            self.open_requested.emit(runs[0])
            try:
                written = self.export_charts(path)
            except OSError as exc:
                self.services.errors.report(f"The charts could not be saved ({exc}).")
                return
            window = self.window()
            if isinstance(window, QtWidgets.QMainWindow):
                window.statusBar().showMessage(
                    f"Saved {len(written)} charts beside {Path(path).name}."
                )
            return
        self.services.export(runs, path)


def run_detail_html(run: RunResult) -> str:
    """One line under the table for the selected run: what produced it."""
    made_with = " · ".join(
        f"{html.escape(label)} <b>{html.escape(value)}</b>" for label, value in provenance(run)
    )
    return f"{muted(run_made_with(run))} {made_with}"


def compare_html(a: RunResult, b: RunResult) -> str:
    """Two runs side by side: each test's tokens/s and the ratio."""
    rows = []
    for t in a.tests:
        other = b.test(t.name)
        if other is None:
            continue
        ratio = other.tokens_per_s / t.tokens_per_s if t.tokens_per_s else 0.0
        rows.append(
            f"<tr><td>{describe_test(t)}</td><td align='right'>{t.tokens_per_s:,.1f}</td>"
            f"<td align='right'>{other.tokens_per_s:,.1f}</td>"
            f"<td align='right'><b>{ratio:.2f}x</b></td></tr>"
        )

    def title(r: RunResult) -> str:
        return f"{r.model.name} {r.model.file_type} on {r.device_name}"

    return (
        f"<p><b>A</b>: {title(a)}<br><b>B</b>: {title(b)}</p>"
        "<table cellspacing=6><tr><th align='left'>Test</th><th>A t/s</th><th>B t/s</th>"
        f"<th>B / A</th></tr>{''.join(rows) or '<tr><td>No tests in common.</td></tr>'}"
        "</table>"
    )
