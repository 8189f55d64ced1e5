"""The theoretical RAM bandwidth the installed modules allow: populated channels x bus width x
transfer rate, from what dmidecode, system_profiler or CIM report."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.hardware.model import MemoryModule


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
