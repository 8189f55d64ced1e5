"""What the Charts page draws for a run: the curves over context depth and streams, on the
device the run was measured on (the same device and reference `advisor project --result`
uses for that run)."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.projecting.curves import Curve, batch_curves, depth_curves
from advisor.core.predict.projecting.reference import Reference, device_for_run, reference_from_run
from advisor.core.runs.results import RunResult


@dataclass(frozen=True)
class RunCurves:
    device: Device
    backend: str
    depth_ceiling: Curve
    depth_predicted: Curve
    batch_ceiling: Curve
    batch_total: Curve
    batch_per_user: Curve


def run_device_and_reference(
    run: RunResult, catalogue: Catalogue
) -> tuple[Device, str, Reference | None] | None:
    """The device and backend a run was measured on, and the reference it gives there."""
    found = device_for_run(run, catalogue)
    if found is None:
        return None
    device, backend = found
    return device, backend, reference_from_run(run, device, backend)


def run_curves(
    run: RunResult, catalogue: Catalogue, host: Host, *, speed_model: SpeedModel
) -> RunCurves | None:
    """Ceiling and predicted curves for the run's model on the run's device."""
    found = run_device_and_reference(run, catalogue)
    if found is None:
        return None
    device, backend, reference = found
    deep = [t.depth for t in run.tests if t.kind == "decode" and t.batch == 1]
    top_depth = int(max([*deep, 4096]) * 1.25)
    top_streams = max([t.batch for t in run.tests if t.kind == "decode"] + [16]) * 2
    depth = depth_curves(
        run.model, device, backend, host, reference, max_depth=top_depth, model=speed_model
    )
    batch = batch_curves(
        run.model, device, backend, host, reference, max_streams=top_streams, model=speed_model
    )
    return RunCurves(device, backend, *depth, *batch)


def charts_caption(run: RunResult) -> str:
    """What the Charts page shows, for this run, in one sentence."""
    m = run.model
    label = m.name if not m.file_type or m.file_type in m.name else f"{m.name} ({m.file_type})"
    return (
        f"{label} on {run.device_name}: red is what the hardware allows, blue what llama.cpp "
        "measured, orange what the model predicts."
    )
