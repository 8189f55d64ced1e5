"""Preflight per test, over every GPU: nothing refused that fits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from advisor.core.hardware.model import BackendInfo, LlamaDevice
from advisor.core.hardware.parsers.nvidia import parse_nvidia_smi_xml
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.runs.config import PRESETS, BenchConfig
from advisor.core.runs.preflight import available_memory, need_of_test, plan_tests

FIXTURES = Path(__file__).parents[1] / "hardware" / "fixtures" / "nvidia"


def _cuda_devices(copies: int) -> BackendInfo:
    """The llama.cpp device list a machine with this recorded GPU (nvidia-smi -q -x of an
    NVIDIA A10G, 24 GB) would give, `copies` times over: llama.cpp lists each CUDA card with
    its free memory."""
    (gpu,) = parse_nvidia_smi_xml((FIXTURES / "smi-q-x-a10g.xml").read_text())
    assert gpu.vram_total_bytes and gpu.vram_total_bytes > 22 * GiB
    free = gpu.vram_free_bytes or gpu.vram_total_bytes
    devices = tuple(
        LlamaDevice(f"CUDA{i}", gpu.name, "GPU", free, gpu.vram_total_bytes) for i in range(copies)
    )
    cpu = LlamaDevice("CPU", "CPU", "CPU", 64 * GiB, 64 * GiB)
    return BackendInfo(True, ("CUDA", "CPU"), True, (*devices, cpu))


def _thorough() -> BenchConfig:
    return BenchConfig(model_path="x.gguf", **PRESETS["thorough"])


def test_the_thorough_plan_fits_a_24gb_card():
    facts = facts_from_shape(get_shape("llama-3.1-8b"), "Q4_K_M")
    config = _thorough()
    room = available_memory(_cuda_devices(1), 999, 8 * GiB)
    assert room.where == "VRAM" and room.bytes > 22 * GiB
    plan = plan_tests(config, facts, config.tests(), room)
    assert plan.ok and not plan.skipped
    assert len(plan.runnable) == len(config.tests())
    # its largest test needs about 9-10 GiB, not the largest depth x the most streams (65+)
    largest = max(need_of_test(facts, s, config).total_bytes for s in config.tests())
    assert 8 * GiB < largest < 11 * GiB


def test_two_cards_add_up_for_a_70b():
    facts = facts_from_shape(get_shape("llama-3-70b"), "Q4_K_M")
    assert 39 * GiB < facts.weights_bytes < 41 * GiB  # the 42.5 GB file
    config = BenchConfig(model_path="x.gguf")
    one = available_memory(_cuda_devices(1), 999, 8 * GiB)
    two = available_memory(_cuda_devices(2), 999, 8 * GiB)
    assert two.where == "VRAM on 2 GPUs" and two.bytes == 2 * one.bytes
    assert not plan_tests(config, facts, config.tests(), one).ok
    plan = plan_tests(config, facts, config.tests(), two)
    assert plan.ok and len(plan.runnable) == 2


def test_a_test_that_does_not_fit_is_skipped_alone_with_its_sentence():
    facts = facts_from_shape(get_shape("llama-3.1-8b"), "Q4_K_M")
    config = _thorough()
    room = replace(available_memory(_cuda_devices(1), 999, 0), bytes=int(8.5 * GiB))
    plan = plan_tests(config, facts, config.tests(), room)
    assert plan.ok
    skipped = {s.test for s in plan.skipped}
    assert skipped == {"pp512@d32768", "tg128@d32768"}
    assert "pp512" in {s.name for s in plan.runnable}
    sentence = next(s.reason for s in plan.skipped if s.test == "tg128@d32768")
    assert sentence.startswith("tg128@d32768 was skipped: it needs about ")
    assert "GiB of VRAM is free; run it anyway" in sentence and sentence.count(".") >= 1
    # asked to run anyway: everything runs, with a note
    anyway = plan_tests(replace(config, allow_oversize=True), facts, config.tests(), room)
    assert len(anyway.runnable) == len(config.tests()) and anyway.notes


def test_unified_memory_is_counted_once_and_cpu_runs_use_ram():
    metal = LlamaDevice("Metal", "Apple M4 Max", "GPU", 48 * GiB, 48 * GiB)
    backend = BackendInfo(True, ("Metal", "CPU"), True, (metal,))
    room = available_memory(backend, 999, 60 * GiB)
    assert room.where == "unified memory" and room.bytes == 48 * GiB
    assert available_memory(backend, 0, 60 * GiB).where == "RAM"
    nothing = available_memory(BackendInfo(True, ("CPU",)), 0, None)
    facts = facts_from_shape(get_shape("llama-3.1-8b"), "Q4_K_M")
    plan = plan_tests(BenchConfig(), facts, BenchConfig().tests(), nothing)
    assert plan.ok and plan.notes == ("Available memory is unknown; trying anyway.",)


@pytest.mark.parametrize("gib", [1, 3])
def test_weights_that_do_not_fit_refuse_the_run(gib):
    facts = facts_from_shape(get_shape("llama-3.1-8b"), "Q4_K_M")
    room = replace(available_memory(_cuda_devices(1), 999, 0), bytes=gib * GiB)
    plan = plan_tests(BenchConfig(), facts, BenchConfig().tests(), room)
    assert not plan.ok and "The model alone needs about" in plan.refused
