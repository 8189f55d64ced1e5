"""Windows: CIM/WMI records (processor, video controllers, physical memory) and the
registry's 64-bit VRAM sizes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from advisor.core.hardware.model import CpuInfo, GpuInfo, MemoryModule
from advisor.core.hardware.parsers.common import (
    collapse_spaces,
    cpu_vendor_name,
    first_present,
    gpu_vendor_from_text,
    load_json,
    to_int,
)
from advisor.core.hardware.parsers.tables import (
    ADAPTER_RAM_SATURATED,
    PCI_VENDORS,
    SMBIOS_MEMORY_TYPES,
    VIRTUAL_PCI_VENDORS,
)

# --------------------------------------------------------------------------- Windows


def parse_cim_records(text: str) -> list[dict[str, Any]]:
    """CIM/WMI instances from PowerShell `Format-List` text or `ConvertTo-Json` output.

    Format-List wraps long values onto indented continuation lines (which may begin with ':'
    when a path 'C:\\...' breaks after the drive letter); those are joined back on. Instances
    are separated by blank lines. JSON may be one object or a list.
    """
    stripped = text.strip().lstrip("\ufeff")
    if stripped.startswith(("{", "[")):
        data = load_json(stripped)
        items = data if isinstance(data, list) else [data]
        return [i for i in items if isinstance(i, dict)]
    records: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    last_key: str | None = None
    value_column = 0
    for raw in text.replace("\ufeff", "").splitlines():
        line = raw.rstrip("\r")
        if not line.strip():
            if current:
                records.append(current)
            current, last_key = {}, None
            continue
        if line[:1].isspace():
            if last_key is not None:
                indent_ok = line[:value_column].strip() == ""
                piece = line[value_column:] if indent_ok else line.strip()
                current[last_key] = f"{current[last_key]}{piece.rstrip()}"
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        last_key = key.strip()
        value_column = len(key) + 2
        current[last_key] = value[1:].rstrip() if value.startswith(" ") else value.rstrip()
    if current:
        records.append(current)
    return records


def parse_wmic_records(text: str) -> list[dict[str, str]]:
    """Instances from `wmic ... /format:list` ('Key=Value' lines, blank-line separated)."""
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for raw in text.replace("\r", "").splitlines():
        if not raw.strip():
            if current:
                records.append(current)
                current = {}
            continue
        key, sep, value = raw.partition("=")
        if sep:
            current[key.strip()] = value.strip()
    if current:
        records.append(current)
    return records


_WIN_ARCHITECTURES = {0: "x86", 5: "arm", 9: "x86_64", 12: "arm64"}


def cpu_from_win_records(records: Sequence[Mapping[str, Any]]) -> CpuInfo:
    if not records:
        return CpuInfo(model=None)
    first = records[0]
    cores = [to_int(first_present(r, "NumberOfCores")) for r in records]
    threads = [
        to_int(first_present(r, "NumberOfLogicalProcessors", "ThreadCount")) for r in records
    ]
    arch = to_int(first_present(first, "Architecture"))
    return CpuInfo(
        model=collapse_spaces(first_present(first, "Name")),
        vendor=cpu_vendor_name(first_present(first, "Manufacturer")),
        architecture=_WIN_ARCHITECTURES.get(arch) if arch is not None else None,
        physical_cores=sum(c for c in cores if c) if all(cores) else None,
        logical_cores=sum(t for t in threads if t) if all(threads) else None,
        sockets=len(records),
        # MaxClockSpeed is the base clock (2304 MHz on an i7-11800H that boosts to 4.6 GHz),
        # so it is not reported as a maximum.
        max_mhz=None,
    )


def parse_cim_processor(text: str) -> CpuInfo:
    """CpuInfo from Win32_Processor (Format-List or ConvertTo-Json); sockets summed."""
    return cpu_from_win_records(parse_cim_records(text))


def parse_wmic_cpu(text: str) -> CpuInfo:
    """CpuInfo from `wmic cpu get ... /format:list` (brand strings with runs of spaces)."""
    return cpu_from_win_records(parse_wmic_records(text))


def _pci_from_pnp(pnp: str | None) -> tuple[str | None, bool]:
    """('10de:25a0', True) from 'PCI\\VEN_10DE&DEV_25A0&...'; (None, False) for non-PCI."""
    if not pnp:
        return None, False
    match = re.search(r"VEN_([0-9A-Fa-f]{4})&DEV_([0-9A-Fa-f]{4})", pnp)
    if not match:
        return None, False
    return f"{match.group(1).lower()}:{match.group(2).lower()}", pnp.upper().startswith("PCI\\")


def _is_intel_integrated(name: str) -> bool:
    # Discrete Arc cards carry a model number (A770, B580); 'Intel(R) Arc(TM) Graphics' without
    # one is the Meteor Lake iGPU, and UHD/Iris/HD Graphics are always integrated.
    return not re.search(r"\bArc\b.*\b[AB]\d{3}", name)


def parse_cim_video_controller(text: str) -> tuple[GpuInfo, ...]:
    """GPUs from Win32_VideoController (Format-List or ConvertTo-Json).

    AdapterRAM is a uint32: 4293918720 (or anything at the cap) means 'at least 4 GiB' and is
    reported as unknown with that note; the registry's qwMemorySize has the real figure
    (see apply_windows_registry_vram). Intel iGPUs report a nominal 1 GiB that is shared system
    memory, not VRAM. Adapters not on PCI (Basic Display, Hyper-V, remote display) are
    virtual.
    """
    return video_controllers_from_records(parse_cim_records(text))


def video_controllers_from_records(records: Sequence[Mapping[str, Any]]) -> tuple[GpuInfo, ...]:
    """GPUs from already-parsed Win32_VideoController records (see parse_cim_video_controller)."""
    gpus: list[GpuInfo] = []
    for record in records:
        name = (
            collapse_spaces(first_present(record, "Name", "Caption", "Description"))
            or "unknown GPU"
        )
        pnp = first_present(record, "PNPDeviceID")
        pci_id, on_pci = _pci_from_pnp(pnp)
        vendor_id = pci_id.split(":")[0] if pci_id else None
        vendor = (
            PCI_VENDORS.get(vendor_id or "")
            or gpu_vendor_from_text(first_present(record, "AdapterCompatibility"))
            or gpu_vendor_from_text(name)
        )
        is_virtual = (bool(pnp) and not on_pci) or (vendor_id in VIRTUAL_PCI_VENDORS)
        adapter_ram = to_int(first_present(record, "AdapterRAM"))
        notes: list[str] = []
        vram = adapter_ram
        unified = False
        if is_virtual:
            vendor = "virtual" if vendor is None or vendor_id in VIRTUAL_PCI_VENDORS else vendor
            notes.append("virtual or software display adapter, not a GPU")
        if vendor == "Intel" and not is_virtual and _is_intel_integrated(name):
            unified = True
            vram = None
            notes.append("integrated GPU: shares system memory (AdapterRAM is a nominal figure)")
        elif adapter_ram is not None and adapter_ram >= ADAPTER_RAM_SATURATED:
            vram = None
            notes.append(
                "AdapterRAM is capped at 4 GiB (uint32): VRAM is at least 4 GiB, exact size unknown"
            )
        gpus.append(
            GpuInfo(
                name=name,
                vendor=vendor,
                vram_total_bytes=vram if vram else None,
                unified_memory=unified,
                driver=first_present(record, "DriverVersion"),
                pci_id=pci_id,
                is_virtual=is_virtual,
                source="Win32_VideoController",
                note="; ".join(notes) or None,
            )
        )
    return tuple(gpus)


@dataclass(frozen=True)
class RegistryAdapter:
    """One display-class registry key (…\\Class\\{4d36e968-…}\\000N) and its VRAM size."""

    key: str | None
    description: str | None  # DriverDesc, the adapter's name
    matching_device_id: str | None  # 'pci\\ven_10de&dev_2684'
    memory_bytes: int | None


def _registry_size(value: Any) -> int | None:
    # qwMemorySize is a REG_QWORD; the older HardwareInformation.MemorySize is a REG_DWORD or a
    # REG_BINARY of 4 little-endian bytes, which PowerShell's JSON writes as a list of ints.
    if isinstance(value, list) and value and all(isinstance(b, int) for b in value):
        return int.from_bytes(bytes(b & 0xFF for b in value), "little")
    if isinstance(value, bytes | bytearray):
        return int.from_bytes(value, "little")
    return to_int(value)


def parse_windows_registry_qwmemorysize(
    data: str | Sequence[Mapping[str, Any]],
) -> tuple[RegistryAdapter, ...]:
    """VRAM sizes from the display-class registry keys (readable without admin).

    Accepts PowerShell JSON text or already-parsed records with keys DriverDesc,
    MatchingDeviceId and 'HardwareInformation.qwMemorySize' (or the short names qwMemorySize
    / MemorySize used by detection's PowerShell script).
    """
    records = parse_cim_records(data) if isinstance(data, str) else list(data)
    adapters: list[RegistryAdapter] = []
    for record in records:
        size = _registry_size(
            first_present(record, "HardwareInformation.qwMemorySize", "qwMemorySize")
        )
        if not size:
            size = _registry_size(
                first_present(record, "HardwareInformation.MemorySize", "MemorySize")
            )
        adapters.append(
            RegistryAdapter(
                key=first_present(record, "Key", "PSChildName"),
                description=collapse_spaces(first_present(record, "DriverDesc")),
                matching_device_id=(first_present(record, "MatchingDeviceId") or None),
                memory_bytes=size or None,
            )
        )
    return tuple(adapters)


def apply_windows_registry_vram(
    gpus: Sequence[GpuInfo], adapters: Sequence[RegistryAdapter]
) -> tuple[GpuInfo, ...]:
    """Replace capped or missing AdapterRAM with the registry's qwMemorySize, where it matches.

    A registry key matches an adapter by its PCI vendor/device in MatchingDeviceId, else by
    DriverDesc equal to the adapter name. Integrated GPUs keep VRAM unknown (shared memory).
    """
    used: set[int] = set()
    result: list[GpuInfo] = []
    for gpu in gpus:
        match_index = None
        for i, adapter in enumerate(adapters):
            if i in used or not adapter.memory_bytes:
                continue
            mdi = (adapter.matching_device_id or "").lower()
            by_pci = gpu.pci_id and (f"ven_{gpu.pci_id[:4]}&dev_{gpu.pci_id[5:]}" in mdi)
            by_name = adapter.description and adapter.description == gpu.name
            if by_pci or by_name:
                match_index = i
                break
        if match_index is None or gpu.unified_memory or gpu.is_virtual:
            result.append(gpu)
            continue
        used.add(match_index)
        size = adapters[match_index].memory_bytes
        note = gpu.note
        if note and "AdapterRAM is capped" in note:
            note = "; ".join(p for p in note.split("; ") if "AdapterRAM is capped" not in p)
        result.append(
            replace(
                gpu,
                vram_total_bytes=size,
                source=f"{gpu.source} + registry qwMemorySize",
                note=note or None,
            )
        )
    return tuple(result)


def memory_modules_from_cim(records: Sequence[Mapping[str, Any]]) -> tuple[MemoryModule, ...]:
    """MemoryModules from Win32_PhysicalMemory records (no recorded sample exists).

    SMBIOSMemoryType gives the type (26 DDR4, 34 DDR5, 35 LPDDR5); MemoryType is usually 0.
    ConfiguredClockSpeed is, despite its name, the running MT/s; Speed is the rated MT/s.
    """
    modules: list[MemoryModule] = []
    for record in records:
        size = to_int(first_present(record, "Capacity"))
        if not size:
            continue
        code = to_int(first_present(record, "SMBIOSMemoryType"))
        parts = [
            str(p).strip()
            for p in (first_present(record, "BankLabel"), first_present(record, "DeviceLocator"))
            if p
        ]
        rated = to_int(first_present(record, "Speed"))
        modules.append(
            MemoryModule(
                size_bytes=size,
                type=SMBIOS_MEMORY_TYPES.get(code) if code else None,
                speed_mts=to_int(first_present(record, "ConfiguredClockSpeed")) or rated,
                rated_speed_mts=rated,
                locator=" / ".join(parts) or None,
                data_width_bits=to_int(first_present(record, "DataWidth")),
            )
        )
    return tuple(modules)


def parse_cim_physical_memory(text: str) -> tuple[MemoryModule, ...]:
    """MemoryModules from Win32_PhysicalMemory (Format-List or ConvertTo-Json)."""
    return memory_modules_from_cim(parse_cim_records(text))
