"""Placement, by hand: llama.cpp's semantics (-ngl keeps the *first* layers on the CPU,
--n-cpu-moe the experts of the *first* N layers), what each side holds and reads per token,
what a prompt micro-batch copies over the link, and the host's RAM and link figures."""

from __future__ import annotations

import pytest

from advisor.core.hardware.profile import Host, host_from_report
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.physics.placement import (
    Placement,
    link_bytes_per_s,
    prompt_copy_bytes,
    rated_ram_bandwidth,
    residency,
)


@pytest.fixture(scope="module")
def qwen():
    return facts_from_shape(get_shape("qwen3-30b-a3b"), "q4_k_m")


@pytest.fixture(scope="module")
def llama():
    return facts_from_shape(get_shape("llama-2-13b"), "q4_k_m")


def test_every_byte_lives_somewhere_once(qwen, llama):
    for facts in (qwen, llama):
        for p in (Placement(), Placement(gpu_layers=10), Placement(cpu_moe=20), Placement(0)):
            r = residency(facts, p)
            head_twice = facts.lookup_bytes == 0  # a tied head loads on both sides
            total = facts.weights_bytes + (r.cpu_bytes if head_twice and p.gpu_layers else 0)
            assert r.gpu_bytes + r.cpu_bytes == pytest.approx(total, rel=1e-6), (facts.name, p)


def test_gpu_layers_keeps_the_first_layers_on_the_cpu(llama):
    """-ngl N: layer il is on the GPU when il >= n_layer + 1 - N (the output layer counts as
    one); -ngl 1 puts only the output head on the GPU."""
    n = llama.n_layers
    assert Placement(gpu_layers=n + 1).first_gpu_layer(llama) == 0
    assert Placement(gpu_layers=1).first_gpu_layer(llama) == n
    assert residency(llama, Placement(gpu_layers=1)).gpu_layers == 0
    r = residency(llama, Placement(gpu_layers=11))  # the last 10 blocks and the head
    assert r.gpu_layers == 10 and r.kv_gpu_share == pytest.approx(10 / n)
    # Q4_K_M gives some blocks more bits than others (llama.cpp's use_more_bits): summed
    assert r.cpu_other_bytes == pytest.approx(sum(b[0] for b in llama.blocks[: n - 10]))
    assert Placement(gpu_layers=11).llama_args(llama) == ["-ngl", "11"]
    assert "the first 30 of 40 layers in system RAM" in Placement(gpu_layers=11).describe(llama)


def test_cpu_moe_keeps_the_first_layers_experts_in_ram(qwen):
    r = residency(qwen, Placement(cpu_moe=12))
    experts = sum(b[1] for b in qwen.blocks[:12])
    assert r.cpu_expert_bytes == pytest.approx(experts, rel=1e-9)
    assert r.cpu_expert_layers == 12 and r.gpu_layers == qwen.n_layers
    assert r.kv_gpu_share == 1.0  # attention, and its cache, stay on the card
    k_over_e = qwen.n_expert_used / qwen.n_expert
    assert r.read_bytes("cpu") == pytest.approx(experts * k_over_e, rel=1e-9)
    # a dense model has no experts to keep back
    dense = facts_from_shape(get_shape("llama-2-7b"), "q4_0")
    assert Placement(cpu_moe=12).normalised(dense).cpu_moe == 0
    assert Placement(cpu_moe=12).llama_args(qwen) == ["-ngl", "99", "--n-cpu-moe", "12"]


def test_streams_touch_more_experts_and_prompts_copy_what_they_touch(qwen):
    r = residency(qwen, Placement(cpu_moe=48))
    k = qwen.n_expert_used / qwen.n_expert
    assert r.read_bytes("cpu", 4) == pytest.approx(r.cpu_expert_bytes * (1 - (1 - k) ** 4))
    assert prompt_copy_bytes(r, 16) == 0  # under 32 tokens the CPU does its own part
    assert prompt_copy_bytes(r, 512) == pytest.approx(r.cpu_expert_bytes, rel=1e-6)
    assert prompt_copy_bytes(r, 32) == pytest.approx(r.cpu_expert_bytes * (1 - (1 - k) ** 32))


def test_link_and_ram_figures():
    assert link_bytes_per_s(4, 16) == pytest.approx(1.969e9 * 16)
    assert link_bytes_per_s(3, 4) == pytest.approx(0.985e9 * 4)
    assert rated_ram_bandwidth("DDR5-4800", 2) == 76.8e9
    assert rated_ram_bandwidth("ddr4-3200", 4) == 102.4e9
    with pytest.raises(ValueError, match="DDR5-4800"):
        rated_ram_bandwidth("fast", 2)


def test_the_host_says_what_its_ram_figure_rests_on(recorded_report):
    host = host_from_report(recorded_report, 1.0)
    assert host.bandwidth_basis in ("measured", "rated", "assumed")
    assert host_from_report(None, 8.0).bandwidth_basis == "assumed"
    assert Host(1, 1).link_basis == "assumed"
    assert Host(1, 1, pcie_gen=4, pcie_lanes=16).link_basis == "detected"
    assert Host(1, 1, link_gbs=12.0).link_basis == "given"


def test_a_run_over_card_and_ram_is_compared_with_its_own_placement():
    """A run made with --cpu-moe: its reference carries the placement, so a measurement equal
    to the placement's prediction gives a ratio of 1, not the card alone's far larger speed."""
    from dataclasses import replace as _replace

    from advisor.core.catalogue.catalogue import load_catalogue
    from advisor.core.infra.units import GiB
    from advisor.core.predict.conditions.workloads import custom_workload
    from advisor.core.predict.fitting.shipped import load_speed_model
    from advisor.core.predict.physics.placement import ALL_LAYERS
    from advisor.core.predict.projecting.projection import Target, measured_ratios, project
    from advisor.core.predict.projecting.reference import Reference

    model = load_speed_model()
    card = load_catalogue().by_id("nvidia-geforce-rtx-3090")
    facts = facts_from_shape(get_shape("qwen3-30b-a3b"), "q4_k_m")
    host = Host(64 * GiB, 60e9, bandwidth_basis="measured")
    placement = Placement(ALL_LAYERS, 30)
    target = Target(card, backend="cuda", placement=placement)
    tg = project(facts, target, custom_workload(0, 128), host=host, model=model).decode_tps
    pp = project(facts, target, custom_workload(512, 1), host=host, model=model).prefill_tps
    ref = Reference(card, "cuda", tg, pp, facts=facts, placement=placement)
    r = measured_ratios(model, facts, ref, host)
    assert r.tg == pytest.approx(1.0, rel=0.02) and r.pp == pytest.approx(1.0, rel=0.02)
    alone = measured_ratios(model, facts, _replace(ref, placement=None), host)
    assert alone.tg < 0.8 and alone.pp < 0.8  # the card alone is predicted far faster


NARROW, WIDE = "nvidia-geforce-rtx-4060-ti", "nvidia-geforce-rtx-4070-ti-super"


def test_a_narrow_card_copies_a_prompts_experts_over_its_own_narrower_link():
    """An RTX 4060 Ti (PCIe 4.0 x8) in a PCIe 4.0 x16 PC gets half the link an RTX 4070 Ti
    SUPER (x16) gets: its placement says so, and its prompt over card and RAM is slower."""
    from advisor.core.catalogue.catalogue import load_catalogue
    from advisor.core.infra.units import GiB
    from advisor.core.predict.conditions.workloads import custom_workload
    from advisor.core.predict.fitting.shipped import load_speed_model
    from advisor.core.predict.projecting.projection import Target, project

    cat, model = load_catalogue(), load_speed_model()
    facts = facts_from_shape(get_shape("qwen3-30b-a3b"), "q4_k_m")
    host = Host(64 * GiB, 60e9, bandwidth_basis="measured", pcie_gen=4, pcie_lanes=16)
    links, prompt = {}, {}
    for name in (NARROW, WIDE):
        target = Target(cat.by_id(name), placement=Placement(999, 48))
        p = project(facts, target, custom_workload(512, 1), host=host, model=model)
        links[name], prompt[name] = p.placement["link_bytes_per_s"], p.prefill_tps
    assert links[NARROW] == pytest.approx(8 * 1.969e9)
    assert links[WIDE] == pytest.approx(16 * 1.969e9)
    assert prompt[NARROW] < 0.75 * prompt[WIDE]
