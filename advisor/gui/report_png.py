"""The report card drawn to a PNG: its HTML (made from the answer object by
advisor.usecases.report_card) laid out by Qt's text engine, the chart below."""

from __future__ import annotations

from advisor.gui.qt import QtCore, QtGui

PNG_WIDTH_PX = 900  # the width a forum shows an image at without scaling it down


def render_png(html_without_chart: str, chart_png: bytes, width: int = PNG_WIDTH_PX) -> bytes:
    """The card's HTML drawn to a PNG (light background, as it would print), chart below."""
    doc = QtGui.QTextDocument()
    doc.setDefaultStyleSheet("td.n{text-align:right} .muted{color:#666} .warning{color:#8a4b00}")
    doc.setHtml(html_without_chart)
    doc.setTextWidth(width - 40)
    chart = QtGui.QImage.fromData(chart_png, "PNG")
    if not chart.isNull() and chart.width() > width - 40:
        chart = chart.scaledToWidth(width - 40, QtCore.Qt.TransformationMode.SmoothTransformation)
    height = int(doc.size().height()) + (chart.height() + 20 if not chart.isNull() else 0) + 40
    image = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32)
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    painter.translate(20, 20)
    context = QtGui.QAbstractTextDocumentLayout.PaintContext()
    context.palette.setColor(QtGui.QPalette.ColorRole.Text, QtGui.QColor("#1d1d1f"))
    doc.documentLayout().draw(painter, context)
    if not chart.isNull():
        painter.drawImage(0, int(doc.size().height()) + 10, chart)
    painter.end()
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(buffer.data())
