"""Upgrades of the computer beside the cards: more RAM, faster RAM, a second card, a new card
with the RAM it needs; each named only where it pays off, priced from the RAM kit's dated
street price, ranked beside the cards."""

from __future__ import annotations

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.workloads import get_workload
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.projecting.projection import Target, project
from advisor.usecases import host_upgrades as hu
from advisor.usecases.upgrade import (
    Projected,
    best_within_budget,
    candidate_targets,
    placement_lines,
    rank_candidates,
)

MODEL = load_speed_model()
CAT = load_catalogue()
GPT_OSS_120B = facts_from_shape(get_shape("gpt-oss-120b"), "mxfp4")
CHAT = get_workload("chat")
RAM = hu.load_ram_price()


def _host(gb: float, gbs: float, description: str = "") -> Host:
    return Host(gb * GiB, gbs * 1e9, bandwidth_basis="measured", ram_description=description)


def _options(host: Host, own_id: str = "nvidia-geforce-rtx-3060-12gb"):
    own = Target(CAT.by_id(own_id))
    mine = project(GPT_OSS_120B, own, CHAT, host=host, model=MODEL)
    pairs = [(t, project(GPT_OSS_120B, t, CHAT, host=host, model=MODEL))
             for t in candidate_targets(CAT)]  # fmt: skip
    options = hu.host_upgrades(GPT_OSS_120B, CHAT, host=host, own=own, mine=mine,
                               candidates=pairs, model=MODEL, reference=None, ram=RAM)  # fmt: skip
    return mine, pairs, options


def test_the_ram_price_is_sourced_and_dated():
    assert 1 < RAM.usd_per_gb < 100 and RAM.date >= "2025" and RAM.source.startswith("https://")


def test_more_ram_makes_the_users_card_run_a_model_it_could_not():
    mine, _, options = _options(_host(32, 60))
    assert mine.fits == "no"
    more = next(o for o in options if o.kind == "more RAM")
    assert more.projection.fits == "hybrid" and more.projection.decode_tps > 5
    size = more.target.host.ram_bytes / GiB
    assert size == min(s for s in hu.RAM_SIZES_GB if s >= 64)  # the smallest kit that runs it
    assert more.price(None, RAM).usd == pytest.approx(size * RAM.usd_per_gb)
    assert more.label == f"This PC's GeForce RTX 3060 12GB + {size:.0f} GB RAM"


def test_faster_ram_is_named_where_the_ram_is_slow_and_not_where_it_is_fast():
    mine, _, slow = _options(_host(64, 30))
    assert mine.fits == "hybrid"
    faster = next(o for o in slow if o.kind == "faster RAM")
    assert mine.request_s / faster.projection.request_s >= hu.PAYS_OFF
    assert not any(o.kind == "more RAM" for o in slow)  # the model already runs: no pay-off
    _, _, quick = _options(_host(64, 80))
    assert not any(o.kind in ("faster RAM", "card + faster RAM") for o in quick)
    # a DDR4 board's faster memory is a new board and CPU: not offered as RAM
    _, _, ddr4 = _options(_host(64, 30, "DDR4-3200, 2 channels"))
    assert not any("faster RAM" in o.kind for o in ddr4)


def test_a_new_card_that_needs_more_ram_is_offered_with_it():
    _, pairs, options = _options(_host(24, 60))
    shut_out = {t.device.id for t, p in pairs if p.fits == "no" and t.device.is_card}
    assert shut_out  # 24 GB of RAM does not hold the rest of gpt-oss 120B beside most cards
    with_ram = [o for o in options if o.kind == "card + RAM"]
    assert 1 <= len(with_ram) <= hu.NEW_CARDS_WITH_RAM
    for o in with_ram:
        assert o.card.id in shut_out and o.projection.fits == "hybrid"
        card_price = 1000.0
        assert o.price(hu.Price(card_price, "launch"), RAM).usd == pytest.approx(
            card_price + o.ram_usd
        )


def test_the_ranking_puts_options_and_hybrid_cards_beside_full_offload():
    host = _host(64, 30)
    mine, pairs, options = _options(host)
    projected = Projected(GPT_OSS_120B, CHAT, mine, CAT.by_id("nvidia-geforce-rtx-3060-12gb"),
                          None, tuple(pairs), options, RAM)  # fmt: skip
    ranking = rank_candidates(projected, prices={}, price_per_kwh=None, budget_usd=None)
    kinds = {c.kind for c in ranking.candidates}
    assert {"card", "faster RAM"} <= kinds
    running = [c for c in ranking.candidates if c.projection.fits in ("yes", "hybrid")]
    assert {c.projection.fits for c in running} == {"yes", "hybrid"}
    times = [c.projection.request_s for c in running]
    assert times == sorted(times)  # one order by speed, whole or over card and RAM
    hybrid = next(c for c in running if c.projection.fits == "hybrid" and c.kind == "card")
    sentence, command = placement_lines(hybrid)
    assert "GB from RAM" in sentence and command.startswith("llama-server -m MODEL.gguf")
    # the recommendation may be a card that runs the model over card and RAM
    assert best_within_budget(ranking) is not None
    # an option's price is not the user's to type: it is the card's and the RAM kit's
    faster = next(c for c in ranking.candidates if c.kind == "faster RAM")
    assert faster.price.usd == pytest.approx(64 * RAM.usd_per_gb)
