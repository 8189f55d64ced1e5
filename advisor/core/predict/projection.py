"""The advisor: what a catalogued device would do for *your* model and workload.

For each target device this predicts time to first token, decode speed, request time and
whether the model and its KV cache fit, from the calibrated speed model (calibration.py) and,
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

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from advisor.core.catalogue.catalogue import Device
from advisor.core.infra.units import GB, GiB
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import memory_need
from advisor.core.predict.speed_model import SpeedModel, default_model
from advisor.core.predict.workloads import PRESETS, Workload, custom_workload
from advisor.core.runs.results import RunResult

DEDICATED_RESERVE_BYTES = 1.0 * GiB  # driver, CUDA/Vulkan context, compute buffers
UNIFIED_OS_RESERVE_BYTES = 4.0 * GiB
PCIE_BYTES_PER_S = 25e9  # spilled weights cross PCIe 4.0 x16 once per prompt batch
HOP_OVERHEAD_S = 0.0003  # per extra card per token when layers are split across cards
CROSS_CLASS_WEIGHT = 0.5  # how much of the user's measured ratio carries to another backend
SAME_DEVICE_BAND = (0.92, 1.08)


class ProjectionError(ValueError):
    """A projection that cannot be made (e.g. a backend the device cannot run)."""


@dataclass(frozen=True)
class Host:
    """The computer a GPU sits in: where spilled layers go."""

    ram_bytes: float
    ram_bandwidth_bytes_per_s: float
    label: str = "system RAM"


@dataclass(frozen=True)
class Reference:
    """The user's own measurement: device, backend, tokens/s and the test they came from."""

    device: Device
    backend: str
    tg_tps: float | None = None
    pp_tps: float | None = None
    tg_depth: int = 0
    n_gen: int = 128
    n_prompt: int = 512
    # the model the measurement was made with, where it is not the model being projected (a
    # run's efficiency carries over to other models; its bytes and FLOPs per token do not)
    facts: ModelFacts | None = None
    # decode measured again deep into the context (tg128@d4096): how much slower reading the
    # KV cache is on this device than bandwidth alone says (attention's own arithmetic)
    deep_tg_tps: float | None = None
    deep_tg_depth: int = 0
    cache_type: str = "f16"  # the KV cache type the run used


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
# memory
# -------------------------------------------------------------------------------------------


def usable_memory_bytes(device: Device, memory_gb: float) -> float:
    """Memory a model can use on the device: minus driver reserve, or the GPU's share of RAM."""
    total = memory_gb * GiB
    if device.device_class == "apple_soc":
        # Metal's recommendedMaxWorkingSetSize: about 2/3 of small, 3/4 of larger memories
        return total * (0.75 if memory_gb >= 36 else 0.67)
    if device.unified_memory:
        return total - UNIFIED_OS_RESERVE_BYTES
    return total - DEDICATED_RESERVE_BYTES


def _memory_option(device: Device, need: float, count: int, chosen: float | None) -> float:
    if chosen is not None:
        return chosen
    for option in sorted(device.memory_sizes_gb):
        if usable_memory_bytes(device, option) * count >= need:
            return option
    return max(device.memory_sizes_gb)


# -------------------------------------------------------------------------------------------
# the model
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


def reference_from_run(run: RunResult, device: Device, backend: str) -> Reference | None:
    """The user's measurement as the projection's reference: the shallowest one-stream decode,
    the deepest one (if the run went deep), prefill without context, and the run's own model."""
    try:
        facts = ModelFacts.from_json(run.model)
    except (TypeError, ValueError, KeyError):
        return None
    layers = run.config.gpu_layers
    if backend != "cpu" and layers is not None and layers < facts.n_layers:
        # some layers ran on the CPU by the user's choice: that speed says nothing about
        # the GPU's share of its predicted speed
        return None
    single = sorted(
        (t for t in run.tests if t.kind == "decode" and t.batch == 1 and t.tokens_per_s),
        key=lambda t: t.depth,
    )
    tg = single[0] if single else None
    deep = single[-1] if len(single) > 1 and single[-1].depth > tg.depth else None
    pp = next((t for t in run.tests if t.kind == "prefill" and t.depth == 0), None)
    return Reference(
        device,
        backend,
        tg.tokens_per_s if tg else None,
        pp.tokens_per_s if pp else None,
        tg.depth if tg else 0,
        tg.n_gen if tg else 128,
        pp.n_prompt if pp else 512,
        facts=facts,
        deep_tg_tps=deep.tokens_per_s if deep else None,
        deep_tg_depth=deep.depth if deep else 0,
        cache_type=run.config.cache_type_k or "f16",
    )


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
    context = workload.context_tokens()
    need = memory_need(facts, context, streams, cache_type).total_bytes
    memory_gb = _memory_option(device, need, count, target.memory_gb)
    usable = usable_memory_bytes(device, memory_gb) * count
    bandwidth = device.bandwidth_bytes_per_s
    peak = device.compute_peak_for(facts.is_quantized) or 0.0
    base = dict(
        device=device.name + (f" x{count}" if count > 1 else ""),
        device_id=device.id,
        count=count,
        backend=backend,
        memory_gb=memory_gb,
        memory_needed_bytes=need,
        price_usd=(device.launch_price_usd * count) if device.launch_price_usd else None,
        bandwidth_bytes_per_s=bandwidth,
        peak_flops_per_s=peak or None,
        workload=workload.id,
    )

    # does it fit?
    spill_bandwidth, spill_label = bandwidth, "bandwidth"
    if need <= usable:
        fits, share = "yes", 1.0
    else:
        spill = need - usable
        if device.unified_memory:
            room = memory_gb * GiB * count - UNIFIED_OS_RESERVE_BYTES
            spill_bandwidth = bandwidth * 0.5  # the CPU side reaches about half of it
            where = spill_label = "the CPU side of the same memory"
        else:
            room = usable + max(0.0, host.ram_bytes - UNIFIED_OS_RESERVE_BYTES)
            spill_bandwidth, spill_label = host.ram_bandwidth_bytes_per_s, host.label
            where = f"{host.label} at {host.ram_bandwidth_bytes_per_s / GB:.0f} GB/s"
        if need > room:
            cfg = (f"{count} x " if count > 1 else "") + f"{memory_gb:g} GiB"
            notes.append(
                f"Does not fit: the model and its KV cache need {need / GiB:.1f} GiB; {cfg} plus "
                f"{host.ram_bytes / GiB:.0f} GiB of {host.label} is not enough."
                if not device.unified_memory
                else f"Does not fit: needs {need / GiB:.1f} GiB, the "
                + ("chosen " if target.memory_gb is not None else "largest ")
                + f"{device.name} has {memory_gb:g} GiB."
            )
            return Projection(
                fits="no", offloaded_share=0.0, basis="spec-only", notes=tuple(notes), **base
            )
        fits, share = "partial", max(0.0, usable / need)
        notes.append(
            f"Partial offload: {1 - share:.0%} of the model ({spill / GiB:.1f} GiB) does not fit "
            f"in {memory_gb:g} GiB and runs from {where}, which sets the decode speed."
        )

    # prefill at the workload's prompt depth
    ratios = _cached_ratios(model, facts, reference, host)
    same_class = ratios.backend == backend
    # the user's measurement is the basis only near what was measured (depth, one stream)
    # "measured" only for the model, the kind of test and the depth the user measured
    measured_depths = []
    if reference is not None and reference.tg_tps and _same_model(reference.facts, facts):
        measured_depths.append(reference.tg_depth + reference.n_gen // 2)
        if reference.deep_tg_tps:
            measured_depths.append(reference.deep_tg_depth + reference.n_gen // 2)
    near_measured = streams == 1 and any(
        abs(workload.decode_depth_tokens() - d) <= 2048 for d in measured_depths
    )
    same_device = ratios.device_id == device.id and same_class and count == 1 and near_measured
    flops_prefill = facts.flops_per_token(workload.prefill_depth_tokens())
    prefill_tps = None
    if peak:
        prefill_tps = model.prefill_tps(backend, device, peak, flops_prefill) * _carry(
            ratios.pp, same_class
        )
        if share < 1.0 and not device.unified_memory:
            # llama.cpp streams the spilled weights to the GPU for each prompt batch
            per_batch = (1 - share) * facts.weights_bytes / PCIE_BYTES_PER_S
            prefill_tps = 1.0 / (1.0 / prefill_tps + per_batch / 512)
    # the FLOP rate this device reaches on real matrix work (what prefill achieves)
    flops_rate = prefill_tps * flops_prefill if prefill_tps else None

    # decode at the workload's depth
    depth = workload.decode_depth_tokens()
    kv_per_stream = facts.kv_cache_bytes(depth, cache_type)
    attention_flops = facts.flops_per_token(depth) - 2.0 * facts.active_params
    params = model.decode_params(backend)

    def memory_seconds(batch: int) -> float:
        """Streaming one step's bytes: the weights once, each stream's KV cache."""
        step_bytes = facts.active_weights_bytes + batch * kv_per_stream
        on_device = step_bytes * share
        t = on_device / (bandwidth * params.eff) + params.t_layer_s * facts.n_layers
        if share < 1.0:
            t += (step_bytes - on_device) / (spill_bandwidth * params.eff)
        return t + HOP_OVERHEAD_S * (count - 1)

    # on the device the user measured deep into the context: its own cost of the KV cache
    kv_penalty = (
        ratios.kv_seconds_per_byte
        if ratios.device_id == device.id and same_class and count == 1
        else 0.0
    )

    def compute_seconds(batch: int) -> float:
        """Work that does not hide under the memory stream: attention over the cache for
        every stream, and the matrix work of every stream beyond the first."""
        if not flops_rate:
            return 0.0
        return (batch * attention_flops + (batch - 1) * 2.0 * facts.active_params) / flops_rate

    tg_ratio = _carry(ratios.tg, same_class)

    def step_seconds(batch: int) -> tuple[float, float]:
        """(memory, compute) seconds of one decode step for `batch` streams, the user's
        measured ratio applied, plus the KV-cache cost measured deep in the context (that
        cost is measured in seconds already: the ratio does not scale it)."""
        attention = batch * kv_per_stream * kv_penalty
        return memory_seconds(batch) / tg_ratio, compute_seconds(batch) / tg_ratio + attention

    memory_t, compute_t = step_seconds(1)
    decode_tps = 1.0 / (memory_t + compute_t)
    per_user, aggregate, limited = decode_tps, decode_tps, "bandwidth"
    if streams > 1:
        memory_t, compute_t = step_seconds(streams)
        aggregate = streams / (memory_t + compute_t)
        per_user = aggregate / streams
        limited = "compute" if compute_t > memory_t else "bandwidth"

    # basis and band
    if same_device:
        basis, band_tg, band_pp = "measured", SAME_DEVICE_BAND, SAME_DEVICE_BAND
    elif model.calibrated(backend) or (ratios.device_id == device.id and same_class):
        # published results for the class, or the user's own run on this very device
        basis, band_tg, band_pp = (
            "calibrated",
            model.band("decode", backend),
            model.band("prefill", backend),
        )
    else:
        basis, band_tg, band_pp = (
            "spec-only",
            model.band("decode", backend),
            model.band("prefill", backend),
        )
        notes.append(
            f"No published {backend} measurements calibrate this class: the numbers "
            "use default efficiencies and a wide band."
        )
    if count > 1:
        notes.append(
            f"{count} cards split the layers: memory adds up, but each token passes "
            "the cards in turn, so one stream decodes no faster than on one card."
        )

    ttft = (
        workload.prompt_tokens / prefill_tps
        if prefill_tps and workload.prompt_tokens
        else (0.0 if not workload.prompt_tokens else None)
    )
    request = (ttft or 0.0) + workload.answer_tokens / per_user if ttft is not None else None
    return Projection(
        fits=fits,
        offloaded_share=share,
        basis=basis,
        decode_tps=decode_tps,
        decode_tps_low=decode_tps * band_tg[0],
        decode_tps_high=decode_tps * band_tg[1],
        prefill_tps=prefill_tps,
        prefill_tps_low=prefill_tps * band_pp[0] if prefill_tps else None,
        prefill_tps_high=prefill_tps * band_pp[1] if prefill_tps else None,
        decode_ceiling_tps=bandwidth / (facts.active_weights_bytes + kv_per_stream),
        prefill_ceiling_tps=peak / flops_prefill if peak else None,
        per_user_tps=per_user,
        aggregate_tps=aggregate,
        ttft_s=ttft,
        request_s=request,
        wait_per_day_s=request * workload.requests_per_day if request is not None else None,
        decode_limited_by=limited if streams > 1 else (spill_label if share < 1 else "bandwidth"),
        notes=tuple(notes),
        **base,
    )


def project_many(
    facts: ModelFacts,
    targets: list[Target],
    workload: Workload,
    *,
    host: Host,
    reference: Reference | None = None,
    model: SpeedModel | None = None,
) -> list[Projection]:
    return [
        project(facts, t, workload, host=host, reference=reference, model=model) for t in targets
    ]


# -------------------------------------------------------------------------------------------
# upgrade verdict
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkloadGain:
    workload: str
    label: str
    speedup: float | None  # request time before / after
    prefill_speedup: float | None
    decode_speedup: float | None
    bound_by: str  # "prefill" or "decode": what dominates the time on the current device
    hours_saved_per_day: float | None
    fits: str
    # without a speed-up: why ("source": the current device cannot run it, "target": the new
    # one cannot, "estimate": no compute figure to time the prompt)
    missing: str = ""
    limited_by: str = ""  # what caps decode on the current device: bandwidth, compute, a spill


@dataclass(frozen=True)
class Verdict:
    source: str
    target: str
    gains: tuple[WorkloadGain, ...]
    price_usd: float | None
    price_per_speedup_usd: float | None  # launch price / (speed-up - 1) on the chosen workload
    sentence: str
    basis: str
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def upgrade_verdict(
    facts: ModelFacts,
    source: Target,
    target: Target,
    *,
    host: Host,
    reference: Reference | None = None,
    workloads: list[Workload] | None = None,
    focus: str = "chat",
    model: SpeedModel | None = None,
) -> Verdict:
    """How much faster the target is than the source, per workload, and a one-sentence verdict."""
    workloads = workloads or list(PRESETS.values())
    gains = []
    rank = {"measured": 2, "calibrated": 1, "spec-only": 0}
    basis = "measured"  # the weakest basis of any number the verdict rests on
    for w in workloads:
        a = project(facts, source, w, host=host, reference=reference, model=model)
        b = project(facts, target, w, host=host, reference=reference, model=model)
        basis = min(basis, a.basis, b.basis, key=rank.__getitem__)
        if a.fits == "no" or b.fits == "no" or not a.request_s or not b.request_s:
            missing = "source" if a.fits == "no" else "target" if b.fits == "no" else "estimate"
            gains.append(
                WorkloadGain(w.id, w.label, None, None, None, "", None, b.fits, missing=missing)
            )
            continue
        prefill_time = a.ttft_s or 0.0
        bound = "prefill" if prefill_time > a.request_s / 2 else "decode"
        saved = (
            (a.wait_per_day_s - b.wait_per_day_s) / 3600
            if a.wait_per_day_s and b.wait_per_day_s
            else None
        )
        gains.append(
            WorkloadGain(
                w.id,
                w.label,
                a.request_s / b.request_s,
                _ratio(b.prefill_tps, a.prefill_tps),
                _ratio(b.per_user_tps, a.per_user_tps),
                bound,
                saved,
                b.fits,
                limited_by=a.decode_limited_by,
            )
        )
    price = (
        target.device.launch_price_usd * max(1, target.count)
        if target.device.launch_price_usd
        else None
    )
    focus_gain = next((g for g in gains if g.workload == focus and g.speedup), None)
    per_speedup = (
        price / (focus_gain.speedup - 1)
        if price and focus_gain and focus_gain.speedup > 1.01
        else None
    )
    sentence = _sentence(source.device.name, target.device.name, gains, focus)
    return Verdict(
        source.device.name, target.device.name, tuple(gains), price, per_speedup, sentence, basis
    )


def _sentence(source: str, target: str, gains: list[WorkloadGain], focus: str) -> str:
    usable = [g for g in gains if g.speedup]
    if not usable:
        reasons = {g.missing for g in gains}
        if reasons == {"target"}:
            return f"The model does not fit the {target}."
        if reasons == {"source"}:
            return f"The model does not fit the {source}, so there is nothing to compare with."
        return (
            f"No comparison: the {source} or the {target} lacks a figure needed to time these "
            "workloads."
        )
    main = next((g for g in usable if g.workload == focus), usable[0])
    speed = (
        f"{main.speedup:.1f}x faster than"
        if main.speedup >= 1.05
        else "about as fast as"
        if main.speedup > 0.95
        else f"slower ({main.speedup:.2f}x) than"
    )
    parts = [f'For "{main.label}" the {target} is {speed} the {source} ({_bound(main)})']
    other = [g for g in usable if g.bound_by != main.bound_by]
    if other:
        best = max(other, key=lambda g: g.speedup or 0)
        parts.append(f'"{best.label}" is {_bound(best, short=True)} and gains {best.speedup:.1f}x')
    text = "; ".join(parts) + "."
    for reason, who in (("target", "It"), ("source", f"The {source}")):
        names = [f'"{g.label}"' for g in gains if g.missing == reason]
        if names:
            text += f" {who} cannot run the model for {', '.join(names)}."
    return text


def _bound(gain: WorkloadGain, short: bool = False) -> str:
    """What limits the current device on this workload, in words."""
    if gain.bound_by == "prefill":
        return "compute-bound" if short else "prefill-bound: compute"
    limit = gain.limited_by or "bandwidth"
    words = {
        "bandwidth": "memory bandwidth",
        "compute": "compute, with many users at once",
    }.get(limit, f"the layers that spill to {limit}")
    if short:
        return {"bandwidth": "bandwidth-bound", "compute": "compute-bound"}.get(
            limit, f"limited by {words}"
        )
    return f"decode-bound: {words}"


def with_memory(target: Target, memory_gb: float | None) -> Target:
    return replace(target, memory_gb=memory_gb)


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
