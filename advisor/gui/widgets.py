"""Small building blocks shared by the panels: cards, headings, rich labels, muted text."""

from __future__ import annotations

import html

from advisor.gui.qt import QtCore, QtGui, QtWidgets


def escape(text: str) -> str:
    """Text for rich text: <, > and & escaped, quotes left as they are (element content)."""
    return html.escape(text, quote=False)


def muted_colour() -> str:
    app = QtWidgets.QApplication.instance()
    if app is None:
        return "#6b6b6b"
    text = app.palette().color(QtGui.QPalette.ColorRole.WindowText)
    base = app.palette().color(QtGui.QPalette.ColorRole.Window)
    # halfway between text and background: readable in light and dark themes
    mixed = QtGui.QColor(
        (text.red() + base.red()) // 2,
        (text.green() + base.green()) // 2,
        (text.blue() + base.blue()) // 2,
    )
    return mixed.name()


def muted(text: str, escape: bool = True) -> str:
    body = html.escape(text) if escape else text
    return f"<span style='color:{muted_colour()}'>{body}</span>"


def heading(text: str) -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.5)
    font.setBold(True)
    label.setFont(font)
    return label


def value_label(text: str = "") -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(QtCore.Qt.TextFormat.RichText)
    label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
    return label


class Card(QtWidgets.QGroupBox):
    """A titled box; put content in `body`."""

    def __init__(self, title: str, parent: QtWidgets.QWidget | None = None):
        super().__init__(title, parent)
        self.body = QtWidgets.QVBoxLayout(self)
        self.body.setContentsMargins(12, 8, 12, 10)
        self.body.setSpacing(6)


def accept_file_drag(event: QtGui.QDragEnterEvent) -> None:
    """Accept a drag that carries files (the Model and Workload pages take dropped files)."""
    if event.mimeData().hasUrls():
        event.acceptProposedAction()


def dropped_file(event: QtGui.QDropEvent) -> str | None:
    """The first local file of a drop (accepting it), or None."""
    urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
    if not urls:
        return None
    event.acceptProposedAction()
    return urls[0].toLocalFile()


class WarningBox(QtWidgets.QFrame):
    """A warning sentence in the warning colour with one button beside it (hidden until a
    sentence is set): a disturbed run and 'Measure again' on Upgrade and Compare."""

    def __init__(self, button: str, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("warningBox")
        self.setStyleSheet(
            "QFrame#warningBox { border: 1px solid #b26a00; border-radius: 6px; }"
            "QFrame#warningBox QLabel { color: #b26a00; }"
        )
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(10, 6, 10, 6)
        self.label = value_label()
        self.button = QtWidgets.QPushButton(button)
        row.addWidget(self.label, 1)
        row.addWidget(self.button, 0, QtCore.Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def say(self, sentence: str) -> None:
        """Show the sentence (escaped), or hide the box for ''."""
        self.label.setText(escape(sentence))
        self.setVisible(bool(sentence))


def fact_sheet_html(sheet) -> str:
    """A use case's FactSheet (advisor.usecases.machine_facts) laid out: the title in bold,
    one 'label: value' line per fact with its aside muted under it, the footnote muted."""
    lines = [f"<b style='font-size:15px'>{escape(sheet.title)}</b>"] if sheet.title else []
    for fact in sheet.facts:
        label = f"<b>{escape(fact.label)}</b>: " if fact.label else ""
        if fact.label or fact.value:
            lines.append(label + escape(fact.value))
        if fact.aside:
            lines.append(muted(fact.aside))
    if sheet.footnote:
        lines.append(muted(sheet.footnote))
    return "<br>".join(lines)
