"""A model bigger than the card: where its tensors go, whether that fits, and what it costs.

For a discrete card a projection places the model as llama.cpp would run it: every layer on
the card where it fits, else the placement the user chose (--cpu-moe N, --gpu-layers N), else
the one that keeps the most on the card (for a mixture of experts, the experts of the fewest
first layers in RAM; for a dense model, the fewest first layers), among those the fastest for
the workload. Apple chips and APUs share one memory with the CPU and keep the older rule
(physics/memory.fit_on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GB, GiB
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import memory_need
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics.memory import (
    UNIFIED_OS_RESERVE_BYTES,
    Fit,
    usable_memory_bytes,
)
from advisor.core.predict.physics.placement import (
    Placement,
    Residency,
    card_link_bytes_per_s,
    host_link_bytes_per_s,
    residency,
)


@dataclass(frozen=True)
class Placed:
    """A placement of the model on the card(s) and in RAM, and whether it fits both."""

    placement: Placement
    residency: Residency
    gpu_need_bytes: float  # weights, KV cache and buffers on the card(s)
    cpu_need_bytes: float  # weights and KV cache in system RAM
    gpu_room_bytes: float
    cpu_room_bytes: float

    @property
    def fits(self) -> bool:
        return self.gpu_need_bytes <= self.gpu_room_bytes and (
            self.cpu_need_bytes <= self.cpu_room_bytes
        )


def placed(
    facts: ModelFacts,
    placement: Placement,
    device: Device,
    count: int,
    memory_gb: float,
    host: Host,
    context_tokens: int,
    streams: int,
    cache_type: str,
) -> Placed:
    """Memory on each side for one placement."""
    p = Placement(placement.gpu_layers, placement.cpu_moe, count)
    r = residency(facts, p)
    kv = facts.kv_cache_bytes(context_tokens, cache_type) * streams
    buffers = memory_need(facts, 0, 1, cache_type).compute_bytes
    return Placed(
        p, r,
        r.gpu_bytes + kv * r.kv_gpu_share + buffers,
        r.cpu_bytes + kv * (1 - r.kv_gpu_share),
        usable_memory_bytes(device, memory_gb) * count,
        max(0.0, host.ram_bytes - UNIFIED_OS_RESERVE_BYTES),
    )  # fmt: skip


def candidates(
    facts: ModelFacts, device: Device, count: int, memory_gb: float, host: Host,
    context_tokens: int, streams: int, cache_type: str,
) -> list[Placed]:  # fmt: skip
    """The placements worth projecting when the model does not fit the card(s): for a mixture
    of experts the fewest first layers' experts in RAM that fit, and the most whole layers
    on the card that fit; for a dense model the latter. Empty where none fits."""

    def at(p: Placement) -> Placed:
        return placed(facts, p, device, count, memory_gb, host, context_tokens, streams,
                      cache_type)  # fmt: skip

    out: list[Placed] = []
    if facts.is_moe:
        found = _first(lambda n: at(Placement(cpu_moe=n)), range(0, facts.n_layers + 1))
        if found is not None:
            out.append(found)
    found = _first(lambda n: at(Placement(gpu_layers=n)), range(facts.n_layers + 1, 0, -1))
    if found is not None and not found.placement.is_full(facts):
        out.append(found)
    return out


def _first(make: Any, values: range) -> Placed | None:
    """The first placement that fits, trying the values in order (a bisection would do; the
    layers are few)."""
    for v in values:
        p = make(v)
        if p.fits:
            return p
        if p.cpu_need_bytes > p.cpu_room_bytes:
            return None  # more in RAM only makes RAM fuller
    return None


def hybrid_fit(p: Placed, host: Host, facts: ModelFacts) -> Fit:
    """The Fit a projection reports for a placement that fits: 'hybrid', the share of what a
    token reads that is on the card, the RAM it reads the rest from."""
    read_gpu = p.residency.read_bytes("gpu")
    read_cpu = p.residency.read_bytes("cpu")
    share = read_gpu / (read_gpu + read_cpu) if read_gpu + read_cpu else 1.0
    return Fit("hybrid", share, host.ram_bandwidth_bytes_per_s, host.label)


def no_fit_sentence(p: Placed, device: Device, count: int, memory_gb: float, host: Host,
                    facts: ModelFacts) -> str:  # fmt: skip
    """Why a placement does not fit, with what to change."""
    cards = (f"{count} x " if count > 1 else "") + f"{memory_gb:g} GB {device.name}"
    if p.gpu_need_bytes > p.gpu_room_bytes:
        more = "keep more in RAM (a higher --cpu-moe or a lower --gpu-layers)"
        return (
            f"Does not fit: {p.placement.describe(facts)} puts {p.gpu_need_bytes / GiB:.1f} GiB "
            f"on the {cards}, which has {p.gpu_room_bytes / GiB:.1f} GiB usable; {more}."
        )
    return (
        f"Does not fit: {p.cpu_need_bytes / GiB:.1f} GiB would stay in system RAM, and "
        f"{host.ram_bytes / GiB:.0f} GiB (about {p.cpu_room_bytes / GiB:.0f} GiB free of the "
        "OS) is not enough: more RAM, or a card with more memory."
    )


def nothing_fits_sentence(facts: ModelFacts, device: Device, count: int, memory_gb: float,
                          host: Host, need: float) -> str:  # fmt: skip
    cards = (f"{count} x " if count > 1 else "") + f"{memory_gb:g} GB"
    return (
        f"Does not fit: the model and its KV cache need {need / GiB:.1f} GiB; {cards} on the "
        f"card plus {host.ram_bytes / GiB:.0f} GiB of {host.label} is not enough, however the "
        "layers are placed."
    )


CHOSEN_BY = {
    "you": "you",
    "full": "the app (every layer fits on the card)",
    "fastest": "the app (the fastest placement that fits, for this workload)",
}


def placement_block(
    p: Placed, facts: ModelFacts, host: Host, model: SpeedModel, chosen_by: str,
    context_tokens: int, device: Device | None = None,
) -> dict[str, Any]:  # fmt: skip
    """What lives where, and the command that runs it, for the projection's JSON and pages."""
    r = p.residency
    args = p.placement.llama_args(facts)
    ctx = max(4096, 1 << (max(1, context_tokens) - 1).bit_length())
    return {
        "where": p.placement.describe(facts),
        "chosen_by": CHOSEN_BY[chosen_by],
        "llama_args": args,
        "command": " ".join(["llama-server", "-m", "MODEL.gguf", *args, "-c", str(ctx)]),
        "gpu_weights_bytes": r.gpu_bytes,
        "ram_weights_bytes": r.cpu_bytes,
        "gpu_bytes_per_token": r.read_bytes("gpu"),
        "ram_bytes_per_token": r.read_bytes("cpu"),
        "gpu_memory_needed_bytes": p.gpu_need_bytes,
        "ram_needed_bytes": p.cpu_need_bytes,
        "ram_bandwidth_bytes_per_s": host.ram_bandwidth_bytes_per_s,
        "ram_bandwidth_basis": host.bandwidth_basis,
        "ram_stream_bytes_per_s": model.ram_stream_rate(host),
        "link_bytes_per_s": (
            card_link_bytes_per_s(host, device) if device else host_link_bytes_per_s(host)
        ),
        "link_copy_bytes_per_s": model.link_rate(host, device),
        "link_basis": host.link_basis,
    }


def placement_sentence(block: dict[str, Any]) -> str:
    """The placement in one sentence: where, what a token reads from RAM, the command."""
    basis = RAM_BASIS_WORDS.get(block["ram_bandwidth_basis"], block["ram_bandwidth_basis"])
    ram_gbs = block["ram_bandwidth_bytes_per_s"] / GB
    return (
        f"Runs as {block['where']} ({' '.join(block['llama_args'])}): each token reads "
        f"{block['ram_bytes_per_token'] / GB:.2f} GB from RAM ({ram_gbs:.0f} GB/s, {basis}) "
        f"and {block['gpu_bytes_per_token'] / GB:.2f} GB from the card."
    )


RAM_BASIS_WORDS = {
    "measured": "measured",
    "rated": "its rated speed",
    "assumed": "assumed: give --ram-bandwidth-gbs or --ram-speed",
}
