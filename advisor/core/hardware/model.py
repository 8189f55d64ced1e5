"""The hardware report: plain dataclasses, JSON in SI units, 'unknown' said honestly.

Every field that could not be read is None, and `notes` says why (a probe that failed, timed
out or does not exist on this OS), so the CLI and the GUI can say "unknown" with a reason.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProbeNote:
    """What one probe did: ok, failed, timed out, or not available here; and why."""

    probe: str  # "nvidia-smi", "system_profiler SPDisplaysDataType", "/proc/meminfo" ...
    status: str  # "ok" | "failed" | "timeout" | "unavailable"
    detail: str = ""
    duration_s: float | None = None


@dataclass(frozen=True)
class CpuInfo:
    model: str | None  # "AMD Ryzen 9 7950X 16-Core Processor"
    vendor: str | None = None  # "AMD", "Intel", "Apple", "ARM"
    architecture: str | None = None  # "x86_64", "arm64"
    physical_cores: int | None = None
    logical_cores: int | None = None
    performance_cores: int | None = None  # Apple / Intel hybrid P-cores where known
    efficiency_cores: int | None = None
    sockets: int | None = None
    max_mhz: float | None = None
    features: tuple[str, ...] = ()  # llama.cpp-relevant: AVX, AVX2, FMA, F16C, AVX512F, NEON, ...
    catalogue_id: str | None = None
    # Added for hardware detection: the OS's own core tiers, fastest first, where it names them
    # (macOS hw.perflevelN: ("Super", 6), ("Performance", 12) on an M5 Max; Intel hybrid:
    # ("P-core", 8), ("E-core", 8)). performance/efficiency_cores above summarise these.
    core_types: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class MemoryModule:
    size_bytes: int | None
    type: str | None  # "DDR5", "LPDDR5X"
    speed_mts: int | None  # configured (running) speed in MT/s
    rated_speed_mts: int | None = None
    locator: str | None = None
    data_width_bits: int | None = None


@dataclass(frozen=True)
class RamInfo:
    total_bytes: int | None
    available_bytes: int | None = None
    type: str | None = None
    speed_mts: int | None = None
    modules: tuple[MemoryModule, ...] = ()
    channels: int | None = None  # populated channels where known (or estimated, see notes)
    theoretical_bandwidth_bytes_per_s: float | None = None
    theoretical_bandwidth_source: str | None = None  # how it was derived, in words
    # Added for hardware detection: the populated data bus in bits (2 x 64 for dual-channel DDR5,
    # 8 x 16 = 128 for LPDDR5 listed as 16-bit devices); `channels` counts 64-bit equivalents.
    bus_width_bits: int | None = None
    # Added for hardware detection: the probe's copy figure (bytes moved, read + write counted);
    # measured_bandwidth_bytes_per_s above is the read figure, the one decode depends on.
    measured_copy_bandwidth_bytes_per_s: float | None = None
    measured_bandwidth_bytes_per_s: float | None = None
    measured_probe_s: float | None = None


@dataclass(frozen=True)
class GpuInfo:
    name: str
    vendor: str | None = None  # "NVIDIA", "AMD", "Intel", "Apple", "virtual"
    vram_total_bytes: int | None = None
    vram_free_bytes: int | None = None
    unified_memory: bool = False
    gpu_cores: int | None = None  # Apple GPU cores
    driver: str | None = None
    pci_id: str | None = None  # "10de:2684"
    bus_width_bits: int | None = None
    memory_clock_mhz: float | None = None
    bandwidth_bytes_per_s: float | None = None  # from bus width x clock, where the driver tells
    bandwidth_source: str | None = None
    is_virtual: bool = False
    source: str = ""  # which probe found it
    catalogue_id: str | None = None
    # Added for hardware detection: "0000:01:00.0"; merges sources and tells identical cards apart
    pci_bus_id: str | None = None
    # the host link, as the driver reports its widest: what a hybrid prompt's weight copies
    # cross (PCIe generation and lanes; None where the driver does not say)
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    # Added for hardware detection: a caveat in words (MIG slices, one die of an MI250, capped
    # AdapterRAM, estimated unified-memory share ...), or None
    note: str | None = None


@dataclass(frozen=True)
class LlamaDevice:
    """One device as llama.cpp lists it (ggml_backend_dev_*)."""

    name: str = ""
    description: str = ""
    type: str = ""  # "CPU" | "GPU" | "iGPU" | "accelerator"
    memory_free_bytes: int = 0
    memory_total_bytes: int = 0


# llama.cpp's GPU backends by the names people know them by (BackendInfo.backends uses these)
BACKEND_NAMES = {
    "cuda": "CUDA",
    "metal": "Metal",
    "rocm": "ROCm",
    "vulkan": "Vulkan",
    "sycl": "SYCL",
}


@dataclass(frozen=True)
class BackendInfo:
    """What the installed llama.cpp was built with, as llama.cpp itself reports."""

    available: bool
    backends: tuple[str, ...] = ()  # "CPU", "Metal", "CUDA", "Vulkan", "ROCm", "SYCL"
    gpu_offload: bool = False
    devices: tuple[LlamaDevice, ...] = ()  # llama.cpp's device list
    system_info: str = ""
    llama_cpp_python_version: str | None = None
    error: str | None = None
    llama_cpp_commit: str | None = None  # the llama.cpp commit the wheel vendors

    @property
    def has_amx(self) -> bool:
        """Was this llama.cpp built with its AMX kernels (and does the CPU have AMX)?"""
        return "AMX_INT8 = 1" in self.system_info


@dataclass(frozen=True)
class HardwareReport:
    os: str  # "Linux", "Darwin", "Windows"
    os_version: str
    machine: str | None  # "MacBookPro18,2", or None
    cpu: CpuInfo
    ram: RamInfo
    gpus: tuple[GpuInfo, ...] = ()
    backend: BackendInfo | None = None
    notes: tuple[ProbeNote, ...] = field(default=())
    detected_at: float | None = None  # unix time

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        # flat keys the command-line contract promises
        d["measured_bandwidth_bytes_per_s"] = self.ram.measured_bandwidth_bytes_per_s
        d["measured_bandwidth_probe_s"] = self.ram.measured_probe_s
        return d
