"""The model card (docs/MODEL.md) and the README's accuracy section are generated from the
shipped fit, name code that exists and numbers that say why; an edit the fit does not read
needs no refit."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.workloads import get_workload
from advisor.core.predict.fitting.shipped import (
    FIT_DEVICE_FIELDS,
    data_fingerprint,
    fit_file,
    load_speed_model,
    model_from_fit,
)
from advisor.core.predict.model.observations import load_observations
from advisor.core.predict.projecting.projection import Target, project
from benchmarks.model_card import (
    CODE,
    README_END,
    README_START,
    hand_set_numbers,
    render_card,
    render_readme_section,
    resolve_reference,
    seed_and_many_users,
)

ROOT = Path(__file__).resolve().parents[2]


def _saved() -> dict:
    return json.loads(fit_file().read_text(encoding="utf-8"))


def test_the_card_is_generated_from_the_shipped_fit_byte_for_byte():
    obs, _ = load_observations()
    saved = _saved()
    card = render_card(model_from_fit(obs, saved), saved)
    assert card == (ROOT / "docs" / "MODEL.md").read_text(encoding="utf-8"), (
        "docs/MODEL.md is not what the shipped fit gives: run "
        "`python benchmarks/calibration_holdout.py --write`"
    )


def test_the_readmes_accuracy_section_is_generated_byte_for_byte():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    assert readme[start:end] == render_readme_section(_saved())


def test_the_figures_the_readme_quotes_are_the_models():
    """The seed's and the 32-user figures in the section are what the shipped model gives
    now (they drifted apart when they were written by hand)."""
    assert _saved()["checks"]["seed"] == seed_and_many_users(load_speed_model())


def test_the_card_states_every_term_with_its_held_out_evidence():
    card = (ROOT / "docs" / "MODEL.md").read_text(encoding="utf-8")
    for heading in ("## The physics", "## The terms", "## Build era", "## Bands and bases",
                    "## Held-out evidence", "## Numbers set by hand or by a search"):  # fmt: skip
        assert heading in card
    # a bias shows as a bias: the signed column, by class and by build era
    assert "| signed |" in card and "by class and build era" in card
    assert "for llama.cpp builds of **" in card


@pytest.mark.parametrize("reference", sorted(CODE.values()))
def test_every_code_reference_in_the_card_resolves(reference):
    assert resolve_reference(reference) is not None


def test_every_number_set_by_hand_says_why():
    numbers = hand_set_numbers()
    assert len(numbers) > 40
    missing = [f"{c.module}.{c.name}" for c in numbers if len(c.why) < 12]
    assert not missing, f"give these a comment saying why: {missing}"


# -------------------------------------------------------------------------------------------
# refit only when the fit's inputs change
# -------------------------------------------------------------------------------------------


def _edited_catalogue(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "devices"
    shutil.copytree(ROOT / "device_db" / "devices", folder)
    path = folder / "nvidia.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    record = next(r for r in data["devices"] if r["id"] == "nvidia-geforce-rtx-4090")
    edit(record)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return folder


def _price_edit(record: dict) -> None:
    record["launch_price_usd"] = 2599
    record["street_price_usd"] = 2450
    record["street_price_date"] = "2026-11"
    record["street_price_kind"] = "new"
    record["used_price_usd"] = 2100
    record["used_price_date"] = "2026-11"
    record["launch_price_by_memory_gb"] = {"24": 2599}
    record["notes"] = (record.get("notes") or "") + " Edited in a test."
    record["aliases"] = [*record["aliases"], "The Big One"]


def test_a_price_edit_changes_no_prediction_and_needs_no_refit(tmp_path):
    folder = _edited_catalogue(tmp_path, _price_edit)
    catalogue = load_catalogue(folder)
    assert catalogue.by_id("nvidia-geforce-rtx-4090").launch_price_usd == 2599
    obs, _ = load_observations(catalogue=catalogue)
    assert data_fingerprint(obs) == _saved()["data_fingerprint"]  # the shipped fit is used
    # and the projection of the edited card is the same, but for its price
    facts = facts_from_shape(get_shape("llama-3.1-8b"), "q4_k_m")
    host, w = Host(64 * GiB, 60e9), get_workload("chat")
    model = load_speed_model()
    before = project(facts, Target(load_catalogue().resolve("RTX 4090")), w, host=host,
                     model=model)  # fmt: skip
    after = project(facts, Target(catalogue.resolve("RTX 4090")), w, host=host, model=model)
    assert (after.decode_tps, after.prefill_tps) == (before.decode_tps, before.prefill_tps)
    assert after.decode_tps_low == before.decode_tps_low


def test_an_edit_the_fit_reads_needs_a_refit(tmp_path):
    """The check above can fail: a field the fit reads changes the fingerprint."""

    def newer(record: dict) -> None:
        record["arch"] = "blackwell"  # the class terms the fit reads

    obs, _ = load_observations(catalogue=load_catalogue(_edited_catalogue(tmp_path, newer)))
    assert data_fingerprint(obs) != _saved()["data_fingerprint"]


def test_the_fit_reads_only_the_device_fields_its_fingerprint_covers():
    """Every `device.<field>` the model and the fit read is fingerprinted (or derived from a
    fingerprinted field): a field read but not covered would let a stale fit pass."""
    derived = {"bandwidth_bytes_per_s": "memory_bandwidth_gbs", "is_cpu": "device_class",
               "compute_peak_for": "usable_peak", "id": "id"}  # fmt: skip
    folders = [ROOT / "advisor" / "core" / "predict" / d for d in ("model", "fitting")]
    read: set[str] = set()
    for folder in folders:
        for path in folder.glob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                        and node.value.attr == "device") or (
                        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id == "device"):  # fmt: skip
                    read.add(node.attr)
    covered = set(FIT_DEVICE_FIELDS) | {"usable_peak"}
    uncovered = {f for f in read if derived.get(f, f) not in covered}
    assert not uncovered, f"add to FIT_DEVICE_FIELDS: {sorted(uncovered)}"


def test_no_comment_in_predict_quotes_a_held_out_figure():
    """Measured figures live in the card, which the fit regenerates; a comment that quotes
    one drifts from what the code computes."""
    pattern = re.compile(r"#.*\b(?:held out|median|p90)\b.*\d+(?:\.\d+)?%")
    offenders = []
    for path in (ROOT / "advisor" / "core" / "predict").rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.name}:{n}")
    assert not offenders, offenders
