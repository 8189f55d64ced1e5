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
from tests.conftest import load_script

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
        ("Apple M4 Pro 20-core GPU", 273),
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
        ("H200 SXM", 4800),
        ("rtx4090", 1008),
        ("RTX-4090", 1008),
        ("5070ti", 896),
    ],
)
def test_names_resolve_with_vendor_bandwidth(catalogue, name, bandwidth):
    assert catalogue.resolve(name).memory_bandwidth_gbs == pytest.approx(bandwidth)


# the names the catalogue issue listed: each resolves to one device, or asks which variant
RESOLVE = {
    "rtx4090": "nvidia-geforce-rtx-4090",
    "5070ti": "nvidia-geforce-rtx-5070-ti",
    "RTX-4090": "nvidia-geforce-rtx-4090",
    "GeForce RTX 4090 24GB": "nvidia-geforce-rtx-4090",
    "Ryzen AI Max 390": "amd-ryzen-ai-max-390",
    "Ryzen AI Max 385": "amd-ryzen-ai-max-385",
    "ASUS Ascent GX10": "nvidia-dgx-spark-gb10",
    "DGX Spark": "nvidia-dgx-spark-gb10",
    "Jetson Thor": "nvidia-jetson-agx-thor-t5000",
    "Radeon VII": "amd-radeon-vii",
    "RTX 4090 D": "nvidia-geforce-rtx-4090-d",
    "9950X3D": "amd-ryzen-9-9950x3d",
    "NVIDIA Quadro RTX 6000": "nvidia-quadro-rtx-6000",
    "M4 Max 32-core GPU": "apple-m4-max-32c",
    "Apple M4 Max (40-core GPU)": "apple-m4-max-40c",
}
ASK = {
    "M4 Max": {"apple-m4-max-32c", "apple-m4-max-40c"},
    "A100": {"nvidia-a100-pcie-40gb", "nvidia-a100-pcie-80gb", "nvidia-a100-sxm4-80gb"},
    "H100": {"nvidia-h100-pcie", "nvidia-h100-sxm5"},
    "H100 80GB": {"nvidia-h100-pcie", "nvidia-h100-sxm5"},
    "V100": {"nvidia-tesla-v100-pcie", "nvidia-tesla-v100-sxm2"},
    "Orin": {"nvidia-jetson-agx-orin-64gb", "nvidia-jetson-orin-nano-8gb"},
    "3080": {"nvidia-geforce-rtx-3080-10gb", "nvidia-geforce-rtx-3080-12gb"},
    "7900": {"amd-radeon-rx-7900-gre", "amd-radeon-rx-7900-xtx"},
    "RTX 6000": {"nvidia-rtx-6000-ada", "nvidia-quadro-rtx-6000"},
    "Strix Halo": {"amd-radeon-8060s-ryzen-ai-max-plus-395", "amd-ryzen-ai-max-390"},
    "Framework Desktop": {"amd-radeon-8060s-ryzen-ai-max-plus-395"},
    "Mac Studio M3 Ultra": {"apple-m3-ultra-60c", "apple-m3-ultra-80c"},
}


@pytest.mark.parametrize("name", sorted(RESOLVE))
def test_names_people_type_resolve(catalogue, name):
    assert catalogue.resolve(name).id == RESOLVE[name]


@pytest.mark.parametrize("name", sorted(ASK))
def test_names_that_fit_several_variants_ask(catalogue, name):
    from advisor.core.catalogue.catalogue import AmbiguousDeviceError

    with pytest.raises(AmbiguousDeviceError) as caught:
        catalogue.resolve(name)
    listed = {d.id for d in caught.value.devices}
    assert ASK[name] <= listed, listed
    message = str(caught.value)
    assert "GB/s" in message and "\n" not in message  # each variant with its bandwidth
    assert catalogue.try_resolve(name) is None  # detection never guesses either


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


def test_search_words_begin_words_of_the_name(catalogue):
    # 'M4' is the Apple M4 family, not an A100 SXM4 whose name holds the letters
    found = catalogue.search("M4")
    assert found and all(d.name.startswith("Apple M4") for d in found)
    assert {d.name for d in catalogue.search("SXM4")} >= {"A100 SXM4 40GB", "A100 SXM4 80GB"}
    # a word may be the start of a longer one: '409' finds the 4090s
    assert "GeForce RTX 4090" in {d.name for d in catalogue.search("409")}


def test_the_shipped_calibration_set_is_the_reference_one():
    if not REFERENCE_CALIBRATION.exists():
        pytest.skip("the project's shared/reference folder is not beside this checkout")
    assert CALIBRATION.read_bytes() == REFERENCE_CALIBRATION.read_bytes()


def test_every_calibration_device_resolves_with_its_bandwidth(catalogue):
    with CALIBRATION.open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    from advisor.core.predict.model.observations import device_of

    for r in rows:
        # the catalogue's own figure (device_of would take the row's where they differ)
        device = catalogue.by_id(device_of(r, catalogue).id)
        assert device.memory_bandwidth_gbs == pytest.approx(
            float(r["mem_bandwidth_gbs"]), rel=0.02
        ), r["device"]


def test_every_name_and_alias_resolves_to_its_own_record(catalogue):
    wrong = []
    for d in catalogue:
        for label in (d.name, *d.aliases):
            found = catalogue.try_resolve(label)
            if found is None or found.id != d.id:
                wrong.append((label, d.id, found.id if found else None))
    assert not wrong, wrong


def _checker():
    return load_script("device_db/tools/check.py")


def test_the_catalogue_checker_passes():
    check = _checker()
    assert check.check(REPO / "device_db", None) == 0


def test_the_checker_refuses_a_sparse_figure_and_an_unexplained_peak(catalogue):
    check = _checker()
    record = next(d for d in catalogue if d.id == "nvidia-geforce-rtx-4090").to_json()
    assert check.peak_errors(record) == []
    sparse = {**record, "int8_tensor_tops": 2 * record["int8_tensor_tops"]}  # the 2x headline
    assert any("sparse figure" in e for e in check.peak_errors(sparse))
    off = {**record, "fp32_tflops": record["fp32_tflops"] * 1.2}  # a wrong clock assumed
    assert any("fp32_tflops" in e and "off" in e for e in check.peak_errors(off))
    reason = "peak-check: the vendor counts dual issue"
    explained = {**off, "derived": {**record["derived"], "fp32_tflops": reason}}
    assert not any("fp32_tflops" in e for e in check.peak_errors(explained))


def test_the_checker_refuses_a_backend_path_row_without_a_source(tmp_path):
    import shutil

    check = _checker()
    db = tmp_path / "device_db"
    shutil.copytree(REPO / "device_db", db)
    data = json.loads((db / "backend_paths.json").read_text())
    data["rules"][0]["source"] = ""
    (db / "backend_paths.json").write_text(json.dumps(data))
    schema_fields = set(
        json.loads((db / "schema.json").read_text())["$defs"]["device"]["properties"]
    )
    errors = check.backend_path_errors(db, schema_fields)
    assert errors == [f"backend_paths.json: {data['rules'][0]['id']}: no source"]


def test_a_chips_cpu_knows_its_integrated_gpu(catalogue):
    gpus = catalogue.chip_gpus(catalogue.resolve("Ryzen AI Max+ 395"))
    assert [g.id for g in gpus] == ["amd-radeon-8060s-ryzen-ai-max-plus-395"]
    assert [g.name for g in catalogue.chip_gpus(catalogue.resolve("Ryzen AI 9 HX 370"))] == [
        "Radeon 890M (Ryzen AI 9 HX 370)"
    ]
    # a GPU has none, nor a CPU whose chip has no GPU catalogued
    assert catalogue.chip_gpus(catalogue.resolve("Radeon 8060S")) == []
    assert catalogue.chip_gpus(catalogue.resolve("Ryzen 9 7950X")) == []
    hx370 = catalogue.resolve("Ryzen AI 9 HX 370")
    assert catalogue.chip_sentence(hx370, "pick '{}'.") == (
        "Ryzen AI 9 HX 370 is the chip's CPU; its GPU, 'Radeon 890M (Ryzen AI 9 HX 370)' "
        "(vulkan, rocm), usually runs llama.cpp faster: pick 'Radeon 890M (Ryzen AI 9 HX 370)'."
    )
    # nothing to say where the GPU is already named, or the chip has none catalogued
    assert catalogue.chip_sentence(hx370, "pick '{}'.", {"amd-radeon-890m-ryzen-ai-9-hx-370"}) == ""
    assert catalogue.chip_sentence(catalogue.resolve("Ryzen 9 7950X"), "pick '{}'.") == ""
