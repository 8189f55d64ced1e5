"""macOS probes: sysctl and system_profiler, and the GPU's share of unified memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from advisor.core.hardware import parsers as P
from advisor.core.hardware.detect.common import (
    LONG_S,
    SHORT_S,
    Found,
    Task,
    TaskBox,
    box_value,
    describe_gpus,
    merge_cpu,
    run_command,
)
from advisor.core.hardware.model import CpuInfo, ProbeNote

# Apple Silicon: Metal's recommendedMaxWorkingSetSize, as llama.cpp logs show it: 2/3 of RAM
# on 8 and 16 GiB Macs (5726.63 MB of 8 GiB, 11453.25 MB of 16 GiB), 3/4 on 64 and 192 GiB.
_APPLE_GPU_SHARE_SMALL = 2 / 3
_APPLE_GPU_SHARE_LARGE = 3 / 4
_APPLE_SMALL_RAM_LIMIT_BYTES = 36 * P.GiB

# --------------------------------------------------------------------------- macOS


def mac_tasks() -> list[tuple[str, Task]]:
    def sp(data_type: str, parse: Callable[[str], Any], describe: Callable[[Any], str]) -> Task:
        return lambda c, n: run_command(
            c,
            n,
            f"system_profiler {data_type}",
            ["system_profiler", data_type, "-json"],
            LONG_S,
            parse,
            describe=describe,
        )

    return [
        (
            "sysctl",
            lambda c, n: run_command(
                c,
                n,
                "sysctl",
                ["sysctl", "hw", "machdep.cpu", "iogpu", "sysctl.proc_translated"],
                SHORT_S,
                P.parse_sysctl,
                accept_nonzero=True,
                describe=lambda v: f"{len(v)} values",
            ),
        ),
        (
            "sp-hardware",
            sp(
                "SPHardwareDataType",
                P.parse_sp_hardware,
                lambda h: h.chip or h.cpu_type or "no chip name",
            ),
        ),
        ("sp-displays", sp("SPDisplaysDataType", P.parse_sp_displays, describe_gpus)),
        (
            "sp-memory",
            sp("SPMemoryDataType", P.parse_sp_memory, lambda m: m.type or "type not reported"),
        ),
    ]


def apple_gpu_share(ram_total: int | None, wired_limit_mb: int | None) -> tuple[int | None, str]:
    if wired_limit_mb:
        return wired_limit_mb * P.MiB, f"iogpu.wired_limit_mb is set to {wired_limit_mb} MiB"
    if not ram_total:
        return None, "unknown: total RAM unknown"
    share = (
        _APPLE_GPU_SHARE_SMALL
        if ram_total <= _APPLE_SMALL_RAM_LIMIT_BYTES
        else (_APPLE_GPU_SHARE_LARGE)
    )
    return int(ram_total * share), (
        f"unified memory: the GPU may use about {share:.0%} of RAM (Metal's "
        "recommendedMaxWorkingSetSize: 2/3 up to 36 GB, 3/4 above; an estimate)"
    )


def macos_found(
    boxes: dict[str, TaskBox], notes: list[ProbeNote], base_cpu: CpuInfo, ram_total: int | None
) -> Found:
    """Join the macOS probes' results: CPU (Rosetta, VMs), RAM, GPUs and their memory share."""
    values: dict[str, str] = box_value(boxes, "sysctl") or {}
    hw: P.SpHardware | None = box_value(boxes, "sp-hardware")
    sysctl_cpu = P.cpu_info_from_sysctl(values) if values else None
    sp_cpu = P.cpu_info_from_sp_hardware(hw) if hw else None
    cpu = merge_cpu(sysctl_cpu, sp_cpu, base_cpu)
    if "(Virtual)" in values.get("machdep.cpu.brand_string", "") or (hw and hw.chip_is_virtual):
        notes.append(
            ProbeNote(
                "virtual machine", "ok", "macOS runs in a virtual machine: CPU and GPU are virtual"
            )
        )
    if values.get("sysctl.proc_translated") == "1":
        cpu = replace(cpu, architecture="arm64")
        notes.append(
            ProbeNote(
                "Rosetta 2",
                "ok",
                "this process runs under Rosetta 2 (x86_64 on Apple Silicon); the hardware is "
                "arm64",
            )
        )
    # hw.memsize is what psutil reads on a Mac; taking it first keeps replays consistent.
    ram_total = P.to_int(values.get("hw.memsize")) or (hw.memory_bytes if hw else None) or ram_total
    found = Found(
        cpu,
        ram_total,
        machine=values.get("hw.model") or (hw.machine_model if hw else None),
        gpus=list(box_value(boxes, "sp-displays") or ()),
        apple_silicon=cpu.architecture == "arm64" or bool(hw and hw.chip),
    )
    memory: P.SpMemory | None = box_value(boxes, "sp-memory")
    if memory:
        found.modules, found.ram_type = memory.modules, memory.type
    if found.apple_silicon:
        wired_limit_mb = P.to_int(values.get("iogpu.wired_limit_mb")) or None
        share, share_note = apple_gpu_share(ram_total, wired_limit_mb)
        found.gpus = [
            replace(g, vram_total_bytes=share, note=share_note)
            if g.unified_memory and g.vendor == "Apple"
            else g
            for g in found.gpus
        ]
        found.bandwidth_note = (
            "Apple unified memory: the theoretical bandwidth comes from the catalogue "
            "(by chip), not from module speeds"
        )
    return found
