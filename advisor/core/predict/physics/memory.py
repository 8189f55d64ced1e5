"""Does a model fit a device? Usable memory per device kind, and where spilled layers go.

A dedicated card loses about a GiB to the driver and its context; Apple lets the GPU use
about two thirds of small memories and three quarters of larger ones; other unified-memory
machines keep a few GiB for the OS. What does not fit runs from system RAM (a discrete card)
or from the CPU side of the same memory (unified), at that memory's speed (`partial`); what
fits nowhere is `no`, never a number.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GB, GiB

DEDICATED_RESERVE_BYTES = 1.0 * GiB  # driver, CUDA/Vulkan context, compute buffers
UNIFIED_OS_RESERVE_BYTES = 4.0 * GiB  # what an OS and its apps keep of a shared memory
# Metal's recommendedMaxWorkingSetSize: about 2/3 of small and 3/4 of larger memories
APPLE_GPU_SHARE_SMALL = 0.67
APPLE_GPU_SHARE_LARGE = 0.75  # the larger memories' share (the same limit)
APPLE_LARGE_MEMORY_GB = 36  # where the larger share begins
# the CPU side of a unified memory reaches about half of its bandwidth
UNIFIED_CPU_SIDE_SHARE = 0.5


def usable_memory_bytes(device: Device, memory_gb: float) -> float:
    """Memory a model can use on the device: minus driver reserve, or the GPU's share of RAM."""
    total = memory_gb * GiB
    if device.device_class == "apple_soc":
        large = memory_gb >= APPLE_LARGE_MEMORY_GB
        return total * (APPLE_GPU_SHARE_LARGE if large else APPLE_GPU_SHARE_SMALL)
    if device.unified_memory:
        return total - UNIFIED_OS_RESERVE_BYTES
    return total - DEDICATED_RESERVE_BYTES


def offers_memory(device: Device, memory_gb: float) -> bool:
    """Does the device come with this much memory? A card or a chip with soldered memory
    comes in its listed sizes; a CPU takes whatever RAM is fitted, up to its largest."""
    if device.is_cpu:
        return memory_gb <= max(device.memory_sizes_gb) + 1e-9
    return any(abs(memory_gb - option) < 1e-6 for option in device.memory_sizes_gb)


def memory_sentence(device: Device, memory_gb: float) -> str:
    """Why a memory size is refused for a device, in one sentence."""
    if device.is_cpu:
        return (
            f"{device.name} takes up to {max(device.memory_sizes_gb):g} GB of RAM; "
            f"--memory-gb {memory_gb:g} is more."
        )
    options = [f"{o:g}" for o in sorted(device.memory_sizes_gb)]
    listed = options[0] if len(options) == 1 else ", ".join(options[:-1]) + f" or {options[-1]}"
    return f"{device.name} comes with {listed} GB; --memory-gb {memory_gb:g} is not one of them."


def memory_option(device: Device, need: float, count: int, chosen: float | None) -> float:
    """The memory option to project: the user's choice, else the smallest that fits, else the
    largest."""
    if chosen is not None:
        return chosen
    for option in sorted(device.memory_sizes_gb):
        if usable_memory_bytes(device, option) * count >= need:
            return option
    return max(device.memory_sizes_gb)


@dataclass(frozen=True)
class Fit:
    """Where a model and its KV cache live on a device (and its host)."""

    fits: str  # "yes" | "partial" | "no"
    share_on_device: float  # share of the bytes in the device's own memory
    spill_bandwidth_bytes_per_s: float  # where the rest is read from
    spill_label: str  # "system RAM", "the CPU side of the same memory"
    note: str = ""


def fit_on(
    device: Device,
    count: int,
    need_bytes: float,
    memory_gb: float,
    host: Host,
    memory_chosen: bool = False,
) -> Fit:
    """Does `need_bytes` fit `count` of `device` at `memory_gb` each, and if only partly,
    where does the rest go and how fast is it read?"""
    usable = usable_memory_bytes(device, memory_gb) * count
    bandwidth = device.bandwidth_bytes_per_s
    if need_bytes <= usable:
        return Fit("yes", 1.0, bandwidth, "bandwidth")
    spill = need_bytes - usable
    if device.unified_memory:
        room = memory_gb * GiB * count - UNIFIED_OS_RESERVE_BYTES
        spill_bw = bandwidth * UNIFIED_CPU_SIDE_SHARE
        label = where = "the CPU side of the same memory"
    else:
        room = usable + max(0.0, host.ram_bytes - UNIFIED_OS_RESERVE_BYTES)
        spill_bw, label = host.ram_bandwidth_bytes_per_s, host.label
        where = f"{host.label} at {host.ram_bandwidth_bytes_per_s / GB:.0f} GB/s"
    if need_bytes > room:
        cfg = (f"{count} x " if count > 1 else "") + f"{memory_gb:g} GiB"
        note = (
            f"Does not fit: the model and its KV cache need {need_bytes / GiB:.1f} GiB; {cfg} "
            f"plus {host.ram_bytes / GiB:.0f} GiB of {host.label} is not enough."
            if not device.unified_memory
            else f"Does not fit: needs {need_bytes / GiB:.1f} GiB; the "
            + ("chosen " if memory_chosen else "largest ")
            + f"{device.name} has {memory_gb:g} GiB, of which the system keeps about "
            f"{UNIFIED_OS_RESERVE_BYTES / GiB:.0f} GiB for itself."
        )
        return Fit("no", 0.0, spill_bw, label, note)
    share = max(0.0, usable / need_bytes)
    note = (
        f"Partial offload: {1 - share:.0%} of the model ({spill / GiB:.1f} GiB) does not fit "
        f"in {memory_gb:g} GiB and runs from {where}, which sets the decode speed."
    )
    return Fit("partial", share, spill_bw, label, note)
