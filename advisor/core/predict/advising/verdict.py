"""The upgrade verdict: how much faster a target device is than the current one, per workload,
and one sentence that says what limits the current device and what the upgrade changes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from advisor.core.catalogue.prices import Price
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.advising.feel import Waits, feel_sentence, seconds
from advisor.core.predict.conditions.workloads import PRESETS, Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.projecting.bases import basis_rank
from advisor.core.predict.projecting.projection import Projection, Target, project
from advisor.core.predict.projecting.projection_types import beyond_context_clause
from advisor.core.predict.projecting.reference import Reference


@dataclass(frozen=True)
class WorkloadGain:
    workload: str
    label: str
    speedup: float | None  # request time before / after
    prefill_speedup: float | None
    decode_speedup: float | None
    bound_by: str  # "prefill" or "decode": what dominates the time on the current device
    hours_saved_per_day: float | None
    fits: str
    # without a speed-up: why ("source": the current device cannot run it, "target": the new
    # one cannot, "estimate": no compute figure to time the prompt)
    missing: str = ""
    limited_by: str = ""  # what caps decode on the current device: bandwidth, compute, a spill
    # the waits behind the speed-up, and what a person would notice (feel.py)
    before_s: float | None = None
    after_s: float | None = None
    first_before_s: float | None = None
    first_after_s: float | None = None
    feel: str = ""


@dataclass(frozen=True)
class Verdict:
    source: str
    target: str
    gains: tuple[WorkloadGain, ...]
    price: Price | None
    price_per_speedup_usd: float | None  # price / (speed-up - 1) on the chosen workload
    sentence: str
    basis: str
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["price"] = self.price.to_json() if self.price else None
        out["price_usd"] = self.price.usd if self.price else None  # the key before prices had kinds
        return out

    @property
    def price_sentence(self) -> str:
        """'$5,258 (new, 2026-09), $1,140 per 1x of speed-up.' ('' without a price)."""
        if self.price is None:
            return ""
        per = self.price_per_speedup_usd
        return f"${self.price.usd:,.0f} ({self.price.label})" + (
            f", ${per:,.0f} per 1x of speed-up." if per else "."
        )


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _name(t: Target) -> str:
    """'GeForce RTX 3090 x2': the device, and how many."""
    return t.device.name + (f" x{t.count}" if t.count > 1 else "")


def _without_speedup(
    w: Workload, b: Projection, missing: str, source: str, target: str, trained_tokens: int
) -> WorkloadGain:
    """A workload with no speed-up to state. Where only the current device cannot run the
    model, what the new one would do is still the answer."""
    feel = ""
    if missing == "context" and trained_tokens:
        beyond = beyond_context_clause(w.context_tokens(), trained_tokens)
        feel = f"{w.label}: {beyond}, so no speed is predicted."
    if missing == "source" and b.request_s and b.per_user_tps:
        each = " each" if w.concurrency > 1 else ""
        feel = (
            f"{w.label}: the {source} cannot run the model; on the {target} a whole answer "
            f"takes {seconds(b.request_s)} ({b.per_user_tps:,.0f} tokens/s{each})."
        )
    return WorkloadGain(
        w.id, w.label, None, None, None, "", None, b.fits, missing=missing,
        after_s=b.request_s, first_after_s=b.ttft_s, feel=feel,
    )  # fmt: skip


def upgrade_verdict(
    facts: ModelFacts,
    source: Target,
    target: Target,
    *,
    host: Host,
    reference: Reference | None = None,
    workloads: list[Workload] | None = None,
    focus: str = "chat",
    model: SpeedModel,
    price: Price | None = None,
) -> Verdict:
    """How much faster the target is than the source, per workload, and a one-sentence verdict;
    with the target's price (advisor.core.catalogue.prices.price_of), what a 1x costs."""
    workloads = workloads or list(PRESETS.values())
    gains = []
    basis = "measured"  # the weakest basis of any number the verdict rests on
    for w in workloads:
        a = project(facts, source, w, host=host, reference=reference, model=model)
        b = project(facts, target, w, host=host, reference=reference, model=model)
        basis = min(basis, a.basis, b.basis, key=basis_rank)
        if a.fits == "no" or b.fits == "no" or not a.request_s or not b.request_s:
            missing = (
                "source" if a.fits == "no" else "target" if b.fits == "no"
                else "context" if a.beyond_context or b.beyond_context else "estimate"
            )  # fmt: skip
            gains.append(
                _without_speedup(
                    w, b, missing, _name(source), _name(target), facts.context_length or 0
                )
            )
            continue
        prefill_time = a.ttft_s or 0.0
        bound = "prefill" if prefill_time > a.request_s / 2 else "decode"
        saved = (
            (a.wait_per_day_s - b.wait_per_day_s) / 3600
            if a.wait_per_day_s and b.wait_per_day_s
            else None
        )
        feel = feel_sentence(
            w.label, streamed=w.streamed, waits=Waits.between(a, b), target=_name(target)
        )
        gains.append(
            WorkloadGain(
                w.id,
                w.label,
                a.request_s / b.request_s,
                _ratio(b.prefill_tps, a.prefill_tps),
                _ratio(b.per_user_tps, a.per_user_tps),
                bound,
                saved,
                b.fits,
                limited_by=a.decode_limited_by,
                before_s=a.request_s,
                after_s=b.request_s,
                first_before_s=a.ttft_s,
                first_after_s=b.ttft_s,
                feel=feel,
            )
        )
    focus_gain = next((g for g in gains if g.workload == focus and g.speedup), None)
    per_speedup = (
        price.usd / (focus_gain.speedup - 1)
        if price and focus_gain and focus_gain.speedup and focus_gain.speedup > 1.01
        else None
    )
    sentence = _sentence(source.device.name, target.device.name, gains, focus)
    return Verdict(
        source.device.name, target.device.name, tuple(gains), price, per_speedup, sentence, basis
    )


def _sentence(source: str, target: str, gains: list[WorkloadGain], focus: str) -> str:
    usable = [g for g in gains if g.speedup]
    if not usable:
        reasons = {g.missing for g in gains}
        if reasons == {"target"}:
            return f"The model does not fit the {target}."
        if reasons == {"source"}:
            return f"The model does not fit the {source}, so there is nothing to compare with."
        if reasons == {"context"}:
            return "No comparison: these workloads need more context than the model was trained on."
        return (
            f"No comparison: the {source} or the {target} lacks a figure needed to time these "
            "workloads."
        )
    main = next((g for g in usable if g.workload == focus), usable[0])
    assert main.speedup is not None
    speed = _relative(main.speedup, "{:.1f}x faster than", "about as fast as",
                      "{:.1f}x slower than")  # fmt: skip
    parts = [f'For "{main.label}" the {target} is {speed} the {source} ({_bound(main)})']
    other = [g for g in usable if g.bound_by != main.bound_by]
    if other:
        best = max(other, key=lambda g: g.speedup or 0)
        change = _relative(best.speedup or 1.0, "gains {:.1f}x", "runs about as fast",
                           "runs {:.1f}x slower")  # fmt: skip
        parts.append(f'"{best.label}" is {_bound(best, short=True)} and {change}')
    text = "; ".join(parts) + "."
    for reason, who in (("target", "It"), ("source", f"The {source}")):
        names = [f'"{g.label}"' for g in gains if g.missing == reason]
        if names:
            text += f" {who} cannot run the model for {', '.join(names)}."
    beyond = [f'"{g.label}"' for g in gains if g.missing == "context"]
    if beyond:
        verb = "needs" if len(beyond) == 1 else "need"
        text += f" {', '.join(beyond)} {verb} more context than the model was trained on."
    return text


SAME_WITHIN = 0.05  # a speed-up within 5% either way reads "about as fast"


def _relative(speedup: float, faster: str, same: str, slower: str) -> str:
    """A speed-up in words: `faster` with the ratio, `same` within 5%, `slower` with its
    inverse (2.6x slower, never 'gains 0.4x')."""
    if speedup >= 1 + SAME_WITHIN:
        return faster.format(speedup)
    return same if speedup > 1 - SAME_WITHIN else slower.format(1 / speedup)


def _bound(gain: WorkloadGain, short: bool = False) -> str:
    """What limits the current device on this workload, in words."""
    if gain.bound_by == "prefill":
        return "compute-bound" if short else "prefill-bound: compute"
    limit = gain.limited_by or "bandwidth"
    words = {
        "bandwidth": "memory bandwidth",
        "compute": "compute, with many users at once",
    }.get(limit, f"the layers that spill to {limit}")
    if short:
        return {"bandwidth": "bandwidth-bound", "compute": "compute-bound"}.get(
            limit, f"limited by {words}"
        )
    return f"decode-bound: {words}"
