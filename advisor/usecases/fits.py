"""What runs here: every built-in model shape x quantisation a device can hold, with its
predicted speed for a workload, what that rests on, and the longest context that still fits.

The question llmfit, whichllm and CanIRun.ai answer from spec sheets; here the answer comes
from the same projections as the rest of the app (so a measured run counts on its own device).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts, facts_from_shape
from advisor.core.model.memory import memory_need
from advisor.core.model.shapes import all_shapes
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics.memory import usable_memory_bytes
from advisor.core.predict.projecting.projection import Projection, Target, project
from advisor.core.predict.projecting.reference import Reference

QUANTS = ("f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0")


@dataclass(frozen=True)
class FitRow:
    shape_id: str
    name: str
    quant: str
    weights_bytes: int
    fits: str  # "yes" | "hybrid" | "partial"
    decode_tps: float | None
    prefill_tps: float | None
    basis: str
    longest_context: int  # tokens of context (one stream) that fit beside the weights

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def longest_context(facts: ModelFacts, room_bytes: float, cache_type: str = "f16") -> int:
    """The most tokens of context (one stream) whose KV cache fits beside the weights, up to
    the model's trained context."""
    top = facts.context_length or 131_072
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        need = memory_need(facts, mid, 1, cache_type).total_bytes
        lo, hi = (mid, hi) if need <= room_bytes else (lo, mid - 1)
    return lo


def what_runs(
    device: Device,
    workload: Workload,
    *,
    host: Host,
    speed_model: SpeedModel,
    backend: str | None = None,
    reference: Reference | None = None,
    min_tps: float | None = None,
    include_partial: bool = False,
) -> list[FitRow]:
    """Every shape x quantisation that fits the device (largest memory option), biggest
    first, with decode per user >= min_tps when given."""
    memory_gb = max(device.memory_sizes_gb)
    room = usable_memory_bytes(device, memory_gb)
    target = Target(device, backend=backend, memory_gb=memory_gb)
    rows: list[FitRow] = []
    for shape in all_shapes():
        for quant in QUANTS:
            facts = facts_from_shape(shape, quant)
            if facts.weights_bytes > room and not include_partial:
                continue
            p: Projection = project(
                facts, target, workload, host=host, model=speed_model, reference=reference
            )
            if p.fits == "no" or (p.fits in ("partial", "hybrid") and not include_partial):
                continue
            if p.basis == "unsupported" or p.beyond_context:
                continue
            if min_tps is not None and (p.per_user_tps or 0) < min_tps:
                continue
            rows.append(
                FitRow(
                    shape.id,
                    facts.name,
                    facts.file_type,
                    facts.weights_bytes,
                    p.fits,
                    p.per_user_tps,
                    p.prefill_tps,
                    p.basis,
                    longest_context(facts, room),
                )
            )
    rows.sort(key=lambda r: (-r.weights_bytes, r.shape_id))
    return rows
