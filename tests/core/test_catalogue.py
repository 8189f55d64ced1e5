"""The device catalogue: every record valid and sourced, names resolve as people write them."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from advisor.core.catalogue.catalogue import UnknownDeviceError, load_catalogue, load_records
from advisor.core.catalogue.names import basic_key as _basic

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "device_db" / "schema.json").read_text())
# the copy the app ships (the speed model is fitted on it); the project's reference copy sits
# beside the checkout only on a developer's machine
CALIBRATION = REPO / "resources" / "data" / "llamacpp_calibration.csv"
REFERENCE_CALIBRATION = REPO.parent / "shared" / "reference" / "llamacpp_calibration.csv"


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def test_every_file_validates_against_the_schema():
    files = sorted((REPO / "device_db" / "devices").glob("*.json"))
    assert len(files) >= 5
    for path in files:
        jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_at_least_150_records_with_bandwidth_memory_and_a_source(catalogue):
    assert len(catalogue) >= 150
    for d in catalogue:
        assert d.memory_bandwidth_gbs > 0, d.id
        assert d.memory_sizes_gb and min(d.memory_sizes_gb) > 0, d.id
        assert d.sources and all(s["url"].startswith("http") for s in d.sources), d.id


def test_units_in_sane_ranges(catalogue):
    for d in catalogue:
        assert 10 <= d.memory_bandwidth_gbs <= 10_000, d.id
        if d.fp32_tflops:
            assert 0.05 <= d.fp32_tflops <= 200, d.id
        if d.fp16_tensor_tflops:
            # dense tensor throughput is above FP32 and below 10 PFLOPS
            assert d.fp32_tflops is None or d.fp16_tensor_tflops >= d.fp32_tflops * 0.9, d.id
            assert d.fp16_tensor_tflops <= 5_000, d.id
        if d.bus_width_bits and d.memory_data_rate_mtps:
            derived = d.bus_width_bits / 8 * d.memory_data_rate_mtps / 1000
            assert derived == pytest.approx(d.memory_bandwidth_gbs, rel=0.06), d.id


def test_no_duplicate_ids_names_or_aliases():
    records = load_records()
    ids = Counter(r["id"] for r in records)
    assert not [i for i, n in ids.items() if n > 1]
    owner: dict[str, str] = {}
    for r in records:
        for label in {_basic(x) for x in (r["name"], *r["aliases"])}:
            assert owner.setdefault(label, r["id"]) == r["id"], (label, owner[label], r["id"])


def test_gpus_with_tensor_cores_have_a_tensor_figure(catalogue):
    tensor_classes = ("nvidia_consumer", "nvidia_laptop", "nvidia_workstation")
    for d in catalogue:
        name = d.name.upper()
        is_rtx = d.device_class in tensor_classes and (
            "RTX" in name or re.search(r"\bA\d{4}", name)
        )
        is_modern_dc = d.device_class == "nvidia_datacenter" and not re.search(
            r"K80|M40|P40|P4\b|P100", name
        )
        if is_rtx or is_modern_dc:
            assert d.fp16_tensor_tflops, d.id


def test_apple_entries_are_per_gpu_core_variant(catalogue):
    apple = [d for d in catalogue if d.device_class == "apple_soc"]
    assert len(apple) >= 30
    assert all(d.gpu_cores for d in apple)
    for chip in ("M1", "M1 Pro", "M1 Max", "M2", "M2 Max", "M3 Max", "M4 Max", "M4 Pro"):
        variants = [d for d in apple if re.fullmatch(rf"Apple {chip} \(\d+-core GPU\)", d.name)]
        assert len(variants) >= 2, chip


@pytest.mark.parametrize(
    ("name", "bandwidth"),
    [
        ("RTX 4070", 504),
        ("RTX 4090", 1008),
        ("L40S", 864),
        ("H100 SXM", 3350),
        ("Apple M4 Pro", 273),
        ("Apple M3 Max 30-core GPU", 300),
        ("Apple M3 Max 40-core GPU", 400),
        ("NVIDIA GeForce RTX 4090", 1008),
        ("GeForce RTX 4090 24GB", 1008),
        ("Apple M2 Max 38-core GPU", 400),
        ("M2 Max (38-core GPU)", 400),
        ("NVIDIA H100 80GB HBM3", 3350),
        ("Intel(R) Arc(TM) B580 Graphics", 456),
        ("nvidia geforce rtx 4070", 504),
        ("RTX 5090", 1792),
        ("DGX Spark", 273),
        ("Radeon RX 7900 XTX", 960),
        ("H200", 4800),
    ],
)
def test_names_resolve_with_vendor_bandwidth(catalogue, name, bandwidth):
    assert catalogue.resolve(name).memory_bandwidth_gbs == pytest.approx(bandwidth)


def test_laptop_parts_stay_separate(catalogue):
    desktop = catalogue.resolve("RTX 4090")
    laptop = catalogue.resolve("NVIDIA GeForce RTX 4090 Laptop GPU")
    assert desktop.id != laptop.id
    assert laptop.memory_bandwidth_gbs < desktop.memory_bandwidth_gbs
    assert laptop.device_class == "nvidia_laptop"


def test_unknown_name_lists_the_closest(catalogue):
    with pytest.raises(UnknownDeviceError, match="RTX 4090"):
        catalogue.resolve("RTX 4099")


def test_search_lists_the_resolved_device_first(catalogue):
    for text in ("RTX 4090", "M3 Max 30-core GPU", "L40S", "A100"):
        found = catalogue.search(text)
        assert found
        resolved = catalogue.try_resolve(text)
        if resolved:
            assert found[0] == resolved


def test_the_shipped_calibration_set_is_the_reference_one():
    if not REFERENCE_CALIBRATION.exists():
        pytest.skip("the project's shared/reference folder is not beside this checkout")
    assert CALIBRATION.read_bytes() == REFERENCE_CALIBRATION.read_bytes()


def test_every_calibration_device_resolves_with_its_bandwidth(catalogue):
    with CALIBRATION.open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for r in rows:
        name = r["device"]
        if r["gpu_cores"] and "core" not in name:
            name += f" {r['gpu_cores']}-core GPU"
        device = catalogue.resolve(name)
        assert device.memory_bandwidth_gbs == pytest.approx(
            float(r["mem_bandwidth_gbs"]), rel=0.02
        ), name
