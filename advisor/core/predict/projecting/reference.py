"""The user's own measurement as the projections' reference, and the one answer to "which
device was this run measured on?".

Both front ends ask that question of a run (one from this machine, or one from History made on
another machine); `device_for_run` is the only place that answers it, so the command line and
every page of the app project the same run onto the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.catalogue.device import Device
from advisor.core.infra.units import GB, GiB
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.conditions.test_point import TestPoint
from advisor.core.predict.physics.placement import ALL_LAYERS, Placement
from advisor.core.runs.results import RunHardware, RunResult

MEASURED_DEVICE_URL = "https://llm-hardware-advisor.local/this-machine"


@dataclass(frozen=True)
class Reference:
    """The user's own measurement: device, backend, tokens/s and the test they came from."""

    device: Device
    backend: str
    tg_tps: float | None = None
    pp_tps: float | None = None
    tg_depth: int = 0
    n_gen: int = 128
    n_prompt: int = 512
    # the model the measurement was made with, where it is not the model being projected (a
    # run's efficiency carries over to other models; its bytes and FLOPs per token do not)
    facts: ModelFacts | None = None
    # decode measured again deep into the context (tg128@d4096): how much slower reading the
    # KV cache is on this device than bandwidth alone says (attention's own arithmetic)
    deep_tg_tps: float | None = None
    deep_tg_depth: int = 0
    cache_type: str = "f16"  # the KV cache type the run used
    # the relative half-width of the 95% interval of the measured decode and prefill means,
    # where the run repeated its tests (the measured band comes from these)
    tg_spread: float | None = None
    pp_spread: float | None = None
    # where the run kept the model (-ngl, --n-cpu-moe), where not every layer on the card: the
    # device's own projections use it, so the measured ratio compares like with like
    placement: Placement | None = None

    @property
    def prefill_test(self) -> TestPoint:
        """The test the prefill figure comes from (pp512 unless the run said otherwise)."""
        return TestPoint(prompt_tokens=self.n_prompt)

    @property
    def decode_test(self) -> TestPoint:
        """The test the decode figure comes from (tg128 from an empty cache by default)."""
        return TestPoint(generated_tokens=self.n_gen, depth=self.tg_depth)


def device_for_run(run: RunResult, catalogue: Catalogue) -> tuple[Device, str] | None:
    """(device, backend) a run was measured on.

    The device record saved with the run, refreshed from the catalogue when it is a catalogued
    GPU or chip (later catalogue figures win); a record made for this machine's CPU as saved.
    Runs saved before records were kept: the catalogue by id, then by name, then a record
    rebuilt from the run's hardware summary. None when none of them has a bandwidth."""
    hw = run.hardware
    saved: Device | None = None
    if hw.device:
        try:
            saved = Device.from_record(hw.device)
        except (KeyError, TypeError, ValueError):
            saved = None
    device = catalogue.by_id(saved.id) if saved is not None else None
    device = device or saved
    if device is None and hw.device_id:
        device = catalogue.by_id(hw.device_id)
    if device is None:
        device = catalogue.try_resolve(hw.device_name or run.config.device_name or "")
    if device is None:
        device = device_from_summary(hw)
    if device is None:
        return None
    return device, (hw.backend or device.usual_backend).lower()


def device_from_summary(hw: RunHardware) -> Device | None:
    """The device a saved run was measured on, rebuilt from the run's hardware summary when
    the catalogue does not know it (e.g. this machine's CPU). None without a bandwidth."""
    bandwidth = hw.spec_bandwidth_bytes_per_s or hw.measured_bandwidth_bytes_per_s
    if not bandwidth:
        return None
    ram = hw.ram_total_bytes or 16 * GiB
    return Device(
        id="measured-machine",
        vendor="unknown",
        name=str(hw.device_name or "the measured machine"),
        aliases=(),
        device_class=hw.device_class or "cpu_desktop",
        release_year=2020,
        memory_sizes_gb=(round(ram / GiB, 1),),
        memory_type="RAM",
        memory_bandwidth_gbs=bandwidth / GB,
        fp32_tflops=hw.peak_flops_per_s / 1e12 if hw.peak_flops_per_s else None,
        fp16_tensor_tflops=None,
        tdp_w=None,
        launch_price_usd=None,
        backends=((hw.backend or "cpu").lower(),),
        sources=(
            {
                "url": MEASURED_DEVICE_URL,
                "fields": ["all"],
                "note": "from the saved run's hardware summary",
            },
        ),
        simd=hw.simd,
        fp32_tflops_is_estimate=True,
    )


def reference_from_run(run: RunResult, device: Device, backend: str) -> Reference | None:
    """The user's measurement as the projection's reference: the shallowest one-stream decode,
    the deepest one (if the run went deep), prefill without context, and the run's own model."""
    facts = run.model
    layers, cpu_moe = run.config.gpu_layers, getattr(run.config, "cpu_moe", 0)
    placement = None
    if backend != "cpu" and ((layers is not None and layers < facts.n_layers) or cpu_moe):
        # the user kept layers or experts in RAM: the run is compared with the projection of
        # that placement (physics/placement), not with the card alone
        placement = Placement(ALL_LAYERS if layers is None else layers, cpu_moe)
    single = sorted(
        (t for t in run.tests if t.kind == "decode" and t.batch == 1 and t.tokens_per_s),
        key=lambda t: t.depth,
    )
    tg = single[0] if single else None
    deep = single[-1] if tg and len(single) > 1 and single[-1].depth > tg.depth else None
    pp = next((t for t in run.tests if t.kind == "prefill" and t.depth == 0), None)

    def spread(t: object) -> float | None:
        low, high = getattr(t, "ci95_low_tps", None), getattr(t, "ci95_high_tps", None)
        mean = getattr(t, "tokens_per_s", 0.0)
        return (high - low) / 2 / mean if low is not None and high is not None and mean else None

    return Reference(
        device,
        backend,
        tg.tokens_per_s if tg else None,
        pp.tokens_per_s if pp else None,
        tg.depth if tg else 0,
        tg.n_gen if tg else 128,
        pp.n_prompt if pp else 512,
        facts=facts,
        deep_tg_tps=deep.tokens_per_s if deep else None,
        deep_tg_depth=deep.depth if deep else 0,
        cache_type=run.config.cache_type_k or "f16",
        tg_spread=spread(tg) if tg else None,
        pp_spread=spread(pp) if pp else None,
        placement=placement,
    )


def reference_for_run(run: RunResult, catalogue: Catalogue) -> Reference | None:
    """The reference a run gives, on the device it was measured on (None when the run's device
    is unknown, it measured nothing usable, or it offloaded only part of the model)."""
    found = device_for_run(run, catalogue)
    if found is None:
        return None
    return reference_from_run(run, *found)
