"""NVIDIA GPUs: NVML first (no subprocess), nvidia-smi as the fallback."""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

from advisor.core.hardware import parsers as P
from advisor.core.hardware.detect.common import LONG_S, ProbeContext, describe_gpus, run_command
from advisor.core.hardware.model import (
    GpuInfo,
    ProbeNote,
)

NVML_VIRTUALIZATION_VGPU = 2  # NVML_GPU_VIRTUALIZATION_MODE_VGPU: a guest's slice of a GPU
NVML_MIG_ENABLED = 1

NVIDIA_SMI_QUERY = (
    "name,pci.bus_id,pci.device_id,memory.total,memory.free,driver_version,"
    "clocks.max.memory,mig.mode.current,pcie.link.gen.max,pcie.link.width.max"
)


# --------------------------------------------------------------------------- NVIDIA


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def nvml_gpus(nvml: Any) -> tuple[GpuInfo, ...]:
    """Every NVIDIA GPU through NVML, with the theoretical bandwidth from bus width x clock."""
    nvml.nvmlInit()
    try:
        try:
            driver: str | None = _text(nvml.nvmlSystemGetDriverVersion())
        except Exception:
            driver = None
        gpus: list[GpuInfo] = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)

            def ask(fn_name: str, *args: Any, handle: Any = handle) -> Any:
                try:
                    return getattr(nvml, fn_name)(handle, *args)
                except Exception:  # not supported on this GPU or driver
                    return None

            name = _text(ask("nvmlDeviceGetName") or "NVIDIA GPU")
            memory = ask("nvmlDeviceGetMemoryInfo")
            pci = ask("nvmlDeviceGetPciInfo")
            bus_bits = ask("nvmlDeviceGetMemoryBusWidth")
            clock = ask("nvmlDeviceGetMaxClockInfo", getattr(nvml, "NVML_CLOCK_MEM", 2))
            mig = ask("nvmlDeviceGetMigMode")
            virt = ask("nvmlDeviceGetVirtualizationMode")
            bandwidth = P.nvidia_theoretical_bandwidth(bus_bits, clock)
            notes = []
            if isinstance(mig, list | tuple) and mig and mig[0] == NVML_MIG_ENABLED:
                notes.append("MIG enabled: the GPU is split into slices")
            pci_id = None
            bus_id = None
            if pci is not None:
                device_id = getattr(pci, "pciDeviceId", None)
                pci_id = P.pci_id_from_nvidia(f"{device_id:08x}") if device_id else None
                bus_id = P.normalise_pci_bus_id(getattr(pci, "busId", None))
            gpus.append(
                GpuInfo(
                    name=name,
                    vendor="NVIDIA",
                    vram_total_bytes=getattr(memory, "total", None),
                    vram_free_bytes=getattr(memory, "free", None),
                    driver=driver,
                    pci_id=pci_id,
                    bus_width_bits=bus_bits or None,
                    memory_clock_mhz=float(clock) if clock else None,
                    bandwidth_bytes_per_s=bandwidth,
                    bandwidth_source=(
                        f"NVML: {bus_bits}-bit bus x {clock} MHz max memory clock x 2 "
                        f"= {bandwidth / 1e9:.0f} GB/s"
                        if bandwidth
                        else None
                    ),
                    is_virtual=virt == NVML_VIRTUALIZATION_VGPU,
                    source="NVML",
                    pci_bus_id=bus_id,
                    note="; ".join(notes) or None,
                )
            )
        return tuple(gpus)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def nvidia_task(ctx: ProbeContext, notes: list[ProbeNote]) -> tuple[GpuInfo, ...]:
    """NVML first (bus width and clocks); nvidia-smi when the library is missing or fails."""
    start = time.monotonic()
    nvml = ctx.nvml
    try:
        if nvml is None:
            import pynvml  # nvidia-ml-py; loads libnvidia-ml only when asked

            nvml = pynvml
        gpus = nvml_gpus(nvml)
        notes.append(
            ProbeNote("NVML", "ok", describe_gpus(gpus), round(time.monotonic() - start, 3))
        )
        return gpus
    except Exception as exc:
        missing = "LibraryNotFound" in type(exc).__name__ or isinstance(exc, ImportError)
        notes.append(
            ProbeNote(
                "NVML",
                "unavailable" if missing else "failed",
                "no NVIDIA driver library (no NVIDIA GPU, or no driver)" if missing else str(exc),
                round(time.monotonic() - start, 3),
            )
        )
    gpus = run_command(
        ctx,
        notes,
        "nvidia-smi --query-gpu",
        ["nvidia-smi", f"--query-gpu={NVIDIA_SMI_QUERY}", "--format=csv"],
        LONG_S,
        P.parse_nvidia_smi_csv,
        describe=describe_gpus,
    )
    if gpus is None and notes[-1].status == "failed":
        # Old drivers reject a query field they do not know; the XML report always works.
        gpus = run_command(
            ctx,
            notes,
            "nvidia-smi -q -x",
            ["nvidia-smi", "-q", "-x"],
            LONG_S,
            P.parse_nvidia_smi_xml,
            describe=describe_gpus,
        )
    if not gpus:
        return ()
    return tuple(
        replace(
            g,
            bandwidth_source="unknown: nvidia-smi does not report the memory bus width "
            "(NVML does; the catalogue knows it)",
        )
        for g in gpus
    )
