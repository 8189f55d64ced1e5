"""Will this run fit? Checked before llama.cpp loads anything.

A model whose weights, KV cache and compute buffers do not fit in memory either fails deep
inside llama.cpp or, worse, runs from the page cache at disk speed and takes the machine down
with it. So the numbers are checked first and the user gets them in one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.infra.units import GiB
from advisor.core.model.facts import ModelFacts

# llama.cpp's compute buffers and runtime overhead beyond weights and KV cache
OVERHEAD_BYTES = 400 * 1024**2
# leave this share of available memory to the OS and other programs
MARGIN = 0.10


@dataclass(frozen=True)
class MemoryNeed:
    weights_bytes: int
    kv_cache_bytes: float
    compute_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes + self.compute_bytes


@dataclass(frozen=True)
class Preflight:
    """The verdict: ok, or one sentence with the numbers saying why not."""

    ok: bool
    message: str
    need: MemoryNeed
    available_bytes: int | None
    where: str  # "RAM" | "VRAM" | "unified memory"


def memory_need(
    facts: ModelFacts,
    context_tokens: int,
    streams: int = 1,
    cache_type: str = "f16",
    n_ubatch: int = 512,
) -> MemoryNeed:
    """Bytes a run needs: weights, the KV cache for the context, and compute buffers."""
    kv = facts.kv_cache_bytes(context_tokens, cache_type) * streams
    # logits for a ubatch plus activations: a few buffers of ubatch x width
    compute = OVERHEAD_BYTES + 4.0 * n_ubatch * (facts.vocab_size + 8 * facts.n_embd)
    return MemoryNeed(facts.weights_bytes, kv, compute)


def check_fits(
    facts: ModelFacts,
    context_tokens: int,
    available_bytes: int | None,
    *,
    streams: int = 1,
    cache_type: str = "f16",
    where: str = "RAM",
    allow_oversize: bool = False,
) -> Preflight:
    """Refuse, with the figures, a run whose memory need exceeds what is available."""
    need = memory_need(facts, context_tokens, streams, cache_type)
    if available_bytes is None:
        return Preflight(True, "Available memory is unknown; trying anyway.", need, None, where)
    usable = available_bytes * (1 - MARGIN)
    if need.total_bytes <= usable:
        return Preflight(True, "", need, available_bytes, where)
    message = (
        f"This model needs about {need.total_bytes / GiB:.1f} GiB ({facts.weights_bytes / GiB:.1f} "
        f"GiB of weights, {need.kv_cache_bytes / GiB:.1f} GiB of KV cache for {context_tokens:,} "
        f"tokens, {need.compute_bytes / GiB:.1f} GiB of buffers) but only "
        f"{available_bytes / GiB:.1f} GiB of {where} is free; close other programs, choose a "
        "smaller quantisation or a shorter context, or allow it anyway."
    )
    if allow_oversize:
        return Preflight(
            True, "Over the memory limit, run on request: " + message, need, available_bytes, where
        )
    return Preflight(False, message, need, available_bytes, where)
