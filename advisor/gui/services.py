"""The app's services, built once in main() and passed to every panel.

Each slot in a panel turns a user action into one call here. Everything that touches the disk,
a subprocess or a long computation runs off the GUI thread (tasks.run_task) and comes back as
exactly one result or one error; errors go to the reporter as one plain sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from advisor.bench.machine_service import detect_machine, hardware_summary
from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.hardware.machine import device_from_summary
from advisor.core.infra.paths import AppPaths
from advisor.core.infra.settings import SettingsStore
from advisor.core.model.facts import facts_from_gguf, facts_from_shape
from advisor.core.model.gguf_file import InvalidModelError
from advisor.core.model.shapes import get_shape
from advisor.core.predict.projection import (
    Projection,
    Reference,
    Target,
    Verdict,
    project,
    reference_from_run,
    upgrade_verdict,
)
from advisor.core.predict.workloads import Workload, custom_workload
from advisor.core.runs.export import export_runs
from advisor.core.runs.history import History
from advisor.core.runs.results import BenchConfig, RunResult
from advisor.gui.bench_controller import BenchController
from advisor.gui.errors import ErrorReporter
from advisor.gui.state import AppState, ModelChoice
from advisor.gui.tasks import run_task

log = logging.getLogger(__name__)

PRESETS: dict[str, dict[str, Any]] = {
    "quick": {"n_prompt": (512,), "n_gen": (128,), "depths": (0,), "batches": (1,)},
    "thorough": {
        "n_prompt": (512,),
        "n_gen": (128,),
        "depths": (0, 4096, 16384, 32768),
        "batches": (1, 4, 16),
    },
}


@dataclass(frozen=True)
class ProjectionTable:
    projections: list[Projection]
    this_machine_id: str | None
    classes: dict[str, str]


class AppServices:
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
        detect: Callable[..., Any] = detect_machine,
    ):
        self.paths = paths
        self.catalogue = catalogue
        self.history = history
        self.settings = settings
        self.state = state
        self.bench = bench
        self.errors = errors
        self._detect = detect
        self._detecting = False
        self._detect_pending = False
        self._detect_force = False
        self._detect_callbacks: list[Callable[[], None]] = []
        self._model_request = 0  # the newest model choice; older file reads are dropped

    def warm_up(self) -> None:
        """Fit the speed model in the background now (0.2-0.4 s, once), so the first
        projection or benchmark set-up does not pay for it on the GUI thread."""
        from advisor.core.predict.speed_model import default_model

        run_task(
            default_model,
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

        run_task(work, done, failed)

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
            if isinstance(exc, InvalidModelError):
                self.errors.report(str(exc))
            else:
                self.errors.report(f"{Path(path).name} could not be read ({exc}).", details)
            if on_done:
                on_done(False)

        run_task(lambda: facts_from_gguf(path), done, failed)

    def choose_shape(self, shape_id: str, quant: str) -> None:
        self._model_request += 1  # a file still being read no longer replaces this choice
        facts = facts_from_shape(get_shape(shape_id), quant)  # pure arithmetic, instant
        self.settings.update(last_shape=shape_id, last_quant=quant)
        self.state.set_model(ModelChoice(facts, shape_id=shape_id, quant=quant))

    # --- benchmark ---------------------------------------------------------------------

    def bench_config(self, preset: str, **overrides: Any) -> BenchConfig:
        """The config for the chosen model, preset and settings, with this machine's facts."""
        choice = self.state.model
        if choice is None:
            raise ValueError("Choose a model first: open a GGUF file or pick a built-in shape.")
        values: dict[str, Any] = dict(PRESETS.get(preset, PRESETS["quick"]))
        if choice.facts.context_length:
            # depths the model's trained context allows
            limit = choice.facts.context_length - 512
            values["depths"] = tuple(d for d in values["depths"] if d <= limit) or (0,)
        values.update({k: v for k, v in overrides.items() if v is not None})
        profile = self.state.profile
        peak = profile.compute_peak(choice.facts.is_quantized)[0] if profile else None
        expected_pp = expected_tg = None
        if profile is not None:
            # what this machine should do, so the progress bar can say how long from the start
            guess = project(
                choice.facts,
                Target(profile.device, backend=profile.backend),
                custom_workload(512, 128),
                host=profile.host,
                reference=self._reference(),
            )
            expected_pp, expected_tg = guess.prefill_tps, guess.decode_tps
        return BenchConfig(
            expected_prefill_tps=expected_pp,
            expected_decode_tps=expected_tg,
            model_path=choice.path,
            synthetic=None if choice.path else f"{choice.shape_id}:{choice.quant}",
            device_name=profile.name if profile else None,
            bandwidth_spec_bytes_per_s=profile.spec_bandwidth_bytes_per_s if profile else None,
            bandwidth_measured_bytes_per_s=(
                profile.measured_bandwidth_bytes_per_s if profile else None
            ),
            peak_flops_per_s=peak,
            **values,
        )

    def start_benchmark(self, config: BenchConfig) -> None:
        hardware = (
            hardware_summary(self.state.report, self.state.profile)
            if self.state.report and self.state.profile
            else {}
        )
        self.bench.start(config, hardware)

    def save_run(self, run: RunResult) -> None:
        """Save a finished run, then show it (the history panel reloads on run_changed, so the
        file must be there first). A failed save still shows the run, and says why."""

        def failed(exc, details):
            self.errors.report(str(exc), details)
            self.state.set_run(run)

        run_task(lambda: self.history.save(run), lambda _: self.state.set_run(run), failed)

    def open_run(self, run: RunResult) -> None:
        """Show a saved run: its model becomes the current model, its results the current run."""
        from advisor.core.model.facts import ModelFacts

        cfg = run.config
        try:
            facts = ModelFacts.from_json(run.model)
        except (TypeError, ValueError):
            facts = None
        if facts is not None:
            if cfg.synthetic:
                shape, _, quant = cfg.synthetic.partition(":")
                choice = ModelChoice(facts, shape_id=shape, quant=quant or "q4_0")
            else:
                choice = ModelChoice(facts, path=cfg.model_path)
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

        def failed(exc: BaseException, details: str) -> None:
            self.errors.report(f"The history could not be read ({exc}).", details)
            on_done([])

        run_task(self.history.load, done, failed)

    def delete_runs(self, run_ids: list[str], on_done: Callable[[], None]) -> None:
        """Delete the runs in one task, then call on_done once (one reload, not one each)."""
        run_task(
            lambda: self.history.delete_many(run_ids),
            lambda _: on_done(),
            lambda e, d: self.errors.report(f"The run could not be deleted ({e}).", d),
        )

    def export(self, runs: list[RunResult], path: str) -> None:
        run_task(
            lambda: export_runs(runs, path),
            lambda _: None,
            lambda e, d: self.errors.report(f"Export failed ({e}).", d),
        )

    # --- projections -------------------------------------------------------------------

    def _reference(self) -> Reference | None:
        """The shown run as the projections' reference, on the device it was measured on
        (a run from History may come from another machine, or from before the user chose
        their device by hand)."""
        run, profile = self.state.run, self.state.profile
        if run is None or profile is None:
            return None
        hw = run.hardware or {}
        here = (
            not hw
            or hw.get("device_name") == profile.name
            or (hw.get("device_id") is not None and hw.get("device_id") == profile.catalogue_id)
        )
        if here:
            return reference_from_run(run, profile.device, profile.backend)
        device = self.catalogue.by_id(hw["device_id"]) if hw.get("device_id") else None
        device = device or device_from_summary(hw)
        if device is None:
            return None
        return reference_from_run(
            run, device, str(hw.get("backend") or device.usual_backend).lower()
        )

    def projections(self, workload: Workload, on_done: Callable[[ProjectionTable], None]) -> None:
        choice, profile = self.state.model, self.state.profile
        if choice is None or profile is None:
            return
        facts, reference, host = choice.facts, self._reference(), profile.host
        devices = list(self.catalogue)

        def work() -> ProjectionTable:
            rows = [
                project(
                    facts,
                    Target(profile.device, backend=profile.backend),
                    workload,
                    host=host,
                    reference=reference,
                )
            ]
            rows[0] = replace(rows[0], device=profile.name)
            for d in devices:
                if d.id != profile.device.id:
                    rows.append(project(facts, Target(d), workload, host=host, reference=reference))
            classes = {d.id: d.class_label for d in devices}
            classes[profile.device.id] = "this machine"
            return ProjectionTable(rows, profile.device.id, classes)

        run_task(
            work,
            on_done,
            lambda e, d: self.errors.report(f"The comparison could not be computed ({e}).", d),
        )

    def verdict(
        self, target_id: str, workload: Workload, on_done: Callable[[Verdict], None]
    ) -> None:
        choice, profile = self.state.model, self.state.profile
        target = self.catalogue.by_id(target_id)
        if choice is None or profile is None or target is None:
            return
        reference = self._reference()

        def work() -> Verdict:
            return upgrade_verdict(
                choice.facts,
                Target(profile.device, backend=profile.backend),
                Target(target),
                host=profile.host,
                reference=reference,
                focus=workload.id if workload.id != "custom" else "chat",
            )

        run_task(work, on_done, lambda e, d: self.errors.report(str(e), d))
