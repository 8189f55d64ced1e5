"""The speed model: what a device does with a model, given the fitted shares and fixed costs.
docs/MODEL.md states every term with its equation and evidence; this module computes them.

Decode streams the step's weights and KV cache at a share of the memory bandwidth, plus fixed
costs per token (per-layer kernel costs; on a CPU the matrix-vector arithmetic). Prefill runs
each prompt token's FLOPs at a share of the usable compute, plus a fixed cost per layer per
micro-batch. The shares come from the hierarchical efficiency model (`model.efficiency`),
fitted by `fitting.shares`; every prediction has a basis and a band (`model.bands`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.conditions.test_point import TestPoint
from advisor.core.predict.model import efficiency as E
from advisor.core.predict.model.bands import band_for
from advisor.core.predict.model.hybrid_shares import HybridShares
from advisor.core.predict.model.observations import PREDICT_AT, Observation, Published, years
from advisor.core.predict.physics.ceilings import (
    extra_stream_weight_bytes,
    step_weight_bytes,
    usable_peak,
)
from advisor.core.predict.physics.placement import (
    Residency,
    card_link_bytes_per_s,
    host_link_bytes_per_s,
    prompt_copy_bytes,
)

log = logging.getLogger(__name__)

BASES = ("unsupported", "spec-only", "modelled", "published", "measured")  # weakest first
PREFILL_BATCH = 512  # llama-bench's pp512, one llama.cpp micro-batch
# llama.cpp's CUDA and Metal backends run batches of up to 8 tokens through matrix-vector
# kernels (memory-bound: each extra stream costs a share of a weight read) and larger ones
# through tiled matrix kernels whose tiles hold 32 tokens (compute at prefill's rate when full)
SMALL_BATCH_MAX = 8  # llama.cpp's largest batch for its matrix-vector kernels (mmvq, mmv)
TILE_TOKENS = 32  # tokens per tile of its matrix kernels (mmq)


def decode_key(device: Device, backend: str, facts: ModelFacts, era: str = "current") -> E.Key:
    return E.Key(device, backend, E.quant_kind(facts.file_type), facts.is_moe, era,
                 decode_covariates(device, PREDICT_AT, facts.is_moe))  # fmt: skip


def decode_covariates(device: Device, date: str, moe: bool = False) -> tuple:
    """Faster memory is harder to saturate: the share falls with the bandwidth. A mixture of
    experts' scattered expert reads have a share of their own per chip generation and device
    (so a device's MoE rows move its dense prediction less)."""
    terms = [("log_bw", "cov", math.log(device.bandwidth_bytes_per_s / 500e9)),
             ("year", "year", years(date))]  # fmt: skip
    if moe:
        terms += [(f"moe:{device.arch or '-'}", "class", 1.0), (f"moe:{device.id}", "device", 1.0)]
    return tuple(terms)


def prefill_covariates(device: Device, backend: str, facts: ModelFacts, date: str) -> tuple:
    """Prefill's continuous terms: the usable peak and the model's size (a bigger matrix fills
    more of a big device), and the build's date, overall and per kind of weights (llama.cpp's
    matrix kernels for K-quants, legacy quants and floats did not grow faster at one pace)."""
    peak = usable_peak(device, backend, facts.is_quantized) or 1e12
    year = years(date)
    return (
        ("log_peak", "cov", math.log(peak / 1e14)),
        ("log_params", "cov", math.log(max(facts.active_params, 1e8) / 8e9)),
        ("year", "year", year),
        (f"year_{E.quant_kind(facts.file_type)}", "year", year),
    )


def matvec_s(
    device: Device, backend: str, facts: ModelFacts, flop_share: dict[str, float]
) -> float:
    """Seconds a decoded token's matrix-vector arithmetic adds where it does not hide under
    the weight stream (the CPU backend; 0 elsewhere)."""
    share = flop_share.get(backend)
    peak = usable_peak(device, backend, facts.is_quantized) if share else None
    return facts.flops_per_token(0) / (share * peak) if share and peak else 0.0


def fixed_per_prompt_token(
    cost: LayerCost, device: Device, facts: ModelFacts, batch_tokens: int
) -> float:
    """A prompt token's share of its micro-batch's per-layer cost, in seconds."""
    return cost.all_layers_s(device, facts) / batch_tokens


REFERENCE_FP32_TFLOPS = 30.0  # the device speed a layer cost's `seconds` is stated for


@dataclass(frozen=True)
class LayerCost:
    """A fixed cost per layer per step on one backend (per decoded token, or per prompt
    micro-batch): kernel launches, the small operations between the matrices,
    synchronisation. `seconds` on a device of
    REFERENCE_FP32_TFLOPS, scaled by (REFERENCE_FP32_TFLOPS / the device's FP32 peak) to the
    `speed_exponent` (where the GPU runs those small kernels, a faster one runs them sooner;
    where the host's encoding of the commands sets the cost, the exponent is 0), and
    `moe_factor` times as much for a mixture-of-experts layer (its router, top-k and
    expert-gathering kernels). Chosen by held-out error (fitting.speed_fit)."""

    seconds: float = 0.0
    speed_exponent: float = 0.0
    moe_factor: float = 1.0

    def all_layers_s(self, device: Device, facts: ModelFacts) -> float:
        """Seconds per step, all layers."""
        if not self.seconds:
            return 0.0
        seconds = self.seconds
        if self.speed_exponent and device.fp32_tflops:
            seconds *= (REFERENCE_FP32_TFLOPS / device.fp32_tflops) ** self.speed_exponent
        if facts.is_moe:
            seconds *= self.moe_factor
        return seconds * facts.n_layers

    def to_json(self) -> list[float]:
        return [self.seconds, self.speed_exponent, self.moe_factor]

    @classmethod
    def from_json(cls, value: float | list[float]) -> LayerCost:
        """From the shipped fit: [seconds, speed exponent, MoE factor] (a bare number: the
        seconds alone, as fits before these terms stored it)."""
        if isinstance(value, (int, float)):
            return cls(float(value))
        return cls(*(float(v) for v in value))


def layer_costs(costs: Mapping[str, LayerCost | float]) -> dict[str, LayerCost]:
    return {b: c if isinstance(c, LayerCost) else LayerCost(float(c)) for b, c in costs.items()}


@dataclass(frozen=True)
class DecodeFit:
    t_layer: dict[str, LayerCost]  # per backend; a bare number is its seconds alone
    ridge: E.RidgeFit
    flop_share: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "t_layer", layer_costs(self.t_layer))

    def share(self, key: E.Key) -> float:
        """The fitted share, not capped at 1: where the backend's layer cost overstates a
        device's, its share takes the difference (DecodeParams.memory_s keeps the ceiling)."""
        return math.exp(self.ridge.log_share(key))

    def layers_s(self, device: Device, backend: str, facts: ModelFacts) -> float:
        """The layers' fixed cost per decoded token, in seconds."""
        cost = self.t_layer.get(backend)
        return cost.all_layers_s(device, facts) if cost else 0.0

    def params(self, device: Device, backend: str, facts: ModelFacts) -> DecodeParams:
        return DecodeParams(self.share(decode_key(device, backend, facts)),
                            self.layers_s(device, backend, facts),
                            matvec_s(device, backend, facts, self.flop_share))  # fmt: skip

    def tps(self, o: Observation) -> float:
        p = self.params(o.device, o.backend, o.facts)
        return 1.0 / (p.memory_s(o.decode_bytes, o.device.bandwidth_bytes_per_s) + p.matvec_s)


@dataclass(frozen=True)
class PrefillFit:
    layer_s: dict[str, LayerCost]  # per layer per micro-batch, per backend (a number: seconds)
    ridge: E.RidgeFit

    def __post_init__(self) -> None:
        object.__setattr__(self, "layer_s", layer_costs(self.layer_s))

    def rate(self, device: Device, backend: str, facts: ModelFacts) -> float | None:
        """FLOP/s prefill's matrix work reaches, the fixed per-layer cost apart (None
        without a peak)."""
        peak = usable_peak(device, backend, facts.is_quantized)
        if not peak:
            return None
        key = E.Key(device, backend, E.quant_kind(facts.file_type), facts.is_moe, "current",
                    prefill_covariates(device, backend, facts, PREDICT_AT))  # fmt: skip
        return min(1.0, math.exp(self.ridge.log_share(key))) * peak

    def tps(self, device: Device, backend: str, facts: ModelFacts, test: TestPoint,
            rate: float | None = None) -> float | None:  # fmt: skip
        """Prompt tokens/s of a test point: each token's FLOPs at the rate (the fit's own
        unless given), at the test's average depth, plus its share of its micro-batch's
        per-layer cost."""
        rate = rate or self.rate(device, backend, facts)
        if not rate:
            return None
        cost = self.layer_s.get(backend, LayerCost())
        fixed = fixed_per_prompt_token(cost, device, facts, test.prompt_batch)
        return 1.0 / (facts.prompt_flops_per_token(test.prefill_depth) / rate + fixed)


@dataclass(frozen=True)
class DecodeParams:
    share: float  # share of the bandwidth streamed (above 1: the layer cost overstated here)
    layers_s: float  # the layers' fixed cost per token, all layers
    matvec_s: float = 0.0  # a CPU's matrix-vector arithmetic per token, beside the stream

    def memory_s(self, nbytes: float, bandwidth: float) -> float:
        """Seconds to stream `nbytes` at the share and pay the layers' fixed cost; never less
        than the bytes take at the full rated bandwidth (the ceiling no fit may cross)."""
        return max(nbytes / (bandwidth * self.share) + self.layers_s, nbytes / bandwidth)

    @property
    def fixed_s(self) -> float:  # beside the bytes: the layers' fixed cost, a CPU's arithmetic
        return self.layers_s + self.matvec_s


@dataclass(frozen=True, eq=False)
class SpeedModel:
    decode_fit: DecodeFit
    prefill_fit: PrefillFit
    observations: tuple[Observation, ...]
    bands: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    transfer: dict[str, float] = field(default_factory=dict)
    # the rate attention's arithmetic runs at, as a share of prefill's FLOP rate (decode deep
    # in the context), and the cost of each extra stream in a small batch, as a share of one
    # step's weight read; per backend, "*" pooled
    attention_share: dict[str, float] = field(default_factory=dict)
    small_batch_cost: dict[str, float] = field(default_factory=dict)
    # how much wider (log half-width, in quadrature) a mixture of experts' band is than a
    # dense model's, decode and prefill (bands.moe_widening)
    moe_widening: float = 0.0
    moe_widening_prefill: float = 0.0
    # the shares of the host's RAM and link a placement over card and RAM reaches
    hybrid: HybridShares = field(default_factory=HybridShares)

    # --- what the data covers ---------------------------------------------------------------
    @cached_property
    def coverage(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """(device, backend) pairs with published rows, and (backend, class) pairs with rows:
        what `basis` reads (computed once per model)."""
        devices = {(o.device.id, o.backend) for o in self.observations}
        classes = {(o.backend, E.efficiency_class(o.device)) for o in self.observations}
        return devices, classes

    def basis(self, device: Device, backend: str) -> str:
        """published | modelled | spec-only | unsupported, for a device on a backend."""
        if backend not in device.backends:
            return "unsupported"
        devices, classes = self.coverage
        if (device.id, backend) in devices:
            return "published"
        if (backend, E.efficiency_class(device)) in classes:
            return "modelled"
        return "spec-only"

    def band(self, kind: str, backend: str, basis: str) -> tuple[float, float]:
        """A dense model's band (bands.band_for); a mixture of experts' is widened."""
        return band_for(self.bands, kind, backend, basis)

    # --- predictions --------------------------------------------------------------------------
    def decode_params(self, device: Device, backend: str, facts: ModelFacts) -> DecodeParams:
        return self.decode_fit.params(device, backend, facts)

    def cpu_share(self) -> float:
        """The share of RAM bandwidth llama.cpp's CPU backend streams (spilled layers)."""
        return min(1.0, math.exp(self.decode_fit.ridge.coef.get("b:cpu", math.log(0.6))))

    def prefill_rate(self, device: Device, backend: str, facts: ModelFacts) -> float | None:
        """FLOP/s prefill's matrix work reaches on this device, None without a peak; never
        below the rate one stream's decode does that work at (a prompt is never read slower
        than its tokens would be written one at a time: a chip whose estimated compute
        understates it, an Arm board's big cores counted alone, still batches no worse)."""
        rate = self.prefill_fit.rate(device, backend, facts)
        if not rate:
            return rate
        one = self.step(device, backend, facts, streams=1, depth=0, compute_rate=None)
        return max(rate, facts.flops_per_token(0) / one.seconds)

    def prefill_tps(
        self, device: Device, backend: str, facts: ModelFacts, test: TestPoint
    ) -> float | None:
        """Prompt tokens/s of a test point (its depth and micro-batch), the per-layer cost
        included."""
        return self.prefill_fit.tps(
            device, backend, facts, test, rate=self.prefill_rate(device, backend, facts)
        )

    def published(self, device: Device, backend: str, facts: ModelFacts) -> Published | None:
        """The shipped published figure nearest this model on this device and backend: the
        same model and quantisation first, then the same kind of weights and a near size."""
        rows = [o for o in self.observations if o.device.id == device.id and o.backend == backend]
        if not rows:
            return None

        def distance(o: Observation) -> tuple[float, ...]:
            same_file = o.shape_id == facts.shape_id and o.quant == facts.file_type
            return (
                0.0 if same_file else 1.0,
                0.0 if E.quant_kind(o.quant) == E.quant_kind(facts.file_type) else 1.0,
                0.0 if o.moe == facts.is_moe else 1.0,
                0.0 if o.era == "current" else 1.0,
                abs(math.log(max(o.weights_bytes, 1) / max(facts.weights_bytes, 1))),
                0.0 if o.tg_tps else 1.0,
            )

        o = min(rows, key=distance)
        name = o.facts.name or o.shape_id
        return Published(o.tg_tps, o.pp_tps, name, o.quant, o.build, o.date, o.source_url)

    def builds(self, device: Device, backend: str) -> str:
        """In words, which builds a device's published data comes from."""
        rows = [o for o in self.observations if o.device.id == device.id and o.backend == backend]
        builds = sorted({o.build for o in rows if o.build and o.build != "not stated"})
        dates = sorted({o.date[:7] for o in rows if o.date})
        if builds:
            shown = ", ".join(builds[:3]) + (" ..." if len(builds) > 3 else "")
            return f"llama.cpp build {shown}"
        if dates:
            return f"results from {dates[0]}" + (
                f" to {dates[-1]}" if dates[-1] != dates[0] else ""
            )
        return "results without a stated build or date"

    def step(
        self,
        device: Device,
        backend: str,
        facts: ModelFacts,
        *,
        streams: int,
        depth: int,
        compute_rate: float | None,
        cache_type: str = "f16",
        tg_ratio: float = 1.0,
        on_device: float = 1.0,
        spill_bandwidth: float | None = None,
    ) -> Step:
        """One decode step of `streams` streams at `depth` tokens of context.

        Memory: the weights the step touches (MoE: the experts any stream was routed to) and
        every stream's KV cache, at the device's share of its bandwidth (the user's measured
        ratio applied), the spilled part from RAM at the CPU backend's share. Compute that does
        not hide under it: attention's arithmetic over the cache, and the extra streams' matrix
        work (matrix-vector kernels up to 8 streams: each further column a share of a matrix's
        read, each further stream's experts read again; tiled kernels at prefill's rate above).
        """
        p = self.decode_params(device, backend, facts)
        weights = step_weight_bytes(facts, streams)
        kv = facts.kv_cache_bytes(depth, cache_type)
        step_bytes = weights + streams * kv
        bandwidth = device.bandwidth_bytes_per_s * min(p.share, 1.0)  # extra streams' rereads
        memory = p.memory_s(step_bytes * on_device, device.bandwidth_bytes_per_s)
        compute = p.matvec_s / tg_ratio
        if on_device < 1.0 and spill_bandwidth:
            memory += step_bytes * (1.0 - on_device) / (spill_bandwidth * self.cpu_share())
        memory /= tg_ratio
        if compute_rate:
            attention = facts.flops_per_token(depth) - facts.flops_per_token(0)
            # decode's own kernels: the measured decode ratio scales them with the bytes
            attention_rate = compute_rate * self.share_for(backend, "attention")
            compute += streams * attention / attention_rate / tg_ratio
        if streams > 1:
            cost = self.share_for(backend, "small_batch")

            def vector(n: int) -> float:  # matrix-vector kernels' extra time for n streams
                multiplied, reread = extra_stream_weight_bytes(facts, n)
                return (cost * multiplied + reread) / bandwidth / tg_ratio

            matrix_vector = vector(min(streams, SMALL_BATCH_MAX))
            if streams <= SMALL_BATCH_MAX or not compute_rate:
                compute += matrix_vector
            else:
                # tiled kernels take over above 8 streams, where llama.cpp's thresholds put
                # them: no slower than more matrix-vector work would be (a mixture of experts'
                # few tokens per expert fill few tiles), and a step of more streams never takes
                # less time than one of 8 did, so per-user speed never rises with the batch
                fill = streams / (TILE_TOKENS * math.ceil(streams / TILE_TOKENS))
                tiled = (streams - 1) * facts.flops_per_token(0) / (compute_rate * fill)
                compute += max(min(tiled, vector(streams)), matrix_vector)
            if compute_rate:
                # and no step of several streams multiplies its tokens faster than a full
                # batch does: a CPU's many users never outrun its own prefill
                floor = streams * facts.flops_per_token(0) / compute_rate
                if memory + compute < floor:
                    return Step(memory, floor - memory, step_bytes, compute_bound=True)
        return Step(memory, compute, step_bytes)

    # --- a model placed over a card and system RAM (physics/placement) ---------------------
    def ram_stream_rate(self, host: Host) -> float:
        """Bytes/s llama.cpp's CPU backend streams weights from this host's RAM beside a card:
        a measured read stream (the app's probe) or a rated (or assumed) figure, each at its
        share, fitted on published hybrid results (model/hybrid_shares.py)."""
        if host.bandwidth_basis == "measured":
            share = self.hybrid.measured_ram
        else:
            share = self.hybrid.rated_ram
        return host.ram_bandwidth_bytes_per_s * share

    def link_rate(self, host: Host, device: Device | None = None) -> float:
        """Bytes/s a prompt's copy of RAM-resident weights to the card reaches: the rated rate
        of the link the card gets in this host (the lesser generation and lanes of the two,
        physics/placement.card_link_bytes_per_s) at its fitted share."""
        rated = card_link_bytes_per_s(host, device) if device else host_link_bytes_per_s(host)
        return rated * self.hybrid.link

    def placed_step(
        self,
        device: Device,
        backend: str,
        facts: ModelFacts,
        r: Residency,
        *,
        streams: int,
        depth: int,
        compute_rate: float | None,
        ram_rate: float,
        cpu_flops_per_s: float | None = None,
        cache_type: str = "f16",
        tg_ratio: float = 1.0,
    ) -> Step:
        """One decode step of a model placed over the card(s) and system RAM: each side reads
        what it holds at its own speed, one after the other (a token passes the layers in
        turn), no weight crossing the bus; the KV cache follows its layers; each layer whose
        experts stay in RAM adds a round trip of its activations; the CPU multiplies its
        weights at the host CPU's rate where that is known."""
        full = self.step(device, backend, facts, streams=streams, depth=depth,
                         compute_rate=compute_rate, cache_type=cache_type)  # fmt: skip
        p = self.decode_params(device, backend, facts)
        kv = facts.kv_cache_bytes(depth, cache_type) * streams
        gpu_bytes = r.read_bytes("gpu", streams) + kv * r.kv_gpu_share
        cpu_bytes = r.read_bytes("cpu", streams) + kv * (1 - r.kv_gpu_share)
        # every layer keeps its fixed cost wherever it runs: a layer moved to the CPU still
        # launches its operations, each a synchronisation of the CPU's threads
        gpu = p.memory_s(gpu_bytes, device.bandwidth_bytes_per_s)
        cpu = cpu_bytes / ram_rate
        trips = r.cpu_expert_layers + (1 if r.cpu_other_bytes else 0)
        memory = (gpu + cpu + HYBRID_ROUND_TRIP_S * trips) / tg_ratio
        params = r.gpu_params_read + r.cpu_params_read
        compute = full.compute_s * (r.gpu_params_read / params if params else 1.0)
        if cpu_flops_per_s:
            compute += 2.0 * streams * r.cpu_params_read / cpu_flops_per_s / tg_ratio
        return Step(memory, compute, gpu_bytes + cpu_bytes)

    def placed_prefill_tps(
        self,
        device: Device,
        backend: str,
        facts: ModelFacts,
        r: Residency,
        test: TestPoint,
        *,
        link_rate: float,
        cpu_flops_per_s: float | None = None,
        rate: float | None = None,
    ) -> float | None:
        """Prompt tokens/s of a placed model: a micro-batch of 32 tokens or more runs on the
        card, copying the RAM-resident weights it uses over the host link (op offload); a
        smaller one multiplies the CPU's part on the CPU."""
        rate = rate or self.prefill_rate(device, backend, facts)
        on_card = self.prefill_fit.tps(device, backend, facts, test, rate=rate)
        if not on_card or not r.hybrid:
            return on_card
        tokens = test.prompt_batch
        seconds = tokens / on_card
        copy = prompt_copy_bytes(r, tokens)
        if copy:
            seconds += copy / link_rate
        elif cpu_flops_per_s:
            seconds += 2.0 * tokens * r.cpu_params_read / cpu_flops_per_s
        return tokens / seconds

    def share_for(self, backend: str, what: str) -> float:
        table = self.attention_share if what == "attention" else self.small_batch_cost
        default = DEFAULT_ATTENTION_SHARE if what == "attention" else DEFAULT_SMALL_BATCH_COST
        return table.get(backend, table.get("*", default))


DEFAULT_ATTENTION_SHARE = 0.5  # before any depth data is loaded
# a layer whose experts stay in RAM sends its activations to the CPU and back once a token
# (two small copies and a synchronisation)
HYBRID_ROUND_TRIP_S = 30e-6
DEFAULT_SMALL_BATCH_COST = 0.25  # before any batched series is loaded


@dataclass(frozen=True)
class Step:
    memory_s: float
    compute_s: float
    bytes: float
    compute_bound: bool = False  # the tokens' FLOPs at a full batch's rate set the step

    @property
    def seconds(self) -> float:
        return self.memory_s + self.compute_s

    @property
    def limited_by(self) -> str:
        return "compute" if self.compute_bound or self.compute_s > self.memory_s else "bandwidth"
