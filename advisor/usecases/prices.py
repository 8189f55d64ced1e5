"""The prices the answers compare on: the user's own (saved by the app's Upgrade page) over the
catalogue's street and launch prices, one function for the command line and every page
(advisor.core.catalogue.prices.price_of), so a card shows one price everywhere."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from advisor.core.catalogue.prices import Price, price_of
from advisor.core.infra.paths import AppPaths
from advisor.core.infra.settings import read_settings
from advisor.core.predict.projecting.projection import Target


def saved_prices(paths: AppPaths) -> dict[str, float]:
    """The prices per card the user typed in the app (none where there are no settings)."""
    return dict(read_settings(paths.settings_file).prices_usd)


def target_price(target: Target, user_prices: Mapping[str, float] | None) -> Price | None:
    """What the target costs: all its cards, for the memory size it names, if any."""
    return price_of(target.device, target.count, user_prices, target.memory_gb)


def target_prices(
    targets: Sequence[Target], user_prices: Mapping[str, float] | None
) -> list[Price | None]:
    return [target_price(t, user_prices) for t in targets]


def price_json(price: Price | None) -> dict[str, Any]:
    """A row's price for --json: `price` with its kind, date and source, and `price_usd`."""
    return {"price_usd": price.usd if price else None, "price": price.to_json() if price else None}


def price_text(price: Price | None, missing: str = "no price") -> str:
    """'$5,258 (new, 2026-09)': a price as every table and sentence shows it."""
    return f"${price.usd:,.0f} ({price.label})" if price else missing


def price_cell(price: Price | None, missing: str = "—") -> str:
    """'$5,258 new': a price in a table cell, its kind beside it (its month on hover)."""
    if price is None:
        return missing
    return f"${price.usd:,.0f} {price.kind}"
