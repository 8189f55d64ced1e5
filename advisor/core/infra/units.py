"""Unit constants and human-readable formatting shared by the CLI and the GUI."""

from __future__ import annotations

KB = 1000
MB = 1000**2
GB = 1000**3
TB = 1000**4
KiB = 1024
MiB = 1024**2
GiB = 1024**3


def fmt_bytes(n_bytes: float | None, binary: bool = False) -> str:
    """Format a byte count: decimal units (GB) by default, binary (GiB) on request."""
    if n_bytes is None:
        return "unknown"
    if binary:
        for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
            if abs(n_bytes) >= size:
                return f"{n_bytes / size:.2f} {unit}"
        return f"{n_bytes:.0f} B"
    for unit, size in (("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB)):
        if abs(n_bytes) >= size:
            return f"{n_bytes / size:.2f} {unit}"
    return f"{n_bytes:.0f} B"


def fmt_bandwidth(bytes_per_s: float | None) -> str:
    """Format a bandwidth in GB/s (decimal, as vendors quote it)."""
    if bytes_per_s is None:
        return "unknown"
    return (
        f"{bytes_per_s / GB:,.0f} GB/s"
        if bytes_per_s >= 10 * GB
        else f"{bytes_per_s / GB:.1f} GB/s"
    )


def fmt_tps(tokens_per_s: float | None) -> str:
    """Format a speed in tokens per second with sensible precision."""
    if tokens_per_s is None:
        return "n/a"
    if tokens_per_s >= 100:
        return f"{tokens_per_s:,.0f} t/s"
    if tokens_per_s >= 10:
        return f"{tokens_per_s:.1f} t/s"
    return f"{tokens_per_s:.2f} t/s"


def fmt_band(low: float | None, high: float | None, dash: str = "–") -> str:
    """A range of speeds, with a decimal where the ends are small: "0.9–1.5", "120–170"."""
    if not low or not high:
        return "—"
    digits = 1 if high < 10 else 0
    return f"{low:,.{digits}f}{dash}{high:,.{digits}f}"


def fmt_seconds(seconds: float | None) -> str:
    """Format a duration: ms below a second, s below two minutes, then min or h."""
    if seconds is None:
        return "n/a"
    if 0 < seconds < 0.0005:
        return "<1 ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def fmt_params(n_params: float) -> str:
    """Format a parameter count as people say it: 12.25 B, 494 M."""
    if n_params >= 1e9:
        return f"{n_params / 1e9:.2f} B"
    return f"{n_params / 1e6:.0f} M"
