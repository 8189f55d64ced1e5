"""Parsers for hardware-probe outputs: text in, dataclasses out, no I/O.

Every parser here is tested against recorded real outputs (tests/core/hardware/fixtures), and
each one knows the traps those recordings show: MIG slices and BAR1 totals in nvidia-smi XML,
'[N/A]' cells and units inside CSV values, the 4 GiB cap of Win32_VideoController.AdapterRAM,
Format-List continuation lines, localisation keys in system_profiler, rocm-smi's key case
changes, LPDDR listed as 16-bit devices by dmidecode, and more. A value that cannot be read
is None, never a guess.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from advisor.core.hardware.model import CpuInfo, GpuInfo, MemoryModule

KiB = 1024
MiB = 1024**2
GiB = 1024**3

# Cells that mean "no value" in nvidia-smi, rocm-smi, dmidecode and CIM output.
_MISSING = {
    "",
    "n/a",
    "[n/a]",
    "na",
    "none",
    "unknown",
    "not specified",
    "not provided",
    "[not supported]",
    "not supported",
    "[requested functionality has been deprecated]",
    "requested functionality has been deprecated",
    "[unknown error]",
    "[insufficient permissions]",
    "no module installed",
    "not installed",
    "empty",
}

# Win32_VideoController.AdapterRAM is a uint32: any card with 4 GiB or more reads just below
# 4 GiB (4293918720 = 4095 MiB is what drivers write). Values at or above this are a floor.
ADAPTER_RAM_SATURATED = 4293918720

# PCI vendor ids of real GPU makers, and of emulated or paravirtual display adapters.
PCI_VENDORS = {
    "10de": "NVIDIA",
    "1002": "AMD",
    "1022": "AMD",
    "8086": "Intel",
    "106b": "Apple",
    "5143": "Qualcomm",
    "1a03": "ASPEED",
    "102b": "Matrox",
}
VIRTUAL_PCI_VENDORS = {
    "1af4": "virtio",
    "1b36": "QEMU QXL",
    "15ad": "VMware",
    "1234": "QEMU/Bochs",
    "1414": "Microsoft Hyper-V",
    "80ee": "VirtualBox",
    "1013": "Cirrus Logic (emulated)",
}
# Server boards carry a BMC display chip; it is a real device but never an LLM accelerator.
BMC_PCI_VENDORS = {"1a03", "102b"}

# Features that matter to llama.cpp, in the order they are reported.
FEATURE_ORDER = (
    "SSE3",
    "SSSE3",
    "SSE4_1",
    "SSE4_2",
    "AVX",
    "AVX2",
    "FMA",
    "F16C",
    "BMI2",
    "AVX_VNNI",
    "AVX512F",
    "AVX512CD",
    "AVX512DQ",
    "AVX512BW",
    "AVX512VL",
    "AVX512_VBMI",
    "AVX512_VNNI",
    "AVX512_BF16",
    "AVX512_FP16",
    "AMX_TILE",
    "AMX_INT8",
    "AMX_BF16",
    "NEON",
    "FP16",
    "DOTPROD",
    "I8MM",
    "BF16",
    "SVE",
    "SVE2",
    "SME",
)
# Keys are flag names upper-cased with '_' and '.' removed, so Linux flags (avx512_vnni),
# macOS sysctl words (SSE4.2, AVX512VNNI, FEAT_DotProd) and numpy's names (FMA3, ASIMDDP)
# all land on one vocabulary.
_FEATURE_ALIASES = {
    "PNI": "SSE3",
    "SSE3": "SSE3",
    "SSSE3": "SSSE3",
    "SUPPLEMENTALSSE3": "SSSE3",
    "SSE41": "SSE4_1",
    "SSE42": "SSE4_2",
    "AVX": "AVX",
    "AVX10": "AVX",  # macOS sysctl hw.optional.avx1_0 (the Intel AVX10 ISA never reaches here)
    "AVX2": "AVX2",
    "AVX20": "AVX2",  # macOS hw.optional.avx2_0
    "FMA": "FMA",
    "FMA3": "FMA",
    "F16C": "F16C",
    "BMI2": "BMI2",
    "AVXVNNI": "AVX_VNNI",
    "AVX512F": "AVX512F",
    "AVX512CD": "AVX512CD",
    "AVX512DQ": "AVX512DQ",
    "AVX512BW": "AVX512BW",
    "AVX512VL": "AVX512VL",
    "AVX512VBMI": "AVX512_VBMI",
    "AVX512VNNI": "AVX512_VNNI",
    "AVX512BF16": "AVX512_BF16",
    "AVX512FP16": "AVX512_FP16",
    "AMXTILE": "AMX_TILE",
    "AMXINT8": "AMX_INT8",
    "AMXBF16": "AMX_BF16",
    "ASIMD": "NEON",
    "NEON": "NEON",
    "ASIMDHP": "FP16",
    "FEATFP16": "FP16",
    "FP16": "FP16",
    "ASIMDDP": "DOTPROD",
    "FEATDOTPROD": "DOTPROD",
    "I8MM": "I8MM",
    "FEATI8MM": "I8MM",
    "BF16": "BF16",
    "FEATBF16": "BF16",
    "SVE": "SVE",
    "FEATSVE": "SVE",
    "SVE2": "SVE2",
    "FEATSVE2": "SVE2",
    "SME": "SME",
    "FEATSME": "SME",
}

_CPU_VENDORS = {
    "genuineintel": "Intel",
    "authenticamd": "AMD",
    "hygongenuine": "Hygon",
    "centaurhauls": "Centaur",
    "arm": "ARM",
    "apple": "Apple",
    "cavium": "Cavium",
    "qualcomm": "Qualcomm",
    "ampere": "Ampere",
    "hisilicon": "HiSilicon",
    "intel": "Intel",
    "amd": "AMD",
}

# /proc/cpuinfo on ARM names no product: only 'CPU implementer' and 'CPU part' ids
# (Linux arch/arm64/include/asm/cputype.h).
ARM_IMPLEMENTERS = {
    0x41: "ARM",
    0x42: "Broadcom",
    0x43: "Cavium",
    0x46: "Fujitsu",
    0x48: "HiSilicon",
    0x4E: "NVIDIA",
    0x50: "APM",
    0x51: "Qualcomm",
    0x61: "Apple",
    0x69: "Intel",
    0xC0: "Ampere",
}
ARM_PARTS = {
    (0x41, 0xD03): "Cortex-A53",
    (0x41, 0xD04): "Cortex-A35",
    (0x41, 0xD05): "Cortex-A55",
    (0x41, 0xD07): "Cortex-A57",
    (0x41, 0xD08): "Cortex-A72",
    (0x41, 0xD09): "Cortex-A73",
    (0x41, 0xD0A): "Cortex-A75",
    (0x41, 0xD0B): "Cortex-A76",
    (0x41, 0xD0C): "Neoverse-N1",
    (0x41, 0xD0D): "Cortex-A77",
    (0x41, 0xD40): "Neoverse-V1",
    (0x41, 0xD41): "Cortex-A78",
    (0x41, 0xD49): "Neoverse-N2",
    (0x41, 0xD4F): "Neoverse-V2",
    (0x43, 0x0A1): "ThunderX CN88XX",
    (0x43, 0x0A2): "ThunderX CN81XX",
    (0x43, 0x0A3): "ThunderX CN83XX",
    (0x43, 0x0AF): "ThunderX2 CN99XX",
    (0x48, 0xD01): "Kunpeng 920 (TSV110)",
    (0x50, 0x000): "X-Gene",
    (0xC0, 0xAC3): "Ampere-1",
}

# SMBIOS type 17 memory type codes, as Win32_PhysicalMemory.SMBIOSMemoryType reports them.
SMBIOS_MEMORY_TYPES = {
    18: "DDR",
    19: "DDR2",
    20: "DDR",
    21: "DDR2",
    22: "DDR2 FB-DIMM",
    24: "DDR3",
    26: "DDR4",
    27: "LPDDR",
    28: "LPDDR2",
    29: "LPDDR3",
    30: "LPDDR4",
    32: "HBM",
    33: "HBM2",
    34: "DDR5",
    35: "LPDDR5",
    36: "HBM3",
}


# --------------------------------------------------------------------------- small helpers


def is_missing(value: Any) -> bool:
    """True for None and for the placeholder cells tools print instead of a value."""
    if value is None:
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING


def to_int(value: Any) -> int | None:
    """An int from a number or a numeric string ('8', '0x1f', '16,0'); None if not one."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    text = str(value).strip()
    if is_missing(text):
        return None
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
        return int(text, 16)
    match = re.match(r"^[-+]?\d+", text.replace(",", "").replace(" ", ""))
    return int(match.group(0)) if match else None


def to_float(value: Any) -> float | None:
    """A float from a number or a string, accepting a locale decimal comma ('2,4 GHz')."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    if is_missing(text):
        return None
    # A single comma with no dot is a decimal comma (system_profiler under a German locale).
    if "," in text and "." not in text and text.count(",") == 1:
        text = text.replace(",", ".")
    match = re.match(r"^[-+]?\d+(?:\.\d+)?", text.replace(" ", ""))
    return float(match.group(0)) if match else None


_SIZE_UNITS = {
    "b": 1,
    "k": KiB,
    "kb": KiB,
    "kib": KiB,
    "m": MiB,
    "mb": MiB,
    "mib": MiB,
    "g": GiB,
    "gb": GiB,
    "gib": GiB,
    "t": 1024**4,
    "tb": 1024**4,
    "tib": 1024**4,
}


def parse_size_bytes(text: Any) -> int | None:
    """Bytes from '16 GB', '64 MB', '8192 MiB', '32K' or '16384 KB'.

    The tools parsed here (system_profiler, dmidecode, nvidia-smi, lscpu) all mean binary
    multiples even when they write 'GB': hw.memsize 7516192768 is the '7 GB' SPHardware prints.
    """
    if text is None or is_missing(text):
        return None
    if isinstance(text, int | float) and not isinstance(text, bool):
        return int(text)
    match = re.match(r"^\s*([\d.,]+)\s*([A-Za-z]*)", str(text))
    if not match:
        return None
    number = to_float(match.group(1))
    unit = match.group(2).lower() or "b"
    if number is None or unit not in _SIZE_UNITS:
        return None
    return round(number * _SIZE_UNITS[unit])


def collapse_spaces(text: str | None) -> str | None:
    """Collapse runs of whitespace ('i7 CPU         870  @ 2.93GHz' -> 'i7 CPU 870 @ 2.93GHz')."""
    if text is None:
        return None
    collapsed = " ".join(text.split())
    return collapsed or None


def strip_virtual_suffix(name: str | None) -> tuple[str | None, bool]:
    """Split 'Apple M1 (Virtual)' into ('Apple M1', True): catalogue lookups need the chip."""
    if name is None:
        return None, False
    match = re.match(r"^(.*?)\s*\(Virtual\)\s*$", name, flags=re.IGNORECASE)
    if match:
        return match.group(1), True
    return name, False


def cpu_vendor_name(raw: str | None) -> str | None:
    """'GenuineIntel' -> 'Intel', 'AuthenticAMD' -> 'AMD'; other names pass through."""
    if raw is None or is_missing(raw):
        return None
    return _CPU_VENDORS.get(raw.strip().lower(), raw.strip())


_ARM_ONLY_FEATURES = {"NEON", "FP16", "DOTPROD", "I8MM", "BF16", "SVE", "SVE2", "SME"}


def cpu_vendor_from_brand(brand: str | None) -> str | None:
    """'Intel', 'AMD' or 'Apple' from a CPU brand string, or None."""
    if not brand:
        return None
    for word, vendor in (("intel", "Intel"), ("amd", "AMD"), ("apple", "Apple")):
        if re.search(rf"\b{word}\b", brand.lower()):
            return vendor
    return None


def canonical_cpu_features(flags: Iterable[str]) -> tuple[str, ...]:
    """Map OS-specific CPU flag names onto the llama.cpp-relevant vocabulary, in a fixed order.

    Names are only read as ARM features on an ARM flag list (one with asimd/neon or FEAT_*):
    x86 Linux flags include 'sme', which there is AMD's Secure Memory Encryption.
    """
    found: set[str] = set()
    arm = False
    for flag in flags:
        raw = flag.strip()
        if not raw:
            continue
        if raw.upper() == "AVX1.0":  # macOS machdep.cpu.features spells AVX this way
            found.add("AVX")
            continue
        key = raw.upper().replace("_", "").replace(".", "")
        arm = arm or key in ("ASIMD", "NEON") or key.startswith("FEAT")
        canonical = _FEATURE_ALIASES.get(key)
        if canonical:
            found.add(canonical)
    if not arm:
        found -= _ARM_ONLY_FEATURES
    return tuple(f for f in FEATURE_ORDER if f in found)


def pci_id_from_vendor_device(vendor: Any, device: Any) -> str | None:
    """'10de:2684' from vendor and device ids given as ints or '0x10de' strings."""
    vendor_id = to_int(vendor)
    device_id = to_int(device)
    if vendor_id is None or device_id is None or device_id == 0:
        return None
    return f"{vendor_id:04x}:{device_id:04x}"


def pci_id_from_nvidia(combined: Any) -> str | None:
    """'10de:2684' from nvidia-smi's combined id '0x268410DE' / '268410DE' (device, vendor)."""
    if combined is None or is_missing(combined):
        return None
    text = str(combined).strip().lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{8}", text):
        return None
    device, vendor = text[:4], text[4:]
    if device == "0000":  # seen on an A10G VM: the id is not passed through
        return None
    return f"{vendor}:{device}"


def normalise_pci_bus_id(bus_id: Any) -> str | None:
    """'00000000:01:00.0' (NVML, nvidia-smi) and '0000:1E:00.0' -> '0000:01:00.0' lower-case."""
    if bus_id is None or is_missing(bus_id):
        return None
    text = bus_id.decode() if isinstance(bus_id, bytes) else str(bus_id)
    match = re.search(
        r"(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])", text.strip()
    )
    if not match:
        return None
    domain = int(match.group(1), 16) if match.group(1) else 0
    bus = int(match.group(2), 16)
    device = int(match.group(3), 16)
    return f"{domain:04x}:{bus:02x}:{device:02x}.{match.group(4)}"


def gpu_vendor_from_text(text: str | None) -> str | None:
    """GPU vendor from a name or AdapterCompatibility string."""
    if not text:
        return None
    low = text.lower()
    if "nvidia" in low or "geforce" in low or "quadro" in low or "tesla" in low:
        return "NVIDIA"
    if "advanced micro devices" in low or re.search(r"\b(amd|ati|radeon)\b", low):
        return "AMD"
    if "intel" in low:
        return "Intel"
    if "apple" in low:
        return "Apple"
    return None


def _load_json(text: str) -> Any:
    """json.loads that skips warnings or blank lines some tools print before the JSON."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object in the output")
    value, _ = json.JSONDecoder().raw_decode(text[min(starts) :])
    return value


def _first(mapping: Mapping[str, Any], *keys: str) -> Any:
    """The first present, non-missing value among keys, matched case-insensitively."""
    lowered = {k.lower(): v for k, v in mapping.items()}
    for key in keys:
        value = lowered.get(key.lower())
        if not is_missing(value):
            return value
    return None


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
class RamBandwidthEstimate:
    """Theoretical RAM bandwidth from the memory modules, or None with the reason."""

    type: str | None
    speed_mts: int | None
    channels: int | None  # 64-bit equivalents
    bus_width_bits: int | None
    bytes_per_s: float | None
    source: str


_CHANNEL_PATTERNS = (
    # AMD AGESA: Bank Locator 'P0 CHANNEL A', Locator 'DIMM 0' / 'DIMM 1' within the channel
    (re.compile(r"\bP(\d+)\s+CHANNEL\s+([A-Z]+)\b"), "socket{0}-{1}"),
    # Intel server boards: 'CPU1_DIMM_A1', 'CPU2_DIMM_F1'; Supermicro 'P1-DIMMA1'
    (re.compile(r"\bCPU(\d+)_DIMM_?([A-Z])\d"), "socket{0}-{1}"),
    (re.compile(r"\bP(\d+)-DIMM([A-Z])\d"), "socket{0}-{1}"),
    # soldered LPDDR and Intel client: 'Controller0-ChannelA' (each entry its own channel)
    (re.compile(r"CONTROLLER(\d+)-CHANNEL([A-Z0-9]+)"), "ctrl{0}-{1}"),
    # Intel desktops and laptops: 'ChannelA-DIMM0', 'Channel B'
    (re.compile(r"CHANNEL[\s_-]*([A-Z])(?![A-Z])"), "{0}"),
    # 'DIMM_A1', 'DIMM A', 'DIMMB2' (board silkscreen names carry the channel letter)
    (re.compile(r"\bDIMM[\s_-]*([A-H])(?:\d|\b)"), "{0}"),
)


def memory_channel_key(locator: str | None) -> str | None:
    """Which memory channel a module sits on, from its 'bank / locator' text; None if unsure."""
    if not locator:
        return None
    text = locator.upper()
    for pattern, template in _CHANNEL_PATTERNS:
        match = pattern.search(text)
        if match:
            return template.format(*match.groups())
    return None


def estimate_ram_bandwidth(modules: Sequence[MemoryModule]) -> RamBandwidthEstimate:
    """Theoretical peak = populated bus width (bytes) x MT/s, with how it was derived.

    Modules are grouped by channel (two DIMMs on one channel share its bus); each channel's
    width is its data width (64 bits for a DDR4/DDR5 DIMM without ECC bits, 16 or 32 for the
    LPDDR devices SMBIOS lists one per channel). When the channel of a module, or an LPDDR
    device width, cannot be read, the bandwidth is unknown rather than guessed.
    """
    populated = [m for m in modules if m.size_bytes]
    if not populated:
        return RamBandwidthEstimate(None, None, None, None, None, "no memory modules listed")
    types = sorted({m.type for m in populated if m.type})
    mem_type = types[0] if len(types) == 1 else ("/".join(types) if types else None)
    speeds = [m.speed_mts or m.rated_speed_mts for m in populated]
    speed = min(s for s in speeds if s) if any(speeds) else None
    if speed is None:
        return RamBandwidthEstimate(
            mem_type, None, None, None, None, "unknown: the modules report no speed"
        )
    keys = [memory_channel_key(m.locator) for m in populated]
    if any(k is None for k in keys):
        unknown = sorted({m.locator or "?" for m, k in zip(populated, keys, strict=True) if not k})
        return RamBandwidthEstimate(
            mem_type,
            speed,
            None,
            None,
            None,
            "unknown: cannot tell which channel each module is on "
            f"(locators: {', '.join(unknown)})",
        )
    is_lpddr = bool(mem_type and mem_type.upper().startswith("LP"))
    widths: dict[str, int] = {}
    for module, key in zip(populated, keys, strict=True):
        width = module.data_width_bits
        if width is None:
            if is_lpddr:
                return RamBandwidthEstimate(
                    mem_type,
                    speed,
                    None,
                    None,
                    None,
                    "unknown: LPDDR device width not reported",
                )
            width = 64  # a DDR DIMM's data bus
        widths[key or ""] = max(widths.get(key or "", 0), width)
    bus_bits = sum(widths.values())
    channels = max(1, bus_bits // 64)
    bytes_per_s = bus_bits / 8 * speed * 1e6
    per_channel = len(populated) / len(widths)
    detail = (
        f"{len(widths)} x {next(iter(widths.values()))}-bit"
        if len(set(widths.values())) == 1
        else f"{bus_bits}-bit"
    )
    source = (
        f"{detail} {mem_type or 'RAM'} channels populated ({bus_bits}-bit bus) at {speed} MT/s "
        f"(configured speed; {len(populated)} modules"
        + (f", {per_channel:g} per channel" if per_channel != 1 else "")
        + f") = {bytes_per_s / 1e9:.1f} GB/s theoretical peak"
    )
    return RamBandwidthEstimate(mem_type, speed, channels, bus_bits, bytes_per_s, source)


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
    data = _load_json(json_text)
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
                note="; ".join(notes) or None,
            )
        )
    return tuple(gpus)


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


# --------------------------------------------------------------------------- Windows


def parse_cim_records(text: str) -> list[dict[str, Any]]:
    """CIM/WMI instances from PowerShell `Format-List` text or `ConvertTo-Json` output.

    Format-List wraps long values onto indented continuation lines (which may begin with ':'
    when a path 'C:\\...' breaks after the drive letter); those are joined back on. Instances
    are separated by blank lines. JSON may be one object or a list.
    """
    stripped = text.strip().lstrip("\ufeff")
    if stripped.startswith(("{", "[")):
        data = _load_json(stripped)
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


def _cpu_from_win_records(records: Sequence[Mapping[str, Any]]) -> CpuInfo:
    if not records:
        return CpuInfo(model=None)
    first = records[0]
    cores = [to_int(_first(r, "NumberOfCores")) for r in records]
    threads = [to_int(_first(r, "NumberOfLogicalProcessors", "ThreadCount")) for r in records]
    arch = to_int(_first(first, "Architecture"))
    return CpuInfo(
        model=collapse_spaces(_first(first, "Name")),
        vendor=cpu_vendor_name(_first(first, "Manufacturer")),
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
    return _cpu_from_win_records(parse_cim_records(text))


def parse_wmic_cpu(text: str) -> CpuInfo:
    """CpuInfo from `wmic cpu get ... /format:list` (brand strings with runs of spaces)."""
    return _cpu_from_win_records(parse_wmic_records(text))


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
        name = collapse_spaces(_first(record, "Name", "Caption", "Description")) or "unknown GPU"
        pnp = _first(record, "PNPDeviceID")
        pci_id, on_pci = _pci_from_pnp(pnp)
        vendor_id = pci_id.split(":")[0] if pci_id else None
        vendor = (
            PCI_VENDORS.get(vendor_id or "")
            or gpu_vendor_from_text(_first(record, "AdapterCompatibility"))
            or gpu_vendor_from_text(name)
        )
        is_virtual = (bool(pnp) and not on_pci) or (vendor_id in VIRTUAL_PCI_VENDORS)
        adapter_ram = to_int(_first(record, "AdapterRAM"))
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
                driver=_first(record, "DriverVersion"),
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
        size = _registry_size(_first(record, "HardwareInformation.qwMemorySize", "qwMemorySize"))
        if not size:
            size = _registry_size(_first(record, "HardwareInformation.MemorySize", "MemorySize"))
        adapters.append(
            RegistryAdapter(
                key=_first(record, "Key", "PSChildName"),
                description=collapse_spaces(_first(record, "DriverDesc")),
                matching_device_id=(_first(record, "MatchingDeviceId") or None),
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
        size = to_int(_first(record, "Capacity"))
        if not size:
            continue
        code = to_int(_first(record, "SMBIOSMemoryType"))
        parts = [
            str(p).strip()
            for p in (_first(record, "BankLabel"), _first(record, "DeviceLocator"))
            if p
        ]
        rated = to_int(_first(record, "Speed"))
        modules.append(
            MemoryModule(
                size_bytes=size,
                type=SMBIOS_MEMORY_TYPES.get(code) if code else None,
                speed_mts=to_int(_first(record, "ConfiguredClockSpeed")) or rated,
                rated_speed_mts=rated,
                locator=" / ".join(parts) or None,
                data_width_bits=to_int(_first(record, "DataWidth")),
            )
        )
    return tuple(modules)


def parse_cim_physical_memory(text: str) -> tuple[MemoryModule, ...]:
    """MemoryModules from Win32_PhysicalMemory (Format-List or ConvertTo-Json)."""
    return memory_modules_from_cim(parse_cim_records(text))


# --------------------------------------------------------------------------- Linux GPUs


def parse_rocm_smi_json(text: str) -> tuple[GpuInfo, ...]:
    """AMD GPUs from `rocm-smi --showproductname --showmeminfo vram [--showbus] --json`.

    Keys changed case across ROCm versions ('Card series' -> 'Card Series'); ROCm 4.3 printed
    the vendor id '0x1002' instead of names; the top-level 'system' key is not a card. VRAM is
    'VRAM Total Memory (B)' (VIS_VRAM is the BAR window). An MI250 module shows as two cards,
    one per GCD, and llama.cpp sees two devices too: each is reported, with a note.
    """
    data = _load_json(text)
    if not isinstance(data, dict):
        raise ValueError("rocm-smi JSON is not an object")
    cards = sorted(
        ((k, v) for k, v in data.items() if re.fullmatch(r"card\d+", k) and isinstance(v, dict)),
        key=lambda kv: int(kv[0][4:]),
    )
    gpus: list[GpuInfo] = []
    for _, card in cards:
        series = _first(card, "Card Series", "Card series")
        device_name = _first(card, "Device Name")
        # The device id is 'GPU ID' / 'Device ID'; 'Card Model' (capital M, ROCm 6) is the
        # device id as well, but old 'Card model' was the subsystem id (0x0c34 on an MI100).
        device_id = _first(card, "GPU ID", "Device ID") or card.get("Card Model")
        pci_id = pci_id_from_vendor_device(0x1002, device_id)

        def _is_name(value: Any) -> bool:
            return bool(value) and not re.fullmatch(r"0x[0-9a-fA-F]+", str(value).strip())

        if _is_name(series):
            name = str(series)
        elif _is_name(device_name):
            name = str(device_name)
        else:
            name = f"AMD GPU [{pci_id}]" if pci_id else "AMD GPU"
        total = to_int(_first(card, "VRAM Total Memory (B)"))
        used = to_int(_first(card, "VRAM Total Used Memory (B)"))
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
                pci_bus_id=normalise_pci_bus_id(_first(card, "PCI Bus")),
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
