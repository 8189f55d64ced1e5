"""One catalogued device: cited specifications as a plain dataclass (see device_db/schema.json
for the units and meanings of every field)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.core.infra.units import GB, GiB

CLASS_LABELS = {
    "nvidia_consumer": "NVIDIA GeForce",
    "nvidia_laptop": "NVIDIA laptop",
    "nvidia_workstation": "NVIDIA workstation",
    "nvidia_datacenter": "NVIDIA datacenter",
    "nvidia_embedded": "NVIDIA embedded",
    "amd_consumer": "AMD Radeon",
    "amd_workstation": "AMD workstation",
    "amd_datacenter": "AMD Instinct",
    "amd_apu": "AMD APU",
    "intel_arc": "Intel Arc",
    "intel_igpu": "Intel iGPU",
    "apple_soc": "Apple silicon",
    "cpu_desktop": "desktop CPU",
    "cpu_laptop": "laptop CPU",
    "cpu_server": "server CPU",
}


@dataclass(frozen=True)
class Device:
    """One catalogued device (see device_db/schema.json for units and meanings)."""

    id: str
    vendor: str
    name: str
    aliases: tuple[str, ...]
    device_class: str
    release_year: int
    memory_sizes_gb: tuple[float, ...]
    memory_type: str
    memory_bandwidth_gbs: float
    fp32_tflops: float | None
    fp16_tensor_tflops: float | None
    tdp_w: float | None
    launch_price_usd: float | None
    backends: tuple[str, ...]
    sources: tuple[dict[str, Any], ...]
    bus_width_bits: int | None = None
    memory_data_rate_mtps: float | None = None
    fp16_tensor_tflops_fp16acc: float | None = None
    fp32_tflops_is_estimate: bool = False
    gpu_cores: int | None = None
    cpu_cores: int | None = None
    cpu_threads: int | None = None
    memory_channels: int | None = None
    simd: str | None = None
    pci_device_ids: tuple[str, ...] = ()
    derived: dict[str, str] = field(default_factory=dict)
    notes: str = ""

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.memory_bandwidth_gbs * GB

    @property
    def memory_bytes(self) -> float:
        """The largest memory option, in bytes (vendor 'GB' of DRAM are binary)."""
        return max(self.memory_sizes_gb) * GiB

    @property
    def is_cpu(self) -> bool:
        return self.device_class.startswith("cpu_")

    @property
    def unified_memory(self) -> bool:
        return (
            self.device_class in ("apple_soc", "amd_apu", "intel_igpu")
            or self.is_cpu
            or (self.device_class == "nvidia_embedded")
        )

    @property
    def peak_flops_per_s(self) -> float | None:
        """Dense FP16 tensor peak (FP32 accumulate) where it has matrix units, else FP32."""
        tflops = self.fp16_tensor_tflops or self.fp32_tflops
        return tflops * 1e12 if tflops else None

    def compute_peak_for(self, quantized: bool) -> float | None:
        """The compute roof for a model on this device. CPUs run quantised models on int8
        dot products, several times their FP32 rate; GPUs use their tensor (or FP32) peak."""
        if not (self.is_cpu and quantized and self.fp32_tflops):
            return self.peak_flops_per_s
        simd = (self.simd or "").upper()
        if "AMX" in simd:
            factor = 16.0
        elif "AVX-512" in simd or "AVX512" in simd:
            factor = 8.0  # 256 int8 ops per cycle against 32 FP32 FLOPs
        elif "VNNI" in simd or "NEON" in simd or "SVE" in simd:
            factor = 4.0
        else:
            factor = 2.0
        return self.fp32_tflops * 1e12 * factor

    @property
    def usual_backend(self) -> str:
        return self.backends[0]

    @property
    def class_label(self) -> str:
        return CLASS_LABELS.get(self.device_class, self.device_class)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "vendor": self.vendor,
            "name": self.name,
            "aliases": list(self.aliases),
            "class": self.device_class,
            "release_year": self.release_year,
            "memory_sizes_gb": list(self.memory_sizes_gb),
            "memory_type": self.memory_type,
            "bus_width_bits": self.bus_width_bits,
            "memory_data_rate_mtps": self.memory_data_rate_mtps,
            "memory_bandwidth_gbs": self.memory_bandwidth_gbs,
            "memory_bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "fp32_tflops": self.fp32_tflops,
            "fp32_tflops_is_estimate": self.fp32_tflops_is_estimate,
            "fp16_tensor_tflops": self.fp16_tensor_tflops,
            "fp16_tensor_tflops_fp16acc": self.fp16_tensor_tflops_fp16acc,
            "tdp_w": self.tdp_w,
            "launch_price_usd": self.launch_price_usd,
            "gpu_cores": self.gpu_cores,
            "cpu_cores": self.cpu_cores,
            "cpu_threads": self.cpu_threads,
            "memory_channels": self.memory_channels,
            "simd": self.simd,
            "pci_device_ids": list(self.pci_device_ids),
            "backends": list(self.backends),
            "sources": list(self.sources),
            "derived": dict(self.derived),
            "notes": self.notes,
        }

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> Device:
        return cls(
            id=r["id"],
            vendor=r["vendor"],
            name=r["name"],
            aliases=tuple(r.get("aliases") or ()),
            device_class=r["class"],
            release_year=int(r["release_year"]),
            memory_sizes_gb=tuple(float(x) for x in r["memory_sizes_gb"]),
            memory_type=r["memory_type"],
            memory_bandwidth_gbs=float(r["memory_bandwidth_gbs"]),
            fp32_tflops=r.get("fp32_tflops"),
            fp16_tensor_tflops=r.get("fp16_tensor_tflops"),
            tdp_w=r.get("tdp_w"),
            launch_price_usd=r.get("launch_price_usd"),
            backends=tuple(r["backends"]),
            sources=tuple(r["sources"]),
            bus_width_bits=r.get("bus_width_bits"),
            memory_data_rate_mtps=r.get("memory_data_rate_mtps"),
            fp16_tensor_tflops_fp16acc=r.get("fp16_tensor_tflops_fp16acc"),
            fp32_tflops_is_estimate=bool(r.get("fp32_tflops_is_estimate", False)),
            gpu_cores=r.get("gpu_cores"),
            cpu_cores=r.get("cpu_cores"),
            cpu_threads=r.get("cpu_threads"),
            memory_channels=r.get("memory_channels"),
            simd=r.get("simd"),
            pci_device_ids=tuple(r.get("pci_device_ids") or ()),
            derived=dict(r.get("derived") or {}),
            notes=r.get("notes") or "",
        )
