"""What a device costs, with what kind of price it is and when it was seen: the one answer to
"what does this card cost" for every page, the command line and the report card.

Precedence, first known wins: the user's own price, then a dated street price for a new card,
then a dated street price for a used one, then the launch price. A street price older than
six months before the catalogue's date is still shown (with its date) but is not current: the
default upgrade list keeps only devices with a current one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from advisor.core.catalogue.device import Device

# the kinds of price, in the order the answer takes them
PRICE_KINDS = ("yours", "new", "used", "launch")
# a street price older than this many months before the catalogue's date is not current
CURRENT_MONTHS = 6


@dataclass(frozen=True)
class Price:
    """A price for `count` cards (or one chip's system) and where it comes from."""

    usd: float  # for all the cards together
    kind: str  # one of PRICE_KINDS
    date: str = ""  # "2026-09" when the price was seen (launch: when it launched); "" unknown
    source: str = ""  # the address the catalogue cites for it
    memory_gb: float | None = None  # the memory size it buys, where the device comes in several
    count: int = 1
    extra: str = ""  # what else the price buys ('a RAM kit'), for an upgrade of the computer

    @property
    def each_usd(self) -> float:
        return self.usd / max(1, self.count)

    @property
    def label(self) -> str:
        """What the figure is, in a few words: 'new, 2026-09', 'used, 2026-07', 'launch price,
        2025-01', 'your price' (with the memory size where the device has several)."""
        if self.kind == "yours":
            words = "your price"
        elif self.kind == "launch":
            words = f"launch price, {self.date}" if self.date else "launch price"
        else:
            words = f"{self.kind}, {self.date}" if self.date else self.kind
        if self.memory_gb:
            words += f", {self.memory_gb:g} GB"
        return f"{words}, {self.extra}" if self.extra else words

    def to_json(self) -> dict[str, Any]:
        return {
            "usd": self.usd,
            "usd_each": self.each_usd,
            "kind": self.kind,
            "date": self.date,
            "source": self.source,
            "memory_gb": self.memory_gb,
            "count": self.count,
            "extra": self.extra,
        }


def catalogue_prices(device: Device, memory_gb: float | None = None) -> list[Price]:
    """Every price the catalogue knows for one of the device (or its `memory_gb` variant), in
    the order the answer takes them: street new, street used, launch."""
    out: list[Price] = []
    # a street price buys the largest memory option unless the record says which it buys
    street_memory = device.price_memory_gb or max(device.memory_sizes_gb, default=0.0)
    fits = memory_gb is None or memory_gb == street_memory
    shown_memory = street_memory if len(device.memory_sizes_gb) > 1 else None
    if device.street_price_usd and fits:
        kind = device.street_price_kind or "used"
        out.append(
            Price(
                float(device.street_price_usd), kind, device.street_price_date or "",
                _source(device, "street_price_usd"), shown_memory,
            )
        )  # fmt: skip
    if device.used_price_usd and fits:
        out.append(
            Price(
                float(device.used_price_usd), "used", device.used_price_date or "",
                _source(device, "used_price_usd"), shown_memory,
            )
        )  # fmt: skip
    launch = device.launch_price_usd
    launch_memory = None
    if device.launch_price_by_memory_gb and len(device.memory_sizes_gb) > 1:
        launch_memory = memory_gb or max(device.memory_sizes_gb)
        launch = device.launch_price_by_memory_gb.get(f"{launch_memory:g}", launch)
    if launch:
        out.append(
            Price(
                float(launch), "launch", device.launch_price_date or "",
                _source(device, "launch_price_usd"), launch_memory,
            )
        )  # fmt: skip
    out.sort(key=lambda p: PRICE_KINDS.index(p.kind))
    return out


def price_of(
    device: Device,
    count: int = 1,
    user_prices: Mapping[str, float] | None = None,
    memory_gb: float | None = None,
) -> Price | None:
    """The price an answer compares on, for `count` cards: the user's own (per card, from
    their settings), else the first the catalogue knows (street new, street used, launch)."""
    count = max(1, count)
    mine = (user_prices or {}).get(device.id)
    if mine:
        return Price(float(mine) * count, "yours", count=count)
    known = catalogue_prices(device, memory_gb)
    if not known:
        return None
    first = known[0]
    return Price(first.usd * count, first.kind, first.date, first.source, first.memory_gb, count)


def months_before(later: str, earlier: str) -> int | None:
    """Whole months from `earlier` to `later` ("2026-09", "2026-03" -> 6); None if unreadable."""
    try:
        y1, m1 = (int(x) for x in later[:7].split("-"))
        y0, m0 = (int(x) for x in earlier[:7].split("-"))
    except ValueError:
        return None
    return (y1 - y0) * 12 + (m1 - m0)


def is_current(price: Price | None, as_of: str) -> bool:
    """A dated street price seen at most CURRENT_MONTHS before `as_of` (the catalogue's date);
    never a launch price or the user's own."""
    if price is None or price.kind not in ("new", "used") or not price.date:
        return False
    age = months_before(as_of, price.date) if as_of else 0
    return age is not None and age <= CURRENT_MONTHS


def street_price(device: Device) -> Price | None:
    """The device's street price (new before used), or None: what the default list needs."""
    return next((p for p in catalogue_prices(device) if p.kind in ("new", "used")), None)


def _source(device: Device, field_name: str) -> str:
    """The address of the first source the record cites for a field ('' where none)."""
    for source in device.sources:
        if field_name in (source.get("fields") or ()):
            return str(source.get("url", ""))
    return ""
