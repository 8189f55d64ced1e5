"""Light or dark, as the OS says (or as the user chose): one palette for widgets and charts.

Qt follows the OS colour scheme on macOS and Windows with their native styles; elsewhere (and
wherever the user picked a theme by hand) the Fusion style with an explicit palette makes the
choice hold everywhere. Charts read the palette when they are built (charts._plot), so the theme
is applied before the window exists.
"""

from __future__ import annotations

import os

from advisor.gui.qt import QtCore, QtGui, QtWidgets, configure_plotting

THEMES = ("system", "light", "dark")


def os_prefers_dark() -> bool:
    hints = QtGui.QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is None:  # Qt before 6.5
        return False
    return bool(scheme() == QtCore.Qt.ColorScheme.Dark)


def _dark_palette() -> QtGui.QPalette:
    p = QtGui.QPalette()
    C = QtGui.QPalette.ColorRole
    window, base, text = (
        QtGui.QColor(37, 38, 41),
        QtGui.QColor(28, 29, 31),
        QtGui.QColor(226, 226, 226),
    )
    for role, colour in (
        (C.Window, window), (C.WindowText, text), (C.Base, base),
        (C.AlternateBase, QtGui.QColor(45, 46, 50)), (C.ToolTipBase, window),
        (C.ToolTipText, text), (C.Text, text), (C.Button, QtGui.QColor(48, 49, 53)),
        (C.ButtonText, text), (C.BrightText, QtGui.QColor(255, 90, 90)),
        (C.Link, QtGui.QColor(110, 170, 255)), (C.Highlight, QtGui.QColor(52, 110, 200)),
        (C.HighlightedText, QtGui.QColor(255, 255, 255)),
        (C.PlaceholderText, QtGui.QColor(140, 140, 140)),
    ):  # fmt: skip
        p.setColor(role, colour)
    disabled = QtGui.QColor(120, 120, 120)
    for role in (C.WindowText, C.Text, C.ButtonText):
        p.setColor(QtGui.QPalette.ColorGroup.Disabled, role, disabled)
    return p


def _light_palette() -> QtGui.QPalette:
    style = QtWidgets.QStyleFactory.create("Fusion")
    return style.standardPalette() if style is not None else QtGui.QPalette()


def resolved(choice: str | None) -> str:
    """'light' or 'dark': the user's choice, $ADVISOR_THEME, else what the OS prefers."""
    choice = os.environ.get("ADVISOR_THEME") or choice or "system"
    if choice in ("light", "dark"):
        return choice
    return "dark" if os_prefers_dark() else "light"


def apply_theme(app: QtWidgets.QApplication, choice: str | None = "system") -> str:
    """Set the palette (and the charts' defaults) for the chosen theme; returns it."""
    theme = resolved(choice)
    explicit = (os.environ.get("ADVISOR_THEME") or choice or "system") != "system"
    if theme == "dark" or explicit or app.platformName() in ("offscreen", "xcb", "minimal"):
        app.setStyle("Fusion")
        app.setPalette(_dark_palette() if theme == "dark" else _light_palette())
    background = app.palette().color(QtGui.QPalette.ColorRole.Base)
    foreground = app.palette().color(QtGui.QPalette.ColorRole.Text)
    configure_plotting(background=background, foreground=foreground, antialias=True)
    return theme


def is_dark() -> bool:
    app = QtWidgets.QApplication.instance()
    if app is None:
        return False
    return app.palette().color(QtGui.QPalette.ColorRole.Window).lightness() < 128
