"""Detect this machine once: hardware probes, llama.cpp's backends (in a child process), the
catalogue match, and a day-long cache so the app and the CLI start fast.

Nothing here runs on a GUI thread: the GUI calls `detect_machine` from a worker.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from advisor.bench.controller import run_child_json
from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.hardware.machine import (
    MachineProfile,
    build_profile,
    load_cached_report,
    save_cached_report,
)
from advisor.core.hardware.model import BackendInfo, HardwareReport
from advisor.core.infra.paths import AppPaths


def query_backend(timeout_s: float = 30.0) -> BackendInfo:
    """Ask llama.cpp itself (in a child process) which backends and devices it has."""
    info = run_child_json("backend", timeout_s)
    if not info.get("available"):
        return BackendInfo(available=False, error=str(info.get("error") or "unknown error"))
    return BackendInfo(
        available=True,
        backends=tuple(info.get("backends") or ()),
        gpu_offload=bool(info.get("gpu_offload")),
        devices=tuple(info.get("devices") or ()),
        system_info=str(info.get("system_info") or ""),
        llama_cpp_python_version=info.get("llama_cpp_python_version"),
    )


def match_catalogue(report: HardwareReport, catalogue: Catalogue) -> HardwareReport:
    """Fill catalogue_id on the CPU and every GPU the catalogue knows."""
    cpu = report.cpu
    if cpu.model and not cpu.catalogue_id:
        d = catalogue.try_resolve(cpu.model)
        if d is not None and d.is_cpu:
            cpu = replace(cpu, catalogue_id=d.id)
    gpus = []
    for g in report.gpus:
        if g.catalogue_id or g.is_virtual:
            gpus.append(g)
            continue
        name = g.name
        if g.gpu_cores and "core" not in name.lower():
            name = f"{name} {g.gpu_cores}-core GPU"
        d = catalogue.try_resolve(name)
        if d is None and g.vram_total_bytes:
            d = catalogue.try_resolve(f"{g.name} {round(g.vram_total_bytes / 1024**3)}GB")
        if d is None and g.pci_id:
            d = next((x for x in catalogue if g.pci_id.lower() in x.pci_device_ids), None)
        gpus.append(replace(g, catalogue_id=d.id) if d is not None and not d.is_cpu else g)
    return replace(report, cpu=cpu, gpus=tuple(gpus))


def detect_machine(
    paths: AppPaths,
    *,
    probe_bandwidth: bool = True,
    use_cache: bool = True,
    chosen_device_id: str | None = None,
    catalogue: Catalogue | None = None,
) -> tuple[HardwareReport, MachineProfile]:
    """The hardware report (cached for a day) and the machine profile built from it."""
    from advisor.core.hardware.detect import detect_hardware

    catalogue = catalogue or load_catalogue()
    report = load_cached_report(paths.hardware_cache) if use_cache else None
    if report is not None and probe_bandwidth and report.ram.measured_bandwidth_bytes_per_s is None:
        report = None  # the cached report skipped the probe; this time we want it
    if report is None:
        report = detect_hardware(probe_bandwidth=probe_bandwidth)
        report = replace(report, backend=query_backend(), detected_at=time.time())
        report = match_catalogue(report, catalogue)
        paths.cache.mkdir(parents=True, exist_ok=True)
        save_cached_report(paths.hardware_cache, report)
    return report, build_profile(report, catalogue, chosen_device_id=chosen_device_id)


def hardware_summary(report: HardwareReport, profile: MachineProfile) -> dict[str, Any]:
    """What a saved run keeps about the machine it ran on."""
    return {
        "device_name": profile.name,
        "device_id": profile.catalogue_id,
        "backend": profile.backend,
        "spec_bandwidth_bytes_per_s": profile.spec_bandwidth_bytes_per_s,
        "spec_bandwidth_source": profile.spec_bandwidth_source,
        "measured_bandwidth_bytes_per_s": profile.measured_bandwidth_bytes_per_s,
        "peak_flops_per_s": profile.peak_flops_per_s,
        "simd": profile.device.simd,
        "device_class": profile.device.device_class,
        "peak_flops_source": profile.peak_flops_source,
        "os": f"{report.os} {report.os_version}".strip(),
        "cpu": report.cpu.model,
        "cpu_cores": report.cpu.physical_cores,
        "ram_total_bytes": report.ram.total_bytes,
        "gpus": [g.name for g in report.gpus],
    }
