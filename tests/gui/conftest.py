"""GUI test fixtures: the real window, offscreen, with the hardware probe replaced by a report
recorded on a real machine (the expensive edge); everything else runs for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def recorded_report():
    from advisor.core.machine import report_from_json

    return report_from_json(json.loads((DATA / "hardware-linux-xeon-2core.json").read_text()))


@pytest.fixture(scope="session")
def tiny_run():
    """A real run recorded on this project's 2-core CI machine (qwen2.5-0.5b shape, Q4_0)."""
    from advisor.core.results import RunResult

    return RunResult.from_json(json.loads((DATA / "run-qwen05b-q4_0-xeon.json").read_text()))


@pytest.fixture
def recorded_detect(recorded_report):
    """Stands in for bench.machine_service.detect_machine (which probes for seconds)."""
    from advisor.core.machine import build_profile

    calls = []

    def detect(
        paths, *, probe_bandwidth=True, use_cache=True, chosen_device_id=None, catalogue=None
    ):
        calls.append(chosen_device_id)
        return recorded_report, build_profile(
            recorded_report, catalogue, chosen_device_id=chosen_device_id
        )

    detect.calls = calls
    return detect


@pytest.fixture
def make_window(qtbot, qapp, recorded_detect, tmp_path):
    """make_window() -> (window, services), with the recorded machine detected."""
    from advisor.core.paths import app_paths
    from advisor.gui.app import build_window
    from advisor.gui.qt import QtCore

    windows = []

    def make(**overrides):
        qsettings = QtCore.QSettings(
            str(tmp_path / "window.ini"), QtCore.QSettings.Format.IniFormat
        )
        window, services = build_window(
            app_paths(),
            qapp,
            qsettings,
            detect=overrides.pop("detect", recorded_detect),
            **overrides,
        )
        qtbot.addWidget(window)
        window.show()
        with qtbot.waitSignal(services.state.machine_changed, timeout=10_000):
            services.detect()
        windows.append((window, services))
        return window, services

    yield make
    for _window, services in windows:
        services.bench.shutdown()
