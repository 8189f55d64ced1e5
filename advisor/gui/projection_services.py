"""The services behind the answers (Upgrade, Compare, Charts): which run they rest on, and the
projections, asked of the child process as plain data (advisor.usecases.offload) so the
window never waits behind them. A mixin of AppServices (its state, settings and tasks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from advisor.core.hardware.profile import Host, MachineProfile
from advisor.core.predict.advising.verdict import Verdict
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.projecting.projection import Target
from advisor.core.predict.projecting.reference import Reference, reference_for_run
from advisor.core.runs.results import RunResult
from advisor.usecases.charts import RunCurves
from advisor.usecases.compare import ProjectionTable, verdict_source
from advisor.usecases.machine import with_choices
from advisor.usecases.run_trust import RunTrust, run_trust
from advisor.usecases.upgrade import Projected, measured_decode_watts

if TYPE_CHECKING:
    from advisor.core.catalogue.catalogue import Catalogue
    from advisor.core.infra.settings import SettingsStore
    from advisor.gui.errors import ErrorReporter
    from advisor.gui.state import AppState
    from advisor.gui.tasks import TaskRunner


class ProjectionServices:
    state: AppState
    settings: SettingsStore
    errors: ErrorReporter
    catalogue: Catalogue
    tasks: TaskRunner

    def _host(self, profile: MachineProfile) -> Host:
        """The computer the projected cards sit in: this machine's, with the user's choices
        (the Upgrade and Compare pages' RAM fields) over what was detected."""
        c = self.state.host_choice
        return with_choices(profile.host, ram_gb=c.ram_gb, ram_bandwidth_gbs=c.ram_bandwidth_gbs)

    def run_trust(self) -> RunTrust:
        """The run the answers rest on: the shown run, or a quiet run of the same model in the
        history where the shown one was disturbed (advisor.usecases.run_trust)."""
        return run_trust(self.state.run, self.state.history)

    def _reference(self, trust: RunTrust | None = None) -> Reference | None:
        """The run the answers rest on as the projections' reference, on the device it was
        measured on (a run from History may come from another machine): the one answer the
        command line gives for the same run."""
        run = (trust or self.run_trust()).used
        return reference_for_run(run, self.catalogue) if run is not None else None

    def _prices(self) -> dict[str, float]:
        return dict(self.settings.current.prices_usd)

    def projections(self, workload: Workload, on_done: Callable[[ProjectionTable], None]) -> None:
        """The Compare table: every catalogued device, this machine first, each with its price."""
        choice, profile = self.state.model, self.state.profile
        if choice is None or profile is None:
            return
        request = dict(
            facts=choice.facts, workload=workload, host=self._host(profile),
            reference=self._reference(), this_machine=profile, user_prices=self._prices(),
        )  # fmt: skip
        self.tasks.run_offloaded(
            "table",
            request,
            on_done,
            lambda e, d: self.errors.report(f"The comparison could not be computed ({e}).", d),
            kind="compare-table",
        )

    def verdict(
        self,
        target_id: str,
        workload: Workload,
        on_done: Callable[[Verdict], None],
        count: int = 1,
    ) -> None:
        """The Compare page's verdict on one device (`count` cards) against this machine."""
        choice, profile = self.state.model, self.state.profile
        target = self.catalogue.by_id(target_id)
        if choice is None or profile is None or target is None:
            return
        self._verdict(Target(target, count=count), workload, on_done, None, "compare-verdict")

    def upgrade_verdict(
        self,
        target: Target,
        workload: Workload,
        on_done: Callable[[Verdict], None],
        trust: RunTrust | None = None,
    ) -> None:
        """How the target compares with this machine, workload by workload, in words."""
        self._verdict(target, workload, on_done, trust, "upgrade-verdict")

    def _verdict(
        self,
        target: Target,
        workload: Workload,
        on_done: Callable[[Verdict], None],
        trust: RunTrust | None,
        kind: str,
    ) -> None:
        choice, profile = self.state.model, self.state.profile
        if choice is None or profile is None:
            return
        reference, host = self._reference(trust), self._host(profile)
        request = dict(
            facts=choice.facts, source=verdict_source(reference, profile, host), target=target,
            workload=workload, host=host, reference=reference, user_prices=self._prices(),
        )  # fmt: skip
        self.tasks.run_offloaded(
            "verdict", request, on_done, lambda e, d: self.errors.report(str(e), d), kind=kind
        )

    def upgrade_projections(
        self,
        workload: Workload,
        include_pro: bool,
        on_done: Callable[[Projected], None],
        trust: RunTrust | None = None,
    ) -> None:
        """The upgrade answer's projections (the slow part) for the current model, machine
        and the run the answer rests on, off the GUI process; ranking them is cheap."""
        choice, profile = self.state.model, self.state.profile
        if choice is None or profile is None:
            return
        trust = trust or self.run_trust()
        request = dict(
            facts=choice.facts, workload=workload, host=self._host(profile),
            reference=self._reference(trust), this_machine=profile, include_pro=include_pro,
            measured_watts=measured_decode_watts(trust.used),
        )  # fmt: skip
        self.tasks.run_offloaded(
            "upgrade",
            request,
            on_done,
            lambda e, d: self.errors.report(f"The upgrade answer could not be computed ({e}).", d),
            kind="upgrade",
        )

    def curves(self, run: RunResult, on_done: Callable[[RunCurves | None], None]) -> None:
        """The Charts page's curves for a run, on the device it was measured on."""
        profile = self.state.profile
        if profile is None:
            return
        self.tasks.run_offloaded(
            "curves",
            dict(run=run, host=profile.host),
            on_done,
            lambda e, d: self.errors.report(f"The charts could not be computed ({e}).", d),
            kind="curves",
        )
