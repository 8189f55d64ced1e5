"""Before a benchmark loads anything: which of its tests fit in memory, each on its own.

Each test gets its own llama.cpp context (like llama-bench), so what must fit is the model, the
KV cache of *that* test (its depth and prompt and generated tokens, times its stream count) and
the compute buffers: never the largest depth times the largest stream count, which no test
combines. The memory is all of it the backend will use: every GPU llama.cpp splits layers
across (their free memory summed), unified memory counted once, or free RAM on a CPU run.

A test that does not fit is skipped with one sentence; the others run. The user can ask to
run it anyway (`allow_oversize`: the CLI's --allow-oversize, the app's "Run anyway").

A placement llama.cpp cannot give is refused before anything loads (`placement_refusal`):
experts kept in RAM (--cpu-moe) or layers put on a card (--gpu-layers) where there is no card,
and experts kept in RAM for a model that has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.hardware.model import BackendInfo, LlamaDevice
from advisor.core.infra.units import GiB
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import MARGIN, MemoryNeed, memory_need
from advisor.core.runs.config import BenchConfig, TestSpec

GPU_MARGIN = 0.03


@dataclass(frozen=True)
class Available:
    """Memory a run can use: bytes (None: unknown), in words, and how many devices."""

    bytes: int | None
    where: str  # "VRAM on 2 GPUs", "unified memory", "RAM"
    devices: int = 1
    # left unused: RAM is shared with the OS and every other program; a GPU's free memory as
    # its driver reports it is already net of what others hold, so less is kept back there
    margin: float = MARGIN


@dataclass(frozen=True)
class Skipped:
    test: str
    reason: str


@dataclass(frozen=True)
class Plan:
    """The tests that run, the ones skipped with their sentences, or one reason none can."""

    runnable: tuple[TestSpec, ...]
    skipped: tuple[Skipped, ...] = ()
    refused: str = ""  # non-empty: nothing can run (the weights alone do not fit)
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refused


def gpu_devices(backend: BackendInfo) -> list[LlamaDevice]:
    """The GPUs llama.cpp can put weights on (discrete and integrated)."""
    return [d for d in backend.devices if d.type in ("GPU", "iGPU")]


def has_gpu(backend: BackendInfo) -> bool:
    """Can llama.cpp keep weights on a card here? A build too old to list its devices is
    taken at its word (llama_supports_gpu_offload)."""
    return backend.gpu_offload and (not backend.devices or bool(gpu_devices(backend)))


def placement_refusal(
    config: BenchConfig, facts: ModelFacts, backend: BackendInfo | None = None
) -> str:
    """Why llama.cpp cannot place the model as asked, in one sentence ('' where it can): experts
    in RAM for a dense model, or a split between a card and RAM where there is no card.
    `backend` None (not known yet) checks the model only."""
    if config.cpu_moe > 0 and not facts.is_moe:
        return (
            f"{facts.name} is a dense model, with no experts to keep in RAM: --cpu-moe works "
            "only on mixture-of-experts models; run without it."
        )
    if backend is None or not backend.available or has_gpu(backend):
        return ""
    if config.cpu_moe > 0:
        return (
            "This machine has no GPU for llama.cpp, so there is no card to keep the rest of "
            "the model on: --cpu-moe needs a GPU; run without it to measure the CPU."
        )
    if config.gpu_layers:
        return (
            "This machine has no GPU for llama.cpp, so there is no card to put layers on: "
            "--gpu-layers needs a GPU; run without it to measure the CPU."
        )
    return ""


def available_memory(
    backend: BackendInfo, gpu_layers: int, ram_available_bytes: int | None
) -> Available:
    """What the run can use: every discrete GPU's free memory summed (llama.cpp splits the
    layers across all of them), an integrated or unified-memory GPU counted once, or RAM."""
    gpus = gpu_devices(backend)
    if gpu_layers > 0 and gpus:
        discrete = [d for d in gpus if d.type == "GPU"]
        unified = any("metal" in d.name.lower() or "mtl" in d.name.lower() for d in gpus)
        if discrete and not unified:
            free = sum(int(d.memory_free_bytes) for d in discrete)
            where = "VRAM" if len(discrete) == 1 else f"VRAM on {len(discrete)} GPUs"
            return Available(free or None, where, len(discrete), GPU_MARGIN)
        first = gpus[0]
        return Available(int(first.memory_free_bytes) or None, "unified memory", 1, GPU_MARGIN)
    return Available(ram_available_bytes, "RAM", 1, MARGIN)


def need_of_test(facts: ModelFacts, spec: TestSpec, config: BenchConfig) -> MemoryNeed:
    """Model + this test's KV cache (its context per stream x its streams) + buffers."""
    return memory_need(
        facts, spec.context_tokens + 1, spec.batch, config.cache_type_k, config.n_ubatch
    )


def _sentence(spec: TestSpec, need: MemoryNeed, facts: ModelFacts, room: Available) -> str:
    assert room.bytes is not None
    return (
        f"{spec.name} was skipped: it needs about {need.total_bytes / GiB:.1f} GiB "
        f"({facts.weights_bytes / GiB:.1f} GiB of weights, {need.kv_cache_bytes / GiB:.1f} GiB "
        f"of KV cache for {spec.context_tokens:,} tokens x {spec.batch} stream"
        f"{'s' if spec.batch > 1 else ''}) and {room.bytes / GiB:.1f} GiB of {room.where} is "
        "free; run it anyway if you think it fits."
    )


def plan_tests(
    config: BenchConfig, facts: ModelFacts, specs: Sequence[TestSpec], room: Available
) -> Plan:
    """Which tests fit on their own; the rest skipped (or kept, when asked, with a note)."""
    if room.bytes is None:
        return Plan(tuple(specs), notes=("Available memory is unknown; trying anyway.",))
    usable = room.bytes * (1 - room.margin)
    smallest = memory_need(facts, 2, 1, config.cache_type_k, config.n_ubatch)
    if smallest.total_bytes > usable and not config.allow_oversize:
        return Plan(
            (),
            refused=(
                f"The model alone needs about {smallest.total_bytes / GiB:.1f} GiB "
                f"({facts.weights_bytes / GiB:.1f} GiB of weights) and only "
                f"{room.bytes / GiB:.1f} GiB of {room.where} is free; close other programs, "
                "choose a smaller quantisation, or run it anyway."
            ),
        )
    runnable: list[TestSpec] = []
    skipped: list[Skipped] = []
    notes: list[str] = []
    for spec in specs:
        need = need_of_test(facts, spec, config)
        if need.total_bytes <= usable:
            runnable.append(spec)
        elif config.allow_oversize:
            runnable.append(spec)
            notes.append(f"Run on request over the memory estimate: {spec.name}.")
        else:
            skipped.append(Skipped(spec.name, _sentence(spec, need, facts, room)))
    if not runnable:
        return Plan((), tuple(skipped), refused=skipped[0].reason if skipped else "No tests.")
    return Plan(tuple(runnable), tuple(skipped), notes=tuple(notes))
