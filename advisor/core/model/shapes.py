"""Built-in model shapes and llama.cpp's tensor layout for each architecture.

A shape is a model's published hyper-parameters (from its config.json). `tensor_layout` turns a
shape into the list of tensors llama.cpp's converter writes for that architecture, with GGUF
dimensions, so the app can (1) compute weights size per quantisation without the file and
(2) write random-weight GGUF files that llama.cpp loads and times like the real model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

from advisor.core.infra.errors import InputError
from advisor.core.infra.lookup import did_you_mean, normalise_key
from advisor.core.infra.paths import bundled

SUPPORTED_ARCHITECTURES = (
    "llama",
    "qwen2",
    "qwen3",
    "qwen3moe",
    "gemma2",
    "gemma3",
    "phi3",
    "gpt-oss",
    "glm4moe",
    "llama4",
    "deepseek2",
    "ernie4_5-moe",
)


class UnknownShapeError(InputError):
    """A shape name that is not in the built-in catalogue; the message names the closest."""


@dataclass(frozen=True)
class ModelShape:
    """The hyper-parameters of one published model (see resources/data/model_shapes.json)."""

    id: str
    display_name: str
    family: str
    architecture: str
    n_layers: int
    n_embd: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    value_head_dim: int
    n_ff: int
    vocab_size: int
    context_length: int
    tied_embeddings: bool
    rope_theta: float = 10000.0
    sliding_window: int | None = None
    swa_period: int | None = None
    swa_first_is_local: bool = True
    qkv_bias: bool = False
    qk_norm: bool = False
    attn_sinks: bool = False
    attn_logit_softcap: float | None = None
    final_logit_softcap: float | None = None
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_expert: int | None = None
    n_expert_shared: int = 0
    n_ff_shared_expert: int | None = None
    rms_norm_eps: float = 1e-5
    # weights the model is published in and every GGUF keeps (gpt-oss experts are MXFP4
    # whatever the file type)
    native_expert_type: str | None = None
    # --- mixture-of-experts layer pattern (config.json names in brackets) ---
    # the first layers have a dense FFN of n_ff instead of experts [first_k_dense_replace]
    n_dense_lead: int = 0
    # every moe_layer_step-th layer has experts, the others a dense FFN of n_ff
    # [Llama 4 interleave_moe_layer_step; llama.cpp: (il + 1) % step == 0]
    moe_layer_step: int = 1
    # multi-token-prediction blocks stored after the n_layers - n_nextn_layers main blocks
    # (GLM-4.5 [num_nextn_predict_layers]; n_layers counts them, as the GGUF's block_count
    # does): llama.cpp reads them but no token runs them
    n_nextn_layers: int = 0
    # the router: "softmax" or "sigmoid" [scoring_func], its scale [routed_scaling_factor]
    # and whether the chosen experts' weights are renormalised [norm_topk_prob]; None where
    # llama.cpp's graph fixes the router itself (Llama 4, ERNIE 4.5)
    expert_gating_func: str | None = None
    # a per-expert bias added for the choice of experts only [e_score_correction_bias]:
    # GGUF blk.N.exp_probs_b.bias
    expert_selection_bias: bool = False
    expert_weights_scale: float | None = None
    expert_weights_norm: bool = False
    # --- attention ---
    # rotary dimensions per head where fewer than head_dim rotate (GLM partial_rotary_factor,
    # DeepSeek qk_rope_head_dim)
    rope_dim: int | None = None
    # multi-head latent attention (DeepSeek V2/V3): the ranks of the low-rank query and
    # key-value projections; head_dim is then qk_nope_head_dim + qk_rope_head_dim
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    source: str = ""
    source_note: str = ""

    @property
    def is_moe(self) -> bool:
        return self.n_expert > 1

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention: the KV cache holds one compressed latent per token."""
        return bool(self.kv_lora_rank)

    @property
    def n_rot(self) -> int:
        """Rotary dimensions per head (llama.cpp's rope.dimension_count)."""
        return self.rope_dim or self.head_dim

    def with_layers(self, n_layers: int) -> ModelShape:
        """The same shape with fewer (or more) blocks: for small, fast test models.

        A cut-down model keeps one of each kind of block where it can: the MTP block last,
        at least one expert layer, then as many leading dense layers as remain.
        """
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["n_layers"] = n_layers
        nextn = min(self.n_nextn_layers, max(0, n_layers - 1))
        values["n_nextn_layers"] = nextn
        values["n_dense_lead"] = min(self.n_dense_lead, max(0, n_layers - nextn - 1))
        return ModelShape(**values)

    @property
    def n_main_layers(self) -> int:
        """The blocks a token runs through (the MTP blocks stored after them excluded)."""
        return self.n_layers - self.n_nextn_layers

    def has_experts(self, il: int) -> bool:
        """Whether block `il` has routed experts (else a dense FFN of n_ff)."""
        if not self.is_moe or il < self.n_dense_lead:
            return False
        return (il + 1) % max(1, self.moe_layer_step) == 0

    def cache_geometry(self) -> tuple[int, int, int]:
        """(KV heads, key length, value length) as llama.cpp stores them per token and layer.

        With MLA, llama.cpp's converter writes the model as multi-query attention over the
        compressed latent (convert_hf_to_gguf.py DeepseekV2Model: head_count_kv 1, key_length
        kv_lora_rank + qk_rope_head_dim, value_length kv_lora_rank); the cache then holds that
        one latent per token and layer instead of n_kv_heads full heads.
        """
        if self.kv_lora_rank:
            return 1, self.kv_lora_rank + self.n_rot, self.kv_lora_rank
        return self.n_kv_heads, self.head_dim, self.value_head_dim

    def kv_heads_per_layer(self) -> tuple[int, ...]:
        """Per block, the KV heads llama.cpp caches: none for MTP blocks, which no token runs
        (llama.cpp builds the cache for hparams.n_layer() = all blocks less the NextN ones)."""
        kv = self.cache_geometry()[0]
        return tuple(kv if il < self.n_main_layers else 0 for il in range(self.n_layers))

    def swa_layers(self) -> tuple[bool, ...]:
        """Per layer: does it use sliding-window attention (llama.cpp's set_swa_pattern)?"""
        if not self.sliding_window or not self.swa_period:
            return (False,) * self.n_layers
        p = self.swa_period
        if self.swa_first_is_local:
            return tuple(il % p < p - 1 for il in range(self.n_layers))
        return tuple(il % p != 0 for il in range(self.n_layers))


@cache
def _shape_table() -> dict[str, ModelShape]:
    text = (bundled("resources") / "data" / "model_shapes.json").read_text("utf-8")
    data = json.loads(text)
    known = {f.name for f in fields(ModelShape)}
    table: dict[str, ModelShape] = {}
    for raw in data["shapes"]:
        values = {k: v for k, v in raw.items() if k in known}
        table[raw["id"]] = ModelShape(**values)
    return table


def all_shapes() -> list[ModelShape]:
    """Every built-in shape, in catalogue order."""
    return list(_shape_table().values())


def known_shape(name: str) -> bool:
    """Whether `name` is a built-in shape's id (case-insensitively)."""
    return normalise_key(name) in _shape_table()


def get_shape(name: str) -> ModelShape:
    """A built-in shape by id, case-insensitively; unknown names list the closest ones."""
    table = _shape_table()
    key = normalise_key(name)
    if key in table:
        return table[key]
    hint = did_you_mean(key, table)
    raise UnknownShapeError(
        f"Unknown model shape '{name}'.{hint} Run 'advisor shapes' to list the built-in shapes."
    )


# -------------------------------------------------------------------------------------------
# tensor layout per architecture (names and GGUF dims as llama.cpp's converter writes them)
# -------------------------------------------------------------------------------------------

Tensor = tuple[str, tuple[int, ...]]

# architectures whose FFN norm is stored as post_attention_norm (llama.cpp glm4-moe.cpp:
# attn_post_norm is the pre-FFN norm there)
_POST_ATTENTION_NORM_ARCHS = ("gpt-oss", "glm4moe")


def tensor_layout(shape: ModelShape) -> list[Tensor]:
    """The tensors (name, GGUF shape: ne0 first) of a model of this shape, in file order."""
    arch = shape.architecture
    if arch not in SUPPORTED_ARCHITECTURES:
        raise ValueError(f"no tensor layout for architecture {arch}")
    E, V = shape.n_embd, shape.vocab_size
    out: list[Tensor] = [("token_embd.weight", (E, V))]
    for il in range(shape.n_layers):
        b = f"blk.{il}."
        out.append((b + "attn_norm.weight", (E,)))
        out += _attention(shape, b)
        if arch in ("gemma2", "gemma3"):
            out.append((b + "post_attention_norm.weight", (E,)))
        if arch in _POST_ATTENTION_NORM_ARCHS:
            out.append((b + "post_attention_norm.weight", (E,)))
        else:
            out.append((b + "ffn_norm.weight", (E,)))
        out += _ffn(shape, b, il)
        if arch in ("gemma2", "gemma3"):
            out.append((b + "post_ffw_norm.weight", (E,)))
        if il >= shape.n_main_layers:
            out += _nextn(shape, b)
    out.append(("output_norm.weight", (E,)))
    if not shape.tied_embeddings:
        out.append(("output.weight", (E, V)))
    return out


def _attention(shape: ModelShape, b: str) -> list[Tensor]:
    """One block's attention tensors."""
    if shape.is_mla:
        return _mla_attention(shape, b)
    E, H, KV = shape.n_embd, shape.n_heads, shape.n_kv_heads
    hd, hdv = shape.head_dim, shape.value_head_dim
    out: list[Tensor]
    if shape.architecture == "phi3":
        out = [(b + "attn_qkv.weight", (E, H * hd + 2 * KV * hd))]
    else:
        out = [
            (b + "attn_q.weight", (E, H * hd)),
            (b + "attn_k.weight", (E, KV * hd)),
            (b + "attn_v.weight", (E, KV * hdv)),
        ]
        if shape.qkv_bias:
            out.append((b + "attn_q.bias", (H * hd,)))
            out.append((b + "attn_k.bias", (KV * hd,)))
            out.append((b + "attn_v.bias", (KV * hdv,)))
        if shape.qk_norm:
            out.append((b + "attn_q_norm.weight", (hd,)))
            out.append((b + "attn_k_norm.weight", (hd,)))
    out.append((b + "attn_output.weight", (H * hdv, E)))
    if shape.architecture == "gpt-oss":
        out.append((b + "attn_output.bias", (E,)))
        out.append((b + "attn_sinks.weight", (H,)))
    return out


def _mla_attention(shape: ModelShape, b: str) -> list[Tensor]:
    """Multi-head latent attention as llama.cpp's converter writes it (DeepseekV2Model): the
    key-value up-projection split into per-head K and V parts (attn_k_b, attn_v_b) so that
    llama.cpp can run attention on the compressed latent."""
    E, H = shape.n_embd, shape.n_heads
    rope, kv_rank = shape.n_rot, shape.kv_lora_rank or 0
    nope, hdv = shape.head_dim - rope, shape.value_head_dim
    out: list[Tensor] = []
    if shape.q_lora_rank:
        out.append((b + "attn_q_a_norm.weight", (shape.q_lora_rank,)))
    out.append((b + "attn_kv_a_norm.weight", (kv_rank,)))
    if shape.q_lora_rank:
        out.append((b + "attn_q_a.weight", (E, shape.q_lora_rank)))
        out.append((b + "attn_q_b.weight", (shape.q_lora_rank, H * shape.head_dim)))
    else:
        out.append((b + "attn_q.weight", (E, H * shape.head_dim)))
    out.append((b + "attn_kv_a_mqa.weight", (E, kv_rank + rope)))
    out.append((b + "attn_k_b.weight", (nope, kv_rank, H)))
    out.append((b + "attn_v_b.weight", (kv_rank, hdv, H)))
    out.append((b + "attn_output.weight", (H * hdv, E)))
    return out


def _ffn(shape: ModelShape, b: str, il: int) -> list[Tensor]:
    """One block's feed-forward tensors: routed (and shared) experts, or a dense FFN."""
    E, F = shape.n_embd, shape.n_ff
    X, Fe = shape.n_expert, shape.n_ff_expert or shape.n_ff
    arch = shape.architecture
    if not shape.has_experts(il):
        if arch == "phi3":
            return [(b + "ffn_up.weight", (E, 2 * F)), (b + "ffn_down.weight", (F, E))]
        return [
            (b + "ffn_gate.weight", (E, F)),
            (b + "ffn_up.weight", (E, F)),
            (b + "ffn_down.weight", (F, E)),
        ]
    out: list[Tensor] = [(b + "ffn_gate_inp.weight", (E, X))]
    if arch == "gpt-oss":
        out.append((b + "ffn_gate_inp.bias", (X,)))
    if shape.expert_selection_bias:
        out.append((b + "exp_probs_b.bias", (X,)))
    out.append((b + "ffn_gate_exps.weight", (E, Fe, X)))
    out.append((b + "ffn_up_exps.weight", (E, Fe, X)))
    out.append((b + "ffn_down_exps.weight", (Fe, E, X)))
    if arch == "gpt-oss":
        out.append((b + "ffn_gate_exps.bias", (Fe, X)))
        out.append((b + "ffn_up_exps.bias", (Fe, X)))
        out.append((b + "ffn_down_exps.bias", (E, X)))
    if shape.n_expert_shared:
        Fs = shape.n_ff_shared_expert or Fe * shape.n_expert_shared
        out.append((b + "ffn_gate_shexp.weight", (E, Fs)))
        out.append((b + "ffn_up_shexp.weight", (E, Fs)))
        out.append((b + "ffn_down_shexp.weight", (Fs, E)))
    return out


def _nextn(shape: ModelShape, b: str) -> list[Tensor]:
    """A multi-token-prediction block's own tensors, after its ordinary block tensors
    (GLM-4.5 GGUFs carry all six: llama.cpp logs them as blk.46.nextn.* for GLM-4.5-Air)."""
    E, V = shape.n_embd, shape.vocab_size
    return [
        (b + "nextn.eh_proj.weight", (2 * E, E)),
        (b + "nextn.embed_tokens.weight", (E, V)),
        (b + "nextn.enorm.weight", (E,)),
        (b + "nextn.hnorm.weight", (E,)),
        (b + "nextn.shared_head_head.weight", (E, V)),
        (b + "nextn.shared_head_norm.weight", (E,)),
    ]


def shape_as_dict(shape: ModelShape) -> dict[str, Any]:
    return {f.name: getattr(shape, f.name) for f in fields(shape)}
