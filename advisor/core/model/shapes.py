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
    source: str = ""
    source_note: str = ""

    @property
    def is_moe(self) -> bool:
        return self.n_expert > 1

    def with_layers(self, n_layers: int) -> ModelShape:
        """The same shape with fewer (or more) blocks: for small, fast test models."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["n_layers"] = n_layers
        return ModelShape(**values)

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


def tensor_layout(shape: ModelShape) -> list[Tensor]:
    """The tensors (name, GGUF shape: ne0 first) of a model of this shape, in file order."""
    arch = shape.architecture
    if arch not in SUPPORTED_ARCHITECTURES:
        raise ValueError(f"no tensor layout for architecture {arch}")
    E, V = shape.n_embd, shape.vocab_size
    H, KV = shape.n_heads, shape.n_kv_heads
    hd, hdv = shape.head_dim, shape.value_head_dim
    F = shape.n_ff
    X, Fe = shape.n_expert, shape.n_ff_expert or shape.n_ff
    out: list[Tensor] = [("token_embd.weight", (E, V))]
    for il in range(shape.n_layers):
        b = f"blk.{il}."
        out.append((b + "attn_norm.weight", (E,)))
        if arch == "phi3":
            out.append((b + "attn_qkv.weight", (E, H * hd + 2 * KV * hd)))
        else:
            out.append((b + "attn_q.weight", (E, H * hd)))
            out.append((b + "attn_k.weight", (E, KV * hd)))
            out.append((b + "attn_v.weight", (E, KV * hdv)))
            if shape.qkv_bias:
                out.append((b + "attn_q.bias", (H * hd,)))
                out.append((b + "attn_k.bias", (KV * hd,)))
                out.append((b + "attn_v.bias", (KV * hdv,)))
            if shape.qk_norm:
                out.append((b + "attn_q_norm.weight", (hd,)))
                out.append((b + "attn_k_norm.weight", (hd,)))
        out.append((b + "attn_output.weight", (H * hdv, E)))
        if arch == "gpt-oss":
            out.append((b + "attn_output.bias", (E,)))
            out.append((b + "attn_sinks.weight", (H,)))
        if arch in ("gemma2", "gemma3"):
            out.append((b + "post_attention_norm.weight", (E,)))
        if arch == "gpt-oss":
            out.append((b + "post_attention_norm.weight", (E,)))
        else:
            out.append((b + "ffn_norm.weight", (E,)))
        if shape.is_moe:
            out.append((b + "ffn_gate_inp.weight", (E, X)))
            if arch == "gpt-oss":
                out.append((b + "ffn_gate_inp.bias", (X,)))
            out.append((b + "ffn_gate_exps.weight", (E, Fe, X)))
            out.append((b + "ffn_up_exps.weight", (E, Fe, X)))
            out.append((b + "ffn_down_exps.weight", (Fe, E, X)))
            if arch == "gpt-oss":
                out.append((b + "ffn_gate_exps.bias", (Fe, X)))
                out.append((b + "ffn_up_exps.bias", (Fe, X)))
                out.append((b + "ffn_down_exps.bias", (E, X)))
            if shape.n_expert_shared:
                Fs = shape.n_ff_shared_expert or Fe
                out.append((b + "ffn_gate_shexp.weight", (E, Fs)))
                out.append((b + "ffn_up_shexp.weight", (E, Fs)))
                out.append((b + "ffn_down_shexp.weight", (Fs, E)))
        elif arch == "phi3":
            out.append((b + "ffn_up.weight", (E, 2 * F)))
            out.append((b + "ffn_down.weight", (F, E)))
        else:
            out.append((b + "ffn_gate.weight", (E, F)))
            out.append((b + "ffn_up.weight", (E, F)))
            out.append((b + "ffn_down.weight", (F, E)))
        if arch in ("gemma2", "gemma3"):
            out.append((b + "post_ffw_norm.weight", (E,)))
    out.append(("output_norm.weight", (E,)))
    if not shape.tied_embeddings:
        out.append(("output.weight", (E, V)))
    return out


def shape_as_dict(shape: ModelShape) -> dict[str, Any]:
    return {f.name: getattr(shape, f.name) for f in fields(shape)}
