"""macOS: sysctl and system_profiler (hardware, displays, memory)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.core.hardware.model import CpuInfo, GpuInfo, MemoryModule
from advisor.core.hardware.parsers.common import (
    canonical_cpu_features,
    collapse_spaces,
    cpu_vendor_from_brand,
    cpu_vendor_name,
    gpu_vendor_from_text,
    is_missing,
    load_json,
    parse_size_bytes,
    pci_id_from_vendor_device,
    strip_virtual_suffix,
    to_float,
    to_int,
)
from advisor.core.hardware.parsers.tables import MiB

# --------------------------------------------------------------------------- macOS


def parse_sysctl(text: str, names: Sequence[str] | None = None) -> dict[str, str]:
    """sysctl output as {name: value}.

    Accepts the 'name: value' form, the old 'name = value' form, and the `sysctl -n` form
    (values only, one per line) when `names` gives the names asked for, in order.
    """
    values: dict[str, str] = {}
    lines = [line for line in text.splitlines() if line.strip()]
    named = [re.match(r"^([A-Za-z0-9_.]+)\s*(?::|=)\s?(.*)$", line) for line in lines]
    if names is not None and not all(named):
        for name, line in zip(names, lines, strict=False):
            values[name] = line.strip()
        return values
    for match in named:
        if match:
            values[match.group(1)] = match.group(2).strip()
    return values


def cpu_info_from_sysctl(values: Mapping[str, str]) -> CpuInfo:
    """CpuInfo from parsed sysctl values (hw.*, machdep.cpu.*, hw.optional.*).

    Performance levels are reported as the OS names them (hw.perflevelN.name): an M5 Max has
    'Super' x6 and 'Performance' x12 and no level called 'Efficiency', so efficiency_cores is
    0 there; a VM or Intel Mac has one 'Standard' level and no P/E split at all.
    """
    brand, _ = strip_virtual_suffix(collapse_spaces(values.get("machdep.cpu.brand_string")))
    levels = to_int(values.get("hw.nperflevels")) or 0
    core_types: list[tuple[str, int]] = []
    for i in range(levels):
        name = values.get(f"hw.perflevel{i}.name") or f"level {i}"
        count = to_int(values.get(f"hw.perflevel{i}.physicalcpu"))
        if count is not None:
            core_types.append((name, count))
    performance = efficiency = None
    if len(core_types) >= 2:
        efficiency = sum(c for n, c in core_types if n.lower() == "efficiency")
        performance = sum(c for n, c in core_types if n.lower() != "efficiency")
    physical = to_int(values.get("hw.physicalcpu")) or to_int(values.get("machdep.cpu.core_count"))
    if physical is None and core_types:
        physical = sum(c for _, c in core_types)
    logical = to_int(values.get("hw.logicalcpu")) or to_int(values.get("machdep.cpu.thread_count"))
    if logical is None:
        logical_levels = [to_int(values.get(f"hw.perflevel{i}.logicalcpu")) for i in range(levels)]
        if levels and all(x is not None for x in logical_levels):
            logical = sum(x or 0 for x in logical_levels)
    hz = to_float(values.get("hw.cpufrequency_max")) or to_float(values.get("hw.cpufrequency"))

    words: list[str] = []
    for key in ("machdep.cpu.features", "machdep.cpu.leaf7_features", "machdep.cpu.extfeatures"):
        words.extend(values.get(key, "").split())
    for key, value in values.items():
        if key.startswith("hw.optional.") and value.strip() == "1":
            leaf = key.rsplit(".", 1)[-1]
            words.append("FP16" if leaf == "neon_fp16" else leaf)

    vendor = cpu_vendor_name(values.get("machdep.cpu.vendor")) or cpu_vendor_from_brand(brand)
    if values.get("hw.optional.arm64") == "1" or vendor == "Apple":
        architecture = "arm64"
    elif vendor == "Intel" or "hw.optional.x86_64" in values:
        architecture = "x86_64"
    else:
        architecture = None
    return CpuInfo(
        model=brand,
        vendor=vendor,
        architecture=architecture,
        physical_cores=physical,
        logical_cores=logical,
        performance_cores=performance,
        efficiency_cores=efficiency,
        sockets=to_int(values.get("hw.packages")),
        max_mhz=hz / 1e6 if hz else None,
        features=canonical_cpu_features(words),
        core_types=tuple(core_types),
    )


@dataclass(frozen=True)
class SpHardware:
    """What `system_profiler SPHardwareDataType -json` says, with its shape changes smoothed."""

    chip: str | None  # 'Apple M5 Max' (the ' (Virtual)' suffix removed), None on Intel
    chip_is_virtual: bool
    cpu_type: str | None  # Intel Macs: '8-Core Intel Xeon W'; 'Unknown' reads as None
    machine_model: str | None  # 'Mac17,6', 'VirtualMac2,1'
    machine_name: str | None
    memory_bytes: int | None
    total_cores: int | None
    core_groups: tuple[int, ...]  # 'proc 8:4:4' -> (4, 4); 'proc 18:6:0:12' -> (6, 0, 12)
    processor_ghz: float | None
    packages: int | None


def _sp_items(json_text: str, data_type: str) -> list[dict[str, Any]]:
    data = load_json(json_text)
    items = data.get(data_type) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError(f"no {data_type} list in the output")
    return [i for i in items if isinstance(i, dict)]


def parse_sp_hardware(json_text: str) -> SpHardware:
    """Parse `system_profiler SPHardwareDataType -json`.

    number_processors comes in three shapes: 'proc 8:4:4' (total, P, E), 'proc 18:6:0:12'
    on an M5 (total then three tiers), and a bare integer on Intel Macs, in VMs and under
    Rosetta (where chip_type disappears and the clock uses a locale comma, '2,4 GHz').
    """
    items = _sp_items(json_text, "SPHardwareDataType")
    item = items[0] if items else {}
    chip, chip_virtual = strip_virtual_suffix(item.get("chip_type"))
    cpu_type = item.get("cpu_type")
    if is_missing(cpu_type):
        cpu_type = None
    procs = item.get("number_processors")
    total: int | None
    groups: tuple[int, ...] = ()
    if isinstance(procs, str) and procs.strip().startswith("proc"):
        numbers = [int(n) for n in re.findall(r"\d+", procs)]
        total = numbers[0] if numbers else None
        groups = tuple(numbers[1:])
    else:
        total = to_int(procs)
    return SpHardware(
        chip=chip,
        chip_is_virtual=chip_virtual,
        cpu_type=cpu_type,
        machine_model=item.get("machine_model"),
        machine_name=item.get("machine_name"),
        memory_bytes=parse_size_bytes(item.get("physical_memory")),
        total_cores=total,
        core_groups=groups,
        processor_ghz=to_float(item.get("current_processor_speed")),
        packages=to_int(item.get("packages")),
    )


def cpu_info_from_sp_hardware(hw: SpHardware) -> CpuInfo:
    """CpuInfo from SPHardware: model from chip_type (Apple) or cpu_type (Intel Macs)."""
    performance = efficiency = None
    if len(hw.core_groups) == 2:  # 'proc 8:4:4': performance, efficiency
        performance, efficiency = hw.core_groups
    elif len(hw.core_groups) == 3:
        # 'proc 18:6:0:12' on the M5 Max, whose perf levels are 'Super' x6 and
        # 'Performance' x12: the zero is the tier it lacks. Only the middle position can be
        # efficiency cores here, so that is how it is read; sysctl names the tiers exactly.
        efficiency = hw.core_groups[1]
        performance = hw.core_groups[0] + hw.core_groups[2]
    model = hw.chip or hw.cpu_type
    vendor = "Apple" if hw.chip else cpu_vendor_from_brand(hw.cpu_type)
    return CpuInfo(
        model=model,
        vendor=vendor,
        architecture="arm64" if hw.chip else ("x86_64" if vendor == "Intel" else None),
        physical_cores=hw.total_cores,
        performance_cores=performance,
        efficiency_cores=efficiency,
        sockets=hw.packages,
        max_mhz=None,  # current_processor_speed is a nominal clock, not a maximum
    )


def _apple_chip_from_localisation_key(key: str) -> str | None:
    match = re.match(r"^kHW_Apple(M\d+)(Pro|Max|Ultra)?Item$", key)
    if not match:
        return None
    return " ".join(p for p in ("Apple", match.group(1), match.group(2)) if p)


def parse_sp_displays(json_text: str) -> tuple[GpuInfo, ...]:
    """GPUs from `system_profiler SPDisplaysDataType -json`.

    Each top-level item is a GPU; the displays under 'spdisplays_ndrvs' are monitors and are
    not counted. The name is 'sppci_model' (older macOS puts a localisation key such as
    'kHW_AppleM1Item' in '_name'). 'sppci_cores' is a string. Apple GPUs share unified memory,
    so their VRAM is left None here (detection estimates the GPU's share of RAM). A VM's
    'Apple Paravirtualized Graphics Device' is a virtual adapter, not an Apple chip.
    """
    gpus: list[GpuInfo] = []
    for item in _sp_items(json_text, "SPDisplaysDataType"):
        raw_name = item.get("_name") or ""
        name = item.get("sppci_model")
        if not name:
            name = _apple_chip_from_localisation_key(raw_name) or raw_name or "unknown GPU"
        vendor_raw = str(item.get("spdisplays_vendor") or "")
        vendor = gpu_vendor_from_text(vendor_raw.replace("sppci_vendor_", "")) or (
            gpu_vendor_from_text(name)
        )
        is_virtual = "paravirtual" in name.lower() or "virtual" in raw_name.lower()
        cores = to_int(item.get("sppci_cores"))
        vram = parse_size_bytes(item.get("spdisplays_vram") or item.get("_spdisplays_vram"))
        shared = parse_size_bytes(item.get("spdisplays_vram_shared"))
        apple_chip = vendor == "Apple" and not is_virtual and name.startswith("Apple")
        unified = apple_chip or (vram is None and shared is not None)
        note = None
        if is_virtual:
            vendor = "virtual"
            note = "paravirtual display adapter of a virtual machine, not a real GPU"
        elif unified and not apple_chip:
            note = f"shares system memory ({shared / MiB:.0f} MiB set aside)" if shared else None
        pci = pci_id_from_vendor_device(
            item.get("spdisplays_vendor-id"), item.get("spdisplays_device-id")
        )
        gpus.append(
            GpuInfo(
                name=name,
                vendor=vendor,
                vram_total_bytes=None if unified else vram,
                unified_memory=unified,
                gpu_cores=cores,
                pci_id=pci,
                is_virtual=is_virtual,
                source="system_profiler SPDisplaysDataType",
                note=note,
            )
        )
    return tuple(gpus)


@dataclass(frozen=True)
class SpMemory:
    """What `system_profiler SPMemoryDataType -json` says."""

    type: str | None
    total_bytes: int | None
    modules: tuple[MemoryModule, ...]
    upgradeable: bool | None


def parse_sp_memory(json_text: str) -> SpMemory:
    """Parse `system_profiler SPMemoryDataType -json` (minimal: no recorded sample exists).

    Apple Silicon prints one item with 'dimm_type' ('LPDDR5') and the size under the key
    'SPMemoryDataType'; Intel Macs print slots under '_items' with 'dimm_size', 'dimm_speed'
    ('2667 MHz', which is the MT/s rate) and 'dimm_type'; empty slots say 'empty'.
    """
    modules: list[MemoryModule] = []
    mem_type = None
    total = None
    upgradeable = None
    for item in _sp_items(json_text, "SPMemoryDataType"):
        if "is_memory_upgradeable" in item:
            upgradeable = str(item["is_memory_upgradeable"]).lower() in ("yes", "true")
        if item.get("dimm_type") and not is_missing(item.get("dimm_type")):
            mem_type = item["dimm_type"]
        if "SPMemoryDataType" in item:
            total = parse_size_bytes(item["SPMemoryDataType"])
        for slot in item.get("_items") or []:
            size = parse_size_bytes(slot.get("dimm_size"))
            if not size:
                continue
            slot_type = slot.get("dimm_type")
            modules.append(
                MemoryModule(
                    size_bytes=size,
                    type=None if is_missing(slot_type) else slot_type,
                    speed_mts=to_int(slot.get("dimm_speed")),
                    locator=slot.get("_name"),
                )
            )
    if modules:
        total = total or sum(m.size_bytes or 0 for m in modules)
        types = {m.type for m in modules if m.type}
        mem_type = mem_type or (types.pop() if len(types) == 1 else None)
    return SpMemory(mem_type, total, tuple(modules), upgradeable)
