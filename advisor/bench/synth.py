"""Write random-weight GGUF files in the exact tensor layout of real models.

Nothing on a user's machine (or in CI) may need to download multi-gigabyte weights to see the
app work, so this writes a model of a real shape (tensor names, GGUF dimensions, llama.cpp's
per-tensor quantisation mix, metadata, a vocabulary of the right size) filled with random but
*valid* quantised blocks: every scale field is a small finite half-float, so llama.cpp loads it
and computes without NaNs, at the same speed as the downloaded model of that shape.

Weights are streamed from a pool of pre-generated blocks, so writing runs at disk speed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

from advisor.core.infra.errors import InputError, RunError, os_reason
from advisor.core.model import quant
from advisor.core.model.facts import typed_layout
from advisor.core.model.shapes import ModelShape, get_shape

T = gguf.GGMLQuantizationType
SYNTH_FORMAT_VERSION = 1
POOL_BYTES = 4 * 1024 * 1024
PARTIAL_SUFFIX = ".partial"
MAX_LAYERS = 512  # more than any published model (Llama 3.1 405B has 126)
SPACE_MARGIN_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 8 * 1024 * 1024

# Position and size of the scale fields inside one block of each type (little endian), and a
# magnitude that keeps dequantised weights around +-0.02 like a trained model's.
# (offset, "f16" | "e8m0", magnitude)
_SCALES: dict[T, list[tuple[int, str, float]]] = {
    T.Q4_0: [(0, "f16", 3e-3)],
    T.Q4_1: [(0, "f16", 3e-3), (2, "f16", 1e-2)],
    T.Q5_0: [(0, "f16", 1.5e-3)],
    T.Q5_1: [(0, "f16", 1.5e-3), (2, "f16", 1e-2)],
    T.Q8_0: [(0, "f16", 1.5e-4)],
    T.Q2_K: [(80, "f16", 4e-4), (82, "f16", 4e-4)],
    T.Q3_K: [(108, "f16", 1.5e-4)],
    T.Q4_K: [(0, "f16", 2e-5), (2, "f16", 2e-5)],
    T.Q5_K: [(0, "f16", 1e-5), (2, "f16", 1e-5)],
    T.Q6_K: [(208, "f16", 1e-5)],
    T.IQ4_NL: [(0, "f16", 1.5e-4)],
    T.IQ4_XS: [(0, "f16", 5e-6)],
    T.MXFP4: [(0, "e8m0", 2.0**-9)],
}


class SynthError(RunError):
    """The synthetic model could not be written (disk full, unwritable folder ...)."""


@dataclass(frozen=True)
class SynthResult:
    path: Path
    file_bytes: int
    shape_id: str
    quant: str
    n_layers: int


def _block_pool(ggml_type: T, rng: np.random.Generator) -> bytes:
    """Random bytes of whole blocks of `ggml_type`, every scale field a valid small value."""
    type_size = gguf.GGML_QUANT_SIZES[ggml_type][1]
    if ggml_type == T.F32:
        return (rng.standard_normal(POOL_BYTES // 4) * 0.02).astype("<f4").tobytes()
    if ggml_type == T.F16:
        return (rng.standard_normal(POOL_BYTES // 2) * 0.02).astype("<f2").tobytes()
    if ggml_type == T.BF16:
        f32 = (rng.standard_normal(POOL_BYTES // 2) * 0.02).astype("<f4")
        return (f32.view("<u4") >> 16).astype("<u2").tobytes()
    if ggml_type not in _SCALES:
        raise SynthError(f"cannot write synthetic blocks of type {ggml_type.name}")
    n_blocks = max(1, POOL_BYTES // type_size)
    pool = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for offset, kind, magnitude in _SCALES[ggml_type]:
        if kind == "f16":
            values = (rng.uniform(0.5, 1.5, n_blocks) * magnitude).astype("<f2")
            pool[:, offset : offset + 2] = values.view(np.uint8).reshape(n_blocks, 2)
        else:  # e8m0 exponent byte: 2^(e-127)
            e = round(np.log2(magnitude)) + 127
            pool[:, offset] = rng.integers(e - 1, e + 2, n_blocks, dtype=np.uint8)
    return pool.tobytes()


def _small_tensor(name: str, dims: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """F32 tensors (norms, biases, sinks, router): values like a trained model's."""
    n = int(np.prod(dims))
    if name.endswith("norm.weight"):
        values = 1.0 + rng.standard_normal(n) * 0.02
    elif "attn_sinks" in name:
        values = np.zeros(n)
    else:
        values = rng.standard_normal(n) * 0.02
    return values.astype("<f4")


def _vocab(n_vocab: int) -> tuple[list[str], list[float], list[int]]:
    """A SentencePiece-style vocabulary of the right size: specials, 256 byte tokens, fillers."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256  # UNKNOWN, CONTROL, CONTROL, BYTE
    n_fill = max(0, n_vocab - len(tokens))
    tokens += [f"\u2581t{i}" for i in range(n_fill)]
    types += [1] * n_fill  # NORMAL
    tokens, types = tokens[:n_vocab], types[:n_vocab]
    scores = [0.0] * 3 + [0.0] * 256 + [-float(i) for i in range(n_fill)]
    return tokens, scores[:n_vocab], types


def _add_metadata(w: gguf.GGUFWriter, shape: ModelShape, ftype: quant.FileType) -> None:
    arch = shape.architecture
    w.add_string("general.type", "model")
    w.add_string("general.name", f"Synthetic {shape.display_name} ({ftype.label}, random weights)")
    w.add_uint32("general.file_type", ftype.llama_ftype)
    w.add_uint32("general.quantization_version", gguf.GGML_QUANT_VERSION)
    w.add_string("advisor.synthetic.shape", shape.id)
    w.add_uint32("advisor.synthetic.format_version", SYNTH_FORMAT_VERSION)
    w.add_uint32(f"{arch}.context_length", shape.context_length)
    w.add_uint32(f"{arch}.embedding_length", shape.n_embd)
    w.add_uint32(f"{arch}.block_count", shape.n_layers)
    w.add_uint32(f"{arch}.feed_forward_length", shape.n_ff)
    n_kv_heads, key_length, value_length = shape.cache_geometry()
    w.add_uint32(f"{arch}.attention.head_count", shape.n_heads)
    w.add_uint32(f"{arch}.attention.head_count_kv", n_kv_heads)
    w.add_uint32(f"{arch}.attention.key_length", key_length)
    w.add_uint32(f"{arch}.attention.value_length", value_length)
    w.add_uint32(f"{arch}.rope.dimension_count", shape.n_rot)
    w.add_float32(f"{arch}.rope.freq_base", float(shape.rope_theta))
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", float(shape.rms_norm_eps))
    w.add_uint32(f"{arch}.vocab_size", shape.vocab_size)
    if shape.is_mla:
        _add_mla_metadata(w, shape)
    if shape.is_moe:
        w.add_uint32(f"{arch}.expert_count", shape.n_expert)
        w.add_uint32(f"{arch}.expert_used_count", shape.n_expert_used)
        w.add_uint32(f"{arch}.expert_feed_forward_length", shape.n_ff_expert or shape.n_ff)
        _add_moe_pattern_metadata(w, shape)
    if shape.sliding_window:
        w.add_uint32(f"{arch}.attention.sliding_window", shape.sliding_window)
    if shape.attn_logit_softcap:
        w.add_float32(f"{arch}.attn_logit_softcapping", float(shape.attn_logit_softcap))
    if shape.final_logit_softcap:
        w.add_float32(f"{arch}.final_logit_softcapping", float(shape.final_logit_softcap))
    tokens, scores, types = _vocab(shape.vocab_size)
    w.add_string("tokenizer.ggml.model", "llama")
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_array("tokenizer.ggml.scores", scores)
    w.add_array("tokenizer.ggml.token_type", types)
    w.add_uint32("tokenizer.ggml.unknown_token_id", 0)
    w.add_uint32("tokenizer.ggml.bos_token_id", 1)
    w.add_uint32("tokenizer.ggml.eos_token_id", 2)
    w.add_bool("tokenizer.ggml.add_bos_token", True)


def _add_mla_metadata(w: gguf.GGUFWriter, shape: ModelShape) -> None:
    """Multi-head latent attention, as convert_hf_to_gguf.py's DeepseekV2Model writes it: the
    latent's ranks, and the per-head sizes after decompression (key_length_mla)."""
    arch = shape.architecture
    if shape.q_lora_rank:
        w.add_uint32(f"{arch}.attention.q_lora_rank", shape.q_lora_rank)
    w.add_uint32(f"{arch}.attention.kv_lora_rank", shape.kv_lora_rank or 0)
    w.add_uint32(f"{arch}.attention.key_length_mla", shape.head_dim)
    w.add_uint32(f"{arch}.attention.value_length_mla", shape.value_head_dim)


def _add_moe_pattern_metadata(w: gguf.GGUFWriter, shape: ModelShape) -> None:
    """Which layers have experts, shared experts and the router's kind (the keys llama.cpp's
    loaders for glm4moe, deepseek2, llama4 and ernie4_5-moe read)."""
    arch = shape.architecture
    if shape.n_dense_lead or arch in ("glm4moe", "deepseek2", "ernie4_5-moe"):
        w.add_uint32(f"{arch}.leading_dense_block_count", shape.n_dense_lead)
    if shape.moe_layer_step != 1 or arch in ("llama4", "ernie4_5-moe"):
        w.add_uint32(f"{arch}.interleave_moe_layer_step", shape.moe_layer_step)
    if shape.n_expert_shared:
        w.add_uint32(f"{arch}.expert_shared_count", shape.n_expert_shared)
        if shape.n_ff_shared_expert:
            w.add_uint32(f"{arch}.expert_shared_feed_forward_length", shape.n_ff_shared_expert)
    if shape.expert_gating_func:
        gating = gguf.ExpertGatingFuncType[shape.expert_gating_func.upper()]
        w.add_uint32(f"{arch}.expert_gating_func", int(gating))
    if shape.expert_weights_scale is not None:
        w.add_float32(f"{arch}.expert_weights_scale", float(shape.expert_weights_scale))
    if shape.expert_weights_norm:
        w.add_bool(f"{arch}.expert_weights_norm", True)
    if shape.n_nextn_layers:
        w.add_uint32(f"{arch}.nextn_predict_layers", shape.n_nextn_layers)


def write_synthetic_gguf(
    path: str | os.PathLike[str],
    shape: ModelShape | str,
    quant_label: str,
    *,
    n_layers: int | None = None,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    sparse: bool = False,
    overwrite: bool = True,
) -> SynthResult:
    """Write a random-weight GGUF of `shape` at `quant_label` to `path` (atomically).

    The file is written under a name of its own (so two processes writing the same model both
    succeed) and renamed into place; on any error or interruption the partial file is removed.
    `overwrite=False` refuses an existing file. `sparse=True` leaves the weights as holes in a
    sparse file (all zeros when read): a full-size model on any disk in no time, for checks
    that never run it (e.g. memory preflight of a 70B model).
    """
    if isinstance(shape, str):
        shape = get_shape(shape)
    if n_layers is not None:
        if not 1 <= n_layers <= MAX_LAYERS:
            raise InputError(
                f"--layers takes a whole number from 1 to {MAX_LAYERS}, not {n_layers}."
            )
        shape = shape.with_layers(n_layers)
    ftype = quant.file_type(quant_label)
    layout = typed_layout(shape, ftype.label)
    sizes = [
        quant.bytes_per_block(t) * int(np.prod(dims)) // quant.block_size(t)
        for _, dims, t in layout
    ]
    out = Path(path)
    _check_target(out, overwrite)
    _check_space(out.parent, 0 if sparse else sum(sizes))
    tmp = out.with_name(f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}{PARTIAL_SUFFIX}")
    writer = gguf.GGUFWriter(str(tmp), shape.architecture, use_temp_file=False)
    try:
        _add_metadata(writer, shape, ftype)
        for (name, dims, ggml_type), nbytes in zip(layout, sizes, strict=True):
            # the writer takes numpy (reversed) dims; the dtype only matters when it is uint8
            writer.add_tensor_info(
                name, tuple(reversed(dims)), np.dtype(np.float32), nbytes, raw_dtype=T(ggml_type)
            )
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        _write_tensors(writer, layout, sizes, np.random.default_rng(seed), sparse, progress)
        writer.close()
        os.replace(tmp, out)
    except OSError as exc:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise SynthError(f"{out.name} could not be written ({os_reason(exc)}).") from exc
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    return SynthResult(out, out.stat().st_size, shape.id, ftype.label, shape.n_layers)


def _tensor_bytes(dims: tuple[int, ...], ggml_type: int) -> int:
    return quant.bytes_per_block(ggml_type) * int(np.prod(dims)) // quant.block_size(ggml_type)


def _check_target(out: Path, overwrite: bool) -> None:
    """Refuse a folder, and an existing file unless asked to replace it."""
    if out.is_dir():
        raise InputError(f"{out.name} is a folder; give the name of the .gguf file to write.")
    if out.exists() and not overwrite:
        raise InputError(
            f"{out.name} already exists; choose another name, or add --force to replace it."
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SynthError(f"The folder for {out.name} cannot be made ({os_reason(exc)}).") from exc


def _check_space(folder: Path, needed: int) -> None:
    """Refuse, before writing anything, a model the disk cannot hold."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return  # unknown: the write itself will say
    if needed + SPACE_MARGIN_BYTES > free:
        raise SynthError(
            f"The model needs {needed / 1e9:,.2f} GB but only {free / 1e9:,.2f} GB are free "
            f"on the disk of {folder}; free some space or choose fewer layers."
        )


def _write_tensors(
    writer: gguf.GGUFWriter,
    layout: list[tuple[str, tuple[int, ...], int]],
    sizes: list[int],
    rng: np.random.Generator,
    sparse: bool,
    progress: Callable[[int, int], None] | None,
) -> None:
    """The tensor data: valid random blocks from a pool (or holes when sparse), aligned."""
    fout = writer.fout[0]
    alignment = writer.data_alignment
    pools: dict[int, bytes] = {}
    total, written = sum(sizes), 0
    for (name, dims, ggml_type), nbytes in zip(layout, sizes, strict=True):
        pad = -fout.tell() % alignment
        if pad:
            fout.write(b"\0" * pad)
        if sparse:
            fout.seek(nbytes, os.SEEK_CUR)
        elif ggml_type == T.F32:
            fout.write(_small_tensor(name, dims, rng).tobytes())
        else:
            if ggml_type not in pools:
                pools[ggml_type] = _block_pool(T(ggml_type), rng)
            pool = memoryview(pools[ggml_type])
            type_size = quant.bytes_per_block(ggml_type)
            start = int(rng.integers(0, len(pool) // type_size)) * type_size
            remaining = nbytes
            while remaining:
                chunk = pool[start : start + min(remaining, len(pool) - start)]
                fout.write(chunk)
                remaining -= len(chunk)
                start = 0
        written += nbytes
        if progress:
            progress(written, total)
    pad = -fout.tell() % alignment
    if pad:
        fout.write(b"\0" * pad)
    fout.truncate()


def remove_stale_partials(folder: Path) -> int:
    """Remove partial files left by writers that are gone (killed mid-write); how many."""
    removed = 0
    for tmp in folder.glob(f".*{PARTIAL_SUFFIX}"):
        parts = tmp.name.split(".")
        pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else None
        if pid is not None and pid != os.getpid() and _alive(pid):
            continue
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        import psutil

        return bool(psutil.pid_exists(pid))
    except Exception:  # unknown: leave the file alone
        return True


def synthetic_file_name(shape_id: str, quant_label: str, n_layers: int | None = None) -> str:
    """The cache file name for a synthetic model (format version in the name: stale files are
    never reused after the writer changes)."""
    layers = f"-L{n_layers}" if n_layers else ""
    label = quant.file_type(quant_label).label.lower()
    return f"{shape_id}-{label}{layers}-v{SYNTH_FORMAT_VERSION}.gguf"
