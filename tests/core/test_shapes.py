"""Built-in shapes: hyper-parameters, layout and weights sizes against published GGUF files."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from advisor.core.model.facts import facts_from_shape
from advisor.core.model.quant import COMMON_QUANTS, UnknownQuantError, file_type
from advisor.core.model.shapes import UnknownShapeError, all_shapes, get_shape, tensor_layout

PUBLISHED = Path(__file__).parent / "data" / "published_gguf_sizes.csv"
REQUIRED = """llama-2-7b llama-2-13b llama-3-8b llama-3-70b llama-3.2-1b llama-3.2-3b mistral-7b
mistral-nemo-12b mistral-small-24b qwen2.5-7b qwen2.5-14b qwen2.5-32b qwen2.5-72b gemma-2-9b
gemma-2-27b gemma-3-12b phi-3-mini qwen3-30b-a3b gpt-oss-20b""".split()


def _published_rows():
    with PUBLISHED.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_catalogue_has_the_required_shapes_each_with_a_source():
    ids = {s.id for s in all_shapes()}
    assert set(REQUIRED) <= ids
    for s in all_shapes():
        assert s.source.startswith("https://"), s.id


@pytest.mark.parametrize(
    "row",
    [r for r in _published_rows() if r["current_mix"] == "yes"],
    ids=lambda r: f"{r['shape_id']}-{r['quant']}-{r['repository'].split('/')[0]}",
)
def test_weights_size_within_3_percent_of_published_files(row):
    facts = facts_from_shape(get_shape(row["shape_id"]), row["quant"])
    published = int(row["file_bytes"])
    assert facts.weights_bytes == pytest.approx(published, rel=0.03), row["source_url"]


def test_published_sample_is_broad():
    rows = [r for r in _published_rows() if r["current_mix"] == "yes"]
    assert len({r["shape_id"] for r in rows}) >= 10
    assert len({r["quant"] for r in rows}) >= 5
    assert len(rows) >= 30


def test_every_shape_and_common_quant_has_a_size_ordering():
    for s in all_shapes():
        sizes = {q: facts_from_shape(s, q).weights_bytes for q in COMMON_QUANTS}
        assert sizes["f16"] > sizes["q8_0"] > sizes["q4_k_m"], s.id
        assert sizes["q4_k_m"] > sizes["q4_0"] or s.native_expert_type, s.id


def test_q4_k_m_mix_follows_llama_quantize():
    shape = get_shape("llama-3-8b")
    from advisor.core.model.facts import typed_layout

    types = {name: t for name, _, t in typed_layout(shape, "q4_k_m")}
    from advisor.core.model.quant import T

    assert types["output.weight"] == T.Q6_K
    assert types["token_embd.weight"] == T.Q4_K
    assert types["blk.0.attn_norm.weight"] == T.F32
    # use_more_bits: the first and last eighth of the layers, and every third in between
    assert types["blk.0.ffn_down.weight"] == T.Q6_K
    assert types["blk.4.ffn_down.weight"] == T.Q4_K
    assert types["blk.6.ffn_down.weight"] == T.Q6_K
    assert types["blk.31.attn_v.weight"] == T.Q6_K
    assert types["blk.5.attn_v.weight"] == T.Q4_K
    assert types["blk.5.attn_q.weight"] == T.Q4_K


def test_tied_embeddings_get_the_output_type():
    from advisor.core.model.facts import typed_layout
    from advisor.core.model.quant import T

    types = {name: t for name, _, t in typed_layout(get_shape("llama-3.2-1b"), "q4_0")}
    assert "output.weight" not in types
    assert types["token_embd.weight"] == T.Q6_K


def test_layout_dims_are_gguf_order():
    layout = dict(tensor_layout(get_shape("qwen3-30b-a3b").with_layers(1)))
    assert layout["token_embd.weight"] == (2048, 151936)
    assert layout["blk.0.attn_q.weight"] == (2048, 32 * 128)
    assert layout["blk.0.attn_k.weight"] == (2048, 4 * 128)
    assert layout["blk.0.ffn_gate_exps.weight"] == (2048, 768, 128)
    assert layout["blk.0.ffn_down_exps.weight"] == (768, 2048, 128)
    assert layout["blk.0.attn_q_norm.weight"] == (128,)


def test_unknown_names_are_clear_errors():
    with pytest.raises(UnknownShapeError, match="Did you mean llama-3-8b"):
        get_shape("llama-3-8")
    with pytest.raises(UnknownQuantError, match="Q4_K_M"):
        file_type("q4_k_z")
    assert get_shape("Mistral-NeMo-12B").id == "mistral-nemo-12b"
