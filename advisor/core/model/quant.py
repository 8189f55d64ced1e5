"""Quantisation types and llama.cpp's per-tensor type mix.

A "Q4_K_M" file is not all Q4_K: `llama-quantize` keeps norms in F32, puts the output matrix
in Q6_K, and gives some attention-V and FFN-down layers more bits. `tensor_types_for` follows
`llama_tensor_get_type_impl` in llama.cpp's `src/llama-quant.cpp` (for the file types people
download), so model sizes computed from a shape land on real file sizes, and the synthetic
model writer produces the same tensor types as a real quantised file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import gguf

from advisor.core.infra.errors import InputError
from advisor.core.infra.lookup import did_you_mean

T = gguf.GGMLQuantizationType


@dataclass(frozen=True)
class FileType:
    """One llama.cpp file type ("ftype"): its label, number and the type most tensors get."""

    label: str  # as people write it: "Q4_K_M"
    llama_ftype: int  # llama.h LLAMA_FTYPE_* value (gguf.LlamaFileType)
    default_type: T


FILE_TYPES: dict[str, FileType] = {
    ft.label.lower(): ft
    for ft in (
        FileType("F32", 0, T.F32),
        FileType("F16", 1, T.F16),
        FileType("BF16", 32, T.BF16),
        FileType("Q8_0", 7, T.Q8_0),
        FileType("Q6_K", 18, T.Q6_K),
        FileType("Q5_K_M", 17, T.Q5_K),
        FileType("Q5_K_S", 16, T.Q5_K),
        FileType("Q5_1", 9, T.Q5_1),
        FileType("Q5_0", 8, T.Q5_0),
        FileType("Q4_K_M", 15, T.Q4_K),
        FileType("Q4_K_S", 14, T.Q4_K),
        FileType("Q4_1", 3, T.Q4_1),
        FileType("Q4_0", 2, T.Q4_0),
        FileType("IQ4_XS", 30, T.IQ4_XS),
        FileType("IQ4_NL", 25, T.IQ4_NL),
        FileType("Q3_K_L", 13, T.Q3_K),
        FileType("Q3_K_M", 12, T.Q3_K),
        FileType("Q3_K_S", 11, T.Q3_K),
        FileType("Q2_K", 10, T.Q2_K),
        FileType("MXFP4_MOE", 38, T.MXFP4),
    )
}
# aliases people type
FILE_TYPES["mxfp4"] = FILE_TYPES["mxfp4_moe"]
FILE_TYPES["q4_k"] = FILE_TYPES["q4_k_m"]
FILE_TYPES["q5_k"] = FILE_TYPES["q5_k_m"]
FILE_TYPES["q3_k"] = FILE_TYPES["q3_k_m"]

# what the table of shapes shows by default
COMMON_QUANTS = ("f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", "iq4_xs")


class UnknownQuantError(InputError):
    """A quantisation name this app does not know; the message lists the known ones."""


def file_type(label: str) -> FileType:
    """Look up a file type by label, case-insensitively ('q4_k_m', 'Q4_K_M')."""
    key = label.strip().lower().replace("-", "_")
    if key not in FILE_TYPES:
        known = ", ".join(sorted({ft.label for ft in FILE_TYPES.values()}))
        hint = did_you_mean(key, FILE_TYPES)
        raise UnknownQuantError(f"Unknown quantisation '{label}'.{hint} Choose one of: {known}.")
    return FILE_TYPES[key]


def file_type_label(llama_ftype: int | None) -> str | None:
    """The label of a numeric general.file_type ('Q4_K_M'), None when absent or unknown."""
    if llama_ftype is None:
        return None
    for ft in FILE_TYPES.values():
        if ft.llama_ftype == llama_ftype:
            return ft.label
    try:
        name = gguf.LlamaFileType(llama_ftype).name
    except ValueError:
        return None
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")


def ggml_type_by_name(name: str) -> int:
    """The ggml type number of a type name ('MXFP4' -> 39)."""
    return int(getattr(T, name))


def block_size(ggml_type: int) -> int:
    return gguf.GGML_QUANT_SIZES[T(ggml_type)][0]


def bytes_per_block(ggml_type: int) -> int:
    return gguf.GGML_QUANT_SIZES[T(ggml_type)][1]


def is_quantized(ggml_type: int) -> bool:
    return T(ggml_type) not in (T.F32, T.F16, T.BF16, T.F64, T.I8, T.I16, T.I32, T.I64)


# -------------------------------------------------------------------------------------------
# per-tensor type choice, after llama.cpp src/llama-quant.cpp
# -------------------------------------------------------------------------------------------

_LAYER = re.compile(r"^blk\.(\d+)\.")


def _category(name: str) -> str:
    if name == "output.weight":
        return "output"
    if name in ("token_embd.weight", "per_layer_token_embd.weight"):
        return "token_embd"
    for needle, cat in (
        ("attn_qkv.weight", "attn_qkv"),
        ("attn_kv_b.weight", "attn_kv_b"),
        ("attn_v.weight", "attn_v"),
        ("attn_k.weight", "attn_k"),
        ("attn_q.weight", "attn_q"),
        ("attn_output.weight", "attn_output"),
        ("ffn_up", "ffn_up"),
        ("ffn_gate", "ffn_gate"),
        ("ffn_down", "ffn_down"),
    ):
        if needle in name:
            return cat
    return "other"


def _allows_quantization(name: str, n_dims: int) -> bool:
    return (
        n_dims >= 2
        and name.endswith("weight")
        and "_norm.weight" not in name
        and "ffn_gate_inp.weight" not in name
        and "position_embd" not in name
    )


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    return (
        i_layer < n_layers // 8
        or i_layer >= 7 * n_layers // 8
        or (i_layer - n_layers // 8) % 3 == 2
    )


def _fallback(ne0: int, target: T) -> T:
    """llama.cpp's tensor_type_fallback: rows not a multiple of the block size."""
    if ne0 % block_size(target) == 0:
        return target
    fallbacks = {
        T.IQ4_XS: T.IQ4_NL,
        T.Q2_K: T.Q4_0,
        T.Q3_K: T.Q4_0,
        T.Q4_K: T.Q5_0,
        T.Q5_K: T.Q5_1,
        T.Q6_K: T.Q8_0,
    }
    new = fallbacks.get(target, target)
    if ne0 % block_size(new):
        new = T.F16
    return new


@dataclass(frozen=True)
class MixContext:
    """What llama-quantize knows about the model when it picks tensor types."""

    n_layers: int
    n_expert: int = 0
    n_gqa: int = 1  # n_heads / n_kv_heads
    is_70b_class: bool = False  # llama.cpp's LLM_TYPE_70B bumps attn_v


def source_type(name: str, n_dims: int, high_precision: T = T.F16) -> T:
    """The type convert_hf_to_gguf.py writes: 1-D tensors and router weights in F32."""
    if n_dims < 2 or "ffn_gate_inp" in name or name.endswith(".bias"):
        return T.F32
    return high_precision


# long on purpose (over 80 lines): it follows llama.cpp's llama_tensor_get_type branch for
# branch, so the two can be read side by side when llama.cpp changes its mix
def tensor_types_for(
    tensors: Sequence[tuple[str, tuple[int, ...]]], ftype: FileType, ctx: MixContext
) -> list[T]:
    """The ggml type llama-quantize gives each tensor (in file order) for a file type.

    `tensors` are (name, shape in GGUF order) pairs in the order they are stored.
    """
    # One function of about 90 lines on purpose: it mirrors llama_tensor_get_type() in
    # llama.cpp's src/llama-quant.cpp branch for branch, so the two can be compared side by
    # side when llama.cpp changes its mix; split up, that comparison gets harder.
    high = T.BF16 if ftype.default_type == T.BF16 else T.F16
    if ftype.default_type == T.F32:
        high = T.F32
    has_tied = not any(name == "output.weight" for name, _ in tensors)
    n_attention_wv = sum(
        1 for name, _ in tensors if _category(name) in ("attn_v", "attn_qkv", "attn_kv_b")
    )
    i_attention_wv = 0
    i_ffn_down = 0
    label = ftype.label
    default = ftype.default_type
    out: list[T] = []
    for name, shape in tensors:
        src = source_type(name, len(shape), high)
        if not _allows_quantization(name, len(shape)) or not is_quantized(default):
            out.append(src)
            continue
        cat = _category(name)
        m = _LAYER.match(name)
        i_layer = int(m.group(1)) if m else 0
        new = default
        if cat == "output" or (has_tied and cat == "token_embd"):
            if label == "MXFP4_MOE" or shape[0] % block_size(new):
                new = T.Q8_0
            elif new != T.Q8_0:
                new = T.Q6_K
        elif label == "MXFP4_MOE":
            new = T.MXFP4 if len(shape) >= 3 and shape[2] > 1 else T.Q8_0
        elif cat == "token_embd":
            pass
        elif cat in ("attn_v", "attn_qkv", "attn_kv_b"):
            if label == "Q2_K":
                new = T.Q4_K if ctx.n_gqa >= 4 else T.Q3_K
            elif label in ("IQ4_NL", "IQ4_XS") and ctx.n_gqa >= 4:
                new = T.Q5_K
            elif label == "Q3_K_M":
                new = T.Q5_K if i_attention_wv < 2 else T.Q4_K
            elif label == "Q3_K_L":
                new = T.Q5_K
            elif label in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i_attention_wv, n_attention_wv):
                new = T.Q6_K
            elif label == "Q4_K_S" and i_attention_wv < 4:
                new = T.Q5_K
            if ctx.is_70b_class and new in (T.Q3_K, T.Q4_K):
                new = T.Q5_K
            if ctx.n_expert == 8:
                new = T.Q8_0
            i_attention_wv += 1
        elif cat == "attn_k":
            if ctx.n_expert == 8:
                new = T.Q8_0
        elif cat == "ffn_down":
            n = ctx.n_layers
            i = i_layer if ctx.n_expert > 1 else i_ffn_down
            if label == "Q2_K":
                new = T.Q3_K
            elif label == "Q3_K_M":
                new = T.Q5_K if i < n // 16 else T.Q4_K
            elif label == "Q3_K_L":
                new = T.Q5_K
            elif label == "Q4_K_M":
                if _use_more_bits(i, n):
                    new = T.Q6_K
            elif label in ("IQ4_NL", "IQ4_XS") and i < n // 8:
                new = T.Q5_K
            elif label == "Q5_K_M" and _use_more_bits(i, n):
                new = T.Q6_K
            elif label == "Q4_K_S" and i < n // 8:
                new = T.Q5_K
            i_ffn_down += 1
        elif cat == "attn_output":
            if ctx.n_expert == 8:
                if label in ("Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS"):
                    new = T.Q5_K
            elif label == "Q2_K":
                new = T.Q3_K
            elif label == "Q3_K_M":
                new = T.Q4_K
            elif label == "Q3_K_L":
                new = T.Q5_K
        out.append(_fallback(shape[0], new))
    return out
