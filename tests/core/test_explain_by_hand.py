"""The explanation of prefill, deep and batched decode, and the assembled run, each figure
worked out here from the model's published geometry (Llama-2-7B: 32 layers, 32 heads of 128,
no grouped-query attention), not read back from the code."""

from __future__ import annotations

import math

import pytest

from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.advising.explain import explain_test, finish_run
from advisor.core.runs.config import BenchConfig, TestSpec
from advisor.core.runs.results import LlamaInfo, RunHardware
from advisor.core.runs.stats import summarise_samples

KV_PER_TOKEN = 2 * 32 * 32 * 128 * 2  # K and V, 32 layers x 32 heads x 128, f16: 524,288 B
ATTN_FLOPS_PER_CONTEXT_TOKEN = 32 * 2 * 32 * (128 + 128)  # per layer: 2 x heads x (k + v dim)


@pytest.fixture(scope="module")
def llama2():
    return facts_from_shape(get_shape("llama-2-7b"), "q4_0")


def _test(kind, n, depth, batch, seconds):
    spec = TestSpec(kind, n if kind == "prefill" else 0, n if kind == "decode" else 0, depth, batch)
    return summarise_samples(spec, seconds, None)


def _flops(facts, context_tokens):
    return 2.0 * facts.active_params + ATTN_FLOPS_PER_CONTEXT_TOKEN * context_tokens


def test_attention_flops_and_kv_by_hand(llama2):
    assert llama2.kv_cache_bytes(1000) == 1000 * KV_PER_TOKEN
    assert llama2.flops_per_token(1000) == pytest.approx(_flops(llama2, 1000), rel=1e-12)


def test_a_prefill_reads_the_weights_once_per_micro_batch(llama2):
    # pp1026 at depth 0: ceil(1026 / 512) = 3 micro-batches, each reads the weights; the cache
    # ends 1026 tokens long; attention is over 513 tokens on average
    test = explain_test(_test("prefill", 1026, 0, 1, [1.0, 1.0]), llama2, None, None, 100e12)
    w = llama2.active_weights_bytes
    total = 3 * w + 1026 * KV_PER_TOKEN
    flops = _flops(llama2, 513)
    assert test.bytes_per_token == pytest.approx(total / 1026, rel=1e-12)
    assert test.flops_per_token == pytest.approx(flops, rel=1e-12)
    assert test.prefill_ceiling_tps == pytest.approx(100e12 / flops, rel=1e-12)
    assert test.efficiency == pytest.approx(1026 / (100e12 / flops), rel=1e-12)
    assert test.achieved_flops_per_s == pytest.approx(1026 * flops, rel=1e-12)
    assert test.arithmetic_intensity == pytest.approx(1026 * flops / total, rel=1e-12)

    # a smaller micro-batch reads the weights more often: ceil(1026 / 128) = 9
    small = explain_test(_test("prefill", 1026, 0, 1, [1.0, 1.0]), llama2, None, None, None,
                         n_ubatch=128)  # fmt: skip
    assert small.bytes_per_token == pytest.approx((9 * w + 1026 * KV_PER_TOKEN) / 1026, rel=1e-12)
    assert small.prefill_ceiling_tps is None and small.efficiency is None


def test_a_prefill_after_history_attends_to_it(llama2):
    # pp512 after 1000 tokens: attention over 1000 + 256 on average; the cache ends at 1512
    test = explain_test(_test("prefill", 512, 1000, 1, [2.0, 2.0]), llama2, None, None, 50e12)
    assert test.flops_per_token == pytest.approx(_flops(llama2, 1256), rel=1e-12)
    total = llama2.active_weights_bytes + 1512 * KV_PER_TOKEN
    assert test.bytes_per_token == pytest.approx(total / 512, rel=1e-12)


def test_a_deep_batched_decode_against_both_ceilings(llama2):
    # tg64 x 2 streams after 1000 tokens: each cache averages 1032 tokens over the test
    w = llama2.active_weights_bytes
    step = w + 2 * 1032 * KV_PER_TOKEN
    flops = _flops(llama2, 1032)
    seconds = [2.0, 2.0]  # 128 tokens in 2 s: 64 t/s in all
    memory_bound = 2 * 400e9 / step
    test = explain_test(_test("decode", 64, 1000, 2, seconds), llama2, 400e9, 300e9, 1e15)
    assert test.bytes_per_token == pytest.approx(step / 2, rel=1e-12)
    assert test.achieved_bandwidth_bytes_per_s == pytest.approx(step * 64 / 2, rel=1e-12)
    assert test.decode_ceiling_tps == pytest.approx(memory_bound, rel=1e-12)
    assert test.decode_ceiling_measured_bw_tps == pytest.approx(2 * 300e9 / step, rel=1e-12)
    assert test.efficiency == pytest.approx(64 / memory_bound, rel=1e-12)
    assert test.flops_per_token == pytest.approx(flops, rel=1e-12)
    assert test.achieved_flops_per_s == pytest.approx(flops * 64, rel=1e-12)
    assert test.arithmetic_intensity == pytest.approx(flops * 2 / step, rel=1e-12)

    # a small compute figure makes compute the lower ceiling
    slow = explain_test(_test("decode", 64, 1000, 2, seconds), llama2, 400e9, None, 1e12)
    assert slow.decode_ceiling_tps == pytest.approx(1e12 / flops, rel=1e-12)
    assert slow.decode_ceiling_measured_bw_tps is None

    # only a measured bandwidth: the ceiling rests on it
    measured = explain_test(_test("decode", 64, 1000, 2, seconds), llama2, None, 300e9, None)
    assert measured.decode_ceiling_tps == pytest.approx(2 * 300e9 / step, rel=1e-12)
    bare = explain_test(_test("decode", 64, 1000, 2, seconds), llama2, None, None, None)
    assert bare.decode_ceiling_tps is None and bare.efficiency is None


def test_the_run_takes_time_to_first_token_from_the_plain_tests(llama2):
    tests = [
        _test("decode", 64, 0, 4, [1.0, 1.0]),  # batched: 256 t/s, not the single stream
        _test("prefill", 512, 4096, 1, [4.0, 4.0]),  # deep: 128 t/s, not the empty cache
        _test("decode", 64, 4096, 1, [8.0, 8.0]),  # deep decode: 8 t/s
        _test("prefill", 512, 0, 1, [0.5, 0.5]),  # 1024 t/s
        _test("decode", 64, 0, 1, [2.0, 2.0]),  # 32 t/s
    ]
    run = finish_run("r1", BenchConfig(bandwidth_spec_bytes_per_s=100e9), llama2, tests)
    assert run.ttft_s == pytest.approx(512 / 1024 + 1 / 32, rel=1e-12)
    assert [t.name for t in run.tests] == [t.name for t in tests]
    assert all(t.decode_ceiling_tps for t in run.tests if t.kind == "decode")
    assert not run.busy and not run.noisy and run.notes == ()

    no_decode = finish_run("r2", BenchConfig(), llama2, tests[1:2] + tests[3:4])
    assert no_decode.ttft_s is None
    stalled = _test("decode", 64, 0, 1, [0.0])  # no usable repetition: 0 t/s
    assert finish_run("r3", BenchConfig(), llama2, [tests[3], stalled]).ttft_s is None
    assert math.isfinite(run.created_at)
    # nothing said about the machine or llama.cpp: empty records, not None
    assert run.hardware == RunHardware() and run.llama == LlamaInfo()


def test_busy_is_judged_on_the_busiest_test():
    from dataclasses import replace

    from advisor.core.predict.advising.explain import run_notes

    calm = replace(_test("decode", 64, 0, 1, [2.0, 2.0]), other_cpu_load=0.05)
    loud = replace(_test("prefill", 512, 0, 1, [1.0, 1.0]), other_cpu_load=0.5)
    busy, noisy, notes = run_notes([calm, loud, calm])
    assert busy and not noisy
    assert notes == ["Other programs used up to 50% of the CPU during the run, so these numbers "
                     "are probably low; close other programs and run it again."]  # fmt: skip
    assert run_notes([calm, replace(loud, other_cpu_load=None)]) == (False, False, [])
