"""One place for errors: a banner in the window (one plain sentence, details to copy), and a
hook that catches exceptions from anywhere (sys.excepthook, threads) so the app keeps running.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback

from advisor.gui.qt import QtCore, QtGui, QtWidgets

log = logging.getLogger("advisor.gui")


class ErrorBanner(QtWidgets.QFrame):
    """A strip at the top of the window: the sentence, 'Copy details', and a close button."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ErrorBanner")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#ErrorBanner { background: #fdecea; border: 1px solid #e0a3a0; border-radius: 4px; }"
            "#ErrorBanner QLabel { color: #611a15; }"
        )
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        self.message = QtWidgets.QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QtWidgets.QPushButton("Copy details")
        self.close_button = QtWidgets.QPushButton("Dismiss")
        layout.addWidget(self.message, 1)
        layout.addWidget(self.copy_button)
        layout.addWidget(self.close_button)
        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.close_button.clicked.connect(self.hide)
        self._details = ""
        self.hide()

    def show_error(self, sentence: str, details: str = "") -> None:
        self.message.setText(sentence)
        self._details = details
        self.copy_button.setVisible(bool(details))
        self.show()

    @property
    def details(self) -> str:
        return self._details

    def _on_copy_clicked(self) -> None:
        QtGui.QGuiApplication.clipboard().setText(f"{self.message.text()}\n\n{self._details}")


class ErrorReporter(QtCore.QObject):
    """Routes every uncaught exception to the banner (on the GUI thread) and the log."""

    reported = QtCore.Signal(str, str)

    def __init__(self, banner: ErrorBanner, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.reported.connect(banner.show_error)
        self._previous_hook = sys.excepthook
        self._previous_thread_hook = threading.excepthook

    def install(self) -> None:
        sys.excepthook = self._excepthook
        threading.excepthook = self._thread_excepthook

    def uninstall(self) -> None:
        sys.excepthook = self._previous_hook
        threading.excepthook = self._previous_thread_hook

    def report(self, sentence: str, details: str = "") -> None:
        log.error("%s\n%s", sentence, details)
        self.reported.emit(sentence, details)

    def _excepthook(self, exc_type, exc, tb) -> None:
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        self.report(
            f"Something went wrong inside the app ({exc_type.__name__}: {exc}); it "
            "keeps running, and the details can be copied for a bug report.",
            details,
        )

    def _thread_excepthook(self, args: threading.ExceptHookArgs) -> None:
        self._excepthook(args.exc_type, args.exc_value, args.exc_traceback)
