"""Start the app: logging, the object graph (built once, passed down), the window."""

from __future__ import annotations

import logging
import os
import sys
import time

from advisor import APP_NAME, __version__
from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.infra.errors import StorageError
from advisor.core.infra.logs import setup_logging
from advisor.core.infra.paths import AppPaths, app_paths, bundled
from advisor.core.infra.settings import SettingsStore
from advisor.core.runs.history import History
from advisor.gui.bench_controller import BenchController
from advisor.gui.errors import ErrorBanner, ErrorReporter
from advisor.gui.gc_guard import GuiThreadCollector
from advisor.gui.main_window import MainWindow
from advisor.gui.offload import Offload
from advisor.gui.qt import QtCore, QtGui, QtWidgets, preload_plotting
from advisor.gui.services import AppServices
from advisor.gui.state import AppState
from advisor.gui.tasks import TaskRunner
from advisor.gui.theme import apply_theme

log = logging.getLogger("advisor.gui")


def _qt_message_handler(mode, context, message) -> None:
    level = {
        QtCore.QtMsgType.QtDebugMsg: logging.DEBUG,
        QtCore.QtMsgType.QtInfoMsg: logging.INFO,
        QtCore.QtMsgType.QtWarningMsg: logging.WARNING,
    }.get(mode, logging.ERROR)
    logging.getLogger("qt").log(level, "%s", message)


GUI_SWITCH_INTERVAL_S = 0.0005
PRELOAD_AFTER_MS = 300  # pyqtgraph is imported once the first paint is surely done


def build_window(
    paths: AppPaths,
    app: QtWidgets.QApplication,
    qsettings: QtCore.QSettings | None = None,
    **service_overrides,
) -> tuple[MainWindow, AppServices]:
    """The object graph: one of each service, injected into the window and its panels."""
    # Qt calls into Python (event overrides, slots) dozens of times per repaint, and each call
    # waits for the GIL while a worker thread computes: at CPython's default 5 ms switch
    # interval that adds up to 100-300 ms stalls; 0.5 ms keeps the window fluid
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    # reference cycles (widgets among them) die on the GUI thread only
    collector = service_overrides.pop("collector", None) or GuiThreadCollector(app)
    # the projections run in a child process (tests may pass offload=None: a thread instead)
    offload = service_overrides.pop("offload") if "offload" in service_overrides else Offload()
    runner = TaskRunner(app, offload)
    banner = ErrorBanner()
    errors = ErrorReporter(banner)
    folders_problem = _ensure_folders(paths)
    state = AppState()
    services = AppServices(
        paths=paths,
        catalogue=load_catalogue(),
        history=History(paths.data / "runs"),
        settings=_open_settings(paths, errors),
        state=state,
        bench=service_overrides.pop("bench", None) or BenchController(),
        errors=errors,
        tasks=runner,
        **service_overrides,
    )
    services.collector = collector
    # light or dark before any widget is built: the charts read the palette when they are made
    apply_theme(app, services.settings.current.theme)
    window = MainWindow(services, banner, qsettings)
    if folders_problem:  # the window opens all the same; what cannot be saved says so
        errors.report(folders_problem)
    if services.settings.notice:  # a damaged settings file: said once, the app goes on
        errors.report(services.settings.notice)
        _tell_settings_reset(window, services.settings.notice)
    # pyqtgraph (0.35-0.4 s) is loaded in the background once the window is up: a chart page
    # opened later finds it ready, and neither the start-up nor an answer waits for it
    QtCore.QTimer.singleShot(PRELOAD_AFTER_MS, preload_plotting)
    # after the first paint: fitting while the window builds would slow the start-up
    QtCore.QTimer.singleShot(1000, services.warm_up)
    QtCore.QTimer.singleShot(0, services.load_workloads)
    return window, services


def _ensure_folders(paths: AppPaths) -> str:
    """Make the app's folders; the sentence when one cannot be (a file in its place, a
    read-only disk), or ''. The app starts either way: what it can show, it shows."""
    try:
        paths.ensure()
    except StorageError as exc:
        log.warning("%s", exc)
        return str(exc)
    return ""


def _open_settings(paths: AppPaths, errors: ErrorReporter) -> SettingsStore:
    """The settings, whatever their file holds: the app always starts. A damaged file is set
    aside by the store itself; anything else going wrong (a bug of ours) starts with the
    defaults and says so, rather than leaving the person without a window."""
    try:
        store = SettingsStore.open(paths.settings_file, background=True)
    except Exception:
        log.exception("the settings could not be opened; starting with the defaults")
        store = SettingsStore(
            paths.settings_file,
            notice="Your settings could not be read, so the defaults are used for now; this is "
            f"a bug, and details are in {paths.log_file}.",
            background=True,
        )
    store.on_write_error = errors.report
    return store


def _tell_settings_reset(window: MainWindow, notice: str) -> None:
    """A dialog saying which settings were reset and where the old file is kept; it does not
    block the window, and opens once the window is on screen."""
    box = QtWidgets.QMessageBox(
        QtWidgets.QMessageBox.Icon.Information,
        "Settings reset",
        notice,
        QtWidgets.QMessageBox.StandardButton.Ok,
        window,
    )
    box.setObjectName("SettingsResetDialog")
    QtCore.QTimer.singleShot(0, box.open)


def run_app(model: str | None = None, argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    paths = app_paths()
    setup_logging(paths, component="gui")  # never raises: a log that cannot be kept is not
    QtCore.qInstallMessageHandler(_qt_message_handler)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(argv or sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setOrganizationName("LLMHardwareAdvisor")
    icon = _app_icon()
    if icon is not None:
        app.setWindowIcon(icon)
    qsettings = QtCore.QSettings(
        str(paths.config / "window.ini"), QtCore.QSettings.Format.IniFormat
    )
    window, services = build_window(paths, app, qsettings)
    services.errors.install()
    _close_on_termination(app, window)
    window.show()
    log.info("window shown %.2f s after start", time.perf_counter() - started)
    if os.environ.get("ADVISOR_REPORT_STARTUP"):
        # measuring hook for benchmarks/gui_cold_start.py: the window has painted and the event
        # loop turns; report the time since the process was created, then quit
        def report_startup() -> None:
            import psutil

            me = psutil.Process()
            since_exec = time.time() - me.create_time()
            cpu = sum(me.cpu_times()[:2])  # user + system: the start-up's own work
            print(
                f"usable window {since_exec:.3f} s after the process started ({cpu:.3f} s of CPU)",
                flush=True,
            )
            app.quit()

        QtCore.QTimer.singleShot(0, report_startup)
    # everything slow happens after the window is up, off the GUI thread
    QtCore.QTimer.singleShot(0, services.detect)
    QtCore.QTimer.singleShot(0, window.history.reload)
    if model:
        QtCore.QTimer.singleShot(
            0, lambda: (window.show_page("Model"), window.model.open_path(model))
        )
    else:
        # pick up where the user left off: their newest run, or the last shape they chose
        settings = services.settings.current

        def resume(runs: list) -> None:
            window.history.loaded.disconnect(resume)
            if runs and services.state.run is None:
                services.open_run(runs[0])
            elif services.state.model is None:
                try:
                    services.choose_shape(settings.last_shape, settings.last_quant)
                except (KeyError, ValueError):  # a shape or quant this version no longer has
                    defaults = type(settings)()
                    services.choose_shape(defaults.last_shape, defaults.last_quant)

        window.history.loaded.connect(resume)
    code = app.exec()
    services.errors.uninstall()
    # background work still running (a detection takes seconds): drop what has not started,
    # give the rest a moment, then leave without waiting on a hung probe
    services.tasks.shutdown(3000)
    return code


def _close_on_termination(app: QtWidgets.QApplication, window: MainWindow) -> None:
    """SIGTERM (a `kill`, a logout, a service manager) closes the window as its close button
    does: settings saved, background work and the projection process stopped. Python's default
    dies on the spot and leaves the projection child running. Qt's event loop runs no Python
    between events, so the signal also wakes it through a socket."""
    import contextlib
    import signal
    import socket
    import threading

    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        return
    wake, woken = socket.socketpair()
    for end in (wake, woken):
        end.setblocking(False)
    try:
        signal.signal(signal.SIGTERM, lambda *_: QtCore.QTimer.singleShot(0, window.close))
        signal.set_wakeup_fd(wake.fileno())
    except (ValueError, OSError):  # not allowed here (an embedding host): keep the default
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        wake.close()
        woken.close()
        return
    notifier = QtCore.QSocketNotifier(woken.fileno(), QtCore.QSocketNotifier.Type.Read, app)

    def drain() -> None:  # Python runs the handler on the way back from this call
        with contextlib.suppress(OSError):
            woken.recv(64)

    notifier.activated.connect(drain)
    _kept_alive[:] = [wake, woken, notifier]


_kept_alive: list[object] = []  # the termination sockets and notifier, for the app's life


def _app_icon() -> QtGui.QIcon | None:

    try:
        path = bundled("resources") / "icon.png"
        return QtGui.QIcon(str(path)) if path.is_file() else None
    except (ModuleNotFoundError, FileNotFoundError):
        return None
