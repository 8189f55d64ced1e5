"""Which compute llama.cpp's kernels really use on a device: the backend-path table.

The table (device_db/backend_paths.json, read from llama.cpp's source, each rule cited) says,
for each backend and device family, which precision prefill runs in for quantized and for
float (F16/BF16/F32) weights: CUDA's MMQ kernels use INT8 tensor cores from Turing on and
dp4a on Pascal; Vulkan dequantizes to FP16 for cooperative-matrix units and never uses XMX on
Intel Alchemist; SYCL's default build runs FP32 GEMM; CPUs use AMX, VNNI or maddubs... The
first rule whose conditions all hold wins, and the first of its precisions the device has a
figure for is the usable peak.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.infra.paths import bundled

# conditions the app can check on a device record; others (driver, build, matrix cores
# reported at run time) are unknown to a projection, so a rule that needs one is skipped
KNOWN_CONDITIONS = frozenset({"vendor", "arch", "class", "id", "simd_has"})
WEIGHTS = ("quantized", "float")


@dataclass(frozen=True)
class PathRule:
    """One row of the table."""

    id: str
    backend: str
    when: dict[str, tuple[str, ...]]
    weights: str
    precision: tuple[str, ...]
    kernel: str
    source: str
    note: str = ""

    def matches(self, device: Device) -> bool:
        """Do all of the rule's conditions hold for this device (unknowable ones: no)?"""
        for key, allowed in self.when.items():
            if key not in KNOWN_CONDITIONS:
                return False
            if key == "simd_has":
                if not set(allowed) & set(device.simd_extensions):
                    return False
                continue
            value = {"class": device.device_class}.get(key, getattr(device, key, None))
            if value not in allowed:
                return False
        return True


@dataclass(frozen=True)
class UsableCompute:
    """The compute llama.cpp can use for a model on a device and backend."""

    flops_per_s: float | None  # None: the device has no figure for any precision the rule names
    precision: str  # the device field it came from ("int8_tensor_tops") or ""
    rule: PathRule | None
    estimate: bool  # the figure is an estimate (Apple, CPUs: vendors publish none)

    @property
    def label(self) -> str:
        """'INT8 tensor cores (MMQ ...)' in words, for tooltips and notes."""
        if self.rule is None:
            return "no rule for this backend"
        return f"{PRECISION_WORDS.get(self.precision, self.precision)} ({self.rule.kernel})"


PRECISION_WORDS = {
    "fp32_tflops": "FP32",
    "fp16_tflops": "FP16 on the shader units",
    "fp16_tensor_tflops": "FP16 matrix units, FP32 accumulate",
    "fp16_tensor_tflops_fp16acc": "FP16 matrix units, FP16 accumulate",
    "bf16_tensor_tflops": "BF16 matrix units",
    "int8_tensor_tops": "INT8 matrix units",
    "int8_dot_tops": "INT8 dot products",
    "fp8_tensor_tflops": "FP8 matrix units",
    "fp4_tensor_tflops": "FP4 matrix units",
}


def _rule(raw: dict[str, Any]) -> PathRule:
    when = {k: tuple(v) if isinstance(v, list) else (v,) for k, v in raw["when"].items()}
    return PathRule(
        id=raw["id"],
        backend=raw["backend"],
        when=when,
        weights=raw["weights"],
        precision=tuple(raw["precision"]),
        kernel=raw["kernel"],
        source=raw["source"],
        note=raw.get("note", ""),
    )


@cache
def _rules(path: str) -> tuple[PathRule, ...]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return tuple(_rule(r) for r in data["rules"])


@cache
def _default_path() -> str:
    return str(bundled("device_db") / "backend_paths.json")


def backend_path_rules(path: str | Path | None = None) -> tuple[PathRule, ...]:
    """The table's rules in order (cached per file)."""
    return _rules(str(path) if path else _default_path())


def usable_compute(device: Device, backend: str, quantized: bool) -> UsableCompute:
    """The peak llama.cpp's prefill can use: the first matching rule's first precision the
    device has a figure for."""
    weights = "quantized" if quantized else "float"
    estimate = device.fp32_tflops_is_estimate
    for rule in backend_path_rules():
        if rule.backend != backend or rule.weights != weights or not rule.matches(device):
            continue
        for precision in rule.precision:
            value = device.peak(precision)
            if value:
                return UsableCompute(value, precision, rule, estimate)
        return UsableCompute(None, "", rule, estimate)
    return UsableCompute(None, "", None, estimate)
