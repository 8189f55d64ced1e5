"""NVIDIA: nvidia-smi XML, CSV and -L listings, and the bandwidth its clocks imply."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from typing import Any

from advisor.core.hardware.model import GpuInfo
from advisor.core.hardware.parsers.common import (
    is_missing,
    normalise_pci_bus_id,
    pci_id_from_nvidia,
    to_float,
)
from advisor.core.hardware.parsers.tables import MiB

# --------------------------------------------------------------------------- NVIDIA


def nvidia_theoretical_bandwidth(
    bus_width_bits: int | None, mem_clock_mhz: float | None
) -> float | None:
    """Peak VRAM bandwidth in bytes/s = bus_width/8 x clock_MHz x 1e6 x 2.

    The factor 2 is exact for the memory clock NVML and nvidia-smi report, for every memory
    type: they report half the per-pin data rate (HBM2/HBM3, GDDR5/5X, GDDR6, and GDDR6X/GDDR7
    too, whose PAM signalling is already folded into the reported clock). Checked against
    datasheets: RTX 4090 384-bit x 10501 MHz -> 1008 GB/s; RTX 2080 SUPER 256 x 7751 ->
    496 GB/s; A100 40GB 5120 x 1215 -> 1555 GB/s; H100 SXM 5120 x 2619 -> 3352 GB/s.
    """
    if not bus_width_bits or not mem_clock_mhz:
        return None
    return bus_width_bits / 8 * mem_clock_mhz * 1e6 * 2


def _mib_to_bytes(value: Any) -> int | None:
    number = to_float(value)
    return round(number * MiB) if number is not None else None


def parse_nvidia_smi_xml(text: str) -> tuple[GpuInfo, ...]:
    """GPUs from `nvidia-smi -q -x`.

    One GpuInfo per <gpu> element (attached_gpus can disagree with a trimmed file). VRAM is the
    GPU's own gpu/fb_memory_usage: the first <total> in a block can be a MIG slice or BAR1.
    An old driver names a card 'Graphics Device': the PCI id still identifies it.
    """
    start = text.find("<")
    root = ET.fromstring(text[start:] if start > 0 else text)
    driver = root.findtext("driver_version")
    gpus: list[GpuInfo] = []
    for gpu in root.findall("gpu"):
        name = (gpu.findtext("product_name") or "").strip() or "NVIDIA GPU"
        notes: list[str] = []
        if name == "Graphics Device":
            notes.append("the driver does not know this card's name; identify it by PCI id")
        mig_devices = gpu.findall("mig_devices/mig_device")
        if (gpu.findtext("mig_mode/current_mig") or "").strip() == "Enabled":
            sizes = [(m.findtext("fb_memory_usage/total") or "?").strip() for m in mig_devices]
            notes.append(f"MIG enabled: {len(mig_devices)} slices of one GPU ({', '.join(sizes)})")
        virt = (gpu.findtext("gpu_virtualization_mode/virtualization_mode") or "").strip()
        is_virtual = virt.upper() == "VGPU"
        if virt == "Pass-Through":
            notes.append("passed through to a virtual machine")
        clock = to_float(gpu.findtext("max_clocks/mem_clock"))
        gpus.append(
            GpuInfo(
                name=name,
                vendor="NVIDIA",
                vram_total_bytes=_mib_to_bytes(gpu.findtext("fb_memory_usage/total")),
                vram_free_bytes=_mib_to_bytes(gpu.findtext("fb_memory_usage/free")),
                driver=driver.strip() if driver else None,
                pci_id=pci_id_from_nvidia(gpu.findtext("pci/pci_device_id")),
                memory_clock_mhz=clock,
                is_virtual=is_virtual,
                source="nvidia-smi -q -x",
                pci_bus_id=normalise_pci_bus_id(gpu.get("id") or gpu.findtext("pci/pci_bus_id")),
                # the negotiated maximum (the current link idles at generation 1)
                pcie_gen=_whole(gpu.findtext("pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
                pcie_lanes=_whole(gpu.findtext("pci/pci_gpu_link_info/link_widths/max_link_width")),
                note="; ".join(notes) or None,
            )
        )
    return tuple(gpus)


def _whole(text: str | None) -> int | None:
    """'16x', '4', ' 3 ' -> an int; anything else (N/A, empty) -> None."""
    found = re.match(r"\s*(\d+)\s*x?\s*$", text or "")
    return int(found.group(1)) if found else None


def parse_nvidia_smi_csv(text: str) -> tuple[GpuInfo, ...]:
    """GPUs from `nvidia-smi --query-gpu=... --format=csv[,nounits]`.

    Columns are found by header name (their number changes with the driver: 202-241 fields);
    units live in the headers ('memory.total [MiB]') and, without 'nounits', in the values
    ('81559 MiB'); '[N/A]' and '[Requested functionality has been deprecated]' mean unknown.
    Without a memory.total column the total is reserved + used + free.
    """
    rows = list(csv.reader(io.StringIO(text.strip()), skipinitialspace=True))
    if len(rows) < 2:
        return ()
    header = [re.sub(r"\s*\[[^\]]*\]\s*$", "", h.strip()) for h in rows[0]]
    gpus: list[GpuInfo] = []
    for row in rows[1:]:
        if not any(cell.strip() for cell in row):
            continue
        cells = {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header)}

        def cell(key: str, cells: dict[str, str] = cells) -> str | None:
            value = cells.get(key)
            return None if is_missing(value) else value

        total = _mib_to_bytes(cell("memory.total"))
        if total is None:
            parts = [
                _mib_to_bytes(cell(k)) for k in ("memory.reserved", "memory.used", "memory.free")
            ]
            if all(p is not None for p in parts):
                total = sum(p or 0 for p in parts)
        notes = []
        if (cell("mig.mode.current") or "") == "Enabled":
            notes.append("MIG enabled: the GPU is split into slices")
        gpus.append(
            GpuInfo(
                name=cell("name") or "NVIDIA GPU",
                vendor="NVIDIA",
                vram_total_bytes=total,
                vram_free_bytes=_mib_to_bytes(cell("memory.free")),
                driver=cell("driver_version"),
                pci_id=pci_id_from_nvidia(cell("pci.device_id")),
                memory_clock_mhz=to_float(cell("clocks.max.memory")),
                source="nvidia-smi --query-gpu",
                pci_bus_id=normalise_pci_bus_id(cell("pci.bus_id")),
                pcie_gen=_whole(cell("pcie.link.gen.max")),
                pcie_lanes=_whole(cell("pcie.link.width.max")),
                note="; ".join(notes) or None,
            )
        )
    return tuple(gpus)


def parse_nvidia_smi_list(text: str) -> tuple[GpuInfo, ...]:
    """GPUs from `nvidia-smi -L`: 'GPU N: NAME (UUID: ...)' lines; MIG lines are slices."""
    gpus: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        gpu = re.match(r"^GPU\s+\d+:\s+(.+?)\s+\(UUID:", line)
        if gpu:
            gpus.append((gpu.group(1).strip(), []))
            continue
        mig = re.match(r"^\s+MIG\s+(\S+)\s+Device\s+\d+:", line)
        if mig and gpus:
            gpus[-1][1].append(mig.group(1))
    return tuple(
        GpuInfo(
            name=name,
            vendor="NVIDIA",
            source="nvidia-smi -L",
            note=f"MIG enabled: {len(migs)} slices of one GPU ({', '.join(migs)})"
            if migs
            else None,
        )
        for name, migs in gpus
    )
