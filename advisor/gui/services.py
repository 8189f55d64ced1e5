"""The app's services, built once in main() and passed to every panel.

Each slot in a panel turns a user action into one call here. Everything that touches the disk,
a subprocess or a long computation runs off the GUI thread (tasks.run_task) and comes back as
exactly one result or one error; errors go to the reporter as one plain sentence. The answers
themselves come from advisor.usecases, the same functions the command line calls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.infra.atomic import atomic_write_bytes
from advisor.core.infra.errors import AdvisorError, os_reason
from advisor.core.infra.paths import AppPaths
from advisor.core.infra.settings import SettingsStore
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.shapes import get_shape
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.runs.config import BenchConfig, parse_synthetic
from advisor.core.runs.export import export_runs
from advisor.core.runs.history import History
from advisor.core.runs.results import RunResult, run_hardware
from advisor.gui.bench_controller import BenchController
from advisor.gui.errors import ErrorReporter
from advisor.gui.projection_services import ProjectionServices
from advisor.gui.state import AppState, ModelChoice
from advisor.gui.tasks import TaskRunner
from advisor.gui.workload_services import WorkloadServices
from advisor.usecases.about import AboutFacts, about_facts, known_backend, llama_cpp_commit
from advisor.usecases.bench_config import BenchChoices, bench_config
from advisor.usecases.machine import detect_machine
from advisor.usecases.notices import app_notices

log = logging.getLogger(__name__)


class AppServices(ProjectionServices, WorkloadServices):
    def __init__(
        self,
        *,
        paths: AppPaths,
        catalogue: Catalogue,
        history: History,
        settings: SettingsStore,
        state: AppState,
        bench: BenchController,
        errors: ErrorReporter,
        tasks: TaskRunner,
        detect: Callable[..., Any] = detect_machine,
        speed_model: Callable[[], SpeedModel] = load_speed_model,
    ):
        self.paths = paths
        self.catalogue = catalogue
        self.history = history
        self.settings = settings
        self.state = state
        self.bench = bench
        self.errors = errors
        self.tasks = tasks
        # a request the child process cannot take is answered on the compute thread, with
        # the app's own catalogue and speed model
        tasks.local = lambda: {"catalogue": self.catalogue, "speed_model": self.speed_model()}
        self._detect = detect
        # the speed model, built once (the shipped fit, read in 0.2-0.4 s) and handed to
        # every projection; called on the compute thread, never on the GUI thread
        self.speed_model = speed_model
        self._detecting = False
        self._detect_pending = False
        self._detect_force = False
        self._detect_callbacks: list[Callable[[], None]] = []
        self._model_request = 0  # the newest model choice; older file reads are dropped

    def warm_up(self) -> None:
        """Start the projections' child process (it loads the catalogue and the speed model)
        and read the speed model here too (0.2-0.4 s, once, for a benchmark's set-up), both in
        the background after the window is up."""
        if self.tasks.offload is not None:
            self.tasks.offload.start()
        self.tasks.run_compute(
            self.speed_model,
            lambda _: None,
            lambda e, d: log.warning("speed model could not be fitted: %s\n%s", e, d),
        )

    # --- this machine -----------------------------------------------------------------

    def detect(self, *, force: bool = False, on_done: Callable[[], None] | None = None) -> None:
        """Detect this machine in the background. One detection at a time: a request made
        while one runs (a second click, a device chosen by hand) runs once it has finished,
        so two bandwidth probes never share the memory bus and the last request wins."""
        if on_done is not None:
            self._detect_callbacks.append(on_done)
        if self._detecting:
            self._detect_pending = True
            self._detect_force = self._detect_force or force
            return
        self._detecting = True
        chosen = self.settings.current.chosen_device_id

        def work():
            return self._detect(
                self.paths,
                probe_bandwidth=True,
                use_cache=not force,
                chosen_device_id=chosen,
                catalogue=self.catalogue,
            )

        def finish() -> None:
            self._detecting = False
            if self._detect_pending:  # asked again meanwhile: run the latest request
                again, self._detect_pending, self._detect_force = self._detect_force, False, False
                self.detect(force=again)
                return
            callbacks, self._detect_callbacks = self._detect_callbacks, []
            self.state.detection_finished.emit()
            for callback in callbacks:
                callback()

        def done(result):
            if not self._detect_pending:  # a newer request would replace it at once
                self.state.set_machine(*result)
            finish()

        def failed(exc, details):
            self.errors.report(
                f"Detecting this machine failed ({exc}); the app still works, "
                "choose your device by hand.",
                details,
            )
            finish()

        self.tasks.run_task(work, done, failed)

    def choose_device(self, device_id: str | None) -> None:
        """The user's pick of their device when detection could not tell (None: detected)."""
        self.settings.update(chosen_device_id=device_id)
        self.detect()

    # --- the model ---------------------------------------------------------------------

    def open_model(self, path: str, on_done: Callable[[bool], None] | None = None) -> None:
        self._model_request += 1
        request = self._model_request

        def done(facts):
            self.settings.add_recent(path)
            if request == self._model_request:  # else the user chose another model meanwhile
                self.state.set_model(ModelChoice(facts, path=path))
            if on_done:
                on_done(True)

        def failed(exc, details):
            if isinstance(exc, AdvisorError):
                self.errors.report(str(exc))
            else:
                self.errors.report(f"{Path(path).name} could not be read ({exc}).", details)
            if on_done:
                on_done(False)

        self.tasks.run_task(lambda: facts_from_gguf(path), done, failed)

    def choose_shape(self, shape_id: str, quant: str) -> None:
        self._model_request += 1  # a file still being read no longer replaces this choice
        facts = facts_from_shape(get_shape(shape_id), quant)  # pure arithmetic, instant
        self.settings.update(last_shape=shape_id, last_quant=quant)
        self.state.set_model(ModelChoice(facts, shape_id=shape_id, quant=quant))

    # --- benchmark ---------------------------------------------------------------------

    def bench_config(self, preset: str, **overrides: Any) -> BenchConfig:
        """The config for the chosen model, preset and settings, with this machine's facts
        (the same use case as `advisor bench`; a value out of range raises InputError)."""
        choice = self.state.model
        if choice is None:
            raise AdvisorError("Choose a model first: open a GGUF file or pick a built-in shape.")
        choices = BenchChoices(
            model_path=choice.path,
            synthetic=None if choice.path else f"{choice.shape_id}:{choice.quant}",
            preset=preset,
            **{k: v for k, v in overrides.items() if v is not None},
        )
        config, _ = bench_config(
            choices, profile=self.state.profile, reference=self._reference(),
            speed_model=self.speed_model() if self.state.profile is not None else None,
        )  # fmt: skip
        return config

    def start_benchmark(
        self, preset: str, on_refused: Callable[[], None] | None = None, **overrides: Any
    ) -> None:
        """Check the choices and build the configuration off the GUI thread (it reads the
        model's header and projects this machine), then start the run; a choice out of range
        is one sentence in the banner."""
        report, profile = self.state.report, self.state.profile
        hardware = run_hardware(report, profile) if report and profile else None

        def failed(exc: BaseException, details: str) -> None:
            if on_refused is not None:
                on_refused()
            if isinstance(exc, AdvisorError):
                self.errors.report(str(exc))
            else:
                self.errors.report(f"The benchmark could not be set up ({exc}).", details)

        self.tasks.run_task(
            lambda: self.bench_config(preset, **overrides),
            lambda config: self.bench.start(config, hardware),
            failed,
        )

    def save_run(self, run: RunResult, then: Callable[[], None] | None = None) -> None:
        """Save a finished run, then show it (the history panel reloads on run_changed, so the
        file must be there first), then call `then`. A failed save still shows the run, and
        says why."""

        def show(_=None) -> None:
            self.state.set_run(run)
            if then is not None:
                then()

        def failed(exc, details):
            self.errors.report(str(exc), details)
            show()

        self.tasks.run_task(lambda: self.history.save(run), show, failed)

    def open_run(self, run: RunResult) -> None:
        """Show a saved run: its model becomes the current model, its results the current run."""
        cfg = run.config
        if cfg.synthetic:
            shape, quant = parse_synthetic(cfg.synthetic)
            choice = ModelChoice(run.model, shape_id=shape, quant=quant)
        else:
            choice = ModelChoice(run.model, path=cfg.model_path)
        self.state.set_model(choice)
        self.state.set_run(run)

    # --- history -----------------------------------------------------------------------

    def load_history(self, on_done: Callable[[list[RunResult]], None]) -> None:
        def done(report):
            if report.unreadable:
                self.errors.report(
                    f"{len(report.unreadable)} saved run(s) could not be read just now (another "
                    "program may be using them); they are left as they are.",
                    "\n".join(report.unreadable),
                )
            if report.set_aside:
                self.errors.report(
                    f"{len(report.set_aside)} saved run(s) could not be read and were set "
                    "aside (renamed *.corrupt); the others are intact.",
                    "\n".join(report.set_aside),
                )
            on_done(report.runs)
            self.state.set_history(report.runs)

        def failed(exc: BaseException, details: str) -> None:
            self.errors.report(f"The history could not be read ({exc}).", details)
            on_done([])

        self.tasks.run_task(self.history.load, done, failed)

    def delete_runs(self, run_ids: list[str], on_done: Callable[[], None]) -> None:
        """Delete the runs in one task, then call on_done once (one reload, not one each)."""
        self.tasks.run_task(
            lambda: self.history.delete_many(run_ids),
            lambda _: on_done(),
            lambda e, d: self.errors.report(f"The run could not be deleted ({e}).", d),
        )

    def export(self, runs: list[RunResult], path: str) -> None:
        self.tasks.run_task(
            lambda: export_runs(runs, path),
            lambda _: None,
            lambda e, d: self.errors.report(f"Export failed ({e}).", d),
        )

    def write_files(
        self, files: dict[Path, bytes], done_message: str, on_done: Callable[[], None] | None = None
    ) -> None:
        """Write files whole (a crash leaves the old file or none, never half of one), off the
        GUI thread; a failure is one sentence."""

        def work() -> None:
            for path, data in files.items():
                atomic_write_bytes(path, data)

        def done(_: object) -> None:
            self.state.status_message.emit(done_message)
            if on_done is not None:
                on_done()

        self.tasks.run_task(
            work,
            done,
            lambda e, d: self.errors.report(
                f"The file could not be written ({os_reason(e) if isinstance(e, OSError) else e}).",
                d,
            ),
        )

    # --- about -------------------------------------------------------------------------

    def about(self, qt_versions: tuple[str, str], on_done: Callable[[AboutFacts], None]) -> None:
        """The About box's facts, gathered off the GUI thread (catalogue, calibration data;
        llama.cpp asked in a child process only when this machine has not been detected)."""
        report = self.state.report
        qt, pyside6 = qt_versions

        def work() -> AboutFacts:
            return about_facts(
                self.paths,
                qt_version=qt,
                pyside6_version=pyside6,
                backend=report.backend if report is not None else None,
                ask_llama=True,
                catalogue=self.catalogue,
            )

        self.tasks.run_task(
            work,
            on_done,
            lambda e, d: self.errors.report(f"The versions could not be gathered ({e}).", d),
        )

    def notices(self, qt_version: str, on_done: Callable[[str], None]) -> None:
        """The third-party notices: the frozen app's file, or generated when run from source."""
        report = self.state.report
        backend = report.backend if report is not None else None

        def work() -> str:
            commit = llama_cpp_commit(known_backend(self.paths, backend))
            return app_notices(qt_version=qt_version, llama_cpp_commit=commit)

        self.tasks.run_task(
            work,
            on_done,
            lambda e, d: self.errors.report(f"The notices could not be read ({e}).", d),
        )
