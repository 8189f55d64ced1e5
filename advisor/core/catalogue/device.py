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
    # architecture and the units the peaks come from
    arch: str | None = None
    compute_capability: str | None = None
    gfx_target: str | None = None
    shader_units: int | None = None
    compute_units: int | None = None
    boost_clock_mhz: float | None = None
    # dense peaks per precision (TFLOP/s, TOPS for integers); None: not published or absent
    fp16_tflops: float | None = None
    bf16_tensor_tflops: float | None = None
    int8_tensor_tops: float | None = None
    int8_dot_tops: float | None = None
    fp8_tensor_tflops: float | None = None
    fp4_tensor_tflops: float | None = None
    not_published: tuple[str, ...] = ()
    # prices
    launch_price_date: str | None = None
    street_price_usd: float | None = None
    street_price_kind: str | None = None  # "used" | "new"
    street_price_date: str | None = None
    # a used price for a card still sold new (its street price is then the new one)
    used_price_usd: float | None = None
    used_price_date: str | None = None
    # the memory size (GB) the street and used prices buy, where not the largest option
    price_memory_gb: float | None = None
    # launch prices per memory size ("8": 399) where the sizes launched at different prices;
    # launch_price_usd is then the largest option's, the one the projections assume
    launch_price_by_memory_gb: dict[str, float] = field(default_factory=dict)
    product_names: tuple[str, ...] = ()
    # where the device is sold new, as ISO 3166 codes ("CN"); empty: worldwide
    sold_in: tuple[str, ...] = ()
    # the card's own host link, PCIe generation and lanes (4, 8: PCIe 4.0 x8); None on what
    # is no add-in card (laptop GPUs, iGPUs, SoCs, CPUs, SXM/OAM modules) or where unsourced.
    # A card in a PC gets min(its generation, the slot's) x min(its lanes, the slot's).
    pcie_gen: int | None = None
    pcie_lanes: int | None = None

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
    def is_card(self) -> bool:
        """A graphics card: several go in one computer and llama.cpp splits a model's layers
        over them. A chip with the system's memory (Apple, an APU, a CPU, a Jetson) is not."""
        return not self.unified_memory

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
    def has_pcie_link(self) -> bool:
        """Whether the catalogue gives this card's own PCIe generation and lanes."""
        return self.pcie_gen is not None and self.pcie_lanes is not None

    @property
    def usual_backend(self) -> str:
        return self.backends[0]

    @property
    def class_label(self) -> str:
        return CLASS_LABELS.get(self.device_class, self.device_class)

    def peak(self, field_name: str) -> float | None:
        """A peak field in FLOP/s (or int ops/s): 'fp16_tensor_tflops' -> 165.2e12."""
        value = getattr(self, field_name, None)
        return float(value) * 1e12 if value else None

    @property
    def simd_extensions(self) -> tuple[str, ...]:
        """The vector extensions listed in `simd` ("AVX-512, AVX-512 VNNI, AMX")."""
        return tuple(x.strip() for x in (self.simd or "").split(",") if x.strip())

    def to_json(self) -> dict[str, Any]:
        """The record in the catalogue's own format (device_db/schema.json), plus the
        bandwidth in bytes/s for readers."""
        record: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            key = "class" if name == "device_class" else name
            record[key] = list(value) if isinstance(value, tuple) else value
        record["memory_bandwidth_bytes_per_s"] = self.bandwidth_bytes_per_s
        return record

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> Device:
        """A device from a catalogue record (unknown keys are ignored)."""
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            key = "class" if name == "device_class" else name
            if key not in r:
                continue
            value = r[key]
            if name in _TUPLES:
                value = (
                    tuple(float(x) for x in value)
                    if name == "memory_sizes_gb"
                    else tuple(value or ())
                )
            elif name in ("derived", "launch_price_by_memory_gb"):
                value = dict(value or {})
            values[name] = value
        values["release_year"] = int(values["release_year"])
        values["memory_bandwidth_gbs"] = float(values["memory_bandwidth_gbs"])
        values.setdefault("notes", "")
        values["notes"] = values["notes"] or ""
        values["fp32_tflops_is_estimate"] = bool(values.get("fp32_tflops_is_estimate", False))
        for required in ("fp32_tflops", "fp16_tensor_tflops", "tdp_w", "launch_price_usd"):
            values.setdefault(required, None)
        values.setdefault("aliases", ())
        for link in ("pcie_gen", "pcie_lanes"):
            if values.get(link) is not None:
                values[link] = int(values[link])
        return cls(**values)


_FIELDS = tuple(Device.__dataclass_fields__)
_TUPLES = frozenset(
    {"aliases", "memory_sizes_gb", "backends", "sources", "pci_device_ids", "not_published",
     "product_names", "sold_in"}
)  # fmt: skip
