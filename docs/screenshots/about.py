"""Screenshots of the About box, light and dark, drawn offscreen (no virtual screen needed).

    .venv/bin/python docs/screenshots/about.py     # writes docs/screenshots/about-{light,dark}.png

The facts are this installation's own (about_facts, llama.cpp asked in a child process when no
detection is cached). The app follows the system's colours; the dark shot uses a dark palette
like the one a dark desktop theme gives Qt's Fusion style.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from advisor.core.infra.paths import bundled
from advisor.gui.about import AboutDialog, qt_versions
from advisor.gui.qt import QtGui, QtWidgets
from advisor.usecases.about import about_facts

OUT = Path(os.environ.get("OUT", Path(__file__).parent))


def dark_palette() -> QtGui.QPalette:
    role, group = QtGui.QPalette.ColorRole, QtGui.QPalette.ColorGroup
    palette = QtGui.QPalette()
    colours = {
        role.Window: "#2b2b2b",
        role.WindowText: "#e6e6e6",
        role.Base: "#1f1f1f",
        role.AlternateBase: "#2f2f2f",
        role.Text: "#e6e6e6",
        role.Button: "#3a3a3a",
        role.ButtonText: "#e6e6e6",
        role.Highlight: "#3d6fb4",
        role.HighlightedText: "#ffffff",
        role.ToolTipBase: "#3a3a3a",
        role.ToolTipText: "#e6e6e6",
        role.PlaceholderText: "#9a9a9a",
        role.Link: "#7fb0ff",
    }
    for r, colour in colours.items():
        palette.setColor(r, QtGui.QColor(colour))
    palette.setColor(group.Disabled, role.ButtonText, QtGui.QColor("#808080"))
    palette.setColor(group.Disabled, role.WindowText, QtGui.QColor("#808080"))
    return palette


def shoot(app: QtWidgets.QApplication, facts, name: str) -> Path:
    dialog = AboutDialog()
    dialog.set_facts(facts)
    dialog.show()
    app.processEvents()  # a script, not the app: lay the dialog out before grabbing it
    path = OUT / f"about-{name}.png"
    dialog.grab().save(str(path))
    dialog.close()
    return path


def main() -> int:
    app = QtWidgets.QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    app.setWindowIcon(QtGui.QIcon(str(bundled("resources") / "icon.png")))
    qt, pyside6 = qt_versions()
    facts = about_facts(qt_version=qt, pyside6_version=pyside6, ask_llama=True)
    print(shoot(app, facts, "light"))
    app.setPalette(dark_palette())
    print(shoot(app, facts, "dark"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
