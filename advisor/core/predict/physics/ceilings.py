"""The physical ceilings of LLM inference: pure functions, SI units, units in every name.

Decode reads every active weight once per step and each stream's KV cache, so it is bounded by
memory bandwidth. Prefill does about 2 FLOPs per active parameter per prompt token (plus
attention), in parallel over the prompt, so it is bounded by compute. Batched decode shares
one weight read among B streams until compute caps it. See ../shared/DESIGN.md.

These are the only ceiling formulas in the app: a run's explanation (runs.explain), the
projections (predict.projection) and the charts (predict.curves) all call them.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.catalogue.backend_paths import usable_compute
from advisor.core.catalogue.device import Device
from advisor.core.model.facts import ModelFacts


def decode_step_bytes(
    active_weights_bytes: float, kv_bytes_per_stream: float, streams: int = 1
) -> float:
    """Bytes one decode step reads: the active weights once, and every stream's KV cache."""
    if streams < 1:
        raise ValueError("streams must be at least 1")
    return active_weights_bytes + streams * kv_bytes_per_stream


def decode_ceiling_tps(
    bandwidth_bytes_per_s: float,
    active_weights_bytes: float,
    kv_bytes_per_stream: float = 0.0,
    streams: int = 1,
) -> float:
    """The most tokens/s (all streams together) memory bandwidth allows:
    B x bandwidth / (weights + B x kv_per_stream)."""
    step = decode_step_bytes(active_weights_bytes, kv_bytes_per_stream, streams)
    return streams * bandwidth_bytes_per_s / step


def compute_ceiling_tps(peak_flops_per_s: float, flops_per_token: float) -> float:
    """The most tokens/s compute allows: peak FLOP/s / FLOPs per token (prefill's ceiling)."""
    return peak_flops_per_s / flops_per_token


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOPs per byte moved: where a workload sits on the roofline."""
    return flops / bytes_moved


@dataclass(frozen=True)
class BatchedDecodeCeiling:
    """The ceiling of B streams decoding together."""

    streams: int
    memory_bound_tps: float
    compute_bound_tps: float | None

    @property
    def aggregate_tps(self) -> float:
        if self.compute_bound_tps is None:
            return self.memory_bound_tps
        return min(self.memory_bound_tps, self.compute_bound_tps)

    @property
    def per_stream_tps(self) -> float:
        return self.aggregate_tps / self.streams

    @property
    def limited_by(self) -> str:
        bound = self.compute_bound_tps
        return "compute" if bound is not None and bound < self.memory_bound_tps else "bandwidth"


def batched_decode_ceiling(
    streams: int,
    bandwidth_bytes_per_s: float,
    active_weights_bytes: float,
    kv_bytes_per_stream: float,
    peak_flops_per_s: float | None = None,
    flops_per_token: float | None = None,
) -> BatchedDecodeCeiling:
    """Aggregate decode ceiling of B streams: min(B x bandwidth / (weights + B x kv),
    peak / FLOPs per token); without a compute figure, the memory bound alone."""
    memory = decode_ceiling_tps(
        bandwidth_bytes_per_s, active_weights_bytes, kv_bytes_per_stream, streams
    )
    compute = (
        compute_ceiling_tps(peak_flops_per_s, flops_per_token)
        if peak_flops_per_s and flops_per_token
        else None
    )
    return BatchedDecodeCeiling(streams, memory, compute)


def weights_read_per_step(
    weights_bytes: float,
    active_weights_bytes: float,
    n_expert: int = 0,
    n_expert_used: int = 0,
    streams: int = 1,
) -> float:
    """Weight bytes one decode step reads for `streams` streams together.

    A dense model reads every weight once, whatever the number of streams. A mixture of
    experts reads its dense part (attention, shared experts, embeddings) once and, in each
    layer, every expert at least one stream routed to: with k of E experts per token, a share
    1 - (1 - k/E)^B of them for B streams (routing taken as independent). One stream reads
    the active weights; many streams approach all of them.
    """
    split = _expert_split(weights_bytes, active_weights_bytes, n_expert, n_expert_used, streams)
    if split is None:
        return active_weights_bytes
    dense, experts, used = split
    return dense + experts * (1.0 - (1.0 - used) ** streams)


def extra_stream_bytes(
    weights_bytes: float,
    active_weights_bytes: float,
    n_expert: int = 0,
    n_expert_used: int = 0,
    streams: int = 1,
) -> tuple[float, float]:
    """What the streams beyond the first add to a small batch's matrix-vector kernels, in
    bytes: (multiplied again, read again).

    Multiplied again: a kernel that takes several columns reads a matrix once and multiplies
    it once per column, each further column costing a share of the read. That is every weight
    of a dense model, and the dense part (attention, shared experts) of a mixture of experts.
    Read again: llama.cpp's small-batch expert kernels (CUDA up to 8 tokens, Metal up to 31)
    fetch each token's experts for that token alone, so a token reads its k experts whether
    or not another stream already did: B*k/E expert reads in all, of which
    `weights_read_per_step` counts the 1 - (1 - k/E)^B distinct ones.
    """
    split = _expert_split(weights_bytes, active_weights_bytes, n_expert, n_expert_used, streams)
    if split is None:
        return (streams - 1) * active_weights_bytes, 0.0
    dense, experts, used = split
    return (streams - 1) * dense, experts * (streams * used - 1.0 + (1.0 - used) ** streams)


def _expert_split(
    weights_bytes: float, active_weights_bytes: float, n_expert: int, n_expert_used: int,
    streams: int,
) -> tuple[float, float, float] | None:  # fmt: skip
    """(dense bytes, all experts' bytes, k/E) of a mixture of experts; None for a dense model."""
    if streams < 1:
        raise ValueError("streams must be at least 1")
    if n_expert <= 1 or not 0 < n_expert_used < n_expert:
        return None
    used = n_expert_used / n_expert
    experts = (weights_bytes - active_weights_bytes) / (1.0 - used)
    return weights_bytes - experts, experts, used


def step_weight_bytes(facts: ModelFacts, streams: int = 1) -> float:
    """Weight bytes a decode step of `streams` streams reads, as the model counts them:
    `weights_read_per_step` without the token table, of which a token looks one row
    up (the ceilings the app shows count every active weight, as DESIGN.md does)."""
    return weights_read_per_step(*_weights(facts), streams)


def extra_stream_weight_bytes(facts: ModelFacts, streams: int) -> tuple[float, float]:
    """`extra_stream_bytes` as the speed model counts weights: (multiplied, read) again."""
    return extra_stream_bytes(*_weights(facts), streams)


def _weights(facts: ModelFacts) -> tuple[float, float, int, int]:
    return (facts.weights_bytes - facts.lookup_bytes, facts.step_weights_bytes,
            facts.n_expert, facts.n_expert_used)  # fmt: skip


def usable_peak(device: Device, backend: str, quantized: bool) -> float | None:
    """FLOP/s llama.cpp's prefill can use on this device and backend (backend-path table),
    the device's own peak where the table has no figure for it."""
    usable = usable_compute(device, backend, quantized)
    if usable.flops_per_s:
        return usable.flops_per_s
    return device.compute_peak_for(quantized)
