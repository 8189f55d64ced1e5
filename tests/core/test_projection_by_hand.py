"""The projection's own arithmetic, each relation written out here: how much of a measured
ratio carries to another device (r^w, w the transfer weight), the measured band from the run's
spread, bands widened in quadrature for each extrapolation, the PCIe term of a spilled prefill,
the two-depth fit of a per-byte KV cost, and the time a request and a day take.

The speed model is hand-set (tests/core/test_projection.py's `_model`): no data behind it, so
the relations are seen without the fitted efficiencies in the way."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from advisor.core.catalogue.prices import price_of
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.test_point import TestPoint
from advisor.core.predict.conditions.workloads import custom_workload
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.model.hybrid_shares import LINK_SHARE, MEASURED_RAM_SHARE
from advisor.core.predict.model.speed_model import HYBRID_ROUND_TRIP_S
from advisor.core.predict.physics.placement import (
    ASSUMED_PCIE,
    Placement,
    link_bytes_per_s,
    prompt_copy_bytes,
    residency,
)
from advisor.core.predict.projecting.bases import (
    DEEP_CONTEXT,
    MEASURED_FLOOR,
    MEASURED_SINGLE_RUN,
    WIDEN,
)
from advisor.core.predict.projecting.projection import (
    HOP_OVERHEAD_S,
    Target,
    project,
)
from advisor.core.predict.projecting.reference import Reference
from tests.core.test_projection import HOST, _model  # the hand-set speed model, the host

MODEL = load_speed_model()  # the shipped fit, as the app uses it


@pytest.fixture(scope="module")
def bare(cat):
    """RTX 4090 and 3090 without compute figures: decode is bytes and layers alone."""

    def strip(name):
        return replace(cat.resolve(name), fp16_tensor_tflops=None, fp32_tflops=None,
                       int8_tensor_tops=None, bf16_tensor_tflops=None)  # fmt: skip

    return strip("RTX 4090"), strip("RTX 3090")


def test_these_constants_are_the_documented_ones():
    assert (MEASURED_FLOOR, MEASURED_SINGLE_RUN, DEEP_CONTEXT) == (0.02, 0.05, 16_384)
    # PCIe 4.0 x16 where nothing is detected: 1.969 GB/s a lane
    assert link_bytes_per_s(*ASSUMED_PCIE) == pytest.approx(31.5e9, rel=1e-3)
    assert WIDEN == {"batch": 0.12, "depth": 0.08, "spill": 0.25, "cards": 0.10, "moe": 0.10,
                     "ram": 0.35, "link": 0.35}  # fmt: skip


def test_a_measured_ratio_carries_by_its_transfer_weight(cat, nemo, bare):
    rtx4090, rtx3090 = bare
    model = replace(_model(), transfer={"same": 0.5, "cross": 0.25})
    w = custom_workload(512, 128)
    alone = project(nemo, Target(rtx4090), w, host=HOST, model=model)
    assert model.prefill_rate(rtx4090, "cuda", nemo) is None  # no compute figure, no prefill
    # the user's 4090 ran tg128 twice as fast as predicted
    tg128 = project(nemo, Target(rtx4090), custom_workload(0, 128), host=HOST, model=model)
    ref = Reference(rtx4090, "cuda", tg_tps=2 * tg128.decode_tps, facts=nemo)
    own = project(nemo, Target(rtx4090), w, host=HOST, model=model, reference=ref)
    assert own.decode_tps == pytest.approx(2 * alone.decode_tps, rel=1e-9)
    other_alone = project(nemo, Target(rtx3090), w, host=HOST, model=model)
    other = project(nemo, Target(rtx3090), w, host=HOST, model=model, reference=ref)
    assert other.decode_tps == pytest.approx(other_alone.decode_tps * 2**0.5, rel=1e-9)
    # two of the user's own card: another configuration, so only the shared part carries
    two = project(nemo, Target(rtx4090, count=2), w, host=HOST, model=model, reference=ref)
    two_alone = project(nemo, Target(rtx4090, count=2), w, host=HOST, model=model)
    # (the hop between the cards is a fixed cost per token the ratio does not scale)
    step = 1 / two_alone.decode_tps - HOP_OVERHEAD_S
    assert two.decode_tps == pytest.approx(1 / (step / 2**0.5 + HOP_OVERHEAD_S), rel=1e-9)
    # another backend on the same card carries less: r^0.25
    both = _two_backends({"same": 0.5, "cross": 0.25})
    cuda_ref = project(nemo, Target(rtx4090), custom_workload(0, 128), host=HOST, model=both)
    ref = Reference(rtx4090, "cuda", tg_tps=2 * cuda_ref.decode_tps, facts=nemo)
    vk = Target(rtx4090, backend="vulkan")
    moved = project(nemo, vk, w, host=HOST, model=both, reference=ref).decode_tps
    assert moved == pytest.approx(project(nemo, vk, w, host=HOST, model=both).decode_tps
                                  * 2**0.25, rel=1e-9)  # fmt: skip


def _two_backends(transfer):
    """The hand-set model with CUDA at 80% and Vulkan at 60% of the bandwidth."""
    from advisor.core.predict.model.efficiency import RidgeFit
    from advisor.core.predict.model.speed_model import DecodeFit, PrefillFit, SpeedModel

    ridge = RidgeFit({"b:cuda": math.log(0.8), "b:vulkan": math.log(0.6)})
    prefill = PrefillFit({}, RidgeFit({"b:cuda": math.log(0.5)}))
    return SpeedModel(
        DecodeFit({"cuda": 1e-4, "vulkan": 1e-4}, ridge), prefill, (),
        {("decode", "*", "spec-only"): (0.8, 1.1), ("prefill", "*", "spec-only"): (0.7, 1.2)},
        transfer, {"cuda": 1e12, "vulkan": 1e12}, {"cuda": 0.25, "vulkan": 0.25},
    )  # fmt: skip


def test_a_measured_prefill_ratio_carries_too(cat, nemo):
    gpu, other = cat.resolve("RTX 4090"), cat.resolve("RTX 3090")
    model = replace(_model(), transfer={"same": 0.5, "cross": 0.0})
    w = custom_workload(512, 128)
    alone = project(nemo, Target(gpu), w, host=HOST, model=model)
    # measured at pp512 (attention over 256 tokens, as the workload's prompt is)
    ref = Reference(gpu, "cuda", tg_tps=alone.decode_tps, pp_tps=1.5 * alone.prefill_tps)
    own = project(nemo, Target(gpu), w, host=HOST, model=model, reference=ref)
    assert own.prefill_tps == pytest.approx(1.5 * alone.prefill_tps, rel=1e-9)
    o_alone = project(nemo, Target(other), w, host=HOST, model=model)
    o_ref = project(nemo, Target(other), w, host=HOST, model=model, reference=ref)
    assert o_ref.prefill_tps == pytest.approx(o_alone.prefill_tps * 1.5**0.5, rel=1e-9)
    # a decode-only reference leaves prefill as predicted, on the same device too
    tg_only = replace(ref, pp_tps=None)
    same = project(nemo, Target(gpu), w, host=HOST, model=model, reference=tg_only)
    assert same.prefill_tps == pytest.approx(alone.prefill_tps, rel=1e-12)


@pytest.mark.parametrize(("spread", "half"), [(None, 0.05), (0.01, 0.02), (0.07, 0.07), (1.5, 1.5)])
def test_the_measured_band_is_the_runs_own_spread(cat, nemo, spread, half):
    gpu = cat.resolve("RTX 4090")
    w = custom_workload(512, 128)
    alone = project(nemo, Target(gpu), w, host=HOST, model=_model())
    ref = Reference(gpu, "cuda", tg_tps=alone.decode_tps, pp_tps=alone.prefill_tps,
                    tg_spread=spread, pp_spread=spread)  # fmt: skip
    p = project(nemo, Target(gpu), w, host=HOST, model=_model(), reference=ref)
    assert p.decode_basis == p.prefill_basis == "measured"
    # a factor each way: a run spread over more than its mean (1.5) keeps a positive low end
    assert p.decode_tps_low == pytest.approx(p.decode_tps / (1 + half), rel=1e-12)
    assert p.decode_tps_high == pytest.approx(p.decode_tps * (1 + half), rel=1e-12)
    assert p.prefill_tps_low == pytest.approx(p.prefill_tps / (1 + half), rel=1e-12)
    assert p.prefill_tps_high == pytest.approx(p.prefill_tps * (1 + half), rel=1e-12)


def test_decode_counts_as_measured_within_2048_tokens_of_a_measured_depth(cat, nemo):
    gpu = cat.resolve("RTX 4090")
    ref = Reference(gpu, "cuda", tg_tps=100.0, n_gen=128)  # measured at depth 0..128: 64
    near = project(nemo, Target(gpu), custom_workload(0, 128, history_tokens=2048), host=HOST,
                   model=_model(), reference=ref)  # fmt: skip
    far = project(nemo, Target(gpu), custom_workload(0, 128, history_tokens=2049), host=HOST,
                  model=_model(), reference=ref)  # fmt: skip
    assert near.decode_basis == "measured"  # 2048 + 64 is 2048 from 64
    deep = replace(ref, deep_tg_tps=50.0, deep_tg_depth=8192)
    at_8k = project(nemo, Target(gpu), custom_workload(0, 128, history_tokens=9000), host=HOST,
                    model=_model(), reference=deep)  # fmt: skip
    assert at_8k.decode_basis == "measured"
    many = project(nemo, Target(gpu), replace(custom_workload(0, 128), concurrency=2),
                   host=HOST, model=_model(), reference=ref)  # fmt: skip
    # beyond what was measured: the run's own figure carried along the model's curve. Not
    # `spec-only` (the 4090 has no data in the hand-set model, but this run measured it),
    # not `measured` (not this test): `modelled`, the run's band widened for the step
    own = 1 / (1 + MEASURED_SINGLE_RUN), 1 + MEASURED_SINGLE_RUN
    for p, extra in ((far, [WIDEN["depth"]]), (many, [WIDEN["batch"]])):
        assert p.decode_basis == "modelled"
        lo, hi = _widened(own, extra)
        assert p.decode_tps_low == pytest.approx(p.decode_tps * lo, rel=1e-9)
        assert p.decode_tps_high == pytest.approx(p.decode_tps * hi, rel=1e-9)
        assert any("This run did not measure decode " in n for n in p.notes)
        assert not any("rest on its specifications" in n for n in p.notes)
    alone = project(nemo, Target(gpu), custom_workload(0, 128, history_tokens=2049), host=HOST,
                    model=_model())  # fmt: skip
    assert alone.decode_basis == "spec-only"  # without the run, the spec sheet alone


def test_a_prefill_far_from_the_measured_prompt_is_carried_not_measured(cat, nemo):
    gpu = cat.resolve("RTX 4090")
    ref = Reference(gpu, "cuda", tg_tps=100.0, pp_tps=3000.0)  # pp512: mean depth 256
    short = project(nemo, Target(gpu), custom_workload(4096, 16), host=HOST, model=_model(),
                    reference=ref)  # fmt: skip
    long = project(nemo, Target(gpu), custom_workload(8192, 16), host=HOST, model=_model(),
                   reference=ref)  # fmt: skip
    assert short.prefill_basis == "measured"  # mean depth 2048, within 2048 of 256
    assert long.prefill_basis == "modelled"
    assert (
        long.prefill_tps_high / long.prefill_tps_low
        > short.prefill_tps_high / short.prefill_tps_low
    )


def _widened(band, extra):
    lo, hi = -math.log(band[0]), math.log(band[1])
    more = sum(e * e for e in extra)
    return math.exp(-math.sqrt(lo * lo + more)), math.exp(math.sqrt(hi * hi + more))


@pytest.mark.parametrize(
    ("users", "history", "count", "decode_extra", "prefill_extra"),
    [
        (1, 0, 1, [], []),
        (4, 0, 1, [0.12], []),  # many streams: decode only
        (1, 20_000, 1, [0.08], [0.08]),  # deeper than the data mostly reaches
        (4, 20_000, 2, [0.12, 0.08, 0.10], [0.08, 0.10]),
    ],
)
def test_bands_widen_in_quadrature_for_each_extrapolation(cat, nemo, users, history, count,
                                                          decode_extra, prefill_extra):  # fmt: skip
    gpu = cat.resolve("RTX 4090")
    w = replace(custom_workload(512, 128, history_tokens=history), concurrency=users)
    p = project(nemo, Target(gpu, count=count), w, host=HOST, model=_model())
    # the hand-set model's spec-only bands: decode (0.8, 1.1), prefill (0.7, 1.2)
    lo, hi = _widened((0.8, 1.1), decode_extra)
    assert p.decode_tps_low / p.decode_tps == pytest.approx(lo, rel=1e-12)
    assert p.decode_tps_high / p.decode_tps == pytest.approx(hi, rel=1e-12)
    lo, hi = _widened((0.7, 1.2), prefill_extra)
    assert p.prefill_tps_low / p.prefill_tps == pytest.approx(lo, rel=1e-12)
    assert p.prefill_tps_high / p.prefill_tps == pytest.approx(hi, rel=1e-12)


def test_a_partly_offloaded_prefill_copies_the_cpu_layers_over_the_link(cat):
    """A dense 13B on an 8 GB card: the first layers stay in RAM (-ngl N), and each prompt
    micro-batch of 32 tokens or more copies them whole to the card (op offload)."""
    big = facts_from_shape(get_shape("llama-2-13b"), "q4_k_m")
    card = cat.resolve("RTX 4060")
    w = custom_workload(512, 128)
    model = _model()
    p = project(big, Target(card), w, host=HOST, model=model)
    assert p.fits == "hybrid" and p.placement["llama_args"][0] == "-ngl"
    n = int(p.placement["llama_args"][1])
    assert 0 < n < big.n_layers
    r = residency(big, Placement(gpu_layers=n))
    assert r.cpu_other_bytes > 0 and r.cpu_expert_bytes == 0
    on_card = model.prefill_tps(card, "cuda", big, TestPoint(512))
    # the 4060's own link (PCIe 4.0 x8) is narrower than the slot assumed (PCIe 4.0 x16)
    assert (card.pcie_gen, card.pcie_lanes) == (4, 8) and ASSUMED_PCIE == (4, 16)
    link = link_bytes_per_s(4, 8) * LINK_SHARE
    expected = 512 / (512 / on_card + r.cpu_other_bytes / link)
    assert p.prefill_tps == pytest.approx(expected, rel=1e-12)
    assert p.decode_limited_by == "system RAM"
    # the band widens for the spill, and prefill's for the assumed link too
    assert p.decode_tps_low / p.decode_tps == pytest.approx(_widened((0.8, 1.1), [0.25])[0])
    assert p.prefill_tps_low / p.prefill_tps == pytest.approx(_widened((0.7, 1.2), [0.25, 0.35])[0])
    # a micro-batch under 32 tokens runs the CPU's layers on the CPU: nothing crosses the link
    assert prompt_copy_bytes(r, 31) == 0 and prompt_copy_bytes(r, 32) == r.cpu_other_bytes


def test_a_hybrid_decode_step_by_hand(cat):
    """Experts of the first 24 layers in RAM: a token reads k/E of them there at the measured
    stream rate, the rest on the card at its share of the bandwidth, every layer's fixed cost,
    and a round trip for each layer whose experts stay in RAM."""
    moe = facts_from_shape(get_shape("qwen3-30b-a3b"), "q4_k_m")
    gpu = replace(cat.resolve("RTX 3060 12GB"), fp16_tensor_tflops=None, fp32_tflops=None,
                  int8_tensor_tops=None, bf16_tensor_tflops=None)  # fmt: skip
    host = Host(64 * GiB, 60e9, bandwidth_basis="measured")
    w = custom_workload(0, 128)
    placement = Placement(cpu_moe=24)
    p = project(moe, Target(gpu, placement=placement), w, host=host, model=_model())
    r = residency(moe, placement)
    kv = moe.kv_cache_bytes(64)
    used = moe.n_expert_used / moe.n_expert
    gpu_s = (r.gpu_other_bytes + r.gpu_expert_bytes * used + kv) / (gpu.bandwidth_bytes_per_s
                                                                     * 0.8)  # fmt: skip
    cpu_s = r.cpu_expert_bytes * used / (60e9 * MEASURED_RAM_SHARE)
    expected = gpu_s + 0.0001 * moe.n_layers + cpu_s + HYBRID_ROUND_TRIP_S * 24
    assert p.fits == "hybrid" and r.cpu_expert_layers == 24
    assert p.decode_tps == pytest.approx(1 / expected, rel=1e-9)
    assert p.placement["ram_bytes_per_token"] == pytest.approx(r.cpu_expert_bytes * used)


def test_two_depths_fix_the_ratio_and_a_kv_cost(nemo, bare):
    gpu, _ = bare
    model = _model()
    n_gen = 128

    def predicted_seconds(depth):
        w = custom_workload(0, n_gen, history_tokens=depth)
        return 1 / project(nemo, Target(gpu), w, host=HOST, model=model).decode_tps

    def kv(depth):
        return nemo.kv_cache_bytes(depth + n_gen // 2)

    ratio, cost = 0.8, 3e-12  # the device reaches 80% of the model; 3 ps per KV byte beyond

    def measured(depth):
        return 1 / (predicted_seconds(depth) / ratio + cost * kv(depth))

    ref = Reference(gpu, "cuda", tg_tps=measured(0), deep_tg_tps=measured(8192),
                    deep_tg_depth=8192, n_gen=n_gen, facts=nemo)  # fmt: skip
    w = custom_workload(0, n_gen, history_tokens=4096)
    p = project(nemo, Target(gpu), w, host=HOST, model=model, reference=ref)
    assert p.decode_tps == pytest.approx(measured(4096), rel=1e-6)
    # a deep run that is no slower than the model says sets no cost: the ratio alone
    flat = replace(ref, tg_tps=1 / (predicted_seconds(0) / ratio),
                   deep_tg_tps=1 / (predicted_seconds(8192) / ratio))  # fmt: skip
    p = project(nemo, Target(gpu), w, host=HOST, model=model, reference=flat)
    assert p.decode_tps == pytest.approx(1 / (predicted_seconds(4096) / ratio), rel=1e-6)


def test_a_request_and_a_day_by_hand(cat, nemo):
    gpu = cat.resolve("RTX 4090")
    w = replace(custom_workload(1000, 200, requests_per_day=40), concurrency=4)
    p = project(nemo, Target(gpu), w, host=HOST, model=_model())
    assert p.ttft_s == pytest.approx(4 * 1000 / p.prefill_tps, rel=1e-12)
    assert any(f"the first waits {1000 / p.prefill_tps:.2g} s" in n for n in p.notes)
    assert p.request_s == pytest.approx(p.ttft_s + 200 / p.per_user_tps, rel=1e-12)
    assert p.wait_per_day_s == pytest.approx(40 * p.request_s, rel=1e-12)
    assert p.aggregate_tps == pytest.approx(4 * p.per_user_tps, rel=1e-12)
    no_prompt = project(nemo, Target(gpu), custom_workload(0, 200), host=HOST, model=_model())
    assert no_prompt.ttft_s == 0.0
    assert no_prompt.request_s == pytest.approx(200 / no_prompt.decode_tps, rel=1e-12)
    one = project(nemo, Target(gpu), custom_workload(1000, 200), host=HOST, model=_model())
    assert not any("simultaneous" in n for n in one.notes)


def test_two_cards_cost_twice_and_say_so(cat, nemo):
    gpu = cat.resolve("RTX 4090")
    p = project(nemo, Target(gpu, count=2), custom_workload(512, 128), host=HOST, model=_model())
    assert price_of(gpu, 2).usd == 2 * gpu.street_price_usd and p.device == f"{gpu.name} x2"
    one = project(nemo, Target(gpu), custom_workload(512, 128), host=HOST, model=_model())
    assert price_of(gpu, 1).usd == gpu.street_price_usd and one.device == gpu.name
    assert not any("cards split the layers" in n for n in one.notes)


def test_unified_memory_that_spills_pays_no_pcie(cat):  # and keeps the older rule
    big = facts_from_shape(get_shape("llama-3-70b"), "q4_k_m")  # about 40 GiB of weights
    mac = next(d for d in cat.devices if d.device_class == "apple_soc" and 48 in d.memory_sizes_gb)
    p = project(big, Target(mac, memory_gb=48), custom_workload(512, 128), host=HOST,
                model=_model(backend="metal"))  # fmt: skip
    assert p.fits == "partial"  # past the GPU's 3/4 of 48 GB, within the 44 GiB the OS leaves
    rate = _model(backend="metal").prefill_rate(mac, "metal", big)
    assert p.prefill_tps == pytest.approx(rate / big.prompt_flops_per_token(256), rel=1e-12)


def test_too_big_for_the_chosen_or_the_largest_memory_says_which(cat):
    big = facts_from_shape(get_shape("llama-3-70b"), "q4_k_m")
    mac = next(d for d in cat.devices if d.device_class == "apple_soc" and 24 in d.memory_sizes_gb
               and max(d.memory_sizes_gb) < 40)  # fmt: skip
    chosen = project(
        big, Target(mac, memory_gb=24), custom_workload(512, 128), host=HOST, model=MODEL
    )
    largest = project(big, Target(mac), custom_workload(512, 128), host=HOST, model=MODEL)
    assert chosen.fits == largest.fits == "no"
    assert "the chosen" in chosen.notes[0] and "the largest" in largest.notes[0]


def test_two_streams_already_share_the_weights(cat, nemo):
    gpu = cat.resolve("RTX 4090")
    w = replace(custom_workload(300, 128), concurrency=2)
    p = project(nemo, Target(gpu), w, host=HOST, model=_model())
    assert p.aggregate_tps > 1.5 * p.decode_tps  # one weight read serves both
    assert p.per_user_tps == pytest.approx(p.aggregate_tps / 2, rel=1e-12)
    assert p.ttft_s == pytest.approx(2 * 300 / p.prefill_tps, rel=1e-12)
    assert any("the last of 2 simultaneous requests' wait" in n for n in p.notes)


def test_a_deep_run_beyond_the_trained_context_is_left_out_not_a_crash(cat):
    llama3 = facts_from_shape(get_shape("llama-3-8b"), "q4_k_m")  # trained on 8,192
    gpu = cat.resolve("RTX 4090")
    tg128 = project(llama3, Target(gpu), custom_workload(0, 128), host=HOST, model=_model())
    ref = Reference(gpu, "cuda", tg_tps=0.9 * tg128.decode_tps, facts=llama3,
                    deep_tg_tps=10.0, deep_tg_depth=16_384)  # fmt: skip
    p = project(llama3, Target(gpu), custom_workload(0, 128), host=HOST, model=_model(),
                reference=ref)  # fmt: skip
    assert p.decode_tps == pytest.approx(0.9 * tg128.decode_tps, rel=1e-9)  # the shallow ratio


def test_without_a_transfer_weight_another_device_is_left_alone(cat, nemo, bare):
    rtx4090, rtx3090 = bare
    model = replace(_model(), transfer={})
    tg128 = project(nemo, Target(rtx4090), custom_workload(0, 128), host=HOST, model=model)
    ref = Reference(rtx4090, "cuda", tg_tps=2 * tg128.decode_tps, facts=nemo)
    w = custom_workload(512, 128)
    moved = project(nemo, Target(rtx3090), w, host=HOST, model=model, reference=ref)
    alone = project(nemo, Target(rtx3090), w, host=HOST, model=model)
    assert moved.decode_tps == pytest.approx(alone.decode_tps, rel=1e-12)


def test_a_deep_depth_without_its_speed_is_ignored(cat, nemo):
    gpu = cat.resolve("RTX 4090")
    tg128 = project(nemo, Target(gpu), custom_workload(0, 128), host=HOST, model=_model())
    ref = Reference(gpu, "cuda", tg_tps=0.9 * tg128.decode_tps, facts=nemo, deep_tg_depth=8192)
    p = project(nemo, Target(gpu), custom_workload(0, 128), host=HOST, model=_model(),
                reference=ref)  # fmt: skip
    assert p.decode_tps == pytest.approx(0.9 * tg128.decode_tps, rel=1e-9)


def test_a_mixture_of_experts_widens_the_band_by_its_own_figure(cat):
    moe = facts_from_shape(get_shape("qwen3-30b-a3b"), "q4_k_m")
    gpu = cat.resolve("RTX 4090")
    w = custom_workload(512, 128)
    plain = project(moe, Target(gpu), w, host=HOST, model=_model())  # no fitted MoE widening
    assert plain.decode_tps_low / plain.decode_tps == pytest.approx(
        _widened((0.8, 1.1), [0.10])[0], rel=1e-12)  # fmt: skip
    fitted = replace(_model(), moe_widening=0.3, moe_widening_prefill=0.7)
    p = project(moe, Target(gpu), w, host=HOST, model=fitted)
    assert p.decode_tps_high / p.decode_tps == pytest.approx(_widened((0.8, 1.1), [0.3])[1],
                                                            rel=1e-12)  # fmt: skip
    # prefill by its own figure: MoE prompts miss more than MoE decode does
    assert p.prefill_tps_low / p.prefill_tps == pytest.approx(_widened((0.7, 1.2), [0.7])[0],
                                                             rel=1e-12)  # fmt: skip


def test_what_does_not_fit_has_nothing_on_the_device(cat):
    f70 = facts_from_shape(get_shape("llama-3-70b"), "q4_k_m")
    p = project(f70, Target(cat.resolve("RTX 3060 12GB")), custom_workload(512, 128),
                host=Host(16 * GiB, 50e9), model=_model())  # fmt: skip
    assert p.fits == "no" and p.offloaded_share == 0.0 and p.basis == "spec-only"


def test_a_carried_figure_on_a_device_with_published_data_keeps_that_label(cat, nemo):
    gpu = cat.resolve("RTX 4090")  # shipped llama.cpp CUDA results for it
    ref = Reference(gpu, "cuda", tg_tps=60.0, pp_tps=3000.0)
    deep = project(nemo, Target(gpu), custom_workload(0, 128, history_tokens=8192), host=HOST,
                   reference=ref, model=MODEL,
)  # fmt: skip
    assert deep.decode_basis == "published"
    assert any("This run did not measure decode " in n for n in deep.notes)
