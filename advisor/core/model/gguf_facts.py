"""Model facts from a GGUF file's header (never its weights), every hyper-parameter checked.

A header can claim anything: 2^40 layers, 0 attention heads, -8 KV heads. Facts that no real
model has are refused here, with the field named, before anything is allocated or computed
from them, so a damaged or hostile file is one sentence and never a crash or a hang.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.model import quant
from advisor.core.model.facts import (
    DEFAULT_SWA_BY_ARCH,
    KNOWN_ARCHITECTURES,
    SWA_PERIOD_BY_ARCH,
    ModelFacts,
    summarise_tensors,
    tensor_record,
)
from advisor.core.model.gguf_file import (
    SPLIT_NAME,
    ArraySummary,
    GgufHeader,
    InvalidModelError,
    TensorInfo,
    printable,
    read_gguf_header,
)

# The largest value each hyper-parameter takes in any published model, with room to spare
# (Llama 3.1 405B: 126 layers, 16,384 wide, 128 heads; DeepSeek V3: 256 experts; Qwen2.5:
# 152,064-token vocabulary; context lengths up to 10M tokens).
LIMITS: dict[str, tuple[int, int]] = {
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
    "context_length": (0, 1 << 30),
    "vocab_size": (0, 1 << 24),
    "attention.sliding_window": (0, 1 << 30),
}


def _int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


@dataclass(frozen=True)
class _Hyper:
    """The header's hyper-parameters of one architecture, read and range-checked."""

    header: GgufHeader
    arch: str
    name: str  # the file's name, for sentences

    def raw(self, key: str) -> Any:
        return self.header.get(f"{self.arch}.{key}")

    def _refuse(self, key: str, value: Any) -> InvalidModelError:
        low, high = LIMITS[key]
        shown = printable(repr(value), 40)
        return InvalidModelError(
            f"{self.name} is damaged or not a real model: {self.arch}.{key} is {shown}, and "
            f"real models have {low:,} to {high:,}; download the file again."
        )

    def number(self, key: str, default: int | None = None) -> int | None:
        """A scalar hyper-parameter within its limits (absent: `default`)."""
        value = self.raw(key)
        if value is None:
            return default
        n = _int(value)
        low, high = LIMITS[key]
        if n is None or not low <= n <= high:
            raise self._refuse(key, value)
        return n

    def per_layer(self, key: str, n_layers: int) -> tuple[int, ...] | None:
        """A hyper-parameter given once or per layer (OpenELM's heads), within its limits."""
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, list):
            low, high = LIMITS[key]
            if len(value) != n_layers or not all(
                isinstance(v, int) and not isinstance(v, bool) and low <= v <= high for v in value
            ):
                raise InvalidModelError(
                    f"{self.name} is damaged or not a real model: {self.arch}.{key} lists "
                    f"{len(value)} values for {n_layers} layers, each {low:,} to {high:,} in "
                    "real models; download the file again."
                )
            return tuple(int(v) for v in value)
        n = self.number(key)
        return None if n is None else (n,) * n_layers


def _split_parts(header: GgufHeader) -> list[GgufHeader]:
    """All parts of a split model, given its first part; refuses a later part."""
    p = Path(header.path)
    split_no = _int(header.get("split.no"), 0) or 0
    split_count = _int(header.get("split.count"), 1) or 1
    if not 1 <= split_count <= 1024 or not 0 <= split_no < split_count:
        raise InvalidModelError(f"{p.name} is damaged: its split.no / split.count are invalid.")
    m = SPLIT_NAME.match(p.name)
    if split_no > 0 or (m and int(m.group("no")) > 1 and split_count > 1):
        first = f"{m.group('prefix')}-00001-of-{m.group('count')}.gguf" if m else "the first part"
        raise InvalidModelError(
            f"{p.name} is part {split_no + 1} of {split_count} of a split model; open the first "
            f"part ({first}) instead, llama.cpp finds the others next to it."
        )
    if split_count <= 1:
        return [header]
    if not m:
        raise InvalidModelError(
            f"{p.name} is the first of {split_count} parts of a split model, but its name does "
            "not follow the -00001-of-0000N.gguf pattern, so the other parts cannot be found."
        )
    parts = [header]
    for i in range(2, split_count + 1):
        part = p.with_name(f"{m.group('prefix')}-{i:05d}-of-{m.group('count')}.gguf")
        if not part.exists():
            raise InvalidModelError(
                f"Part {i} of {split_count} of {p.name} is missing ({part.name} is not next to "
                "it); download every part into the same folder."
            )
        parts.append(read_gguf_header(part, require_data=header.has_data))
    return parts


def _architecture(header: GgufHeader, name: str) -> str:
    arch = header.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InvalidModelError(
            f"{name} has no general.architecture entry, so it is not a llama.cpp model (it may "
            "be a LoRA adapter, a vocabulary-only or a multimodal projector file)."
        )
    if arch not in KNOWN_ARCHITECTURES:
        raise InvalidModelError(
            f"{name} is a '{printable(arch)}' model, an architecture the bundled llama.cpp does "
            "not support; choose a model of a supported architecture (llama, qwen, gemma, ...)."
        )
    return arch


def _vocabulary(h: _Hyper, tensors: Sequence[TensorInfo]) -> int:
    """The vocabulary: the embedding's rows (what the weights hold), else the declared size,
    else the token list's length."""
    declared = h.number("vocab_size")  # range-checked even where the embedding decides
    embd = next((t for t in tensors if t.name == "token_embd.weight"), None)
    if embd is not None and len(embd.shape) > 1:
        return int(embd.shape[1])
    if declared:
        return declared
    tokens = h.header.get("tokenizer.ggml.tokens")
    return len(tokens) if isinstance(tokens, (list, ArraySummary)) else 0


def _sliding_window(h: _Hyper, n_layers: int) -> tuple[int | None, tuple[bool, ...]]:
    window = h.number("attention.sliding_window", DEFAULT_SWA_BY_ARCH.get(h.arch))
    swa: tuple[bool, ...] = (False,) * n_layers
    pattern = h.raw("attention.sliding_window_pattern")
    if window:
        if isinstance(pattern, list) and len(pattern) == n_layers:
            swa = tuple(bool(v) for v in pattern)
        elif h.arch in SWA_PERIOD_BY_ARCH:
            period = _int(pattern) or SWA_PERIOD_BY_ARCH[h.arch]
            if not 1 <= period <= LIMITS["block_count"][1]:
                raise InvalidModelError(
                    f"{h.name} is damaged: its sliding-window pattern {period} is impossible."
                )
            swa = tuple(il % period < period - 1 for il in range(n_layers))
    return (window if any(swa) else None), swa


def _attention(h: _Hyper, n_layers: int, n_embd: int) -> dict[str, Any]:
    heads = h.per_layer("attention.head_count", n_layers)
    kv_heads = h.per_layer("attention.head_count_kv", n_layers) or heads
    n_heads = max(heads) if heads else 0
    n_kv = max(kv_heads) if kv_heads else 0
    if n_heads == 0:
        raise InvalidModelError(
            f"{h.name} is damaged or not a real model: {h.arch}.attention.head_count is 0 or "
            "missing; download the file again."
        )
    if heads and kv_heads and any(kv > q for kv, q in zip(kv_heads, heads, strict=True)):
        raise InvalidModelError(
            f"{h.name} is damaged: it claims more KV heads than attention heads in a layer."
        )
    head_dim = h.number("attention.key_length") or n_embd // n_heads
    if head_dim < 1:
        raise InvalidModelError(f"{h.name} is damaged: its attention head size is 0.")
    return {
        "n_heads": n_heads,
        "n_kv_heads": n_kv,
        "head_dim": head_dim,
        "value_head_dim": h.number("attention.value_length") or head_dim,
        "kv_heads_per_layer": kv_heads or (),
    }


def _cache_layout(h: _Hyper, n_layers: int, attention: dict[str, Any]) -> dict[str, Any]:
    """What llama.cpp caches beyond the heads: keys only for MLA (both per-head sizes after
    decompression given, llama_hparams::is_mla), and nothing for the trailing MTP blocks that
    no token runs ({arch}.nextn_predict_layers; llama.cpp caches hparams.n_layer() blocks)."""
    key_mla = _int(h.raw("attention.key_length_mla"), 0) or 0
    value_mla = _int(h.raw("attention.value_length_mla"), 0) or 0
    out: dict[str, Any] = {"kv_stores_values": not (key_mla > 0 and value_mla > 0)}
    raw = h.raw("nextn_predict_layers")
    nextn = _int(raw, -1) if raw is not None else 0
    if nextn is None or not 0 <= nextn < n_layers:
        shown = printable(repr(raw), 40)
        raise InvalidModelError(
            f"{h.name} is damaged or not a real model: {h.arch}.nextn_predict_layers is {shown} "
            f"for {n_layers:,} blocks; download the file again."
        )
    if nextn:
        main = n_layers - nextn
        kv = attention["kv_heads_per_layer"] or (attention["n_kv_heads"],) * n_layers
        out["kv_heads_per_layer"] = tuple(k if il < main else 0 for il, k in enumerate(kv))
        out["n_main_layers"] = main
    return out


def _experts(h: _Hyper) -> tuple[int, int]:
    n_expert = h.number("expert_count", 0) or 0
    n_used = h.number("expert_used_count", 0) or 0
    if n_used > max(n_expert, 1):
        raise InvalidModelError(
            f"{h.name} is damaged: it uses {n_used} experts per token but has {n_expert}."
        )
    return n_expert, n_used


def facts_from_header(header: GgufHeader) -> ModelFacts:
    """Model facts from a validated GGUF header (and its sibling parts when split)."""
    name = Path(header.path).name
    if not header.tensors and header.get("tokenizer.ggml.tokens") is not None:
        raise InvalidModelError(
            f"{name} holds a vocabulary (a tokenizer) and no weights: it is not a model to run; "
            "choose the model's own .gguf file."
        )
    parts = _split_parts(header)
    arch = _architecture(header, name)
    tensors = [t for h in parts for t in h.tensors]
    if not tensors:
        raise InvalidModelError(f"{name} contains no tensors, so it holds no model weights.")
    h = _Hyper(header, arch, name)
    n_layers = h.number("block_count")
    n_embd = h.number("embedding_length")
    if not n_layers or not n_embd:
        raise InvalidModelError(
            f"{name} lacks its layer count or embedding size ({arch}.block_count, "
            f"{arch}.embedding_length); the file is damaged or not a complete model."
        )
    # an expert's width where the model has experts, given once or per layer (OpenELM)
    expert = h.raw("expert_feed_forward_length")
    ff = h.per_layer("expert_feed_forward_length" if expert else "feed_forward_length", n_layers)
    n_ff = max(ff) if ff else None
    n_expert, n_expert_used = _experts(h)
    window, swa = _sliding_window(h, n_layers)
    attention = _attention(h, n_layers, n_embd)
    attention.update(_cache_layout(h, n_layers, attention))
    records = [tensor_record(t) for t in tensors]
    summary = summarise_tensors(records, n_expert, n_expert_used, attention.get("n_main_layers"))
    file_type = quant.file_type_label(_int(header.get("general.file_type")))
    if file_type is None:
        file_type = f"mostly {next(iter(summary['bytes_by_type']), 'unknown')}"
    model_name = header.get("general.name")
    return ModelFacts(
        architecture=arch,
        name=model_name if isinstance(model_name, str) and model_name else Path(header.path).stem,
        file_type=file_type,
        n_layers=n_layers,
        n_embd=n_embd,
        **attention,
        context_length=h.number("context_length", 0) or 0,
        vocab_size=_vocabulary(h, tensors),
        n_ff=n_ff,
        n_expert=n_expert,
        n_expert_used=n_expert_used,
        sliding_window=window,
        n_swa_layers=sum(swa),
        swa_layers=swa,
        file_bytes=sum(p.file_bytes for p in parts),
        path=header.path,
        source="file",
        **summary,
    )


def facts_from_gguf(path: str | Path, *, require_data: bool = True) -> ModelFacts:
    """Read a GGUF file's header (never its weights) and return the model's facts.
    `require_data=False` reads a header whose tensor data was cut off (test fixtures)."""
    return facts_from_header(read_gguf_header(path, require_data=require_data))


def tensor_table(header: GgufHeader) -> list[TensorInfo]:
    """The header's tensors, largest first (for a detailed view)."""
    return sorted(header.tensors, key=lambda t: -t.n_bytes)
