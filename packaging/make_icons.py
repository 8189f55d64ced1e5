"""Draw the app icon with Qt (a development-time script; its outputs are committed).

python packaging/make_icons.py   # writes resources/icon.png, packaging/advisor.ico
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6 import QtCore, QtGui, QtWidgets

ROOT = Path(__file__).resolve().parents[1]


def draw(size: int) -> QtGui.QImage:
    img = QtGui.QImage(size, size, QtGui.QImage.Format.Format_ARGB32)
    img.fill(QtCore.Qt.GlobalColor.transparent)
    p = QtGui.QPainter(img)
    p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    s = size / 256
    grad = QtGui.QLinearGradient(0, 0, 0, size)
    grad.setColorAt(0, QtGui.QColor("#23395d"))
    grad.setColorAt(1, QtGui.QColor("#152238"))
    p.setBrush(grad)
    p.setPen(QtCore.Qt.PenStyle.NoPen)
    p.drawRoundedRect(QtCore.QRectF(8 * s, 8 * s, 240 * s, 240 * s), 48 * s, 48 * s)
    # bars: measured (blue) under a ceiling line (red)
    bars = [(52, 150), (96, 110), (140, 70), (184, 120)]
    p.setBrush(QtGui.QColor("#4da3ff"))
    for x, top in bars:
        p.drawRoundedRect(QtCore.QRectF(x * s, top * s, 28 * s, (208 - top) * s), 6 * s, 6 * s)
    pen = QtGui.QPen(QtGui.QColor("#ff6b5b"), 10 * s)
    pen.setCapStyle(QtCore.Qt.PenCapStyle.RoundCap)
    p.setPen(pen)
    p.drawLine(QtCore.QPointF(40 * s, 52 * s), QtCore.QPointF(216 * s, 52 * s))
    p.end()
    return img


def main() -> int:
    app = QtWidgets.QApplication(sys.argv[:1])  # noqa: F841 (image plugins need an app)
    resources = ROOT / "resources"
    resources.mkdir(parents=True, exist_ok=True)
    draw(512).save(str(resources / "icon.png"))
    draw(256).save(str(ROOT / "packaging" / "advisor.ico"))
    draw(1024).save(str(ROOT / "packaging" / "icon-1024.png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
