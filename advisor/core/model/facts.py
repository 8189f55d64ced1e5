"""What a model costs to run: facts from a GGUF header or from a built-in shape.

`ModelFacts` is the one description of a model the rest of the app uses: weights bytes (total
and active per token), parameter counts, the attention geometry that sets the KV cache, and
the per-token KV-cache bytes for each cache type. It is built either from a real file's header
(`facts_from_gguf`) or from a shape and a quantisation (`facts_from_shape`), through the same
summary code, so a synthetic file and its shape agree by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from advisor.core.model import quant
from advisor.core.model.gguf_file import TensorInfo, ggml_type_name, tensor_nbytes
from advisor.core.model.shapes import ModelShape, tensor_layout

# bytes per element of the KV cache for llama.cpp's cache types (-ctk/-ctv)
KV_CACHE_BYTES_PER_ELEMENT: dict[str, float] = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
}
KV_CACHE_TYPES_SHOWN = ("f16", "q8_0", "q4_0")

# architectures whose sliding-window layers follow a fixed period in llama.cpp
# (llama-model.cpp: hparams.set_swa_pattern(n)); layer il is local when il % n < n - 1
SWA_PERIOD_BY_ARCH = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2, "cohere2": 4, "llama4": 4}

# architectures whose local attention span llama.cpp fixes when the file names none
# (llama4: chunked attention over 8192-token chunks unless attention.sliding_window is 0)
DEFAULT_SWA_BY_ARCH = {"llama4": 8192}

# architectures the bundled llama.cpp can load (src/llama-arch.cpp names); a file with another
# architecture is refused before llama.cpp sees it
KNOWN_ARCHITECTURES = frozenset(
    """llama llama4 deci falcon grok gpt2 gptj gptneox mpt baichuan starcoder refact bert
    modern-bert nomic-bert nomic-bert-moe neo-bert jina-bert-v2 jina-bert-v3 bloom stablelm qwen
    qwen2 qwen2moe qwen2vl qwen3 qwen3moe qwen3next qwen3vl qwen3vlmoe phi2 phi3 phimoe plamo
    plamo2 codeshell orion internlm2 minicpm minicpm3 gemma gemma2 gemma3 gemma3n gemma-embedding
    starcoder2 mamba mamba2 jamba falcon-h1 xverse command-r cohere2 dbrx olmo olmo2 olmoe
    openelm arctic deepseek deepseek2 chatglm glm4 glm4moe bitnet t5 t5encoder jais nemotron
    nemotron_h exaone exaone4 rwkv6 rwkv6qwen2 rwkv7 arwkv7 granite granitemoe granitehybrid
    chameleon wavtokenizer-dec plm bailingmoe bailingmoe2 dots1 arcee ernie4_5 ernie4_5-moe
    hunyuan-moe hunyuan-dense smollm3 gpt-oss lfm2 lfm2moe dream smallthinker llada llada-moe
    seed_oss grovemoe apertus minimax-m2 cogvlm rnd1 panguembedded mistral3 afmoe""".split()
)


@dataclass(frozen=True)
class ModelFacts:
    """Everything about a model that sets its speed and its memory needs."""

    architecture: str
    name: str
    file_type: str  # "Q4_K_M"
    n_params: int
    weights_bytes: int
    active_params: int
    active_weights_bytes: int
    n_layers: int
    n_embd: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    value_head_dim: int
    context_length: int
    vocab_size: int
    n_ff: int | None = None
    n_expert: int = 0
    n_expert_used: int = 0
    sliding_window: int | None = None
    n_swa_layers: int = 0
    kv_heads_per_layer: tuple[int, ...] = field(default=(), repr=False)
    swa_layers: tuple[bool, ...] = field(default=(), repr=False)
    # False where llama.cpp caches keys only and reads the values as a view of them: MLA
    # (DeepSeek V2/V3), whose cached latent serves as both (llama-kv-cache.cpp: no V tensor
    # when the model is MLA; deepseek2.cpp builds its attention on build_attn_inp_k)
    kv_stores_values: bool = True
    # blocks from this index on are multi-token-prediction blocks that no token runs
    # (GLM-4.5's NextN block): they are in the file but add no active bytes and no KV cache
    n_main_layers: int | None = None
    # per block (blk.N): (other bytes, routed-expert bytes, other params, routed-expert params):
    # where llama.cpp's -ngl and --n-cpu-moe put a model's tensors (predict/physics/placement)
    blocks: tuple[tuple[int, int, int, int], ...] = field(default=(), repr=False)
    bytes_by_type: dict[str, int] = field(default_factory=dict)
    params_by_type: dict[str, int] = field(default_factory=dict)
    n_tensors: int = 0
    file_bytes: int | None = None
    path: str | None = None
    source: str = "file"  # "file" or "shape"
    shape_id: str | None = None
    # the token-embedding table where the model has an output head of its own: a token reads
    # one row of it (a lookup), never the whole table, and multiplies none of it; 0 where the
    # head is tied to the table (then decode reads all of it, as the head). A run saved before
    # these were kept gets its head from its vocabulary and width on loading (runs.results).
    lookup_params: int = 0
    lookup_bytes: int = 0
    # the output head (the logits): every generated token multiplies it, a prompt only its last
    output_params: int = 0

    @property
    def is_moe(self) -> bool:
        return self.n_expert > 1

    @property
    def is_quantized(self) -> bool:
        """Most of the weights' bytes are in a quantised (block) type, not F32/F16/BF16."""
        plain = sum(b for t, b in self.bytes_by_type.items() if t in ("F32", "F16", "BF16", "F64"))
        return plain < 0.5 * self.weights_bytes

    def kv_bytes_per_token(self, cache_type: str = "f16") -> float:
        """KV-cache bytes one token adds, summed over all layers (K and V)."""
        per_elem = KV_CACHE_BYTES_PER_ELEMENT[cache_type]
        return sum(kv * self._kv_width() * per_elem for kv in self._kv_heads())

    def kv_cache_bytes(self, depth: int, cache_type: str = "f16") -> float:
        """KV-cache bytes at `depth` tokens of context; sliding-window layers hold their window.

        This is also what one decode step reads from the cache at that depth.
        """
        per_elem = KV_CACHE_BYTES_PER_ELEMENT[cache_type]
        total = 0.0
        swa = self.swa_layers or (False,) * self.n_layers
        for kv, local in zip(self._kv_heads(), swa, strict=False):
            tokens = min(depth, self.sliding_window) if local and self.sliding_window else depth
            total += tokens * kv * self._kv_width() * per_elem
        return total

    def decode_bytes_per_token(self, depth: int = 0, cache_type: str = "f16") -> float:
        """Bytes one decode step reads, as the ceilings count them (DESIGN.md): the active
        weights plus the KV cache at `depth`."""
        return self.active_weights_bytes + self.kv_cache_bytes(depth, cache_type)

    # What the fitted speed model counts (predict/model/speed_model.py): a step does not read the
    # token table whole (a token looks one row up) and a prompt token multiplies neither the
    # table nor the output head (llama.cpp runs the head for the last prompt token only).
    # The ceilings keep DESIGN.md's simpler count, an upper bound either way.
    @property
    def step_weights_bytes(self) -> int:
        """Weight bytes one decode step really reads: the active weights less the token
        table where the model has an output head of its own."""
        return self.active_weights_bytes - self.lookup_bytes

    def prompt_flops_per_token(self, depth: int = 0) -> float:
        """FLOPs one prompt token really does: `flops_per_token` less the token table and
        the output head."""
        return self.flops_per_token(depth) - 2.0 * (self.lookup_params + self.output_params)

    def flops_per_token(self, depth: int = 0) -> float:
        """FLOPs to process one token (DESIGN.md): 2 per active parameter plus attention over
        `depth`."""
        attn = 0.0
        swa = self.swa_layers or (False,) * self.n_layers
        for local, kv in zip(swa, self._kv_heads(), strict=False):
            if not kv:  # a block no token runs (multi-token prediction)
                continue
            tokens = min(depth, self.sliding_window) if local and self.sliding_window else depth
            attn += 2 * tokens * self.n_heads * (self.head_dim + self.value_head_dim)
        return 2.0 * self.active_params + attn

    def _kv_heads(self) -> tuple[int, ...]:
        return self.kv_heads_per_layer or (self.n_kv_heads,) * self.n_layers

    def _kv_width(self) -> int:
        """Elements one KV head caches per token: key and value, or the key alone (MLA)."""
        return self.head_dim + (self.value_head_dim if self.kv_stores_values else 0)

    def to_json(self) -> dict[str, Any]:
        """Stable JSON form (SI units: bytes)."""
        d = asdict(self)
        d["kv_heads_per_layer"] = list(self.kv_heads_per_layer)
        d["swa_layers"] = list(self.swa_layers)
        d["blocks"] = [list(b) for b in self.blocks]
        d["kv_bytes_per_token"] = self.kv_bytes_per_token("f16")
        d["kv_bytes_per_token_by_cache_type"] = {
            t: self.kv_bytes_per_token(t) for t in KV_CACHE_TYPES_SHOWN
        }
        d["kv_cache_bytes_at_context"] = self.kv_cache_bytes(self.context_length, "f16")
        d["is_moe"] = self.is_moe
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelFacts:
        """Rebuild facts saved with a run (derived keys are ignored)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["kv_heads_per_layer"] = tuple(values.get("kv_heads_per_layer") or ())
        values["swa_layers"] = tuple(bool(v) for v in values.get("swa_layers") or ())
        values["blocks"] = tuple(tuple(int(x) for x in b) for b in values.get("blocks") or ())
        return cls(**values)


# -------------------------------------------------------------------------------------------
# shared summary
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorRecord:
    """A tensor's name, shape, type and size: all the summary needs."""

    name: str
    shape: tuple[int, ...]
    type_name: str
    n_elements: int
    n_bytes: int


def summarise_tensors(
    tensors: Sequence[TensorRecord],
    n_expert: int,
    n_expert_used: int,
    n_main_layers: int | None = None,
) -> dict[str, Any]:
    """Totals over a model's tensors; what a token reads counts routed experts at
    n_expert_used / n_expert and the blocks from `n_main_layers` on (MTP blocks) not at all."""
    n_params = sum(t.n_elements for t in tensors)
    weights = sum(t.n_bytes for t in tensors)
    by_type: dict[str, int] = {}
    params_by_type: dict[str, int] = {}
    active_params = 0.0
    active_bytes = 0.0
    for t in tensors:
        by_type[t.type_name] = by_type.get(t.type_name, 0) + t.n_bytes
        params_by_type[t.type_name] = params_by_type.get(t.type_name, 0) + t.n_elements
        share = 1.0
        # routed experts: only n_expert_used of n_expert are read per token
        if n_expert > 1 and "_exps." in t.name:
            share = n_expert_used / n_expert
        if n_main_layers is not None and _block_index(t.name) >= n_main_layers:
            share = 0.0
        active_params += t.n_elements * share
        active_bytes += t.n_bytes * share
    blocks: dict[int, list[int]] = {}
    for t in tensors:
        index = _block_index(t.name)
        if index < 0:
            continue
        entry = blocks.setdefault(index, [0, 0, 0, 0])
        routed = n_expert > 1 and "_exps." in t.name
        entry[1 if routed else 0] += t.n_bytes
        entry[3 if routed else 2] += t.n_elements
    named = {t.name: t for t in tensors}
    table, head = named.get("token_embd.weight"), named.get("output.weight")
    lookup = table if table is not None and head is not None else None
    logits = head if head is not None else table
    return {
        "n_params": n_params,
        "weights_bytes": weights,
        "active_params": round(active_params),
        "active_weights_bytes": round(active_bytes),
        "bytes_by_type": dict(sorted(by_type.items(), key=lambda kv: -kv[1])),
        "params_by_type": dict(sorted(params_by_type.items(), key=lambda kv: -kv[1])),
        "n_tensors": len(tensors),
        "lookup_params": lookup.n_elements if lookup else 0,
        "lookup_bytes": lookup.n_bytes if lookup else 0,
        "output_params": logits.n_elements if logits is not None else 0,
        "blocks": tuple(tuple(blocks[i]) for i in sorted(blocks)),
    }


def _block_index(name: str) -> int:
    """The block a tensor belongs to ('blk.12.attn_q.weight' -> 12), -1 outside the blocks."""
    if not name.startswith("blk."):
        return -1
    number = name[4 : name.find(".", 4)]
    return int(number) if number.isdigit() else -1


def tensor_record(t: TensorInfo) -> TensorRecord:
    """The summary's view of a tensor read from a file header."""
    return TensorRecord(t.name, t.shape, t.type_name, t.n_elements, t.n_bytes)


# -------------------------------------------------------------------------------------------
# from a built-in shape
# -------------------------------------------------------------------------------------------


def mix_context(shape: ModelShape) -> quant.MixContext:
    """What llama-quantize knows about a model of this shape."""
    return quant.MixContext(
        n_layers=shape.n_layers,
        n_expert=shape.n_expert,
        n_gqa=max(1, shape.n_heads // max(1, shape.n_kv_heads)),
        # llama.cpp classes 80-layer llama/qwen2 models as LLM_TYPE_70B
        is_70b_class=shape.architecture in ("llama", "qwen2") and shape.n_layers == 80,
    )


def typed_layout(shape: ModelShape, quant_label: str) -> list[tuple[str, tuple[int, ...], int]]:
    """The tensors of a shape with the ggml type llama-quantize gives each: (name, dims, type)."""
    ftype = quant.file_type(quant_label)
    layout = tensor_layout(shape)
    types = [int(t) for t in quant.tensor_types_for(layout, ftype, mix_context(shape))]
    if shape.native_expert_type:
        native = quant.ggml_type_by_name(shape.native_expert_type)
        types = [
            native if "_exps.weight" in name else t
            for (name, _), t in zip(layout, types, strict=True)
        ]
    return [(name, dims, t) for (name, dims), t in zip(layout, types, strict=True)]


def facts_from_shape(shape: ModelShape, quant_label: str) -> ModelFacts:
    """Model facts for a built-in shape at a quantisation, without any file."""
    ftype = quant.file_type(quant_label)
    tensors = []
    for name, dims, ggml_type in typed_layout(shape, quant_label):
        n = 1
        for d in dims:
            n *= d
        tensors.append(
            TensorRecord(name, dims, ggml_type_name(ggml_type), n, tensor_nbytes(dims, ggml_type))
        )
    main = shape.n_main_layers if shape.n_nextn_layers else None
    summary = summarise_tensors(tensors, shape.n_expert, shape.n_expert_used, main)
    swa = shape.swa_layers()
    # what llama.cpp caches: MLA's one latent per token (keys only), no MTP block
    n_kv_heads, key_length, value_length = shape.cache_geometry()
    return ModelFacts(
        architecture=shape.architecture,
        name=shape.display_name,
        file_type=ftype.label,
        n_layers=shape.n_layers,
        n_embd=shape.n_embd,
        n_heads=shape.n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=key_length,
        value_head_dim=value_length,
        kv_heads_per_layer=shape.kv_heads_per_layer() if shape.n_nextn_layers else (),
        kv_stores_values=not shape.is_mla,
        n_main_layers=main,
        context_length=shape.context_length,
        vocab_size=shape.vocab_size,
        n_ff=shape.n_ff_expert if shape.is_moe else shape.n_ff,
        n_expert=shape.n_expert,
        n_expert_used=shape.n_expert_used,
        sliding_window=shape.sliding_window if any(swa) else None,
        n_swa_layers=sum(swa),
        swa_layers=swa,
        source="shape",
        shape_id=shape.id,
        **summary,
    )
