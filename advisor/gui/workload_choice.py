"""The workload box of Upgrade and Compare: the presets, then the user's imported workloads.

Item data is the preset id, or "saved:NAME" for an imported one; the same key is remembered
in the settings, and resolves to the same numbers the command line's `--workload NAME` gives.
"""

from __future__ import annotations

from advisor.core.predict.conditions.workloads import PRESETS, Workload
from advisor.gui.qt import QtCore, QtWidgets
from advisor.gui.state import AppState
from advisor.usecases.workloads import as_workload

SAVED = "saved:"


def fill(
    combo: QtWidgets.QComboBox, state: AppState, current: str, *, long: bool, custom: bool = False
) -> None:
    """(Re)fill `combo` and select `current` (the first preset when it is gone)."""
    combo.blockSignals(True)
    combo.clear()
    for w in PRESETS.values():
        combo.addItem(f"{w.label}: {w.description}" if long else w.label, w.id)
        combo.setItemData(combo.count() - 1, w.description, QtCore.Qt.ItemDataRole.ToolTipRole)
    if custom:
        combo.addItem("Custom: your own numbers", "custom")
    for name, saved in state.saved_workloads.items():
        w = as_workload(saved)
        combo.addItem(f"Yours: {name}", SAVED + name)
        combo.setItemData(combo.count() - 1, w.description, QtCore.Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    combo.blockSignals(False)


def workload_for(key: str | None, state: AppState) -> Workload:
    """The Workload behind an item's key (a vanished imported one falls back to chat)."""
    if key and key.startswith(SAVED):
        saved = state.saved_workloads.get(key[len(SAVED) :])
        if saved is not None:
            return as_workload(saved)
        return PRESETS["chat"]
    return PRESETS.get(key or "chat", PRESETS["chat"])
