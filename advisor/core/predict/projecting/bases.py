"""What each projected number rests on, and how wide its band is.

A projection's numbers are `measured` (this device, this run, this test), `published`
(shipped llama.cpp results for this device and backend), `modelled` (none for the device,
its class has some, or this run's own figure carried along the model's curves to a test it
did not measure), `spec-only` (neither) or `unsupported`. The band of a measured number is the
run's own spread; of any other, the held-out errors of its basis, wider for each step beyond
what those errors cover (a mixture of experts, many streams, a deep context, spilled layers,
several cards).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.conditions.test_point import DEFAULT_UBATCH, TestPoint
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.bands import MOE_DEFAULT_WIDENING, moe_extra, widened
from advisor.core.predict.model.speed_model import BASES, SpeedModel
from advisor.core.predict.physics.memory import Fit
from advisor.core.predict.projecting.anchors import holding, published_ratios
from advisor.core.predict.projecting.hybrid import Placed
from advisor.core.predict.projecting.reference import Reference

MEASURED_FLOOR = 0.02  # a measured band is never narrower than +-2%
MEASURED_SINGLE_RUN = 0.05  # +-5% where the run did not repeat its tests
DEEP_CONTEXT = 16_384  # deeper than the published depth data mostly reaches
# extra half-widths (log) for extrapolations the held-out errors do not cover
WIDEN = {
    "batch": 0.12, "depth": 0.08, "spill": 0.25, "cards": 0.10, "moe": MOE_DEFAULT_WIDENING,
    # a hybrid placement on an assumed RAM bandwidth (dual-channel DDR4-3200 to DDR5-6400
    # spans 2x) or an assumed host link (PCIe 3.0 x16 to 5.0 x16 spans 4x)
    "ram": 0.35, "link": 0.35,
}  # fmt: skip


def basis_rank(basis: str) -> int:
    """Order of the bases, weakest first (for "the weakest basis a verdict rests on")."""
    return BASES.index(basis) if basis in BASES else -1


def same_model(measured: ModelFacts | None, projected: ModelFacts) -> bool:
    """Was the run made with this model (None: the reference did not say, so it was)?"""
    if measured is None or measured is projected:
        return True

    # not the name: a built-in shape and the random-weight file written from it differ there
    def key(f: ModelFacts) -> tuple[Any, ...]:
        return (f.architecture, f.n_params, f.weights_bytes, f.n_layers)

    return key(measured) == key(projected)


@dataclass
class Ratios:
    tg: float = 1.0
    pp: float = 1.0
    backend: str | None = None
    device_id: str | None = None
    # seconds per byte of KV cache beyond what the model predicts, measured deep in the
    # context on the reference device; it does not carry to other devices
    kv_seconds_per_byte: float = 0.0


@dataclass(frozen=True)
class Setup:
    """What a projection knows before it predicts: the device, its memory and the fit."""

    facts: ModelFacts
    device: Device
    count: int
    backend: str
    workload: Workload
    streams: int
    fit: Fit
    peak: float
    ratios: Ratios
    cache_type: str
    host: Host
    placed: Placed | None = None  # a model placed over the card and system RAM
    ubatch: int = DEFAULT_UBATCH  # tokens per prompt micro-batch (llama.cpp's -ub)

    def prefill_test(self) -> TestPoint:
        """The workload's prompt, in this setup's micro-batches."""
        return replace(self.workload.prefill_test(), ubatch=self.ubatch)

    @property
    def own_device(self) -> bool:
        """Is this the device (and backend) the user measured, as one card?"""
        return (
            self.ratios.device_id == self.device.id
            and self.ratios.backend == self.backend
            and self.count == 1
        )

    def carried(self, model: SpeedModel, ratio: float) -> float:
        """The part of a measured ratio that carries to this device."""
        if self.ratios.device_id is None:
            return 1.0
        if self.own_device:
            return ratio
        same = self.ratios.backend == self.backend
        return float(ratio ** model.transfer.get("same" if same else "cross", 0.0))


@dataclass(frozen=True)
class Bases:
    decode: str
    prefill: str
    band_tg: tuple[float, float]
    band_pp: tuple[float, float]


def measured_band(spread: float | None) -> tuple[float, float]:
    """The run's own spread as a factor each way (a speed as likely 1.07x lower as 1.07x
    higher): a run whose repetitions spread wider than their mean still has a low end above
    zero."""
    half = MEASURED_SINGLE_RUN if spread is None else max(MEASURED_FLOOR, spread)
    return 1.0 / (1.0 + half), 1.0 + half


def bases_for(s: Setup, model: SpeedModel, reference: Reference | None, notes: list[str]) -> Bases:
    """What the decode and prefill numbers rest on, and their bands (low, high multipliers)."""
    published = model.basis(s.device, s.backend)
    if published == "published" and s.placed is not None and s.placed.residency.hybrid:
        published = "modelled"  # the device's published results are all on the card alone
    decode_basis = prefill_basis = published
    band_tg = model.band("decode", s.backend, published)
    band_pp = model.band("prefill", s.backend, published)
    anchored = s.own_device and reference is not None and same_model(reference.facts, s.facts)
    if anchored and reference is not None:
        decode_basis, band_tg = own_basis(s, reference, published, "decode", band_tg)
        prefill_basis, band_pp = own_basis(s, reference, published, "prefill", band_pp)
    if s.count == 1 and s.fit.share_on_device == 1.0:  # holds its own published figures
        tg, pp = published_ratios(model, s.device, s.backend, s.facts, cache_type=s.cache_type,
                                  tg_ratio=s.carried(model, s.ratios.tg),
                                  pp_ratio=s.carried(model, s.ratios.pp))  # fmt: skip
        own = ("measured", "extrapolated")
        band_tg = band_tg if decode_basis in own else holding(band_tg, tg)
        band_pp = band_pp if prefill_basis in own else holding(band_pp, pp)
    if decode_basis not in ("measured", "extrapolated"):
        band_tg = widened(band_tg, extrapolations(s, model, "decode"))
    if prefill_basis not in ("measured", "extrapolated"):
        band_pp = widened(band_pp, extrapolations(s, model, "prefill"))
    carried = [
        k for k, b in (("decode", decode_basis), ("prefill", prefill_basis)) if b == "extrapolated"
    ]
    if carried:
        notes.append(extrapolated_sentence(s, carried))
        decode_basis, prefill_basis = (
            max(published, "modelled", key=basis_rank) if b == "extrapolated" else b
            for b in (decode_basis, prefill_basis)
        )
    elif "spec-only" in (decode_basis, prefill_basis):
        notes.append(
            f"No published llama.cpp {s.backend} results for this device or its class: the "
            "numbers rest on its specifications and the pooled efficiency, with a wide band."
        )
    elif published == "published":
        notes.append(f"Published data for this device: {model.builds(s.device, s.backend)}.")
    return Bases(decode_basis, prefill_basis, band_tg, band_pp)


def extrapolated_sentence(s: Setup, carried: list[str]) -> str:
    """Which numbers on the measured device are carried from the run, not measured."""
    w = s.workload
    parts = []
    for kind in carried:
        depth = w.decode_depth_tokens() if kind == "decode" else w.prefill_depth_tokens()
        users = f", {s.streams} users at once" if s.streams > 1 and kind == "decode" else ""
        parts.append(f"{kind} {depth:,} tokens into the context{users}")
    figures = "figure" if len(carried) == 1 else "figures"
    return (
        f"This run did not measure {' or '.join(parts)}: the run's own {figures} carried "
        "along the model's curve, with the run's band widened for the step."
    )


def own_basis(
    s: Setup, reference: Reference, published: str, kind: str, band: tuple[float, float]
) -> tuple[str, tuple[float, float]]:
    """A number on the device the user measured, with the same model: `measured` where the
    run measured this very test (one user, a depth within 2,048 tokens of a measured one),
    else `extrapolated` (this run's figure carried along the model's curve) with the run's
    band widened by the step; the device's own basis where the run did not measure the kind."""
    window = 2048
    if kind == "decode":
        if not reference.tg_tps:
            return published, band
        measured = [reference.tg_depth + reference.n_gen // 2]
        if reference.deep_tg_tps:
            measured.append(reference.deep_tg_depth + reference.n_gen // 2)
        depth, spread = s.workload.decode_depth_tokens(), reference.tg_spread
        same_test = s.streams == 1
    else:
        if not reference.pp_tps:
            return published, band
        measured, depth = [reference.n_prompt // 2], s.workload.prefill_depth_tokens()
        spread, same_test = reference.pp_spread, True
    own = measured_band(spread)
    near = min(abs(depth - d) for d in measured) <= window
    if same_test and near:
        return "measured", own
    widen = [] if near else [WIDEN["depth"]]
    if not same_test:
        widen.append(WIDEN["batch"])
    return "extrapolated", widened(own, widen)


def extrapolations(s: Setup, model: SpeedModel, kind: str) -> list[float]:
    """Extra half-widths, decode or prefill, for what the dense models' held-out errors do
    not cover: a mixture of experts (by its own held-out errors), many streams (decode),
    depth beyond the data, spill, several cards."""
    widen = []
    if s.facts.is_moe:
        fitted = model.moe_widening if kind == "decode" else model.moe_widening_prefill
        widen.append(moe_extra(fitted))
    if s.streams > 1 and kind == "decode":
        widen.append(WIDEN["batch"])
    if s.workload.decode_depth_tokens() > DEEP_CONTEXT:
        widen.append(WIDEN["depth"])
    if s.fit.share_on_device < 1.0:
        widen.append(WIDEN["spill"])
    if s.count > 1:
        widen.append(WIDEN["cards"])
    if s.placed is not None and s.placed.residency.hybrid:
        if kind == "decode" and s.host.bandwidth_basis == "assumed":
            widen.append(WIDEN["ram"])
        if kind == "prefill" and s.host.link_basis == "assumed":
            widen.append(WIDEN["link"])
    return widen
