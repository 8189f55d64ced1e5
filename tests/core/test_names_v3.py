"""Names people and drivers use for devices: a generic driver name means no card, a chip named
with a GPU backend means its GPU, a product containing one chip resolves and one containing
several asks, and the records people search for are there."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from advisor.core.catalogue.backend_paths import usable_compute
from advisor.core.catalogue.catalogue import (
    AmbiguousDeviceError,
    UnknownDeviceError,
    load_catalogue,
)
from advisor.core.hardware.model import BackendInfo, CpuInfo, GpuInfo, HardwareReport, RamInfo
from advisor.core.hardware.profile import match_catalogue

GENERIC = [
    "AMD Radeon(TM) Graphics",  # what Windows prints for many Ryzen iGPUs
    "AMD Radeon Graphics",
    "Radeon Graphics",
    "Radeon",
    "Intel(R) Arc(TM) Graphics",
    "Intel(R) UHD Graphics",
    "Intel(R) Iris(R) Xe Graphics",
]


@pytest.mark.parametrize("name", GENERIC)
def test_a_generic_driver_name_is_no_device(name):
    catalogue = load_catalogue()
    assert catalogue.try_resolve(name) is None  # it was the Radeon VII
    with pytest.raises(UnknownDeviceError, match="family name"):
        catalogue.resolve(name)


@pytest.mark.parametrize(
    ("name", "device_id"),
    [
        ("Radeon VII", "amd-radeon-vii"),
        ("AMD Radeon 8060S Graphics", "amd-radeon-8060s-ryzen-ai-max-plus-395"),
        ("Radeon Pro VII", "amd-radeon-pro-vii"),
        ("AMD Radeon PRO V620", "amd-radeon-pro-v620"),
        ("Quadro RTX 5000", "nvidia-quadro-rtx-5000"),
        ("Arc 140V", "intel-arc-140v"),
    ],
)
def test_a_real_name_with_family_words_still_resolves(name, device_id):
    assert load_catalogue().resolve(name).id == device_id


def _report(cpu: str, gpu: str) -> HardwareReport:
    return HardwareReport(
        os="Windows", os_version="11", machine=None,
        cpu=CpuInfo(model=cpu, physical_cores=12, logical_cores=24, features=("AVX2",)),
        ram=RamInfo(total_bytes=32 * 1024**3),
        gpus=(GpuInfo(name=gpu, vendor="AMD", vram_total_bytes=512 * 1024**2),),
        backend=BackendInfo(available=True, backends=("CPU", "Vulkan"), gpu_offload=True),
    )  # fmt: skip


def test_the_detector_takes_a_generic_igpu_name_from_its_chip():
    catalogue = load_catalogue()
    report = match_catalogue(
        _report("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "AMD Radeon(TM) Graphics"), catalogue
    )
    assert report.cpu.catalogue_id == "amd-ryzen-ai-9-hx-370"
    assert report.gpus[0].catalogue_id == "amd-radeon-890m-ryzen-ai-9-hx-370"


def test_a_generic_name_on_a_chip_without_one_catalogued_igpu_stays_unknown():
    catalogue = load_catalogue()
    report = match_catalogue(
        _report("AMD Ryzen 9 7950X 16-Core Processor", "AMD Radeon(TM) Graphics"), catalogue
    )
    assert report.gpus[0].catalogue_id is None  # never a discrete card


def test_a_chip_named_with_a_gpu_backend_means_its_gpu():
    catalogue = load_catalogue()
    chip = catalogue.resolve("Ryzen AI Max+ 395")
    assert chip.is_cpu
    assert catalogue.for_backend(chip, "rocm").id == "amd-radeon-8060s-ryzen-ai-max-plus-395"
    assert catalogue.for_backend(chip, "vulkan").id == "amd-radeon-8060s-ryzen-ai-max-plus-395"
    assert catalogue.for_backend(chip, "cpu") is chip
    assert catalogue.for_backend(chip, None) is chip
    card = catalogue.resolve("RTX 4090")
    assert catalogue.for_backend(card, "vulkan") is card


def test_project_with_a_chip_and_rocm_projects_its_igpu(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "project", "--shape", "llama-3.1-8b", "--quant",
         "q4_k_m", "--to", "Ryzen AI Max+ 395", "--backend", "rocm", "--json"],
        capture_output=True, text=True, timeout=120,
        env={"ADVISOR_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["targets"]
    assert [r["device_id"] for r in rows] == ["amd-radeon-8060s-ryzen-ai-max-plus-395"]
    assert rows[0]["backend"] == "rocm" and rows[0]["decode_tps"]


@pytest.mark.parametrize(
    ("product", "ids"),
    [
        ("Mac Studio M3 Ultra", {"apple-m3-ultra-60c", "apple-m3-ultra-80c"}),
        ("Framework Desktop", None),  # the Max 385 and the Max+ 395 boards: it asks
        ("ROG Ally", {"amd-ryzen-z1-extreme-igpu-lpddr5", "amd-ryzen-z1-igpu"}),
    ],
)
def test_a_product_with_several_chips_asks(product, ids):
    with pytest.raises(AmbiguousDeviceError) as asked:
        load_catalogue().resolve(product)
    found = {d.id for d in asked.value.devices}
    assert len(found) > 1 and (ids is None or found == ids)


@pytest.mark.parametrize(
    ("product", "device_id"),
    [
        ("ROG Ally X", "amd-ryzen-z1-extreme-igpu-lpddr5x"),
        ("DGX Spark", "nvidia-dgx-spark-gb10"),
    ],
)
def test_a_product_with_one_chip_resolves(product, device_id):
    assert load_catalogue().resolve(product).id == device_id


def test_the_p40s_prefill_runs_at_its_published_int8_rate():
    p40 = load_catalogue().resolve("Tesla P40")
    usable = usable_compute(p40, "cuda", True)
    assert p40.int8_dot_tops == 47.0
    assert usable.precision == "int8_dot_tops" and usable.flops_per_s == 47e12
