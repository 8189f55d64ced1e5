"""Import Qt through here: pyqtgraph must bind PySide6 even when PyQt is also installed.

pyqtgraph itself is imported on first use (`plotting()`), not with the window: it takes
0.35-0.4 s here, a third of a cold start, and the first page has no chart. The app starts
importing it in the background once the window is up (`preload_plotting`), so a page with a
chart finds it loaded.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType
from typing import Any

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["QtCore", "QtGui", "QtWidgets", "configure_plotting", "plotting", "preload_plotting"]

# pyqtgraph's own options are global to it: the theme's, kept until pyqtgraph is loaded
_OPTIONS: dict[str, Any] = {"antialias": True}
_LOADING = threading.Lock()


def plotting() -> ModuleType:
    """pyqtgraph, loaded (once) with the app's options."""
    with _LOADING:
        import pyqtgraph

        if not getattr(pyqtgraph, "_advisor_configured", False):
            pyqtgraph.setConfigOptions(**_OPTIONS)
            pyqtgraph._advisor_configured = True  # type: ignore[attr-defined]
    return pyqtgraph


def configure_plotting(**options: Any) -> None:
    """Options for pyqtgraph (the theme's colours): applied now if it is loaded, else when it
    is."""
    _OPTIONS.update(options)
    with _LOADING:
        import sys

        loaded = sys.modules.get("pyqtgraph")
        if loaded is not None and getattr(loaded, "_advisor_configured", False):
            loaded.setConfigOptions(**options)


def preload_plotting() -> threading.Thread:
    """Import pyqtgraph in a background thread (it creates no Qt object when imported)."""
    thread = threading.Thread(target=plotting, name="import-pyqtgraph", daemon=True)
    thread.start()
    return thread
