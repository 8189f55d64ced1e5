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

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from advisor.core.catalogue.device import Device

OLD_NVIDIA_ARCHS = frozenset({"kepler", "maxwell", "pascal"})  # no tensor cores, dp4a at best
ROBUST_ITERATIONS = 4
HUBER_LOG = 0.15  # errors beyond 15% count linearly, not squared
# ridge penalties per kind of term (in units of one row's squared log error)
DEFAULT_PENALTIES = {
    "backend": 1e-4, "class": 4.0, "device": 2.0, "quant": 4.0, "cov": 20.0, "source": 2.0,
    "year": 20.0,
}  # fmt: skip


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


def fit_ridge(
    keys: Sequence[Key],
    y: Sequence[float],
    penalties: dict[str, float] | None = None,
    weights: Sequence[float] | None = None,
) -> RidgeFit:
    """Penalised least squares of y (log shares) on the keys' features."""
    penalties = penalties or DEFAULT_PENALTIES
    rows = [features(k) for k in keys]
    names = sorted({n for r in rows for n in r})
    index = {n: i for i, n in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    kinds = {}
    for i, r in enumerate(rows):
        for n, (kind, v) in r.items():
            x[i, index[n]] = v
            kinds[n] = kind
    w0 = np.asarray(weights if weights is not None else np.ones(len(rows)), dtype=float)
    target = np.asarray(y, dtype=float)
    lam = np.diag([penalties[kinds[n]] for n in names])
    w = w0
    for _ in range(ROBUST_ITERATIONS + 1):
        xtw = x.T * w
        coef = np.linalg.solve(xtw @ x + lam, xtw @ target)
        # Huber weights: a row far from the fit (a slow fork, a mislabelled device) counts
        # as if its error were HUBER_LOG, not in full
        residual = np.abs(target - x @ coef)
        w = w0 * np.minimum(1.0, HUBER_LOG / np.maximum(residual, 1e-12))
    return RidgeFit({n: float(c) for n, c in zip(names, coef, strict=True)}, dict(penalties))


@dataclass(frozen=True)
class Row:
    """One observation for the fit: its key, its log share, which source and device it is."""

    key: Key
    y: float
    source: str
    weight: float = 1.0


def _fit_rows(rows: Sequence[Row], penalties: dict[str, float]) -> RidgeFit:
    return fit_ridge(
        [r.key for r in rows], [r.y for r in rows], penalties, [r.weight for r in rows]
    )


def holdout(
    rows: Sequence[Row], penalties: dict[str, float], by: Callable[[Row], str]
) -> list[tuple[Row, float]]:
    """Leave each group (`by`: device id, or device and source) out in turn; (row, log error
    measured - predicted) for every held-out row."""
    out: list[tuple[Row, float]] = []
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(by(r), []).append(i)
    for members in groups.values():
        held = set(members)
        train = [r for i, r in enumerate(rows) if i not in held]
        if not train:
            continue
        model = _fit_rows(train, penalties)
        out += [(rows[i], rows[i].y - model.log_share(rows[i].key)) for i in members]
    return out


def by_device(r: Row) -> str:
    return r.key.device.id


def by_device_source(r: Row) -> str:
    return f"{r.key.device.id}|{r.source}"


def held_out_error(residuals: Iterable[tuple[Row, float]], current_only: bool = True) -> float:
    """The score penalties are chosen by: mean absolute log error, current builds."""
    errors = [abs(e) for r, e in residuals if not current_only or r.key.era == "current"]
    return float(np.mean(errors)) if errors else math.inf


def choose_penalties(
    rows: Sequence[Row], grid: dict[str, Sequence[float]], base: dict[str, float] | None = None
) -> dict[str, float]:
    """Coordinate search over the grid, one kind of penalty at a time, by held-out error."""
    best = dict(base or DEFAULT_PENALTIES)
    score = held_out_error(holdout(rows, best, by_device))
    for _ in range(2):
        for kind, values in grid.items():
            for v in values:
                trial = {**best, kind: v}
                s = held_out_error(holdout(rows, trial, by_device))
                if s < score - 1e-6:
                    best, score = trial, s
    return best
