"""Help > About: the versions a bug report needs, with a Copy button; and the third-party
notices. Both dialogs are built empty and filled when the facts arrive from a worker
(AppServices.about / .notices), so opening them never blocks the window."""

from __future__ import annotations

from advisor import APP_NAME
from advisor.gui.qt import QtCore, QtGui, QtWidgets
from advisor.gui.widgets import Card, heading, muted
from advisor.usecases.about import AboutFacts

GATHERING = "Gathering the versions…"


def qt_versions() -> tuple[str, str]:
    """The Qt library as loaded, and PySide6."""
    import PySide6

    return QtCore.qVersion(), PySide6.__version__


class AboutDialog(QtWidgets.QDialog):
    """App, llama.cpp, Qt and Python versions, the catalogue and calibration data, and where
    files live; Copy puts them all on the clipboard as text."""

    notices_requested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.facts: AboutFacts | None = None
        self.setWindowTitle(f"About {APP_NAME}")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        # as large as what it shows: long paths wrap, and no empty space below the facts
        layout.setSizeConstraint(QtWidgets.QLayout.SizeConstraint.SetFixedSize)
        top = QtWidgets.QHBoxLayout()
        icon = QtWidgets.QLabel()
        window_icon = QtWidgets.QApplication.windowIcon()
        if not window_icon.isNull():
            icon.setPixmap(window_icon.pixmap(64, 64))
            top.addWidget(icon, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        titles = QtWidgets.QVBoxLayout()
        titles.addWidget(heading(APP_NAME))
        titles.addWidget(
            QtWidgets.QLabel(
                "Measure your own GGUF model with llama.cpp, see what limits its speed, and "
                "what an upgrade would buy.<br>"
                + muted(
                    "Free software under the MIT license. Offline: nothing leaves this computer."
                )
            )
        )
        titles.addStretch(1)
        top.addLayout(titles, 1)
        layout.addLayout(top)

        card = Card("Versions and data")
        self.form = QtWidgets.QFormLayout()
        self.form.setLabelAlignment(
            QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop
        )
        self.form.setFieldGrowthPolicy(
            QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow
        )
        self.form.setHorizontalSpacing(16)
        card.body.addLayout(self.form)
        self.placeholder = QtWidgets.QLabel(GATHERING)
        self.form.addRow(self.placeholder)
        layout.addWidget(card)

        buttons = QtWidgets.QHBoxLayout()
        self.copy_button = QtWidgets.QPushButton("Copy")
        self.copy_button.setToolTip("Put all of this on the clipboard, for a bug report")
        self.copy_button.setEnabled(False)
        self.notices_button = QtWidgets.QPushButton("Third-party notices")
        self.close_button = QtWidgets.QPushButton("Close")
        self.copied = QtWidgets.QLabel("")
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.notices_button)
        buttons.addWidget(self.copied)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout.addLayout(buttons)

        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.notices_button.clicked.connect(self.notices_requested)
        self.close_button.clicked.connect(self.accept)

    def set_facts(self, facts: AboutFacts) -> None:
        """Show the facts (from a worker); Copy becomes available."""
        self.facts = facts
        while self.form.rowCount():
            self.form.removeRow(0)
        for label, value in facts.lines():
            field = QtWidgets.QLabel(value)
            field.setWordWrap(True)
            field.setMinimumWidth(520)
            field.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            self.form.addRow(f"{label}:", field)
        self.copy_button.setEnabled(True)
        self.copied.setText("")

    def shown_text(self) -> str:
        """What the dialog shows, label and value per line (what a person reads)."""
        lines = []
        for row in range(self.form.rowCount()):
            label = self.form.itemAt(row, QtWidgets.QFormLayout.ItemRole.LabelRole)
            field = self.form.itemAt(row, QtWidgets.QFormLayout.ItemRole.FieldRole)
            if label is not None and field is not None:
                lines.append(f"{label.widget().text()} {field.widget().text()}")
            else:
                spanning = self.form.itemAt(row, QtWidgets.QFormLayout.ItemRole.SpanningRole)
                if spanning is not None:
                    lines.append(spanning.widget().text())
        return "\n".join(lines)

    def _on_copy_clicked(self) -> None:
        if self.facts is None:
            return
        QtWidgets.QApplication.clipboard().setText(self.facts.as_text())
        self.copied.setText(muted("Copied: paste it into your bug report."))


class NoticesDialog(QtWidgets.QDialog):
    """The third-party notices as plain text (they run to thousands of lines)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Third-party notices")
        layout = QtWidgets.QVBoxLayout(self)
        self.text = QtWidgets.QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.text.setPlainText("Reading the notices…")
        layout.addWidget(self.text, 1)
        close = QtWidgets.QPushButton("Close")
        close.clicked.connect(self.accept)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        row.addWidget(close)
        layout.addLayout(row)
        self.resize(780, 620)

    def set_text(self, text: str) -> None:
        self.text.setPlainText(text)
