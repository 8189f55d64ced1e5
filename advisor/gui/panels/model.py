"""'Model': open a GGUF (dialog, drag and drop, recent files) or pick a built-in shape, and see
the facts that set its speed and whether it fits."""

from __future__ import annotations

from pathlib import Path

from advisor.core.infra.units import GiB, fmt_bytes, fmt_params
from advisor.core.model.memory import memory_need
from advisor.core.model.quant import COMMON_QUANTS
from advisor.core.model.shapes import all_shapes
from advisor.gui.qt import QtCore, QtGui, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.widgets import Card, accept_file_drag, dropped_file, heading, muted, value_label


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
        f = choice.facts
        source = choice.path or "built-in shape, benchmarked with random weights"
        moe = (
            (
                f"<br><b>Mixture of experts</b>: {f.n_expert_used} of {f.n_expert} experts per "
                f"token: {fmt_params(f.active_params)} parameters, "
                f"{fmt_bytes(f.active_weights_bytes)} read per token"
            )
            if f.is_moe
            else ""
        )
        kv_1k = f.kv_bytes_per_token("f16") * 1024
        lines = [
            f"<b style='font-size:15px'>{f.name}</b> {muted(source)}",
            f"<b>{fmt_params(f.n_params)}</b> parameters · <b>{f.file_type}</b> · "
            f"<b>{fmt_bytes(f.weights_bytes)}</b> of weights "
            f"({f.weights_bytes / GiB:.2f} GiB){moe}",
            f"{f.architecture}, {f.n_layers} layers, {f.n_heads} attention heads "
            f"({f.n_kv_heads} for keys and values), head size {f.head_dim}",
            f"KV cache: <b>{fmt_bytes(kv_1k)}</b> per 1,000 tokens of context (f16); "
            f"trained context {f.context_length:,} tokens",
        ]
        if f.sliding_window:
            lines.append(
                muted(
                    f"{f.n_swa_layers} of {f.n_layers} layers look back only "
                    f"{f.sliding_window:,} tokens (sliding window)."
                )
            )
        lines.append(self._fit_line())
        self.facts_text.setText("<br>".join(lines))

    def _fit_line(self) -> str:
        choice, profile, report = self.state.model, self.state.profile, self.state.report
        if choice is None or profile is None or report is None:
            return ""
        need_4k = memory_need(choice.facts, 4096).total_bytes
        need_32k = memory_need(choice.facts, min(32768, choice.facts.context_length or 32768))
        gpu_memory = None if profile.device.is_cpu else profile.device.memory_bytes
        where, capacity = (
            ("VRAM", gpu_memory)
            if gpu_memory and not profile.device.unified_memory
            else ("RAM", report.ram.available_bytes or report.ram.total_bytes)
        )
        if not capacity:
            return ""
        ok_4k = need_4k <= capacity * 0.9
        ok_32k = need_32k.total_bytes <= capacity * 0.9
        verdict = "fits" if ok_32k else "fits with up to 4k context" if ok_4k else "does not fit"
        colour = "#2e7d32" if ok_32k else "#b26a00" if ok_4k else "#c62828"
        return (
            f"<b>Fits in {where}</b>: <span style='color:{colour}'><b>{verdict}</b></span> "
            f"— needs {need_4k / GiB:.1f} GiB at 4k tokens of context, "
            f"{need_32k.total_bytes / GiB:.1f} GiB at 32k; {capacity / GiB:.1f} GiB "
            f"{'free' if where == 'RAM' else 'on the card'}"
        )
