"""Matching what detection found (recorded real outputs) to catalogue records, and the machine
profile that explains a benchmark."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware import parsers as P
from advisor.core.hardware.model import BackendInfo, CpuInfo, HardwareReport, RamInfo
from advisor.core.hardware.profile import build_profile, match_catalogue
from advisor.core.predict.physics.ceilings import usable_peak

FIX = Path(__file__).resolve().parent / "fixtures"


def _report(gpus, cpu_model="AMD Ryzen 9 7950X 16-Core Processor", backends=("CPU", "CUDA")):
    return HardwareReport(
        os="Linux",
        os_version="test",
        machine=None,
        cpu=CpuInfo(
            model=cpu_model,
            physical_cores=16,
            logical_cores=32,
            features=("AVX2", "AVX512F", "AVX512_VNNI"),
        ),
        ram=RamInfo(total_bytes=64 * 1024**3, measured_bandwidth_bytes_per_s=60e9),
        gpus=tuple(gpus),
        backend=BackendInfo(available=True, backends=backends, gpu_offload="CUDA" in backends),
    )


@pytest.mark.parametrize(
    ("fixture", "parser", "expected"),
    [
        ("nvidia/smi-q-x-rtx4090.xml", P.parse_nvidia_smi_xml, "nvidia-geforce-rtx-4090"),
        (
            "nvidia/smi-q-x-rtx3060-laptop.xml",
            P.parse_nvidia_smi_xml,
            "nvidia-geforce-rtx-3060-laptop",
        ),
        ("nvidia/smi-q-x-tesla-t4.xml", P.parse_nvidia_smi_xml, "nvidia-tesla-t4"),
        ("nvidia/query-gpu-h100-80gb-hbm3.csv", P.parse_nvidia_smi_csv, "nvidia-h100-sxm5"),
        (
            "nvidia/query-gpu-rtx2080super-windows.csv",
            P.parse_nvidia_smi_csv,
            "nvidia-geforce-rtx-2080-super",
        ),
        ("nvidia/query-gpu-l40s.csv", P.parse_nvidia_smi_csv, "nvidia-l40s"),
        ("nvidia/smi-q-x-a100-40gb-mig.xml", P.parse_nvidia_smi_xml, "nvidia-a100-sxm4-40gb"),
        ("macos/sp-displays-m1pro-14core-3displays.json", P.parse_sp_displays, "apple-m1-pro-14c"),
        (
            "macos/sp-displays-m1-7core-kHW-name-reformatted.json",
            P.parse_sp_displays,
            "apple-m1-7c",
        ),
    ],
)
def test_recorded_gpus_match_their_catalogue_record(fixture, parser, expected):
    cat = load_catalogue()
    assert cat.by_id(expected) is not None, expected
    gpus = parser((FIX / fixture).read_text(encoding="utf-8"))
    matched = match_catalogue(_report(gpus), cat)
    assert matched.gpus[0].catalogue_id == expected


def test_graphics_device_is_found_by_pci_id():
    cat = load_catalogue()
    gpus = P.parse_nvidia_smi_xml(
        (FIX / "nvidia/smi-q-x-gtx1660ti-graphics-device.xml").read_text()
    )
    assert gpus[0].name == "Graphics Device" or "Graphics Device" in gpus[0].name
    matched = match_catalogue(_report(gpus), cat)
    device = cat.by_id(matched.gpus[0].catalogue_id)
    assert device is not None and "1660" in device.name


def test_virtual_gpu_is_not_matched():
    gpus = P.parse_sp_displays(
        (FIX / "macos/sp-displays-gh-runner-intel-vm-paravirt.json").read_text()
    )
    matched = match_catalogue(_report(gpus), load_catalogue())
    assert matched.gpus[0].is_virtual and matched.gpus[0].catalogue_id is None


def test_cpu_matches_from_its_brand_string():
    matched = match_catalogue(_report([]), load_catalogue())
    assert matched.cpu.catalogue_id == "amd-ryzen-9-7950x"


def test_profile_uses_the_gpu_with_a_gpu_backend():
    cat = load_catalogue()
    gpus = P.parse_nvidia_smi_xml((FIX / "nvidia/smi-q-x-rtx4090.xml").read_text())
    profile = build_profile(match_catalogue(_report(gpus), cat), cat)
    assert profile.name == "GeForce RTX 4090" and profile.backend == "cuda"
    assert profile.spec_bandwidth_bytes_per_s == 1008e9
    assert profile.peak_flops_per_s == pytest.approx(165.2e12)


def test_profile_falls_back_to_the_cpu_without_a_gpu_backend():
    cat = load_catalogue()
    report = match_catalogue(_report([], backends=("CPU",)), cat)
    profile = build_profile(report, cat)
    assert profile.backend == "cpu" and profile.catalogue_id == "amd-ryzen-9-7950x"
    # no module speeds: the catalogue's highest supported speed, and it says so
    assert "catalogue" in profile.spec_bandwidth_source
    assert profile.measured_bandwidth_bytes_per_s == 60e9
    quantized, source = profile.compute_peak(True)
    # the peak shown is the one a run's ceiling and the predictions count prefill against
    assert quantized == usable_peak(profile.device, "cpu", True) > 0
    assert source


def test_a_hand_picked_device_wins():
    cat = load_catalogue()
    report = match_catalogue(_report([], backends=("CPU",)), cat)
    profile = build_profile(replace(report), cat, chosen_device_id="apple-m4-max-40c")
    assert profile.name == "Apple M4 Max (40-core GPU)" and profile.backend == "metal"


@pytest.mark.parametrize(
    ("cpu_model", "features", "gpus", "words"),
    [
        # an unknown CPU: its INT8 rate estimated from its FP32 one (AVX2's maddubs pairs run
        # at twice it); a run of Q4_0 here measured 0.34 TFLOP/s, 175% of the FP32 figure
        ("AMD EPYC", ("AVX2", "FMA"), (), "2 x the FP32 peak (AVX2's int8 multiply-adds"),
        # without AVX2 no INT8 rate is known: the FP32 estimate, and the sentence says why
        ("AMD EPYC", ("SSE4_2",), (), "none is published for the INT8 dot products"),
        # a catalogued CPU with an INT8 figure (an MSVC build reaches it): this machine's own
        # record keeps the catalogue's peaks, so its ceiling is the catalogue chip's
        ("Intel Xeon Platinum 8480+", ("AVX2", "AVX512F", "AVX512_VNNI", "AMX_INT8"), (), ""),
        # a GPU: its INT8 matrix peak for a quantised model
        ("AMD Ryzen 9 7950X 16-Core Processor", ("AVX2",), "rtx4090", "INT8 matrix units"),
    ],
)
def test_the_compute_peak_shown_is_the_one_prefill_is_counted_against(
    cpu_model, features, gpus, words
):
    """The Machine page and `advisor detect` showed a CPU's INT8 estimate (0.38 TFLOP/s on two
    cores) while the run's ceiling counted against its FP32 peak (0.19): '74% of the compute
    peak' beside a page whose peak made it 37%."""
    cat = load_catalogue()
    parsed = (
        P.parse_nvidia_smi_xml((FIX / "nvidia/smi-q-x-rtx4090.xml").read_text()) if gpus else []
    )
    report = _report(parsed, cpu_model=cpu_model)
    report = replace(report, cpu=replace(report.cpu, features=features))
    profile = build_profile(match_catalogue(report, cat), cat)
    for quantized in (True, False):
        shown, source = profile.compute_peak(quantized)
        assert shown == usable_peak(profile.device, profile.backend, quantized), quantized
        assert source
    if words:
        assert words in profile.compute_peak(True)[1]
    matched = cat.by_id(profile.catalogue_id) if profile.catalogue_id else None
    if matched is not None and matched.is_cpu:
        assert profile.device.int8_dot_tops == matched.int8_dot_tops


@pytest.mark.parametrize(
    ("installed", "device_id", "backend", "note"),
    [
        # a Mac's Metal build, a GeForce chosen by hand: Metal on a GeForce has no numbers
        (("CPU", "Metal"), "nvidia-geforce-rtx-4090", "cuda", "runs Metal, which the GeForce"),
        (("CPU", "CUDA"), "apple-m4-max-40c", "metal", "assume a build with Metal"),
        (("CPU", "CUDA"), "amd-radeon-rx-7900-xtx", "rocm", "runs CUDA, which the Radeon"),
        # a backend installed that the device runs is the one used, with nothing to say
        (("CPU", "Vulkan"), "nvidia-geforce-rtx-4090", "vulkan", ""),
        (("CPU", "Metal", "Vulkan"), "amd-radeon-rx-7900-xtx", "vulkan", ""),
    ],
)
def test_a_chosen_device_gets_a_backend_it_runs(installed, device_id, backend, note):
    cat = load_catalogue()
    report = match_catalogue(_report([], backends=installed), cat)
    profile = build_profile(report, cat, chosen_device_id=device_id)
    assert profile.backend == backend
    said = " ".join(profile.notes)
    assert (note in said) if note else ("does not" not in said), said
    assert profile.compute_peak(True)[0]  # a backend with numbers
    # a benchmark here measures the device only where the build has its backend
    runs_here = backend in {b.lower() for b in installed}
    assert (profile.not_measurable_here() is None) == runs_here


def test_a_gpu_a_cpu_only_build_cannot_use_is_named_with_how_to_use_it():
    """The default pip install builds llama.cpp for the CPU only: the card went unmentioned and
    the page showed the CPU as if no GPU were there."""
    from advisor.cli.commands.detect import text

    cat = load_catalogue()
    gpus = P.parse_nvidia_smi_xml((FIX / "nvidia/smi-q-x-rtx4090.xml").read_text())
    report = match_catalogue(_report(gpus, backends=("CPU",)), cat)
    profile = build_profile(report, cat)
    assert profile.backend == "cpu"
    said = " ".join(profile.notes)
    assert "GeForce RTX 4090 is not used" in said and 'CMAKE_ARGS="-DGGML_CUDA=on"' in said
    assert said in text(report, profile)  # `advisor detect` prints it too
    # with the backend installed, nothing to say
    with_cuda = build_profile(match_catalogue(_report(gpus), cat), cat)
    assert with_cuda.backend == "cuda" and "not used" not in " ".join(with_cuda.notes)
