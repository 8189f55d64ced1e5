"""The advisor: what a catalogued device would do for *your* model and workload.

For each target device this predicts time to first token, decode speed, request time and
whether the model and its KV cache fit, from the calibrated speed model (speed_model.py) and,
when the user has measured their own machine, from their measured efficiency:

- the ratio measured / predicted on the user's device scales predictions for targets of the
  same backend class fully, and for other classes by its square root (half in log space);
- every number carries its basis: `measured` (the user's own device), `calibrated` (the fitted
  model, plus the user's ratio where there is one) or `spec-only` (a backend without published
  measurements: default efficiencies and a wide band), and a low/high band;
- several identical cards split the layers as llama.cpp does: memory adds up, but a token
  passes the cards one after another, so single-stream decode does not speed up;
- when weights + KV cache do not fit, the layers that spill run from system RAM at its
  bandwidth (`partial`, and the note says so); what fits nowhere is `no`, never a number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.infra.errors import InputError
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import memory_need
from advisor.core.predict import ceilings
from advisor.core.predict.memory_fit import Fit, fit_on, memory_option
from advisor.core.predict.reference import Reference
from advisor.core.predict.speed_model import SpeedModel, default_model
from advisor.core.predict.workloads import Workload, custom_workload

PCIE_BYTES_PER_S = 25e9  # spilled weights cross PCIe 4.0 x16 once per prompt batch
HOP_OVERHEAD_S = 0.0003  # per extra card per token when layers are split across cards
CROSS_CLASS_WEIGHT = 0.5  # how much of the user's measured ratio carries to another backend
SAME_DEVICE_BAND = (0.92, 1.08)
BASES = ("spec-only", "calibrated", "measured")  # weakest first


def basis_rank(basis: str) -> int:
    """Order of the bases, weakest first (for "the weakest basis a verdict rests on")."""
    return BASES.index(basis) if basis in BASES else -1


class ProjectionError(InputError):
    """A projection that cannot be made (e.g. a backend the device cannot run)."""


@dataclass(frozen=True)
class Target:
    device: Device
    count: int = 1
    backend: str | None = None
    memory_gb: float | None = None  # one memory option of the device; None: the smallest that fits


@dataclass(frozen=True)
class Projection:
    """One device's predicted performance for one model and workload."""

    device: str
    device_id: str
    count: int
    backend: str
    fits: str  # "yes" | "partial" | "no"
    memory_gb: float
    memory_needed_bytes: float
    offloaded_share: float  # share of the bytes on the device (1.0 when it fits)
    basis: str  # "measured" | "calibrated" | "spec-only"
    decode_tps: float | None = None
    decode_tps_low: float | None = None
    decode_tps_high: float | None = None
    prefill_tps: float | None = None
    prefill_tps_low: float | None = None
    prefill_tps_high: float | None = None
    decode_ceiling_tps: float | None = None
    prefill_ceiling_tps: float | None = None
    per_user_tps: float | None = None
    aggregate_tps: float | None = None
    ttft_s: float | None = None
    request_s: float | None = None
    wait_per_day_s: float | None = None
    decode_limited_by: str = ""
    price_usd: float | None = None
    bandwidth_bytes_per_s: float = 0.0
    peak_flops_per_s: float | None = None
    workload: str = ""
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = list(self.notes)
        return d


# -------------------------------------------------------------------------------------------
# the user's measurement: measured / predicted on their own device
# -------------------------------------------------------------------------------------------


@dataclass
class _Ratios:
    tg: float = 1.0
    pp: float = 1.0
    backend: str | None = None
    device_id: str | None = None
    # seconds per byte of KV cache beyond what bandwidth and the FLOP model predict, measured
    # on the reference device; it does not carry to other devices
    kv_seconds_per_byte: float = 0.0


def measured_ratios(
    model: SpeedModel, facts: ModelFacts, ref: Reference | None, host: Host | None = None
) -> _Ratios:
    """Measured / predicted on the user's own device, for decode and prefill. The prediction
    is `project`'s own (spilled layers included), for the run's model and KV cache type."""
    if ref is None:
        return _Ratios()
    r = _Ratios(backend=ref.backend, device_id=ref.device.id)
    facts = ref.facts or facts
    host = host or Host(ram_bytes=1e15, ram_bandwidth_bytes_per_s=ref.device.bandwidth_bytes_per_s)
    peak = ref.device.compute_peak_for(facts.is_quantized)
    if ref.pp_tps and peak:
        # the same peak `project` uses for this device, so a re-projection of the user's own
        # machine returns what was measured
        flops = facts.flops_per_token(ref.n_prompt // 2)
        predicted = model.prefill_tps(ref.backend, ref.device, peak, flops)
        r.pp = ref.pp_tps / predicted
    if ref.tg_tps:
        shallow = _unscaled_decode(model, facts, ref, ref.tg_depth, host)
        if shallow:
            r.tg = ref.tg_tps * shallow[0]
        if ref.deep_tg_tps and ref.deep_tg_depth > ref.tg_depth:
            deep = _unscaled_decode(model, facts, ref, ref.deep_tg_depth, host)
            if shallow and deep:
                _fit_depth(ref, shallow, deep, r)
    return r


def _unscaled_decode(
    model: SpeedModel, facts: ModelFacts, ref: Reference, depth: int, host: Host
) -> tuple[float, float] | None:
    """(predicted seconds per token, KV bytes per token) for a decode after `depth` tokens on
    the reference device, before any decode ratio: `project` with the prefill ratio only."""
    pp_only = replace(ref, tg_tps=None, deep_tg_tps=None, deep_tg_depth=0)
    workload = custom_workload(0, ref.n_gen, history_tokens=depth)
    p = project(
        facts,
        Target(ref.device, backend=ref.backend),
        workload,
        host=host,
        reference=pp_only,
        model=model,
        cache_type=ref.cache_type,
    )
    if not p.decode_tps:
        return None
    return 1.0 / p.decode_tps, facts.kv_cache_bytes(workload.decode_depth_tokens(), ref.cache_type)


def _fit_depth(
    ref: Reference, shallow: tuple[float, float], deep: tuple[float, float], r: _Ratios
) -> None:
    """Two decode measurements, shallow and deep, fix two unknowns: the share of the
    predicted speed this device reaches (the ratio) and a cost per byte of KV cache beyond
    reading it (attention's own arithmetic: on CPUs several times the cost of the bytes).

        1/tps(depth) = predicted_seconds(depth) / ratio + cost x kv_bytes(depth)
    """
    (a0, k0), (a1, k1) = shallow, deep
    if not ref.tg_tps or not ref.deep_tg_tps:
        return
    t0, t1 = 1.0 / ref.tg_tps, 1.0 / ref.deep_tg_tps
    det = a0 * k1 - a1 * k0
    if det <= 0:
        return
    inverse_ratio = (t0 * k1 - t1 * k0) / det
    cost = (a0 * t1 - a1 * t0) / det
    if inverse_ratio > 0 and cost > 0:  # else the deep run shows nothing beyond the bytes
        r.tg, r.kv_seconds_per_byte = 1.0 / inverse_ratio, cost


def _same_model(measured: ModelFacts | None, projected: ModelFacts) -> bool:
    """Was the run made with this model (None: the reference did not say, so it was)?"""
    if measured is None or measured is projected:
        return True

    # not the name: a built-in shape and the random-weight file written from it differ there
    def key(f: ModelFacts) -> tuple[Any, ...]:
        return (f.architecture, f.n_params, f.weights_bytes, f.n_layers)

    return key(measured) == key(projected)


# a comparison projects one reference onto ~200 devices: its ratios are computed once
_ratio_cache: list[tuple[tuple[Any, ...], _Ratios]] = []


def _cached_ratios(
    model: SpeedModel, facts: ModelFacts, reference: Reference | None, host: Host
) -> _Ratios:
    if reference is None:
        return _Ratios()
    key = (model, facts, reference, host)
    for cached_key, ratios in _ratio_cache:
        if all(a is b for a, b in zip(cached_key, key, strict=True)):
            return ratios
    ratios = measured_ratios(model, facts, reference, host)
    _ratio_cache[:] = [(key, ratios)]
    return ratios


def _carry(ratio: float, same_class: bool) -> float:
    return ratio if same_class else ratio**CROSS_CLASS_WEIGHT


# -------------------------------------------------------------------------------------------
# the projection
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setup:
    """What a projection knows before it predicts: the device, its memory and the fit."""

    facts: ModelFacts
    device: Device
    count: int
    backend: str
    workload: Workload
    streams: int
    fit: Fit
    peak: float
    ratios: _Ratios
    cache_type: str

    @property
    def same_class(self) -> bool:
        return self.ratios.backend == self.backend

    @property
    def own_device(self) -> bool:
        """Is this the device (and backend) the user measured, as one card?"""
        return self.ratios.device_id == self.device.id and self.same_class and self.count == 1


def project(
    facts: ModelFacts,
    target: Target,
    workload: Workload,
    *,
    host: Host,
    reference: Reference | None = None,
    model: SpeedModel | None = None,
    cache_type: str = "f16",
) -> Projection:
    """Predict one target device's performance for a model and a workload."""
    model = model or default_model()
    device, count = target.device, max(1, target.count)
    backend = (target.backend or device.usual_backend).lower()
    notes: list[str] = []
    if backend not in device.backends:
        notes.append(
            f"{device.name} is not usually run with {backend}; the prediction assumes it works."
        )
    streams = max(1, workload.concurrency)
    need = memory_need(facts, workload.context_tokens(), streams, cache_type).total_bytes
    memory_gb = memory_option(device, need, count, target.memory_gb)
    fit = fit_on(device, count, need, memory_gb, host, target.memory_gb is not None)
    peak = device.compute_peak_for(facts.is_quantized) or 0.0
    base: dict[str, Any] = dict(
        device=device.name + (f" x{count}" if count > 1 else ""),
        device_id=device.id,
        count=count,
        backend=backend,
        memory_gb=memory_gb,
        memory_needed_bytes=need,
        price_usd=(device.launch_price_usd * count) if device.launch_price_usd else None,
        bandwidth_bytes_per_s=device.bandwidth_bytes_per_s,
        peak_flops_per_s=peak or None,
        workload=workload.id,
    )
    if fit.note:
        notes.append(fit.note)
    if fit.fits == "no":
        return Projection(
            fits="no", offloaded_share=0.0, basis="spec-only", notes=tuple(notes), **base
        )
    ratios = _cached_ratios(model, facts, reference, host)
    setup = _Setup(facts, device, count, backend, workload, streams, fit, peak, ratios, cache_type)
    prefill_tps, flops_prefill = _prefill(setup, model)
    decode = _decode(setup, model, prefill_tps, flops_prefill)
    basis, band_tg, band_pp = _basis(setup, model, reference, notes)
    if count > 1:
        notes.append(
            f"{count} cards split the layers: memory adds up, but each token passes "
            "the cards in turn, so one stream decodes no faster than on one card."
        )
    return _assemble(
        setup, base, notes, basis, band_tg, band_pp, prefill_tps, flops_prefill, decode
    )


def _prefill(s: _Setup, model: SpeedModel) -> tuple[float | None, float]:
    """(prefill tokens/s at the workload's prompt depth, FLOPs per prompt token)."""
    flops_prefill = s.facts.flops_per_token(s.workload.prefill_depth_tokens())
    if not s.peak:
        return None, flops_prefill
    prefill_tps = model.prefill_tps(s.backend, s.device, s.peak, flops_prefill) * _carry(
        s.ratios.pp, s.same_class
    )
    if s.fit.share_on_device < 1.0 and not s.device.unified_memory:
        # llama.cpp streams the spilled weights to the GPU for each prompt batch
        per_batch = (1 - s.fit.share_on_device) * s.facts.weights_bytes / PCIE_BYTES_PER_S
        prefill_tps = 1.0 / (1.0 / prefill_tps + per_batch / 512)
    return prefill_tps, flops_prefill


@dataclass(frozen=True)
class _Decode:
    decode_tps: float
    per_user_tps: float
    aggregate_tps: float
    limited_by: str
    kv_per_stream: float


def _decode(
    s: _Setup, model: SpeedModel, prefill_tps: float | None, flops_prefill: float
) -> _Decode:
    """Decode at the workload's depth: one stream, and all of the workload's streams."""
    facts, share = s.facts, s.fit.share_on_device
    depth = s.workload.decode_depth_tokens()
    kv_per_stream = facts.kv_cache_bytes(depth, s.cache_type)
    attention_flops = facts.flops_per_token(depth) - 2.0 * facts.active_params
    params = model.decode_params(s.backend)
    bandwidth = s.device.bandwidth_bytes_per_s
    # the FLOP rate this device reaches on real matrix work (what prefill achieves)
    flops_rate = prefill_tps * flops_prefill if prefill_tps else None
    # on the device the user measured deep into the context: its own cost of the KV cache
    kv_penalty = s.ratios.kv_seconds_per_byte if s.own_device else 0.0
    tg_ratio = _carry(s.ratios.tg, s.same_class)

    def step_seconds(batch: int) -> tuple[float, float]:
        """(memory, compute) seconds of one decode step for `batch` streams, the user's
        measured ratio applied, plus the KV-cache cost measured deep in the context (that
        cost is measured in seconds already: the ratio does not scale it)."""
        step_bytes = ceilings.decode_step_bytes(facts.active_weights_bytes, kv_per_stream, batch)
        on_device = step_bytes * share
        memory = on_device / (bandwidth * params.eff) + params.t_layer_s * facts.n_layers
        if share < 1.0:
            memory += (step_bytes - on_device) / (s.fit.spill_bandwidth_bytes_per_s * params.eff)
        memory += HOP_OVERHEAD_S * (s.count - 1)
        # work that does not hide under the memory stream: attention over the cache for every
        # stream, and the matrix work of every stream beyond the first
        compute = 0.0
        if flops_rate:
            compute = (
                batch * attention_flops + (batch - 1) * 2.0 * facts.active_params
            ) / flops_rate
        attention = batch * kv_per_stream * kv_penalty
        return memory / tg_ratio, compute / tg_ratio + attention

    memory_t, compute_t = step_seconds(1)
    decode_tps = 1.0 / (memory_t + compute_t)
    per_user = aggregate = decode_tps
    limited = s.fit.spill_label if share < 1 else "bandwidth"
    if s.streams > 1:
        memory_t, compute_t = step_seconds(s.streams)
        aggregate = s.streams / (memory_t + compute_t)
        per_user = aggregate / s.streams
        limited = "compute" if compute_t > memory_t else "bandwidth"
    return _Decode(decode_tps, per_user, aggregate, limited, kv_per_stream)


def _basis(
    s: _Setup, model: SpeedModel, reference: Reference | None, notes: list[str]
) -> tuple[str, tuple[float, float], tuple[float, float]]:
    """What the numbers rest on, and their bands (low, high multipliers)."""
    # "measured" only for the model, the kind of test and the depth the user measured
    measured_depths = []
    if reference is not None and reference.tg_tps and _same_model(reference.facts, s.facts):
        measured_depths.append(reference.tg_depth + reference.n_gen // 2)
        if reference.deep_tg_tps:
            measured_depths.append(reference.deep_tg_depth + reference.n_gen // 2)
    near_measured = s.streams == 1 and any(
        abs(s.workload.decode_depth_tokens() - d) <= 2048 for d in measured_depths
    )
    if s.own_device and near_measured:
        return "measured", SAME_DEVICE_BAND, SAME_DEVICE_BAND
    bands = model.band("decode", s.backend), model.band("prefill", s.backend)
    if model.calibrated(s.backend) or s.own_device:
        # published results for the class, or the user's own run on this very device
        return "calibrated", *bands
    notes.append(
        f"No published {s.backend} measurements calibrate this class: the numbers "
        "use default efficiencies and a wide band."
    )
    return "spec-only", *bands


def _assemble(
    s: _Setup,
    base: dict[str, Any],
    notes: list[str],
    basis: str,
    band_tg: tuple[float, float],
    band_pp: tuple[float, float],
    prefill_tps: float | None,
    flops_prefill: float,
    d: _Decode,
) -> Projection:
    w = s.workload
    ttft = (
        w.prompt_tokens / prefill_tps
        if prefill_tps and w.prompt_tokens
        else (0.0 if not w.prompt_tokens else None)
    )
    request = (ttft or 0.0) + w.answer_tokens / d.per_user_tps if ttft is not None else None
    bandwidth = s.device.bandwidth_bytes_per_s
    return Projection(
        fits=s.fit.fits,
        offloaded_share=s.fit.share_on_device,
        basis=basis,
        decode_tps=d.decode_tps,
        decode_tps_low=d.decode_tps * band_tg[0],
        decode_tps_high=d.decode_tps * band_tg[1],
        prefill_tps=prefill_tps,
        prefill_tps_low=prefill_tps * band_pp[0] if prefill_tps else None,
        prefill_tps_high=prefill_tps * band_pp[1] if prefill_tps else None,
        decode_ceiling_tps=ceilings.decode_ceiling_tps(
            bandwidth, s.facts.active_weights_bytes, d.kv_per_stream
        ),
        prefill_ceiling_tps=(
            ceilings.compute_ceiling_tps(s.peak, flops_prefill) if s.peak else None
        ),
        per_user_tps=d.per_user_tps,
        aggregate_tps=d.aggregate_tps,
        ttft_s=ttft,
        request_s=request,
        wait_per_day_s=request * w.requests_per_day if request is not None else None,
        decode_limited_by=d.limited_by,
        notes=tuple(notes),
        **base,
    )
