"""A benchmark run's results: plain typed data, JSON in SI units, old files still loading.

Measured samples are stored raw; every derived figure (bytes per token, achieved bandwidth,
ceilings, efficiency, FLOP/s) is computed by `runs.explain` from the samples and the model's
facts, so a saved run can be re-explained later (say, after the user picks their GPU by
hand). Every field is checked when a run is read back: a damaged or hand-edited file is one
sentence naming the field, never a crash later.
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from advisor.core.hardware.model import HardwareReport, LlamaDevice
from advisor.core.hardware.profile import MachineProfile, host_from_report
from advisor.core.infra.serde import DataError, from_json, to_json
from advisor.core.model.facts import ModelFacts
from advisor.core.runs.checks import check_run
from advisor.core.runs.config import BenchConfig

RESULT_SCHEMA_VERSION = 2  # 2: typed hardware and llama facts, versions of what produced it
KINDS = ("prefill", "decode")


def _check_rate(name: str, value: float | None) -> None:
    if value is not None and (not math.isfinite(value) or value < 0):
        raise ValueError(f"{name} is {value}, not a finite figure of 0 or more")


@dataclass(frozen=True)
class TestResult:
    """One test's samples and, once explained, what they mean physically."""

    __test__ = False  # not a pytest test class

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
    # 95% confidence interval of the mean (Student's t over the repetitions)
    ci95_low_tps: float | None = None
    ci95_high_tps: float | None = None
    # energy while the test ran (None where it could not be measured or estimated)
    average_w: float | None = None
    joules_per_token: float | None = None
    energy_method: str = ""  # "measured" | "estimate" | ""
    energy_source: str = ""  # "NVML energy counter", "RAPL package", "catalogue TDP" ...
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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"test kind is {self.kind!r}, not prefill or decode")
        if min(self.n_prompt, self.n_gen, self.depth) < 0 or self.batch < 1:
            raise ValueError("token counts must be 0 or more and the stream count 1 or more")
        for name in ("tokens_per_s", "stddev", "per_stream_tps", "other_cpu_load"):
            _check_rate(name, getattr(self, name))
        for value in (*self.samples_s, *self.samples):
            _check_rate("a repetition", value)

    @property
    def cv(self) -> float:
        """Coefficient of variation of the repetitions."""
        return self.stddev / self.tokens_per_s if self.tokens_per_s else 0.0

    def to_json(self) -> dict[str, Any]:
        d = dict(to_json(self))
        d["cv"] = self.cv
        return d


@dataclass(frozen=True)
class RunHardware:
    """What a saved run keeps about the machine it ran on."""

    device_name: str | None = None
    device_id: str | None = None  # the catalogue id, where the device is catalogued
    backend: str | None = None
    spec_bandwidth_bytes_per_s: float | None = None
    spec_bandwidth_source: str = ""
    measured_bandwidth_bytes_per_s: float | None = None
    peak_flops_per_s: float | None = None
    peak_flops_source: str = ""
    simd: str | None = None
    device_class: str | None = None
    os: str = ""
    cpu: str | None = None
    cpu_cores: int | None = None
    ram_total_bytes: int | None = None
    gpus: tuple[str, ...] = ()
    # the device record the run was explained with (catalogue record format), so the run can
    # be projected from later even when the catalogue does not know the device (a CPU)
    device: dict[str, Any] | None = None
    # the host a card sat in, so a projection from this run keeps its RAM and link: the RAM's
    # bandwidth and what it rests on ("measured", "rated", "assumed"), its modules, the PCIe
    # link the card negotiated, the CPU's catalogue record
    ram_bandwidth_bytes_per_s: float | None = None
    ram_bandwidth_basis: str = ""
    ram_description: str = ""
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    cpu_id: str | None = None


@dataclass(frozen=True)
class LlamaInfo:
    """The llama.cpp that measured the run, and how it was set up."""

    backends: tuple[str, ...] = ()
    gpu_offload: bool = False
    system_info: str = ""
    llama_cpp_python_version: str | None = None
    llama_cpp_commit: str | None = None
    devices: tuple[LlamaDevice, ...] = ()
    threads: int | None = None
    threads_rule: str = ""  # why this many threads ("llama-bench default: ...")
    gpu_layers: int | None = None
    threadpool: bool = False
    run_seconds: float | None = None


@dataclass(frozen=True)
class RunResult:
    """Everything about one benchmark run, as saved in the history."""

    id: str
    created_at: float
    config: BenchConfig
    model: ModelFacts
    tests: tuple[TestResult, ...]
    hardware: RunHardware = field(default_factory=RunHardware)
    llama: LlamaInfo = field(default_factory=LlamaInfo)
    load_time_s: float | None = None
    ttft_s: float | None = None
    busy: bool = False
    noisy: bool = False
    notes: tuple[str, ...] = ()
    label: str = ""
    # tests preflight skipped ("tg128@d32768"), each with its sentence in notes
    skipped_tests: tuple[str, ...] = ()
    # the longest context that loaded in the trial allocation, and the one the estimate says
    longest_context_tokens: int | None = None
    predicted_longest_context_tokens: int | None = None
    app_version: str = ""
    catalogue_date: str = ""
    schema_version: int = RESULT_SCHEMA_VERSION

    kind = "result"

    def __post_init__(self) -> None:
        if not math.isfinite(self.created_at):
            raise ValueError("created_at is not a time")

    def test(self, name: str) -> TestResult | None:
        return next((t for t in self.tests if t.name == name), None)

    @property
    def device_name(self) -> str:
        """The device the run was measured on, in words."""
        return self.hardware.device_name or self.config.device_name or "this machine"

    def to_json(self) -> dict[str, Any]:
        d = dict(to_json(self))
        d["model"] = self.model.to_json()  # with the derived figures readers want
        d["tests"] = [t.to_json() for t in self.tests]
        return d

    @classmethod
    def from_json(cls, data: Any) -> RunResult:
        """Rebuild a run saved by any version of the app (every field checked)."""
        if not isinstance(data, dict):
            raise DataError("The run is not a JSON object.")
        run = from_json(cls, _upgrade(data), "the run")
        check_run(run)  # the types are right; now every value's range
        return run


def _upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a run saved by an older version to the current form."""
    data = dict(data)
    if isinstance(data.get("model"), dict):
        # derived keys (kv_bytes_per_token ...) are written for readers, not read back
        data["model"] = {k: v for k, v in data["model"].items() if k in _FACT_FIELDS}
        _upgrade_facts(data["model"])
    if data.get("llama") is None:
        data["llama"] = {}
    if data.get("hardware") is None:
        data["hardware"] = {}
    data["schema_version"] = RESULT_SCHEMA_VERSION
    return data


_FACT_FIELDS = frozenset(ModelFacts.__dataclass_fields__)


def _upgrade_facts(model: dict[str, Any]) -> None:
    """Facts saved before the output head was kept apart: the head is the vocabulary x the
    width, tied to the token table or not, so a prompt's FLOPs leave it out as a new run's do.
    Whether the table was tied is not saved: it stays counted as read by each decode step
    (as it was when the run was explained), which a tied table is."""
    vocab, width = model.get("vocab_size"), model.get("n_embd")
    if "output_params" not in model and type(vocab) is int and type(width) is int:
        model["output_params"] = max(0, vocab) * max(0, width)


def run_hardware(report: HardwareReport, profile: MachineProfile) -> RunHardware:
    """What a saved run keeps about the machine it ran on (the device record included)."""
    host = host_from_report(report, float(report.ram.total_bytes or 0))
    return RunHardware(
        device_name=profile.name,
        device_id=profile.catalogue_id,
        backend=profile.backend,
        spec_bandwidth_bytes_per_s=profile.spec_bandwidth_bytes_per_s,
        spec_bandwidth_source=profile.spec_bandwidth_source,
        measured_bandwidth_bytes_per_s=profile.measured_bandwidth_bytes_per_s,
        peak_flops_per_s=profile.peak_flops_per_s,
        peak_flops_source=profile.peak_flops_source,
        simd=profile.device.simd,
        device_class=profile.device.device_class,
        os=f"{report.os} {report.os_version}".strip(),
        cpu=report.cpu.model,
        cpu_cores=report.cpu.physical_cores,
        ram_total_bytes=report.ram.total_bytes,
        gpus=tuple(g.name for g in report.gpus),
        device=profile.device.to_json(),
        ram_bandwidth_bytes_per_s=host.ram_bandwidth_bytes_per_s,
        ram_bandwidth_basis=host.bandwidth_basis,
        ram_description=host.ram_description,
        pcie_gen=host.pcie_gen,
        pcie_lanes=host.pcie_lanes,
        cpu_id=host.cpu_id,
    )


def new_run_id() -> str:
    """A sortable, unique run id: date, time and a random suffix."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
