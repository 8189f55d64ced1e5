"""The measuring loop: llama-bench's method, as a generator of typed events.

`run_benchmark` yields `Progress` while it works, then exactly one `RunResult` or one
`Failure`. It runs inside the child process (see child.py); the llama.cpp calls themselves
live in llama_model.py.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from advisor import __version__
from advisor.bench.llama_model import BenchError, BenchTest, Cancelled, LlamaModel
from advisor.bench.longest import find_longest_context
from advisor.bench.synthetic import ensure_synthetic_model
from advisor.core.catalogue.dating import catalogue_date
from advisor.core.hardware.model import BackendInfo
from advisor.core.hardware.power import PowerReading, energy_per_token_j, tdp_estimate
from advisor.core.hardware.power_sources import PowerMeter, meter_for
from advisor.core.hardware.threads import default_threads
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import AppPaths
from advisor.core.model.facts import ModelFacts
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.memory import memory_need
from advisor.core.predict.advising.explain import finish_run
from advisor.core.predict.physics.placement import Placement, residency
from advisor.core.runs.config import BenchConfig, TestSpec
from advisor.core.runs.events import Event, Failure, Progress
from advisor.core.runs.preflight import (
    Available,
    Plan,
    available_memory,
    gpu_devices,
    placement_refusal,
    plan_tests,
)
from advisor.core.runs.results import LlamaInfo, RunHardware, TestResult, new_run_id
from advisor.core.runs.stats import enough_repetitions, summarise_samples

SideChannel = Callable[[Progress], None]
_MIB = re.compile(r"\((\d+) MiB ")  # "tensor blk.0.ffn_up_exps.weight (108 MiB q4_0) ..."
THREADPOOL_NOTE = (
    "llama.cpp's CPU library (libggml-cpu) was not found, so the run could not attach a ggml "
    "threadpool as llama-bench does and llama.cpp used its own threads: CPU results may differ "
    "slightly from llama-bench's."
)
NO_REPACK_NOTE = (
    "This run used llama.cpp's plain CPU kernels, not its repacked weights: those crashed "
    "here (as the AMX kernels of some Intel Xeons do, llama.cpp issue 20824), so prefill may "
    "be slower than llama.cpp is where they work."
)
AMX_NOTE = (
    "This run used llama.cpp's plain CPU kernels, not its AMX ones: they crash at the first "
    "decode on some Intel Xeons (llama.cpp issue 20824, still open), which would end the run, "
    "so prefill may be slower here than llama.cpp is where AMX works."
)


def _tdp(hardware: RunHardware | None) -> float | None:
    record = hardware.device if hardware is not None else None
    tdp = record.get("tdp_w") if isinstance(record, dict) else None
    return float(tdp) if isinstance(tdp, (int, float)) and tdp > 0 else None


class _CpuMeter:
    """Share of all CPUs that *other* programs used between start() and stop()."""

    def __init__(self) -> None:
        self._proc = psutil.Process()
        self._n = psutil.cpu_count() or 1

    @staticmethod
    def _busy() -> float:
        t = psutil.cpu_times()
        idle = t.idle + getattr(t, "iowait", 0.0)
        return sum(t) - idle

    def _own(self) -> float:
        c = self._proc.cpu_times()
        return c.user + c.system

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._b0 = self._busy()
        self._o0 = self._own()

    def stop(self) -> float | None:
        wall = time.monotonic() - self._t0
        if wall <= 0.05:
            return None
        other = (self._busy() - self._b0) - (self._own() - self._o0)
        return max(0.0, min(1.0, other / (wall * self._n)))


def _estimated_seconds(
    spec: TestSpec, reps: int, pp_tps: float | None, tg_tps: float | None
) -> float | None:
    if spec.kind == "prefill":
        return (reps + 1) * spec.n_prompt / pp_tps if pp_tps else None
    if not tg_tps:
        return None
    fill = spec.depth / pp_tps if pp_tps and spec.depth else 0.0
    return (reps + 1) * spec.n_gen / tg_tps + fill


@dataclass
class _Run:
    """One benchmark run's state while its tests run."""

    config: BenchConfig
    llama: LlamaModel
    side_channel: SideChannel | None
    cancel: threading.Event
    specs: list[TestSpec]
    threads: int
    step: int = 0
    pp_tps: float | None = None
    tg_tps: float | None = None
    threadpool: bool = False
    results: list[TestResult] = field(default_factory=list)
    rng: random.Random = field(default_factory=random.Random)
    depth_cache: dict[int, Any] = field(default_factory=dict)
    meter: _CpuMeter = field(default_factory=_CpuMeter)
    power: PowerMeter | None = None
    tdp_w: float | None = None  # the catalogue TDP: an energy estimate where none is readable

    @property
    def total_steps(self) -> int:
        return len(self.specs) * (self.config.reps + (1 if self.config.warmup else 0))

    def _say(self, spec: TestSpec, message: str, tokens_per_s: float | None = None) -> None:
        if self.side_channel is not None:
            self.side_channel(
                Progress(spec.name, self.step, self.total_steps, tokens_per_s, message=message)
            )

    def _callbacks(self, spec: TestSpec) -> tuple[Any, Any]:
        """(heartbeat while a deep context fills, live speed while decoding), or None each."""
        heartbeat = live = None
        if self.side_channel is not None and spec.depth:

            def heartbeat(done: int, total: int) -> None:
                self._say(spec, f"{spec.name}: filling the context, {done:,} of {total:,} tokens")

        if self.side_channel is not None and spec.kind == "decode":

            def live(done: int, elapsed: float) -> None:
                self._say(spec, f"{spec.name}: {done} tokens", done / elapsed)

        return heartbeat, live

    def run_test(self, index: int, spec: TestSpec) -> Iterator[Progress]:
        """Warm up and repeat one test; its summary joins `results`."""
        if self.cancel.is_set():
            raise Cancelled()
        remaining = [
            _estimated_seconds(s, self.config.reps, self.pp_tps, self.tg_tps)
            for s in self.specs[index:]
        ]
        eta = sum(r for r in remaining if r) if all(remaining) else None
        yield Progress(
            spec.name,
            self.step,
            self.total_steps,
            eta_s=eta,
            message=f"Test {index + 1} of {len(self.specs)}: {spec.name}",
        )
        heartbeat, live = self._callbacks(spec)
        test = BenchTest(
            self.llama, self.config, spec, self.threads, self.rng, self.cancel,
            self.depth_cache, heartbeat,
        )  # fmt: skip
        self.threadpool = self.threadpool or test.threadpool_attached
        samples: list[float] = []
        reps = self.config.reps
        min_reps = min(2, reps) if self.config.adaptive_reps else reps
        reading: PowerReading | None = None
        try:
            if self.config.warmup:
                test.warmup()
                self.step += 1
                yield Progress(
                    spec.name, self.step, self.total_steps, eta_s=eta, message="warm-up done"
                )
            self.meter.start()
            if self.power is not None:
                self.power.start()
            for rep in range(reps):
                seconds = test.repetition(live)
                samples.append(seconds)
                self.step += 1
                yield Progress(
                    spec.name,
                    self.step,
                    self.total_steps,
                    tokens_per_s=spec.tokens_per_rep / seconds,
                    message=f"{spec.name}: repetition {rep + 1} (at most {reps})",
                )
                rates = [spec.tokens_per_rep / x for x in samples]
                if enough_repetitions(rates, min_reps=min_reps, max_reps=reps):
                    self.step += reps - len(samples)  # the repetitions it did not need
                    break
            load = self.meter.stop()
            if self.power is not None:
                reading = self.power.stop()
        finally:
            test.close()
        result = _with_energy(
            summarise_samples(spec, samples, load), reading, sum(samples), self.tdp_w
        )
        self.results.append(result)
        if spec.kind == "prefill" and spec.depth == 0:
            self.pp_tps = result.tokens_per_s  # measured replaces predicted
        if spec.kind == "decode" and spec.depth == 0 and spec.batch == 1:
            self.tg_tps = result.tokens_per_s


def _with_energy(
    result: TestResult, reading: PowerReading | None, seconds: float, tdp_w: float | None
) -> TestResult:
    """The test's energy: measured by a meter, else estimated from the catalogue TDP (and
    labelled so), else nothing."""
    if reading is None and tdp_w and seconds > 0:
        reading = tdp_estimate(tdp_w, seconds)
    if reading is None:
        return result
    tokens = round(result.tokens_per_s * seconds) if result.tokens_per_s else 0
    return replace(
        result,
        average_w=reading.average_w,
        joules_per_token=energy_per_token_j(reading, tokens),
        energy_method=reading.method,
        energy_source=reading.source + (f" ({reading.note})" if reading.note else ""),
    )


def _load(
    config: BenchConfig,
    gpu_layers: int,
    cancel: threading.Event,
    side_channel: SideChannel | None,
) -> LlamaModel:
    """Load the model, telling the parent how far the load is."""
    assert config.model_path is not None
    last = [0.0]

    def on_load(fraction: float) -> None:
        now = time.monotonic()
        if side_channel and now - last[0] > 0.25:
            last[0] = now
            side_channel(
                Progress(
                    "loading",
                    int(fraction * 100),
                    100,
                    message=f"Loading the model: {fraction:.0%}",
                )
            )

    return LlamaModel(Path(config.model_path), config, gpu_layers, cancel, on_load)


def _power_meter(backend: BackendInfo, gpu_layers: int) -> PowerMeter | None:
    """The meter for the device the run uses (GPU board, or CPU package)."""
    gpus = [d for d in backend.devices if d.type in ("GPU", "iGPU")]
    try:
        if gpu_layers > 0 and gpus:
            text = " ".join(f"{d.name} {d.description}" for d in gpus).lower()
            vendor = None
            if "cuda" in text or "nvidia" in text:
                vendor = "nvidia"
            elif any(word in text for word in ("rocm", "amd", "radeon")):
                vendor = "amd"
            return meter_for("gpu", gpu_vendor=vendor)
        return meter_for("cpu")
    except Exception:  # power is a nicety: never let a meter stop a benchmark
        return None


def _plan(
    config: BenchConfig, facts: ModelFacts, backend: BackendInfo, gpu_layers: int
) -> tuple[Plan, Available]:
    if refused := placement_refusal(config, facts, backend):
        return Plan((), refused=refused), Available(None, "RAM")
    room = available_memory(backend, gpu_layers, int(psutil.virtual_memory().available))
    on_cards = _on_cards(facts, config, backend, gpu_layers)
    return plan_tests(config, on_cards, config.tests(), room), room


def _on_cards(
    facts: ModelFacts, config: BenchConfig, backend: BackendInfo, gpu_layers: int
) -> ModelFacts:
    """The model as the cards' memory sees it: where the placement keeps layers or experts in
    system RAM (-ngl, --n-cpu-moe), only the weights left on the cards count against VRAM."""
    placement = Placement(gpu_layers, config.cpu_moe)
    if gpu_layers <= 0 or not gpu_devices(backend) or placement.is_full(facts):
        return facts
    return replace(facts, weights_bytes=int(residency(facts, placement).gpu_bytes))


def _placement_note(config: BenchConfig, facts: ModelFacts, overridden: tuple[str, ...]) -> str:
    """What llama.cpp itself reported moving to system RAM for --n-cpu-moe, in one sentence."""
    mib = sum(int(m.group(1)) for line in overridden if (m := _MIB.search(line)))
    layers = (
        "every layer" if config.cpu_moe >= facts.n_layers else f"the first {config.cpu_moe} layers"
    )
    return (
        f"Placement: the experts of {layers} in system RAM "
        f"(--n-cpu-moe {config.cpu_moe}); llama.cpp moved {len(overridden)} tensors there "
        f"({mib:,} MiB)."
    )


def _predicted_longest(facts: ModelFacts, config: BenchConfig, room: Available) -> int | None:
    """The longest context the memory estimate says fits (one stream)."""
    if room.bytes is None:
        return None
    usable = room.bytes * (1 - room.margin)
    lo, hi = 0, max(facts.context_length or 0, 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        need = memory_need(facts, mid, 1, config.cache_type_k, config.n_ubatch).total_bytes
        lo, hi = (mid, hi) if need <= usable else (lo, mid - 1)
    return lo or None


# long on purpose (over 80 lines): the run's steps in the order they happen (synthetic file,
# preflight, load, warm-up, each test, energy, longest context), with the one try/finally that
# frees llama.cpp whatever happens; split, the cleanup would be spread over several frames
def run_benchmark(
    config: BenchConfig,
    *,
    paths: AppPaths,
    cancel: threading.Event | None = None,
    side_channel: SideChannel | None = None,
    hardware: RunHardware | None = None,
) -> Iterator[Event]:
    """Measure a model like llama-bench; yield Progress events, then one RunResult or Failure."""
    cancel = cancel or threading.Event()
    llama: LlamaModel | None = None
    run: _Run | None = None
    try:
        if config.synthetic:
            yield Progress("preparing", 0, 1, message="Preparing the synthetic model")
            path = ensure_synthetic_model(
                paths, config.synthetic, config.synthetic_layers, cancel, side_channel
            )
            config = replace(config, model_path=str(path))
        if not config.model_path:
            raise BenchError("No model was given; choose a GGUF file or a built-in shape.")
        facts = facts_from_gguf(config.model_path)

        from advisor.bench import llama_lib

        backend = llama_lib.backend_info()
        choice = default_threads()
        threads = config.threads or choice.threads
        threads_rule = "set by you" if config.threads else f"llama-bench's default: {choice.rule}"
        gpu_layers = config.gpu_layers
        if gpu_layers is None:
            gpu_layers = 999 if backend.gpu_offload else 0
        plan, room = _plan(config, facts, backend, gpu_layers)
        if not plan.ok:
            yield Failure(plan.refused, "", user_error=True)
            return
        # a count past the model's layers keeps every layer's experts in RAM, as llama.cpp's
        # --n-cpu-moe does; the run records the count that took effect
        cpu_moe = min(config.cpu_moe, facts.n_layers)
        config = replace(config, threads=threads, gpu_layers=gpu_layers, cpu_moe=cpu_moe)
        if config.repack and backend.has_amx:
            # llama.cpp's AMX kernels segfault at the first decode on some Intel Xeons
            # (llama.cpp issue 20824, machine-dependent, open; this project's CI VM is one),
            # and a crash there takes the whole run: the plain CPU kernels instead
            config = replace(config, repack=False)

        yield Progress("loading", 0, 100, message=f"Loading {Path(config.model_path).name}")
        llama = _load(config, gpu_layers, cancel, side_channel)
        run = _Run(
            config, llama, side_channel, cancel, list(plan.runnable), threads,
            pp_tps=config.expected_prefill_tps, tg_tps=config.expected_decode_tps,
            rng=random.Random(config.seed), power=_power_meter(backend, gpu_layers),
            tdp_w=_tdp(hardware),
        )  # fmt: skip
        started = time.monotonic()
        for index, spec in enumerate(run.specs):
            yield from run.run_test(index, spec)
        longest = None
        if config.longest_context:
            yield Progress("longest context", 0, 1, message="Finding the longest context")
            longest = find_longest_context(llama, config, facts, room, threads, cancel)
        info = LlamaInfo(
            backends=backend.backends,
            gpu_offload=backend.gpu_offload,
            system_info=backend.system_info,
            llama_cpp_python_version=backend.llama_cpp_python_version,
            llama_cpp_commit=backend.llama_cpp_commit,
            devices=backend.devices,
            threads=threads,
            threads_rule=threads_rule,
            gpu_layers=gpu_layers,
            threadpool=run.threadpool,
            run_seconds=time.monotonic() - started,
        )
        result = finish_run(
            new_run_id(), config, facts, run.results, hardware=hardware, llama=info,
            load_time_s=llama.load_time_s, app_version=__version__,
            catalogue_date=catalogue_date().date,
        )  # fmt: skip
        notes = [*plan.notes, *(s.reason for s in plan.skipped)]
        if not run.threadpool:
            notes.append(THREADPOOL_NOTE)
        if not config.repack:
            notes.append(AMX_NOTE if backend.has_amx else NO_REPACK_NOTE)
        if longest is not None:
            notes.append(longest.note)
        if config.cpu_moe:
            notes.append(_placement_note(config, facts, llama.overridden))
        result = replace(
            result,
            notes=(*result.notes, *notes),
            skipped_tests=tuple(s.test for s in plan.skipped),
            longest_context_tokens=longest.tokens if longest else None,
            predicted_longest_context_tokens=(
                _predicted_longest(facts, config, room) if longest else None
            ),
        )
        yield result
    except Cancelled:
        yield Failure("The benchmark was cancelled.", cancelled=True)
    except InputError as exc:
        yield Failure(str(exc), user_error=True)
    except BenchError as exc:
        yield Failure(str(exc), exc.details)
    except MemoryError:
        yield Failure("The benchmark ran out of memory; choose a smaller model or context.")
    except OSError as exc:
        yield Failure(f"A file could not be read or written ({exc.strerror or exc}).", repr(exc))
    finally:
        if run is not None and run.power is not None:
            run.power.close()
        if llama is not None:
            llama.free()
