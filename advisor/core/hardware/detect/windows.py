"""Windows probes: one PowerShell + CIM call for CPU, GPUs, memory and the registry's VRAM
sizes, and nvidia-smi."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.hardware import parsers as P
from advisor.core.hardware.detect.common import (
    LONG_S,
    SHORT_S,
    Found,
    ProbeContext,
    Task,
    TaskBox,
    box_value,
    describe_cpu,
    describe_gpus,
    merge_cpu,
    merge_gpus,
    run_command,
)
from advisor.core.hardware.detect.linux import _describe_modules
from advisor.core.hardware.detect.nvidia import nvidia_task
from advisor.core.hardware.model import (
    CpuInfo,
    GpuInfo,
    MemoryModule,
    ProbeNote,
)

WINDOWS_SCRIPT = r"""
$ErrorActionPreference = 'SilentlyContinue'
$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = [System.Text.Encoding]::UTF8
$r = [ordered]@{}
$r.processor = @(Get-CimInstance -ClassName Win32_Processor | Select-Object Name, Manufacturer,
  NumberOfCores, NumberOfLogicalProcessors, MaxClockSpeed, Architecture)
$r.video = @(Get-CimInstance -ClassName Win32_VideoController | Select-Object Name,
  AdapterCompatibility, AdapterRAM, DriverVersion, PNPDeviceID, VideoProcessor)
$r.memory = @(Get-CimInstance -ClassName Win32_PhysicalMemory | Select-Object Capacity, Speed,
  ConfiguredClockSpeed, SMBIOSMemoryType, MemoryType, DataWidth, TotalWidth, DeviceLocator,
  BankLabel)
$r.system = @(Get-CimInstance -ClassName Win32_ComputerSystem | Select-Object Manufacturer, Model)
$k = 'HKLM:\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}'
$r.registry = @(Get-ChildItem -Path $k | Where-Object { $_.PSChildName -match '^\d{4}$' } |
  ForEach-Object { $p = Get-ItemProperty -Path $_.PSPath; [pscustomobject]@{
    Key = $_.PSChildName; DriverDesc = $p.DriverDesc; MatchingDeviceId = $p.MatchingDeviceId;
    qwMemorySize = $p.'HardwareInformation.qwMemorySize';
    MemorySize = $p.'HardwareInformation.MemorySize' } })
$r | ConvertTo-Json -Depth 5 -Compress
"""


def powershell_args(script: str = WINDOWS_SCRIPT) -> list[str]:
    """The PowerShell command line for a script (encoded: no quoting can break it)."""
    import base64

    encoded = base64.b64encode(script.encode("utf-16-le")).decode("ascii")
    return [
        "powershell.exe",
        "-NoProfile",
        "-NonInteractive",
        "-NoLogo",
        "-ExecutionPolicy",
        "Bypass",
        "-EncodedCommand",
        encoded,
    ]


# --------------------------------------------------------------------------- Windows


@dataclass(frozen=True)
class WindowsBundle:
    cpu: CpuInfo | None
    gpus: tuple[GpuInfo, ...]
    modules: tuple[MemoryModule, ...]
    machine: str | None


def parse_windows_bundle(text: str) -> WindowsBundle:
    """Split detection's one PowerShell answer (CIM classes + registry) and parse each part."""
    data = P.load_json(text)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")

    def records(key: str) -> list[dict[str, Any]]:
        value = data.get(key)
        items = value if isinstance(value, list) else [value] if value else []
        return [i for i in items if isinstance(i, dict)]

    processors = records("processor")
    cpu = P.cpu_from_win_records(processors) if processors else None
    gpus = P.video_controllers_from_records(records("video"))
    registry = P.parse_windows_registry_qwmemorysize(records("registry"))
    gpus = P.apply_windows_registry_vram(gpus, registry)
    system = records("system")
    machine = None
    if system:
        parts = [str(system[0].get(k) or "").strip() for k in ("Manufacturer", "Model")]
        machine = " ".join(p for p in parts if p and "o.e.m." not in p.lower()) or None
    return WindowsBundle(cpu, gpus, P.memory_modules_from_cim(records("memory")), machine)


def _windows_cim_task(ctx: ProbeContext, notes: list[ProbeNote]) -> WindowsBundle | None:
    bundle = run_command(
        ctx,
        notes,
        "PowerShell CIM (Win32_Processor, Win32_VideoController, "
        "Win32_PhysicalMemory, display registry)",
        powershell_args(),
        LONG_S,
        parse_windows_bundle,
        describe=lambda b: f"{describe_gpus(b.gpus)}; {_describe_modules(b.modules)}",
    )
    if bundle is not None:
        return bundle
    # wmic is deprecated and gone from recent Windows 11, but older machines still have it.
    cpu = run_command(
        ctx,
        notes,
        "wmic cpu",
        [
            "wmic",
            "cpu",
            "get",
            "Name,Manufacturer,NumberOfCores,NumberOfLogicalProcessors",
            "/format:list",
        ],
        SHORT_S,
        P.parse_wmic_cpu,
        describe=describe_cpu,
    )
    gpus = run_command(
        ctx,
        notes,
        "wmic path Win32_VideoController",
        [
            "wmic",
            "path",
            "Win32_VideoController",
            "get",
            "Name,AdapterCompatibility,AdapterRAM,DriverVersion,PNPDeviceID",
            "/format:list",
        ],
        SHORT_S,
        lambda t: P.video_controllers_from_records(P.parse_wmic_records(t)),
        describe=describe_gpus,
    )
    if cpu is None and gpus is None:
        return None
    return WindowsBundle(cpu, gpus or (), (), None)


def windows_tasks() -> list[tuple[str, Task]]:
    return [("cim", _windows_cim_task), ("nvidia", nvidia_task)]


def windows_found(
    boxes: dict[str, TaskBox], notes: list[ProbeNote], base_cpu: CpuInfo, ram_total: int | None
) -> Found:
    """Join the Windows probes' results: the CIM bundle and nvidia-smi."""
    bundle: WindowsBundle | None = box_value(boxes, "cim")
    cpu = merge_cpu(bundle.cpu if bundle else None, base_cpu)
    found = Found(
        cpu,
        ram_total,
        machine=bundle.machine if bundle else None,
        modules=bundle.modules if bundle else (),
        gpus=merge_gpus(
            list(box_value(boxes, "nvidia") or ()), list(bundle.gpus if bundle else ())
        ),
    )
    if cpu.vendor == "Intel":
        notes.append(
            ProbeNote(
                "Intel hybrid cores",
                "unavailable",
                "whether this CPU has P- and E-cores is not read on Windows",
            )
        )
    return found
