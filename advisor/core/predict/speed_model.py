"""The speed model, fitted on published llama-bench results.

Decode, per backend class (CUDA, Metal, ROCm, Vulkan, CPU):

    1 / tokens_per_s = bytes_per_token / (bandwidth x eff) + t_layer x n_layers

Streaming the weights and the KV cache at a fraction `eff` of the vendor bandwidth, plus a fixed
cost per layer per token (kernel launches and synchronisation, which is why small models reach a
smaller share of the bandwidth than large ones). A per-layer overhead fits the published
results better than one per token (leave-one-device-out error 6.6% against 7.2%), and it
carries over to deeper models honestly.

Prefill, per backend class and device group (GeForce, workstation, datacenter, Apple ...):

    tokens_per_s = eff_prefill x peak_flops / flops_per_token

where peak_flops is the dense FP16 tensor peak (FP32 accumulate) or, without matrix units,
the FP32 peak. Vendors count workstation and datacenter tensor peaks differently from GeForce
(full-rate FP32 accumulate, sparsity), so the efficiency is fitted per group.

Uncertainty: each class's band is the 5th-95th percentile of its leave-one-device-out errors,
so a class with scattered or few measurements gets a wide band. A class without published
measurements (CPU, SYCL) uses conservative defaults and is marked `spec-only`.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.catalogue.device import Device
from advisor.core.infra.paths import bundled
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape

BAND_QUANTILES = (0.05, 0.95)
MIN_BAND_SAMPLES = 8
REFERENCE_LAYERS = 32

# model names in the calibration set -> built-in shapes (for the KV cache and FLOPs)
CALIBRATION_SHAPES = {
    "LLaMA-2 7B": "llama-2-7b",
    "Llama 3 8B": "llama-3-8b",
    "Llama 3 70B": "llama-3-70b",
    "Llama 3.1 8B": "llama-3.1-8b",
    "TinyLlama 1.1B (OpenOrca)": "tinyllama-1.1b",
    "Llama 3.2 3B Instruct": "llama-3.2-3b",
    "Mistral 7B Instruct v0.2 (llama arch)": "mistral-7b",
    "LLaMA 13B": "llama-2-13b",
}

BACKENDS = ("cuda", "metal", "rocm", "vulkan", "sycl", "cpu")

# used where a backend has no published measurements: llama.cpp on CPUs typically streams at
# 60-80% of the DRAM bandwidth and reaches a small share of the FP32 peak in prefill
DEFAULT_DECODE_EFF = 0.65
DEFAULT_T_LAYER_S = 0.00002
DEFAULT_PREFILL_EFF = 0.25
DEFAULT_BAND = (0.6, 1.3)


def device_group(device: Device) -> str:
    """The group whose prefill efficiency a device shares."""
    cls = device.device_class
    if cls in ("nvidia_consumer", "nvidia_laptop"):
        return "geforce"
    return cls


@dataclass(frozen=True)
class Observation:
    """One published measurement, with what the model needs to explain it."""

    device: Device
    backend: str
    model: str
    quant: str
    decode_bytes: float  # weights + KV at the average decode depth
    n_layers: int
    prefill_flops_per_token: float
    tg_tps: float
    pp_tps: float
    confidence: str
    source_url: str


def _calibration_path() -> Path:
    return bundled("resources") / "data" / "llamacpp_calibration.csv"


def _digits(text: str, default: int) -> int:
    digits = "".join(ch for ch in text.split()[0] if ch.isdigit()) if text.strip() else ""
    return int(digits) if digits else default


def _device_ids() -> dict[str, str]:
    path = bundled("resources") / "data" / "calibration_device_ids.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))["devices"])


def _device_of(row: dict[str, str], catalogue: Catalogue) -> Device:
    """The catalogued device a calibration row was measured on: the mapping table first (a
    source's own device string), else the catalogue's resolver (which refuses to guess)."""
    ids = _device_ids()
    cores = (row.get("gpu_cores") or "").strip()
    device_id = ids.get(f"{row['device']}|{cores}") or ids.get(row["device"])
    device = catalogue.by_id(device_id) if device_id else None
    if device is not None:
        return device
    name = row["device"]
    if cores and "core" not in name:
        name += f" {cores}-core GPU"
    return catalogue.resolve(name)


def load_observations(
    path: str | Path | None = None, catalogue: Catalogue | None = None
) -> list[Observation]:
    """The calibration set: each published row resolved to a device and a model shape."""
    catalogue = catalogue or load_catalogue()
    out: list[Observation] = []
    with open(path or _calibration_path(), encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            device = _device_of(r, catalogue)
            facts = facts_from_shape(get_shape(CALIBRATION_SHAPES[r["model"]]), r["quant"])
            weights = float(r["model_size_gib"]) * 2**30
            n_gen = _digits(r["tg_test"], 128)
            n_prompt = _digits(r["pp_test"], 512)
            backend = r["backend"].split()[0].lower()
            out.append(
                Observation(
                    device=device,
                    backend=backend,
                    model=r["model"],
                    quant=r["quant"],
                    decode_bytes=weights + facts.kv_cache_bytes(n_gen // 2),
                    n_layers=facts.n_layers,
                    prefill_flops_per_token=facts.flops_per_token(n_prompt // 2),
                    tg_tps=float(r["tg_tps"]),
                    pp_tps=float(r["pp_tps"]),
                    confidence=r["confidence"],
                    source_url=r["source_url"],
                )
            )
    return out


@dataclass(frozen=True)
class DecodeParams:
    eff: float  # share of the vendor bandwidth streamed
    t_layer_s: float  # fixed cost per layer per token

    def tps(self, bytes_per_token: float, bandwidth_bytes_per_s: float, n_layers: int) -> float:
        return 1.0 / (
            bytes_per_token / (bandwidth_bytes_per_s * self.eff) + self.t_layer_s * n_layers
        )


@dataclass(frozen=True)
class SpeedModel:
    """Fitted parameters per backend class, and the uncertainty bands."""

    decode: dict[str, DecodeParams]
    # prefill: achieved FLOP/s = exp(offset) x (peak in TFLOP/s)^beta x 1e12, per backend
    prefill_beta: dict[str, float]
    prefill_offset: dict[str, float]  # per backend
    prefill_offset_group: dict[tuple[str, str], float]  # per (backend, prefill group)
    decode_band: dict[str, tuple[float, float]] = field(default_factory=dict)
    prefill_band: dict[str, tuple[float, float]] = field(default_factory=dict)
    n_devices: dict[str, int] = field(default_factory=dict)

    def calibrated(self, backend: str) -> bool:
        return backend in self.decode

    def decode_params(self, backend: str) -> DecodeParams:
        return self.decode.get(backend) or DecodeParams(DEFAULT_DECODE_EFF, DEFAULT_T_LAYER_S)

    def prefill_flops_rate(self, backend: str, device: Device, peak_flops: float) -> float:
        """The FLOP/s llama.cpp reaches in prefill on a device with this peak."""
        key = (backend, prefill_group(device))
        offset = self.prefill_offset_group.get(key, self.prefill_offset.get(backend))
        if offset is None:
            return DEFAULT_PREFILL_EFF * peak_flops
        beta = self.prefill_beta.get(backend, 1.0)
        return math.exp(offset) * (peak_flops / 1e12) ** beta * 1e12

    def decode_tps(
        self, backend: str, bytes_per_token: float, bandwidth: float, n_layers: int
    ) -> float:
        return self.decode_params(backend).tps(bytes_per_token, bandwidth, n_layers)

    def prefill_tps(
        self, backend: str, device: Device, peak_flops: float, flops_per_token: float
    ) -> float:
        return self.prefill_flops_rate(backend, device, peak_flops) / flops_per_token

    def band(self, kind: str, backend: str) -> tuple[float, float]:
        bands = self.decode_band if kind == "decode" else self.prefill_band
        return bands.get(backend, DEFAULT_BAND)


# -------------------------------------------------------------------------------------------
# fitting
# -------------------------------------------------------------------------------------------


def _decode_design(obs: list[Observation]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([o.decode_bytes / o.device.bandwidth_bytes_per_s for o in obs])
    layers = np.array([o.n_layers for o in obs], dtype=float)
    y = np.array([1.0 / o.tg_tps for o in obs])
    return x, layers, y


def _fit_decode(obs: list[Observation], pooled_t_layer: float = 0.0) -> DecodeParams:
    """Least squares on relative error of 1/tps = x/eff + t_layer x n_layers."""
    x, layers, y = _decode_design(obs)
    if len(obs) >= 3 and len(set(np.round(x / layers, 9))) >= 2:
        design = np.stack([x / y, layers / y], axis=1)
        (inv_eff, t_layer), *_ = np.linalg.lstsq(design, np.ones_like(y), rcond=None)
        if inv_eff >= 1.0 and t_layer >= 0:  # physical: eff <= 1, overhead >= 0
            return DecodeParams(float(1.0 / inv_eff), float(t_layer))
    # too few points, or an unphysical fit: keep the per-layer overhead every GPU backend
    # shares (kernel launches), and take the class's median share of the bandwidth
    streaming = y - pooled_t_layer * layers
    if np.all(streaming > 0):
        return DecodeParams(float(min(1.0, np.median(x / streaming))), pooled_t_layer)
    return DecodeParams(float(min(1.0, np.median(x / y))), 0.0)


def prefill_group(device: Device) -> str:
    """Devices whose prefill efficiency is alike: the device group, and whether the peak is a
    tensor (matrix unit) figure or an FP32 one."""
    return device_group(device) + ("" if device.fp16_tensor_tflops else "-fp32")


def _fit_prefill_backend(rows: list[Observation]) -> tuple[float, float, dict[str, float]]:
    """One backend: log(achieved FLOP/s) = offset[group] + beta x log(peak TFLOP/s).

    beta < 1 says the fastest chips reach a smaller share of their peak (llama.cpp's kernels
    do not saturate an H100 as they do an RTX 3090); it is fitted only when the backend has
    measurements over enough different peaks, else 1 (a constant share of the peak). Groups
    with two or more devices get their own offset; the others share the backend's.
    """
    x = np.array([math.log((o.device.peak_flops_per_s or 0.0) / 1e12) for o in rows])
    y = np.array([math.log(o.pp_tps * o.prefill_flops_per_token / 1e12) for o in rows])
    devices: dict[str, set[str]] = {}
    for o in rows:
        devices.setdefault(prefill_group(o.device), set()).add(o.device.id)
    groups = sorted(g for g, ids in devices.items() if len(ids) >= 2)
    beta = 1.0
    if len(rows) >= 6 and len(set(np.round(x, 6))) > 3:
        columns = [*groups, "_rest"]
        design = np.zeros((len(rows), len(columns) + 1))
        for r, o in enumerate(rows):
            g = prefill_group(o.device)
            design[r, columns.index(g) if g in groups else len(columns) - 1] = 1.0
            design[r, -1] = x[r]
        used = np.append(design[:, :-1].any(axis=0), True)
        coef, *_ = np.linalg.lstsq(design[:, used], y, rcond=None)
        beta = float(np.clip(coef[-1], 0.5, 1.0))
    residual = y - beta * x
    offset = float(np.median(residual))
    by_group = {
        g: float(
            np.median([residual[r] for r, o in enumerate(rows) if prefill_group(o.device) == g])
        )
        for g in groups
    }
    return beta, offset, by_group


def fit(obs: Iterable[Observation]) -> SpeedModel:
    """Fit the speed model on observations (no bands: see `fit_with_bands`)."""
    obs = list(obs)
    by_backend: dict[str, list[Observation]] = {}
    for o in obs:
        by_backend.setdefault(o.backend, []).append(o)
    pooled = _fit_decode(obs)
    prefill = {
        b: _fit_prefill_backend([o for o in rows if o.device.peak_flops_per_s])
        for b, rows in by_backend.items()
        if any(o.device.peak_flops_per_s for o in rows)
    }
    return SpeedModel(
        decode={b: _fit_decode(rows, pooled.t_layer_s) for b, rows in by_backend.items()},
        prefill_beta={b: p[0] for b, p in prefill.items()},
        prefill_offset={b: p[1] for b, p in prefill.items()},
        prefill_offset_group={(b, g): v for b, p in prefill.items() for g, v in p[2].items()},
        n_devices={b: len({r.device.id for r in rows}) for b, rows in by_backend.items()},
    )


def predict(model: SpeedModel, o: Observation) -> tuple[float, float]:
    """(decode tps, prefill tps) the model predicts for an observation's device and model."""
    tg = model.decode_tps(o.backend, o.decode_bytes, o.device.bandwidth_bytes_per_s, o.n_layers)
    peak = o.device.peak_flops_per_s or 0.0
    pp = (
        model.prefill_tps(o.backend, o.device, peak, o.prefill_flops_per_token)
        if peak
        else float("nan")
    )
    return tg, pp


def lodo_residuals(
    obs: list[Observation], fitter: Callable[[list[Observation]], SpeedModel] = fit
) -> list[tuple[Observation, float, float]]:
    """Leave one device out: fit without it, predict it. (obs, tg predicted, pp predicted)."""
    out = []
    for device_id in sorted({o.device.id for o in obs}):
        train = [o for o in obs if o.device.id != device_id]
        model = fitter(train)
        for o in obs:
            if o.device.id == device_id and model.calibrated(o.backend):
                tg, pp = predict(model, o)
                out.append((o, tg, pp))
    return out


def _bands(residuals: list[tuple[Observation, float, float]]) -> tuple[dict, dict]:
    """Per backend: multipliers (low, high) from the 5th-95th percentile of measured/predicted."""
    dec: dict[str, list[float]] = {}
    pre: dict[str, list[float]] = {}
    for o, tg, pp in residuals:
        dec.setdefault(o.backend, []).append(math.log(o.tg_tps / tg))
        if math.isfinite(pp):
            pre.setdefault(o.backend, []).append(math.log(o.pp_tps / pp))
    every_dec = [v for vs in dec.values() for v in vs]
    every_pre = [v for vs in pre.values() for v in vs]

    def band(values: list[float], fallback: list[float]) -> tuple[float, float]:
        pool = values if len(values) >= MIN_BAND_SAMPLES else fallback
        lo, hi = np.quantile(pool, BAND_QUANTILES)
        return float(math.exp(min(lo, 0.0))), float(math.exp(max(hi, 0.0)))

    return (
        {b: band(v, every_dec) for b, v in dec.items()},
        {b: band(v, every_pre) for b, v in pre.items()},
    )


def fit_with_bands(obs: list[Observation]) -> SpeedModel:
    """Fit on all observations; bands from their leave-one-device-out errors."""
    model = fit(obs)
    decode_band, prefill_band = _bands(lodo_residuals(obs))
    return SpeedModel(
        model.decode,
        model.prefill_beta,
        model.prefill_offset,
        model.prefill_offset_group,
        decode_band,
        prefill_band,
        model.n_devices,
    )


@cache
def default_model() -> SpeedModel:
    """The speed model fitted on the shipped calibration set (cached)."""
    return fit_with_bands(load_observations())
