"""The upgrade answer: the devices a hobbyist would buy, ranked for their model and workload,
with price, energy, the value frontier and what they would notice.

Two steps, so the app stays responsive: `project_candidates` runs the projections (tens of
milliseconds per device: a worker thread), `rank_candidates` adds prices, budget, energy and the
frontier to them (microseconds per device: on every keystroke in a price field).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.catalogue.dating import catalogue_date
from advisor.core.catalogue.device import Device
from advisor.core.catalogue.prices import Price, is_current, street_price
from advisor.core.hardware.profile import Host, MachineProfile
from advisor.core.infra.units import fmt_seconds
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.advising.feel import READING_TPS, Waits, would_notice
from advisor.core.predict.advising.value import Energy, energy_of, value_frontier
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.projecting.bases import basis_rank
from advisor.core.predict.projecting.hybrid import placement_sentence
from advisor.core.predict.projecting.projection import Projection, Target, project
from advisor.core.predict.projecting.projection_types import FIT_RANK
from advisor.core.predict.projecting.reference import Reference
from advisor.core.runs.results import RunResult
from advisor.usecases.compare import projection_table, verdict_source
from advisor.usecases.host_upgrades import (
    RUNS,
    HostUpgrade,
    RamPrice,
    host_upgrades,
    load_ram_price,
)
from advisor.usecases.prices import price_text, target_price

# what a hobbyist buys by default: current and last-generation consumer cards, Apple machines,
# unified-memory boxes, each with a current street price; workstation and datacenter cards,
# regional variants and cards without a current price are behind a toggle
HOBBY_CLASSES = frozenset({"nvidia_consumer", "amd_consumer", "intel_arc", "apple_soc", "amd_apu"})
PRO_CLASSES = frozenset(
    {"nvidia_workstation", "nvidia_datacenter", "amd_workstation", "amd_datacenter"}
)
FIRST_YEAR = 2020  # RTX 30 / RX 6000 / Apple M1 and later
# bought used, or boxes that sell as one: candidates whatever their class
ALSO = ("nvidia-tesla-p40", "nvidia-dgx-spark-gb10")
TWO_CARDS = ("nvidia-geforce-rtx-3090", "nvidia-tesla-p40", "amd-radeon-rx-7900-xtx")
COUNTRIES = {"CN": "China"}  # the regions the catalogue's `sold_in` names, in words


def _hobby(d: Device) -> bool:
    return (d.device_class in HOBBY_CLASSES and (d.release_year or 0) >= FIRST_YEAR) or (
        d.id in ALSO
    )


def aside_reason(d: Device, as_of: str) -> str:
    """Why a device is not on the default list ('' where it is): a workstation or datacenter
    card, a variant sold in one region only, or no current street price."""
    if d.device_class in PRO_CLASSES and d.id not in ALSO:
        return "a workstation or datacenter card"
    if d.sold_in:
        return "sold only in " + ", ".join(COUNTRIES.get(c, c) for c in d.sold_in)
    street = street_price(d)
    if street is None:
        return "no street price in the catalogue"
    if not is_current(street, as_of):
        return f"no street price since {street.date}"
    return ""


def candidate_targets(
    catalogue: Catalogue, include_pro: bool = False, as_of: str | None = None
) -> list[Target]:
    """The devices the answer ranks: the hobbyist set with a current street price (as of the
    catalogue's date), and, when asked, workstation and datacenter cards, regional variants
    and hobbyist cards without a current price; plus two-card setups people build from used
    cards."""
    as_of = catalogue_date().date if as_of is None else as_of
    out: list[Target] = []
    for d in catalogue:
        hobby = _hobby(d)
        if not (hobby or d.device_class in PRO_CLASSES):
            continue
        if include_pro or not aside_reason(d, as_of):
            out.append(_priced_target(d))
    for device_id in TWO_CARDS:
        d = catalogue.by_id(device_id)
        if d is not None and (include_pro or not aside_reason(d, as_of)):
            out.append(_priced_target(d, 2))
    return out


def _priced_target(d: Device, count: int = 1) -> Target:
    """The device in the memory size its street price buys (a base Mac, not the largest)."""
    memory = d.price_memory_gb if d.price_memory_gb and street_price(d) else None
    return Target(d, count=count, memory_gb=memory)


@dataclass(frozen=True)
class Projected:
    """The projections behind an answer (the slow part, made once per model/workload/run)."""

    facts: ModelFacts
    workload: Workload
    mine: Projection | None  # this machine
    mine_device: Device | None
    measured_watts: float | None  # this machine's decode power, from the run, where measured
    candidates: tuple[tuple[Target, Projection], ...]
    # upgrades of the computer (more or faster RAM, a second card, a card with RAM) that pay off
    host_options: tuple[HostUpgrade, ...] = ()
    ram_price: RamPrice | None = None
    as_of: str = ""  # the catalogue's date: a street price older than six months is not current


def project_candidates(
    facts: ModelFacts,
    workload: Workload,
    *,
    catalogue: Catalogue,
    host: Host,
    reference: Reference | None,
    this_machine: MachineProfile | None,
    speed_model: SpeedModel,
    include_pro: bool = False,
    measured_watts: float | None = None,
) -> Projected:
    as_of = catalogue_date().date
    targets = candidate_targets(catalogue, include_pro, as_of)
    table = projection_table(
        facts, workload, catalogue=catalogue, host=host, reference=reference, targets=targets,
        this_machine=this_machine, speed_model=speed_model,
    )  # fmt: skip
    rows = table.projections
    mine = rows[0] if table.this_machine_id is not None else None
    others = rows[1:] if mine is not None else rows
    mine_device = verdict_source(reference, this_machine).device if this_machine else None
    if this_machine is None and reference is not None:
        # no machine detected (the command line with a saved run): the run's own device is
        # what every card is compared with
        source = verdict_source(reference, None)
        mine = replace(
            project(facts, source, workload, host=host, reference=reference, model=speed_model),
            device=reference.device.name,
        )
        mine_device = source.device
    pairs = []
    by_key = {(t.device.id, t.count): t for t in targets}
    for p in others:
        target = by_key.get((p.device_id, p.count))
        if target is not None:
            pairs.append((target, p))
    own = verdict_source(reference, this_machine, host) if this_machine or reference else None
    ram = load_ram_price()
    options = host_upgrades(
        facts, workload, host=host, own=own, mine=mine, candidates=pairs, model=speed_model,
        reference=reference, ram=ram,
    )  # fmt: skip
    return Projected(
        facts, workload, mine, mine_device, measured_watts, tuple(pairs), options, ram, as_of
    )


@dataclass(frozen=True)
class Candidate:
    target: Target
    projection: Projection
    price: Price | None
    energy: Energy | None
    speedup: float | None  # this machine's time per answer / this device's
    seconds_saved: float | None  # per answer
    price_per_extra_tps: float | None  # price / (decode per user here - this machine's)
    within_budget: bool
    on_frontier: bool
    # a card ("card"), or an upgrade of the computer (host_upgrades.HostUpgrade.kind) named by
    # its label
    kind: str = "card"
    label: str = ""
    aside: str = ""  # why it is not on the default list (aside_reason); '' where it is

    @property
    def name(self) -> str:
        return self.label or self.projection.device


@dataclass(frozen=True)
class Ranking:
    mine: Projection | None
    mine_energy: Energy | None
    candidates: tuple[Candidate, ...]  # fitting ones first, then by time per answer


def _speed(p: Projection) -> float:
    """What the ranking and the frontier compare: answers per hour for this workload."""
    return 3600.0 / p.request_s if p.request_s else 0.0


def rank_candidates(
    projected: Projected,
    *,
    prices: Mapping[str, float],
    price_per_kwh: float | None,
    budget_usd: float | None,
) -> Ranking:
    """Prices, energy, budget and the value frontier on top of the projections (cheap)."""
    mine = projected.mine
    w = projected.workload
    mine_energy = (
        energy_of(mine, projected.mine_device, w, price_per_kwh, projected.measured_watts)
        if mine is not None and projected.mine_device is not None
        else None
    )
    rows: list[Candidate] = []
    options = [(u.target, u.projection, u) for u in projected.host_options]
    for target, p, option in [*((t, p, None) for t, p in projected.candidates), *options]:
        price = target_price(target, prices)
        if option is not None:
            card = target_price(Target(option.card), prices) if option.card is not None else None
            price = option.price(card, projected.ram_price or load_ram_price())
        energy = energy_of(p, target.device, w, price_per_kwh)
        speedup = saved = per_tps = None
        if mine is not None and mine.request_s and p.request_s:
            speedup = mine.request_s / p.request_s
            saved = mine.request_s - p.request_s
        if mine is not None and price and p.per_user_tps and mine.per_user_tps:
            extra = p.per_user_tps - mine.per_user_tps
            per_tps = price.usd / extra if extra > 0 else None
        within = budget_usd is None or (price is not None and price.usd <= budget_usd)
        kind, label = (option.kind, option.label) if option is not None else ("card", "")
        aside = aside_reason(target.device, projected.as_of) if option is None else ""
        rows.append(
            Candidate(target, p, price, energy, speedup, saved, per_tps, within, False, kind,
                      label, aside)
        )  # fmt: skip
    priced = [
        i
        for i, c in enumerate(rows)
        if c.price is not None and c.projection.fits != "no" and c.projection.request_s
    ]
    frontier = value_frontier([(rows[i].price.usd, _speed(rows[i].projection)) for i in priced])  # type: ignore[union-attr]
    for k in frontier:
        rows[priced[k]] = replace(rows[priced[k]], on_frontier=True)
    rows.sort(key=_order)
    return Ranking(mine, mine_energy, tuple(rows))


def _order(c: Candidate) -> tuple:
    # the whole model on the card or over card and RAM both run it: ranked by their speed
    fits = 0 if c.projection.fits in RUNS else FIT_RANK.get(c.projection.fits, 3)
    usable = c.projection.request_s is not None and c.projection.basis != "unsupported"
    return (
        not c.within_budget,
        fits,
        not usable,
        c.projection.request_s or float("inf"),
        c.price.usd if c.price else float("inf"),
    )


def _usable(c: Candidate) -> bool:
    return c.within_budget and c.projection.fits in RUNS and bool(c.projection.request_s)


def best_within_budget(ranking: Ranking) -> Candidate | None:
    """The recommendation: the fastest candidate within budget that fits."""
    return next((c for c in ranking.candidates if _usable(c)), None)


def why_no_pick(ranking: Ranking) -> str:
    """Why there is no recommendation, in one sentence with what to do: a context beyond what
    the model was trained on (no card helps), a budget below every card that holds the model,
    or a model no candidate holds whole."""
    candidates = ranking.candidates
    note = next((c.projection.context_note for c in candidates if c.projection.context_note), "")
    if note:
        return f"No card helps here. {note}"
    if any(c.projection.fits in RUNS and c.projection.request_s for c in candidates):
        return (
            "Nothing that holds the model is within this budget: raise the budget, or choose "
            "a smaller quantisation of the model (Model page)."
        )
    return (
        "No candidate holds the whole model: choose a smaller quantisation of the model (Model "
        "page); the table shows the ones that hold part of it."
    )


def enough_for_less(ranking: Ranking, streamed: bool) -> Candidate | None:
    """The cheapest candidate within budget that fits and that a person could not tell from
    the fastest one for this workload (`feel.would_notice`: an answer read as it appears,
    faster than reading, by its first word's wait; any other by its whole wait, where at
    least a second and a fifth of the wait is what a person tells apart); None where the
    fastest is already the cheapest such one, or has no price to compare."""
    best = best_within_budget(ranking)
    if best is None or best.price is None:
        return None
    fast = best.projection

    def same(p: Projection) -> bool:
        return not would_notice(streamed, Waits.between(p, fast, _low_end(p)))

    cheaper = [
        c
        for c in ranking.candidates
        if _usable(c) and c.price is not None and c.price.usd < best.price.usd
        and same(c.projection)
    ]  # fmt: skip
    return min(cheaper, key=lambda c: (c.price.usd, c.projection.request_s), default=None)  # type: ignore[union-attr]


def _low_end(p: Projection) -> float:
    """Tokens/s per user at the low end of the band: a card whose band reaches below reading
    speed is not counted on to stay above it."""
    low = p.decode_tps_low / p.decode_tps if p.decode_tps and p.decode_tps_low else 1.0
    return (p.per_user_tps or 0.0) * min(low, 1.0)


def for_less_sentence(cheaper: Candidate, best: Candidate, w: Workload) -> str:
    """The line naming a cheaper card that feels the same for this workload."""
    a, b = cheaper.projection, best.projection
    assert cheaper.price is not None and best.price is not None
    if w.streamed and _low_end(a) >= READING_TPS:
        how = (
            f"writes {a.per_user_tps:,.0f} tokens/s, faster than you read, and its first word "
            f"comes {_versus('after', a.ttft_s, b.ttft_s)}"
        )
    else:
        how = f"answers {_versus('in', a.request_s, b.request_s)}"
    return (
        f"Same feel for less: for {w.label}, the {cheaper.name} ({price_text(cheaper.price)}; "
        f"${best.price.usd - cheaper.price.usd:,.0f} less) {how}: "
        "a difference you would not notice"
        + (f" (its figures: {a.basis})." if a.basis != b.basis else ".")
    )


def _versus(word: str, cheaper_s: float | None, best_s: float | None) -> str:
    """'after 0.4 s instead of 0.2 s', or 'after 1 ms on both' where the two round alike."""
    a, b = fmt_seconds(cheaper_s), fmt_seconds(best_s)
    return f"{word} {a} on both" if a == b else f"{word} {a} instead of {b}"


def placement_lines(c: Candidate) -> tuple[str, str] | None:
    """Where a candidate that runs the model over card and RAM keeps what, in one sentence,
    and the llama-server command that runs it so; None for a model on the card alone."""
    block = c.projection.placement
    if c.projection.fits != "hybrid" or not block:
        return None
    return placement_sentence(block), str(block["command"])


def weakest_basis(candidates: Sequence[Candidate]) -> str:
    return min((c.projection.basis for c in candidates), key=basis_rank, default="spec-only")


def measured_decode_watts(run: RunResult | None) -> float | None:
    """The run's power while decoding, where it measured it (not a TDP estimate)."""
    if run is None:
        return None
    for t in run.tests:
        if t.kind == "decode" and t.batch == 1 and t.energy_method == "measured":
            return t.average_w
    return None
