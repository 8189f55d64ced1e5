"""Upgrades of the computer rather than the card: more RAM, faster RAM, a second card of the
one the user has, and a new card together with the RAM it needs. A model bigger than a card
runs with its experts or first layers in system RAM (a hybrid placement), so the cheapest
upgrade that pays off is often RAM: these options are projected like any card (the host
changed, `Target.host`) and ranked beside the cards in the upgrade answer.

An option is named only where it pays off: it makes the model run where it did not, or it
answers at least `PAYS_OFF` times faster than what it upgrades.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from advisor.core.catalogue.device import Device
from advisor.core.catalogue.prices import Price
from advisor.core.hardware.profile import Host
from advisor.core.infra.paths import bundled
from advisor.core.infra.units import GiB
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics.placement import rated_ram_bandwidth
from advisor.core.predict.projecting.projection import Projection, Target, project
from advisor.core.predict.projecting.projection_types import ProjectionError
from advisor.core.predict.projecting.reference import Reference

# desktop kit totals people buy (two or four modules); a bigger one is a workstation's
RAM_SIZES_GB = (32, 48, 64, 96, 128, 192, 256)
# what a current desktop board takes: dual-channel DDR5-6000 (AM5's and LGA1851's sweet spot)
FASTER_RAM = ("DDR5-6000", 2)
PAYS_OFF = 1.2  # an upgrade that saves less than a sixth of each answer's wait is not named
RUNS = frozenset({"yes", "hybrid"})  # fits that run the whole model (the card, or card + RAM)
NEW_CARDS_WITH_RAM = 3  # the fastest new cards that need more RAM: named, the rest left out


@dataclass(frozen=True)
class RamPrice:
    usd_per_gb: float
    kind: str
    date: str
    source: str


def load_ram_price() -> RamPrice:
    """The street price of RAM per GB the options are priced at (resources/data)."""
    path = bundled("resources") / "data" / "ram_prices.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return RamPrice(float(data["usd_per_gb"]), data["kind"], data["date"], data["source"])


@dataclass(frozen=True)
class HostUpgrade:
    kind: str  # "more RAM" | "faster RAM" | "second card" | "card + RAM"
    label: str  # "This PC's RTX 3060 12GB + 128 GB RAM"
    target: Target
    projection: Projection
    ram_usd: float  # what the RAM costs (0: none bought)
    card: Device | None  # a card bought with it (its price is the card's), None: none

    def price(self, card_price: Price | None, ram: RamPrice) -> Price | None:
        """The option's price: the RAM kit, plus the card where one is bought."""
        if self.card is None:
            return Price(self.ram_usd, ram.kind, ram.date, ram.source, extra="a RAM kit")
        if card_price is None:
            return None
        if not self.ram_usd:
            return card_price
        kit = f"with a RAM kit ({ram.kind}, {ram.date})"
        return replace(card_price, usd=card_price.usd + self.ram_usd, extra=kit)


def _runs(p: Projection | None) -> bool:
    return p is not None and p.fits in RUNS and bool(p.request_s)


def _faster(new: Projection, old: Projection | None) -> bool:
    """Does `new` run where `old` did not, or answer PAYS_OFF times faster?"""
    if not _runs(new):
        return False
    if not _runs(old):
        return True
    assert old is not None and old.request_s and new.request_s
    return old.request_s / new.request_s >= PAYS_OFF


def _project(facts: ModelFacts, target: Target, w: Workload, host: Host, model: SpeedModel,
             reference: Reference | None) -> Projection | None:  # fmt: skip
    try:
        return project(facts, target, w, host=host, model=model, reference=reference)
    except ProjectionError:
        return None


def more_ram(
    facts: ModelFacts, target: Target, w: Workload, host: Host, model: SpeedModel,
    reference: Reference | None, before: Projection | None,
) -> tuple[Target, Projection, float] | None:  # fmt: skip
    """The smallest RAM size above the host's that makes the target run the model (or run
    it PAYS_OFF times faster): the target in that host, its projection and the size in GB."""
    have = host.ram_bytes / GiB
    for size in RAM_SIZES_GB:
        if size <= have * 1.05:
            continue
        bigger = replace(target, host=replace(host, ram_bytes=size * GiB))
        p = _project(facts, bigger, w, host, model, reference)
        if p is not None and _faster(p, before):
            return bigger, p, float(size)
    return None


def faster_ram(
    facts: ModelFacts, target: Target, w: Workload, host: Host, model: SpeedModel,
    reference: Reference | None, before: Projection | None,
) -> tuple[Target, Projection] | None:  # fmt: skip
    """The target in a host with dual-channel DDR5-6000, where the model runs partly from RAM
    and that pays off. A DDR4 host is left out: its faster memory is a new board and CPU."""
    if not _runs(before) or before is None or before.fits != "hybrid":
        return None
    if host.ram_description.upper().startswith(("DDR4", "DDR3", "LPDDR")):
        return None
    rated = rated_ram_bandwidth(*FASTER_RAM)
    quicker = replace(host, ram_bandwidth_bytes_per_s=rated, bandwidth_basis="rated",
                      ram_description=f"{FASTER_RAM[0]}, {FASTER_RAM[1]} channels")  # fmt: skip
    if model.ram_stream_rate(quicker) <= model.ram_stream_rate(host):
        return None
    t = replace(target, host=quicker)
    p = _project(facts, t, w, host, model, reference)
    return (t, p) if p is not None and _faster(p, before) else None


def second_card(
    facts: ModelFacts, own: Target, w: Workload, host: Host, model: SpeedModel,
    reference: Reference | None, before: Projection | None,
) -> tuple[Target, Projection] | None:  # fmt: skip
    """Two of the user's card, the layers split over both, where one does not hold the model
    whole and two pay off."""
    if not own.device.is_card or (before is not None and before.fits == "yes"):
        return None
    t = replace(own, count=2, backend=None)
    p = _project(facts, t, w, host, model, reference)
    return (t, p) if p is not None and _faster(p, before) else None


def _by_room(pair: tuple[Target, Projection]) -> tuple[float, float]:
    d = pair[0].device
    return (-max(d.memory_sizes_gb or (0.0,)), -d.bandwidth_bytes_per_s)


def host_upgrades(
    facts: ModelFacts,
    w: Workload,
    *,
    host: Host,
    own: Target | None,
    mine: Projection | None,
    candidates: Sequence[tuple[Target, Projection]],
    model: SpeedModel,
    reference: Reference | None,
    ram: RamPrice,
) -> tuple[HostUpgrade, ...]:
    """The host upgrades that pay off: for the user's own device more RAM, faster RAM and a
    second card; new cards with the RAM they need, or with faster RAM (`_new_cards`)."""
    out: list[HostUpgrade] = []
    have_gb = host.ram_bytes / GiB
    if own is not None:
        mine_name = f"This PC's {own.device.name}"
        if found := more_ram(facts, own, w, host, model, reference, mine):
            t, p, size = found
            out.append(HostUpgrade("more RAM", f"{mine_name} + {size:.0f} GB RAM", t, p,
                                   size * ram.usd_per_gb, None))  # fmt: skip
        if quick := faster_ram(facts, own, w, host, model, reference, mine):
            t, p = quick
            label = f"{mine_name} + {have_gb:.0f} GB {FASTER_RAM[0]}"
            out.append(HostUpgrade("faster RAM", label, t, p, have_gb * ram.usd_per_gb, None))
        if two := second_card(facts, own, w, host, model, reference, mine):
            t, p = two
            out.append(HostUpgrade("second card", f"A second {own.device.name}", t, p, 0.0,
                                   own.device))  # fmt: skip
    return (*out, *_new_cards(facts, w, host, candidates, model, reference, ram))


def _new_cards(
    facts: ModelFacts, w: Workload, host: Host, candidates: Sequence[tuple[Target, Projection]],
    model: SpeedModel, reference: Reference | None, ram: RamPrice,
) -> list[HostUpgrade]:  # fmt: skip
    """New cards with RAM: the fastest ones the model does not fit beside the host's RAM,
    with the RAM that makes it run; the fastest that run it partly from RAM, with faster RAM
    where that pays off."""
    have_gb = host.ram_bytes / GiB
    more: list[HostUpgrade] = []
    single = [(t, p) for t, p in candidates if t.device.is_card and t.count == 1]
    shut_out = [(t, p) for t, p in single if p.fits == "no" and not p.context_note]
    for target, _ in sorted(shut_out, key=_by_room)[: 2 * NEW_CARDS_WITH_RAM]:
        if found := more_ram(facts, target, w, host, model, reference, None):
            t, p, size = found
            label = f"{target.device.name} + {size:.0f} GB RAM"
            more.append(HostUpgrade("card + RAM", label, t, p, size * ram.usd_per_gb,
                                    target.device))  # fmt: skip
    quicker: list[HostUpgrade] = []
    hybrid = sorted((pair for pair in single if _runs(pair[1]) and pair[1].fits == "hybrid"),
                    key=lambda pair: pair[1].request_s or float("inf"))  # fmt: skip
    for target, before in hybrid[:NEW_CARDS_WITH_RAM]:
        if found2 := faster_ram(facts, target, w, host, model, reference, before):
            t, p = found2
            label = f"{target.device.name} + {have_gb:.0f} GB {FASTER_RAM[0]}"
            quicker.append(HostUpgrade("card + faster RAM", label, t, p,
                                       have_gb * ram.usd_per_gb, target.device))  # fmt: skip
    more.sort(key=lambda u: u.projection.request_s or float("inf"))
    return [*more[:NEW_CARDS_WITH_RAM], *quicker]
