"""One price per card, everywhere: `advisor project --json`, the Compare table, the Upgrade
ranking and the report card show, for every catalogued device they list, the price, kind and
date of advisor.core.catalogue.prices.price_of (the user's own price first)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.catalogue.prices import price_of
from advisor.core.infra.paths import app_paths
from advisor.core.infra.settings import Settings, save_settings
from advisor.usecases.prices import price_text
from advisor.usecases.report_card import report_card
from tests.conftest import advisor_cli

MINE = {"nvidia-geforce-rtx-4090": 1800.0}  # typed on the Upgrade page once


def _key(price) -> tuple | None:
    return None if price is None else (price.usd, price.kind, price.date)


def test_every_device_shows_one_price_kind_and_date_everywhere(make_window, qtbot):
    paths = app_paths()
    paths.ensure()
    save_settings(paths.settings_file, Settings(prices_usd=MINE))
    catalogue = load_catalogue()
    want = {d.id: _key(price_of(d, 1, MINE)) for d in catalogue}

    # the command line, for every catalogued device
    out = advisor_cli("project", "--shape", "llama-3.2-1b", "--quant", "q4_k_m", "--json",
                      home=Path(os.environ["ADVISOR_HOME"]))  # fmt: skip
    assert out.returncode == 0, out.stderr
    cli = {t["device_id"]: t["price"] for t in json.loads(out.stdout)["targets"]}
    assert set(cli) == set(want)
    for device_id, price in cli.items():
        got = None if price is None else (price["usd"], price["kind"], price["date"])
        assert got == want[device_id], device_id

    # the Compare page, for every catalogued device
    window, services = make_window()
    services.choose_shape("llama-3.2-1b", "q4_k_m")
    window.show_page("Compare all devices")
    compare = window.compare.model
    qtbot.waitUntil(lambda: compare.rowCount() > len(want), timeout=30_000)
    shown = {}
    for row in range(1, compare.rowCount()):  # row 0: this machine, not for sale
        p = compare.row_object(row)
        shown[p.device_id] = _key(compare.price_of(p))
    assert shown == want

    # the Upgrade ranking with every card it can show, and the report card made from it
    window.show_page("Upgrade")
    panel = window.upgrade
    panel.pro.setChecked(True)
    qtbot.waitUntil(
        lambda: bool(panel.ranking) and len(panel.ranking.candidates) > 150
        and panel.current is not None and panel.current.ranking is panel.ranking,
        timeout=30_000,
    )  # fmt: skip
    cards = [c for c in panel.ranking.candidates if c.kind == "card"]
    for c in cards:
        each = price_of(c.target.device, 1, MINE)
        assert _key(c.price) == (
            None if each is None else (each.usd * c.target.count, each.kind, each.date)
        ), c.name
    card = report_card(panel.current, top=len(panel.ranking.candidates))
    by_name = {row.device: row.price for row in card.cards}
    for c in cards:
        assert by_name[c.name] == price_text(c.price, "—"), c.name
    kinds = {c.price.kind for c in cards if c.price}
    assert kinds == {"yours", "new", "used", "launch"}  # each rule met on the page
    rtx4090 = next(c for c in cards if c.target.device.id in MINE and c.target.count == 1)
    assert by_name[rtx4090.name] == "$1,800 (your price)"
