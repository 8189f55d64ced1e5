"""What the user has chosen and what the app knows, as one small QObject with signals.

Panels read it and call services; they never hold their own copy of the model choice or the
machine profile.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.hardware.model import HardwareReport
from advisor.core.hardware.profile import MachineProfile
from advisor.core.model.facts import ModelFacts
from advisor.core.runs.results import RunResult
from advisor.core.traffic import SavedWorkload
from advisor.gui.qt import QtCore


@dataclass(frozen=True)
class ModelChoice:
    """A model file, or a built-in shape to benchmark synthetically."""

    facts: ModelFacts
    path: str | None = None
    shape_id: str | None = None
    quant: str | None = None

    @property
    def label(self) -> str:
        if self.path:
            return f"{self.facts.name} ({self.facts.file_type})"
        return self.facts.name or f"{self.shape_id} {self.quant} (synthetic)"


@dataclass(frozen=True)
class HostChoice:
    """The user's choices for the computer the projected cards sit in (Upgrade and Compare
    pages), over what was detected: None keeps the detected figure."""

    ram_gb: float | None = None
    ram_bandwidth_gbs: float | None = None  # a measured read bandwidth, as the probe reports


class AppState(QtCore.QObject):
    machine_changed = QtCore.Signal()
    model_changed = QtCore.Signal()
    run_changed = QtCore.Signal()
    detection_finished = QtCore.Signal()  # after each detection, whether it worked or not
    status_message = QtCore.Signal(str)  # a sentence for the status bar (a file was saved)
    workloads_changed = QtCore.Signal()  # the saved (imported) workloads
    history_changed = QtCore.Signal()  # the saved runs were read again
    host_changed = QtCore.Signal()  # the user's choices for the computer the cards sit in

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.report: HardwareReport | None = None
        self.profile: MachineProfile | None = None
        self.model: ModelChoice | None = None
        self.run: RunResult | None = None
        self.saved_workloads: dict[str, SavedWorkload] = {}
        self.history: tuple[RunResult, ...] = ()  # the saved runs, newest first
        self.host_choice = HostChoice()

    def set_machine(self, report: HardwareReport, profile: MachineProfile) -> None:
        self.report, self.profile = report, profile
        self.machine_changed.emit()

    def set_model(self, choice: ModelChoice) -> None:
        self.model = choice
        self.model_changed.emit()

    def set_run(self, run: RunResult | None) -> None:
        self.run = run
        self.run_changed.emit()

    def set_history(self, runs: list[RunResult]) -> None:
        self.history = tuple(runs)
        self.history_changed.emit()

    def set_host_choice(self, choice: HostChoice) -> None:
        if choice != self.host_choice:
            self.host_choice = choice
            self.host_changed.emit()

    def set_saved_workloads(self, saved: dict[str, SavedWorkload]) -> None:
        self.saved_workloads = dict(saved)
        self.workloads_changed.emit()
