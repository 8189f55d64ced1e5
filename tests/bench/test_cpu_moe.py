"""--cpu-moe (llama.cpp's --n-cpu-moe): the runner keeps the routed experts of the first N
layers in system RAM through llama_model_params.tensor_buft_overrides, checked against
llama.cpp's own report of each tensor it moved; the patterns are llama.cpp's; a hybrid
request is planned against the memory the card really has to hold."""

from __future__ import annotations

import re
import threading

import pytest

from advisor.bench.llama_model import cpu_moe_patterns
from advisor.core.hardware.model import BackendInfo, LlamaDevice
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.runs.config import BenchConfig

EXPERTS = ("ffn_gate_exps", "ffn_down_exps", "ffn_up_exps")


def test_the_patterns_are_llama_cpps_one_per_layer():
    # common/common.h: llm_ffn_block_regex(i, LLM_FFN_EXPS_REGEX) for i < N
    assert cpu_moe_patterns(2) == [
        r"blk\.0\.ffn_(up|down|gate|gate_up)_(ch|)exps",
        r"blk\.1\.ffn_(up|down|gate|gate_up)_(ch|)exps",
    ]
    assert cpu_moe_patterns(0) == []


@pytest.mark.parametrize(
    ("name", "moved"),
    [
        ("blk.0.ffn_up_exps.weight", True),
        ("blk.1.ffn_down_exps.weight", True),
        ("blk.1.ffn_gate_exps.weight", True),
        ("blk.1.ffn_gate_up_exps.weight", True),  # fused gate+up (gpt-oss style)
        ("blk.0.ffn_up_chexps.weight", True),
        ("blk.10.ffn_up_exps.weight", False),  # layer 10 is not layer 1
        ("blk.2.ffn_up_exps.weight", False),
        ("blk.0.ffn_up_shexp.weight", False),  # the shared expert stays with its layer
        ("blk.0.ffn_gate_inp.weight", False),  # the router
        ("blk.0.attn_q.weight", False),
        ("token_embd.weight", False),
    ],
)
def test_two_layers_of_patterns_move_only_those_layers_experts(name, moved):
    # llama.cpp matches with std::regex_search (ECMAScript): these patterns mean the same there
    assert any(re.search(p, name) for p in cpu_moe_patterns(2)) is moved


def test_an_old_saved_run_without_the_field_loads_with_no_experts_in_ram():
    old = BenchConfig(model_path="m.gguf", gpu_layers=99).to_json()
    del old["cpu_moe"]
    assert BenchConfig.from_json(old).cpu_moe == 0
    again = BenchConfig.from_json(BenchConfig(model_path="m.gguf", cpu_moe=12).to_json())
    assert again.cpu_moe == 12


def test_a_negative_count_is_refused_as_damaged_data():
    from advisor.core.infra.serde import DataError

    data = BenchConfig(model_path="m.gguf").to_json() | {"cpu_moe": -1}
    with pytest.raises(DataError, match="cpu_moe"):
        BenchConfig.from_json(data)


def _one_card(free_gib: float) -> BackendInfo:
    card = LlamaDevice("CUDA0", "NVIDIA GeForce RTX 4070", "GPU", int(free_gib * GiB), 12 * GiB)
    cpu = LlamaDevice("CPU", "CPU", "CPU", 64 * GiB, 64 * GiB)
    return BackendInfo(True, ("CUDA", "CPU"), True, (card, cpu))


def test_experts_in_ram_let_a_model_larger_than_the_card_run():
    """Qwen3-30B-A3B Q4_K_M (18.5 GB) on a 12 GB card: refused whole, planned with every
    layer's experts in RAM (the card then holds about 1.3 GB: attention, router, head)."""
    from advisor.bench.runner import _plan

    facts = facts_from_shape(get_shape("qwen3-30b-a3b"), "Q4_K_M")
    backend = _one_card(11.5)
    whole, _ = _plan(BenchConfig(model_path="m.gguf"), facts, backend, 999)
    assert not whole.ok and "GiB of VRAM is free" in whole.refused
    hybrid, room = _plan(BenchConfig(model_path="m.gguf", cpu_moe=48), facts, backend, 999)
    assert (
        hybrid.ok
        and room.where == "VRAM"
        and [s.name for s in hybrid.runnable]
        == [
            "pp512",
            "tg128",
        ]
    )
    # half the experts in RAM is still too much for the card: refused with the card's figure
    half, _ = _plan(BenchConfig(model_path="m.gguf", cpu_moe=12), facts, backend, 999)
    assert not half.ok and "11.5 GiB of VRAM" in half.refused


def test_a_hybrid_request_without_a_card_is_refused_before_loading():
    from advisor.bench.runner import _plan

    facts = facts_from_shape(get_shape("qwen3-30b-a3b").with_layers(2), "Q4_0")
    cpu_only = BackendInfo(True, ("CPU",), False, (LlamaDevice("CPU", "CPU", "CPU", 8 * GiB),))
    plan, _ = _plan(BenchConfig(model_path="m.gguf", cpu_moe=4), facts, cpu_only, 0)
    assert plan.refused == (
        "This machine has no GPU for llama.cpp, so there is no card to keep the rest of the "
        "model on: --cpu-moe needs a GPU; run without it to measure the CPU."
    )


@pytest.mark.llama
def test_the_runner_moves_exactly_the_first_layers_experts_as_llama_cpp_reports(tmp_path):
    """A real load of a 3-layer Qwen3-30B-A3B (a sparse file: the weights are zeros, the
    tensors and their sizes real) with cpu_moe=2: llama.cpp reports moving blk.0's and
    blk.1's three expert tensors to the CPU buffer and nothing else; without it, nothing."""
    from advisor.bench.llama_model import LlamaModel
    from advisor.bench.synth import write_synthetic_gguf

    path = tmp_path / "qwen3-30b-a3b-L3.gguf"
    write_synthetic_gguf(path, "qwen3-30b-a3b", "q4_0", n_layers=3, sparse=True)
    facts = facts_from_shape(get_shape("qwen3-30b-a3b").with_layers(3), "q4_0")
    per_layer_mib = facts.blocks[0][1] // 2**20 // 3  # each of the three, as llama.cpp rounds

    def load(cpu_moe: int) -> tuple[str, ...]:
        # repack off: the plain CPU buffer, no repacking of the (mmapped) weights
        config = BenchConfig(model_path=str(path), cpu_moe=cpu_moe, repack=False)
        model = LlamaModel(path, config, 0, threading.Event(), lambda fraction: None)
        try:
            assert model.n_vocab == facts.vocab_size
            return model.overridden
        finally:
            model.free()

    lines = load(2)
    moved = re.compile(r"tensor (\S+) \((\d+) MiB q4_0\) buffer type overridden to CPU$")
    found = [moved.match(line) for line in lines]
    assert all(found), lines
    assert sorted(m.group(1) for m in found if m) == sorted(
        f"blk.{il}.{t}.weight" for il in (0, 1) for t in EXPERTS
    )
    assert {int(m.group(2)) for m in found if m} == {per_layer_mib}
    assert load(0) == ()


def test_experts_in_ram_of_a_dense_model_is_one_sentence_exit_2(tmp_path):
    """Refused from the file alone, before the machine is detected or anything loads."""
    from advisor.bench.synth import write_synthetic_gguf
    from tests.conftest import advisor_cli

    path = tmp_path / "dense.gguf"
    write_synthetic_gguf(path, "qwen2.5-0.5b", "q4_0", n_layers=2)
    out = advisor_cli("bench", str(path), "--cpu-moe", "4", home=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "is a dense model, with no experts to keep in RAM" in out.stderr
    out = advisor_cli("bench", str(path), "--cpu-moe", "-1", home=tmp_path)
    assert out.returncode == 2 and "--cpu-moe takes a whole number" in out.stderr


@pytest.mark.llama
def test_a_hybrid_run_on_a_machine_without_a_gpu_is_one_sentence_exit_2(tmp_path):
    """`advisor bench MODEL --cpu-moe 4` where llama.cpp has no GPU: one sentence, exit 2,
    nothing run and nothing saved."""
    import llama_cpp

    from advisor.bench.synth import write_synthetic_gguf
    from tests.conftest import advisor_cli

    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama.cpp build can offload to a GPU")
    path = tmp_path / "moe.gguf"
    write_synthetic_gguf(path, "qwen3-30b-a3b", "q4_0", n_layers=2, sparse=True)
    out = advisor_cli("bench", str(path), "--cpu-moe", "4", home=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.strip() == (
        "advisor: This machine has no GPU for llama.cpp, so there is no card to keep the rest "
        "of the model on: --cpu-moe needs a GPU; run without it to measure the CPU."
    )
    assert not [p for p in (tmp_path / "data").rglob("*") if p.is_file()]  # nothing saved
