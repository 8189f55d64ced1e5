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


# A CPU's int8 dot-product rate where none is published, as a multiple of its FP32 figure (an
# estimate too: cores x clock x FMA width). Every quantised kernel of llama.cpp's x86 backend
# can multiply with vpmaddubsw + vpmaddwd: 4 int8 multiply-adds in each 32-bit lane in two
# instructions on the FMA ports, where an FMA does one FP32 multiply-add in one: twice the FP32
# rate. VNNI's vpdpbusd does the 4 in one instruction, but llama.cpp issues it only for the
# legacy types (Q4_0, Q8_0, IQ4_NL, MXFP4: the cpu-avx512-vnni rule's note); K-quants keep the
# pair, so 2x is the rate all of them reach. Arm cores get the same 2x (SDOT does 4 per lane in
# one instruction, plain NEON's multiply-long 2): no Arm CPU has published rows to tell them
# apart, and one factor keeps their ranking against x86 what it was. Held out, the CPU rows'
# prefill errors fall with it (modelled: median 24% -> 14%).
CPU_INT8_PER_FP32 = 2.0
CPU_INT8_EXTENSIONS = ("AVX-512 VNNI", "AVX-VNNI", "AVX-512", "AVX2", "NEON")


def cpu_int8_factor(device: Device) -> tuple[float, str] | None:
    """(int8 operations per FP32 FLOP, the extension that gives them) for a CPU without a
    published int8 figure; None for other devices."""
    if not device.is_cpu or device.int8_dot_tops:
        return None
    has = set(device.simd_extensions)
    found = next((name for name in CPU_INT8_EXTENSIONS if name in has), None)
    return (CPU_INT8_PER_FP32, found) if found else None


def _peak(device: Device, precision: str) -> float | None:
    value = device.peak(precision)
    if value or precision != "int8_dot_tops":
        return value
    factor, fp32 = cpu_int8_factor(device), device.peak("fp32_tflops")
    return factor[0] * fp32 if factor and fp32 else None


def usable_compute(device: Device, backend: str, quantized: bool) -> UsableCompute:
    """The peak llama.cpp's prefill can use: the first matching rule's first precision the
    device has a figure for (a CPU's int8 rate estimated from its FP32 one where unpublished:
    CPU_INT8_PER_FP32)."""
    weights = "quantized" if quantized else "float"
    estimate = device.fp32_tflops_is_estimate
    for rule in backend_path_rules():
        if rule.backend != backend or rule.weights != weights or not rule.matches(device):
            continue
        for precision in rule.precision:
            value = _peak(device, precision)
            if value:
                return UsableCompute(value, precision, rule, estimate)
        return UsableCompute(None, "", rule, estimate)
    return UsableCompute(None, "", None, estimate)
