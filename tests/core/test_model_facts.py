"""Model facts from GGUF headers (synthetic files of real shapes) and from built-in shapes."""

from __future__ import annotations

import time

import pytest

from advisor.core.model import quant
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.gguf_file import read_gguf_header
from advisor.core.model.shapes import get_shape

CASES = [
    ("llama-3.2-1b", "q4_0"),
    pytest.param(*("llama-3-8b", "q4_k_m"), marks=pytest.mark.slow),
    ("qwen2.5-0.5b", "q8_0"),
    pytest.param(*("gemma-2-9b", "q6_k"), marks=pytest.mark.slow),
    pytest.param(*("gemma-3-4b", "iq4_xs"), marks=pytest.mark.slow),
    ("phi-3-mini", "q5_k_m"),
    pytest.param(*("qwen3-30b-a3b", "q4_k_m"), marks=pytest.mark.slow),
    pytest.param(*("gpt-oss-20b", "mxfp4"), marks=pytest.mark.slow),
    pytest.param(*("mistral-nemo-12b", "f16"), marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("shape_id", "quant_label"), CASES)
def test_inspect_reports_what_the_file_was_written_with(make_synth, shape_id, quant_label):
    layers = 3
    path = make_synth(shape_id, quant_label, layers)
    shape = get_shape(shape_id).with_layers(layers)
    facts = facts_from_gguf(path)
    header = read_gguf_header(path)

    assert facts.architecture == shape.architecture
    assert facts.n_layers == layers
    assert facts.n_embd == shape.n_embd
    assert facts.n_heads == shape.n_heads
    assert facts.n_kv_heads == shape.n_kv_heads
    assert facts.head_dim == shape.head_dim
    assert facts.value_head_dim == shape.value_head_dim
    assert facts.context_length == shape.context_length
    assert facts.vocab_size == shape.vocab_size
    assert facts.n_expert == shape.n_expert
    assert facts.n_expert_used == shape.n_expert_used
    assert facts.file_type == quant.file_type(quant_label).label
    # weights bytes are exactly the sum of the tensor sizes in the header
    assert facts.weights_bytes == sum(t.n_bytes for t in header.tensors)
    assert facts.n_params == sum(t.n_elements for t in header.tensors)
    assert facts.weights_bytes < facts.file_bytes
    # and a file agrees with the shape it was written from, to the byte
    from_shape = facts_from_shape(shape, quant_label)
    assert facts.weights_bytes == from_shape.weights_bytes
    assert facts.active_weights_bytes == from_shape.active_weights_bytes
    assert facts.bytes_by_type == from_shape.bytes_by_type
    assert facts.kv_bytes_per_token() == from_shape.kv_bytes_per_token()


@pytest.mark.slow
def test_moe_file_reports_active_bytes_below_total(make_synth):
    facts = facts_from_gguf(make_synth("qwen3-30b-a3b", "q4_k_m", 3))
    assert facts.is_moe
    assert facts.active_weights_bytes < facts.weights_bytes
    assert facts.active_params < facts.n_params
    # 8 of 128 experts: the expert tensors count 1/16; the rest counts fully
    full = facts_from_shape(get_shape("qwen3-30b-a3b"), "q4_k_m")
    assert full.n_params == pytest.approx(30.5e9, rel=0.01)
    assert full.active_params == pytest.approx(3.35e9, rel=0.03)


@pytest.mark.slow
def test_sliding_window_layers_cap_the_kv_cache(make_synth):
    facts = facts_from_gguf(make_synth("gemma-2-9b", "q4_0", 4))
    assert facts.sliding_window == 4096
    assert facts.n_swa_layers == 2  # layers 0 and 2 are local, 1 and 3 global
    per_layer = facts.kv_bytes_per_token() / 4
    assert facts.kv_cache_bytes(1000) == pytest.approx(4 * per_layer * 1000)
    assert facts.kv_cache_bytes(32_768) == pytest.approx(
        2 * per_layer * 4096 + 2 * per_layer * 32_768
    )


def test_gemma3_swa_pattern_five_local_one_global():
    facts = facts_from_shape(get_shape("gemma-3-12b"), "q4_k_m")
    assert facts.n_swa_layers == 40  # 48 layers, every 6th global
    assert facts.swa_layers[:6] == (True, True, True, True, True, False)


def test_seed_mistral_nemo_figures():
    facts = facts_from_shape(get_shape("mistral-nemo-12b"), "q4_k_m")
    assert facts.weights_bytes == pytest.approx(7.47e9, rel=0.03)
    assert facts.n_params == pytest.approx(12.25e9, rel=0.005)
    assert facts.kv_bytes_per_token("f16") == 160 * 1024
    assert facts.kv_cache_bytes(32_768) == pytest.approx(5.37e9, rel=0.002)


def test_gqa_llama3_8b_kv():
    facts = facts_from_shape(get_shape("llama-3-8b"), "q4_k_m")
    assert facts.n_heads == 32 and facts.n_kv_heads == 8
    assert facts.kv_bytes_per_token("f16") == 128 * 1024
    assert facts.kv_bytes_per_token("q8_0") == 128 * 1024 * 17 // 32


def test_decode_bytes_and_flops_grow_with_depth():
    facts = facts_from_shape(get_shape("llama-3-8b"), "q4_k_m")
    # the 128,256 x 4,096 token table (Q4_K: 144 bytes per 256) is looked up, never read
    # whole or multiplied; the untied output head is multiplied by every generated token
    table = 128_256 * 4_096
    assert (facts.lookup_params, facts.lookup_bytes) == (table, table * 144 // 256)
    assert facts.output_params == table
    # the ceilings count every active weight (DESIGN.md); the speed model what is really done
    assert facts.decode_bytes_per_token(4096) == facts.active_weights_bytes + 4096 * 131_072
    assert facts.flops_per_token(0) == 2 * facts.active_params
    assert facts.step_weights_bytes == facts.active_weights_bytes - table * 144 // 256
    assert facts.prompt_flops_per_token(0) == 2 * (facts.active_params - 2 * table)
    # attention: 2 x depth x heads x (k + v head dims) per layer
    assert facts.flops_per_token(1000) - facts.flops_per_token(0) == 32 * 2 * 1000 * 32 * 256


@pytest.mark.slow
def test_header_read_is_fast_and_does_not_read_weights(make_synth):
    path = make_synth("llama-3.2-1b", "q4_0", 16)  # the full 760 MB model
    start = time.perf_counter()
    facts = facts_from_gguf(path)
    elapsed = time.perf_counter() - start
    assert facts.n_layers == 16
    assert elapsed < 1.0, f"header read took {elapsed:.2f} s"


def test_a_tied_head_is_the_table_so_decode_reads_it_whole():
    facts = facts_from_shape(get_shape("llama-3.2-1b"), "q4_k_m")  # tied embeddings
    assert facts.lookup_params == facts.lookup_bytes == 0
    assert facts.step_weights_bytes == facts.active_weights_bytes
    assert facts.output_params == 128_256 * 2_048
    assert facts.prompt_flops_per_token(0) == 2 * (facts.active_params - 128_256 * 2_048)
