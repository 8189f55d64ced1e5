"""'Model': open a GGUF (dialog, drag and drop, recent files) or pick a built-in shape, and see
the facts that set its speed and whether it fits."""

from __future__ import annotations

from pathlib import Path

from advisor.core.model.quant import COMMON_QUANTS
from advisor.core.model.shapes import all_shapes
from advisor.gui.qt import QtCore, QtGui, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.table_models import FIT_COLOURS
from advisor.gui.widgets import (
    Card,
    accept_file_drag,
    dropped_file,
    escape,
    fact_sheet_html,
    heading,
    muted,
    value_label,
)
from advisor.usecases.model_facts import fit_here, model_sheet


class ModelPanel(QtWidgets.QWidget):
    def __init__(self, services: AppServices, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.state = services.state
        self.setAcceptDrops(True)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(12)
        layout.addWidget(heading("Model"))

        row = QtWidgets.QHBoxLayout()
        file_card = Card("Your GGUF file")
        self.open_button = QtWidgets.QPushButton("Open a .gguf file…")
        self.open_button.setDefault(True)
        drop = QtWidgets.QLabel("…or drop one anywhere on this page.")
        drop.setWordWrap(True)
        self.recent = QtWidgets.QListWidget()
        self.recent.setMaximumHeight(120)
        self.recent.setToolTip("Recent files: double-click to open")
        file_card.body.addWidget(self.open_button)
        file_card.body.addWidget(drop)
        file_card.body.addWidget(QtWidgets.QLabel("Recent files"))
        file_card.body.addWidget(self.recent)

        shape_card = Card("No file? Use a built-in model shape")
        form = QtWidgets.QFormLayout()
        self.shape_combo = QtWidgets.QComboBox()
        for s in all_shapes():
            self.shape_combo.addItem(s.display_name, s.id)
        self.quant_combo = QtWidgets.QComboBox()
        for q in (*COMMON_QUANTS, "q8_0", "mxfp4"):
            if self.quant_combo.findData(q) < 0:
                self.quant_combo.addItem(q.upper(), q)
        form.addRow("Model", self.shape_combo)
        form.addRow("Quantisation", self.quant_combo)
        self.shape_button = QtWidgets.QPushButton("Use this shape")
        explain = value_label(
            muted(
                "The benchmark writes a model with this exact tensor layout and random weights: "
                "llama.cpp runs it at the same speed as the real download."
            )
        )
        shape_card.body.addLayout(form)
        shape_card.body.addWidget(self.shape_button)
        shape_card.body.addWidget(explain)
        row.addWidget(file_card, 1)
        row.addWidget(shape_card, 1)
        layout.addLayout(row)

        self.facts_card = Card("Model facts")
        self.facts_text = value_label(muted("Open a model or choose a shape."))
        self.facts_card.body.addWidget(self.facts_text)
        layout.addWidget(self.facts_card)
        layout.addStretch(1)

        settings = services.settings.current
        self._select(self.shape_combo, settings.last_shape)
        self._select(self.quant_combo, settings.last_quant)
        self._refresh_recent()

        self.open_button.clicked.connect(self._on_open_clicked)
        self.recent.itemActivated.connect(self._on_recent_activated)
        self.shape_button.clicked.connect(self._on_shape_clicked)
        self.state.model_changed.connect(self._on_state_changed)
        self.state.machine_changed.connect(self._on_state_changed)

    @staticmethod
    def _select(combo: QtWidgets.QComboBox, value: str) -> None:
        index = combo.findData(value)
        if index >= 0:
            combo.setCurrentIndex(index)

    def _refresh_recent(self) -> None:
        self.recent.clear()
        for path in self.services.settings.current.recent_models:
            item = QtWidgets.QListWidgetItem(Path(path).name)
            item.setData(QtCore.Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self.recent.addItem(item)

    # --- drag and drop -------------------------------------------------------------------

    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        accept_file_drag(event)

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        path = dropped_file(event)
        if path:
            self.open_path(path)

    # --- slots -------------------------------------------------------------------------

    def open_path(self, path: str) -> None:
        self.facts_text.setText(muted(f"Reading {Path(path).name}…"))
        self.services.open_model(path, on_done=self._on_model_read)

    def _on_model_read(self, ok: bool) -> None:
        self._refresh_recent()
        if not ok:  # the banner says why; the facts go back to the model still in use
            if self.state.model is None:
                self.facts_text.setText(muted("Open a GGUF file or choose a built-in shape."))
            else:
                self._on_state_changed()

    def _on_open_clicked(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Open a GGUF model", str(Path.home()), "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.open_path(path)

    def _on_recent_activated(self, item: QtWidgets.QListWidgetItem) -> None:
        self.open_path(item.data(QtCore.Qt.ItemDataRole.UserRole))

    def _on_shape_clicked(self) -> None:
        self.services.choose_shape(self.shape_combo.currentData(), self.quant_combo.currentData())

    def _on_state_changed(self) -> None:
        choice = self.state.model
        if choice is None:
            return
        source = choice.path or "built-in shape, benchmarked with random weights"
        sheet = model_sheet(choice.facts, source)
        fit = fit_here(choice.facts, self.state.profile, self.state.report)
        fit_line = (
            f"<b>{escape(fit.label)}</b>: <span style='color:{FIT_COLOURS[fit.fits]}'>"
            f"<b>{escape(fit.verdict)}</b></span> — {escape(fit.detail)}"
            if fit is not None
            else ""
        )
        self.facts_text.setText("<br>".join(x for x in (fact_sheet_html(sheet), fit_line) if x))
