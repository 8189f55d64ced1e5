"""The installed Qt binding does not lose references while pumping events.

PySide6 6.12.0 dropped a reference to None on every `processEvents()` call; a test run that
pumps events long enough (pytest-qt's waits do) then dies with "deallocating None" at a random
place. pyproject pins it out; this catches a build that brings it back.
"""

from __future__ import annotations

import sys


def test_pumping_events_keeps_the_reference_to_none(qapp):
    for _ in range(10):
        qapp.processEvents()
    before = sys.getrefcount(None)
    for _ in range(2000):
        qapp.processEvents()
    # a leak of one per call would show as -2000; ordinary churn is a few dozen either way
    assert sys.getrefcount(None) - before > -500
