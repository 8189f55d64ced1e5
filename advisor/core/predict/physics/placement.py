"""Where a model's tensors live, and what each place holds and reads per token.

llama.cpp decides placement per tensor when it loads a model:

- `-ngl N` puts the *last* N layers on the GPU(s) and keeps the first ones on the CPU: layer
  `il` is on a GPU when `il >= n_layer + 1 - N`, the output layer (index n_layer) counting as
  one (src/llama-model.cpp, `i_gpu_start = std::max(n_layer_all + 1 - n_gpu_layers, 0)`);
  the token table (the input layer) always stays on the CPU, a token reading one row of it.
- `--n-cpu-moe N` keeps the routed experts of the *first* N layers in system RAM: one buffer
  override per layer, `blk\\.{i}\\.ffn_(up|down|gate|gate_up)_(ch|)exps` -> the CPU buffer type
  (common/common.h `llm_ffn_block_regex` with `LLM_FFN_EXPS_REGEX`, common/arg.cpp).
- several cards split the layers in proportion to their memory (`-sm layer`, the default).

Decoding, each side reads what it holds at its own speed and no weight crosses the bus; a
token touches n_expert_used / n_expert of each layer's routed experts. A prompt micro-batch
of 32 tokens or more runs its matrix products on the GPU, copying the CPU-resident weights
it uses over the host link (ggml-cuda.cu `ggml_backend_cuda_device_offload_op`:
`min_batch_size = 32`; ggml-backend.cpp's scheduler copies the weights of an offloaded op).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts

ALL_LAYERS = 999  # -ngl 999: every layer on the GPU(s), as llama.cpp's `-ngl 99` habit says
OP_OFFLOAD_MIN_BATCH = 32  # ggml-cuda.cu: smaller batches run CPU-resident ops on the CPU


@dataclass(frozen=True)
class Placement:
    """Which tensors live where: llama.cpp's -ngl, --n-cpu-moe, and identical cards splitting
    the GPU layers."""

    gpu_layers: int = ALL_LAYERS  # -ngl
    cpu_moe: int = 0  # --n-cpu-moe
    cards: int = 1

    def __post_init__(self) -> None:
        if self.gpu_layers < 0 or self.cpu_moe < 0 or self.cards < 1:
            raise ValueError("a placement's counts must not be negative")

    def normalised(self, facts: ModelFacts) -> Placement:
        """The same placement with counts no larger than the model has."""
        return Placement(min(self.gpu_layers, facts.n_layers + 1),
                         min(self.cpu_moe, facts.n_layers) if facts.is_moe else 0,
                         self.cards)  # fmt: skip

    def is_full(self, facts: ModelFacts) -> bool:
        """Everything on the GPU(s)?"""
        p = self.normalised(facts)
        return p.gpu_layers >= facts.n_layers + 1 and p.cpu_moe == 0

    def first_gpu_layer(self, facts: ModelFacts) -> int:
        """The first layer on a GPU (llama.cpp's i_gpu_start)."""
        return max(facts.n_layers + 1 - self.gpu_layers, 0)

    def llama_args(self, facts: ModelFacts) -> list[str]:
        """The llama.cpp options that give this placement."""
        p = self.normalised(facts)
        args = ["-ngl", str(p.gpu_layers if p.gpu_layers < facts.n_layers + 1 else 99)]
        if p.cpu_moe:
            args += ["--n-cpu-moe", str(p.cpu_moe)]
        if p.cards > 1:
            args += ["--split-mode", "layer"]
        return args

    def describe(self, facts: ModelFacts) -> str:
        """What lives where, in words."""
        p = self.normalised(facts)
        gpu = "the GPU" if p.cards == 1 else f"{p.cards} cards (layers split between them)"
        if p.is_full(facts):
            return f"every layer on {gpu}"
        parts = []
        first = p.first_gpu_layer(facts)
        if first:
            on_cpu = min(first, facts.n_layers)
            parts.append(f"the first {on_cpu} of {facts.n_layers} layers in system RAM")
        if p.cpu_moe:
            layers = (
                "every layer" if p.cpu_moe >= facts.n_layers else f"the first {p.cpu_moe} layers"
            )
            parts.append(f"the experts of {layers} in system RAM")
        return f"{' and '.join(parts)}, the rest on {gpu}"


@dataclass(frozen=True)
class Residency:
    """What each side (the GPUs, system RAM) holds, and what a decode step reads there."""

    gpu_bytes: float  # weights in the cards' memory, all cards together
    cpu_bytes: float  # weights in system RAM (the token table included)
    gpu_other_bytes: float  # read whole every step: attention, dense FFN, norms, the head
    gpu_expert_bytes: float  # routed experts on the GPU: a token reads k/E of them
    cpu_other_bytes: float  # the CPU layers' other weights (read whole every step)
    cpu_expert_bytes: float  # routed experts in RAM
    gpu_params_read: float  # parameters one token multiplies on each side
    cpu_params_read: float
    gpu_layers: int  # blocks whose attention runs on a GPU
    kv_gpu_share: float  # share of the KV cache on the GPU(s) (it follows the layers)
    cpu_expert_layers: int  # GPU layers whose experts stay in RAM (a round trip each)
    expert_used_share: float  # k/E (1 for a dense model)

    def read_bytes(self, side: str, streams: int = 1) -> float:
        """Weight bytes a step of `streams` streams reads on a side ('gpu' or 'cpu'): the
        other weights once, and the experts any stream was routed to, 1 - (1 - k/E)^streams."""
        touched = 1 - (1 - self.expert_used_share) ** max(1, streams)
        if side == "gpu":
            return self.gpu_other_bytes + self.gpu_expert_bytes * touched
        return self.cpu_other_bytes + self.cpu_expert_bytes * touched

    @property
    def hybrid(self) -> bool:
        """Does any weight a token reads live in system RAM?"""
        return bool(self.cpu_other_bytes or self.cpu_expert_bytes)


def _blocks(facts: ModelFacts) -> Sequence[tuple[int, int, int, int]]:
    """Per-block bytes and parameters; a model saved before facts kept them is split evenly,
    its routed experts being what one token does not read, scaled up: (total - active) /
    (1 - k/E)."""
    if facts.blocks and len(facts.blocks) >= facts.n_layers:
        return facts.blocks[: facts.n_layers]
    n = max(1, facts.n_layers)
    body = max(0.0, facts.weights_bytes - facts.lookup_bytes - _head_bytes(facts))
    params = max(0.0, facts.n_params - facts.lookup_params - facts.output_params)
    experts = 0.0
    if facts.is_moe:
        unread = 1 - facts.n_expert_used / facts.n_expert
        experts = min(body, (facts.weights_bytes - facts.active_weights_bytes) / unread)
    expert_params = params * experts / body if body else 0.0
    one = (int((body - experts) / n), int(experts / n), int((params - expert_params) / n),
           int(expert_params / n))  # fmt: skip
    return [one] * n


def _head_bytes(facts: ModelFacts) -> float:
    """The output head's bytes (the token table, where the model ties its head to it): what
    is neither a block nor the token table (the final norm, a few kB, included); estimated
    by its parameters where the facts keep no blocks."""
    if facts.blocks:
        return max(0.0, facts.weights_bytes - facts.lookup_bytes - sum(map(sum, (
            b[:2] for b in facts.blocks))))  # fmt: skip
    if not facts.n_params:
        return 0.0
    return facts.weights_bytes * facts.output_params / facts.n_params


def residency(facts: ModelFacts, placement: Placement) -> Residency:
    """Bytes per side for a placement of this model."""
    p = placement.normalised(facts)
    first_gpu = p.first_gpu_layer(facts)
    used = facts.n_expert_used / facts.n_expert if facts.is_moe else 1.0
    gpu_other = gpu_experts = cpu_other = cpu_experts = 0.0
    gpu_par = cpu_par = 0.0
    gpu_layers = cpu_expert_layers = 0
    for il, (other, experts, other_params, expert_params) in enumerate(_blocks(facts)):
        if facts.n_main_layers is not None and il >= facts.n_main_layers:
            continue  # a multi-token-prediction block: llama.cpp skips it when loading
        if il < first_gpu:  # the whole layer on the CPU
            cpu_other += other
            cpu_experts += experts
            cpu_par += other_params + expert_params * used
            continue
        gpu_layers += 1
        gpu_other += other
        gpu_par += other_params
        if il < p.cpu_moe:  # --n-cpu-moe: this layer's experts in RAM
            cpu_experts += experts
            cpu_par += expert_params * used
            cpu_expert_layers += 1
        else:
            gpu_experts += experts
            gpu_par += expert_params * used
    # the output layer is on a GPU from -ngl 1 on; the token table (the input layer) always
    # stays on the CPU, and a model whose head is the table loads it twice (llama.cpp's
    # TENSOR_DUPLICATED): one copy for the input, one on the output layer's device
    head = _head_bytes(facts)
    table = facts.lookup_bytes if facts.lookup_bytes else head
    held_cpu = 0.0
    if p.gpu_layers >= 1:
        gpu_other += head
        gpu_par += facts.output_params
        held_cpu = table
    else:
        cpu_other += head
        cpu_par += facts.output_params
        held_cpu = table if facts.lookup_bytes else 0.0
    n_run = facts.n_main_layers or facts.n_layers
    return Residency(
        gpu_other + gpu_experts, cpu_other + cpu_experts + held_cpu, gpu_other, gpu_experts,
        cpu_other, cpu_experts, gpu_par, cpu_par, gpu_layers, gpu_layers / max(1, n_run),
        cpu_expert_layers, used,
    )  # fmt: skip


def prompt_copy_bytes(r: Residency, batch_tokens: int) -> float:
    """Bytes one prompt micro-batch copies to the GPU: nothing below the op-offload threshold
    (the CPU computes its part), else the CPU layers' other weights whole and the share of the
    RAM-resident experts the batch's tokens route to, 1 - (1 - k/E)^tokens."""
    if batch_tokens < OP_OFFLOAD_MIN_BATCH or not r.hybrid:
        return 0.0
    return r.cpu_other_bytes + r.cpu_expert_bytes * (1 - (1 - r.expert_used_share) ** batch_tokens)


# -------------------------------------------------------------------------------------------
# host memory and the link, from what a user knows
# -------------------------------------------------------------------------------------------

# GB/s per lane, one direction, by PCIe generation (128b/130b encoding from generation 3)
PCIE_GBS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
ASSUMED_PCIE = (4, 16)  # where nothing is detected: a PCIe 4.0 x16 slot


def link_bytes_per_s(gen: int, lanes: int) -> float:
    """The rated one-way rate of a PCIe link of this generation and width (a copy reaches a
    share of it: SpeedModel.link_rate)."""
    return PCIE_GBS_PER_LANE.get(gen, PCIE_GBS_PER_LANE[4]) * lanes * 1e9


def host_link_bytes_per_s(host: Host) -> float:
    """The host link's rated one-way rate: the user's figure, the link detected, or a PCIe 4.0
    x16 slot."""
    if host.link_gbs:
        return host.link_gbs * 1e9
    if host.pcie_gen and host.pcie_lanes:
        return link_bytes_per_s(host.pcie_gen, host.pcie_lanes)
    return link_bytes_per_s(*ASSUMED_PCIE)


def card_link_bytes_per_s(host: Host, device: Device) -> float:
    """The rated one-way rate of the link `device` gets in `host`: min(the host's generation,
    the card's) x min(the host's lanes, the card's), the host's being the link detected or a
    PCIe 4.0 x16 slot (an RTX 4060, PCIe 4.0 x8, in a PCIe 3.0 x16 slot: 3.0 x8). A rate the
    user gave stays theirs, but no card carries more than its own link. Where the catalogue
    has no link for the card (no add-in card, or unsourced), the host's alone."""
    if device.pcie_gen is None or device.pcie_lanes is None:
        return host_link_bytes_per_s(host)
    if host.link_gbs:
        own = link_bytes_per_s(device.pcie_gen, device.pcie_lanes)
        return min(host.link_gbs * 1e9, own)
    if host.pcie_gen and host.pcie_lanes:
        gen, lanes = host.pcie_gen, host.pcie_lanes
    else:
        gen, lanes = ASSUMED_PCIE
    return link_bytes_per_s(min(gen, device.pcie_gen), min(lanes, device.pcie_lanes))


def rated_ram_bandwidth(memory: str, channels: int) -> float:
    """The rated bandwidth of system memory ('DDR5-4800', 2 channels): transfers per second
    x 8 bytes x channels (a 64-bit channel; LPDDR counted in 64-bit equivalents)."""
    import re

    found = re.match(r"^\s*(?:LP)?DDR\d[A-Z]?-(\d{3,5})\s*$", memory, re.IGNORECASE)
    if not found:
        raise ValueError(f"'{memory}' is not a memory speed such as DDR5-4800")
    return int(found.group(1)) * 1e6 * 8 * channels
