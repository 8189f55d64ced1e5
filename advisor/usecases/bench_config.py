"""What benchmark the user's choices mean: one function for the command line's options and the
app's preset and settings, every value checked before the child process starts.

Values that would crash llama.cpp (threads, batch sizes, stream counts, layer counts) are
refused here with the range they take; the configuration also carries this machine's facts
(bandwidth, peak) to explain the numbers, and the predicted speeds, so the progress bar can
say how long the run takes from its first second.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.core.hardware.profile import MachineProfile
from advisor.core.infra.errors import InputError
from advisor.core.infra.validate import one_of, whole_number, whole_numbers
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.conditions.workloads import custom_workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics.ceilings import usable_peak
from advisor.core.predict.projecting.projection import Target, project
from advisor.core.predict.projecting.reference import Reference
from advisor.core.runs.config import PRESETS, BenchConfig
from advisor.core.runs.preflight import placement_refusal
from advisor.usecases.models import (
    MAX_SYNTHETIC_LAYERS,
    facts_for_synthetic,
    resolved_model_path,
)

MAX_THREADS = 512  # GGML_MAX_N_THREADS
MAX_STREAMS = 256  # LLAMA_MAX_SEQ: llama.cpp aborts beyond it
MAX_TOKENS = 131_072  # per prompt or generation: a benchmark, not a book
MAX_DEPTH = 1_048_576
MAX_BATCH_SIZE = 65_536
MAX_REPS = 100
MAX_GPU_LAYERS = 10_000
MAX_CPU_MOE = 1000  # layers; a count past a model's own means every layer, as in llama.cpp
FLASH_ATTN = ("auto", "on", "off")
CACHE_TYPES = ("f16", "q8_0", "q4_0")


@dataclass(frozen=True)
class BenchChoices:
    """What the user asked to measure, as typed: a file or a synthetic 'SHAPE[:QUANT]', a
    preset or explicit lists, and llama-bench's settings (None: the default)."""

    model_path: str | None = None
    synthetic: str | None = None
    synthetic_layers: object = None  # as typed; checked here
    preset: str | None = None  # "quick" | "thorough" | None (the lists below, or quick)
    n_prompt: str | None = None  # "512" or "128,512"
    n_gen: str | None = None
    depths: str | None = None
    batches: str | None = None
    reps: object = 5
    threads: object = None
    gpu_layers: object = None
    cpu_moe: object = 0  # llama.cpp's --n-cpu-moe: the first N layers' experts in RAM
    n_batch: object = 2048
    n_ubatch: object = 512
    flash_attn: str = "auto"
    cache_type: str = "f16"
    warmup: bool = True
    allow_oversize: bool = False
    adaptive_reps: bool = True
    longest_context: bool = False


def _lists(choices: BenchChoices, facts: ModelFacts) -> dict[str, tuple[int, ...]]:
    preset = one_of("The preset", choices.preset or "quick", PRESETS)
    values = dict(PRESETS[preset])
    if choices.preset and facts.context_length:
        # the preset's depths the model's trained context allows
        limit = facts.context_length - 512
        values["depths"] = tuple(d for d in values["depths"] if d <= limit) or (0,)
    given = {
        "n_prompt": ("--pp", choices.n_prompt, 0, MAX_TOKENS),
        "n_gen": ("--tg", choices.n_gen, 0, MAX_TOKENS),
        "depths": ("--depth", choices.depths, 0, MAX_DEPTH),
        "batches": ("--batch", choices.batches, 1, MAX_STREAMS),
    }
    for key, (label, text, low, high) in given.items():
        if text is not None:
            values[key] = whole_numbers(label, text, low, high)
    if not any(values["n_prompt"]) and not any(values["n_gen"]):
        raise InputError("Nothing to measure: give --pp or --tg a size of 1 or more.")
    return values


def bench_config(
    choices: BenchChoices,
    *,
    profile: MachineProfile | None = None,
    reference: Reference | None = None,
    speed_model: SpeedModel | None = None,
) -> tuple[BenchConfig, ModelFacts]:
    """The checked benchmark configuration for these choices, and the facts of its model."""
    if bool(choices.model_path) == bool(choices.synthetic):
        raise InputError("Give either a model file or --synthetic SHAPE[:QUANT], not both.")
    layers = None
    if choices.synthetic_layers is not None:  # as typed: '2' from the command line
        layers = whole_number("--layers", choices.synthetic_layers, 1, MAX_SYNTHETIC_LAYERS)
    if choices.model_path:
        model_path: str | None = resolved_model_path(choices.model_path)
        from advisor.core.model.gguf_facts import facts_from_gguf

        facts = facts_from_gguf(model_path or "")
    else:
        model_path = None
        facts = facts_for_synthetic(choices.synthetic or "", layers)
    n_batch = whole_number("--batch-size", choices.n_batch, 1, MAX_BATCH_SIZE)
    config = BenchConfig(
        model_path=model_path,
        synthetic=choices.synthetic,
        synthetic_layers=layers,
        reps=whole_number("--reps", choices.reps, 1, MAX_REPS),
        threads=(
            None
            if choices.threads is None
            else whole_number("--threads", choices.threads, 1, MAX_THREADS)
        ),
        gpu_layers=(
            None
            if choices.gpu_layers is None
            else whole_number("--gpu-layers", choices.gpu_layers, 0, MAX_GPU_LAYERS)
        ),
        cpu_moe=whole_number("--cpu-moe", choices.cpu_moe, 0, MAX_CPU_MOE),
        n_batch=n_batch,
        n_ubatch=whole_number("--ubatch-size", choices.n_ubatch, 1, n_batch),
        flash_attn=one_of("--flash-attn", choices.flash_attn, FLASH_ATTN),
        cache_type_k=one_of("--cache-type", choices.cache_type, CACHE_TYPES),
        cache_type_v=one_of("--cache-type", choices.cache_type, CACHE_TYPES),
        warmup=choices.warmup,
        allow_oversize=choices.allow_oversize,
        adaptive_reps=choices.adaptive_reps,
        longest_context=choices.longest_context,
        **_lists(choices, facts),
    )
    if refused := placement_refusal(config, facts):  # experts in RAM for a dense model
        raise InputError(refused)
    return with_machine_facts(config, facts, profile, reference, speed_model), facts


def with_machine_facts(
    config: BenchConfig,
    facts: ModelFacts,
    profile: MachineProfile | None,
    reference: Reference | None = None,
    speed_model: SpeedModel | None = None,
) -> BenchConfig:
    """The config with this machine's facts (to explain the numbers) and predicted speeds (to
    say how long the run takes)."""
    if profile is None:
        return config
    if speed_model is None:
        raise ValueError("with_machine_facts needs the speed model to predict the run's length")
    if reason := profile.not_measurable_here():
        raise InputError(reason)
    # the prefill roof a run is explained against: the precision the backend really runs in
    # (the backend-path table), the profile's own estimate where the table has no figure
    peak = usable_peak(profile.device, profile.backend, facts.is_quantized)
    peak = peak or profile.compute_peak(facts.is_quantized)[0]
    guess = project(
        facts,
        Target(profile.device, backend=profile.backend),
        custom_workload(512, 128),
        host=profile.host,
        model=speed_model,
        reference=reference,
    )
    return replace(
        config,
        device_name=profile.name,
        bandwidth_spec_bytes_per_s=profile.spec_bandwidth_bytes_per_s,
        bandwidth_measured_bytes_per_s=profile.measured_bandwidth_bytes_per_s,
        peak_flops_per_s=peak,
        expected_prefill_tps=guess.prefill_tps,
        expected_decode_tps=guess.decode_tps,
    )
