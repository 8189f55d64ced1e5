"""A card's own host link (PCI Express generation and lanes): the catalogue gives it for every
discrete add-in card, never for what plugs into no slot, and the link a card gets in a PC is
min(its generation, the slot's) x min(its lanes, the slot's). When a model is split over a card
and system RAM, a prompt copies the RAM-resident weights over that link: an x8 card in a
PCIe 3.0 slot gets a quarter of what an x16 card gets in a PCIe 4.0 one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from advisor.core.catalogue.catalogue import load_catalogue, load_records
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.predict.physics.placement import (
    card_link_bytes_per_s,
    host_link_bytes_per_s,
    link_bytes_per_s,
)
from tests.conftest import load_script

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "device_db" / "schema.json").read_text())
DESKTOP_CLASSES = ("nvidia_consumer", "amd_consumer", "intel_arc")
# discrete desktop cards of 2020 or later that may lack a link, each with the reason; empty
# while every such card has a sourced link (add one here only with why no source gives it)
WITHOUT_A_LINK: dict[str, str] = {}


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


@pytest.fixture(scope="module")
def check():
    return load_script("device_db/tools/check.py")


@pytest.mark.parametrize(
    ("name", "gen", "lanes"),
    [
        ("RTX 3050", 4, 8),
        ("RTX 4060", 4, 8),
        ("RTX 4060 Ti", 4, 8),
        ("RTX 5050", 5, 8),
        ("RTX 5060", 5, 8),
        ("RTX 5060 Ti", 5, 8),
        ("RX 6600", 4, 8),
        ("RX 7600", 4, 8),
        ("RX 7600 XT", 4, 8),
        ("Arc A310", 4, 8),
        ("Arc A380", 4, 8),
        ("Arc B580", 4, 8),
        ("RTX 2000 Ada", 4, 8),
        # and the wide ones stay wide
        ("RTX 3060 12GB", 4, 16),
        ("RTX 4090", 4, 16),
        ("RTX 5090", 5, 16),
        ("RX 9060 XT", 5, 16),
        ("RX 7900 XTX", 4, 16),
        ("Arc A770 16GB", 4, 16),
        ("Tesla P40", 3, 16),
        ("H100 PCIe", 5, 16),
    ],
)
def test_cards_load_with_their_own_link(catalogue, name, gen, lanes):
    card = catalogue.resolve(name)
    assert (card.pcie_gen, card.pcie_lanes) == (gen, lanes), card.name
    assert card.has_pcie_link


@pytest.mark.parametrize(
    "device_id",
    [
        "nvidia-geforce-rtx-4060-laptop",  # TechPowerUp lists 'PCIe 4.0 x8' for it: a laptop's
        "nvidia-geforce-rtx-5090-laptop",  # wiring is the laptop maker's, not the chip's
        "amd-radeon-780m-ryzen-7-8700g",
        "amd-radeon-8060s-ryzen-ai-max-plus-395",
        "intel-arc-140v",
        "apple-m4-max-40c",
        "nvidia-dgx-spark-gb10",
        "nvidia-jetson-agx-orin-64gb",
        "nvidia-h100-sxm5",
        "nvidia-b200",
        "amd-instinct-mi300x",
        "amd-instinct-mi250x",
        "amd-ryzen-9-7950x",
    ],
)
def test_what_plugs_into_no_slot_has_no_link(catalogue, device_id):
    device = catalogue.by_id(device_id)
    assert device is not None, device_id
    assert (device.pcie_gen, device.pcie_lanes) == (None, None)
    assert not device.has_pcie_link


def test_only_add_in_cards_have_a_link(catalogue, check):
    for device in catalogue:
        record = device.to_json()
        card = device.device_class in check.ADD_IN_CARD_CLASSES and not check.is_module(record)
        assert card or not device.has_pcie_link, device.id


def test_every_desktop_card_since_2020_has_a_link(catalogue):
    lacking = {
        d.id
        for d in catalogue
        if d.device_class in DESKTOP_CLASSES and d.release_year >= 2020 and not d.has_pcie_link
    }
    assert lacking == set(WITHOUT_A_LINK), "cite a link, or say in WITHOUT_A_LINK why none"
    checked = [d for d in catalogue if d.device_class in DESKTOP_CLASSES and d.release_year >= 2020]
    assert len(checked) >= 60


def test_both_fields_or_neither(catalogue):
    for device in catalogue:
        assert (device.pcie_gen is None) == (device.pcie_lanes is None), device.id
        if device.has_pcie_link:
            assert device.pcie_gen in (3, 4, 5) and device.pcie_lanes in (4, 8, 16), device.id


def test_every_link_has_a_source_listing_both(catalogue):
    for device in catalogue:
        if device.has_pcie_link:
            assert any({"pcie_gen", "pcie_lanes"} <= set(s["fields"]) for s in device.sources), (
                device.id
            )


def _record(device_id):
    """The catalogue's own record, as the file holds it."""
    return copy.deepcopy(next(r for r in load_records() if r["id"] == device_id))


def test_the_schema_refuses_one_field_alone():
    record = _record("nvidia-geforce-rtx-4060")
    jsonschema.validate({"schema_version": 1, "devices": [record]}, SCHEMA)
    for alone in ("pcie_gen", "pcie_lanes"):
        half = {k: v for k, v in record.items() if k != alone}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"schema_version": 1, "devices": [half]}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # no x12 cards
        jsonschema.validate(
            {"schema_version": 1, "devices": [{**record, "pcie_lanes": 12}]}, SCHEMA
        )


def test_the_checker_refuses_a_half_link_an_unsourced_one_and_one_on_no_card(check):
    card = _record("nvidia-geforce-rtx-4060")
    assert check.pcie_errors(card) == []
    half = {k: v for k, v in card.items() if k != "pcie_lanes"}
    assert any("without pcie_lanes" in e for e in check.pcie_errors(half))
    unsourced = {**card, "sources": [s for s in card["sources"] if "pcie_gen" not in s["fields"]]}
    assert any("without a source" in e for e in check.pcie_errors(unsourced))
    source = {"url": "https://example.org/", "fields": ["pcie_gen", "pcie_lanes"]}
    for device_id in ("nvidia-geforce-rtx-4060-laptop", "nvidia-h100-sxm5", "amd-instinct-mi325x",
                      "apple-m4-max-40c"):  # fmt: skip
        other = _record(device_id)
        linked = {**other, "pcie_gen": 4, "pcie_lanes": 16, "sources": [*other["sources"], source]}
        assert any("no add-in card" in e for e in check.pcie_errors(linked)), device_id


# -------------------------------------------------------------------------------------------
# the link a card gets in a host
# -------------------------------------------------------------------------------------------


def _host(gen=None, lanes=None, link_gbs=None):
    return Host(64 * GiB, 60e9, pcie_gen=gen, pcie_lanes=lanes, link_gbs=link_gbs)


@pytest.mark.parametrize(
    ("card", "host_link", "expected"),
    [
        ("RTX 4060", (None, None), (4, 8)),  # nothing detected: a PCIe 4.0 x16 slot
        ("RTX 4060", (3, 16), (3, 8)),  # an x8 card in an older board
        ("RTX 5060 Ti", (4, 16), (4, 8)),
        ("RTX 5060 Ti", (5, 16), (5, 8)),
        ("RTX 4090", (5, 16), (4, 16)),  # the card's generation caps a newer slot
        ("RTX 5090", (4, 16), (4, 16)),
        ("RTX 4090", (4, 4), (4, 4)),  # a chipset slot's four lanes
        ("Tesla P40", (4, 16), (3, 16)),
    ],
)
def test_a_card_gets_the_lesser_generation_and_the_fewer_lanes(catalogue, card, host_link,
                                                               expected):  # fmt: skip
    rate = card_link_bytes_per_s(_host(*host_link), catalogue.resolve(card))
    assert rate == pytest.approx(link_bytes_per_s(*expected))


def test_an_rtx_4060_in_a_pcie_3_board_gets_a_quarter_of_an_rtx_4090_in_a_pcie_4_one(catalogue):
    narrow = card_link_bytes_per_s(_host(3, 16), catalogue.resolve("RTX 4060"))
    wide = card_link_bytes_per_s(_host(4, 16), catalogue.resolve("RTX 4090"))
    assert narrow == pytest.approx(7.88e9, rel=1e-3)
    assert wide / narrow == pytest.approx(4.0, rel=1e-3)


def test_a_card_without_link_data_gets_the_hosts_link(catalogue):
    laptop = catalogue.by_id("nvidia-geforce-rtx-4060-laptop")
    for host in (_host(), _host(3, 8), _host(link_gbs=12.0)):
        assert card_link_bytes_per_s(host, laptop) == host_link_bytes_per_s(host)


def test_a_rate_the_user_gave_is_kept_up_to_the_cards_own_link(catalogue):
    host = _host(5, 16, link_gbs=25.0)
    assert card_link_bytes_per_s(host, catalogue.resolve("RTX 4090")) == pytest.approx(25e9)
    assert card_link_bytes_per_s(host, catalogue.resolve("RTX 4060")) == pytest.approx(
        link_bytes_per_s(4, 8)
    )
