"""Data for the charts: ceilings and predictions as curves over context depth and streams, for
the device a run was measured on (its own efficiency applied through the reference)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.conditions.workloads import custom_workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics import ceilings
from advisor.core.predict.projecting.projection import Target, measured_ratios, project
from advisor.core.predict.projecting.reference import Reference

STREAMS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)  # the streams a chart plots


@dataclass(frozen=True)
class Curve:
    x: np.ndarray
    y: np.ndarray


def depth_curves(
    facts: ModelFacts,
    device: Device,
    backend: str,
    host: Host,
    reference: Reference | None,
    max_depth: int | None = None,
    points: int = 40,
    *,
    model: SpeedModel,
) -> tuple[Curve, Curve]:
    """(bandwidth ceiling, predicted) decode tokens/s against tokens of context."""
    top = max_depth or min(facts.context_length or 32768, 65536)
    depths = np.unique(np.linspace(0, top, points).astype(int))
    target = Target(device, backend=backend)
    ratios = measured_ratios(model, facts, reference, host)
    ceiling, predicted = [], []
    for d in depths:
        p = project(
            facts, target, custom_workload(0, 2, history_tokens=int(d)), host=host,
            reference=reference, model=model, ratios=ratios,
        )  # fmt: skip
        ceiling.append(
            ceilings.decode_ceiling_tps(
                device.bandwidth_bytes_per_s,
                facts.active_weights_bytes,
                facts.kv_cache_bytes(int(d)),
            )
        )
        predicted.append(p.decode_tps if p.decode_tps else np.nan)
    return Curve(depths, np.array(ceiling)), Curve(depths, np.array(predicted))


def batch_curves(
    facts: ModelFacts,
    device: Device,
    backend: str,
    host: Host,
    reference: Reference | None,
    max_streams: int = 32,
    n_gen: int = 128,
    *,
    model: SpeedModel,
) -> tuple[Curve, Curve, Curve]:
    """(bandwidth ceiling aggregate, predicted aggregate, predicted per user) against streams."""
    streams = np.array([s for s in STREAMS if s <= max_streams])
    target = Target(device, backend=backend)
    kv = facts.kv_cache_bytes(n_gen // 2)
    ratios = measured_ratios(model, facts, reference, host)
    ceiling, aggregate, per_user = [], [], []
    for b in streams:
        w = replace(custom_workload(0, n_gen), concurrency=int(b))
        p = project(facts, target, w, host=host, reference=reference, model=model, ratios=ratios)
        ceiling.append(
            ceilings.decode_ceiling_tps(
                device.bandwidth_bytes_per_s, facts.active_weights_bytes, kv, int(b)
            )
        )
        aggregate.append(p.aggregate_tps or np.nan)
        per_user.append(p.per_user_tps or np.nan)
    return (
        Curve(streams, np.array(ceiling)),
        Curve(streams, np.array(aggregate)),
        Curve(streams, np.array(per_user)),
    )
