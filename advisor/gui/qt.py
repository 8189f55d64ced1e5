"""Import Qt through here: pyqtgraph must bind PySide6 even when PyQt is also installed."""

from __future__ import annotations

import os

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

pg.setConfigOptions(antialias=True)

__all__ = ["QtCore", "QtGui", "QtWidgets", "pg"]
