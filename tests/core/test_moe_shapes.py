"""The mixture-of-experts shapes people run with the experts in system RAM (--n-cpu-moe):
GLM-4.5(-Air), Qwen3 235B-A22B, Llama 4 Scout, DeepSeek V3/R1, ERNIE 4.5 21B-A3B and
Mixtral 8x22B. Their layouts against what llama.cpp reports for the real files, their published
sizes, and the KV cache llama.cpp really keeps (MLA's one latent, no cache for the MTP block)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from advisor.bench.synth import write_synthetic_gguf
from advisor.core.model.facts import ModelFacts, facts_from_shape
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.shapes import get_shape, tensor_layout
from tests.conftest import advisor_cli

NEW_SHAPES = (
    "glm-4.5-air",
    "glm-4.5",
    "qwen3-235b-a22b",
    "llama-4-scout-17b-16e",
    "deepseek-v3-671b",
    "ernie-4.5-21b-a3b",
    "mixtral-8x22b",
)

# what llama.cpp's print_info says of the real GGUFs (public load logs quoted in each shape's
# source_note): tensors in the file and parameters
LLAMA_CPP_REPORTED = {
    "glm-4.5-air": (803, 110.469e9),
    "glm-4.5": (1761, 358.338e9),
    "qwen3-235b-a22b": (None, 235.094e9),
}

# KV cache bytes per token in f16, worked by hand from llama.cpp's cache layout
KV_F16_BYTES_PER_TOKEN = {
    "glm-4.5-air": 46 * 8 * (128 + 128) * 2,  # the 47th block (NextN) has no cache
    "glm-4.5": 92 * 8 * (128 + 128) * 2,
    "qwen3-235b-a22b": 94 * 4 * (128 + 128) * 2,
    "llama-4-scout-17b-16e": 48 * 8 * (128 + 128) * 2,
    "deepseek-v3-671b": 61 * (512 + 64) * 2,  # one latent of kv_lora_rank + rope, no V
    "ernie-4.5-21b-a3b": 28 * 4 * (128 + 128) * 2,
    "mixtral-8x22b": 56 * 8 * (128 + 128) * 2,
}


def _without_mtp_block(shape_id: str, quant: str = "f16") -> ModelFacts:
    """Facts of the shape with its MTP block removed: what the model cards count."""
    shape = get_shape(shape_id)
    main = dataclasses.replace(shape, n_layers=shape.n_main_layers, n_nextn_layers=0)
    return facts_from_shape(main, quant)


def test_each_new_shape_cites_its_config_and_how_it_was_checked():
    for shape_id in NEW_SHAPES:
        shape = get_shape(shape_id)
        assert shape.source.startswith("https://huggingface.co/"), shape_id
        assert shape.source.endswith("/config.json"), shape_id
        assert "llama.cpp" in shape.source_note and len(shape.source_note) > 300, shape_id
    assert "Qwen3-Coder-30B-A3B" in get_shape("qwen3-30b-a3b").source_note


@pytest.mark.parametrize("shape_id", sorted(LLAMA_CPP_REPORTED))
def test_layout_is_the_real_files(shape_id):
    n_tensors, n_params = LLAMA_CPP_REPORTED[shape_id]
    facts = facts_from_shape(get_shape(shape_id), "f16")
    if n_tensors is not None:
        assert facts.n_tensors == n_tensors
    assert facts.n_params == pytest.approx(n_params, abs=0.0005e9)


def test_qwen3_235b_q4_k_m_weighs_what_the_published_file_does():
    # llama.cpp: "model size = 132.386 GiB" for Qwen3-235B-A22B Q4_K_M
    facts = facts_from_shape(get_shape("qwen3-235b-a22b"), "q4_k_m")
    assert facts.weights_bytes / 2**30 == pytest.approx(132.386, abs=0.005)


@pytest.mark.parametrize(
    ("shape_id", "total", "active", "embeddings_in_active", "rel"),
    [
        ("glm-4.5-air", 106e9, 12e9, False, 0.015),
        ("glm-4.5", 355e9, 32e9, False, 0.01),
        ("qwen3-235b-a22b", 235e9, 22e9, True, 0.01),
        # Meta's 109B has the vision tower (0.9B) besides the text model
        ("llama-4-scout-17b-16e", 109e9, 17e9, True, 0.015),
        ("deepseek-v3-671b", 671e9, 37e9, True, 0.015),
        # "21B-A3B": 21.8B in all, 3.1B a token without the (tied) token table
        ("ernie-4.5-21b-a3b", 21.8e9, 3e9, False, 0.035),
        ("mixtral-8x22b", 141e9, 39e9, True, 0.01),
    ],
)
def test_published_parameter_counts(shape_id, total, active, embeddings_in_active, rel):
    facts = _without_mtp_block(shape_id)
    active_params = facts.active_params
    if not embeddings_in_active:  # GLM counts neither the token table nor the output head
        active_params -= facts.lookup_params + facts.output_params
    # model cards round to whole billions
    assert facts.n_params == pytest.approx(total, rel=rel)
    assert active_params == pytest.approx(active, rel=max(rel, 0.02))


@pytest.mark.parametrize("shape_id", NEW_SHAPES)
def test_kv_bytes_per_token_follow_llama_cpps_cache(shape_id):
    facts = facts_from_shape(get_shape(shape_id), "q4_k_m")
    assert facts.kv_bytes_per_token("f16") == KV_F16_BYTES_PER_TOKEN[shape_id]
    assert facts.kv_bytes_per_token("q8_0") == pytest.approx(
        KV_F16_BYTES_PER_TOKEN[shape_id] / 2 * 34 / 32
    )


def test_deepseek_mla_caches_one_latent_not_128_heads():
    shape = get_shape("deepseek-v3-671b")
    facts = facts_from_shape(shape, "q4_k_m")
    assert (facts.n_kv_heads, facts.head_dim, facts.value_head_dim) == (1, 576, 512)
    assert not facts.kv_stores_values
    # 32k tokens of context: 2.3 GB, where full multi-head K and V would be 164 GB
    assert facts.kv_cache_bytes(32_768) == pytest.approx(32_768 * 70_272)
    full_heads = 61 * 128 * (192 + 128) * 2
    assert facts.kv_bytes_per_token() < full_heads / 70
    layout = dict(tensor_layout(shape.with_layers(4)))
    assert layout["blk.0.attn_kv_a_mqa.weight"] == (7168, 512 + 64)
    assert layout["blk.0.attn_k_b.weight"] == (128, 512, 128)
    assert layout["blk.0.attn_v_b.weight"] == (512, 128, 128)
    assert layout["blk.0.attn_q_b.weight"] == (1536, 128 * 192)
    assert "blk.0.attn_k.weight" not in layout and "blk.0.attn_kv_b.weight" not in layout


def test_glm_layers_dense_then_experts_then_the_mtp_block():
    shape = get_shape("glm-4.5-air")
    layout = dict(tensor_layout(shape))
    assert layout["blk.0.ffn_gate.weight"] == (4096, 10944)
    assert "blk.0.ffn_gate_exps.weight" not in layout
    assert layout["blk.1.ffn_gate_exps.weight"] == (4096, 1408, 128)
    assert layout["blk.1.ffn_up_shexp.weight"] == (4096, 1408)
    assert layout["blk.1.exp_probs_b.bias"] == (128,)
    assert layout["blk.1.attn_q.bias"] == (96 * 128,)
    assert layout["blk.1.post_attention_norm.weight"] == (4096,)
    assert "blk.1.ffn_norm.weight" not in layout
    assert layout["blk.46.nextn.eh_proj.weight"] == (8192, 4096)
    assert layout["blk.46.nextn.shared_head_head.weight"] == (4096, 151552)
    assert "blk.45.nextn.eh_proj.weight" not in layout
    # GLM-4.5 (not Air) has q/k norms and three dense layers
    big = dict(tensor_layout(get_shape("glm-4.5")))
    assert "blk.2.ffn_gate.weight" in big and "blk.3.ffn_gate_exps.weight" in big
    assert big["blk.3.attn_q_norm.weight"] == (128,)


def test_the_mtp_block_is_in_the_file_but_not_read_per_token():
    with_mtp = facts_from_shape(get_shape("glm-4.5-air"), "q4_k_m")
    without = _without_mtp_block("glm-4.5-air", "q4_k_m")
    assert with_mtp.weights_bytes > without.weights_bytes + 1e9  # embed + head + a layer
    assert with_mtp.active_weights_bytes == without.active_weights_bytes
    assert with_mtp.kv_bytes_per_token() == without.kv_bytes_per_token()
    assert with_mtp.flops_per_token(4096) == without.flops_per_token(4096)
    assert with_mtp.kv_heads_per_layer[-1] == 0 and with_mtp.n_main_layers == 46


def test_llama4_scout_chunked_attention_every_fourth_layer_global():
    facts = facts_from_shape(get_shape("llama-4-scout-17b-16e"), "q4_k_m")
    assert facts.n_swa_layers == 36 and facts.sliding_window == 8192
    assert facts.swa_layers[:4] == (True, True, True, False)
    per_layer = 8 * 256 * 2
    assert facts.kv_cache_bytes(32_768) == 12 * per_layer * 32_768 + 36 * per_layer * 8192
    layout = dict(tensor_layout(get_shape("llama-4-scout-17b-16e")))
    assert layout["blk.0.ffn_gate_exps.weight"] == (5120, 8192, 16)
    assert layout["blk.0.ffn_down_shexp.weight"] == (8192, 5120)
    assert "blk.0.exp_probs_b.bias" not in layout and "blk.0.ffn_gate.weight" not in layout


def test_cut_down_models_keep_one_of_each_kind_of_block():
    air = get_shape("glm-4.5-air").with_layers(3)
    assert (air.n_dense_lead, air.n_nextn_layers, air.n_main_layers) == (1, 1, 2)
    assert [air.has_experts(il) for il in range(3)] == [False, True, True]
    deepseek = get_shape("deepseek-v3-671b").with_layers(2)
    assert deepseek.n_dense_lead == 1 and deepseek.has_experts(1)
    assert get_shape("glm-4.5-air").with_layers(1).n_nextn_layers == 0


@pytest.mark.parametrize("shape_id", NEW_SHAPES)
def test_inspect_of_a_full_size_file_gives_the_shapes_facts(tmp_path, shape_id):
    # a sparse file: the real header and tensor table, the weights left as holes
    path = tmp_path / f"{shape_id}.gguf"
    write_synthetic_gguf(path, shape_id, "q4_k_m", sparse=True)
    from_file = facts_from_gguf(path)
    from_shape = facts_from_shape(get_shape(shape_id), "q4_k_m")
    differ_by_design = {"name", "path", "file_bytes", "source", "shape_id"}
    for f in dataclasses.fields(ModelFacts):
        if f.name in differ_by_design:
            continue
        a, b = getattr(from_file, f.name), getattr(from_shape, f.name)
        if f.name == "kv_heads_per_layer":  # the file lists them, the shape only if uneven
            a, b = tuple(a) or None, tuple(b) or (from_shape.n_kv_heads,) * from_shape.n_layers
        assert a == b, f.name
    assert from_file.kv_bytes_per_token() == KV_F16_BYTES_PER_TOKEN[shape_id]
    assert from_file.kv_cache_bytes(100_000) == from_shape.kv_cache_bytes(100_000)
    # and the command a user runs says the same
    out = advisor_cli("inspect", str(path), "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["kv_bytes_per_token"] == KV_F16_BYTES_PER_TOKEN[shape_id]
    assert shown["active_weights_bytes"] == from_shape.active_weights_bytes
    assert shown["n_params"] == from_shape.n_params
    path.unlink()


def test_llama4_file_without_a_window_gets_llama_cpps_chunks(tmp_path):
    # real Scout GGUFs carry no attention.sliding_window: llama.cpp chunks by 8192 anyway
    shape = dataclasses.replace(get_shape("llama-4-scout-17b-16e"), sliding_window=None)
    path = tmp_path / "scout.gguf"
    write_synthetic_gguf(path, shape, "q4_0", n_layers=8, sparse=True)
    facts = facts_from_gguf(path)
    assert facts.sliding_window == 8192
    assert facts.swa_layers == (True, True, True, False) * 2


def test_runs_saved_before_these_fields_still_load():
    facts = facts_from_shape(get_shape("llama-3-8b"), "q4_0").to_json()
    for key in ("kv_stores_values", "n_main_layers"):
        del facts[key]
    again = ModelFacts.from_json(json.loads(json.dumps(facts)))
    assert again.kv_stores_values and again.n_main_layers is None
    assert again.kv_bytes_per_token() == 131_072


def test_shapes_command_lists_them(tmp_path):
    out = advisor_cli("shapes", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    shapes = {s["id"]: s for s in json.loads(out.stdout)}
    for shape_id in NEW_SHAPES:
        assert shapes[shape_id]["kv_bytes_per_token"] == KV_F16_BYTES_PER_TOKEN[shape_id]
    deepseek = shapes["deepseek-v3-671b"]
    assert deepseek["kv_lora_rank"] == 512 and deepseek["n_dense_lead"] == 3
    assert deepseek["weights_bytes"]["q4_k_m"] == pytest.approx(404.5e9, rel=0.001)
    assert shapes["glm-4.5-air"]["n_nextn_layers"] == 1


def test_a_header_with_impossible_prediction_blocks_is_one_sentence():
    from advisor.core.model.gguf_facts import facts_from_header
    from advisor.core.model.gguf_file import GgufHeader, InvalidModelError, TensorInfo

    def header(nextn):
        meta = {
            "general.architecture": "glm4moe",
            "glm4moe.block_count": 3,
            "glm4moe.embedding_length": 256,
            "glm4moe.attention.head_count": 8,
            "glm4moe.attention.head_count_kv": 2,
            "glm4moe.nextn_predict_layers": nextn,
        }
        tensors = (TensorInfo("token_embd.weight", (256, 1000), 8, 0, 256_000, 272_000),)
        return GgufHeader("/m/glm.gguf", 3, 10**9, 32, 4096, meta, tensors)

    facts = facts_from_header(header(1))
    assert facts.kv_heads_per_layer == (2, 2, 0) and facts.n_main_layers == 2
    for bad in (3, -1, "1", 1.5):
        with pytest.raises(InvalidModelError, match=r"glm4moe\.nextn_predict_layers is"):
            facts_from_header(header(bad))
