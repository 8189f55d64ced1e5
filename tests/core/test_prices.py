"""What a card costs: one function, the user's price first, then a dated street price (new
before used), then the launch price; and the catalogue's checker holds every street price to a
kind, a month and a source."""

from __future__ import annotations

import copy

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.catalogue.dating import catalogue_date
from advisor.core.catalogue.prices import (
    CURRENT_MONTHS,
    Price,
    catalogue_prices,
    is_current,
    months_before,
    price_of,
)
from tests.core.test_catalogue import _checker


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


def _expected(d) -> tuple[float, str] | None:
    """The precedence written out from the record's fields, independently of prices.py."""
    if d.street_price_usd and d.street_price_kind == "new":
        return d.street_price_usd, "new"
    if d.used_price_usd:
        return d.used_price_usd, "used"
    if d.street_price_usd:
        return d.street_price_usd, "used"
    if d.launch_price_usd:
        return d.launch_price_usd, "launch"
    return None


def test_every_device_is_priced_street_new_then_used_then_launch(cat):
    kinds = {"new": 0, "used": 0, "launch": 0, None: 0}
    for d in cat:
        got = price_of(d)
        want = _expected(d)
        assert (None if got is None else (got.usd, got.kind)) == want, d.id
        kinds[got.kind if got else None] += 1
        if got is not None and got.kind != "launch":
            assert got.date and got.source.startswith("http"), d.id  # dated and cited
    # the catalogue has all three kinds, so each rule above is exercised
    assert kinds["new"] >= 10 and kinds["used"] >= 25 and kinds["launch"] >= 60, kinds


def test_a_card_still_sold_new_is_priced_new_not_at_launch(cat):
    rtx5090 = cat.resolve("RTX 5090")
    p = price_of(rtx5090)
    # $1,999 at launch (2025-01); $5,258 new on Amazon and $4,795 used in September 2026
    assert (p.usd, p.kind, p.date) == (5258, "new", "2026-09")
    assert p.label == "new, 2026-09"
    assert [x.kind for x in catalogue_prices(rtx5090)] == ["new", "used", "launch"]
    assert [x.usd for x in catalogue_prices(rtx5090)] == [5258, 4795, 1999]


def test_the_users_own_price_comes_first_and_counts_cards(cat):
    rtx3090 = cat.resolve("RTX 3090")
    assert price_of(rtx3090, 2) == Price(2414, "used", "2026-09", price_of(rtx3090).source, count=2)
    mine = price_of(rtx3090, 2, {rtx3090.id: 700})
    assert (mine.usd, mine.kind, mine.each_usd, mine.label) == (1400, "yours", 700, "your price")


def test_16_gb_variants_have_the_16_gb_launch_price(cat):
    """The audit: both records carried the 8 GB card's launch price."""
    for name, big, small in (("RTX 4060 Ti", 499, 399), ("RTX 5060 Ti", 429, 379)):
        d = cat.resolve(name)
        assert d.launch_price_usd == big and max(d.memory_sizes_gb) == 16
        assert d.launch_price_by_memory_gb == {"8": small, "16": big}
        launch = catalogue_prices(d)[-1]
        assert (launch.kind, launch.usd, launch.memory_gb) == ("launch", big, 16)
        eight = catalogue_prices(d, memory_gb=8)
        assert [(p.kind, p.usd) for p in eight] == [("launch", small)]  # no 8 GB street price
        assert "betweentwopixels" in launch.source
    # a street price buys the 16 GB card, and says so where the card comes in two sizes
    assert price_of(cat.resolve("RTX 5060 Ti")).label == "new, 2026-09, 16 GB"


def test_a_street_price_is_current_for_six_months(cat):
    assert months_before("2026-09", "2026-03") == 6 and months_before("2027-01", "2026-12") == 1
    as_of = catalogue_date().date
    assert as_of[:7] == "2026-09"  # the newest price seen
    fresh, stale = Price(1, "used", "2026-03"), Price(1, "used", "2026-02")
    assert is_current(fresh, as_of) and not is_current(stale, as_of)
    assert months_before(as_of, stale.date) == CURRENT_MONTHS + 1
    assert not is_current(Price(1, "launch", "2026-09"), as_of)  # a launch price never is
    assert not is_current(price_of(cat.resolve("RTX 3060 12GB")), as_of)  # 2025-12


def _rtx5090(cat) -> dict:
    return copy.deepcopy(cat.resolve("RTX 5090").to_json())


def test_the_checker_wants_a_kind_a_month_and_a_source_with_a_street_price(cat):
    check = _checker()
    record = _rtx5090(cat)
    assert check.price_problems(record, "2026-09") == ([], [])
    no_kind = {**record, "street_price_kind": None}
    assert any("street_price_kind" in e for e in check.price_problems(no_kind, "2026-09")[0])
    no_date = {**record, "used_price_date": None}
    assert any("used_price_date" in e for e in check.price_problems(no_date, "2026-09")[0])
    uncited = {
        **record,
        "sources": [s for s in record["sources"] if "street_price_usd" not in s["fields"]],
    }
    assert check.price_problems(uncited, "2026-09")[0] == [
        "street_price_usd cited by no source (add its fields to a source)"
    ]
    # older than six months before the catalogue's month: flagged, not refused
    errors, warnings = check.price_problems(record, "2027-04")
    assert errors == [] and len(warnings) == 2 and "2026-09" in warnings[0]


def test_the_checker_refuses_launch_prices_for_sizes_the_card_lacks(cat):
    check = _checker()
    record = copy.deepcopy(cat.resolve("RTX 4060 Ti").to_json())
    assert check.price_problems(record, "2026-09") == ([], [])
    wrong = {**record, "launch_price_usd": 399}  # the 8 GB card's price on the record again
    assert check.price_problems(wrong, "2026-09")[0] == [
        "launch_price_usd is not the largest memory option's launch price"
    ]
    odd = {**record, "launch_price_by_memory_gb": {"12": 450, "16": 499}}
    assert "names 12 GB" in check.price_problems(odd, "2026-09")[0][0]
