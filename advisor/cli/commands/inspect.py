"""`advisor inspect MODEL.gguf`: model facts from the GGUF header, without loading it."""

from __future__ import annotations

import argparse

from advisor.cli.output import Output, format_pairs
from advisor.core.infra.units import GiB, fmt_bytes, fmt_params
from advisor.core.model.facts import ModelFacts
from advisor.core.model.gguf_facts import facts_from_gguf


def run(args: argparse.Namespace) -> Output:
    facts = facts_from_gguf(args.model)
    return Output(facts.to_json(), lambda: text(facts))


def text(facts: ModelFacts) -> str:
    kv = {t: facts.kv_bytes_per_token(t) for t in ("f16", "q8_0", "q4_0")}
    rows: list[tuple[str, object]] = [
        ("name", facts.name),
        ("architecture", facts.architecture),
        ("file type", facts.file_type),
        ("parameters", f"{fmt_params(facts.n_params)} ({facts.n_params:,})"),
        ("weights", f"{fmt_bytes(facts.weights_bytes)} ({facts.weights_bytes / GiB:.2f} GiB)"),
    ]
    if facts.is_moe:
        rows += [
            ("experts", f"{facts.n_expert_used} of {facts.n_expert} used per token"),
            (
                "active per token",
                f"{fmt_params(facts.active_params)}, {fmt_bytes(facts.active_weights_bytes)}",
            ),
        ]
    rows += [
        ("layers", facts.n_layers),
        ("embedding length", facts.n_embd),
        ("attention heads", f"{facts.n_heads} (KV heads {facts.n_kv_heads})"),
        ("head dimension", f"{facts.head_dim} (value {facts.value_head_dim})"),
        ("feed-forward length", facts.n_ff),
        ("context length", f"{facts.context_length:,} tokens"),
        ("vocabulary", f"{facts.vocab_size:,} tokens"),
    ]
    if facts.sliding_window:
        rows.append(
            (
                "sliding window",
                f"{facts.sliding_window:,} tokens on {facts.n_swa_layers} of "
                f"{facts.n_layers} layers",
            )
        )
    rows += [
        (
            "KV cache per token",
            ", ".join(f"{fmt_bytes(v, binary=True)} ({t})" for t, v in kv.items()),
        ),
        (
            "KV cache at full context",
            f"{fmt_bytes(facts.kv_cache_bytes(facts.context_length))} (f16)",
        ),
        (
            "tensors by type",
            ", ".join(f"{t} {fmt_bytes(b)}" for t, b in facts.bytes_by_type.items()),
        ),
    ]
    return format_pairs(rows)
