"""Every parser against recorded real outputs (fixtures/README.md names each file's source).

Each test asserts the facts INDEX.md lists for its recording, traps included. The few inputs
that are not recordings (no attributable sample exists) are marked as such where they occur.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.core.hardware import parsers as P
from advisor.core.hardware.model import MemoryModule
from advisor.core.hardware.ram_estimate import estimate_ram_bandwidth

FIXTURES = Path(__file__).parent / "fixtures"
MiB = 1024**2
GiB = 1024**3


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8", errors="replace")


# --------------------------------------------------------------------------- macOS


def test_sp_displays_m1_pro_counts_one_gpu_with_14_cores_not_its_three_displays():
    gpus = P.parse_sp_displays(fixture("macos/sp-displays-m1pro-14core-3displays.json"))
    assert len(gpus) == 1  # the three monitors under spdisplays_ndrvs are not GPUs
    gpu = gpus[0]
    assert gpu.name == "Apple M1 Pro"
    assert gpu.gpu_cores == 14  # sppci_cores is the string "14"
    assert gpu.vendor == "Apple"
    assert gpu.unified_memory is True
    assert gpu.vram_total_bytes is None  # no VRAM key: unified memory
    assert gpu.is_virtual is False


def test_sp_displays_reads_sppci_model_not_the_khw_localisation_key():
    gpus = P.parse_sp_displays(fixture("macos/sp-displays-m1-7core-kHW-name-reformatted.json"))
    assert [g.name for g in gpus] == ["Apple M1"]  # _name is 'kHW_AppleM1Item'
    assert gpus[0].gpu_cores == 7  # the binned 7-core M1 GPU, not 8
    assert gpus[0].unified_memory and gpus[0].vram_total_bytes is None


def test_sp_displays_paravirtual_gpu_of_a_vm_is_virtual_not_an_apple_chip():
    gpus = P.parse_sp_displays(fixture("macos/sp-displays-gh-runner-intel-vm-paravirt.json"))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.name == "Apple Paravirtualized Graphics Device"
    assert gpu.is_virtual is True
    assert gpu.vendor == "virtual"
    assert gpu.unified_memory is False
    assert gpu.gpu_cores is None
    assert gpu.vram_total_bytes == 64 * MiB


def test_sp_hardware_m5_max_four_field_processor_count():
    hw = P.parse_sp_hardware(fixture("macos/sp-hardware-m5max-128gb.json"))
    assert hw.chip == "Apple M5 Max"
    assert hw.memory_bytes == 128 * GiB  # '128 GB' with a unit
    assert hw.machine_model == "Mac17,6"
    assert hw.total_cores == 18
    assert hw.core_groups == (6, 0, 12)  # 'proc 18:6:0:12'
    cpu = P.cpu_info_from_sp_hardware(hw)
    assert cpu.model == "Apple M5 Max"
    assert cpu.physical_cores == 18
    assert cpu.efficiency_cores == 0  # 6 'Super' + 12 'Performance', no efficiency cores
    assert cpu.performance_cores == 18


def test_sysctl_m5_max_perf_levels_are_super_and_performance_with_no_efficiency_level():
    values = P.parse_sysctl(fixture("macos/sysctl-perflevels-m5max.txt"))
    assert values["hw.nperflevels"] == "2"
    cpu = P.cpu_info_from_sysctl(values)
    assert cpu.core_types == (("Super", 6), ("Performance", 12))
    assert cpu.physical_cores == 18
    assert cpu.efficiency_cores == 0
    assert cpu.performance_cores == 18


def test_sp_hardware_m1_native_three_field_processor_count():
    hw = P.parse_sp_hardware(fixture("macos/sp-hardware-m1-air-16gb-native.json"))
    assert hw.chip == "Apple M1"
    assert hw.memory_bytes == 16 * GiB
    assert hw.machine_model == "MacBookAir10,1"
    cpu = P.cpu_info_from_sp_hardware(hw)
    assert (cpu.physical_cores, cpu.performance_cores, cpu.efficiency_cores) == (8, 4, 4)
    assert cpu.architecture == "arm64"


def test_sp_hardware_under_rosetta_changes_shape_but_still_parses():
    hw = P.parse_sp_hardware(fixture("macos/sp-hardware-m1-air-16gb-under-rosetta.json"))
    assert hw.chip is None  # chip_type disappears under Rosetta
    assert hw.cpu_type is None  # 'Unknown' is not a CPU name
    assert hw.processor_ghz == pytest.approx(2.4)  # '2,4 GHz': locale decimal comma
    assert hw.total_cores == 8  # an integer here, not 'proc 8:4:4'
    assert hw.core_groups == ()
    assert hw.memory_bytes == 16 * GiB
    # nothing in it names the chip: detection must fall back to sysctl
    assert P.cpu_info_from_sp_hardware(hw).model is None


def test_sp_hardware_intel_imac_pro_has_cpu_type_and_integer_processor_count():
    hw = P.parse_sp_hardware(fixture("macos/sp-hardware-imacpro-xeonw-32gb.json"))
    assert hw.chip is None
    assert hw.cpu_type == "8-Core Intel Xeon W"
    assert hw.processor_ghz == pytest.approx(3.2)
    assert hw.total_cores == 8
    assert hw.packages == 1
    assert hw.memory_bytes == 32 * GiB
    cpu = P.cpu_info_from_sp_hardware(hw)
    assert (cpu.vendor, cpu.architecture) == ("Intel", "x86_64")


def test_sp_hardware_m1_virtual_machine_strips_the_virtual_suffix():
    hw = P.parse_sp_hardware(fixture("macos/sp-hardware-gh-runner-m1-virtual.json"))
    assert hw.chip == "Apple M1"
    assert hw.chip_is_virtual is True
    assert hw.machine_model == "VirtualMac2,1"
    assert hw.total_cores == 3
    assert hw.memory_bytes == 7 * GiB


def test_sp_hardware_intel_vm_reports_unknown_cpu_type():
    hw = P.parse_sp_hardware(fixture("macos/sp-hardware-gh-runner-intel-vm.json"))
    assert hw.cpu_type is None and hw.chip is None
    assert hw.machine_model == "Macmini6,2"  # the VM claims a 2012 model id
    assert hw.processor_ghz == pytest.approx(3.19)
    assert hw.total_cores == 4
    assert hw.memory_bytes == 14 * GiB


def test_sysctl_intel_vm_runner():
    values = P.parse_sysctl(fixture("macos/sysctl-gh-runner-intel-vm.txt"))
    assert int(values["hw.memsize"]) == 15032385536 == 14 * GiB  # matches SPHardware '14 GB'
    cpu = P.cpu_info_from_sysctl(values)
    assert cpu.model == "Intel(R) Core(TM) i7-8700B CPU @ 3.20GHz"
    assert cpu.vendor == "Intel"
    assert cpu.physical_cores == 4
    assert cpu.core_types == (("Standard", 4),)
    assert cpu.performance_cores is None and cpu.efficiency_cores is None  # no P/E split


def test_sysctl_m1_virtual_runner():
    values = P.parse_sysctl(fixture("macos/sysctl-gh-runner-m1-virtual.txt"))
    assert int(values["hw.memsize"]) == 7 * GiB
    assert values["hw.model"] == "VirtualMac2,1"
    cpu = P.cpu_info_from_sysctl(values)
    assert cpu.model == "Apple M1"  # 'Apple M1 (Virtual)' with the suffix stripped
    assert cpu.vendor == "Apple" and cpu.architecture == "arm64"
    assert cpu.physical_cores == 3
    assert cpu.performance_cores is None  # one 'Standard' level in a VM


def test_sysctl_intel_i5_machdep_listing():
    values = P.parse_sysctl(fixture("macos/sysctl-machdep-intel-i5-2557m-osx1012.txt"))
    assert "hw.memsize" not in values
    cpu = P.cpu_info_from_sysctl(values)
    assert cpu.model == "Intel(R) Core(TM) i5-2557M CPU @ 1.70GHz"
    assert (cpu.physical_cores, cpu.logical_cores) == (2, 4)
    assert cpu.max_mhz == pytest.approx(1700.0)  # hw.cpufrequency in Hz
    assert "AVX" in cpu.features  # spelled 'AVX1.0' by macOS
    assert "AVX2" not in cpu.features  # Sandy Bridge
    assert "SSE4_2" in cpu.features


def test_sysctl_n_form_takes_the_names_asked_for():
    # `sysctl -n hw.memsize hw.ncpu` prints values only (built from the runner recording).
    values = P.parse_sysctl("7516192768\n3\n", names=["hw.memsize", "hw.ncpu"])
    assert values == {"hw.memsize": "7516192768", "hw.ncpu": "3"}


def test_sp_memory_minimal_shapes():
    # No recorded SPMemoryDataType output exists (INDEX.md 'Gaps'): these are the two shapes
    # public parsers expect, kept minimal so the parser stays honest about what it knows.
    apple = P.parse_sp_memory(
        '{"SPMemoryDataType":[{"dimm_manufacturer":"Hynix","dimm_type":"LPDDR5",'
        '"SPMemoryDataType":"24 GB"}]}'
    )
    assert (apple.type, apple.total_bytes, apple.modules) == ("LPDDR5", 24 * GiB, ())
    intel = P.parse_sp_memory(
        '{"SPMemoryDataType":[{"_name":"Memory Slots","is_memory_upgradeable":"Yes","_items":['
        '{"_name":"DIMM0/0","dimm_size":"8 GB","dimm_speed":"2667 MHz","dimm_type":"DDR4"},'
        '{"_name":"DIMM0/1","dimm_size":"empty","dimm_type":"empty"}]}]}'
    )
    assert intel.type == "DDR4" and intel.upgradeable is True
    assert intel.modules == (MemoryModule(8 * GiB, "DDR4", 2667, locator="DIMM0/0"),)


# --------------------------------------------------------------------------- NVIDIA XML

XML_CASES = [
    # file, name, fb total MiB, driver, pci id, bus id
    ("smi-q-x-rtx3060-laptop.xml", "NVIDIA GeForce RTX 3060 Laptop GPU", 6144, "515.65.01",
     "10de:2520", "0000:01:00.0"),
    ("smi-q-x-rtx4090.xml", "NVIDIA GeForce RTX 4090", 24564, "535.86.05", "10de:2684",
     "0000:84:00.0"),
    ("smi-q-x-a10g.xml", "NVIDIA A10G", 23028, "515.105.01", None, "0000:00:1e.0"),
    ("smi-q-x-rtx3080-v13.xml", "NVIDIA GeForce RTX 3080", 10240, "595.58.03", "10de:2216",
     "0000:0c:00.0"),
    ("smi-q-x-rtx4000-sff-ada.xml", "NVIDIA RTX 4000 SFF Ada Generation", 20475, "595.84",
     "10de:27b0", "0000:06:00.0"),
    ("smi-q-x-tesla-t4.xml", "Tesla T4", 15360, "515.105.01", "10de:1eb8", "0000:00:1e.0"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "product", "total_mib", "driver", "pci", "bus"), XML_CASES)
def test_nvidia_xml_reads_the_framebuffer_total_not_bar1(
    name, product, total_mib, driver, pci, bus
):
    gpus = P.parse_nvidia_smi_xml(fixture(f"nvidia/{name}"))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.name == product
    assert gpu.vendor == "NVIDIA"
    assert gpu.vram_total_bytes == total_mib * MiB
    assert gpu.driver == driver
    assert gpu.pci_id == pci  # the A10G VM passes through a zero device id: unknown
    assert gpu.pci_bus_id == bus


def test_nvidia_xml_rtx4090_memory_clock_gives_1008_gbs_with_its_384_bit_bus():
    gpu = P.parse_nvidia_smi_xml(fixture("nvidia/smi-q-x-rtx4090.xml"))[0]
    assert gpu.memory_clock_mhz == 10501  # nvidia-smi's max memory clock (GDDR6X)
    # nvidia-smi does not print the bus width; 384 bits is the 4090's (NVML reports it)
    assert P.nvidia_theoretical_bandwidth(384, gpu.memory_clock_mhz) == pytest.approx(
        1008e9, rel=0.001
    )


@pytest.mark.parametrize(
    ("bus_bits", "clock_mhz", "datasheet_gbs"),
    [
        (384, 10501, 1008),  # RTX 4090, GDDR6X (NVML max memory clock)
        (256, 7751, 496),  # RTX 2080 SUPER, GDDR6 (clock from the Windows CSV recording)
        (5120, 1215, 1555),  # A100-SXM4-40GB, HBM2 (clock from the XML recording)
        (5120, 1593, 2039),  # A100-SXM4-80GB, HBM2e (XML recording)
        (5120, 2619, 3352),  # H100 80GB HBM3 (CSV recording)
        (384, 9001, 864),  # L40S, GDDR6 (CSV recording)
        (256, 5001, 320),  # Tesla T4, GDDR6 (XML recording)
        (320, 9501, 760),  # RTX 3080, GDDR6X (XML recording)
    ],
)
def test_nvidia_bandwidth_formula_matches_datasheets(bus_bits, clock_mhz, datasheet_gbs):
    assert P.nvidia_theoretical_bandwidth(bus_bits, clock_mhz) / 1e9 == pytest.approx(
        datasheet_gbs, rel=0.005
    )


def test_nvidia_xml_a100_mig_slices_come_before_the_gpu_total():
    gpus = P.parse_nvidia_smi_xml(fixture("nvidia/smi-q-x-a100-40gb-mig.xml"))
    assert len(gpus) == 1  # MIG slices are not GPUs
    gpu = gpus[0]
    assert gpu.name == "NVIDIA A100-SXM4-40GB"
    assert gpu.vram_total_bytes == 40960 * MiB  # not the first <total> (19968, a slice)
    assert gpu.driver == "510.47.03"
    assert "MIG enabled: 2 slices" in gpu.note


def test_nvidia_xml_trimmed_four_gpu_file_counts_gpu_elements():
    gpus = P.parse_nvidia_smi_xml(fixture("nvidia/smi-q-x-a100-80gb-mig-4gpu-trimmed.xml"))
    assert len(gpus) == 1  # attached_gpus says 4, only one <gpu> is present
    assert gpus[0].name == "NVIDIA A100-SXM4-80GB"
    assert gpus[0].vram_total_bytes == 81920 * MiB  # the first <total> in the file is 19968


def test_nvidia_xml_old_driver_graphics_device_is_identified_by_pci_id():
    gpu = P.parse_nvidia_smi_xml(fixture("nvidia/smi-q-x-gtx1660ti-graphics-device.xml"))[0]
    assert gpu.name == "Graphics Device"
    assert gpu.pci_id == "10de:2184"  # TU116, GeForce GTX 1660 Ti
    assert gpu.vram_total_bytes == 5912 * MiB
    assert gpu.driver == "418.43"
    assert "PCI id" in gpu.note


def test_nvidia_xml_dual_rtx2070():
    gpus = P.parse_nvidia_smi_xml(fixture("nvidia/smi-q-x-dual-rtx2070.xml"))
    assert [g.name for g in gpus] == ["NVIDIA GeForce RTX 2070"] * 2
    assert [g.pci_bus_id for g in gpus] == ["0000:01:00.0", "0000:02:00.0"]
    assert sum(g.vram_total_bytes for g in gpus) == 16384 * MiB


# --------------------------------------------------------------------------- NVIDIA CSV / -L


@pytest.mark.parametrize(
    ("name", "product", "total_mib", "driver", "pci"),
    [
        ("query-gpu-h100-80gb-hbm3.csv", "NVIDIA H100 80GB HBM3", 81559, "590.48.01",
         "10de:2330"),
        ("query-gpu-h200.csv", "NVIDIA H200", 143771, "590.48.01", "10de:2335"),
        ("query-gpu-l40s.csv", "NVIDIA L40S", 46068, "595.80", "10de:26b9"),
        ("query-gpu-rtx4080super.csv", "NVIDIA GeForce RTX 4080 SUPER", 16376, "595.71.05",
         "10de:2702"),
    ],
)  # fmt: skip
def test_nvidia_csv_by_header_name_with_units_in_values(name, product, total_mib, driver, pci):
    gpus = P.parse_nvidia_smi_csv(fixture(f"nvidia/{name}"))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.name == product
    assert gpu.vram_total_bytes == total_mib * MiB  # '81559 MiB' carries its unit
    assert gpu.driver == driver
    assert gpu.pci_id == pci


def test_nvidia_csv_windows_rtx2080_super_has_8_gb_of_vram():
    gpus = P.parse_nvidia_smi_csv(fixture("nvidia/query-gpu-rtx2080super-windows.csv"))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.name == "NVIDIA GeForce RTX 2080 SUPER"
    assert gpu.vram_total_bytes == 8192 * MiB  # more than the 4 GiB AdapterRAM could say
    assert gpu.vram_total_bytes > 4 * GiB
    assert gpu.vram_free_bytes == 7286 * MiB
    assert gpu.driver == "591.86"
    assert gpu.memory_clock_mhz == 7751


def test_nvidia_csv_without_total_column_sums_reserved_used_free_and_skips_na():
    gpus = P.parse_nvidia_smi_csv(fixture("nvidia/query-gpu-tesla-p100.csv"))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.name == "Tesla P100-PCIE-16GB"  # no 'NVIDIA ' prefix
    assert gpu.vram_total_bytes == (103 + 0 + 16280) * MiB
    assert gpu.vram_free_bytes == 16280 * MiB


def test_nvidia_list_mig_devices_are_slices_of_one_gpu():
    gpus = P.parse_nvidia_smi_list(fixture("nvidia/smi-L-h200-mig.txt"))
    assert [g.name for g in gpus] == ["NVIDIA H200"]
    assert "5 slices" in gpus[0].note
    assert "1c.3g.71gb" in gpus[0].note and "1g.18gb" in gpus[0].note


# --------------------------------------------------------------------------- Windows


def test_cim_video_controller_rtx3050ti_adapter_ram_cap_and_integrated_gpu():
    gpus = P.parse_cim_video_controller(
        fixture("windows/cim-videocontroller-rtx3050ti-laptop-plus-uhd.txt")
    )
    assert [g.name for g in gpus] == ["NVIDIA GeForce RTX 3050 Ti Laptop GPU",
                                      "Intel(R) UHD Graphics"]  # fmt: skip
    dgpu, igpu = gpus
    assert dgpu.vendor == "NVIDIA"
    assert dgpu.pci_id == "10de:25a0"
    assert dgpu.vram_total_bytes is None  # 4293918720 is the uint32 cap, not the size
    assert "at least 4 GiB" in dgpu.note
    assert dgpu.driver == "32.0.15.6590"
    assert igpu.vendor == "Intel"
    assert igpu.pci_id == "8086:9a60"
    assert igpu.unified_memory is True
    assert igpu.vram_total_bytes is None  # AdapterRAM 1 GiB is nominal, shared memory
    assert not dgpu.is_virtual and not igpu.is_virtual


def test_cim_format_list_joins_continuation_lines_that_start_with_a_colon():
    records = P.parse_cim_records(
        fixture("windows/cim-videocontroller-rtx3050ti-laptop-plus-uhd.txt")
    )
    assert len(records) == 2
    drivers = records[0]["InstalledDisplayDrivers"]
    # the value wraps after 'C' and continues with ':\Windows...' on an indented line
    assert drivers.count("C:\\Windows\\System32\\DriverStore") == 4
    assert drivers.endswith("nvldumdx.dll")
    assert records[0]["AdapterRAM"] == "4293918720"
    assert records[1]["AdapterRAM"] == "1073741824"


def test_wmi_video_controller_localised_chinese_intel_hd530():
    text = fixture("windows/wmi-videocontroller-intel-hd530-zh.txt")
    gpus = P.parse_cim_video_controller(text)
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.name == "Intel(R) HD Graphics 530"
    assert gpu.vendor == "Intel"
    assert gpu.pci_id == "8086:1912"
    assert gpu.driver == "23.20.16.4973"
    assert gpu.unified_memory and gpu.vram_total_bytes is None
    record = P.parse_cim_records(text)[0]
    assert record["VideoModeDescription"].endswith("种颜色")  # localised value kept intact
    assert record["InstalledDisplayDrivers"].endswith("igd12umd64.dll")
    assert record["InstalledDisplayDrivers"].count("igdlh64.inf_amd64_2c92d70c30b8effe") == 4


def test_cim_video_controller_json_form_matches_format_list_form():
    text = fixture("windows/cim-videocontroller-rtx3050ti-laptop-plus-uhd.txt")
    records = P.parse_cim_records(text)
    # ConvertTo-Json writes numbers as numbers: rebuild that form from the recording
    for record in records:
        record["AdapterRAM"] = int(record["AdapterRAM"])
    as_json = json.dumps(records)
    assert P.parse_cim_video_controller(as_json) == P.parse_cim_video_controller(text)
    single = json.dumps(records[0])  # one instance: an object, not a list
    assert P.parse_cim_video_controller(single)[0].name == "NVIDIA GeForce RTX 3050 Ti Laptop GPU"


def test_registry_qwmemorysize_replaces_the_capped_adapter_ram():
    gpus = P.parse_cim_video_controller(
        fixture("windows/cim-videocontroller-rtx3050ti-laptop-plus-uhd.txt")
    )
    # Registry values as PowerShell's JSON writes them (not a recording: INDEX.md 'Gaps');
    # MemorySize of the iGPU is a REG_BINARY, written as a list of bytes.
    registry = P.parse_windows_registry_qwmemorysize(
        json.dumps(
            [
                {"Key": "0000", "DriverDesc": "Intel(R) UHD Graphics",
                 "MatchingDeviceId": "PCI\\VEN_8086&DEV_9A60", "MemorySize": [0, 0, 0, 64]},
                {"Key": "0001", "DriverDesc": "NVIDIA GeForce RTX 3050 Ti Laptop GPU",
                 "MatchingDeviceId": "pci\\ven_10de&dev_25a0",
                 "HardwareInformation.qwMemorySize": 4294967296},
            ]
        )
    )  # fmt: skip
    assert [a.memory_bytes for a in registry] == [1 * GiB, 4 * GiB]
    merged = P.apply_windows_registry_vram(gpus, registry)
    assert merged[0].vram_total_bytes == 4 * GiB
    assert "registry" in merged[0].source
    assert merged[0].note is None  # the cap caveat no longer applies
    assert merged[1].vram_total_bytes is None  # the iGPU still shares system memory


def test_cim_processor_i7_11800h():
    cpu = P.parse_cim_processor(fixture("windows/cim-processor-i7-11800h.txt"))
    assert cpu.model == "11th Gen Intel(R) Core(TM) i7-11800H @ 2.30GHz"
    assert (cpu.physical_cores, cpu.logical_cores) == (8, 16)
    assert cpu.vendor == "Intel"
    assert cpu.architecture == "x86_64"  # Architecture 9
    assert cpu.max_mhz is None  # MaxClockSpeed 2304 is the base clock, not a maximum


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("wmic-cpu-list-i5-4300u.txt", "Intel(R) Core(TM) i5-4300U CPU @ 1.90GHz"),
        ("wmic-cpu-list-i7-870.txt", "Intel(R) Core(TM) i7 CPU 870 @ 2.93GHz"),
    ],
)
def test_wmic_cpu_collapses_runs_of_spaces(name, model):
    cpu = P.parse_wmic_cpu(fixture(f"windows/{name}"))
    assert cpu.model == model
    assert cpu.vendor == "Intel"
    assert cpu.physical_cores is None  # not in this query: unknown, not guessed


def test_win32_physical_memory_smbios_types_and_channels():
    # No attributable Win32_PhysicalMemory recording exists (INDEX.md 'Gaps'): the JSON
    # shape of `Get-CimInstance Win32_PhysicalMemory | ConvertTo-Json`, two DDR5 DIMMs.
    text = json.dumps(
        [
            {"Capacity": 17179869184, "Speed": 4800, "ConfiguredClockSpeed": 6000,
             "SMBIOSMemoryType": 34, "MemoryType": 0, "DataWidth": 64,
             "DeviceLocator": "DIMM 1", "BankLabel": "P0 CHANNEL A"},
            {"Capacity": 17179869184, "Speed": 4800, "ConfiguredClockSpeed": 6000,
             "SMBIOSMemoryType": 34, "MemoryType": 0, "DataWidth": 64,
             "DeviceLocator": "DIMM 1", "BankLabel": "P0 CHANNEL B"},
        ]
    )  # fmt: skip
    modules = P.parse_cim_physical_memory(text)
    assert [m.type for m in modules] == ["DDR5", "DDR5"]  # SMBIOSMemoryType 34, not MemoryType
    assert [m.speed_mts for m in modules] == [6000, 6000]
    estimate = estimate_ram_bandwidth(modules)
    assert estimate.channels == 2
    assert estimate.bytes_per_s == pytest.approx(96e9)


# --------------------------------------------------------------------------- Linux CPU


def test_lscpu_epyc_7742_dual_socket():
    cpu = P.parse_lscpu(fixture("linux/lscpu-epyc7742-2socket.txt"))
    assert cpu.model == "AMD EPYC 7742 64-Core Processor"
    assert cpu.vendor == "AMD"
    assert (cpu.sockets, cpu.physical_cores, cpu.logical_cores) == (2, 128, 256)
    assert cpu.max_mhz == pytest.approx(2250.0)
    assert {"AVX2", "FMA", "F16C"} <= set(cpu.features)
    assert "AVX512F" not in cpu.features
    assert "SME" not in cpu.features  # x86 'sme' is Secure Memory Encryption, not ARM SME


def test_lscpu_xeon_gold_6148_old_util_linux():
    cpu = P.parse_lscpu(fixture("linux/lscpu-xeon-gold6148-2socket.txt"))
    assert cpu.model == "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"
    assert (cpu.sockets, cpu.physical_cores, cpu.logical_cores) == (2, 40, 80)
    assert {"AVX512F", "AVX512BW", "AVX2", "FMA"} <= set(cpu.features)
    assert "AVX512_VNNI" not in cpu.features  # Skylake-SP has no VNNI


def test_lscpu_arm_cortex_a72_has_neon_and_no_clock():
    cpu = P.parse_lscpu(fixture("linux/lscpu-arm-cortex-a72.txt"))
    assert cpu.model == "Cortex-A72"
    assert cpu.vendor == "ARM"
    assert cpu.architecture == "arm64"
    assert (cpu.physical_cores, cpu.logical_cores, cpu.sockets) == (16, 16, 1)
    assert cpu.max_mhz is None
    assert cpu.features == ("NEON",)  # asimd; no AVX on ARM


def test_lscpu_ryzen_5950x_max_mhz_is_what_lscpu_says():
    cpu = P.parse_lscpu(fixture("linux/lscpu-ryzen9-5950x.txt"))
    assert cpu.model == "AMD Ryzen 9 5950X 16-Core Processor"
    assert (cpu.sockets, cpu.physical_cores, cpu.logical_cores) == (1, 16, 32)
    assert cpu.max_mhz == pytest.approx(3400.0)  # not 'CPU MHz' 2144.012 (current)
    assert "AVX2" in cpu.features and "AVX512F" not in cpu.features


def test_lscpu_old_aarch64_thunderx_without_model_name():
    cpu = P.parse_lscpu(fixture("linux/lscpu-aarch64-thunderx-2socket.txt"))
    assert cpu.model is None and cpu.vendor is None  # old lscpu on ARM names nothing
    assert (cpu.sockets, cpu.physical_cores, cpu.logical_cores) == (2, 96, 96)
    assert cpu.max_mhz is None


def test_proc_cpuinfo_ryzen_2700x():
    cpu = P.parse_proc_cpuinfo(fixture("linux/proc-cpuinfo-ryzen7-2700x.txt"))
    assert cpu.model == "AMD Ryzen 7 2700X Eight-Core Processor"
    assert (cpu.logical_cores, cpu.physical_cores, cpu.sockets) == (16, 8, 1)
    assert cpu.max_mhz is None  # 'cpu MHz' 2200.000 is the current clock
    assert {"AVX2", "FMA"} <= set(cpu.features) and "AVX512F" not in cpu.features


def test_proc_cpuinfo_thunderx_tail_names_the_core_by_ids_and_does_not_count_6_cpus():
    cpu = P.parse_proc_cpuinfo(fixture("linux/proc-cpuinfo-aarch64-thunderx-tail.txt"))
    assert cpu.vendor == "Cavium"  # implementer 0x43
    assert cpu.model == "Cavium ThunderX CN88XX"  # part 0x0a1
    assert cpu.logical_cores is None  # processors 90-95 only: a tail, not 6 CPUs
    assert cpu.max_mhz is None  # BogoMIPS is not a clock
    assert cpu.features == ("NEON",)


# --------------------------------------------------------------------------- Linux memory


def test_dmidecode_7950x3d_uses_configured_speed_and_counts_channels_not_dimms():
    modules = P.parse_dmidecode_memory(fixture("linux/dmidecode-ryzen7950x3d-4x16-ddr5-6000.txt"))
    assert len(modules) == 4
    assert sum(m.size_bytes for m in modules) == 64 * GiB
    assert {m.type for m in modules} == {"DDR5"}
    assert {(m.speed_mts, m.rated_speed_mts) for m in modules} == {(6000, 4800)}
    assert len({m.locator for m in modules}) == 4  # 'DIMM 0' twice, told apart by bank
    estimate = estimate_ram_bandwidth(modules)
    assert estimate.channels == 2  # four DIMMs on two channels
    assert estimate.bytes_per_s == pytest.approx(2 * 8 * 6000e6)  # 96 GB/s


def test_dmidecode_7950x_skips_empty_slots():
    modules = P.parse_dmidecode_memory(fixture("linux/dmidecode-ryzen7950x-2x16-ddr5-4800.txt"))
    assert len(modules) == 2  # two slots say 'No Module Installed'
    assert sum(m.size_bytes for m in modules) == 32 * GiB
    assert {(m.type, m.speed_mts) for m in modules} == {("DDR5", 4800)}
    assert estimate_ram_bandwidth(modules).bytes_per_s == pytest.approx(76.8e9)


def test_dmidecode_epyc_9454p_nine_of_twelve_channels():
    modules = P.parse_dmidecode_memory(fixture("linux/dmidecode-epyc9454p-9x64-ddr5.txt"))
    assert len(modules) == 9
    assert sum(m.size_bytes for m in modules) == 576 * GiB
    assert all(m.locator.endswith("DIMM 0") for m in modules)  # every Locator reads 'DIMM 0'
    estimate = estimate_ram_bandwidth(modules)
    assert (estimate.type, estimate.speed_mts, estimate.channels) == ("DDR5", 4800, 9)
    assert estimate.bytes_per_s == pytest.approx(9 * 8 * 4800e6)


def test_dmidecode_dual_xeon_8171m_twelve_ddr4_channels():
    modules = P.parse_dmidecode_memory(fixture("linux/dmidecode-2x-xeon8171m-12x32-ddr4.txt"))
    assert len(modules) == 12
    assert sum(m.size_bytes for m in modules) == 384 * GiB
    estimate = estimate_ram_bandwidth(modules)
    assert (estimate.type, estimate.speed_mts, estimate.channels) == ("DDR4", 2666, 12)
    assert estimate.bytes_per_s == pytest.approx(12 * 8 * 2666e6)


def test_dmidecode_lpddr5_counts_16_bit_devices_as_a_128_bit_bus():
    modules = P.parse_dmidecode_memory(fixture("linux/dmidecode-i7-1255u-lpddr5-8x4.txt"))
    assert len(modules) == 8
    assert sum(m.size_bytes for m in modules) == 32 * GiB
    assert {(m.type, m.data_width_bits) for m in modules} == {("LPDDR5", 16)}
    assert {(m.speed_mts, m.rated_speed_mts) for m in modules} == {(5200, 6400)}
    estimate = estimate_ram_bandwidth(modules)
    assert estimate.bus_width_bits == 128  # not 8 x 64 bits
    assert estimate.channels == 2  # in 64-bit equivalents
    assert estimate.bytes_per_s == pytest.approx(16 * 5200e6)  # 83.2 GB/s


def test_dmidecode_without_root_says_why():
    stdout = "# dmidecode 3.4\n/sys/firmware/dmi/tables/smbios_entry_point: Permission denied\n"
    assert "root" in P.dmidecode_failure_reason(stdout, "/dev/mem: Permission denied")
    assert P.parse_dmidecode_memory(stdout) == ()


def test_bandwidth_is_unknown_when_channels_cannot_be_told():
    modules = (MemoryModule(8 * GiB, "DDR4", 3200, locator="Bottom-Slot 1(left)"),)
    estimate = estimate_ram_bandwidth(modules)
    assert estimate.bytes_per_s is None
    assert estimate.source.startswith("unknown")


# --------------------------------------------------------------------------- Linux GPUs


def test_rocm_smi_six_mi100_skips_the_system_key():
    gpus = P.parse_rocm_smi_json(fixture("linux/rocm-smi-6x-mi100-rocm571.json"))
    assert len(gpus) == 6  # card0..card5; 'system' is not a card
    assert {g.name for g in gpus} == {"Arcturus GL-XL [Instinct MI100]"}
    assert {g.vram_total_bytes for g in gpus} == {34342961152}  # a string of bytes, 32 GiB
    assert {g.pci_id for g in gpus} == {"1002:738c"}  # GPU ID, not 'Card model' 0x0c34


def test_rocm_smi_430_prints_vendor_ids_instead_of_names():
    gpus = P.parse_rocm_smi_json(fixture("linux/rocm-smi-rx6700xt-rocm430.json"))
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.pci_id == "1002:73df"
    assert "0x1002" not in gpu.name  # 'Card series' '0x1002' is not a name
    assert gpu.vram_total_bytes == 12868124672  # not VIS_VRAM 268435456 (the BAR)


def test_rocm_smi_612_capitalised_keys():
    gpus = P.parse_rocm_smi_json(fixture("linux/rocm-smi-rx6700xt-rocm612.json"))
    assert len(gpus) == 1
    assert gpus[0].name == "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"  # 'Card Series'
    assert gpus[0].pci_id == "1002:73df"
    assert gpus[0].vram_total_bytes == 12868124672
    assert gpus[0].pci_bus_id == "0000:07:00.0"


def test_rocm_smi_mi50():
    gpus = P.parse_rocm_smi_json(fixture("linux/rocm-smi-mi50-32gb.json"))
    assert [g.name for g in gpus] == ["Radeon Instinct MI50 32GB"]
    assert gpus[0].pci_id == "1002:66a1"
    assert gpus[0].vram_total_bytes == 34342961152  # as printed: 32 GiB less a 16 MiB reserve
    assert gpus[0].driver == "5.9.17"


def test_rocm_smi_mi250_two_gcds_are_two_devices_of_one_package():
    gpus = P.parse_rocm_smi_json(fixture("linux/rocm-smi-mi250-two-gcds.json"))
    assert len(gpus) == 2  # one MI250 module, two GCDs: llama.cpp sees two devices
    assert {g.name for g in gpus} == {"AMD INSTINCT MI250 (MCM) OAM AC MBA"}
    assert all("one die" in g.note for g in gpus)
    assert {g.pci_id for g in gpus} == {"1002:740c"}
    assert all(g.vram_total_bytes is None for g in gpus)  # not in this query


def test_lspci_rx7900xtx_ambiguous_name_and_bar_is_not_vram():
    devices = P.parse_lspci(fixture("linux/lspci-vvnn-rx7900xtx-excerpt.txt"))
    assert len(devices) == 1
    device = devices[0]
    assert (device.class_code, device.pci_id, device.slot) == ("0300", "1002:744c",
                                                               "0000:03:00.0")  # fmt: skip
    assert device.is_display
    assert "7900 XT/7900 XTX/7900 GRE/7900M" in device.description  # ambiguous
    assert device.subsystem == "ASUSTeK Computer Inc. TUF Gaming Radeon RX 7900 XTX OC"
    gpu = P.gpu_from_pci(device)
    assert gpu.vram_total_bytes is None  # '[size=32G]' is the BAR aperture, not 24 GB VRAM
    assert "TUF Gaming Radeon RX 7900 XTX OC" in gpu.note


def test_lspci_raphael_igpu_is_a_second_display_controller():
    devices = P.parse_lspci(fixture("linux/lspci-vvnn-raphael-igpu-excerpt.txt"))
    assert [(d.pci_id, d.class_code) for d in devices] == [("1002:164e", "0300")]
    gpu = P.gpu_from_pci(devices[0])
    assert gpu.name == "AMD Raphael"
    assert gpu.vram_total_bytes is None
    assert gpu.note is None  # the subsystem 'ASRock Incorporation Device' names no board


def test_virtual_pci_display_adapters_are_flagged():
    gpu = P.gpu_from_drm("0000:00:02.0", "0x1af4", "0x1050", driver="virtio-pci")
    assert gpu.is_virtual and gpu.vendor == "virtual"
    gpu = P.gpu_from_drm("0000:03:00.0", "0x1002", "0x744c", "25753026560", "1073741824")
    assert gpu.vendor == "AMD" and not gpu.is_virtual
    assert gpu.vram_total_bytes == 25753026560
    assert gpu.vram_free_bytes == 25753026560 - 1073741824


def test_fixture_coverage_spans_every_os():
    """The parser tests above read at least 12 recordings from macOS, Windows and Linux."""
    source = Path(__file__).read_text(encoding="utf-8")
    recordings = {
        p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.parent != FIXTURES
    }
    referenced = {r for r in recordings if r.split("/", 1)[1] in source}
    assert len(referenced) >= 12
    assert {u.split("/")[0] for u in referenced} >= {"macos", "windows", "linux", "nvidia"}


def test_nvidia_link_is_the_negotiated_maximum_not_the_idle_link():
    """The 4090 fixture sits in a PCIe 3.0 host: the card could do 4.0, the link idles at 1;
    a copy to it runs at what the host allows, 3.0 x16."""
    gpu = P.parse_nvidia_smi_xml(fixture("nvidia/smi-q-x-rtx4090.xml"))[0]
    assert (gpu.pcie_gen, gpu.pcie_lanes) == (3, 16)
    csv = (
        "name, pci.bus_id, memory.total [MiB], pcie.link.gen.max, pcie.link.width.max\n"
        "NVIDIA GeForce RTX 3060, 00000000:01:00.0, 12288 MiB, 4, 8\n"
        "NVIDIA GeForce RTX 3090, 00000000:02:00.0, 24576 MiB, [N/A], [N/A]\n"
    )
    first, second = P.parse_nvidia_smi_csv(csv)
    assert (first.pcie_gen, first.pcie_lanes) == (4, 8)
    assert (second.pcie_gen, second.pcie_lanes) == (None, None)
