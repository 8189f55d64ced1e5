"""Small helpers every parser uses: missing cells, numbers with units, names, PCI ids."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from advisor.core.hardware.parsers.tables import (
    CPU_VENDORS,
    FEATURE_ALIASES,
    FEATURE_ORDER,
    MISSING,
    GiB,
    KiB,
    MiB,
)

# --------------------------------------------------------------------------- small helpers


def is_missing(value: Any) -> bool:
    """True for None and for the placeholder cells tools print instead of a value."""
    if value is None:
        return True
    return isinstance(value, str) and value.strip().lower() in MISSING


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
    return CPU_VENDORS.get(raw.strip().lower(), raw.strip())


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
        canonical = FEATURE_ALIASES.get(key)
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


def load_json(text: str) -> Any:
    """json.loads that skips warnings or blank lines some tools print before the JSON."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object in the output")
    value, _ = json.JSONDecoder().raw_decode(text[min(starts) :])
    return value


def first_present(mapping: Mapping[str, Any], *keys: str) -> Any:
    """The first present, non-missing value among keys, matched case-insensitively."""
    lowered = {k.lower(): v for k, v in mapping.items()}
    for key in keys:
        value = lowered.get(key.lower())
        if not is_missing(value):
            return value
    return None
