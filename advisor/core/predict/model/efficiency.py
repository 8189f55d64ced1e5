"""The share of a device's ceiling llama.cpp reaches: a hierarchical (shrinkage) model.

For decode the share is of the memory bandwidth, for prefill of the usable compute (the peak of
the precision the backend's kernels really run in, from the catalogue's backend-path table).
Its logarithm is a sum of terms, each pulled toward zero by a ridge penalty, so a term counts
in proportion to the data behind it:

    log share = backend + class + backend x class + device + device x backend
              + quant kind (+ per backend) + MoE + build era [+ covariates]

A device with published results gets its own term; one without falls back on its class (GeForce
GDDR, workstation, datacenter HBM, Apple by generation, AMD Radeon / Instinct, Intel dGPU,
unified-memory APU, CPU by memory type and channels), and a class without data on its backend.
Predictions are for today's llama.cpp (the era term at "current").

The penalties are chosen by held-out error, not fit: `holdout` leaves each device out in turn
(its own rows never inform its own prediction), and `choose_penalties` keeps the penalties whose
held-out errors are smallest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from advisor.core.catalogue.device import Device

OLD_NVIDIA_ARCHS = frozenset({"kepler", "maxwell", "pascal"})  # no tensor cores, dp4a at best


def efficiency_class(device: Device) -> str:
    """The class whose efficiency a device without data of its own borrows."""
    c = device.device_class
    if c in ("nvidia_consumer", "nvidia_laptop"):
        return "geforce"
    if device.vendor.lower() == "nvidia" and (device.arch or "") in OLD_NVIDIA_ARCHS:
        return "nv-pre-volta"
    if c == "nvidia_datacenter":
        return "nv-hbm" if device.memory_type.upper().startswith("HBM") else "nv-dc-gddr"
    if c == "nvidia_workstation":
        return "nv-workstation"
    if c == "nvidia_embedded":
        return "nv-embedded"
    if c == "apple_soc":
        # the tier, not the generation (that is the architecture term): an Ultra's two dies
        # reach a smaller share of their bandwidth than a base chip's one
        tier = re.search(r"-(pro|max|ultra)-", device.id)
        return f"apple-{tier.group(1) if tier else 'base'}"
    if c == "amd_datacenter":
        return "amd-instinct"
    if c in ("amd_consumer", "amd_workstation"):
        return "amd-radeon"
    if c == "amd_apu":
        return "apu"
    if c == "intel_arc":
        return "intel-dgpu"
    if c == "intel_igpu":
        return "intel-igpu"
    if device.is_cpu:
        channels = device.memory_channels or 2
        width = "1-2ch" if channels <= 2 else ("4ch" if channels <= 4 else "8ch+")
        return f"cpu-{device.memory_type.lower()}-{width}"
    return c


def class_family(device: Device) -> str:
    """A coarser level above the class (Apple of any tier, CPUs of any memory)."""
    cls = efficiency_class(device)
    return cls.split("-")[0] if cls.startswith(("apple", "cpu")) else cls


QUANT_KINDS = {
    "f32": "float", "f16": "float", "bf16": "float",
    "q8_0": "q8",
    "q4_0": "legacy", "q4_1": "legacy", "q5_0": "legacy", "q5_1": "legacy", "iq4_nl": "legacy",
    "mxfp4": "mxfp4", "mxfp4_moe": "mxfp4",
}  # fmt: skip


def quant_kind(label: str) -> str:
    """float, q8, legacy (Q4_0...), kquant (Q2_K-Q6_K, the IQ types) or mxfp4: the kernels
    llama.cpp runs differ between these, and so does the share of the ceiling they reach."""
    return QUANT_KINDS.get(label.lower(), "kquant")


@dataclass(frozen=True)
class Key:
    """What an efficiency depends on, for one row or one prediction."""

    device: Device
    backend: str
    quant_kind: str  # float, q8, legacy, kquant, mxfp4
    moe: bool
    era: str = "current"  # current | old | unknown
    # continuous terms: (name, penalty kind, value)
    covariates: tuple[tuple[str, str, float], ...] = ()
    source: str = ""  # where a row was published (its conditions); "" for a prediction


def features(k: Key) -> dict[str, tuple[str, float]]:
    """Feature name -> (penalty kind, value) of a key."""
    cls, family, b, d = efficiency_class(k.device), class_family(k.device), k.backend, k.device.id
    f: dict[str, tuple[str, float]] = {
        f"b:{b}": ("backend", 1.0),
        f"f:{family}": ("class", 1.0),
        f"bf:{b}:{family}": ("class", 1.0),
        f"c:{cls}": ("class", 1.0),
        f"a:{k.device.arch or cls}": ("class", 1.0),
        f"ba:{b}:{k.device.arch or cls}": ("class", 1.0),
        f"bc:{b}:{cls}": ("class", 1.0),
        f"d:{d}": ("device", 1.0),
        f"db:{d}:{b}": ("device", 1.0),
        f"q:{k.quant_kind}": ("quant", 1.0),
        f"bq:{b}:{k.quant_kind}": ("quant", 1.0),
    }
    if k.moe:
        f["moe"] = ("quant", 1.0)
        f[f"bmoe:{b}"] = ("quant", 1.0)
    if k.era != "current":
        f[f"era:{k.era}"] = ("quant", 1.0)
        f[f"bera:{b}:{k.era}"] = ("quant", 1.0)
        # a device's rows from other builds may sit apart from its current ones: this term
        # takes that, so they do not move the device's own (current) term as much
        if k.era == "old":
            f[f"dera:{d}:{k.era}"] = ("device", 1.0)
    for name, kind, value in k.covariates:
        f[f"cov:{b}:{name}"] = (kind, value)
    if k.source:
        f[f"s:{k.source}"] = ("source", 1.0)
    if DROPPED:
        f = {n: v for n, v in f.items() if n.split(":")[0] not in DROPPED}
    return f


DROPPED: set[str] = set()  # feature families left out (held-out experiments)


@dataclass(frozen=True)
class RidgeFit:
    """Coefficients by feature name; a feature never seen contributes nothing."""

    coef: dict[str, float]
    penalties: dict[str, float] = field(default_factory=dict)

    def log_share(self, key: Key) -> float:
        return sum(self.coef.get(name, 0.0) * v for name, (_, v) in features(key).items())
