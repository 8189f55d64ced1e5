"""The guided path across the top: 1 Machine, 2 Model, 3 Measure, 4 Answer, with the current
step marked, the finished ones ticked, and one "Next" action."""

from __future__ import annotations

from collections.abc import Callable

from advisor.gui.qt import QtCore, QtGui, QtWidgets
from advisor.gui.theme import is_dark

STEPS = (
    ("Machine", "This machine", "What this computer has: memory, bandwidth, GPU."),
    ("Model", "Model", "The model you run (a GGUF file or a built-in shape)."),
    ("Measure", "Benchmark", "Measure it here, like llama-bench (a minute or two)."),
    ("Answer", "Upgrade", "Would an upgrade pay off for the way you use it?"),
)


class StepStrip(QtWidgets.QFrame):
    """Four step buttons and a Next button; `go(page_name)` is called on a click."""

    def __init__(self, go: Callable[[str], None], parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self._go = go
        self.setObjectName("steps")
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 6)
        layout.setSpacing(4)
        self.buttons: list[QtWidgets.QPushButton] = []
        for i, (label, page, tip) in enumerate(STEPS):
            if i:
                arrow = QtWidgets.QLabel("›")
                arrow.setStyleSheet("font-size: 16px; padding: 0 2px;")
                layout.addWidget(arrow)
            b = QtWidgets.QPushButton(f"{i + 1}  {label}")
            b.setFlat(True)
            b.setCheckable(True)
            b.setToolTip(tip)
            b.setCursor(QtCore.Qt.CursorShape.PointingHandCursor)
            b.clicked.connect(lambda _=False, p=page: self._go(p))
            self.buttons.append(b)
            layout.addWidget(b)
        layout.addStretch(1)
        self.hint = QtWidgets.QLabel("")
        layout.addWidget(self.hint)
        self.next_button = QtWidgets.QPushButton("Next")
        self.next_button.clicked.connect(self._on_next)
        layout.addWidget(self.next_button)
        self._done = [False] * len(STEPS)
        self._current = 0

    def set_state(self, current_page: str, done: list[bool]) -> None:
        """Mark the step the page belongs to (if any) and the finished steps."""
        self._done = list(done)
        pages = [page for _, page, _ in STEPS]
        self._current = pages.index(current_page) if current_page in pages else -1
        highlight = "#2f6fd6" if not is_dark() else "#6ea8ff"
        for i, b in enumerate(self.buttons):
            label = STEPS[i][0]
            tick = "✓ " if self._done[i] else ""
            b.setText(f"{tick}{i + 1}  {label}")
            b.setChecked(i == self._current)
            b.setStyleSheet(
                f"QPushButton {{ padding: 4px 10px; border-radius: 4px; }}"
                f"QPushButton:checked {{ background: {highlight}; color: white; "
                "font-weight: bold; }"
            )
            # room for the bold (checked) text, so the current step is never cut
            bold = QtGui.QFont(b.font())
            bold.setBold(True)
            b.setMinimumWidth(QtGui.QFontMetrics(bold).horizontalAdvance(b.text()) + 28)
        following = self.next_step()
        if following is None:
            self.next_button.hide()
            self.hint.setText("")
        else:
            self.next_button.show()
            self.next_button.setText(f"Next: {STEPS[following][0]} ›")
            self.hint.setText(STEPS[following][2])

    def next_step(self) -> int | None:
        """The first unfinished step after the current one, else the first unfinished one."""
        order = list(range(self._current + 1, len(STEPS))) + list(range(0, len(STEPS)))
        for i in order:
            if i != self._current and not self._done[i]:
                return i
        if self._current != len(STEPS) - 1:
            return len(STEPS) - 1
        return None

    def _on_next(self) -> None:
        following = self.next_step()
        if following is not None:
            self._go(STEPS[following][1])
