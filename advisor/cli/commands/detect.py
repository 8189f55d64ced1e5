"""`advisor detect`: this machine's hardware, with a measured RAM bandwidth."""

from __future__ import annotations

import argparse

from advisor.cli.output import Output, format_pairs
from advisor.core.hardware.model import HardwareReport
from advisor.core.hardware.profile import MachineProfile
from advisor.core.infra.paths import app_paths
from advisor.core.infra.units import GiB, fmt_bandwidth
from advisor.usecases.machine import detect_machine


def run(args: argparse.Namespace) -> Output:
    paths = app_paths().ensure()
    report, profile = detect_machine(paths, probe_bandwidth=not args.no_probe, use_cache=False)
    data = {**report.to_json(), "profile": profile.to_json()}
    return Output(data, lambda: text(report, profile))


def _ram_rows(report: HardwareReport) -> list[tuple[str, str]]:
    ram = report.ram
    speed = ", ".join(
        x for x in (ram.type, f"{ram.speed_mts} MT/s" if ram.speed_mts else None) if x
    )
    theoretical = (
        fmt_bandwidth(ram.theoretical_bandwidth_bytes_per_s)
        + f" ({ram.theoretical_bandwidth_source or 'memory modules'})"
        if ram.theoretical_bandwidth_bytes_per_s
        else (ram.theoretical_bandwidth_source or "unknown")
    )
    measured = (
        fmt_bandwidth(ram.measured_bandwidth_bytes_per_s)
        + f" (read test, {ram.measured_probe_s or 0:.1f} s)"
        if ram.measured_bandwidth_bytes_per_s
        else "not measured (--no-probe)"
    )
    return [
        (
            "RAM",
            f"{(ram.total_bytes or 0) / GiB:.1f} GiB total, "
            f"{(ram.available_bytes or 0) / GiB:.1f} GiB available",
        ),
        ("RAM type and speed", speed or "unknown (not readable without admin rights)"),
        ("RAM bandwidth, theoretical", theoretical),
        ("RAM bandwidth, measured", measured),
    ]


def text(report: HardwareReport, profile: MachineProfile) -> str:
    cpu = report.cpu
    rows: list[tuple[str, str]] = [
        ("OS", f"{report.os} {report.os_version}"),
        (
            "CPU",
            f"{cpu.model or 'unknown'}: {cpu.physical_cores or '?'} cores, "
            f"{cpu.logical_cores or '?'} threads",
        ),
        ("CPU features", ", ".join(cpu.features) or "unknown"),
        *_ram_rows(report),
    ]
    for g in report.gpus:
        vram = f", {g.vram_total_bytes / GiB:.1f} GiB" if g.vram_total_bytes else ""
        cores = f", {g.gpu_cores}-core GPU" if g.gpu_cores else ""
        bw = f", {fmt_bandwidth(g.bandwidth_bytes_per_s)}" if g.bandwidth_bytes_per_s else ""
        rows.append(("GPU", f"{g.name}{vram}{cores}{bw}" + (" (virtual)" if g.is_virtual else "")))
    if not report.gpus:
        rows.append(("GPU", "none found"))
    b = report.backend
    rows.append(
        (
            "llama.cpp",
            (
                f"{', '.join(b.backends)}; GPU offload {'yes' if b.gpu_offload else 'no'}; "
                f"llama-cpp-python {b.llama_cpp_python_version}"
            )
            if b and b.available
            else f"unavailable ({b.error if b else 'not checked'})",
        )
    )
    rows.append(("Runs your model", f"{profile.name} ({profile.backend})"))
    rows.append(
        (
            "  bandwidth",
            f"{fmt_bandwidth(profile.bandwidth_bytes_per_s)} ({profile.bandwidth_source})",
        )
    )
    peak, source = profile.compute_peak(True)
    rows.append(
        ("  compute", f"{(peak or 0) / 1e12:.2f} TFLOP/s ({source})" if peak else "unknown")
    )
    lines = [format_pairs(rows)]
    if profile.notes:
        lines += ["", *profile.notes]
    unknown = [n for n in report.notes if n.status != "ok"]
    if unknown:
        lines.append("\nNot available here:")
        lines += [f"  {n.probe}: {n.detail}" for n in unknown]
    return "\n".join(lines)
