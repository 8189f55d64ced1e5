"""`advisor upgrade`: the Upgrade page's answer for a saved run, for scripts: every card on the
default list priced (street, with kind and month), no regional variant, and a disturbed run's
warning where the answer is; a quiet run of the same model in the history is used instead."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.infra.paths import app_paths
from advisor.core.runs.history import History
from tests.conftest import advisor_cli


def _busy(run, load=0.62):
    """The recorded run as if other programs had used `load` of the CPU while it ran."""
    tests = tuple(replace(t, other_cpu_load=load) for t in run.tests)
    return replace(run, id="busy-run", tests=tests, busy=True, created_at=run.created_at + 60)


def _write(run, path):
    path.write_text(json.dumps(run.to_json()), encoding="utf-8")
    return path


def _upgrade(home, *args):
    out = advisor_cli("upgrade", *args, "--json", home=home)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_card_on_the_default_list_has_a_current_street_price(tiny_run, tmp_path):
    data = _upgrade(tmp_path, "--result", str(_write(tiny_run, tmp_path / "run.json")))
    catalogue = load_catalogue()
    cards = data["cards"]
    assert len(cards) >= 40
    for card in cards:
        device = catalogue.by_id(card["device_id"])
        assert not device.sold_in, card["device"]  # no regional variant
        assert card["aside"] == ""
        price = card["price"]
        assert price["kind"] in ("new", "used") and price["date"] >= "2026-03", card["device"]
        assert price["source"].startswith("https://") and card["price_usd"] == price["usd"]
        assert card["price_text"] == f"${price['usd']:,.0f} ({card['price_text'].split(' (')[1]}"
    names = {c["device"] for c in cards}
    assert not any(" D" in n.split("RTX")[-1] for n in names if "RTX" in n)  # 4090 D, 5090 D
    assert data["run"]["disturbed"] is False and data["warnings"] == []
    assert data["verdict"][0].startswith("Best within your budget: ")


def test_the_toggle_adds_regional_variants_and_cards_without_a_price(tiny_run, tmp_path):
    data = _upgrade(tmp_path, "--result", str(_write(tiny_run, tmp_path / "run.json")), "--more")
    asides = {c["device_id"]: c["aside"] for c in data["cards"]}
    assert asides["nvidia-geforce-rtx-5090-d-v2"] == "sold only in China"
    assert asides["nvidia-h100-pcie"] == "a workstation or datacenter card"
    assert asides["nvidia-geforce-rtx-3060-12gb"] == "no street price since 2025-12"
    assert asides["apple-m4-max-40c"] == "no street price in the catalogue"


def test_a_busy_run_says_so_in_the_answer(tiny_run, tmp_path):
    data = _upgrade(tmp_path, "--result", str(_write(_busy(tiny_run), tmp_path / "busy.json")))
    assert data["run"]["disturbed"] is True and data["run"]["run_id"] == "busy-run"
    warning = data["warnings"][0]
    assert warning.startswith("Your run was disturbed: other programs used 62% of the CPU")
    assert "the speed-ups are probably too high" in warning
    text = advisor_cli("upgrade", "--result", str(tmp_path / "busy.json"), home=tmp_path)
    assert warning in text.stdout.splitlines()[1:3]  # right under what the answer is about


def test_a_quiet_run_of_the_same_model_is_used_and_said(tiny_run, tmp_path):
    history = History(app_paths().data / "runs")
    history.save(tiny_run)  # quiet, older
    history.save(_busy(tiny_run))  # the newest: what `advisor upgrade` answers for
    data = _upgrade(tmp_path / "advisor-home")  # the app folder the history was saved in
    assert data["run"]["shown_run_id"] == "busy-run"
    assert data["run"]["run_id"] == tiny_run.id and data["run"]["disturbed"] is False
    assert data["run"]["note"].startswith("Your latest run of this model was disturbed (other ")
    assert "this answer uses your quiet run of " in data["run"]["note"]


@pytest.mark.parametrize("budget", ["300"])
def test_the_budget_and_workload_options_reach_the_answer(tiny_run, tmp_path, budget):
    run = str(_write(tiny_run, tmp_path / "run.json"))
    data = _upgrade(tmp_path, "--result", run, "--budget", budget, "--workload", "summarise")
    pick = data["pick"]
    assert pick["price_usd"] <= 300 and data["workload"] == "Summarise a document"
    over = [c for c in data["cards"] if not c["within_budget"]]
    assert over and all(c["price_usd"] > 300 for c in over)


def test_no_run_is_one_sentence(tmp_path):
    out = advisor_cli("upgrade", home=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("advisor: No run to answer from: measure one first")
    bad = advisor_cli("upgrade", "--budget", "lots", home=tmp_path)
    assert bad.returncode == 2 and "--budget" in bad.stderr
