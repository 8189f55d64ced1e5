"""This computer's CPU as a device: its estimated peaks and a catalogue-like record for it.

When llama.cpp runs on the CPU, the "device" is the CPU and this machine's RAM. Vendors publish
no FLOP/s for CPUs, so the FP32 peak is estimated from cores x clock x FMA width, and said to
be an estimate (the int8 rate quantised models run at is derived from it where the CPU's record
is read: backend_paths.CPU_INT8_PER_FP32).
"""

from __future__ import annotations

from advisor.core.catalogue.device import Device
from advisor.core.hardware.model import CpuInfo, RamInfo
from advisor.core.infra.units import GB, GiB


def _flops_per_cycle(features: tuple[str, ...], vendor: str | None) -> int:
    f = {x.upper() for x in features}
    if vendor == "Apple" or "NEON" in f or "ASIMD" in f:
        return 32  # 4 x 128-bit FMA pipes x 4 lanes x 2
    if "AMX_TILE" in f or "AMX_INT8" in f:
        # AMX is only on Xeon cores (Sapphire Rapids and later), which have two 512-bit FMA
        # units: 2 x 16 lanes x 2
        return 64
    if "AVX512F" in f or "AVX2" in f:
        return 32  # 2 x 256-bit FMA ports (AVX-512 usually no wider in practice on clients)
    if "AVX" in f:
        return 16
    return 8


def cpu_peak_flops(cpu: CpuInfo) -> tuple[float | None, str]:
    """Estimated FP32 peak of the CPU's performance cores: cores x clock x FLOPs per cycle."""
    cores = cpu.performance_cores or cpu.physical_cores or cpu.logical_cores
    if not cores:
        return None, "unknown (core count not detected)"
    ghz = (cpu.max_mhz or 3000.0) / 1000.0
    per_cycle = _flops_per_cycle(cpu.features, cpu.vendor)
    clock = f"{ghz:.2f} GHz" if cpu.max_mhz else "3.0 GHz (clock not reported, assumed)"
    return (
        cores * ghz * per_cycle * 1e9,
        f"estimate: {cores} cores x {clock} x {per_cycle} FP32 FLOP per cycle",
    )


def _simd_label(features: tuple[str, ...]) -> str | None:
    f = {x.upper() for x in features}
    if "AMX_INT8" in f:
        return "AMX"
    if "AVX512F" in f:
        return "AVX-512 VNNI" if "AVX512_VNNI" in f else "AVX-512"
    if "AVX2" in f:
        return "AVX2 VNNI" if "AVX_VNNI" in f else "AVX2"
    if "NEON" in f or "ASIMD" in f:
        return "NEON"
    return None


def cpu_device(
    cpu: CpuInfo, ram: RamInfo, bandwidth: float, peak: float | None, matched: Device | None
) -> Device:
    """A device record for this machine's CPU and RAM (with the catalogue's facts where the
    CPU is catalogued: class, TDP, SIMD)."""
    name = (cpu.model or "This computer's CPU").strip()
    memory_gb = (ram.total_bytes or 16 * GiB) / GiB
    return Device(
        id="this-machine-cpu",
        vendor=matched.vendor if matched else (cpu.vendor or "unknown"),
        name=name,
        aliases=(),
        device_class=matched.device_class if matched else "cpu_desktop",
        release_year=matched.release_year if matched else 2020,
        memory_sizes_gb=(round(memory_gb, 1),),
        memory_type=ram.type or "RAM",
        memory_bandwidth_gbs=bandwidth / GB,
        fp32_tflops=(peak / 1e12) if peak else None,
        fp16_tensor_tflops=None,
        tdp_w=matched.tdp_w if matched else None,
        launch_price_usd=None,
        backends=("cpu",),
        sources=(
            {
                "url": "https://llm-hardware-advisor.local/this-machine",
                "fields": ["all"],
                "note": "detected on this machine",
            },
        ),
        cpu_cores=cpu.physical_cores,
        cpu_threads=cpu.logical_cores,
        simd=(matched.simd if matched else None) or _simd_label(cpu.features),
        fp32_tflops_is_estimate=True,
        # the catalogue's other peaks of the chip: this machine's ceilings are the catalogue's
        int8_dot_tops=matched.int8_dot_tops if matched else None,
        int8_tensor_tops=matched.int8_tensor_tops if matched else None,
        bf16_tensor_tflops=matched.bf16_tensor_tflops if matched else None,
        fp16_tflops=matched.fp16_tflops if matched else None,
    )
