"""Benchmark configuration, the events a run yields, and its results: plain data, JSON in SI units.

The child process that runs llama.cpp yields `Progress` events and then exactly one `Result`
or one `Failure`; they travel as JSON lines and are rebuilt here on the other side. Measured
samples are stored raw; every derived figure (bytes per token, achieved bandwidth, ceilings,
efficiency, FLOP/s) is computed by `explain_test` from the samples and the model's facts, so a
saved run can be re-explained later (say, after the user picks their GPU by hand).
"""

from __future__ import annotations

import math
import statistics
import time
import uuid
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from advisor.core.model.facts import ModelFacts

RESULT_SCHEMA_VERSION = 1

# a run is flagged noisy when repetitions spread more than this (coefficient of variation) ...
NOISY_CV = 0.05
# ... or other programs used more than this share of the CPU while it ran
BUSY_OTHER_CPU = 0.10


@dataclass(frozen=True)
class BenchConfig:
    """What to measure and how: llama-bench's settings, plus the machine facts for explaining."""

    model_path: str | None = None
    synthetic: str | None = None  # "llama-3.2-1b:q4_0": a random-weight model of that shape
    synthetic_layers: int | None = None
    n_prompt: tuple[int, ...] = (512,)
    n_gen: tuple[int, ...] = (128,)
    depths: tuple[int, ...] = (0,)
    batches: tuple[int, ...] = (1,)
    reps: int = 3
    threads: int | None = None  # None: the number of performance cores
    gpu_layers: int | None = None  # None: all layers when a GPU backend exists, else 0
    n_batch: int = 2048
    n_ubatch: int = 512
    flash_attn: str = "auto"  # "auto" | "on" | "off"
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    warmup: bool = True
    use_mmap: bool = True
    allow_oversize: bool = False
    seed: int = 1234
    # machine facts used to explain the numbers (filled by the parent from detection)
    device_name: str | None = None
    bandwidth_spec_bytes_per_s: float | None = None
    bandwidth_measured_bytes_per_s: float | None = None
    peak_flops_per_s: float | None = None
    # predicted speeds, so the first progress events can already say how long a run takes
    expected_prefill_tps: float | None = None
    expected_decode_tps: float | None = None

    def __post_init__(self) -> None:
        for name in ("n_prompt", "n_gen", "depths", "batches"):
            object.__setattr__(self, name, tuple(int(v) for v in getattr(self, name)))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def max_context_tokens(self) -> int:
        """The largest context any test needs (prompt + generated + depth), per stream."""
        tokens = [p + d for p in self.n_prompt for d in self.depths if p]
        tokens += [g + d for g in self.n_gen for d in self.depths if g]
        return max(tokens or [0]) + 1

    def tests(self) -> list[TestSpec]:
        """The tests this config runs, in order: prefill, decode, decode at depth, batched."""
        out: list[TestSpec] = []
        for d in self.depths:
            for p in self.n_prompt:
                if p > 0:
                    out.append(TestSpec("prefill", p, 0, d, 1))
        for d in self.depths:
            for g in self.n_gen:
                if g > 0:
                    out.append(TestSpec("decode", 0, g, d, 1))
        for b in self.batches:
            if b > 1:
                for g in self.n_gen:
                    if g > 0:
                        out.append(TestSpec("decode", 0, g, 0, b))
        return out


@dataclass(frozen=True)
class TestSpec:
    """One test: a prefill of n_prompt or a decode of n_gen tokens, after `depth`, B streams."""

    kind: str  # "prefill" | "decode"
    n_prompt: int
    n_gen: int
    depth: int
    batch: int

    @property
    def name(self) -> str:
        base = f"pp{self.n_prompt}" if self.kind == "prefill" else f"tg{self.n_gen}"
        if self.batch > 1:
            base += f"x{self.batch}"
        if self.depth:
            base += f"@d{self.depth}"
        return base

    @property
    def tokens_per_rep(self) -> int:
        return self.n_prompt if self.kind == "prefill" else self.n_gen * self.batch


# -------------------------------------------------------------------------------------------
# events
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """A step of a run: phase ('writing model', 'loading', 'warm-up', test name), live speed."""

    phase: str
    step: int
    total: int
    tokens_per_s: float | None = None
    eta_s: float | None = None
    message: str = ""

    kind = "progress"


@dataclass(frozen=True)
class Failure:
    """The run failed or was cancelled: one plain sentence, and details to copy."""

    message: str
    details: str = ""
    cancelled: bool = False
    user_error: bool = False  # bad input (a wrong file, a model too big): not a failed run

    kind = "error"


@dataclass(frozen=True)
class TestResult:
    """One test's samples and, once explained, what they mean physically."""

    name: str
    kind: str
    n_prompt: int
    n_gen: int
    depth: int
    batch: int
    samples_s: tuple[float, ...]  # wall time of each repetition
    tokens_per_s: float = 0.0  # mean over repetitions (aggregate for batched decode)
    stddev: float = 0.0
    samples: tuple[float, ...] = ()  # tokens/s of each repetition
    per_stream_tps: float | None = None
    other_cpu_load: float | None = None  # share of all CPUs used by other programs
    # derived (explain_test)
    bytes_per_token: float | None = None
    achieved_bandwidth_bytes_per_s: float | None = None
    decode_ceiling_tps: float | None = None
    decode_ceiling_measured_bw_tps: float | None = None
    efficiency: float | None = None
    flops_per_token: float | None = None
    achieved_flops_per_s: float | None = None
    prefill_ceiling_tps: float | None = None
    arithmetic_intensity: float | None = None

    @property
    def cv(self) -> float:
        return self.stddev / self.tokens_per_s if self.tokens_per_s else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["cv"] = self.cv
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestResult:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("samples_s", "samples"):
            values[key] = tuple(values.get(key) or ())
        return cls(**values)


def summarise_samples(
    spec: TestSpec, samples_s: list[float], other_cpu_load: float | None
) -> TestResult:
    """Mean and standard deviation of tokens/s over repetitions, llama-bench style."""
    tps = [spec.tokens_per_rep / s for s in samples_s if s > 0]
    mean = statistics.fmean(tps) if tps else 0.0
    std = statistics.stdev(tps) if len(tps) > 1 else 0.0
    return TestResult(
        name=spec.name,
        kind=spec.kind,
        n_prompt=spec.n_prompt,
        n_gen=spec.n_gen,
        depth=spec.depth,
        batch=spec.batch,
        samples_s=tuple(samples_s),
        tokens_per_s=mean,
        stddev=std,
        samples=tuple(tps),
        per_stream_tps=mean / spec.batch if spec.kind == "decode" else None,
        other_cpu_load=other_cpu_load,
    )


def explain_test(
    test: TestResult,
    facts: ModelFacts,
    bandwidth_spec_bytes_per_s: float | None,
    bandwidth_measured_bytes_per_s: float | None,
    peak_flops_per_s: float | None,
    cache_type: str = "f16",
    n_ubatch: int = 512,
) -> TestResult:
    """Add the physics to a measured test: bytes read, achieved bandwidth, ceilings, efficiency."""
    if test.kind == "decode":
        # while n_gen tokens are generated the cache grows from depth to depth + n_gen
        avg_depth = test.depth + test.n_gen / 2
        kv = facts.kv_cache_bytes(round(avg_depth), cache_type)
        step_bytes = facts.active_weights_bytes + test.batch * kv
        bytes_per_token = step_bytes / test.batch
        steps_per_s = test.tokens_per_s / test.batch
        achieved_bw = step_bytes * steps_per_s
        flops = facts.flops_per_token(round(avg_depth))
        ceil_spec = (
            bandwidth_spec_bytes_per_s / step_bytes * test.batch
            if bandwidth_spec_bytes_per_s
            else None
        )
        ceil_meas = (
            bandwidth_measured_bytes_per_s / step_bytes * test.batch
            if bandwidth_measured_bytes_per_s
            else None
        )
        ceiling = ceil_spec or ceil_meas
        if peak_flops_per_s and ceiling:
            ceiling = min(ceiling, peak_flops_per_s / flops)
        return replace(
            test,
            bytes_per_token=bytes_per_token,
            achieved_bandwidth_bytes_per_s=achieved_bw,
            decode_ceiling_tps=ceiling,
            decode_ceiling_measured_bw_tps=ceil_meas,
            efficiency=test.tokens_per_s / ceiling if ceiling else None,
            flops_per_token=flops,
            achieved_flops_per_s=flops * test.tokens_per_s,
            arithmetic_intensity=flops * test.batch / step_bytes,
        )
    avg_depth = test.depth + test.n_prompt / 2
    flops = facts.flops_per_token(round(avg_depth))
    ceiling = peak_flops_per_s / flops if peak_flops_per_s else None
    # a prefill pass reads the weights once per micro-batch (n_ubatch tokens)
    reads = math.ceil(test.n_prompt / max(1, n_ubatch))
    bytes_total = reads * facts.active_weights_bytes + facts.kv_cache_bytes(
        test.depth + test.n_prompt, cache_type
    )
    return replace(
        test,
        flops_per_token=flops,
        achieved_flops_per_s=flops * test.tokens_per_s,
        prefill_ceiling_tps=ceiling,
        efficiency=test.tokens_per_s / ceiling if ceiling else None,
        bytes_per_token=bytes_total / test.n_prompt,
        arithmetic_intensity=flops * test.n_prompt / bytes_total,
    )


# -------------------------------------------------------------------------------------------
# a whole run
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    """Everything about one benchmark run, as saved in the history."""

    id: str
    created_at: float
    config: BenchConfig
    model: dict[str, Any]  # ModelFacts.to_json()
    tests: tuple[TestResult, ...]
    hardware: dict[str, Any] = field(default_factory=dict)  # a summary of the detected machine
    llama: dict[str, Any] = field(default_factory=dict)  # versions, backend, system info, threads
    load_time_s: float | None = None
    ttft_s: float | None = None
    busy: bool = False
    noisy: bool = False
    notes: tuple[str, ...] = ()
    label: str = ""
    schema_version: int = RESULT_SCHEMA_VERSION

    kind = "result"

    def test(self, name: str) -> TestResult | None:
        return next((t for t in self.tests if t.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "created_at": self.created_at,
            "label": self.label,
            "config": self.config.to_json(),
            "model": self.model,
            "hardware": self.hardware,
            "llama": self.llama,
            "load_time_s": self.load_time_s,
            "ttft_s": self.ttft_s,
            "busy": self.busy,
            "noisy": self.noisy,
            "notes": list(self.notes),
            "tests": [t.to_json() for t in self.tests],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        return cls(
            id=str(data["id"]),
            created_at=float(data["created_at"]),
            config=BenchConfig.from_json(data.get("config") or {}),
            model=dict(data.get("model") or {}),
            tests=tuple(TestResult.from_json(t) for t in data.get("tests") or ()),
            hardware=dict(data.get("hardware") or {}),
            llama=dict(data.get("llama") or {}),
            load_time_s=data.get("load_time_s"),
            ttft_s=data.get("ttft_s"),
            busy=bool(data.get("busy")),
            noisy=bool(data.get("noisy")),
            notes=tuple(data.get("notes") or ()),
            label=str(data.get("label") or ""),
            schema_version=int(data.get("schema_version", RESULT_SCHEMA_VERSION)),
        )


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


def finish_run(
    run_id: str,
    config: BenchConfig,
    facts: ModelFacts,
    tests: list[TestResult],
    *,
    hardware: dict[str, Any] | None = None,
    llama: dict[str, Any] | None = None,
    load_time_s: float | None = None,
) -> RunResult:
    """Explain every test, judge noise and business, and assemble the saved run."""
    explained = [
        explain_test(
            t,
            facts,
            config.bandwidth_spec_bytes_per_s,
            config.bandwidth_measured_bytes_per_s,
            config.peak_flops_per_s,
            config.cache_type_k,
            config.n_ubatch,
        )
        for t in tests
    ]
    notes: list[str] = []
    loads = [t.other_cpu_load for t in explained if t.other_cpu_load is not None]
    busy = bool(loads) and max(loads) > BUSY_OTHER_CPU
    if busy:
        notes.append(
            f"Other programs used up to {max(loads):.0%} of the CPU during the run, so these "
            "numbers are probably low; close other programs and run it again."
        )
    noisy_tests = [t.name for t in explained if t.cv > NOISY_CV]
    if noisy_tests:
        notes.append(
            "Repetitions varied by more than 5% in "
            + ", ".join(noisy_tests)
            + "; more repetitions or a quieter machine give steadier numbers."
        )
    pp = next((t for t in explained if t.kind == "prefill" and t.depth == 0), None)
    tg = next((t for t in explained if t.kind == "decode" and t.depth == 0 and t.batch == 1), None)
    ttft = None
    if pp and pp.tokens_per_s and tg and tg.tokens_per_s:
        ttft = pp.n_prompt / pp.tokens_per_s + 1 / tg.tokens_per_s
    return RunResult(
        id=run_id,
        created_at=time.time(),
        config=config,
        model=facts.to_json(),
        tests=tuple(explained),
        hardware=hardware or {},
        llama=llama or {},
        load_time_s=load_time_s,
        ttft_s=ttft,
        busy=busy,
        noisy=bool(noisy_tests),
        notes=tuple(notes),
    )


def json_safe(obj: Any) -> Any:
    """NaN and infinity are not JSON: None instead, recursively."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def event_to_json(event: Progress | Failure | RunResult) -> dict[str, Any]:
    """The JSON-line form of an event: {'event': kind, ...}."""
    body = event.to_json() if isinstance(event, RunResult) else asdict(event)
    return json_safe({"event": event.kind, **body})


def event_from_json(data: dict[str, Any]) -> Progress | Failure | RunResult:
    kind = data.get("event")
    body = {k: v for k, v in data.items() if k != "event"}
    if kind == "progress":
        return Progress(
            **{k: v for k, v in body.items() if k in {f.name for f in fields(Progress)}}
        )
    if kind == "error":
        return Failure(**{k: v for k, v in body.items() if k in {f.name for f in fields(Failure)}})
    if kind == "result":
        return RunResult.from_json(body)
    raise ValueError(f"unknown event {kind!r}")
