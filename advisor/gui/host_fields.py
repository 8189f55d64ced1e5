"""'Your PC': the RAM the projected cards sit beside, on the Upgrade and Compare pages. An
upgrade is a card in *this* computer, so its RAM size and read speed decide whether a model
bigger than the card runs with its experts in RAM, and how fast. Empty fields keep what was
detected (shown as the placeholder); what the user types is shared by both pages (AppState)."""

from __future__ import annotations

from advisor.core.infra.errors import InputError
from advisor.core.infra.units import GiB
from advisor.core.infra.validate import number
from advisor.gui.qt import QtWidgets
from advisor.gui.state import AppState, HostChoice

MAX_RAM_GB = 65536.0  # the command line's --ram-gb limit
MAX_RAM_GBS = 20000.0  # the command line's --ram-bandwidth-gbs limit
INVALID = "QLineEdit { border: 1px solid #d64545; }"


class HostFields(QtWidgets.QWidget):
    """Two fields: RAM size (GB) and measured read speed (GB/s)."""

    def __init__(self, state: AppState, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.state = state
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.ram = QtWidgets.QLineEdit()
        self.speed = QtWidgets.QLineEdit()
        for field, width in ((self.ram, 64), (self.speed, 90)):
            field.setMaximumWidth(width)
            field.setClearButtonEnabled(False)
            field.editingFinished.connect(self._apply)
        self.ram.setToolTip(
            "System RAM of the PC the card goes in, GB: a model bigger than the card keeps "
            "its experts or first layers there. Empty: this machine's."
        )
        self.speed.setToolTip(
            "RAM read speed in GB/s as a memory benchmark measures it (this app's probe on "
            "the Machine page): what the weights kept in RAM stream at. Empty: this "
            "machine's, measured or estimated."
        )
        self._help = {self.ram: self.ram.toolTip(), self.speed: self.speed.toolTip()}
        row.addWidget(QtWidgets.QLabel("Your PC's RAM"))
        row.addWidget(self.ram)
        row.addWidget(QtWidgets.QLabel("GB at"))
        row.addWidget(self.speed)
        row.addWidget(QtWidgets.QLabel("GB/s"))
        state.host_changed.connect(self.show_choice)
        state.machine_changed.connect(self.show_choice)
        self.show_choice()

    def show_choice(self) -> None:
        """The user's figures, or the detected ones as placeholders."""
        c, profile = self.state.host_choice, self.state.profile
        if profile is not None:
            host = profile.host
            self.ram.setPlaceholderText(f"{host.ram_bytes / GiB:.0f}")
            self.speed.setPlaceholderText(f"{host.ram_bandwidth_bytes_per_s / 1e9:.0f}")
        for field, value in ((self.ram, c.ram_gb), (self.speed, c.ram_bandwidth_gbs)):
            text = f"{value:g}" if value is not None else ""
            if field.text() != text and not field.hasFocus():
                field.setText(text)
            field.setStyleSheet("")

    def _apply(self) -> None:
        try:
            ram = self._read(self.ram, "The RAM size", MAX_RAM_GB, "GB")
            speed = self._read(self.speed, "The RAM read speed", MAX_RAM_GBS, "GB/s")
        except InputError as exc:
            self.state.status_message.emit(str(exc))
            return
        self.state.set_host_choice(HostChoice(ram, speed))

    def _read(self, field: QtWidgets.QLineEdit, label: str, high: float, unit: str) -> float | None:
        text = field.text().strip()
        field.setStyleSheet("")
        field.setToolTip(self._help[field])
        if not text:
            return None
        try:
            value = number(label, text, 0, high, unit=unit)
        except InputError:
            field.setStyleSheet(INVALID)
            field.setToolTip(f"{label}: above 0 and up to {high:,.0f} {unit}; empty: detected.")
            raise
        return value
