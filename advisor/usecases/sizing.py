"""Sizing: how many of a device serve a workload's peak, for a time-to-first-token and a
reading-speed target, and which devices do it with one or two cards.

The model of a server (llama-server with one slot per user, continuous batching):

- Each copy of the model serves `users` = ceil(peak / copies) people at once. A copy lives on
  one card, or is split over 2, 4 or 8 cards when it does not fit on one (layers split; memory
  adds up, speed per stream does not).
- Decode per user is the projected batched decode at `users` streams, divided by `users`, at the
  depth of the 95th-percentile conversation (history + prompt).
- Time to first token at the 95th percentile = reading the 95th-percentile new prompt (history
  is in the slot's prompt cache) + the mean wait behind other people's prompts. Arrivals at the
  peak follow from Little's law (people in flight / time a request takes); the wait is that of
  an M/D/1 queue, rho * S / (2 (1 - rho)), with S the time to read a median prompt.
- It fits when the weights and the KV cache of all users (their 95th-percentile context) fit
  in the cards' memory, as the projection decides.

Every figure rests on the projection's basis (measured / published / modelled / spec-only);
the answer also says whether the low end of the decode band still meets the target.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.catalogue.device import Device
from advisor.core.catalogue.prices import Price, price_of
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import fmt_seconds
from advisor.core.infra.validate import number
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.advising.feel import READING_TPS, UNNOTICED_S
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.projecting.projection import Projection, Target, project
from advisor.core.predict.projecting.reference import Reference
from advisor.core.traffic import TrafficStats

DEFAULT_TTFT_S = 2.0 * UNNOTICED_S  # a first word within 2 s: the wait is felt, not resented
DEFAULT_MIN_TPS = READING_TPS  # faster than people read (feel.py gives the source)
MAX_CARDS = 8
MAX_TTFT_S = 3600.0
MAX_MIN_TPS = 10_000.0
SPLITS = (1, 2, 4, 8)  # cards one copy of the model is split over
SATURATED = 0.95  # prompt reading busier than this: the queue grows without bound


@dataclass(frozen=True)
class Load:
    """What sizing needs from a workload: how many at once, and how long their requests are."""

    peak_users: int
    prompt_p95: int
    prompt_median: int
    history_p95: int
    answer_median: int
    source: str  # where the figures come from, in words

    @classmethod
    def from_stats(cls, stats: TrafficStats, name: str) -> Load:
        peak = stats.peak_concurrency or (
            math.ceil(stats.busy_p90_concurrency) if stats.busy_p90_concurrency else 1
        )
        p95 = stats.prompt_tokens_p95 or stats.prompt_tokens_p90
        h95 = stats.history_tokens_p95
        if h95 is None:
            h95 = stats.history_tokens_p90
        return cls(
            peak_users=max(1, int(peak)),
            prompt_p95=max(1, round(p95)),
            prompt_median=max(1, round(stats.prompt_tokens_median)),
            history_p95=round(h95),
            answer_median=max(1, round(stats.answer_tokens_median)),
            source=f"'{name}': {stats.requests:,} requests, peak {peak} at once "
            f"({stats.concurrency_basis})",
        )

    @classmethod
    def from_workload(cls, w: Workload, peak_users: int | None = None) -> Load:
        return cls(
            peak_users=max(1, peak_users or w.concurrency),
            prompt_p95=max(1, w.prompt_tokens),
            prompt_median=max(1, w.prompt_tokens),
            history_p95=w.history_tokens,
            answer_median=max(1, w.answer_tokens),
            source=f"the '{w.label}' workload's figures",
        )


@dataclass(frozen=True)
class SizingTarget:
    ttft_p95_s: float = DEFAULT_TTFT_S
    min_decode_tps: float = DEFAULT_MIN_TPS

    def __post_init__(self) -> None:
        number("The time-to-first-token target", self.ttft_p95_s, 0, MAX_TTFT_S, unit="s")
        number("The decode-per-user target", self.min_decode_tps, 0, MAX_MIN_TPS, unit="tokens/s")


@dataclass(frozen=True)
class Option:
    """One way of using `cards` of the device: `copies` copies, each split over `split`."""

    cards: int
    copies: int
    split: int
    users_per_copy: int
    fits: str
    basis: str
    decode_per_user_tps: float | None = None
    decode_per_user_low_tps: float | None = None  # the low end of the band
    ttft_p95_s: float | None = None
    prompt_busy_share: float | None = None  # rho: share of time a copy spends reading prompts
    memory_needed_gb: float | None = None
    memory_gb: float | None = None
    meets: bool = False
    meets_at_low_end: bool = False
    why: str = ""


@dataclass(frozen=True)
class Sizing:
    device: str
    device_id: str
    load: Load
    target: SizingTarget
    cards: int | None  # None: not within MAX_CARDS
    chosen: Option | None
    tried: tuple[Option, ...] = field(default_factory=tuple)
    answer: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _people(n: int, word: str = "users") -> str:
    return f"{n} {'person' if word == 'people' else 'user'}" if n == 1 else f"{n} {word}"


def _users_do(n: int, plural: str, singular: str) -> str:
    """'2 users get', '1 user gets': the users and a verb that agrees with them."""
    return f"{_people(n)} {singular if n == 1 else plural}"


def _users_get(n: int, tps: float) -> str:
    """'2 users get 5.0 tokens/s each', '1 user gets 5.0 tokens/s'."""
    return f"{_users_do(n, 'get', 'gets')} {tps:.1f} tokens/s" + (" each" if n > 1 else "")


def _count(n: int, unit: str) -> str:
    """'1 card', '2 machines'."""
    return f"{n} {unit}{'s' if n != 1 else ''}"


def _unit(device: Device) -> str:
    """What is counted: graphics cards, or whole machines for a chip that holds the system's
    memory (llama.cpp splits a model over the cards in one computer, not over computers)."""
    return "card" if device.is_card else "machine"


def _layout(o: Option, unit: str = "card") -> str:
    if o.split == 1:
        return _count(o.cards, unit) + (
            f" ({o.copies} copies of the model, {o.users_per_copy} users each)"
            if o.copies > 1
            else ""
        )
    return f"{o.cards} cards ({o.copies} cop{'ies' if o.copies > 1 else 'y'} split over {o.split})"


def _evaluate(
    facts: ModelFacts, device: Device, load: Load, target: SizingTarget, host: Host,
    reference: Reference | None, copies: int, split: int, speed_model: SpeedModel,
) -> Option:  # fmt: skip
    users = math.ceil(load.peak_users / copies)
    w = Workload(
        "sizing", "Sizing", load.source,
        prompt_tokens=load.prompt_p95, answer_tokens=load.answer_median,
        history_tokens=load.history_p95, concurrency=users,
    )  # fmt: skip
    p: Projection = project(
        facts, Target(device, count=split), w, host=host, model=speed_model, reference=reference
    )
    base = dict(
        cards=copies * split, copies=copies, split=split, users_per_copy=users, fits=p.fits,
        basis=p.basis, memory_needed_gb=round(p.memory_needed_bytes / 1e9, 2),
        memory_gb=p.memory_gb * split,
    )  # fmt: skip
    if p.basis == "unsupported":
        return Option(**base, why=p.notes[0] if p.notes else "no backend runs this model there")
    if p.fits != "yes":
        return Option(
            **base,
            why=f"the model and the KV cache of {_people(users)} need "
            f"{p.memory_needed_bytes / 1e9:.1f} GB, more than {p.memory_gb * split:g} GB",
        )
    if not p.per_user_tps or not p.prefill_tps or p.beyond_context:
        return Option(**base, why=p.notes[-1] if p.notes else "no speed could be predicted")
    per_user = p.per_user_tps
    band = p.per_user_band()
    low = band[0] if band else None
    read_95 = load.prompt_p95 / p.prefill_tps
    read_mean = load.prompt_median / p.prefill_tps
    request_s = read_mean + load.answer_median / per_user
    rho = users / request_s * read_mean  # Little's law arrivals x service time
    if rho >= SATURATED:
        return Option(
            **base, decode_per_user_tps=round(per_user, 2), prompt_busy_share=round(rho, 3),
            why=f"{_users_do(users, 'send', 'sends')} prompts faster than one copy reads them "
            f"({rho:.0%} of its time)",
        )  # fmt: skip
    ttft = read_95 + rho * read_mean / (2 * (1 - rho))
    meets = per_user >= target.min_decode_tps and ttft <= target.ttft_p95_s
    misses = []
    if per_user < target.min_decode_tps:
        misses.append(f"{_users_get(users, per_user)}, below {target.min_decode_tps:g}")
    if ttft > target.ttft_p95_s:
        misses.append(
            f"the first token takes {fmt_seconds(ttft)} at the 95th percentile, over "
            f"{target.ttft_p95_s:g} s"
        )
    why = (
        "; ".join(misses)
        if misses
        else f"{_users_get(users, per_user)} and the first token in "
        f"{fmt_seconds(ttft)} at the 95th percentile"
    )
    return Option(
        **base, decode_per_user_tps=round(per_user, 2),
        decode_per_user_low_tps=round(low, 2) if low else None, ttft_p95_s=round(ttft, 3),
        prompt_busy_share=round(rho, 3), meets=meets,
        meets_at_low_end=meets and (low is None or low >= target.min_decode_tps), why=why,
    )  # fmt: skip


def size_for(
    facts: ModelFacts,
    device: Device,
    load: Load,
    target: SizingTarget,
    *,
    host: Host,
    speed_model: SpeedModel,
    reference: Reference | None = None,
    max_cards: int = MAX_CARDS,
) -> Sizing:
    """The fewest cards of `device` that serve `load` within `target`, and why fewer do not."""
    tried: list[Option] = []
    chosen: Option | None = None
    for cards in range(1, max_cards + 1):
        for split in SPLITS if device.is_card else (1,):
            if split > cards or cards % split:
                continue
            option = _evaluate(
                facts, device, load, target, host, reference, cards // split, split, speed_model
            )
            tried.append(option)
            if option.meets:
                chosen = option
                break
        if chosen is not None:
            break
    return Sizing(
        device.name, device.id, load, target, chosen.cards if chosen else None, chosen,
        tuple(tried), _answer(device, load, target, chosen, tried, max_cards),
    )  # fmt: skip


def size_named(
    facts: ModelFacts,
    name: str,
    load: Load,
    target: SizingTarget,
    *,
    catalogue: Catalogue,
    host: Host,
    choose: str,
    speed_model: SpeedModel,
) -> Sizing:
    """`size_for` the device `name` means. Where that is a chip's CPU, the answer names the
    chip's GPU too, and `choose` (the front end's words, "{}" for its name) says how to pick
    it."""
    device = catalogue.resolve(name)
    sizing = size_for(facts, device, load, target, host=host, speed_model=speed_model)
    chip = catalogue.chip_sentence(device, choose)
    return replace(sizing, answer=f"{sizing.answer} {chip}") if chip else sizing


def _answer(
    device: Device, load: Load, target: SizingTarget, chosen: Option | None,
    tried: list[Option], max_cards: int,
) -> str:  # fmt: skip
    goal = (
        f"{_people(load.peak_users, 'people')} at once, first token within {target.ttft_p95_s:g} s "
        f"(95th percentile) and at least {target.min_decode_tps:g} tokens/s each"
    )
    unit = _unit(device)
    if chosen is None:
        last = tried[-1].why if tried else "nothing could be projected"
        return (
            f"No setup of up to {max_cards} {device.name} {unit}s serves {goal}: "
            f"with {_count(max_cards, unit)}, {last}."
        )
    fewer = [o for o in tried if o.cards < chosen.cards]
    because = ""
    if fewer:
        best_fewer = fewer[-1]
        because = f" With {_layout(best_fewer, unit)}, {best_fewer.why}."
    caveat = ""
    if not chosen.meets_at_low_end:
        caveat = (
            f" At the low end of the prediction's band ({chosen.decode_per_user_low_tps:.1f} "
            f"tokens/s each) it would fall short: allow one more {unit} to be safe."
        )
    verb = "serves" if chosen.cards == 1 else "serve"
    return (
        f"{_layout(chosen, unit).capitalize()} of {device.name} {verb} {goal}: "
        f"{chosen.why} (basis: {chosen.basis}).{because}{caveat}"
    )


@dataclass(frozen=True)
class Server:
    """A catalogued device that serves the load with one or two cards (or machines)."""

    device: str
    device_id: str
    cards: int
    decode_per_user_tps: float
    ttft_p95_s: float
    basis: str
    price: Price | None  # prices.price_of: the same price as every other answer shows
    unit: str = "card"  # "machine" for a chip with the system's memory (see _unit)

    @property
    def price_usd(self) -> float | None:
        return self.price.usd if self.price else None

    @property
    def how_many(self) -> str:
        return _count(self.cards, self.unit)


def devices_that_serve(
    facts: ModelFacts,
    load: Load,
    target: SizingTarget,
    *,
    catalogue: Catalogue,
    host: Host,
    speed_model: SpeedModel,
    reference: Reference | None = None,
    max_cards: int = 2,
    user_prices: Mapping[str, float] | None = None,
) -> list[Server]:
    """Every catalogued device that meets the target with at most `max_cards` cards: fewest
    cards first, then the cheapest (launch price) first."""
    out = []
    for device in catalogue:
        if not device.backends:
            continue
        s = size_for(facts, device, load, target, host=host, reference=reference,
                     max_cards=max_cards, speed_model=speed_model)  # fmt: skip
        if s.chosen is None or s.chosen.decode_per_user_tps is None:
            continue
        price = price_of(device, s.chosen.cards, user_prices)
        out.append(
            Server(
                device.name,
                device.id,
                s.chosen.cards,
                s.chosen.decode_per_user_tps,
                s.chosen.ttft_p95_s or 0.0,
                s.chosen.basis,
                price,
                _unit(device),
            )
        )
    out.sort(key=lambda v: (v.cards, v.price_usd is None, v.price_usd or 0.0, v.device))
    return out
