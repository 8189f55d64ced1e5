"""Data for the charts: ceilings and predictions as curves over context depth and streams."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.core.hardware.machine import MachineProfile
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.projection import Reference, Target, project, reference_from_run
from advisor.core.predict.workloads import custom_workload
from advisor.core.runs.results import RunResult


@dataclass(frozen=True)
class Curve:
    x: np.ndarray
    y: np.ndarray


def _reference(run: RunResult | None, profile: MachineProfile) -> Reference | None:
    return reference_from_run(run, profile.device, profile.backend) if run else None


def depth_curves(
    facts: ModelFacts,
    profile: MachineProfile,
    run: RunResult | None,
    max_depth: int | None = None,
    points: int = 40,
) -> tuple[Curve, Curve]:
    """(bandwidth ceiling, predicted) decode tokens/s against tokens of context."""
    top = max_depth or min(facts.context_length or 32768, 65536)
    depths = np.unique(np.linspace(0, top, points).astype(int))
    ref = _reference(run, profile)
    target = Target(profile.device, backend=profile.backend)
    ceiling, predicted = [], []
    for d in depths:
        p = project(
            facts,
            target,
            custom_workload(0, 2, history_tokens=int(d)),
            host=profile.host,
            reference=ref,
        )
        ceiling.append(profile.bandwidth_bytes_per_s / facts.decode_bytes_per_token(int(d)))
        predicted.append(p.decode_tps if p.decode_tps else np.nan)
    return Curve(depths, np.array(ceiling)), Curve(depths, np.array(predicted))


def batch_curves(
    facts: ModelFacts, profile: MachineProfile, run: RunResult | None, max_streams: int = 32
) -> tuple[Curve, Curve, Curve]:
    """(bandwidth ceiling aggregate, predicted aggregate, predicted per user) against streams."""
    streams = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
    streams = streams[streams <= max_streams]
    ref = _reference(run, profile)
    target = Target(profile.device, backend=profile.backend)
    ceiling, aggregate, per_user = [], [], []
    n_gen = 128
    for b in streams:
        w = custom_workload(0, n_gen)
        w = type(w)(**{**w.__dict__, "concurrency": int(b)})
        p = project(facts, target, w, host=profile.host, reference=ref)
        kv = facts.kv_cache_bytes(n_gen // 2)
        ceiling.append(b * profile.bandwidth_bytes_per_s / (facts.active_weights_bytes + b * kv))
        aggregate.append(p.aggregate_tps or np.nan)
        per_user.append(p.per_user_tps or np.nan)
    return (
        Curve(streams, np.array(ceiling)),
        Curve(streams, np.array(aggregate)),
        Curve(streams, np.array(per_user)),
    )
