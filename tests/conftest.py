"""Shared fixtures: an isolated app home, and small synthetic GGUF files made once per session."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

# Qt must never need a screen in tests; pyqtgraph must bind PySide6.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "gui" / "data"


# commands that start a child process or probe the machine run as a real process; the
# others run in this process (the same code path from argv to exit status, without paying
# for an interpreter start-up each time)
OUT_OF_PROCESS = ("bench", "detect", "gui")


def advisor_cli(
    *args: str, home: Path, timeout: float = 300, in_process: bool | None = None
) -> subprocess.CompletedProcess:
    """Run `advisor ARGS` as a user would, with its own app folder: (returncode, stdout,
    stderr) like subprocess.run."""
    if in_process is None:
        in_process = not args or args[0] not in OUT_OF_PROCESS
    if in_process:
        return _in_process(list(args), home)
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def live_children() -> list:
    """This process's live child processes, multiprocessing's resource tracker apart: the
    standard library starts it with the answers' child process (advisor.gui.offload) and keeps
    it for the life of the parent, so once any test has used that child it stays beside every
    later one; what a test must leave behind is none of its own."""
    import psutil

    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            if any("resource_tracker" in part for part in p.cmdline()):
                continue
            out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def load_script(relative: str) -> ModuleType:
    """A script of the repository that is not part of the package (benchmarks/, device_db/tools/),
    loaded as a module."""
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_sparse(path: Path, head: bytes, length: int) -> Path:
    """A file of `length` bytes that starts with `head`; the rest is a sparse run of zeros
    (a model-sized file to test its header, without writing or copying its tensor data)."""
    with path.open("wb") as f:
        f.write(head)
        f.truncate(length)
    return path


def _in_process(args: list[str], home: Path) -> subprocess.CompletedProcess:
    import contextlib
    import io

    from advisor.entry import main

    out, err = io.StringIO(), io.StringIO()
    old = os.environ.get("ADVISOR_HOME")
    os.environ["ADVISOR_HOME"] = str(home)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:  # argparse's --help
                code = int(exc.code or 0)
    finally:
        if old is None:
            os.environ.pop("ADVISOR_HOME", None)
        else:
            os.environ["ADVISOR_HOME"] = old
    return subprocess.CompletedProcess(["advisor", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own app folders: no test touches the real user's history."""
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "advisor-home"))


@pytest.fixture(scope="session")
def synth_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("synthetic")


@pytest.fixture(scope="session")
def make_synth(synth_dir):
    """make_synth(shape_id, quant, layers) -> path of a synthetic GGUF, written once per session."""
    from advisor.bench.synth import synthetic_file_name, write_synthetic_gguf

    def make(shape_id: str, quant: str = "q4_0", layers: int | None = 2) -> Path:
        path = synth_dir / synthetic_file_name(shape_id, quant, layers)
        if not path.exists():
            write_synthetic_gguf(path, shape_id, quant, n_layers=layers)
        return path

    return make


@pytest.fixture(scope="session")
def tiny_model(make_synth) -> Path:
    """The smallest real-shaped model: qwen2.5-0.5b, 2 layers, Q4_0 (about 90 MB)."""
    return make_synth("qwen2.5-0.5b", "q4_0", 2)


# --- the GUI, offscreen, with the hardware probe replaced by a recorded report ----------


@pytest.fixture(scope="session")
def recorded_report():
    from advisor.core.hardware.report_cache import report_from_json

    return report_from_json(json.loads((DATA / "hardware-linux-xeon-2core.json").read_text()))


@pytest.fixture(scope="session")
def tiny_run():
    """A real run recorded on this project's 2-core CI machine (qwen2.5-0.5b shape, Q4_0)."""
    from advisor.core.runs.results import RunResult

    return RunResult.from_json(json.loads((DATA / "run-qwen05b-q4_0-xeon.json").read_text()))


@pytest.fixture
def recorded_detect(recorded_report):
    """Stands in for usecases.machine.detect_machine (which probes for seconds)."""
    from advisor.core.hardware.profile import build_profile

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
    from advisor.core.infra.paths import app_paths
    from advisor.gui.app import build_window
    from advisor.gui.qt import QtCore

    windows = []

    def make(**overrides):
        qsettings = QtCore.QSettings(
            str(tmp_path / "window.ini"), QtCore.QSettings.Format.IniFormat
        )
        overrides.setdefault("offload", None)  # projections on a thread: no child per window
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
    for window, services in windows:
        services.bench.shutdown()
        window.close()
    # no worker left running Python, then automatic collection back for the next test (maybe
    # not a GUI one): a worker never collects a cycle that holds a widget
    for _window, services in windows:
        services.tasks.shutdown(10_000)
    for _window, services in windows:
        services.collector.stop()
