"""What the Machine page says about this computer, as labelled facts: the device the model
runs on with the bandwidth and compute that bound it, the hardware as detected, the llama.cpp
build. The page lays them out; the words are made here."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.hardware.model import HardwareReport
from advisor.core.hardware.profile import MachineProfile
from advisor.core.infra.units import GB, GiB, fmt_bandwidth

VECTOR_FEATURES = ("AVX", "NEON", "FMA", "SVE", "DOTPROD", "I8MM", "AMX")  # what llama.cpp uses


@dataclass(frozen=True)
class Fact:
    """One line: a label ('' for none), its value, and an aside in smaller print."""

    label: str
    value: str
    aside: str = ""


@dataclass(frozen=True)
class FactSheet:
    title: str  # '' for none
    facts: tuple[Fact, ...]
    footnote: str = ""


def variant_question(name: str, count: int) -> str:
    """The question asked when a typed name fits several catalogued variants."""
    return f"'{name}' fits {count} devices. Which one is yours?"


VARIANTS_QUESTION = "Your GPU comes in several variants. Which one is yours?"


def runs_on(report: HardwareReport, profile: MachineProfile, quantized: bool) -> FactSheet:
    """What runs the model, its bandwidth (specified and measured) and its compute peak."""
    if profile.spec_bandwidth_bytes_per_s:
        spec = Fact(
            "Memory bandwidth, specified",
            fmt_bandwidth(profile.spec_bandwidth_bytes_per_s),
            profile.spec_bandwidth_source,
        )
    else:  # runs saved by earlier versions say 'unknown: ...'
        spec = Fact(
            "Memory bandwidth, specified",
            "unknown",
            profile.spec_bandwidth_source.removeprefix("unknown: "),
        )
    measured = (
        Fact(
            "Memory bandwidth, measured",
            fmt_bandwidth(profile.measured_bandwidth_bytes_per_s),
            f"read test of system memory, {report.ram.measured_probe_s or 0:.1f} s",
        )
        if profile.measured_bandwidth_bytes_per_s
        else Fact("Memory bandwidth, measured", "not measured")
    )
    peak, source = profile.compute_peak(quantized)
    compute = (
        Fact("Compute peak", f"{peak / 1e12:,.2f} TFLOP/s", source)
        if peak
        else Fact("Compute peak", "unknown")
    )
    return FactSheet(
        f"{profile.name} with the {profile.backend.upper()} backend",
        (spec, measured, compute),
        "Decode speed is bounded by bandwidth ÷ bytes read per token; prefill by the compute peak.",
    )


def hardware(report: HardwareReport) -> FactSheet:
    """CPU, RAM, GPUs and the OS, as detected."""
    cpu, ram = report.cpu, report.ram
    cores = (f"{cpu.physical_cores} cores" if cpu.physical_cores else "cores unknown") + (
        f", {cpu.logical_cores} threads" if cpu.logical_cores else ""
    )
    features = ", ".join(f for f in cpu.features if f.startswith(VECTOR_FEATURES))
    ram_detail = ", ".join(
        x
        for x in (
            ram.type,
            f"{ram.speed_mts} MT/s" if ram.speed_mts else None,
            f"{len(ram.modules)} modules" if ram.modules else None,
        )
        if x
    ) or ("type and speed unknown (not readable without admin rights)")
    gpus = [
        g.name
        + (f" · {g.vram_total_bytes / GiB:.0f} GB" if g.vram_total_bytes else "")
        + (f" · {g.gpu_cores}-core GPU" if g.gpu_cores else "")
        + (" · virtual" if g.is_virtual else "")
        for g in report.gpus
    ]
    return FactSheet(
        "",
        (
            Fact(
                "CPU",
                f"{cpu.model or 'unknown'} ({cores})",
                features or "no vector features detected",
            ),
            Fact(
                "RAM",
                f"{(ram.total_bytes or 0) / GiB:.1f} GB total, "
                f"{(ram.available_bytes or 0) / GiB:.1f} GB free",
                ram_detail,
            ),
            Fact("GPUs", "; ".join(gpus) or "none found", f"{report.os} {report.os_version}"),
        ),
    )


def llama_build(report: HardwareReport) -> FactSheet:
    """The llama.cpp build: backends, offload, devices."""
    backend = report.backend
    if not (backend and backend.available):
        err = backend.error if backend else "not checked"
        return FactSheet("", (Fact("llama.cpp", "could not be queried", err),))
    devices = [
        f"{d.name}: {d.description}"
        + (f" ({d.memory_total_bytes / GB:.0f} GB)" if d.memory_total_bytes else "")
        for d in backend.devices
    ]
    return FactSheet(
        "",
        (
            Fact("Backends", ", ".join(backend.backends) or "CPU"),
            Fact("GPU offload", "yes" if backend.gpu_offload else "no (CPU build)"),
            Fact("Devices", "; ".join(devices) or "CPU only"),
            Fact("", "", f"llama-cpp-python {backend.llama_cpp_python_version}"),
        ),
    )
