"""The hardware report, cached for a day: detection takes seconds and hardware rarely changes.

The cache is the app's own file, so it heals itself: one that cannot be read, is of the wrong
shape or is too old is ignored (and detection runs again), never an error for the user.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from advisor.core.hardware.model import HardwareReport
from advisor.core.infra.atomic import atomic_write_text
from advisor.core.infra.owned import DAMAGED, MISSING, OK, read_owned, set_aside
from advisor.core.infra.serde import DataError, from_json, json_safe

HARDWARE_CACHE_MAX_AGE_S = 24 * 3600
MAX_CACHE_BYTES = 4 * 1024 * 1024
log = logging.getLogger(__name__)


def report_from_json(data: Any) -> HardwareReport:
    """Rebuild a HardwareReport from its to_json() form (every field checked)."""
    return from_json(HardwareReport, data, "the hardware report")


def load_cached_report(
    path: Path, max_age_s: float = HARDWARE_CACHE_MAX_AGE_S
) -> HardwareReport | None:
    """The cached report, or None when there is none, it is damaged or it is too old."""
    owned = read_owned(path, max_bytes=MAX_CACHE_BYTES)
    if owned.state != OK:
        if owned.state != MISSING:
            log.info("hardware cache %s ignored (%s); detecting again", path, owned.reason)
        if owned.state == DAMAGED and path.is_dir():
            set_aside(path)  # a folder in its place would stop every later save of the cache
        return None
    try:
        report = report_from_json(owned.value)
    except (ValueError, DataError) as exc:
        log.info("hardware cache %s ignored (%s); detecting again", path, exc)
        return None
    if report.detected_at is None or time.time() - report.detected_at > max_age_s:
        return None
    return report


def save_cached_report(path: Path, report: HardwareReport) -> None:
    """Write the cache; failing to costs a re-detection next time, nothing more. A folder
    in its place ('advisor detect' never reads the cache, so never heals it) is set aside."""
    if path.is_dir():
        set_aside(path)
    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(json_safe(report.to_json()), indent=1))
