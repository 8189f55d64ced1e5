"""'This machine': what was detected, the bandwidth and compute that bound it, and a way to
pick the right device by hand when detection could not tell."""

from __future__ import annotations

from advisor.core.catalogue.catalogue import describe_variant
from advisor.core.catalogue.device import Device
from advisor.gui.qt import QtCore, QtWidgets
from advisor.gui.services import AppServices
from advisor.gui.widgets import Card, escape, fact_sheet_html, heading, muted, value_label
from advisor.usecases.machine_facts import (
    VARIANTS_QUESTION,
    hardware,
    llama_build,
    runs_on,
    variant_question,
)


class VariantPicker(QtWidgets.QFrame):
    """ "Which one is yours?": a short list of the variants a name fits, one button each, with
    what tells them apart (bandwidth, memory)."""

    chosen = QtCore.Signal(str)  # a device id

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self._layout = QtWidgets.QVBoxLayout(self)
        self._layout.setContentsMargins(10, 6, 10, 6)
        self.question = QtWidgets.QLabel()
        self.question.setWordWrap(True)
        self._layout.addWidget(self.question)
        self.buttons: list[QtWidgets.QPushButton] = []
        self.hide()

    def ask(self, question: str, devices: list[Device]) -> None:
        for button in self.buttons:
            self._layout.removeWidget(button)
            button.deleteLater()
        self.buttons = []
        self.question.setText(question)
        for d in devices:
            button = QtWidgets.QPushButton(describe_variant(d))
            button.setStyleSheet("text-align: left; padding: 4px 8px;")
            button.clicked.connect(lambda _=False, device_id=d.id: self._on_button(device_id))
            self._layout.addWidget(button)
            self.buttons.append(button)
        self.show()

    def _on_button(self, device_id: str) -> None:
        self.hide()
        self.chosen.emit(device_id)


class MachinePanel(QtWidgets.QWidget):
    def __init__(self, services: AppServices, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.state = services.state
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(12)

        top = QtWidgets.QHBoxLayout()
        top.addWidget(heading("This machine"))
        top.addStretch(1)
        self.status = QtWidgets.QLabel("Detecting hardware…")
        self.status.setObjectName("muted")
        self.redetect_button = QtWidgets.QPushButton("Detect again")
        top.addWidget(self.status)
        top.addWidget(self.redetect_button)
        layout.addLayout(top)

        self.runs_on = Card("What runs your model")
        self.runs_on_text = value_label()
        self.runs_on.body.addWidget(self.runs_on_text)
        layout.addWidget(self.runs_on)

        row = QtWidgets.QHBoxLayout()
        self.hardware = Card("Detected hardware")
        self.hardware_text = value_label()
        self.hardware.body.addWidget(self.hardware_text)
        self.llama = Card("llama.cpp")
        self.llama_text = value_label()
        self.llama.body.addWidget(self.llama_text)
        row.addWidget(self.hardware, 3)
        row.addWidget(self.llama, 2)
        layout.addLayout(row)

        self.pick = Card("Not right? Choose your device")
        pick_row = QtWidgets.QHBoxLayout()
        self.device_combo = QtWidgets.QComboBox()
        self.device_combo.setEditable(True)
        self.device_combo.setInsertPolicy(QtWidgets.QComboBox.InsertPolicy.NoInsert)
        self.device_combo.completer().setFilterMode(QtCore.Qt.MatchFlag.MatchContains)
        self.device_combo.completer().setCompletionMode(
            QtWidgets.QCompleter.CompletionMode.PopupCompletion
        )
        for d in services.catalogue:
            self.device_combo.addItem(f"{d.name}  ·  {d.memory_bandwidth_gbs:,.0f} GB/s", d.id)
        self.device_combo.setCurrentIndex(-1)
        self.device_combo.lineEdit().setPlaceholderText("Type a GPU, Apple chip or CPU name…")
        self.use_button = QtWidgets.QPushButton("Use this device")
        self.reset_button = QtWidgets.QPushButton("Use the detected one")
        pick_row.addWidget(self.device_combo, 1)
        pick_row.addWidget(self.use_button)
        pick_row.addWidget(self.reset_button)
        self.pick.body.addLayout(pick_row)
        self.variants = VariantPicker()
        self.pick.body.addWidget(self.variants)
        layout.addWidget(self.pick)

        self.notes_card = Card("Detection notes: what could not be read, and why")
        self.notes = value_label()
        self.notes_card.body.addWidget(self.notes)
        self.notes_card.hide()
        layout.addWidget(self.notes_card)
        layout.addStretch(1)

        self.redetect_button.clicked.connect(self._on_redetect_clicked)
        self.use_button.clicked.connect(self._on_use_clicked)
        self.reset_button.clicked.connect(self._on_reset_clicked)
        self.variants.chosen.connect(self._on_variants_chosen)
        self.state.machine_changed.connect(self._on_state_machine_changed)
        # the compute peak shown depends on whether the model is quantised
        self.state.model_changed.connect(self._on_state_machine_changed)
        self.state.detection_finished.connect(self._on_detection_finished)
        # a bandwidth probe beside a running benchmark would spoil both measurements
        services.bench.started.connect(lambda: self.redetect_button.setEnabled(False))
        services.bench.finished.connect(lambda _run: self.redetect_button.setEnabled(True))
        services.bench.failed.connect(lambda _failure: self.redetect_button.setEnabled(True))

    # --- slots -------------------------------------------------------------------------

    def _on_redetect_clicked(self) -> None:
        self.status.setText("Detecting hardware (a few seconds)…")
        self.redetect_button.setEnabled(False)
        self.services.detect(force=True)

    def _on_use_clicked(self) -> None:
        device_id = self.device_combo.currentData()
        if device_id is None:
            text = self.device_combo.currentText().split("  ·  ")[0]
            found = self.services.catalogue.candidates(text)
            if len(found) > 1:  # a name that fits several variants: ask, never guess
                self.variants.ask(variant_question(text, len(found)), found)
                return
            device_id = found[0].id if found else None
        if device_id is None:
            self.services.errors.report("Choose a device from the list (type part of its name).")
            return
        self.status.setText("Using your choice…")
        self.services.choose_device(device_id)

    def _on_variants_chosen(self, device_id: str) -> None:
        self.status.setText("Using your choice…")
        self.services.choose_device(device_id)

    def _on_reset_clicked(self) -> None:
        self.status.setText("Using the detected device…")
        self.services.choose_device(None)

    def _on_detection_finished(self) -> None:
        self.status.setText("")  # done, or failed with its message in the banner
        self.redetect_button.setEnabled(True)

    def _on_state_machine_changed(self) -> None:
        report, profile = self.state.report, self.state.profile
        if report is None or profile is None:
            return
        self.status.setText("")
        quantized = self.state.model.facts.is_quantized if self.state.model else True
        self.runs_on_text.setText(fact_sheet_html(runs_on(report, profile, quantized)))
        self.hardware_text.setText(fact_sheet_html(hardware(report)))
        self.llama_text.setText(fact_sheet_html(llama_build(report)))
        unknown = [n for n in report.notes if n.status != "ok"]
        notes = [escape(n) for n in profile.notes]
        notes += [muted(f"{n.probe}: {n.detail}") for n in unknown[:6]]
        self.notes.setText("<br>".join(notes))
        self.notes_card.setVisible(bool(notes))
        variants = [d for i in profile.variants if (d := self.services.catalogue.by_id(i))]
        if variants:
            self.variants.ask(VARIANTS_QUESTION, variants)
