"""The device catalogue: curated, cited specifications loaded from device_db/ (JSON, no pickles).

Names resolve the way people and drivers write them: case- and punctuation-insensitive, with
or without the vendor prefix ("NVIDIA GeForce RTX 4090", "RTX 4090"), with a memory-size
suffix ("GeForce RTX 4090 24GB"), and Apple chips with their GPU-core count ("Apple M2 Max
38-core GPU", "M2 Max (38-core GPU)"). An unknown name fails with the closest names.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

GB = 1e9
GIB = 1024**3

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


class UnknownDeviceError(ValueError):
    """A device name that resolves to nothing; the message lists the closest names."""


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
        return max(self.memory_sizes_gb) * GIB

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


# -------------------------------------------------------------------------------------------
# name normalisation
# -------------------------------------------------------------------------------------------

_TRADEMARKS = re.compile(r"\((?:r|tm|c)\)|[®™©]", re.IGNORECASE)
_CORES = re.compile(r"(\d+)\s*-?\s*core\s*gpu|(\d+)\s*-?\s*core(?=\s*(?:\)|,|$))", re.IGNORECASE)
_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b", re.IGNORECASE)
_PAREN = re.compile(r"\(([^)]*)\)")
_VENDOR_WORDS = {
    "nvidia",
    "geforce",
    "amd",
    "ati",
    "intel",
    "apple",
    "corporation",
    "graphics",
    "tesla",
    "the",
}


def _basic(text: str) -> str:
    """Lower case, trademarks removed, punctuation folded to single spaces."""
    text = _TRADEMARKS.sub(" ", text.lower())
    text = re.sub(r"[^a-z0-9.+]+", " ", text)
    text = re.sub(r"(?<![0-9])\.|\.(?![0-9])", " ", text)
    return " ".join(text.split())


def _strip_vendor(key: str) -> str:
    words = [w for w in key.split() if w not in _VENDOR_WORDS]
    return " ".join(words)


@dataclass(frozen=True)
class _Query:
    base: str  # without vendor words, memory and core counts
    memory_gb: float | None
    gpu_cores: int | None


_FORM_FACTORS = {"pcie", "sxm", "sxm2", "sxm4", "sxm5", "nvl", "laptop", "mobile", "max-q"}


def _parse(name: str) -> _Query:
    text = name
    cores: int | None = None
    memory: float | None = None
    for m in _CORES.finditer(text):
        cores = int(m.group(1) or m.group(2))
    text = _CORES.sub(" ", text)
    for m in _MEMORY.finditer(text):
        memory = float(m.group(1))
    text = _MEMORY.sub(" ", text)

    # what is left in parentheses is a qualifier ("form factor not stated"), not part of the
    # name, except a form factor ("(PCIe per one copy)")
    def keep_form_factor(m: re.Match[str]) -> str:
        return " " + " ".join(w for w in _basic(m.group(1)).split() if w in _FORM_FACTORS) + " "

    text = _PAREN.sub(keep_form_factor, text)
    base = _strip_vendor(_basic(text))
    base = re.sub(r"\bwith\b", " ", base)
    return _Query(" ".join(base.split()), memory, cores)


# -------------------------------------------------------------------------------------------
# the catalogue
# -------------------------------------------------------------------------------------------


class Catalogue:
    """All devices, with name resolution and search."""

    def __init__(self, devices: list[Device]):
        self.devices = devices
        self._by_id = {d.id: d for d in devices}
        self._order = {d.id: i for i, d in enumerate(devices)}
        self._exact: dict[str, Device] = {}
        self._stripped: dict[str, list[Device]] = {}
        self._base: dict[str, list[Device]] = {}
        for d in devices:
            for n in (d.name, *d.aliases, d.id.replace("-", " ")):
                self._exact.setdefault(_basic(n), d)
                stripped = _strip_vendor(_basic(n))
                if d not in self._stripped.setdefault(stripped, []):
                    self._stripped[stripped].append(d)
                base = _parse(n).base
                if d not in self._base.setdefault(base, []):
                    self._base[base].append(d)

    def __len__(self) -> int:
        return len(self.devices)

    def __iter__(self):
        return iter(self.devices)

    def by_id(self, device_id: str) -> Device | None:
        return self._by_id.get(device_id)

    def try_resolve(self, name: str) -> Device | None:
        """The device `name` means, or None."""
        if not name or not name.strip():
            return None
        if name in self._by_id:
            return self._by_id[name]
        key = _basic(name)
        if key in self._exact:
            return self._exact[key]
        stripped = _strip_vendor(key)
        hits = self._stripped.get(stripped, [])
        if len(hits) == 1:
            return hits[0]
        q = _parse(name)
        candidates = list(self._base.get(q.base, []))
        if not candidates and q.base:
            # "A100 80GB": every device whose name holds all the words, fewest extra words first
            words = set(q.base.split())
            scored = sorted(
                (
                    (len(set(base.split()) - words), self._order[d.id], d)
                    for base, devices in self._base.items()
                    if words <= set(base.split())
                    for d in devices
                ),
                key=lambda item: item[:2],
            )
            seen: list[Device] = []
            for _, _, d in scored:
                if d not in seen:
                    seen.append(d)
            candidates = seen
        if not candidates:
            return None
        if q.gpu_cores is not None:
            candidates = [d for d in candidates if d.gpu_cores in (None, q.gpu_cores)]
        if q.memory_gb is not None and len(candidates) > 1:
            fitting = [d for d in candidates if q.memory_gb in d.memory_sizes_gb]
            candidates = fitting or candidates
        if not candidates:
            return None
        if len(candidates) > 1 and all(d.gpu_cores for d in candidates):
            # an Apple chip named without its GPU cores: the full variant, as sold most often
            return max(candidates, key=lambda d: d.gpu_cores or 0)
        return candidates[0]

    def resolve(self, name: str) -> Device:
        """The device `name` means; unknown names raise UnknownDeviceError with suggestions."""
        device = self.try_resolve(name)
        if device is not None:
            return device
        raise UnknownDeviceError(
            f"Unknown device '{name}'. Closest: {', '.join(self.closest(name))}. "
            "Run 'advisor devices --search TEXT' to look one up."
        )

    def closest(self, name: str, n: int = 4) -> list[str]:
        key = _parse(name).base or _basic(name)
        names = {}
        for d in self.devices:
            for label in (d.name, *d.aliases):
                names.setdefault(_parse(label).base, d.name)
        matches = difflib.get_close_matches(key, list(names), n=n * 3, cutoff=0.3)
        out: list[str] = []
        for m in matches:
            if names[m] not in out:
                out.append(names[m])
        return out[:n] or [d.name for d in self.devices[:n]]

    def search(self, text: str) -> list[Device]:
        """Devices matching `text`: the one it resolves to first, then name/alias/id matches."""
        found: list[Device] = []
        exact = self.try_resolve(text)
        if exact:
            found.append(exact)
        words = _basic(text).split()
        for d in self.devices:
            hay = " ".join(_basic(x) for x in (d.name, *d.aliases, d.id, d.vendor, d.device_class))
            if all(w in hay for w in words) and d not in found:
                found.append(d)
        return found


def _default_folder() -> Path:
    env = os.environ.get("ADVISOR_DEVICE_DB")
    if env:
        return Path(env)
    return Path(str(resources.files("advisor.device_db").joinpath("devices")))


def load_records(folder: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The raw records of every catalogue file, in file order."""
    base = Path(folder) if folder else _default_folder()
    records: list[dict[str, Any]] = []
    for path in sorted(base.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        records.extend(data["devices"])
    return records


@cache
def _load_cached(folder: str) -> Catalogue:
    return Catalogue([Device.from_record(r) for r in load_records(folder)])


def load_catalogue(folder: str | os.PathLike[str] | None = None) -> Catalogue:
    """The device catalogue (cached per folder)."""
    return _load_cached(str(Path(folder) if folder else _default_folder()))
