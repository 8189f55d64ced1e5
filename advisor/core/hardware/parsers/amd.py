"""AMD: rocm-smi JSON."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from advisor.core.hardware.model import GpuInfo
from advisor.core.hardware.parsers.common import (
    first_present,
    load_json,
    normalise_pci_bus_id,
    pci_id_from_vendor_device,
    to_int,
)

# --------------------------------------------------------------------------- Linux GPUs


def parse_rocm_smi_json(text: str) -> tuple[GpuInfo, ...]:
    """AMD GPUs from `rocm-smi --showproductname --showmeminfo vram [--showbus] --json`.

    Keys changed case across ROCm versions ('Card series' -> 'Card Series'); ROCm 4.3 printed
    the vendor id '0x1002' instead of names; the top-level 'system' key is not a card. VRAM is
    'VRAM Total Memory (B)' (VIS_VRAM is the BAR window). An MI250 module shows as two cards,
    one per GCD, and llama.cpp sees two devices too: each is reported, with a note.
    """
    data = load_json(text)
    if not isinstance(data, dict):
        raise ValueError("rocm-smi JSON is not an object")
    cards = sorted(
        ((k, v) for k, v in data.items() if re.fullmatch(r"card\d+", k) and isinstance(v, dict)),
        key=lambda kv: int(kv[0][4:]),
    )
    gpus: list[GpuInfo] = []
    for _, card in cards:
        series = first_present(card, "Card Series", "Card series")
        device_name = first_present(card, "Device Name")
        # The device id is 'GPU ID' / 'Device ID'; 'Card Model' (capital M, ROCm 6) is the
        # device id as well, but old 'Card model' was the subsystem id (0x0c34 on an MI100).
        device_id = first_present(card, "GPU ID", "Device ID") or card.get("Card Model")
        pci_id = pci_id_from_vendor_device(0x1002, device_id)

        def _is_name(value: Any) -> bool:
            return bool(value) and not re.fullmatch(r"0x[0-9a-fA-F]+", str(value).strip())

        if _is_name(series):
            name = str(series)
        elif _is_name(device_name):
            name = str(device_name)
        else:
            name = f"AMD GPU [{pci_id}]" if pci_id else "AMD GPU"
        total = to_int(first_present(card, "VRAM Total Memory (B)"))
        used = to_int(first_present(card, "VRAM Total Used Memory (B)"))
        notes = []
        power = str(card.get("Average Graphics Package Power (W)") or "")
        if "(MCM)" in name or "secondary die" in power.lower():
            notes.append(
                "one die (GCD) of a multi-die package: ROCm and llama.cpp see each die as a "
                "separate device with its own memory"
            )
        gpus.append(
            GpuInfo(
                name=name,
                vendor="AMD",
                vram_total_bytes=total,
                vram_free_bytes=total - used if total is not None and used is not None else None,
                pci_id=pci_id,
                source="rocm-smi",
                pci_bus_id=normalise_pci_bus_id(first_present(card, "PCI Bus")),
                note="; ".join(notes) or None,
            )
        )
    driver = (
        data.get("system", {}).get("Driver version")
        if isinstance(data.get("system"), dict)
        else None
    )
    if driver:
        gpus = [replace(g, driver=str(driver)) for g in gpus]
    return tuple(gpus)
