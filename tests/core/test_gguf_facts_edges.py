"""Facts from a header at every edge the reader guards, with headers built in memory (no file,
no app writer): each hyper-parameter's published range at both ends, per-layer heads, sliding
windows, experts, vocabulary sources, split parts and the sentences for what is not a model.

The ranges are the published extremes with room (Llama 3.1 405B: 126 layers, 16,384 wide,
128 heads; DeepSeek V3: 256 experts; context up to 10M tokens), pinned here one by one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core.model.gguf_facts import LIMITS, facts_from_header
from advisor.core.model.gguf_file import ArraySummary, GgufHeader, InvalidModelError, TensorInfo

RANGES = {
    "block_count": (1, 1024),
    "embedding_length": (1, 131_072),
    "attention.head_count": (0, 4096),
    "attention.head_count_kv": (0, 4096),
    "attention.key_length": (1, 16_384),
    "attention.value_length": (1, 16_384),
    "feed_forward_length": (0, 1_048_576),
    "expert_feed_forward_length": (0, 1_048_576),
    "expert_count": (0, 16_384),
    "expert_used_count": (0, 16_384),
    "context_length": (0, 2**30),
    "vocab_size": (0, 2**24),
    "attention.sliding_window": (0, 2**30),
}
Q8_0 = 8  # ggml type: 34 bytes per 32 values


def _tensor(name, shape, offset=0):
    n = 1
    for d in shape:
        n *= d
    return TensorInfo(name, tuple(shape), Q8_0, offset, n, n // 32 * 34)


def _header(arch="llama", layers=2, meta=None, tensors=None, path="/m/model.gguf"):
    base = {
        "general.architecture": arch,
        "general.file_type": 7,  # MOSTLY_Q8_0
        f"{arch}.block_count": layers,
        f"{arch}.embedding_length": 256,
        f"{arch}.attention.head_count": 8,
        f"{arch}.attention.head_count_kv": 2,
        f"{arch}.feed_forward_length": 512,
        f"{arch}.context_length": 4096,
    }
    if "llama.attention.key_length" not in (meta or {}) and any(
        k.endswith(("head_count", "head_count_kv", "embedding_length")) for k in (meta or {})
    ):
        base[f"{arch}.attention.key_length"] = 64  # the head size no longer follows from them
    for k, v in (meta or {}).items():
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    if tensors is None:
        tensors = [_tensor("token_embd.weight", (256, 1000))]
        tensors += [_tensor(f"blk.{i}.attn_q.weight", (256, 256)) for i in range(layers)]
    return GgufHeader(path, 3, 10**9, 32, 4096, base, tuple(tensors))


def test_the_ranges_are_the_published_extremes():
    assert LIMITS == RANGES


@pytest.mark.parametrize("key", sorted(RANGES))
def test_each_hyper_parameter_at_both_ends_of_its_range(key):
    low, high = RANGES[key]
    meta = {f"llama.{key}": high}
    if key.startswith("expert_used"):
        meta["llama.expert_count"] = high
    if key == "attention.head_count_kv":
        meta["llama.attention.head_count"] = high
    for ok in {low, high} - {0}:
        meta[f"llama.{key}"] = ok
        facts_from_header(_header(meta=meta))  # accepted (0 is "absent" for several keys)
    for bad in (low - 1, high + 1):
        meta[f"llama.{key}"] = bad
        with pytest.raises(InvalidModelError, match=f"llama.{key} is {bad}, and real models"):
            facts_from_header(_header(meta=meta))


def test_numbers_of_the_wrong_kind_are_refused_and_floats_that_are_whole_read():
    assert facts_from_header(_header(meta={"llama.embedding_length": 256.0})).n_embd == 256
    # a hostile value is shown cut to 40 characters, on one line
    with pytest.raises(InvalidModelError) as err:
        facts_from_header(_header(meta={"llama.embedding_length": "x" * 100 + "\n"}))
    assert "embedding_length is '" + "x" * 38 + "…, and real models" in str(err.value)
    for bad in (256.5, "256", [256]):
        with pytest.raises(InvalidModelError, match="embedding_length"):
            facts_from_header(_header(meta={"llama.embedding_length": bad}))


def test_per_layer_heads_as_a_list():
    facts = facts_from_header(_header(meta={"llama.attention.head_count_kv": [2, 4]}))
    assert facts.kv_heads_per_layer == (2, 4) and facts.n_kv_heads == 4
    for bad in ([2], [2, 4, 4], [2, True], [2, 5000], [2, -1]):
        with pytest.raises(InvalidModelError, match=r"lists .* values for 2 layers"):
            facts_from_header(_header(meta={"llama.attention.head_count_kv": bad}))
    heads = facts_from_header(_header(meta={"llama.attention.head_count": [8, 4],
                                            "llama.attention.head_count_kv": None}))  # fmt: skip
    assert heads.n_heads == 8 and heads.kv_heads_per_layer == (8, 4)  # kv defaults to heads


def test_head_sizes_and_their_refusals():
    facts = facts_from_header(_header())
    assert (facts.head_dim, facts.value_head_dim) == (256 // 8, 256 // 8)
    mla = facts_from_header(_header(meta={"llama.attention.key_length": 192,
                                          "llama.attention.value_length": 128}))  # fmt: skip
    assert (mla.head_dim, mla.value_head_dim) == (192, 128)
    with pytest.raises(InvalidModelError, match="head_count is 0 or missing"):
        facts_from_header(_header(meta={"llama.attention.head_count": 0}))
    with pytest.raises(InvalidModelError, match="head_count is 0 or missing"):
        facts_from_header(_header(meta={"llama.attention.head_count": None}))
    with pytest.raises(InvalidModelError, match="more KV heads than attention heads"):
        facts_from_header(_header(meta={"llama.attention.head_count_kv": 9}))
    facts_from_header(_header(meta={"llama.attention.head_count_kv": 8}))  # equal is fine
    with pytest.raises(InvalidModelError, match="head size is 0"):
        facts_from_header(
            _header(meta={"llama.attention.head_count": 512, "llama.attention.key_length": None})
        )  # 256 // 512


def test_experts_used_never_exceed_the_experts():
    facts = facts_from_header(_header(meta={"llama.expert_count": 8, "llama.expert_used_count": 8}))
    assert (facts.n_expert, facts.n_expert_used) == (8, 8)
    one = facts_from_header(_header(meta={"llama.expert_used_count": 1}))  # dense: 0 experts
    assert (one.n_expert, one.n_expert_used) == (0, 1)
    with pytest.raises(InvalidModelError, match="uses 9 experts per token but has 8"):
        facts_from_header(_header(meta={"llama.expert_count": 8, "llama.expert_used_count": 9}))
    with pytest.raises(InvalidModelError, match="uses 2 experts per token but has 0"):
        facts_from_header(_header(meta={"llama.expert_used_count": 2}))


def test_routed_expert_tensors_count_their_used_share():
    tensors = [_tensor("blk.0.ffn_up_exps.weight", (256, 512, 8)),
               _tensor("blk.0.attn_q.weight", (256, 256))]  # fmt: skip
    meta = {"llama.expert_count": 8, "llama.expert_used_count": 2}
    facts = facts_from_header(_header(layers=1, tensors=tensors, meta=meta))
    experts, dense = 256 * 512 * 8, 256 * 256
    assert facts.n_params == experts + dense
    assert facts.active_params == experts * 2 // 8 + dense
    assert facts.active_weights_bytes == round((experts // 32 * 34) * 2 / 8 + dense // 32 * 34)


def test_feed_forward_given_per_layer_takes_the_largest():
    facts = facts_from_header(_header(meta={"llama.feed_forward_length": [512, 1024]}))
    assert facts.n_ff == 1024
    with pytest.raises(InvalidModelError, match="feed_forward_length lists 3 values for 2 layers"):
        facts_from_header(_header(meta={"llama.feed_forward_length": [512, 1024, 9]}))
    moe = facts_from_header(_header(meta={"llama.expert_feed_forward_length": 128}))
    assert moe.n_ff == 128  # the expert's width wins where both are given


@pytest.mark.parametrize(
    ("arch", "pattern", "local"),
    [
        ("gemma2", None, (True, False, True, False, True, False)),  # every other layer
        ("gemma3", None, (True, True, True, True, True, False)),  # five local, one global
        ("gemma3", 3, (True, True, False, True, True, False)),
        ("gemma3", 0, (True, True, True, True, True, False)),  # 0: the architecture's period
        ("llama", [1, 0, 0, 1, 0, 0], (True, False, False, True, False, False)),
    ],
)
def test_sliding_window_layers(arch, pattern, local):
    meta = {f"{arch}.attention.sliding_window": 512}
    if pattern is not None:
        meta[f"{arch}.attention.sliding_window_pattern"] = pattern
    facts = facts_from_header(_header(arch, 6, meta))
    assert facts.swa_layers == local
    assert facts.sliding_window == 512 and facts.n_swa_layers == sum(local)


def test_no_window_or_no_local_layer_means_no_sliding_window():
    facts = facts_from_header(_header("gemma2", 6))
    assert facts.sliding_window is None and facts.n_swa_layers == 0
    plain = facts_from_header(_header("llama", 2, {"llama.attention.sliding_window": 512}))
    assert plain.sliding_window is None  # llama has no default pattern: no local layer
    for period in (1025, -2):
        meta = {"gemma3.attention.sliding_window": 512,
                "gemma3.attention.sliding_window_pattern": period}  # fmt: skip
        with pytest.raises(InvalidModelError, match=f"pattern {period} is impossible"):
            facts_from_header(_header("gemma3", 6, meta))


def test_the_vocabulary_from_the_embedding_then_the_declared_size_then_the_tokens():
    assert facts_from_header(_header()).vocab_size == 1000  # the embedding's rows
    no_embd = [_tensor("blk.0.attn_q.weight", (256, 256))]
    declared = _header(layers=1, tensors=no_embd, meta={"llama.vocab_size": 777})
    assert facts_from_header(declared).vocab_size == 777
    listed = _header(layers=1, tensors=no_embd,
                     meta={"tokenizer.ggml.tokens": ArraySummary(8, 5555)})  # fmt: skip
    assert facts_from_header(listed).vocab_size == 5555
    short = _header(layers=1, tensors=no_embd, meta={"tokenizer.ggml.tokens": ["a", "b", "c"]})
    assert facts_from_header(short).vocab_size == 3
    assert facts_from_header(_header(layers=1, tensors=no_embd)).vocab_size == 0


def test_what_is_not_a_model_is_said():
    vocab = _header(tensors=[], meta={"tokenizer.ggml.tokens": ArraySummary(8, 32000)})
    with pytest.raises(InvalidModelError, match=r"holds a vocabulary .* and no weights"):
        facts_from_header(vocab)
    with pytest.raises(InvalidModelError, match="contains no tensors"):
        facts_from_header(_header(tensors=[]))
    with pytest.raises(InvalidModelError, match=r"no general\.architecture"):
        facts_from_header(_header(meta={"general.architecture": None}))
    with pytest.raises(InvalidModelError, match="'zz9' model, an architecture"):
        facts_from_header(_header(meta={"general.architecture": "zz9"}))
    for missing in ("llama.block_count", "llama.embedding_length"):
        with pytest.raises(InvalidModelError, match="lacks its layer count or embedding size"):
            facts_from_header(_header(meta={missing: None}))


def test_names_and_file_types():
    assert facts_from_header(_header()).name == "model"  # no general.name: the file's stem
    named = facts_from_header(_header(meta={"general.name": "Tiny Llama"}))
    assert named.name == "Tiny Llama" and named.file_type == "Q8_0"
    guessed = facts_from_header(_header(meta={"general.file_type": None}))
    assert guessed.file_type == "mostly Q8_0"
    assert facts_from_header(_header(meta={"general.name": ""})).name == "model"
    assert facts_from_header(_header(meta={"llama.context_length": None})).context_length == 0


@pytest.mark.parametrize(
    ("path", "no", "count", "words"),
    [
        ("/m/big-00002-of-00003.gguf", 1, 3, "part 2 of 3 of a split model; open the first part "
                                             "(big-00001-of-00003.gguf)"),
        ("/m/big-00002-of-00003.gguf", None, 3, "part 1 of 3"),  # the name says part 2
        ("/m/big.gguf", 1, 3, "part 2 of 3 of a split model; open the first part (the first"),
        ("/m/big.gguf", 0, 1025, "split.no / split.count are invalid"),
        ("/m/big.gguf", 3, 3, "split.no / split.count are invalid"),
        ("/m/big.gguf", -1, 3, "split.no / split.count are invalid"),
        ("/m/big.gguf", 0, 2, "does not follow the -00001-of-0000N.gguf pattern"),
        ("/m/big-00001-of-00002.gguf", 0, 2, "Part 2 of 2 of big-00001-of-00002.gguf is missing"),
    ],
)  # fmt: skip
def test_split_parts(path, no, count, words):
    meta = {"split.count": count}
    if no is not None:
        meta["split.no"] = no
    with pytest.raises(InvalidModelError, match=words.replace("(", r"\(").replace(")", r"\)")):
        facts_from_header(_header(meta=meta, path=path))


def test_a_part_name_without_split_metadata_is_an_ordinary_model():
    # renamed by hand, or a download tool's name: the header says it is whole, so it is
    facts = facts_from_header(_header(path="/m/big-00002-of-00003.gguf"))
    assert facts.n_layers == 2
    one = facts_from_header(_header(path="/m/big-00002-of-00003.gguf", meta={"split.count": 1}))
    assert one.n_layers == 2


def test_one_part_of_one_and_the_sizes_add_up():
    facts = facts_from_header(_header(meta={"split.count": 1, "split.no": 0}))
    assert facts.file_bytes == 10**9 and facts.n_tensors == 3 and facts.n_layers == 2
    assert replace(facts, path=None).source == "file"
