"""The physical ceilings of LLM inference: pure functions, SI units, units in every name.

Decode reads every active weight and the whole KV cache once per generated token, so it is
bounded by memory bandwidth. Prefill does about 2 FLOPs per active parameter per prompt token,
in parallel over the prompt, so it is bounded by compute. Batched decode shares one weight read
among B streams until compute caps it. See ../shared/DESIGN.md for the derivations.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.model.facts import KV_CACHE_BYTES_PER_ELEMENT


def kv_bytes_per_token(
    n_layers: int,
    n_kv_heads: int,
    head_dim: int,
    value_head_dim: int | None = None,
    cache_type: str = "f16",
) -> float:
    """KV-cache bytes per token: K and V, for every layer and KV head (GQA-aware).

    2 (K and V) x n_layers x n_kv_heads x head_dim x bytes per element when K and V have the
    same head size.
    """
    v_dim = head_dim if value_head_dim is None else value_head_dim
    return n_layers * n_kv_heads * (head_dim + v_dim) * KV_CACHE_BYTES_PER_ELEMENT[cache_type]


def decode_bytes_per_token(
    active_weights_bytes: float, kv_bytes_per_token: float, depth_tokens: int
) -> float:
    """Bytes one decode step reads at a context depth: active weights + KV cache."""
    return active_weights_bytes + kv_bytes_per_token * depth_tokens


def decode_ceiling_tps(
    bandwidth_bytes_per_s: float,
    active_weights_bytes: float,
    kv_bytes_per_token: float = 0.0,
    depth_tokens: int = 0,
) -> float:
    """The most tokens/s one stream can decode: bandwidth / bytes read per token."""
    return bandwidth_bytes_per_s / decode_bytes_per_token(
        active_weights_bytes, kv_bytes_per_token, depth_tokens
    )


def prefill_flops_per_token(active_params: float, attention_flops_per_token: float = 0.0) -> float:
    """FLOPs to push one prompt token through the model: 2 per active parameter (+ attention)."""
    return 2.0 * active_params + attention_flops_per_token


def prefill_ceiling_tps(
    peak_flops_per_s: float, active_params: float, attention_flops_per_token: float = 0.0
) -> float:
    """The most prompt tokens/s compute allows: peak FLOP/s / FLOPs per token."""
    return peak_flops_per_s / prefill_flops_per_token(active_params, attention_flops_per_token)


def crossover_intensity_flops_per_byte(
    peak_flops_per_s: float, bandwidth_bytes_per_s: float
) -> float:
    """Arithmetic intensity where compute time equals memory time (the roofline's ridge)."""
    return peak_flops_per_s / bandwidth_bytes_per_s


def decode_intensity_flops_per_byte(
    active_params: float, bytes_per_token: float, batch: int = 1
) -> float:
    """Arithmetic intensity of a decode step of `batch` streams sharing one weight read."""
    return batch * 2.0 * active_params / bytes_per_token


@dataclass(frozen=True)
class BatchedDecodeCeiling:
    """The ceiling of B streams decoding together."""

    streams: int
    aggregate_tps: float
    per_stream_tps: float
    memory_bound_tps: float
    compute_bound_tps: float

    @property
    def limited_by(self) -> str:
        return "compute" if self.compute_bound_tps < self.memory_bound_tps else "bandwidth"


def batched_decode_ceiling(
    streams: int,
    bandwidth_bytes_per_s: float,
    weights_bytes: float,
    kv_bytes_per_stream: float,
    compute_ceiling_tps: float,
) -> BatchedDecodeCeiling:
    """Aggregate and per-stream decode ceilings of B concurrent streams.

    Each step reads the weights once for all B streams plus each stream's own KV cache:
    aggregate = min(B x bandwidth / (weights + B x kv_per_stream), compute ceiling).
    """
    if streams < 1:
        raise ValueError("streams must be at least 1")
    memory = streams * bandwidth_bytes_per_s / (weights_bytes + streams * kv_bytes_per_stream)
    aggregate = min(memory, compute_ceiling_tps)
    return BatchedDecodeCeiling(
        streams, aggregate, aggregate / streams, memory, compute_ceiling_tps
    )


@dataclass(frozen=True)
class RequestTime:
    """How long one request takes: waiting for the first token, then the answer."""

    ttft_s: float
    decode_s: float

    @property
    def request_s(self) -> float:
        return self.ttft_s + self.decode_s


def request_time(
    prompt_tokens: int, answer_tokens: int, prefill_tps: float, decode_tps: float
) -> RequestTime:
    """Time to first token (the prompt at prefill speed) and the whole request time."""
    ttft = prompt_tokens / prefill_tps if prompt_tokens else 0.0
    decode = answer_tokens / decode_tps if answer_tokens else 0.0
    return RequestTime(ttft, decode)
