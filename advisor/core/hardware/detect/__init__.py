"""Detect this machine's CPU, RAM and GPUs on Linux, macOS and Windows, without admin rights.

Each probe (a command, a file, a library) runs in its own daemon thread with its own short
timeout, all at once, under one overall deadline: a probe that fails or hangs leaves its
fields None and a ProbeNote that says why, and detection returns on time regardless (a hung
thread is abandoned, never joined). The measured RAM bandwidth probe runs after the command
probes, alone, so that they do not disturb it. One module per platform (linux, macos,
windows) and vendor (nvidia) holds the probes and joins their results.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from advisor.core.hardware.detect.common import (
    DEFAULT_TIMEOUT_S,
    Found,
    ProbeContext,
    TaskBox,
    measure_ram_bandwidth,
    merge_cpu,
    merge_gpus,
    numpy_features,
    os_version,
    psutil_basics,
    run_tasks,
)
from advisor.core.hardware.detect.linux import linux_found, linux_tasks
from advisor.core.hardware.detect.macos import mac_tasks, macos_found
from advisor.core.hardware.detect.nvidia import NVIDIA_SMI_QUERY, nvml_gpus
from advisor.core.hardware.detect.windows import (
    parse_windows_bundle,
    powershell_args,
    windows_found,
    windows_tasks,
)
from advisor.core.hardware.model import CpuInfo, HardwareReport, ProbeNote, RamInfo
from advisor.core.hardware.probes import (
    CommandRunner,
    FileReader,
    LocalFileReader,
    SubprocessRunner,
)
from advisor.core.hardware.ram_estimate import estimate_ram_bandwidth

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "NVIDIA_SMI_QUERY",
    "detect_hardware",
    "merge_cpu",
    "merge_gpus",
    "nvml_gpus",
    "parse_windows_bundle",
    "powershell_args",
]

_Joiner = Callable[[dict[str, TaskBox], list[ProbeNote], CpuInfo, "int | None"], Found]
_PLATFORMS: dict[str, tuple[Callable[[], list[Any]], _Joiner]] = {
    "Linux": (linux_tasks, linux_found),
    "Darwin": (mac_tasks, macos_found),
    "Windows": (windows_tasks, windows_found),
}


def detect_hardware(
    *,
    probe_bandwidth: bool = True,
    runner: CommandRunner | None = None,
    system: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    files: FileReader | None = None,
    nvml: Any = None,
    bandwidth_target_s: float = 1.0,
) -> HardwareReport:
    """Detect CPU, RAM and GPUs; never raises for a failed probe and returns on time.

    `system` overrides platform.system() ('Linux', 'Darwin', 'Windows') and `runner`,
    `files` and `nvml` replace the subprocess runner, the file reader and the pynvml module,
    so tests can replay recorded outputs or make every probe hang. The command probes share
    one deadline of `timeout_s`; the bandwidth probe (about 1-2 s) runs after them.
    Fields left None are unknown; `notes` says for every probe what it did and why.
    """
    actual_system = platform.system()
    system = system or actual_system
    notes: list[ProbeNote] = []
    base_cpu, ram_total, ram_available = psutil_basics(notes)
    ctx = ProbeContext(
        runner=runner or SubprocessRunner(),
        files=files or LocalFileReader(),
        deadline=time.monotonic() + timeout_s,
        nvml=nvml,
    )
    tasks, join = _PLATFORMS.get(system, (list, None))
    if join is None:
        notes.append(ProbeNote("platform", "unavailable", f"no hardware probes for {system}"))
    boxes = run_tasks(tasks(), ctx, timeout_s)
    for box in boxes.values():
        notes.extend(box.notes)
    found = join(boxes, notes, base_cpu, ram_total) if join else Found(base_cpu, ram_total)
    if not found.cpu.features and system == actual_system:  # numpy describes this machine
        features = numpy_features()
        if features:
            found.cpu = replace(found.cpu, features=features)
            notes.append(
                ProbeNote(
                    "numpy CPU dispatch",
                    "ok",
                    "features from numpy's runtime detection "
                    "(AVX_VNNI, AMX and I8MM are not detected there)",
                )
            )
    ram = _ram(found, ram_available, notes, probe_bandwidth, bandwidth_target_s)
    return HardwareReport(
        os=system,
        os_version=os_version(system) if system == actual_system else system,
        machine=found.machine,
        cpu=found.cpu,
        ram=ram,
        gpus=tuple(found.gpus),
        backend=None,
        notes=tuple(notes),
        detected_at=time.time(),
    )


def _ram(
    found: Found,
    ram_available: int | None,
    notes: list[ProbeNote],
    probe_bandwidth: bool,
    bandwidth_target_s: float,
) -> RamInfo:
    """RAM: size, type, the modules' theoretical bandwidth and the measured one."""
    estimate = estimate_ram_bandwidth(found.modules) if found.modules else None
    ram_type = found.ram_type
    theoretical: float | None = None
    if found.apple_silicon:
        source = found.bandwidth_note
    elif estimate is not None:
        theoretical, source = estimate.bytes_per_s, estimate.source
        ram_type = ram_type or estimate.type
    else:
        source = found.bandwidth_note or "unknown: memory modules could not be read"
    measured = measured_s = measured_copy = None
    if probe_bandwidth:
        measured, measured_copy, measured_s = measure_ram_bandwidth(notes, bandwidth_target_s)
    else:
        notes.append(ProbeNote("memory bandwidth probe", "unavailable", "not run (asked not to)"))
    per_channel = estimate is not None and not found.apple_silicon
    return RamInfo(
        total_bytes=found.ram_total,
        available_bytes=ram_available,
        type=ram_type,
        speed_mts=estimate.speed_mts if estimate else None,
        modules=found.modules,
        channels=estimate.channels if estimate and per_channel else None,
        theoretical_bandwidth_bytes_per_s=theoretical,
        theoretical_bandwidth_source=source,
        measured_bandwidth_bytes_per_s=measured,
        measured_probe_s=measured_s,
        measured_copy_bandwidth_bytes_per_s=measured_copy,
        bus_width_bits=estimate.bus_width_bits if estimate and per_channel else None,
    )
