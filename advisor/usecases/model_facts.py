"""What the Model page says about the chosen model: the facts that set its speed, and whether
it fits this machine's memory with a short and a long context. The page lays them out."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.hardware.model import HardwareReport
from advisor.core.hardware.profile import MachineProfile
from advisor.core.infra.units import GiB, fmt_bytes, fmt_params
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import memory_need
from advisor.usecases.machine_facts import Fact, FactSheet

# a model fits where it needs at most this share of the memory (the rest: the OS, the
# driver's own buffers and the compute graph's scratch space)
FIT_SHARE = 0.9
SHORT_CONTEXT = 4096  # the context 'fits with up to 4k context' speaks of
LONG_CONTEXT = 32768  # ... and the long one (capped at the model's own)


def model_sheet(f: ModelFacts, source: str) -> FactSheet:
    """Parameters, quantisation, weights, layers, the KV cache per 1,000 tokens, the trained
    context, experts and a sliding window where the model has them."""
    kv_1k = f.kv_bytes_per_token("f16") * 1024
    facts = [
        Fact("", "", source),
        Fact(
            "Size",
            f"{fmt_params(f.n_params)} parameters · {f.file_type} · "
            f"{fmt_bytes(f.weights_bytes)} of weights ({f.weights_bytes / GiB:.2f} GiB)",
        ),
    ]
    if f.is_moe:
        facts.append(
            Fact(
                "Mixture of experts",
                f"{f.n_expert_used} of {f.n_expert} experts per token: "
                f"{fmt_params(f.active_params)} parameters, {fmt_bytes(f.active_weights_bytes)} "
                "read per token",
            )
        )
    facts.append(
        Fact(
            "Shape",
            f"{f.architecture}, {f.n_layers} layers, {f.n_heads} attention heads "
            f"({f.n_kv_heads} for keys and values), head size {f.head_dim}",
        )
    )
    facts.append(
        Fact(
            "KV cache",
            f"{fmt_bytes(kv_1k)} per 1,000 tokens of context (f16); trained context "
            f"{f.context_length:,} tokens",
        )
    )
    if f.sliding_window:
        facts.append(
            Fact(
                "",
                "",
                f"{f.n_swa_layers} of {f.n_layers} layers look back only "
                f"{f.sliding_window:,} tokens (sliding window).",
            )
        )
    return FactSheet(f.name, tuple(facts))


@dataclass(frozen=True)
class FitHere:
    """Whether the model fits this machine: 'yes', 'partial' (a short context only) or 'no'."""

    fits: str
    label: str  # 'Fits in VRAM'
    verdict: str  # 'fits with up to 4k context'
    detail: str  # what it needs and what there is


def fit_here(
    f: ModelFacts, profile: MachineProfile | None, report: HardwareReport | None
) -> FitHere | None:
    """The model with its KV cache against the card's memory (or free RAM), at 4k and 32k."""
    if profile is None or report is None:
        return None
    need_short = memory_need(f, SHORT_CONTEXT).total_bytes
    need_long = memory_need(f, min(LONG_CONTEXT, f.context_length or LONG_CONTEXT)).total_bytes
    gpu_memory = None if profile.device.is_cpu else profile.device.memory_bytes
    where, capacity = (
        ("VRAM", gpu_memory)
        if gpu_memory and not profile.device.unified_memory
        else ("RAM", report.ram.available_bytes or report.ram.total_bytes)
    )
    if not capacity:
        return None
    ok_short = need_short <= capacity * FIT_SHARE
    ok_long = need_long <= capacity * FIT_SHARE
    fits = "yes" if ok_long else "partial" if ok_short else "no"
    verdict = {"yes": "fits", "partial": "fits with up to 4k context", "no": "does not fit"}[fits]
    detail = (
        f"needs {need_short / GiB:.1f} GiB at 4k tokens of context, {need_long / GiB:.1f} GiB "
        f"at 32k; {capacity / GiB:.1f} GiB {'free' if where == 'RAM' else 'on the card'}"
    )
    return FitHere(fits, f"Fits in {where}", verdict, detail)
