"""The advisor: what a catalogued device would do for *your* model and workload.

For each target device this predicts time to first token, decode speed, request time and
whether the model and its KV cache fit, from the fitted speed model (speed_model.py) and, when
the user has measured their own machine, from that measurement:

- on the device and backend the user measured, the measurement counts in full (measured /
  predicted scales the prediction);
- on another device it moves the prediction only by the part of one device's error other
  devices share (estimated from the published data: `SpeedModel.transfer`), and across
  backends at most by r^0.13, so a CPU run never drags a GPU's figures;
- every number carries its basis: `measured` (this device, this run, this test), `published`
  (shipped llama.cpp results for this device and backend), `modelled` (none for the device, its
  class has some), `spec-only` (neither) or `unsupported` (a backend the device does not run:
  no numbers), and a band from the held-out errors of that basis, wider for each extrapolation
  (a mixture of experts, many streams, a deep context, spilled layers, several cards);
- history beyond the model's trained context is flagged and not predicted; time to first token
  for B simultaneous arrivals is the last one's wait;
- several identical cards split the layers as llama.cpp does: memory adds up, but a token
  passes the cards one after another, so single-stream decode does not speed up;
- when weights + KV cache do not fit, the layers that spill run from system RAM at its measured
  bandwidth and the CPU backend's share of it (`partial`); what fits nowhere is `no`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import memory_need
from advisor.core.predict.conditions.workloads import Workload, custom_workload
from advisor.core.predict.model.observations import PREDICT_AT
from advisor.core.predict.model.speed_model import SpeedModel, Step
from advisor.core.predict.physics import ceilings
from advisor.core.predict.physics.ceilings import usable_peak
from advisor.core.predict.physics.memory import Fit, fit_on, memory_option
from advisor.core.predict.physics.placement import Placement
from advisor.core.predict.projecting.bases import Bases, Ratios, Setup, bases_for, basis_rank
from advisor.core.predict.projecting.hybrid import (
    Placed,
    candidates,
    hybrid_fit,
    no_fit_sentence,
    nothing_fits_sentence,
    placed,
    placement_block,
    placement_sentence,
)
from advisor.core.predict.projecting.projection_types import (
    Projection,
    ProjectionError,
    Target,
    beyond_context_clause,
    several_of_a_chip_sentence,
)
from advisor.core.predict.projecting.reference import Reference

HOP_OVERHEAD_S = 0.0003  # per extra card per token when layers are split across cards


# -------------------------------------------------------------------------------------------
# the user's measurement: measured / predicted on their own device
# -------------------------------------------------------------------------------------------


def measured_ratios(
    model: SpeedModel, facts: ModelFacts, ref: Reference | None, host: Host
) -> Ratios:
    """Measured / predicted on the user's own device, for decode and prefill. The prediction
    is `project`'s own (spilled layers included), for the run's model and KV cache type."""
    if ref is None:
        return Ratios()
    r = Ratios(backend=ref.backend, device_id=ref.device.id)
    facts = ref.facts or facts
    predicted = model.prefill_tps(ref.device, ref.backend, facts, ref.prefill_test)
    if ref.placement is not None and not ref.placement.is_full(facts):
        # a run over card and RAM: its prompt copies the RAM-resident weights to the card
        target = Target(ref.device, backend=ref.backend, placement=ref.placement)
        predicted = project(facts, target, custom_workload(ref.n_prompt, 1), host=host,
                            model=model, cache_type=ref.cache_type).prefill_tps  # fmt: skip
    if ref.pp_tps and predicted:
        r.pp = ref.pp_tps / predicted
    if ref.tg_tps:
        shallow = _unscaled_decode(model, facts, ref, ref.tg_depth, host)
        if shallow:
            r.tg = ref.tg_tps * shallow[0]
        if ref.deep_tg_tps and ref.deep_tg_depth > ref.tg_depth:
            deep = _unscaled_decode(model, facts, ref, ref.deep_tg_depth, host)
            if shallow and deep:
                _fit_depth(shallow, deep, ref.tg_tps, ref.deep_tg_tps, r)
    return r


def _unscaled_decode(
    model: SpeedModel, facts: ModelFacts, ref: Reference, depth: int, host: Host
) -> tuple[float, float] | None:
    """(predicted seconds per token, KV bytes per token) for a decode after `depth` tokens on
    the reference device, before any decode ratio: `project` with the prefill ratio only."""
    pp_only = replace(ref, tg_tps=None, deep_tg_tps=None)
    workload = custom_workload(0, ref.n_gen, history_tokens=depth)
    p = project(
        facts,
        Target(ref.device, backend=ref.backend, placement=ref.placement),
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
    shallow: tuple[float, float],
    deep: tuple[float, float],
    tps: float,
    deep_tps: float,
    r: Ratios,
) -> None:
    """Two decode measurements, shallow and deep, fix two unknowns: the share of the
    predicted speed this device reaches (the ratio) and a cost per byte of KV cache beyond
    what the model predicts for it.

        1/tps(depth) = predicted_seconds(depth) / ratio + cost x kv_bytes(depth)
    """
    (a0, k0), (a1, k1) = shallow, deep
    t0, t1 = 1.0 / tps, 1.0 / deep_tps
    det = a0 * k1 - a1 * k0
    if det <= 0:
        return
    inverse_ratio = (t0 * k1 - t1 * k0) / det
    cost = (a0 * t1 - a1 * t0) / det
    if inverse_ratio > 0 and cost > 0:  # else the deep run shows nothing beyond the model
        r.tg, r.kv_seconds_per_byte = 1.0 / inverse_ratio, cost


# -------------------------------------------------------------------------------------------
# the projection
# -------------------------------------------------------------------------------------------


def project(
    facts: ModelFacts,
    target: Target,
    workload: Workload,
    *,
    host: Host,
    model: SpeedModel,
    reference: Reference | None = None,
    cache_type: str = "f16",
    ratios: Ratios | None = None,
) -> Projection:
    """Predict one target device's performance for a model and a workload. `ratios` are the
    reference's measured / predicted ratios where the caller has them (`project_all` computes
    them once for many targets); else they are computed from `reference`."""
    device, count = target.device, max(1, target.count)
    host = target.host or host
    if count > 1 and not device.is_card:
        raise ProjectionError(several_of_a_chip_sentence(device, count))
    backend = (target.backend or device.usual_backend).lower()
    notes: list[str] = []
    streams = max(1, workload.concurrency)
    need = memory_need(facts, workload.context_tokens(), streams, cache_type).total_bytes
    memory_gb = memory_option(device, need, count, target.memory_gb)
    fit = fit_on(device, count, need, memory_gb, host, target.memory_gb is not None)
    options: list[Placed] = []
    if not device.unified_memory and (target.placement is not None or fit.fits != "yes"):
        fit, options = _placements(facts, target, workload, host, memory_gb, need, cache_type)
    # the compute ceiling: the peak of the precision the backend's kernels really run in
    peak = usable_peak(device, backend, facts.is_quantized) or 0.0
    base: dict[str, Any] = dict(
        device=device.name + (f" x{count}" if count > 1 else ""),
        device_id=device.id,
        count=count,
        backend=backend,
        memory_gb=memory_gb,
        memory_needed_bytes=need,
        bandwidth_bytes_per_s=device.bandwidth_bytes_per_s,
        peak_flops_per_s=peak or None,
        workload=workload.id,
        build_era=PREDICT_AT,
    )
    early = _without_speed(facts, device, backend, fit, workload, model, base, notes)
    if early is not None:
        return early
    if ratios is None:
        ratios = measured_ratios(model, facts, reference, host)
    s = Setup(facts, device, count, backend, workload, streams, fit, peak, ratios, cache_type,
              host, ubatch=target.ubatch)  # fmt: skip
    s = _place(s, target, options, model, base, notes)
    rate, prefill_tps, flops_prefill = _prefill(s, model)
    decode = _decode(s, model, rate, prefill_tps)
    bases = bases_for(s, model, reference, notes)
    if device.unified_memory and not s.own_device and (sentence := memory_sentence(device)):
        notes.append(sentence)
    if count > 1:
        notes.append(
            f"{count} cards split the layers: memory adds up, but each token passes "
            "the cards in turn, so one stream decodes no faster than on one card."
        )
    published = model.published(device, backend, facts)
    if published is not None:
        hybrid = s.placed is not None and s.placed.residency.hybrid
        notes.append(published.summary(count, hybrid) + f" ({published.source_url}).")
    return _assemble(s, model, base, notes, bases, reference, prefill_tps, flops_prefill,
                     decode, published)  # fmt: skip


def project_all(
    facts: ModelFacts,
    targets: Sequence[Target],
    workload: Workload,
    *,
    host: Host,
    model: SpeedModel,
    reference: Reference | None = None,
    cache_type: str = "f16",
) -> list[Projection]:
    """`project` for many targets, the reference's ratios computed once."""
    ratios = measured_ratios(model, facts, reference, host)
    return [
        project(facts, t, workload, host=host, model=model, reference=reference,
                cache_type=cache_type, ratios=ratios)
        for t in targets
    ]  # fmt: skip


def _without_speed(
    facts: ModelFacts, device: Device, backend: str, fit: Fit, workload: Workload,
    model: SpeedModel, base: dict[str, Any], notes: list[str],
) -> Projection | None:  # fmt: skip
    """The projection without a speed, where there is none to give: a backend the device does
    not run, a model that does not fit, a context beyond the model's training."""
    if backend not in device.backends:
        notes.append(unsupported_sentence(device, backend))
        return Projection(
            fits=fit.fits, offloaded_share=fit.share_on_device, basis="unsupported",
            decode_basis="unsupported", prefill_basis="unsupported", notes=tuple(notes), **base,
        )  # fmt: skip
    if fit.note:
        notes.append(fit.note)
    if fit.fits == "no":
        return Projection(
            fits="no", offloaded_share=0.0, basis=model.basis(device, backend),
            notes=tuple(notes), **base,
        )  # fmt: skip
    if facts.context_length and workload.context_tokens() > facts.context_length:
        notes.append(
            f"{beyond_context_clause(workload.context_tokens(), facts.context_length)}: "
            "llama.cpp would need RoPE scaling and the answers degrade, so no speed is "
            "predicted. Shorten the history or choose a model trained on a longer context."
        )
        return Projection(
            fits=fit.fits, offloaded_share=fit.share_on_device,
            basis=model.basis(device, backend), beyond_context=True, notes=tuple(notes), **base,
        )  # fmt: skip
    return None


def _place(
    s: Setup, target: Target, options: list[Placed], model: SpeedModel, base: dict[str, Any],
    notes: list[str],
) -> Setup:  # fmt: skip
    """The setup with its placement on a discrete card: of the placements that fit, the
    fastest for the workload (the placement block and its sentence added); every layer on the
    card where it fits (the block alone, for its command)."""
    context = s.workload.context_tokens()
    chosen = "you" if target.placement is not None else "fastest"
    if options:
        s = min((replace(s, placed=o) for o in options), key=lambda c: _request_s(c, model))
        s = replace(s, fit=hybrid_fit(s.placed, s.host, s.facts)) if s.placed else s
        block = placement_block(s.placed, s.facts, s.host, model, chosen, context, s.device)  # type: ignore[arg-type]
        base["placement"] = block
        base["memory_needed_bytes"] = block["gpu_memory_needed_bytes"]
        notes.append(placement_sentence(block))
    elif not s.device.unified_memory and s.fit.fits == "yes":  # every layer on the card(s)
        whole = placed(s.facts, target.placement or Placement(), s.device, s.count,
                       base["memory_gb"], s.host, context, s.streams, s.cache_type)  # fmt: skip
        chosen = "you" if target.placement is not None else "full"
        base["placement"] = placement_block(whole, s.facts, s.host, model, chosen, context,
                                            s.device)  # fmt: skip
    return s


def _placements(
    facts: ModelFacts, target: Target, workload: Workload, host: Host, memory_gb: float,
    need: float, cache_type: str,
) -> tuple[Fit, list[Placed]]:  # fmt: skip
    """A discrete card's fit for the model: the placement the user chose, else every layer on
    the card where it fits, else the placements that keep the most on the card (empty with a
    'no' where none fits)."""
    device, count = target.device, max(1, target.count)
    context, streams = workload.context_tokens(), max(1, workload.concurrency)
    if target.placement is not None:
        p = placed(facts, target.placement, device, count, memory_gb, host, context, streams,
                   cache_type)  # fmt: skip
        if not p.fits:
            note = no_fit_sentence(p, device, count, memory_gb, host, facts)
            return Fit("no", 0.0, host.ram_bandwidth_bytes_per_s, host.label, note), []
        if p.placement.is_full(facts):
            return Fit("yes", 1.0, device.bandwidth_bytes_per_s, "bandwidth"), []
        return hybrid_fit(p, host, facts), [p]
    found = candidates(facts, device, count, memory_gb, host, context, streams, cache_type)
    if not found:
        note = nothing_fits_sentence(facts, device, count, memory_gb, host, need)
        return Fit("no", 0.0, host.ram_bandwidth_bytes_per_s, host.label, note), []
    return hybrid_fit(found[0], host, facts), found


def _request_s(s: Setup, model: SpeedModel) -> float:
    """Seconds one request of the workload takes with this setup (to choose a placement)."""
    rate, prefill_tps, _ = _prefill(s, model)
    d = _decode(s, model, rate)
    prompt = s.workload.prompt_tokens / prefill_tps if prefill_tps else 0.0
    return prompt + s.workload.answer_tokens / d.per_user_tps


def memory_sentence(device: Device) -> str | None:
    """What a chip that takes the system's memory assumes of it: the record's memory (the
    fastest the chip officially takes), which a machine built with slower memory, or with one
    of two channels filled, does not reach. None where the record has no data rate, and for
    Apple's unified memory (one configuration per chip)."""
    if device.vendor == "Apple" or not device.memory_data_rate_mtps:
        return None
    channels = device.memory_channels or 0
    memory = f"{device.memory_type}-{device.memory_data_rate_mtps:.0f}"
    if channels > 1:
        memory += f" in {channels} channels"
    slower = "slower memory"
    if channels > 1 and not device.memory_type.upper().startswith("LPDDR"):
        slower += ", or fewer channels filled,"
    return (
        f"Assumes {memory} ({device.memory_bandwidth_gbs:.0f} GB/s), the fastest memory "
        f"this chip officially takes: a machine with {slower} decodes slower."
    )


def unsupported_sentence(device: Device, backend: str) -> str:
    return (
        f"{device.name} does not run llama.cpp's {backend} backend; it runs "
        f"{', '.join(device.backends)}."
    )


def _prefill(s: Setup, model: SpeedModel) -> tuple[float | None, float | None, float]:
    """(FLOP/s the matrix work reaches, prefill tokens/s at the workload's prompt depth,
    FLOPs per token as the ceiling counts them). The rate is of the FLOPs a prompt token
    really does (the speed model's count: no token table, no output head); the tokens/s
    include each batch's per-layer cost."""
    depth = s.workload.prefill_depth_tokens()
    flops_prefill = s.facts.flops_per_token(depth)
    rate = model.prefill_rate(s.device, s.backend, s.facts)
    prefill_tps = model.prefill_tps(s.device, s.backend, s.facts, s.prefill_test())
    if not rate or not prefill_tps:
        return None, None, flops_prefill
    carried = s.carried(model, s.ratios.pp)
    if s.placed is not None and s.placed.residency.hybrid:
        # each prompt micro-batch copies the RAM-resident weights it uses to the card
        placed_tps = model.placed_prefill_tps(
            s.device, s.backend, s.facts, s.placed.residency, s.prefill_test(),
            link_rate=model.link_rate(s.host, s.device), cpu_flops_per_s=_cpu_flops(s, model),
            rate=rate,
        )  # fmt: skip
        prefill_tps = placed_tps or prefill_tps
    rate, prefill_tps = rate * carried, prefill_tps * carried
    return rate, prefill_tps, flops_prefill


def _cpu_flops(s: Setup, model: SpeedModel) -> float | None:
    """The host CPU's arithmetic rate for the weights kept in RAM, where the CPU is known."""
    peak = s.host.cpu_peak_flops_per_s
    share = model.decode_fit.flop_share.get("cpu")
    return peak * share if peak and share else None


@dataclass(frozen=True)
class _Decode:
    decode_tps: float
    per_user_tps: float
    aggregate_tps: float
    limited_by: str
    kv_per_stream: float
    bytes_per_step: float


def _decode(
    s: Setup, model: SpeedModel, rate: float | None, prefill_tps: float | None = None
) -> _Decode:
    """Decode at the workload's depth: one stream, and all of the workload's streams (their
    tokens in all never more than the device's own `prefill_tps`)."""
    depth = s.workload.decode_depth_tokens()
    kv_per_stream = s.facts.kv_cache_bytes(depth, s.cache_type)
    kv_penalty = s.ratios.kv_seconds_per_byte if s.own_device else 0.0
    tg_ratio = s.carried(model, s.ratios.tg)

    def step(streams: int) -> Step:
        if s.placed is not None and s.placed.residency.hybrid:
            st = model.placed_step(
                s.device, s.backend, s.facts, s.placed.residency, streams=streams, depth=depth,
                compute_rate=rate, ram_rate=model.ram_stream_rate(s.host),
                cpu_flops_per_s=_cpu_flops(s, model), cache_type=s.cache_type,
                tg_ratio=tg_ratio,
            )  # fmt: skip
            return replace(st, memory_s=st.memory_s + HOP_OVERHEAD_S * (s.count - 1))
        st = model.step(
            s.device, s.backend, s.facts, streams=streams, depth=depth, compute_rate=rate,
            cache_type=s.cache_type, tg_ratio=tg_ratio, on_device=s.fit.share_on_device,
            spill_bandwidth=s.fit.spill_bandwidth_bytes_per_s,
        )  # fmt: skip
        return replace(
            st,
            memory_s=st.memory_s + HOP_OVERHEAD_S * (s.count - 1),
            compute_s=st.compute_s + streams * kv_per_stream * kv_penalty,
        )

    one = step(1)
    decode_tps = 1.0 / one.seconds
    per_user = aggregate = decode_tps
    limited = s.fit.spill_label if s.fit.share_on_device < 1 else "bandwidth"
    if s.placed is not None and s.placed.residency.hybrid:
        limited = "system RAM" if one.memory_s else limited
    step_bytes = one.bytes
    if s.streams > 1:
        many = step(s.streams)
        aggregate = s.streams / many.seconds
        per_user = aggregate / s.streams
        limited, step_bytes = many.limited_by, many.bytes
        if prefill_tps and aggregate > prefill_tps:
            aggregate, limited = prefill_tps, "compute"
            per_user = aggregate / s.streams
    return _Decode(decode_tps, per_user, aggregate, limited, kv_per_stream, step_bytes)


def _assemble(
    s: Setup,
    model: SpeedModel,
    base: dict[str, Any],
    notes: list[str],
    b: Bases,
    reference: Reference | None,
    prefill_tps: float | None,
    flops_prefill: float,
    d: _Decode,
    published: Any,
) -> Projection:
    w = s.workload
    ttft: float | None
    if not w.prompt_tokens:
        ttft = 0.0
    elif prefill_tps:
        # B requests arriving together are prefilled one after another: the last one waits
        # for all of them
        ttft = s.streams * w.prompt_tokens / prefill_tps
        if s.streams > 1:
            notes.append(
                f"Time to first token is the last of {s.streams} simultaneous requests' wait "
                f"({s.streams} prompts prefilled in turn); the first waits "
                f"{w.prompt_tokens / prefill_tps:.2g} s."
            )
    else:
        ttft = None
    request = ttft + w.answer_tokens / d.per_user_tps if ttft is not None else None
    bandwidth = s.device.bandwidth_bytes_per_s
    basis = min((b.decode, b.prefill), key=basis_rank)  # the weakest the row rests on
    return Projection(
        fits=s.fit.fits,
        offloaded_share=s.fit.share_on_device,
        basis=basis,
        decode_basis=b.decode,
        prefill_basis=b.prefill,
        decode_tps=d.decode_tps,
        decode_tps_low=d.decode_tps * b.band_tg[0],
        decode_tps_high=d.decode_tps * b.band_tg[1],
        prefill_tps=prefill_tps,
        prefill_tps_low=prefill_tps * b.band_pp[0] if prefill_tps else None,
        prefill_tps_high=prefill_tps * b.band_pp[1] if prefill_tps else None,
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
        bytes_per_step=d.bytes_per_step,
        published=published.to_json() if published is not None else None,
        notes=tuple(notes),
        **base,
    )
