"""Python's cyclic garbage collector, run on the GUI thread only.

Left automatic, a collection runs in whichever thread crosses an allocation threshold: a
worker loading data (the speed model, a chat export) could then free a widget or a window left
in a reference cycle, and Qt objects would be destroyed outside the GUI thread: a crash, seen
in the GUI tests under load (a segfault in the event loop while a worker loaded the published
results). The collector is switched off and a timer on the GUI thread runs the same
generational collections at the same thresholds, so every cycle dies where Qt expects it.

A full collection scans every object (35 ms here with the window, the catalogue and the speed
model loaded): what exists at start-up is frozen out of it (`gc.freeze`: modules, classes,
tables that live as long as the app), and a full collection runs at most every 30 s (CPython
itself runs one only once the survivors have grown by a quarter), so the timer never stalls
the window the way a full scan in the middle of an answer would.
"""

from __future__ import annotations

import gc
import time

from advisor.gui.qt import QtCore

INTERVAL_MS = 250  # how often the GUI thread looks at the allocation counts
FULL_EVERY_S = 30.0  # the oldest generation at most this often


class GuiThreadCollector(QtCore.QObject):
    """Collects cycles on the thread it lives on, when the counts cross gc's thresholds. Made
    once in main() (build_window), owned by the application; `stop` hands collection back."""

    def __init__(self, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        # the thresholds in force before; automatic collection stops from here on
        self.thresholds = gc.get_threshold()
        gc.disable()
        gc.collect()
        gc.freeze()  # what lives from start-up to the end is never scanned again
        self.last_full = time.monotonic()
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(INTERVAL_MS)

    def check(self) -> int | None:
        """Run the generation gc would have run by now (None: nothing due)."""
        counts = gc.get_count()
        if counts[0] <= self.thresholds[0]:
            return None
        generation = 0
        if counts[1] > self.thresholds[1]:
            generation = 1
            now = time.monotonic()
            if counts[2] > self.thresholds[2] and now - self.last_full >= FULL_EVERY_S:
                generation, self.last_full = 2, now
        gc.collect(generation)
        return generation

    def stop(self) -> None:
        """Back to automatic collection (tests, after their windows have closed): one full
        collection here on the GUI thread first."""
        self.timer.stop()
        gc.unfreeze()
        gc.collect()
        gc.enable()
