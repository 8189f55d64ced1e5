"""The ceiling formulas against hand-computed cases (DESIGN.md's physics)."""

import pytest

from advisor.core.predict.physics import ceilings

GB = 1e9


def _facts(shape: str, quant: str = "q4_k_m"):
    from advisor.core.model.facts import facts_from_shape
    from advisor.core.model.shapes import get_shape

    return facts_from_shape(get_shape(shape), quant)


def test_kv_bytes_per_token_mistral_nemo_is_160_kib():
    # 2 (K,V) x 40 layers x 8 KV heads x 128 x 2 bytes = 163,840 B = 160 KiB
    nemo = _facts("mistral-nemo-12b")
    assert nemo.kv_bytes_per_token() == 163_840
    # 5.37 GB at 32,768 tokens
    assert nemo.kv_cache_bytes(32_768) == pytest.approx(5.37e9, rel=0.002)


def test_kv_bytes_per_token_is_gqa_aware():
    # Llama-3-8B: 32 layers, 8 KV heads of 32 query heads, head_dim 128 -> 128 KiB/token,
    # a quarter of what full multi-head attention (32 KV heads) would need
    from dataclasses import replace

    gqa = _facts("llama-3-8b")
    mha = replace(gqa, n_kv_heads=32, kv_heads_per_layer=())
    assert gqa.kv_bytes_per_token() == 131_072
    assert mha.kv_bytes_per_token() == 4 * gqa.kv_bytes_per_token()


def test_kv_bytes_per_token_cache_types():
    f = _facts("llama-3-8b")
    f16 = f.kv_bytes_per_token("f16")
    # q8_0: 34 bytes per block of 32 values; q4_0: 18 bytes per 32 values
    assert f.kv_bytes_per_token("q8_0") == pytest.approx(f16 * 17 / 32)
    assert f.kv_bytes_per_token("q4_0") == pytest.approx(f16 * 9 / 32)


@pytest.mark.parametrize(
    ("bandwidth_gbs", "expected_tps"),
    [(273, 36.5), (504, 67.5), (864, 115.7), (1008, 134.9), (3350, 448.5)],
)
def test_decode_ceiling_seed_devices(bandwidth_gbs, expected_tps):
    # seed article: 7.47 GB of weights, KV cache ignored
    assert ceilings.decode_ceiling_tps(bandwidth_gbs * GB, 7.47 * GB) == pytest.approx(
        expected_tps, rel=0.005
    )


def test_decode_ceiling_falls_with_depth():
    # at 32,768 tokens the NeMo KV cache (5.37 GB) joins the 7.47 GB of weights
    kv = 163_840 * 32_768
    at0 = ceilings.decode_ceiling_tps(273 * GB, 7.47 * GB)
    at32k = ceilings.decode_ceiling_tps(273 * GB, 7.47 * GB, kv)
    assert at32k == pytest.approx(273e9 / (7.47e9 + 163_840 * 32_768))
    assert at32k / at0 == pytest.approx(7.47 / (7.47 + 5.3687), rel=1e-3)
    # the seed's own long-chat ceiling: 273 GB/s / 12.84 GB = 21.3 t/s
    assert at32k == pytest.approx(21.26, rel=0.005)


def test_compute_ceiling():
    # 12.25 B params: 24.5 GFLOP per token; a 116.6 TFLOPS device -> 4,759 tokens/s
    assert ceilings.compute_ceiling_tps(116.6e12, 24.5e9) == pytest.approx(4759.2, rel=1e-4)


def test_decode_intensity_q4_k_m():
    # seed: single-user decode of Q4_K_M (0.61 bytes/param) is about 3.3 FLOP/byte
    assert ceilings.arithmetic_intensity(2 * 12.25e9, 7.47e9) == pytest.approx(3.28, rel=0.01)


def test_batched_decode_shares_the_weight_read():
    # B streams, weights 7.47 GB, 100 MB of KV per stream, 273 GB/s, no compute cap
    b = ceilings.batched_decode_ceiling(4, 273 * GB, 7.47 * GB, 0.1 * GB)
    assert b.aggregate_tps == pytest.approx(4 * 273 / (7.47 + 0.4))
    assert b.per_stream_tps == pytest.approx(b.aggregate_tps / 4)
    assert b.limited_by == "bandwidth"
    one = ceilings.batched_decode_ceiling(1, 273 * GB, 7.47 * GB, 0.1 * GB)
    assert b.aggregate_tps > 3.5 * one.aggregate_tps  # nearly 4x the throughput ...
    assert b.per_stream_tps < one.per_stream_tps  # ... but each stream is slower


def test_batched_decode_capped_by_compute():
    # 32 streams would stream 32 x 273 / (7.47 + 1.6) = 963 t/s, but 10 TFLOPS at 50 GFLOP
    # per token allows 200
    b = ceilings.batched_decode_ceiling(32, 273 * GB, 7.47 * GB, 0.05 * GB, 10e12, 50e9)
    assert b.memory_bound_tps == pytest.approx(32 * 273 / (7.47 + 1.6))
    assert b.aggregate_tps == pytest.approx(200.0)
    assert b.per_stream_tps == pytest.approx(6.25)
    assert b.limited_by == "compute"
    with pytest.raises(ValueError):
        ceilings.batched_decode_ceiling(0, 1, 1, 1)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "n/a"),
        (0.0002, "<1 ms"),
        (0.0, "0 ms"),
        (0.349, "349 ms"),
        (30.12, "30.1 s"),
        (600, "10.0 min"),
        (9000, "2.5 h"),
    ],
)
def test_durations_read_as_people_say_them(seconds, text):
    from advisor.core.infra.units import fmt_seconds

    assert fmt_seconds(seconds) == text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [(0.93, 1.46, "0.9–1.5"), (120.4, 169.6, "120–170"), (1200, 1800, "1,200–1,800"),
     (None, 5.0, "—"), (0.0, 5.0, "—")],
)  # fmt: skip
def test_a_band_keeps_a_decimal_where_its_ends_are_small(low, high, text):
    from advisor.core.infra.units import fmt_band

    assert fmt_band(low, high) == text
    assert fmt_band(0.93, 1.46, "-") == "0.9-1.5"


def test_prefill_bytes_follow_the_cache_type_and_micro_batch():
    from advisor.core.model.facts import facts_from_shape
    from advisor.core.model.shapes import get_shape
    from advisor.core.predict.advising.explain import explain_test
    from advisor.core.runs.results import TestResult

    facts = facts_from_shape(get_shape("llama-3-8b"), "q4_k_m")
    t = TestResult(
        name="pp512@d4096", kind="prefill", n_prompt=512, n_gen=0, depth=4096, batch=1,
        samples_s=(5.12,), tokens_per_s=100.0,
    )  # fmt: skip
    f16 = explain_test(t, facts, 1e11, None, 1e13, "f16")
    q4 = explain_test(t, facts, 1e11, None, 1e13, "q4_0")
    assert q4.bytes_per_token < f16.bytes_per_token
    kv_saved = facts.kv_cache_bytes(4608, "f16") - facts.kv_cache_bytes(4608, "q4_0")
    assert (f16.bytes_per_token - q4.bytes_per_token) * 512 == pytest.approx(kv_saved)
    halves = explain_test(t, facts, 1e11, None, 1e13, "f16", n_ubatch=256)
    extra = (halves.bytes_per_token - f16.bytes_per_token) * 512
    assert extra == pytest.approx(facts.active_weights_bytes)  # one more pass over the weights
