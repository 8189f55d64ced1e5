"""Your workload: import a chat export or a server log, see what it says about how the model is
used, and size the hardware for it. Only statistics are kept, never the text."""

from __future__ import annotations

import html
import threading
from pathlib import Path

from advisor.core.infra.units import fmt_seconds
from advisor.core.traffic import SavedWorkload, TrafficStats
from advisor.gui.qt import QtCore, QtGui, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.tasks import ProgressRelay
from advisor.gui.widgets import accept_file_drag, dropped_file
from advisor.usecases.sizing import (
    DEFAULT_MIN_TPS,
    DEFAULT_TTFT_S,
    Load,
    Server,
    Sizing,
    SizingTarget,
)
from advisor.usecases.workloads import Imported, default_name, import_message, stats_rows

INTRO = (
    "Size the hardware for the way you really use your model: import a llama-server log, an "
    "OpenAI-style JSON Lines log, a ChatGPT <i>conversations.json</i>, or an Open WebUI or "
    "LM Studio export. Choose a file or drop it here. <b>Only statistics are kept, never the "
    "text</b>; the saved workload then appears in the workload lists of Upgrade and Compare."
)
FILE_FILTER = "Chat exports and logs (*.json *.jsonl *.log *.txt);;All files (*)"


def stats_html(name: str, s: TrafficStats) -> str:
    """The statistics of an import as a short table a person reads (the words:
    advisor.usecases.workloads.stats_rows)."""
    rows = stats_rows(s)
    body = "".join(
        f"<tr><td style='padding-right:12px'><b>{html.escape(k)}</b></td>"
        f"<td>{html.escape(v)}</td></tr>"
        for k, v in rows
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in s.notes)
    return f"<p><b>{html.escape(name)}</b> ({html.escape(s.format)})</p><table>{body}</table>" + (
        f"<ul>{notes}</ul>" if notes else ""
    )


class WorkloadPanel(QtWidgets.QWidget):
    def __init__(self, services: AppServices):
        super().__init__()
        self.services = services
        self.state = services.state
        self._cancel: threading.Event | None = None
        self.relay = ProgressRelay(self)
        self.setAcceptDrops(True)
        layout = QtWidgets.QVBoxLayout(self)
        intro = QtWidgets.QLabel(INTRO)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self._build_import())
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self._build_saved(), 1)
        row.addWidget(self._build_sizing(), 2)
        layout.addLayout(row, 1)
        self.relay.changed.connect(lambda permille: self.progress.setValue(permille))
        self.state.workloads_changed.connect(self._show_saved)
        self.state.model_changed.connect(self._model_changed)
        self._model_changed()

    # --- building ----------------------------------------------------------------------

    def _build_import(self) -> QtWidgets.QGroupBox:
        box = QtWidgets.QGroupBox("Import")
        grid = QtWidgets.QGridLayout(box)
        self.choose = QtWidgets.QPushButton("Choose a file…")
        self.choose.clicked.connect(self._choose_file)
        self.path = QtWidgets.QLabel("No file chosen (or drop one on this page).")
        self.path.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.name = QtWidgets.QLineEdit()
        self.name.setPlaceholderText("a name, e.g. my team")
        self.name.setMaxLength(60)
        self.use_model = QtWidgets.QCheckBox("Count tokens with my model's own tokenizer")
        self.run_import = QtWidgets.QPushButton("Import")
        self.run_import.setEnabled(False)
        self.run_import.clicked.connect(self._start_import)
        self.cancel = QtWidgets.QPushButton("Cancel")
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self._cancel_import)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.hide()
        grid.addWidget(self.choose, 0, 0)
        grid.addWidget(self.path, 0, 1, 1, 3)
        grid.addWidget(QtWidgets.QLabel("Save as"), 1, 0)
        grid.addWidget(self.name, 1, 1)
        grid.addWidget(self.use_model, 1, 2)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.run_import)
        buttons.addWidget(self.cancel)
        grid.addLayout(buttons, 1, 3)
        grid.addWidget(self.progress, 2, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        return box

    def _build_saved(self) -> QtWidgets.QGroupBox:
        box = QtWidgets.QGroupBox("Saved workloads")
        v = QtWidgets.QVBoxLayout(box)
        self.saved = QtWidgets.QListWidget()
        self.saved.currentTextChanged.connect(self._show_one)
        self.delete = QtWidgets.QPushButton("Delete")
        self.delete.setEnabled(False)
        self.delete.clicked.connect(self._delete)
        self.stats = QtWidgets.QLabel("Nothing imported yet.")
        self.stats.setWordWrap(True)
        self.stats.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.stats.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop)
        v.addWidget(self.saved, 1)
        v.addWidget(self.delete)
        v.addWidget(self.stats, 2)
        return box

    def _build_sizing(self) -> QtWidgets.QGroupBox:
        box = QtWidgets.QGroupBox("How many cards serve it?")
        v = QtWidgets.QVBoxLayout(box)
        row = QtWidgets.QHBoxLayout()
        self.device = QtWidgets.QLineEdit("RTX 4090")
        self.device.setPlaceholderText("a card, e.g. RTX 4090")
        self.ttft = QtWidgets.QDoubleSpinBox()
        self.ttft.setRange(0.05, 600.0)
        self.ttft.setValue(DEFAULT_TTFT_S)
        self.ttft.setSuffix(" s")
        self.min_tps = QtWidgets.QDoubleSpinBox()
        self.min_tps.setRange(0.5, 1000.0)
        self.min_tps.setValue(DEFAULT_MIN_TPS)
        self.min_tps.setSuffix(" tokens/s")
        self.size_button = QtWidgets.QPushButton("Size it")
        self.size_button.setEnabled(False)
        self.size_button.clicked.connect(self._size)
        for w in (QtWidgets.QLabel("Card"), self.device, QtWidgets.QLabel("first token within"),
                  self.ttft, QtWidgets.QLabel("each at least"), self.min_tps,
                  self.size_button):  # fmt: skip
            row.addWidget(w)
        v.addLayout(row)
        self.answer = QtWidgets.QLabel(
            "Choose a saved workload, then Size it: the answer counts the cards for its peak "
            "and says why fewer are not enough."
        )
        self.answer.setWordWrap(True)
        v.addWidget(self.answer)
        self.servers = QtWidgets.QTableWidget(0, 5)
        self.servers.setHorizontalHeaderLabels(
            [
                "Devices that serve it",
                "How many",
                "Tokens/s each",
                "First token (p95)",
                "Basis",
            ]
        )
        self.servers.horizontalHeader().setSectionResizeMode(
            0, QtWidgets.QHeaderView.ResizeMode.Stretch
        )
        self.servers.verticalHeader().hide()
        self.servers.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        v.addWidget(self.servers, 1)
        return box

    # --- import --------------------------------------------------------------------------

    def _choose_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Choose a chat export or server log", "", FILE_FILTER
        )
        if path:
            self.set_file(path)

    def set_file(self, path: str) -> None:
        self.path.setText(path)
        if not self.name.text().strip():
            self.name.setText(default_name(path))
        self.run_import.setEnabled(self._cancel is None)

    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        accept_file_drag(event)

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        path = dropped_file(event)
        if path:
            self.name.clear()
            self.set_file(path)

    def _model_changed(self) -> None:
        choice = self.state.model
        has_file = choice is not None and bool(choice.path)
        self.use_model.setEnabled(has_file)
        self.use_model.setChecked(has_file)
        self.use_model.setToolTip(
            "Exact counts from the model file's vocabulary (llama.cpp reads only the "
            "vocabulary)." if has_file else
            "Choose a model file on the Model page for exact counts; without one the tokens "
            "are estimated (about 4 bytes of text per token) and labelled so."
        )  # fmt: skip
        self.size_button.setEnabled(choice is not None and bool(self.saved.currentItem()))

    def _start_import(self) -> None:
        path = self.path.text()
        if not Path(path).exists():
            self.services.errors.report("Choose a file to import first.")
            return
        name = self.name.text().strip() or default_name(path)
        self.relay.reset()
        self.progress.setValue(0)
        self.progress.show()
        self.run_import.setEnabled(False)
        self.cancel.setEnabled(True)
        self._cancel = self.services.import_workload(
            path, name, use_model=self.use_model.isChecked(), progress=self.relay.report,
            on_done=self._imported,
        )  # fmt: skip

    def _cancel_import(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def _imported(self, imported: Imported | None) -> None:
        cancelled = self._cancel is not None and self._cancel.is_set()
        self._cancel = None
        self.progress.hide()
        self.cancel.setEnabled(False)
        self.run_import.setEnabled(True)
        if imported is None:
            if cancelled:
                self.state.status_message.emit("Import cancelled; nothing was saved.")
            return
        saved = imported.saved
        if saved is not None:
            self._select_after_reload = saved.name
            self.stats.setText(stats_html(saved.name, imported.stats))
            self.state.status_message.emit(import_message(imported.stats.requests, saved.name))

    # --- saved workloads -------------------------------------------------------------------

    _select_after_reload: str | None = None

    def _show_saved(self) -> None:
        current = self._select_after_reload or (
            self.saved.currentItem().text() if self.saved.currentItem() else None
        )
        self._select_after_reload = None
        self.saved.blockSignals(True)
        self.saved.clear()
        names = list(self.state.saved_workloads)
        self.saved.addItems(names)
        self.saved.blockSignals(False)
        if current in names:
            self.saved.setCurrentRow(names.index(current))
        elif names:
            self.saved.setCurrentRow(0)
        else:
            self._show_one("")

    def _selected(self) -> SavedWorkload | None:
        item = self.saved.currentItem()
        return self.state.saved_workloads.get(item.text()) if item else None

    def _show_one(self, name: str) -> None:
        saved = self.state.saved_workloads.get(name)
        self.delete.setEnabled(saved is not None)
        self.size_button.setEnabled(saved is not None and self.state.model is not None)
        if saved is None:
            self.stats.setText("Nothing imported yet.")
            return
        self.stats.setText(stats_html(saved.name, saved.stats))

    def _delete(self) -> None:
        saved = self._selected()
        if saved is not None:
            self.services.delete_workload(saved.name)

    # --- sizing ------------------------------------------------------------------------------

    def _size(self) -> None:
        saved = self._selected()
        if saved is None:
            return
        load = Load.from_stats(saved.stats, saved.name)
        target = SizingTarget(self.ttft.value(), self.min_tps.value())
        self.answer.setText("Sizing…")
        self.services.size(load, self.device.text(), target, self._sized)

    def _sized(self, sizing: Sizing | None, servers: list[Server]) -> None:
        none = "Give a card to count; the devices below serve it with 1-2 cards or machines."
        self.answer.setText(sizing.answer if sizing is not None else none)
        self.servers.setRowCount(len(servers))
        for row, s in enumerate(servers):
            cells = (s.device, s.how_many, f"{s.decode_per_user_tps:,.1f}",
                     fmt_seconds(s.ttft_p95_s), s.basis)  # fmt: skip
            for col, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                if col in (1, 2, 3):
                    item.setTextAlignment(
                        QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
                    )
                self.servers.setItem(row, col, item)
