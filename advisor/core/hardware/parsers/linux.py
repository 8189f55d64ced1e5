"""Linux: lscpu, /proc/cpuinfo, dmidecode memory, lspci and the DRM sysfs tree."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from advisor.core.hardware.model import CpuInfo, GpuInfo, MemoryModule
from advisor.core.hardware.parsers.common import (
    canonical_cpu_features,
    collapse_spaces,
    cpu_vendor_name,
    is_missing,
    normalise_pci_bus_id,
    parse_size_bytes,
    pci_id_from_vendor_device,
    to_float,
    to_int,
)
from advisor.core.hardware.parsers.tables import (
    ARM_IMPLEMENTERS,
    ARM_PARTS,
    BMC_PCI_VENDORS,
    PCI_VENDORS,
    VIRTUAL_PCI_VENDORS,
)

# --------------------------------------------------------------------------- Linux CPU


def parse_lscpu(text: str) -> CpuInfo:
    """CpuInfo from `lscpu` (run with LC_ALL=C: lscpu translates its labels).

    Handles old util-linux (no 'Model name' or vendor on ARM, caches as '32K') and new builds
    (per-cluster sections on big.LITTLE ARM, each with its own 'Model name' and core count).
    'CPU MHz' is the current clock and is ignored; 'CPU max MHz' is what the kernel calls the
    maximum (on some AMD parts it is the base clock).
    """
    # Keys before the first 'Model name' are machine-wide; per-cluster keys after one belong
    # to that model's section (new lscpu prints one section per core type on big.LITTLE).
    per_section = {
        "Core(s) per socket",
        "Core(s) per cluster",
        "Socket(s)",
        "Cluster(s)",
        "Thread(s) per core",
        "CPU max MHz",
        "Flags",
    }
    top: dict[str, str] = {}
    sections: list[dict[str, str]] = []
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "Model name":
            sections.append({"Model name": value})
        elif sections and key in per_section:
            sections[-1].setdefault(key, value)
        else:
            top.setdefault(key, value)

    if not sections:
        sections = [{}]
    names = [s["Model name"] for s in sections if not is_missing(s.get("Model name", ""))]
    model = " + ".join(dict.fromkeys(names)) if names else None

    physical = 0
    sockets_seen: list[int] = []
    for section in sections:
        merged = {**top, **section}
        per_socket = to_int(merged.get("Core(s) per socket")) or to_int(
            merged.get("Core(s) per cluster")
        )
        sockets = to_int(merged.get("Socket(s)"))
        if sockets is None and merged.get("Socket(s)", "").strip() == "-":
            sockets = to_int(merged.get("Cluster(s)")) or 1
        if per_socket is None or sockets is None:
            physical = 0
            break
        physical += per_socket * sockets
        sockets_seen.append(sockets)

    max_mhz = [to_float({**top, **s}.get("CPU max MHz")) for s in sections]
    flags = " ".join({**top, **s}.get("Flags", "") for s in sections)
    arch = top.get("Architecture")
    return CpuInfo(
        model=model,
        vendor=cpu_vendor_name(top.get("Vendor ID")),
        architecture=normalise_architecture(arch),
        physical_cores=physical or None,
        logical_cores=to_int(top.get("CPU(s)")),
        sockets=max(sockets_seen) if sockets_seen else None,
        max_mhz=max((m for m in max_mhz if m), default=None),
        features=canonical_cpu_features(flags.split()),
    )


def normalise_architecture(arch: str | None) -> str | None:
    """'x86_64'/'AMD64' -> 'x86_64'; 'aarch64'/'arm64'/'ARM64' -> 'arm64'; others as given."""
    if not arch:
        return None
    low = arch.strip().lower()
    if low in ("x86_64", "amd64", "x64"):
        return "x86_64"
    if low in ("aarch64", "arm64"):
        return "arm64"
    return arch.strip()


def arm_cpu_name(implementer: int | None, part: int | None) -> tuple[str | None, str | None]:
    """(vendor, model) for an ARM core from /proc/cpuinfo's implementer and part ids."""
    if implementer is None:
        return None, None
    vendor = ARM_IMPLEMENTERS.get(implementer)
    part_name = ARM_PARTS.get((implementer, part)) if part is not None else None
    if vendor and part_name:
        return vendor, f"{vendor} {part_name}" if vendor != "ARM" else part_name
    part_text = f" part 0x{part:03x}" if part is not None else ""
    return vendor, f"{vendor or f'ARM implementer 0x{implementer:02x}'}{part_text}"


def parse_proc_cpuinfo(text: str) -> CpuInfo:
    """CpuInfo from /proc/cpuinfo (x86 and ARM).

    Logical cores are counted only when the 'processor' numbers run 0..N-1: a file that holds
    only a tail of the blocks (as one recording does) must not claim 6 CPUs on a 96-CPU box.
    ARM kernels print no product name: the core is named from implementer and part ids.
    """
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        if ":" in line:
            key, _, value = line.partition(":")
            current.setdefault(key.strip().lower(), value.strip())
    if current:
        blocks.append(current)
    processors = [b for b in blocks if "processor" in b and to_int(b["processor"]) is not None]
    ids = sorted(to_int(b["processor"]) or 0 for b in processors)
    logical = len(ids) if ids and ids == list(range(len(ids))) else None
    first = processors[0] if processors else (blocks[0] if blocks else {})

    model = collapse_spaces(first.get("model name"))
    vendor = cpu_vendor_name(first.get("vendor_id"))
    architecture = None
    physical = None
    sockets = None
    if "cpu implementer" in first:
        architecture = "arm64" if to_int(first.get("cpu architecture")) == 8 else None
        arm_vendor, arm_model = arm_cpu_name(
            to_int(first.get("cpu implementer")), to_int(first.get("cpu part"))
        )
        vendor = vendor or arm_vendor
        model = model or arm_model
    else:
        socket_ids = {b.get("physical id") for b in processors if "physical id" in b}
        cores_per_socket = to_int(first.get("cpu cores"))
        if logical is not None and socket_ids and cores_per_socket:
            sockets = len(socket_ids)
            physical = sockets * cores_per_socket
        if vendor in ("Intel", "AMD"):
            architecture = "x86_64" if "lm" in first.get("flags", "").split() else None
    flags = first.get("flags") or first.get("features") or ""
    return CpuInfo(
        model=model,
        vendor=vendor,
        architecture=architecture,
        physical_cores=physical,
        logical_cores=logical,
        sockets=sockets,
        features=canonical_cpu_features(flags.split()),
    )


def parse_cpu_list(text: str) -> list[int]:
    """CPU numbers from a kernel cpu list such as '0-15,32-47' (/sys/devices/cpu_core/cpus)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, _, hi = part.partition("-")
            if lo.isdigit() and hi.isdigit():
                cpus.extend(range(int(lo), int(hi) + 1))
        elif part.isdigit():
            cpus.append(int(part))
    return cpus


# --------------------------------------------------------------------------- Linux memory


def parse_dmidecode_memory(text: str) -> tuple[MemoryModule, ...]:
    """Populated memory devices (SMBIOS type 17) from `dmidecode` or `dmidecode -t memory`.

    Empty slots ('No Module Installed') are skipped. The speed is the configured (running)
    speed; 'Speed' is the module's rating, which EXPO/XMP or a slow controller can change.
    Old dmidecode wrote 'MHz' for what SMBIOS stores as MT/s, so both read as MT/s. Locators
    repeat ('DIMM 0' on every channel), so each module's locator is 'Bank Locator / Locator'.
    """
    modules: list[MemoryModule] = []
    for block in _dmi_blocks(text, dmi_type=17):
        size = parse_size_bytes(block.get("Size"))
        if not size:
            continue
        mem_type = block.get("Type")
        configured = to_int(
            block.get("Configured Memory Speed") or block.get("Configured Clock Speed")
        )
        rated = to_int(block.get("Speed"))
        bank = block.get("Bank Locator")
        locator = block.get("Locator")
        parts = [p.strip() for p in (bank, locator) if p and not is_missing(p)]
        modules.append(
            MemoryModule(
                size_bytes=size,
                type=None if is_missing(mem_type) or mem_type == "Other" else mem_type,
                speed_mts=configured or rated,
                rated_speed_mts=rated,
                locator=" / ".join(parts) or None,
                data_width_bits=to_int(block.get("Data Width")),
            )
        )
    return tuple(modules)


def _dmi_blocks(text: str, dmi_type: int) -> list[dict[str, str]]:
    blocks: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in text.splitlines():
        header = re.match(r"^Handle 0x[0-9A-Fa-f]+, DMI type (\d+)", line)
        if header:
            current = {} if int(header.group(1)) == dmi_type else None
            if current is not None:
                blocks.append(current)
            continue
        # Properties are indented by one tab; list items under a property by two.
        if current is not None and line.startswith("\t") and not line.startswith("\t\t"):
            key, sep, value = line.strip().partition(":")
            if sep:
                current.setdefault(key.strip(), value.strip())
    return blocks


def dmidecode_failure_reason(stdout: str, stderr: str) -> str | None:
    """Why dmidecode gave no memory table (usually: it needs root), or None if it did."""
    if "DMI type 17" in stdout:
        return None
    combined = f"{stdout}\n{stderr}"
    if "Permission denied" in combined or "Operation not permitted" in combined:
        return "dmidecode needs root to read the SMBIOS tables (/sys/firmware/dmi/tables)"
    if "No SMBIOS nor DMI entry point found" in combined:
        return "this machine exposes no SMBIOS tables (common in virtual machines)"
    return "dmidecode listed no memory devices"


@dataclass(frozen=True)
class PciDevice:
    """One device from `lspci -nn` (with -k or -v: its subsystem and kernel driver)."""

    slot: str  # '0000:03:00.0'
    class_code: str  # '0300'
    class_name: str
    vendor_id: str
    device_id: str
    description: str  # 'Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 ...]'
    subsystem: str | None = None
    driver: str | None = None

    @property
    def pci_id(self) -> str:
        """'1002:744c'."""
        return f"{self.vendor_id}:{self.device_id}"

    @property
    def is_display(self) -> bool:
        """True for VGA (0300), XGA (0301), 3D (0302) and other display (0380) controllers."""
        return self.class_code.startswith("03")


def parse_lspci(text: str) -> tuple[PciDevice, ...]:
    """Devices from `lspci -nn` / `-nnk` / `-vvnn` (slot with or without the domain).

    The pci.ids name can be ambiguous ('Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]');
    the Subsystem line names the actual board. BAR sizes ('[size=32G]') are apertures, not
    VRAM, and are ignored.
    """
    header = re.compile(
        r"^(?P<slot>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
        r"(?P<cname>.+?)\s+\[(?P<class>[0-9a-fA-F]{4})\]:\s+"
        r"(?P<desc>.*?)\s*\[(?P<ven>[0-9a-fA-F]{4}):(?P<dev>[0-9a-fA-F]{4})\]"
    )
    devices: list[dict[str, Any]] = []
    for line in text.splitlines():
        match = header.match(line)
        if match:
            devices.append(
                {
                    "slot": normalise_pci_bus_id(match.group("slot")) or match.group("slot"),
                    "class_code": match.group("class").lower(),
                    "class_name": match.group("cname"),
                    "vendor_id": match.group("ven").lower(),
                    "device_id": match.group("dev").lower(),
                    "description": match.group("desc").strip(),
                }
            )
            continue
        if not devices or not line[:1].isspace():
            continue
        key, _, value = line.strip().partition(":")
        if key == "Subsystem":
            devices[-1]["subsystem"] = re.sub(
                r"\s*\[[0-9a-fA-F]{4}:[0-9a-fA-F]{4}\]$", "", value.strip()
            )
        elif key == "Kernel driver in use":
            devices[-1]["driver"] = value.strip()
    return tuple(PciDevice(**d) for d in devices)


def gpu_from_pci(device: PciDevice, source: str = "lspci") -> GpuInfo:
    """A GpuInfo for a display-class PCI device (name from pci.ids, no VRAM)."""
    vendor = PCI_VENDORS.get(device.vendor_id)
    is_virtual = device.vendor_id in VIRTUAL_PCI_VENDORS
    desc = device.description
    for prefix in (
        "Advanced Micro Devices, Inc. [AMD/ATI] ",
        "NVIDIA Corporation ",
        "Intel Corporation ",
    ):
        desc = desc.removeprefix(prefix)
    name = f"{vendor} {desc}" if vendor and not desc.startswith(vendor) else desc
    notes = []
    if device.subsystem and not re.search(r"\bDevice\b", device.subsystem):
        notes.append(f"board: {device.subsystem}")
    if is_virtual:
        notes.append("emulated or paravirtual display adapter of a virtual machine, not a GPU")
    elif device.vendor_id in BMC_PCI_VENDORS:
        notes.append("server management (BMC) display chip, not a compute GPU")
    return GpuInfo(
        name=name or f"PCI display device [{device.pci_id}]",
        vendor="virtual" if is_virtual else vendor,
        driver=device.driver,
        pci_id=device.pci_id,
        is_virtual=is_virtual,
        source=source,
        pci_bus_id=device.slot,
        note="; ".join(notes) or None,
    )


def gpu_from_drm(
    slot: str | None,
    vendor_text: str | None,
    device_text: str | None,
    vram_total_text: str | None = None,
    vram_used_text: str | None = None,
    driver: str | None = None,
) -> GpuInfo:
    """A GpuInfo from /sys/class/drm/cardN/device files (vendor, device, amdgpu mem_info_*)."""
    vendor_id = f"{to_int(vendor_text) or 0:04x}" if vendor_text else None
    pci_id = pci_id_from_vendor_device(vendor_text, device_text)
    vendor = PCI_VENDORS.get(vendor_id or "")
    is_virtual = vendor_id in VIRTUAL_PCI_VENDORS
    total = to_int(vram_total_text)
    used = to_int(vram_used_text)
    unified = vendor == "Intel" and driver in ("i915", "xe") and total is None
    note = None
    if is_virtual:
        note = "emulated or paravirtual display adapter of a virtual machine, not a GPU"
    elif vendor_id in BMC_PCI_VENDORS:
        note = "server management (BMC) display chip, not a compute GPU"
    return GpuInfo(
        name=f"{vendor or VIRTUAL_PCI_VENDORS.get(vendor_id or '', 'unknown')} GPU [{pci_id}]",
        vendor="virtual" if is_virtual else vendor,
        vram_total_bytes=total or None,
        vram_free_bytes=total - used if total and used is not None else None,
        unified_memory=unified,
        driver=driver,
        pci_id=pci_id,
        is_virtual=is_virtual,
        source="/sys/class/drm",
        pci_bus_id=normalise_pci_bus_id(slot),
        note=note,
    )
