"""The services of the Your workload page: import, the saved workloads, sizing. A mixin of
AppServices (it uses its paths, state, errors and catalogue); off the GUI thread like the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from advisor.core.infra import notices
from advisor.core.infra.errors import AdvisorError
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.usecases.sizing import (
    Load,
    Server,
    Sizing,
    SizingTarget,
    devices_that_serve,
    size_named,
)
from advisor.usecases.workloads import Imported, import_workload, saved_workloads, workload_store

if TYPE_CHECKING:
    from advisor.core.catalogue.catalogue import Catalogue
    from advisor.core.infra.paths import AppPaths
    from advisor.gui.errors import ErrorReporter
    from advisor.gui.state import AppState
    from advisor.gui.tasks import TaskRunner


class WorkloadServices:
    paths: AppPaths
    state: AppState
    errors: ErrorReporter
    catalogue: Catalogue
    speed_model: Callable[[], SpeedModel]
    tasks: TaskRunner

    def load_workloads(self) -> None:
        """Read the saved workloads off the GUI thread; the state announces them."""

        def done(saved: dict) -> None:
            self.state.set_saved_workloads(saved)
            for sentence in notices.take():  # a damaged file or record set aside: said once
                self.errors.report(sentence)

        self.tasks.run_task(
            lambda: saved_workloads(self.paths),
            done,
            lambda e, d: self.errors.report(f"The saved workloads could not be read ({e}).", d),
        )

    def import_workload(
        self,
        path: str,
        name: str,
        *,
        use_model: bool,
        progress: Callable[[int, int], None] | None,
        on_done: Callable[[Imported | None], None],
    ) -> threading.Event:
        """Import a traffic file as the workload `name`, off the GUI thread; `on_done(None)`
        after a failure (reported as one sentence) or a cancel. Returns the cancel switch."""
        cancel = threading.Event()
        choice = self.state.model
        model = choice.path if use_model and choice is not None and choice.path else None

        def work() -> Imported:
            return import_workload(path, paths=self.paths, name=name, model=model,
                                   progress=progress, cancel=cancel)  # fmt: skip

        def done(imported: Imported) -> None:
            on_done(imported)
            self.load_workloads()

        def failed(exc: BaseException, details: str) -> None:
            from advisor.core.traffic import Cancelled

            if not isinstance(exc, Cancelled):  # a sentence of ours (a full disk too) as it is
                self.errors.report(str(exc) if isinstance(exc, AdvisorError) else
                                   f"The file could not be imported ({exc}).", details)  # fmt: skip
            on_done(None)

        self.tasks.run_task(work, done, failed)
        return cancel

    def delete_workload(self, name: str) -> None:
        self.tasks.run_task(
            lambda: workload_store(self.paths).delete(name),
            lambda _: self.load_workloads(),
            lambda e, d: self.errors.report(f"The workload could not be deleted ({e}).", d),
        )

    def size(
        self,
        load: Load,
        device_name: str,
        target: SizingTarget,
        on_done: Callable[[Sizing | None, list[Server]], None],
    ) -> None:
        """How many cards of `device_name` serve `load`, and which devices do with one or two,
        for the current model; off the GUI thread."""
        choice, profile = self.state.model, self.state.profile
        if choice is None:
            self.errors.report("Choose a model first (the Model page): sizing depends on it.")
            return
        host = profile.host if profile is not None else None
        facts = choice.facts

        prices = dict(self.settings.current.prices_usd)

        def work() -> tuple[Sizing | None, list[Server]]:
            from advisor.usecases.machine import host_for

            h = host or host_for(None)
            sizing = None
            if device_name.strip():
                sizing = size_named(facts, device_name, load, target, catalogue=self.catalogue,
                                    host=h, choose="enter '{}' as the card.",
                                    speed_model=self.speed_model())  # fmt: skip
            servers = devices_that_serve(facts, load, target, catalogue=self.catalogue, host=h,
                                         speed_model=self.speed_model(),
                                         user_prices=prices)  # fmt: skip
            return sizing, servers

        self.tasks.run_compute(
            work, lambda r: on_done(*r), lambda e, d: self.errors.report(str(e), d), kind="sizing"
        )
