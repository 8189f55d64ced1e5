"""What a projection is: the target (a device, how many, which backend, which memory size)
and the predicted figures for it, each with its basis and band."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import Host
from advisor.core.infra.errors import InputError
from advisor.core.predict.conditions.test_point import DEFAULT_UBATCH
from advisor.core.predict.physics.placement import Placement


class ProjectionError(InputError):
    """A projection that cannot be made (a backend the device does not run)."""


def several_of_a_chip_sentence(device: Device, count: int) -> str:
    return (
        f"{count}x {device.name}: it is not a graphics card, and llama.cpp splits a model over "
        "the cards in one computer, not over several computers; give one (e.g. '2x RTX 3090' "
        "for cards)."
    )


@dataclass(frozen=True)
class Target:
    device: Device
    count: int = 1
    backend: str | None = None
    memory_gb: float | None = None  # one memory option of the device; None: the smallest that fits
    # where the tensors go (physics/placement): None lets the projection place the model
    placement: Placement | None = None
    ubatch: int = DEFAULT_UBATCH  # llama.cpp's -ub: tokens per prompt micro-batch
    # the computer the card sits in, where it is not the projection's own host (an upgrade of
    # the host: more or faster RAM)
    host: Host | None = None


TRAINED_ON = "this model was trained on"

# a projection's fit in a table's words, and its order (best first)
FIT_WORDS = {"yes": "yes", "hybrid": "card + RAM", "partial": "partly", "no": "no"}
# ranks: a model that runs partly from system RAM runs, slower than one on the card alone
FIT_RANK = {"yes": 0, "hybrid": 1, "partial": 1, "no": 2}


def beyond_context_clause(context_tokens: int, trained_tokens: int) -> str:
    """'20,200 tokens of context is beyond the 8,192 this model was trained on'."""
    return f"{context_tokens:,} tokens of context is beyond the {trained_tokens:,} {TRAINED_ON}"


@dataclass(frozen=True)
class Projection:
    """One device's predicted performance for one model and workload."""

    device: str
    device_id: str
    count: int
    backend: str
    fits: str  # "yes" | "hybrid" (card + system RAM) | "partial" (a shared memory) | "no"
    memory_gb: float
    memory_needed_bytes: float
    offloaded_share: float  # share of the bytes on the device (1.0 when it fits)
    basis: str  # measured | published | modelled | spec-only | unsupported
    decode_tps: float | None = None
    decode_tps_low: float | None = None
    decode_tps_high: float | None = None
    prefill_tps: float | None = None
    prefill_tps_low: float | None = None
    prefill_tps_high: float | None = None
    decode_ceiling_tps: float | None = None
    prefill_ceiling_tps: float | None = None
    per_user_tps: float | None = None
    aggregate_tps: float | None = None
    ttft_s: float | None = None
    request_s: float | None = None
    wait_per_day_s: float | None = None
    decode_limited_by: str = ""
    bandwidth_bytes_per_s: float = 0.0
    peak_flops_per_s: float | None = None
    workload: str = ""
    bytes_per_step: float | None = None  # bytes one decode step reads, all streams together
    decode_basis: str = ""  # the decode figure's own basis (prefill may rest on less)
    prefill_basis: str = ""
    beyond_context: bool = False  # the workload's context exceeds the model's trained context
    published: dict[str, Any] | None = None  # the nearest shipped published figure
    # the llama.cpp builds the prediction is for: the newest in the published data
    build_era: str = ""
    # a model placed over the card and system RAM: what lives where, the bytes a token reads
    # from each, the command that runs it (projecting/hybrid.placement_block)
    placement: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()

    @property
    def context_note(self) -> str:
        """The note saying the workload is beyond the model's trained context ('' if not)."""
        if not self.beyond_context:
            return ""
        return next((n for n in self.notes if TRAINED_ON in n), "")

    def per_user_band(self) -> tuple[float, float] | None:
        """The band of each user's decode speed: the decode band (one stream's) carried to
        `per_user_tps`, which is lower when several users share the device."""
        if not (self.per_user_tps and self.decode_tps and self.decode_tps_low
                and self.decode_tps_high):  # fmt: skip
            return None
        scale = self.per_user_tps / self.decode_tps
        return self.decode_tps_low * scale, self.decode_tps_high * scale

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = list(self.notes)
        return d
