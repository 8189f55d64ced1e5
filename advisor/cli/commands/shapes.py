"""`advisor shapes`: the built-in model shapes and their size per quantisation."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.cli.output import Output, format_table
from advisor.core.infra.units import GB, fmt_bytes
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.quant import COMMON_QUANTS
from advisor.core.model.shapes import ModelShape, all_shapes, shape_as_dict


def run(args: argparse.Namespace) -> Output:
    shapes = all_shapes()
    return Output([_shape_json(s) for s in shapes], lambda: text(shapes))


def _shape_json(s: ModelShape) -> dict[str, Any]:
    d = shape_as_dict(s)
    f16 = facts_from_shape(s, "f16")
    d["n_params"] = f16.n_params
    d["active_params"] = f16.active_params
    d["kv_bytes_per_token"] = f16.kv_bytes_per_token("f16")
    per_quant = {q: facts_from_shape(s, q) for q in COMMON_QUANTS}
    d["weights_bytes"] = {q: f.weights_bytes for q, f in per_quant.items()}
    d["active_weights_bytes"] = {q: f.active_weights_bytes for q, f in per_quant.items()}
    return d


def text(shapes: list[ModelShape]) -> str:
    headers = ["shape", "arch", "params", "layers", "heads/kv", "ctx", "KV/token"] + [
        q.upper() for q in COMMON_QUANTS
    ]
    rows = []
    for s in shapes:
        f16 = facts_from_shape(s, "f16")
        params = f"{f16.n_params / 1e9:.2f}B"
        if s.is_moe:
            params += f" ({f16.active_params / 1e9:.1f}B act)"
        sizes = [f"{facts_from_shape(s, q).weights_bytes / GB:.2f}" for q in COMMON_QUANTS]
        rows.append(
            [
                s.id,
                s.architecture,
                params,
                s.n_layers,
                f"{s.n_heads}/{s.n_kv_heads}",
                f"{s.context_length // 1024}k",
                fmt_bytes(f16.kv_bytes_per_token(), binary=True),
                *sizes,
            ]
        )
    table = format_table(headers, rows, right=range(7, 7 + len(COMMON_QUANTS)))
    return (
        table
        + "\n\nWeights in GB (10^9 bytes) per quantisation, with llama.cpp's per-tensor type mix."
    )
