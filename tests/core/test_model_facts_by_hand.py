"""Model facts worked out by hand: KV bytes per element from ggml's block layouts (a Q8_0 block
is 32 values in 34 bytes: a 2-byte scale and 32 bytes; Q4_0 18, Q4_1 20, Q5_0 22, Q5_1 24),
sliding-window layers in the cache and in the FLOPs, MoE's active share, what counts as
quantised, llama-quantize's 70B class, and a saved run's facts read back."""

from __future__ import annotations

import pytest

from advisor.core.model.facts import ModelFacts, facts_from_shape, mix_context
from advisor.core.model.shapes import get_shape

LLAMA2_ELEMENTS_PER_TOKEN = 32 * 32 * (128 + 128)  # layers x KV heads x (K + V dims)


@pytest.fixture(scope="module")
def llama2():
    return facts_from_shape(get_shape("llama-2-7b"), "q4_0")


@pytest.mark.parametrize(
    ("cache", "bytes_per_element"),
    [("f32", 4), ("f16", 2), ("bf16", 2), ("q8_0", 34 / 32), ("q5_1", 24 / 32),
     ("q5_0", 22 / 32), ("q4_1", 20 / 32), ("q4_0", 18 / 32)],
)  # fmt: skip
def test_kv_bytes_for_every_cache_type(llama2, cache, bytes_per_element):
    expected = LLAMA2_ELEMENTS_PER_TOKEN * bytes_per_element
    assert llama2.kv_bytes_per_token(cache) == pytest.approx(expected, rel=1e-12)
    assert llama2.kv_cache_bytes(1000, cache) == pytest.approx(1000 * expected, rel=1e-12)


def _facts(**kw):
    base = dict(architecture="gemma2", name="t", file_type="Q8_0", n_params=1000,
                weights_bytes=1000, active_params=1000, active_weights_bytes=1000, n_layers=4,
                n_embd=64, n_heads=4, n_kv_heads=2, head_dim=16, value_head_dim=8,
                context_length=8192, vocab_size=100)  # fmt: skip
    base.update(kw)
    return ModelFacts(**base)


def test_sliding_window_layers_hold_their_window_in_the_cache_and_the_flops():
    # layers 0 and 2 are local with a 100-token window; 1 and 3 see everything
    f = _facts(sliding_window=100, swa_layers=(True, False, True, False), n_swa_layers=2)
    per_layer_token = 2 * (16 + 8) * 2  # 2 KV heads x (K 16 + V 8) x f16
    assert f.kv_cache_bytes(50) == 4 * 50 * per_layer_token  # under the window: all alike
    assert f.kv_cache_bytes(1000) == (2 * 100 + 2 * 1000) * per_layer_token
    assert f.kv_bytes_per_token() == 4 * per_layer_token
    attn_per_token_layer = 2 * 4 * (16 + 8)  # 2 x heads x (k + v dims)
    assert f.flops_per_token(1000) == 2 * 1000 + (2 * 100 + 2 * 1000) * attn_per_token_layer
    assert f.decode_bytes_per_token(1000) == 1000 + f.kv_cache_bytes(1000)
    no_window = _facts(swa_layers=(True, False, True, False))  # a pattern but no window size
    assert no_window.kv_cache_bytes(1000) == 4 * 1000 * per_layer_token


def test_per_layer_kv_heads_are_summed_layer_by_layer():
    f = _facts(kv_heads_per_layer=(1, 2, 3, 4))
    assert f.kv_bytes_per_token("f32") == (1 + 2 + 3 + 4) * (16 + 8) * 4


def test_quantised_means_most_bytes_in_block_types():
    assert _facts(weights_bytes=100, bytes_by_type={"Q4_K": 60, "F32": 40}).is_quantized
    assert not _facts(weights_bytes=100, bytes_by_type={"Q4_K": 50, "F16": 50}).is_quantized
    assert not _facts(weights_bytes=100, bytes_by_type={"BF16": 90, "F32": 10}).is_quantized
    assert _facts(weights_bytes=100, bytes_by_type={"Q8_0": 100}).is_quantized


def test_one_expert_is_not_a_mixture():
    assert not _facts(n_expert=1, n_expert_used=1).is_moe
    assert _facts(n_expert=2, n_expert_used=1).is_moe


def test_llama_quantize_70b_class_and_grouped_query_ratio():
    big = mix_context(get_shape("llama-3-70b"))
    assert big.is_70b_class and big.n_gqa == 64 // 8 and big.n_layers == 80
    assert not mix_context(get_shape("llama-3-8b")).is_70b_class
    assert mix_context(get_shape("llama-2-7b")).n_gqa == 1  # no grouped-query attention


def test_a_mixture_of_experts_from_its_shape():
    shape = get_shape("qwen3-30b-a3b")
    f = facts_from_shape(shape, "q4_k_m")
    assert f.n_ff == shape.n_ff_expert and f.is_moe
    assert f.n_expert_used / f.n_expert == 8 / 128
    assert f.active_params < 0.15 * f.n_params  # about 3B of 30B read per token


def test_facts_survive_a_save_and_a_load(llama2):
    data = llama2.to_json()
    assert data["kv_bytes_per_token"] == LLAMA2_ELEMENTS_PER_TOKEN * 2
    assert data["kv_bytes_per_token_by_cache_type"]["q4_0"] == LLAMA2_ELEMENTS_PER_TOKEN * 18 / 32
    assert data["kv_cache_bytes_at_context"] == 4096 * LLAMA2_ELEMENTS_PER_TOKEN * 2
    data["some_future_key"] = 1  # ignored
    again = ModelFacts.from_json(data)
    assert again == llama2
    swa = _facts(swa_layers=(True, False, True, False), kv_heads_per_layer=(1, 2, 1, 2))
    assert ModelFacts.from_json(swa.to_json()) == swa


def test_sliding_window_periods_are_llama_cpps():
    from advisor.core.model.facts import SWA_PERIOD_BY_ARCH

    # llama.cpp src/llama-model.cpp, hparams.set_swa_pattern(n) per architecture (llama4:
    # chunked attention, "3 chunked - 1 full")
    assert SWA_PERIOD_BY_ARCH == {
        "gemma2": 2,
        "gemma3": 6,
        "gpt-oss": 2,
        "cohere2": 4,
        "llama4": 4,
    }


def test_defaults_of_a_dense_model_without_windows():
    f = _facts()
    assert (f.n_expert, f.n_expert_used, f.n_swa_layers, f.n_tensors) == (0, 0, 0, 0)
    assert f.sliding_window is None and f.n_ff is None
    assert f.flops_per_token() == 2 * f.active_params  # no context: the weights alone


def test_the_summary_adds_bytes_and_parameters_per_type():
    from advisor.core.model.facts import TensorRecord, summarise_tensors

    tensors = [TensorRecord("a", (32, 2), "Q8_0", 64, 68),
               TensorRecord("b", (32, 4), "Q8_0", 128, 136),
               TensorRecord("c", (8,), "F32", 8, 32)]  # fmt: skip
    s = summarise_tensors(tensors, 0, 0)
    assert s["bytes_by_type"] == {"Q8_0": 204, "F32": 32}
    assert s["params_by_type"] == {"Q8_0": 192, "F32": 8}
    assert (s["n_params"], s["weights_bytes"], s["n_tensors"]) == (200, 236, 3)
    assert list(s["bytes_by_type"]) == ["Q8_0", "F32"]  # largest first


def test_one_expert_is_read_whole_whatever_its_used_count():
    from advisor.core.model.facts import TensorRecord, summarise_tensors

    exps = [TensorRecord("blk.0.ffn_up_exps.weight", (32, 4, 1), "Q8_0", 128, 136)]
    assert summarise_tensors(exps, 1, 0)["active_params"] == 128  # not a mixture: no routing
    assert summarise_tensors(exps, 4, 1)["active_params"] == 32  # 1 of 4 experts
