"""GGUF headers the app did not write (tests/fixtures/gguf: built with gguf's GGUFWriter from the
published configs and tensor lists of Gemma 2 9B, Llama 3.1 8B, Qwen3-30B-A3B, OpenELM-270M and
DeepSeek-V2-Lite), against facts computed by hand in expected.json (each with its derivation):
sliding windows, grouped-query attention, per-layer KV heads, experts, value length != key
length."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.core.model.gguf_facts import facts_from_gguf

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "gguf"
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))["files"]


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def case(request):
    name = request.param
    return EXPECTED[name], facts_from_gguf(HERE / name, require_data=False)


def test_geometry(case):
    e, f = case
    assert f.architecture == e["architecture"]
    assert (f.n_layers, f.n_embd, f.n_heads, f.n_kv_heads) == (
        e["n_layers"], e["n_embd"], e["n_heads"], e["n_kv_heads"]
    )  # fmt: skip
    assert (f.head_dim, f.value_head_dim) == (e["head_dim"], e["value_head_dim"])
    assert f.context_length == e["context_length"]
    assert f.vocab_size == e["vocab_size"]  # not the 4 tokens the fixture's list carries


def test_parameters_and_bytes(case):
    e, f = case
    assert f.n_params == e["n_params"]
    assert f.weights_bytes == e["weights_bytes"]
    if e.get("n_expert"):
        assert (f.n_expert, f.n_expert_used) == (e["n_expert"], e["n_expert_used"])
        assert f.active_weights_bytes == pytest.approx(e["active_weights_bytes"], rel=1e-9)


def test_kv_cache_per_token_and_at_depth(case):
    e, f = case
    assert f.kv_bytes_per_token() == e["kv_bytes_per_token_f16"]
    for depth, expected in e["kv_cache_bytes_f16"].items():
        assert f.kv_cache_bytes(int(depth)) == expected, depth


def test_sliding_window_layers(case):
    e, f = case
    swa = [i for i, s in enumerate(f.swa_layers) if s]
    assert swa == e.get("swa_layers", [])
