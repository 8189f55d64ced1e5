"""This machine, as the advisor sees it: which device runs the model, at what bandwidth.

Joins the hardware report (what was detected) with the catalogue (what the vendor specifies)
into one `MachineProfile`: the device llama.cpp will run on (a catalogued GPU or Apple chip,
or this computer's CPU and RAM), its spec and measured bandwidth with their sources, its peak
FLOP/s, and the host RAM that spilled layers would use.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from advisor.core.catalogue.catalogue import Catalogue, Device
from advisor.core.hardware.model import (
    BackendInfo,
    CpuInfo,
    GpuInfo,
    HardwareReport,
    MemoryModule,
    ProbeNote,
    RamInfo,
)
from advisor.core.infra.units import GB, GiB
from advisor.core.predict.projection import Host

HARDWARE_CACHE_MAX_AGE_S = 24 * 3600
DEFAULT_RAM_BANDWIDTH_BYTES_PER_S = 50e9  # a dual-channel DDR4/DDR5 desktop, when nothing is known


@dataclass(frozen=True)
class MachineProfile:
    """The device the benchmark runs on, and the numbers that explain it."""

    name: str  # "GeForce RTX 4090", "Apple M3 Max (40-core GPU)", "Intel Xeon (2 cores), DDR5"
    device: Device  # a catalogue record, or one made for this CPU
    backend: str  # "cuda", "metal", "cpu" ...
    catalogue_id: str | None
    spec_bandwidth_bytes_per_s: float | None
    spec_bandwidth_source: str
    measured_bandwidth_bytes_per_s: float | None
    peak_flops_per_s: float | None
    peak_flops_source: str
    host: Host
    notes: tuple[str, ...] = field(default=())
    # CPUs run quantised models on int8 dot products: a different (higher) compute peak
    peak_quantized_ops_per_s: float | None = None
    peak_quantized_source: str = ""

    def compute_peak(self, quantized: bool) -> tuple[float | None, str]:
        """The compute roof for a model: int8 peak for quantised models on a CPU."""
        if quantized and self.peak_quantized_ops_per_s:
            return self.peak_quantized_ops_per_s, self.peak_quantized_source
        return self.peak_flops_per_s, self.peak_flops_source

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return (
            self.spec_bandwidth_bytes_per_s
            or self.measured_bandwidth_bytes_per_s
            or DEFAULT_RAM_BANDWIDTH_BYTES_PER_S
        )

    @property
    def bandwidth_source(self) -> str:
        """Where the bandwidth the ceilings use comes from, in words."""
        if self.spec_bandwidth_bytes_per_s:
            return self.spec_bandwidth_source
        if self.measured_bandwidth_bytes_per_s:
            return (
                "measured on this machine (the memory speed is not readable without admin rights)"
            )
        return "assumed: neither the memory speed nor a measurement is available"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["device"] = self.device.to_json()
        d["bandwidth_bytes_per_s"] = self.bandwidth_bytes_per_s
        return d


def _flops_per_cycle(features: tuple[str, ...], vendor: str | None) -> int:
    f = {x.upper() for x in features}
    if vendor == "Apple" or "NEON" in f or "ASIMD" in f:
        return 32  # 4 x 128-bit FMA pipes x 4 lanes x 2
    if "AVX512F" in f or "AVX2" in f:
        return 32  # 2 x 256-bit FMA ports (AVX-512 usually no wider in practice on clients)
    if "AVX" in f:
        return 16
    return 8


def _int8_ops_per_cycle(features: tuple[str, ...]) -> int:
    """Integer dot-product operations per cycle per core (llama.cpp's quantised matmuls turn
    activations into 8-bit integers and use the CPU's int8 dot-product instructions)."""
    f = {x.upper() for x in features}
    if "AMX_INT8" in f:
        return 1024
    if "AVX512_VNNI" in f or "AVX512VNNI" in f:
        return 256  # 2 x 512-bit ports x 64 multiply-adds
    if "AVX_VNNI" in f or "I8MM" in f:
        return 128
    if "AVX2" in f or "DOTPROD" in f or "ASIMDDP" in f:
        return 64
    return 32


def cpu_peak_flops(cpu: CpuInfo, quantized: bool = False) -> tuple[float | None, str]:
    """Estimated peak of the CPU's performance cores: cores x clock x operations per cycle,
    in int8 dot-product operations for quantised models, FP32 FLOPs otherwise."""
    cores = cpu.performance_cores or cpu.physical_cores or cpu.logical_cores
    if not cores:
        return None, "unknown (core count not detected)"
    ghz = (cpu.max_mhz or 3000.0) / 1000.0
    if quantized:
        per_cycle, unit = _int8_ops_per_cycle(cpu.features), "int8 ops"
    else:
        per_cycle, unit = _flops_per_cycle(cpu.features, cpu.vendor), "FP32 FLOP"
    clock = f"{ghz:.2f} GHz" if cpu.max_mhz else "3.0 GHz (clock not reported, assumed)"
    return (
        cores * ghz * per_cycle * 1e9,
        f"estimate: {cores} cores x {clock} x {per_cycle} {unit} per cycle",
    )


def _simd_label(features: tuple[str, ...]) -> str | None:
    f = {x.upper() for x in features}
    if "AMX_INT8" in f:
        return "AMX"
    if "AVX512F" in f:
        return "AVX-512 VNNI" if "AVX512_VNNI" in f else "AVX-512"
    if "AVX2" in f:
        return "AVX2 VNNI" if "AVX_VNNI" in f else "AVX2"
    if "NEON" in f or "ASIMD" in f:
        return "NEON"
    return None


def _cpu_device(
    cpu: CpuInfo, ram: RamInfo, bandwidth: float, peak: float | None, matched: Device | None
) -> Device:
    name = (cpu.model or "This computer's CPU").strip()
    memory_gb = (ram.total_bytes or 16 * GiB) / GiB
    return Device(
        id="this-machine-cpu",
        vendor=matched.vendor if matched else (cpu.vendor or "unknown"),
        name=name,
        aliases=(),
        device_class=matched.device_class if matched else "cpu_desktop",
        release_year=matched.release_year if matched else 2020,
        memory_sizes_gb=(round(memory_gb, 1),),
        memory_type=ram.type or "RAM",
        memory_bandwidth_gbs=bandwidth / GB,
        fp32_tflops=(peak / 1e12) if peak else None,
        fp16_tensor_tflops=None,
        tdp_w=matched.tdp_w if matched else None,
        launch_price_usd=None,
        backends=("cpu",),
        sources=(
            {
                "url": "https://llm-hardware-advisor.local/this-machine",
                "fields": ["all"],
                "note": "detected on this machine",
            },
        ),
        cpu_cores=cpu.physical_cores,
        cpu_threads=cpu.logical_cores,
        simd=(matched.simd if matched else None) or _simd_label(cpu.features),
        fp32_tflops_is_estimate=True,
    )


def build_profile(
    report: HardwareReport, catalogue: Catalogue, *, chosen_device_id: str | None = None
) -> MachineProfile:
    """The machine profile from detection, the catalogue and (optionally) the user's choice."""
    notes: list[str] = []
    backend_info = report.backend
    backends = {b.lower() for b in (backend_info.backends if backend_info else ())}
    gpu_backend = next(
        (b for b in ("cuda", "metal", "rocm", "vulkan", "sycl") if b in backends), None
    )
    ram = report.ram
    measured = ram.measured_bandwidth_bytes_per_s
    ram_spec = ram.theoretical_bandwidth_bytes_per_s
    host = Host(
        ram_bytes=float(ram.total_bytes or 16 * GiB),
        ram_bandwidth_bytes_per_s=float(ram_spec or measured or DEFAULT_RAM_BANDWIDTH_BYTES_PER_S),
    )

    chosen = catalogue.by_id(chosen_device_id) if chosen_device_id else None
    gpu: Device | None = None
    gpu_seen: GpuInfo | None = None
    for g in report.gpus:
        if g.is_virtual:
            continue
        d = catalogue.by_id(g.catalogue_id) if g.catalogue_id else catalogue.try_resolve(g.name)
        if d is not None and not d.is_cpu:
            gpu, gpu_seen = d, g
            break
    if chosen is not None and not chosen.is_cpu:
        gpu = chosen
        notes.append(f"Device chosen by hand: {chosen.name}.")

    if gpu is not None and (gpu_backend or chosen is not None or gpu.device_class == "apple_soc"):
        backend = gpu_backend or gpu.usual_backend
        if not gpu_backend and chosen is None:
            notes.append(
                f"The installed llama.cpp has no GPU backend, so the {gpu.name} is "
                "not used; the projection assumes a build with "
                f"{gpu.usual_backend}."
            )
        peak = gpu.peak_flops_per_s
        source = "; ".join(s["url"] for s in gpu.sources[:1])
        if gpu_seen and gpu_seen.bandwidth_bytes_per_s and not gpu.unified_memory:
            notes.append(
                f"The driver reports {gpu_seen.bandwidth_bytes_per_s / GB:.0f} GB/s for "
                f"this card; the catalogue's vendor figure is {gpu.memory_bandwidth_gbs:.0f}."
            )
        return MachineProfile(
            name=gpu.name,
            device=gpu,
            backend=backend,
            catalogue_id=gpu.id,
            spec_bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
            spec_bandwidth_source=f"vendor figure ({source})",
            measured_bandwidth_bytes_per_s=measured if gpu.unified_memory else None,
            peak_flops_per_s=peak,
            peak_flops_source=(
                "dense FP16 tensor peak"
                if gpu.fp16_tensor_tflops
                else "FP32 peak (estimate)"
                if gpu.fp32_tflops_is_estimate
                else "FP32 peak"
            ),
            host=host,
            notes=tuple(notes),
        )

    # CPU inference: the CPU and this machine's RAM
    cpu = report.cpu
    matched = (
        chosen
        if (chosen is not None and chosen.is_cpu)
        else (
            catalogue.by_id(cpu.catalogue_id)
            if cpu.catalogue_id
            else (catalogue.try_resolve(cpu.model) if cpu.model else None)
        )
    )
    if matched is not None and not matched.is_cpu:
        matched = None
    if ram_spec:
        spec, spec_source = ram_spec, ram.theoretical_bandwidth_source or "memory modules"
    elif matched is not None:
        spec = matched.bandwidth_bytes_per_s
        spec_source = (
            f"catalogue: {matched.name} at its highest supported memory speed "
            "(your modules may be slower)"
        )
    else:
        spec, spec_source = None, "memory speed not readable without admin rights"
    if spec is None and measured is None:
        notes.append(
            "Neither the memory speed nor a measured bandwidth is known; assuming "
            f"{DEFAULT_RAM_BANDWIDTH_BYTES_PER_S / GB:.0f} GB/s."
        )
    peak, peak_source = (
        (matched.peak_flops_per_s, "catalogue FP32 estimate")
        if (matched is not None and matched.peak_flops_per_s)
        else cpu_peak_flops(cpu)
    )
    bandwidth = spec or measured or DEFAULT_RAM_BANDWIDTH_BYTES_PER_S
    peak_q, peak_q_source = cpu_peak_flops(cpu, quantized=True)
    device = _cpu_device(cpu, ram, bandwidth, peak, matched)
    cores = cpu.physical_cores or cpu.logical_cores
    name = f"{device.name}" + (f" ({cores} cores)" if cores else "")
    return MachineProfile(
        name=name,
        device=device,
        backend="cpu",
        catalogue_id=matched.id if matched else None,
        spec_bandwidth_bytes_per_s=spec,
        spec_bandwidth_source=spec_source,
        measured_bandwidth_bytes_per_s=measured,
        peak_flops_per_s=peak,
        peak_flops_source=peak_source,
        host=host,
        notes=tuple(notes),
        peak_quantized_ops_per_s=peak_q,
        peak_quantized_source=peak_q_source,
    )


# -------------------------------------------------------------------------------------------
# the hardware report, cached (detection takes seconds; hardware rarely changes)
# -------------------------------------------------------------------------------------------


def report_from_json(data: dict[str, Any]) -> HardwareReport:
    """Rebuild a HardwareReport from its to_json() form."""
    cpu = dict(data.get("cpu") or {})
    cpu["features"] = tuple(cpu.get("features") or ())
    cpu["core_types"] = tuple(tuple(x) for x in cpu.get("core_types") or ())
    ram = dict(data.get("ram") or {})
    ram["modules"] = tuple(MemoryModule(**m) for m in ram.get("modules") or ())
    backend = data.get("backend")
    if backend:
        backend = dict(backend)
        backend["backends"] = tuple(backend.get("backends") or ())
        backend["devices"] = tuple(backend.get("devices") or ())
    known_cpu = set(CpuInfo.__dataclass_fields__)
    known_ram = set(RamInfo.__dataclass_fields__)
    known_gpu = set(GpuInfo.__dataclass_fields__)
    known_backend = set(BackendInfo.__dataclass_fields__)
    return HardwareReport(
        os=data.get("os", ""),
        os_version=data.get("os_version", ""),
        machine=data.get("machine"),
        cpu=CpuInfo(**{k: v for k, v in cpu.items() if k in known_cpu}),
        ram=RamInfo(**{k: v for k, v in ram.items() if k in known_ram}),
        gpus=tuple(
            GpuInfo(**{k: v for k, v in g.items() if k in known_gpu})
            for g in data.get("gpus") or ()
        ),
        backend=BackendInfo(**{k: v for k, v in backend.items() if k in known_backend})
        if backend
        else None,
        notes=tuple(ProbeNote(**n) for n in data.get("notes") or ()),
        detected_at=data.get("detected_at"),
    )


def load_cached_report(
    path: Path, max_age_s: float = HARDWARE_CACHE_MAX_AGE_S
) -> HardwareReport | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        report = report_from_json(data)
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if report.detected_at is None or time.time() - report.detected_at > max_age_s:
        return None
    return report


def save_cached_report(path: Path, report: HardwareReport) -> None:
    from advisor.core.infra.atomic import atomic_write_text
    from advisor.core.runs.results import json_safe

    # a cache: failing to write it costs a re-detection next time, nothing more
    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(json_safe(report.to_json()), indent=1))


def with_backend(report: HardwareReport, backend: BackendInfo) -> HardwareReport:
    return replace(report, backend=backend)


def device_from_summary(summary: dict[str, Any]) -> Device | None:
    """The device a saved run was measured on, rebuilt from the run's hardware summary when
    the catalogue does not know it (e.g. this machine's CPU). None without a bandwidth."""
    bandwidth = summary.get("spec_bandwidth_bytes_per_s") or summary.get(
        "measured_bandwidth_bytes_per_s"
    )
    if not bandwidth:
        return None
    peak = summary.get("peak_flops_per_s")
    ram = summary.get("ram_total_bytes") or 16 * GiB
    backend = (summary.get("backend") or "cpu").lower()
    return Device(
        id="measured-machine",
        vendor="unknown",
        name=str(summary.get("device_name") or "the measured machine"),
        aliases=(),
        device_class=summary.get("device_class") or "cpu_desktop",
        release_year=2020,
        memory_sizes_gb=(round(ram / GiB, 1),),
        memory_type="RAM",
        memory_bandwidth_gbs=bandwidth / GB,
        fp32_tflops=peak / 1e12 if peak else None,
        fp16_tensor_tflops=None,
        tdp_w=None,
        launch_price_usd=None,
        backends=(backend,),
        sources=(
            {
                "url": "https://llm-hardware-advisor.local/this-machine",
                "fields": ["all"],
                "note": "from the saved run's hardware summary",
            },
        ),
        simd=summary.get("simd"),
        fp32_tflops_is_estimate=True,
    )
