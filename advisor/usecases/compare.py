"""What each device would do for this model and workload, and whether an upgrade is worth it.

The command line's `project` and the app's Compare page both build their table here, so the
same run, model and workload give the same numbers in both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.catalogue.device import Device
from advisor.core.catalogue.prices import Price
from advisor.core.hardware.profile import Host, MachineProfile
from advisor.core.infra.units import GiB
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.advising.verdict import Verdict, upgrade_verdict
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics.placement import Placement
from advisor.core.predict.projecting.projection import Projection, Target, project, project_all
from advisor.core.predict.projecting.reference import Reference
from advisor.usecases.prices import target_price, target_prices

THIS_MACHINE = "this machine"


@dataclass(frozen=True)
class ProjectionTable:
    """Projections for one model and workload; this machine first where it is known."""

    projections: list[Projection]
    this_machine_id: str | None
    classes: dict[str, str]  # device id -> class label, for grouping and filtering
    # each row's price (prices.price_of: the user's, street new, street used, launch); this
    # machine's own row has none
    prices: list[Price | None] = field(default_factory=list)

    def price(self, row: int) -> Price | None:
        return self.prices[row] if row < len(self.prices) else None


def projection_table(
    facts: ModelFacts,
    workload: Workload,
    *,
    catalogue: Catalogue,
    host: Host,
    reference: Reference | None = None,
    speed_model: SpeedModel,
    targets: Sequence[Target] | None = None,
    this_machine: MachineProfile | None = None,
    user_prices: Mapping[str, float] | None = None,
) -> ProjectionTable:
    """Project the model onto the targets (default: every catalogued device), with this
    machine's own device first when a profile is given, and each row's price."""
    rows: list[Projection] = []
    prices: list[Price | None] = []
    own = _own_device(this_machine, reference) if this_machine is not None else None
    this_id = own.id if own is not None else None
    if this_machine is not None and own is not None:
        placement = reference.placement if reference is not None else None
        mine = project(
            facts,
            own_target(own, this_machine.backend, host, placement),
            workload,
            host=host,
            model=speed_model,
            reference=reference,
        )
        rows.append(replace(mine, device=this_machine.name))
        prices.append(None)
    others = [
        t for t in (targets if targets is not None else [Target(d) for d in catalogue])
        if not (t.device.id == this_id and t.count == 1 and t.backend is None)
    ]  # fmt: skip
    rows += project_all(facts, others, workload, host=host, model=speed_model, reference=reference)
    prices += target_prices(others, user_prices)
    classes = {d.id: d.class_label for d in catalogue}
    if this_id is not None:
        classes[this_id] = THIS_MACHINE
    return ProjectionTable(rows, this_id, classes, prices)


def _own_device(this_machine: MachineProfile, reference: Reference | None) -> Device:
    """This machine's device; the record a run from this machine was measured with, so that
    the machine's own row reproduces what was measured."""
    if reference is not None and reference.device.name in (
        this_machine.name,
        this_machine.device.name,
    ):
        return reference.device
    return this_machine.device


def focus_of(workload: Workload) -> str:
    """The workload a verdict speaks to first (a custom workload is read as chat)."""
    return workload.id if workload.id != "custom" else "chat"


def verdict(
    facts: ModelFacts,
    source: Target,
    target: Target,
    workload: Workload,
    *,
    host: Host,
    speed_model: SpeedModel,
    reference: Reference | None = None,
    user_prices: Mapping[str, float] | None = None,
) -> Verdict:
    """How much the target would gain over the source, per workload, in one sentence, with
    the target's price (the same as in the tables)."""
    return upgrade_verdict(
        facts, source, target, host=host, reference=reference, focus=focus_of(workload),
        model=speed_model, price=target_price(target, user_prices),
    )  # fmt: skip


def verdict_source(
    reference: Reference | None, this_machine: MachineProfile | None, host: Host | None = None
) -> Target:
    """What a verdict compares a device with: the device the shown run was measured on (a run
    from History may come from another machine), else this machine; a computer without a
    card holds the model in the RAM of `host` (the user's choice of RAM size), where given."""
    if reference is not None:
        return own_target(reference.device, reference.backend, host, reference.placement)
    if this_machine is None:
        raise ValueError("a verdict needs a run or this machine to compare with")
    return own_target(this_machine.device, this_machine.backend, host)


def own_target(
    device: Device, backend: str | None, host: Host | None, placement: Placement | None = None
) -> Target:
    """The user's own device as a projection target: with the run's placement, and a CPU (no
    card) with the host's RAM as its memory."""
    memory = None
    if host is not None and device.device_class.startswith("cpu"):
        memory = host.ram_bytes / GiB
    return Target(device, backend=backend, memory_gb=memory, placement=placement)


def verdicts_from_reference(
    facts: ModelFacts,
    targets: Sequence[Target],
    workload: Workload,
    *,
    host: Host,
    reference: Reference,
    speed_model: SpeedModel,
    user_prices: Mapping[str, float] | None = None,
) -> list[Verdict]:
    """A verdict for each target against the device the user measured."""
    source = verdict_source(reference, None)
    return [
        verdict(
            facts,
            source,
            t,
            workload,
            host=host,
            reference=reference,
            speed_model=speed_model,
            user_prices=user_prices,
        )
        for t in targets
        if t.device.id != reference.device.id
    ]


# why a workload has no speed-up, by WorkloadGain.missing: one wording for every page
WHY_NO_GAIN = {
    "target": "the model does not fit it",
    "source": "this machine cannot run the model",
    "estimate": "no estimate (no compute figure)",
    "context": "beyond the context the model was trained on",
}


def why_no_gain(missing: str) -> str:
    return WHY_NO_GAIN.get(missing, "no estimate")


def compare_caption(model: str, workload: Workload, measured: bool) -> str:
    """What the Compare table is for, in one sentence."""
    basis = (
        "your benchmark for this machine, published and modelled results for the rest"
        if measured
        else "from published measurements and specs (run a benchmark to measure yours)"
    )
    return (
        f"{model}, {workload.label.lower()}: {workload.prompt_tokens:,} tokens in, "
        f"{workload.answer_tokens:,} out, {workload.history_tokens:,} of history, "
        f"{workload.concurrency} at once — {basis}. Hover a cell for its notes."
    )


@dataclass(frozen=True)
class GainRow:
    """One workload of a verdict: the speed-ups, or why there is none."""

    workload: str
    overall: str  # '4.9x', or '' with `why`
    prefill: str
    decode: str
    why: str = ""


@dataclass(frozen=True)
class CompareVerdict:
    """The Compare page's verdict on one selected device against this machine."""

    sentence: str
    rows: tuple[GainRow, ...]
    price: str  # '$5,258 (new, 2026-09), $1,365 per 1x of speed-up.' ('' without a price)
    basis: str


def compare_verdict(v: Verdict) -> CompareVerdict:
    rows = tuple(
        GainRow(
            g.label,
            f"{g.speedup:.1f}x",
            f"{g.prefill_speedup or 0:.1f}x",
            f"{g.decode_speedup or 0:.1f}x",
        )
        if g.speedup
        else GainRow(g.label, "", "", "", why_no_gain(g.missing))
        for g in v.gains
    )
    basis = f"Basis: {v.basis}. Speed-ups compare {v.target} with {v.source}."
    return CompareVerdict(v.sentence, rows, v.price_sentence, basis)
