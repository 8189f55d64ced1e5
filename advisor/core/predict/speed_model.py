"""The speed model, fitted on published llama-bench results (observations.py).

Decode streams the weights and the KV cache at a share of the memory bandwidth, plus a fixed
cost per layer per token (kernel launches and synchronisation), per backend, and on a CPU the
matrix-vector arithmetic itself (the cores that stream the weights also multiply them):

    1 / tokens_per_s = bytes_per_token / (bandwidth x share) + t_layer x n_layers
                       [+ flops_per_token / (usable_flops x flop_share), CPU]

Prefill reaches a share of the usable compute (the catalogue's backend-path table: the
precision llama.cpp's kernels really run in for that device, backend and weights), plus a fixed
cost per layer per 512-token batch (the launches and small operations between the matrices,
which no device speed hides: what keeps a 0.5B model on a big GPU from a compute-bound rate):

    512 / tokens_per_s = 512 x flops_per_token / (usable_flops x share) + t_batch x n_layers

Both shares come from a hierarchical model (efficiency.py): a device with published results
has its own term, shrunk toward its class, shrunk toward its backend; rows carry their build
era and the prediction is for today's llama.cpp.

What the fit cannot see it says: every prediction has a basis (`published` where the device
has shipped results on that backend, `modelled` where only its class has, `spec-only` where
neither has, `unsupported` for a backend the device does not run), and a band from the
held-out errors of that basis on that backend: leave-one-device-out for `modelled`, leave one
source out for `published` (another source measuring the same device).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from advisor.core.catalogue.backend_paths import usable_compute
from advisor.core.catalogue.device import Device
from advisor.core.model.facts import ModelFacts
from advisor.core.predict import ceilings
from advisor.core.predict import efficiency as E
from advisor.core.predict.bands import band_for
from advisor.core.predict.observations import PREDICT_AT, Observation, years
from advisor.core.predict.projection_types import Published

log = logging.getLogger(__name__)

BASES = ("unsupported", "spec-only", "modelled", "published", "measured")  # weakest first
# the penalties the held-out search chose (efficiency.choose_penalties over rows of each kind)
DECODE_PENALTIES = {**E.DEFAULT_PENALTIES}
PREFILL_PENALTIES = {
    **E.DEFAULT_PENALTIES, "class": 2.0, "device": 1.0, "quant": 2.0, "cov": 4.0, "year": 4.0,
}  # fmt: skip
# seconds per layer per decoded token, per backend, chosen by held-out decode error over
# T_LAYER_GRID_US (speed_fit.search_decode_layer; `calibration_holdout.py --search-decode`
# reruns it): the fit's own error cannot choose it, a device term absorbs what it does not (on
# the shipped rows CUDA's 40 and 60 us fitted within 0.01%, and held out 13.3% against 12.2%
# median for a device without data); the CPU backend launches no kernels: none there
T_LAYER_S = {"cuda": 80e-6, "metal": 170e-6, "rocm": 130e-6, "sycl": 220e-6, "vulkan": 60e-6}
T_LAYER_GRID_US = (0, 10, 20, 40, 60, 80, 100, 130, 170, 220, 300)
# llama.cpp's CPU backend dequantises and multiplies on the cores that stream the weights, and
# that arithmetic does not hide under the stream as a GPU's does: a CPU's decode step adds
# its FLOPs at this share of the usable peak (the int8 estimate where no figure is published),
# chosen by held-out error over DECODE_FLOP_SHARE_GRID (speed_fit.search_decode_flop_share,
# `calibration_holdout.py --search-decode`; None: no such term). A 4-core N100 then spends
# 1.3x as long multiplying a Llama 3.1 8B token as reading it, a 16-core 7950X a fifth as long
DECODE_FLOP_SHARE: dict[str, float] = {"cpu": 0.2}
DECODE_FLOP_SHARE_GRID = (None, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0)
PREFILL_BATCH = 512  # llama-bench's pp512, one llama.cpp micro-batch
# seconds per layer per 512-token batch, per backend, chosen by held-out prefill error over
# PREFILL_LAYER_GRID_MS (speed_fit.search_prefill_layer; `calibration_holdout.py
# --search-prefill` reruns it); the grid stops at 1 ms, several times what a layer's kernel
# launches cost, so that the term stays a fixed cost and does not stand in for a model-size
# effect (the CPU backend launches no kernels: none there)
PREFILL_LAYER_S = {"cuda": 0.3e-3, "metal": 0.0, "rocm": 1.0e-3, "sycl": 0.1e-3, "vulkan": 0.7e-3}
PREFILL_LAYER_GRID_MS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
CONFIDENCE_WEIGHT = {"high": 1.0, "medium": 0.7, "low": 0.4}
# the share a backend without any data is assumed to reach (the pooled backends' median)
CROSS_BACKEND_CAP = 0.13  # a measurement on another backend moves a prediction at most r^0.13
# llama.cpp's CUDA and Metal backends run batches of up to 8 tokens through matrix-vector
# kernels (memory-bound: each extra stream costs a share of a weight read) and larger ones
# through tiled matrix kernels whose tiles hold 32 tokens (compute at prefill's rate when full)
SMALL_BATCH_MAX = 8
TILE_TOKENS = 32


def step_weights(facts: ModelFacts, streams: int = 1) -> float:
    """Weight bytes a decode step of `streams` streams reads, as the model counts them:
    `ceilings.weights_read_per_step` without the token table, of which a token looks one row
    up (the ceilings the app shows count every active weight, as DESIGN.md does)."""
    return ceilings.weights_read_per_step(*_weights(facts), streams)


def extra_stream_bytes(facts: ModelFacts, streams: int) -> tuple[float, float]:
    """`ceilings.extra_stream_bytes` as the model counts weights: (multiplied, read) again."""
    return ceilings.extra_stream_bytes(*_weights(facts), streams)


def _weights(facts: ModelFacts) -> tuple[float, float, int, int]:
    return (facts.weights_bytes - facts.lookup_bytes, facts.step_weights_bytes,
            facts.n_expert, facts.n_expert_used)  # fmt: skip


def _key(device: Device, backend: str, facts: ModelFacts, era: str = "current") -> E.Key:
    return E.Key(device, backend, E.quant_kind(facts.file_type), facts.is_moe, era,
                 _decode_covariates(device, PREDICT_AT))  # fmt: skip


def _decode_covariates(device: Device, date: str) -> tuple:
    """Faster memory is harder to saturate: the share falls with the bandwidth."""
    return (
        ("log_bw", "cov", math.log(device.bandwidth_bytes_per_s / 500e9)),
        ("year", "year", years(date)),
    )


def _prefill_covariates(device: Device, backend: str, facts: ModelFacts, date: str) -> tuple:
    peak = usable_peak(device, backend, facts.is_quantized) or 1e12
    return (
        ("log_peak", "cov", math.log(peak / 1e14)),
        ("log_params", "cov", math.log(max(facts.active_params, 1e8) / 8e9)),
        ("year", "year", years(date)),
    )


def usable_peak(device: Device, backend: str, quantized: bool) -> float | None:
    """FLOP/s llama.cpp's prefill can use on this device and backend (backend-path table),
    the device's own peak where the table has no figure for it."""
    usable = usable_compute(device, backend, quantized)
    if usable.flops_per_s:
        return usable.flops_per_s
    return device.compute_peak_for(quantized)


ADDED_WEIGHT = 0.5


def _weight(o: Observation) -> float:
    """How much a row counts: by the confidence its transcription was given, the reference
    set (curated and cross-checked) above rows gathered later."""
    return CONFIDENCE_WEIGHT.get(o.confidence, 0.7) * (1.0 if o.reference_set else ADDED_WEIGHT)


def _matvec_s(
    device: Device, backend: str, facts: ModelFacts, flop_share: dict[str, float]
) -> float:
    """Seconds a decoded token's matrix-vector arithmetic adds where it does not hide under
    the weight stream (the CPU backend; 0 elsewhere)."""
    share = flop_share.get(backend)
    peak = usable_peak(device, backend, facts.is_quantized) if share else None
    return facts.flops_per_token(0) / (share * peak) if share and peak else 0.0


def _decode_row(o: Observation, t_layer: float, flop_share: dict[str, float]) -> E.Row | None:
    if not o.tg_tps:
        return None
    seconds = (1.0 / o.tg_tps - t_layer * o.facts.n_layers
               - _matvec_s(o.device, o.backend, o.facts, flop_share))  # fmt: skip
    share = o.decode_bytes / (o.device.bandwidth_bytes_per_s * max(seconds, 0.3 / o.tg_tps))
    weight = _weight(o)
    key = E.Key(o.device, o.backend, o.quant_kind, o.moe, o.era,
                _decode_covariates(o.device, o.date), o.source_url)  # fmt: skip
    return E.Row(key, math.log(share), o.source_url, weight)


def _fixed_per_token(layer_s: float, facts: ModelFacts) -> float:
    """A prompt token's share of its batch's per-layer cost, in seconds."""
    return layer_s * facts.n_layers / PREFILL_BATCH


def _prefill_row(o: Observation, layer_s: float) -> E.Row | None:
    peak = usable_peak(o.device, o.backend, o.facts.is_quantized)
    if not o.pp_tps or not peak:
        return None
    seconds = 1.0 / o.pp_tps - _fixed_per_token(layer_s, o.facts)
    share = o.prefill_flops_per_token / (peak * max(seconds, 0.3 / o.pp_tps))
    covariates = _prefill_covariates(o.device, o.backend, o.facts, o.date)
    key = E.Key(o.device, o.backend, o.quant_kind, o.moe, o.era, covariates, o.source_url)
    return E.Row(key, math.log(share), o.source_url, _weight(o))


@dataclass(frozen=True)
class DecodeFit:
    t_layer: dict[str, float]  # seconds per layer per token, per backend
    ridge: E.RidgeFit
    flop_share: dict[str, float] = field(default_factory=lambda: dict(DECODE_FLOP_SHARE))

    def share(self, key: E.Key) -> float:
        return min(1.0, math.exp(self.ridge.log_share(key)))

    def tps(self, o: Observation) -> float:
        key = E.Key(o.device, o.backend, o.quant_kind, o.moe, "current",
                    _decode_covariates(o.device, PREDICT_AT))  # fmt: skip
        seconds = o.decode_bytes / (o.device.bandwidth_bytes_per_s * self.share(key))
        fixed = self.t_layer.get(o.backend, 0.0) * o.facts.n_layers
        return 1.0 / (seconds + fixed + _matvec_s(o.device, o.backend, o.facts, self.flop_share))


def fit_decode(
    obs: Sequence[Observation],
    penalties: dict[str, float] = DECODE_PENALTIES,
    t_layer: dict[str, float] | None = None,
    flop_share: dict[str, float] | None = None,
) -> DecodeFit:
    """The decode shares, with the per-layer cost and the CPU's arithmetic share given or the
    shipped ones."""
    t_layer = dict(T_LAYER_S) if t_layer is None else t_layer
    flop_share = dict(DECODE_FLOP_SHARE) if flop_share is None else flop_share
    rows = [r for o in obs if (r := _decode_row(o, t_layer.get(o.backend, 0.0), flop_share))]
    ridge = E.fit_ridge([r.key for r in rows], [r.y for r in rows], penalties,
                        [r.weight for r in rows])  # fmt: skip
    return DecodeFit(t_layer, ridge, flop_share)


@dataclass(frozen=True)
class PrefillFit:
    layer_s: dict[str, float]  # seconds per layer per 512-token batch, per backend
    ridge: E.RidgeFit

    def rate(self, device: Device, backend: str, facts: ModelFacts) -> float | None:
        """FLOP/s prefill's matrix work reaches, the fixed per-layer cost apart (None
        without a peak)."""
        peak = usable_peak(device, backend, facts.is_quantized)
        if not peak:
            return None
        key = E.Key(device, backend, E.quant_kind(facts.file_type), facts.is_moe, "current",
                    _prefill_covariates(device, backend, facts, PREDICT_AT))  # fmt: skip
        return min(1.0, math.exp(self.ridge.log_share(key))) * peak

    def tps(
        self,
        device: Device,
        backend: str,
        facts: ModelFacts,
        depth: int,
        rate: float | None = None,
    ) -> float | None:
        """Prompt tokens/s with `depth` tokens already in the cache: each token's FLOPs at
        the rate (the fit's own unless given), plus its share of each 512-token batch's
        per-layer cost."""
        rate = rate or self.rate(device, backend, facts)
        if not rate:
            return None
        fixed = _fixed_per_token(self.layer_s.get(backend, 0.0), facts)
        return 1.0 / (facts.prompt_flops_per_token(depth) / rate + fixed)


def fit_prefill(
    obs: Sequence[Observation],
    penalties: dict[str, float] = PREFILL_PENALTIES,
    layer_s: dict[str, float] | None = None,
) -> PrefillFit:
    layer_s = PREFILL_LAYER_S if layer_s is None else layer_s
    rows = [r for o in obs if (r := _prefill_row(o, layer_s.get(o.backend, 0.0)))]
    return PrefillFit(dict(layer_s), E.fit_ridge([r.key for r in rows], [r.y for r in rows],
                                                 penalties, [r.weight for r in rows]))  # fmt: skip


# -------------------------------------------------------------------------------------------
# the model the app uses
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodeParams:
    share: float  # share of the bandwidth streamed
    t_layer_s: float  # fixed cost per layer per token
    matvec_s: float = 0.0  # a CPU's matrix-vector arithmetic per token, beside the stream

    def fixed_s(self, facts: ModelFacts) -> float:
        """Seconds per token beside the bytes: the layers' fixed cost, a CPU's arithmetic."""
        return self.t_layer_s * facts.n_layers + self.matvec_s


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

    # --- what the data covers ---------------------------------------------------------------
    @property
    def _covered(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[str]]:
        devices = {(o.device.id, o.backend) for o in self.observations}
        classes = {(o.backend, E.efficiency_class(o.device)) for o in self.observations}
        return devices, classes, {o.backend for o in self.observations}

    def basis(self, device: Device, backend: str) -> str:
        """published | modelled | spec-only | unsupported, for a device on a backend."""
        if backend not in device.backends:
            return "unsupported"
        devices, classes, _ = _coverage(self)
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
        return DecodeParams(
            self.decode_fit.share(_key(device, backend, facts)),
            self.decode_fit.t_layer.get(backend, 0.0),
            _matvec_s(device, backend, facts, self.decode_fit.flop_share),
        )

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
        self, device: Device, backend: str, facts: ModelFacts, depth: int
    ) -> float | None:
        """Prompt tokens/s at `depth` tokens of context, the per-layer cost included."""
        return self.prefill_fit.tps(
            device, backend, facts, depth, rate=self.prefill_rate(device, backend, facts)
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
        weights = step_weights(facts, streams)
        kv = facts.kv_cache_bytes(depth, cache_type)
        step_bytes = weights + streams * kv
        bandwidth = device.bandwidth_bytes_per_s * p.share
        memory = step_bytes * on_device / bandwidth + p.t_layer_s * facts.n_layers
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
                multiplied, reread = extra_stream_bytes(facts, n)
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

    def share_for(self, backend: str, what: str) -> float:
        table = self.attention_share if what == "attention" else self.small_batch_cost
        default = DEFAULT_ATTENTION_SHARE if what == "attention" else DEFAULT_SMALL_BATCH_COST
        return table.get(backend, table.get("*", default))


DEFAULT_ATTENTION_SHARE = 0.5  # before any depth data is loaded
DEFAULT_SMALL_BATCH_COST = 0.25


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


@cache
def _coverage(model: SpeedModel) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[str]]:
    return model._covered
