"""Detection end to end: on this machine for real, replayed from recordings for other OSes,
and with every external probe made to hang or fail (it must still answer, on time, with
reasons)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from advisor.core.hardware import parsers as P
from advisor.core.hardware.detect import detect_hardware, parse_windows_bundle
from advisor.core.hardware.probes import (
    CommandResult,
    FileResult,
    LocalFileReader,
    SubprocessRunner,
)

FIXTURES = Path(__file__).parent / "fixtures"
GiB = 1024**3
MiB = 1024**2


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8", errors="replace")


# --------------------------------------------------------------------------- test doubles


class ReplayRunner:
    """Answers commands from recordings; anything else is 'not installed'."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.calls: list[tuple[list[str], float]] = []

    def run(self, args: list[str], timeout_s: float) -> CommandResult:
        self.calls.append((args, timeout_s))
        for key, stdout in self.answers.items():
            if " ".join(args).startswith(key):
                return CommandResult(stdout, "", 0, None, 0.01)
        return CommandResult("", "", None, f"{args[0]} is not installed", 0.0, not_found=True)


class ReplayFiles:
    """A file system of a few paths; everything else does not exist."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_text(self, path: str) -> FileResult:
        if path in self.files:
            return FileResult(self.files[path], None)
        return FileResult(None, f"{path} does not exist")

    def glob(self, pattern: str) -> list[str]:
        import fnmatch

        return sorted(p for p in self.files if fnmatch.fnmatch(p, pattern))


class NoNvml:
    """pynvml on a machine without the NVIDIA driver library."""

    class NVMLError_LibraryNotFound(Exception):
        pass

    def nvmlInit(self) -> None:
        raise self.NVMLError_LibraryNotFound("NVML Shared Library Not Found")


class Hang:
    """Every command, file read and NVML call blocks until released (a stuck driver)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def run(self, args: list[str], timeout_s: float) -> CommandResult:
        self.calls += 1
        self.release.wait(120)  # ignores its timeout on purpose: detection must not wait
        return CommandResult("", "", None, "released", 120.0)

    def read_text(self, path: str) -> FileResult:
        self.release.wait(120)
        return FileResult(None, "released")

    def glob(self, pattern: str) -> list[str]:
        self.release.wait(120)
        return []

    def nvmlInit(self) -> None:
        self.release.wait(120)


class Broken:
    """Every command, file read and NVML call raises."""

    def run(self, args: list[str], timeout_s: float) -> CommandResult:
        raise OSError(f"cannot run {args[0]}")

    def read_text(self, path: str) -> FileResult:
        raise OSError(f"cannot read {path}")

    def glob(self, pattern: str) -> list[str]:
        raise OSError("cannot list")

    def nvmlInit(self) -> None:
        raise RuntimeError("driver crashed")


# --------------------------------------------------------------------------- this machine


def _lscpu() -> dict[str, str]:
    out = subprocess.run(
        ["lscpu"], capture_output=True, text=True, timeout=10, env={**os.environ, "LC_ALL": "C"}
    ).stdout
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}


@pytest.mark.skipif(
    platform.system() != "Linux" or shutil.which("lscpu") is None, reason="needs Linux lscpu"
)
def test_detect_on_this_machine_matches_lscpu_and_psutil():
    started = time.monotonic()
    report = detect_hardware()
    wall = time.monotonic() - started
    lscpu = _lscpu()
    assert report.os == "Linux"
    assert report.cpu.model == lscpu["Model name"]
    assert report.cpu.logical_cores == int(lscpu["CPU(s)"])
    assert report.cpu.physical_cores == int(lscpu["Core(s) per socket"]) * int(lscpu["Socket(s)"])
    assert report.ram.total_bytes == psutil.virtual_memory().total
    no_gpu_here = not Path("/sys/class/drm").exists() and shutil.which("nvidia-smi") is None
    if no_gpu_here:
        assert report.gpus == ()
    data = report.to_json()
    json.dumps(data)  # plain JSON, SI units
    measured = data["measured_bandwidth_bytes_per_s"]
    assert measured is not None and 1e8 < measured < 5e12
    assert 0 < data["measured_bandwidth_probe_s"] < 3.0
    assert data["ram"]["measured_copy_bandwidth_bytes_per_s"] > 0
    assert wall < 10
    probes = {n.probe: n.status for n in report.notes}
    assert probes["lscpu"] == "ok"
    assert probes["memory bandwidth probe"] == "ok"
    # RAM type/speed are unknown without dmidecode as root: said, with the reason
    if report.ram.theoretical_bandwidth_bytes_per_s is None:
        assert report.ram.theoretical_bandwidth_source.startswith("unknown")


# --------------------------------------------------------------------------- hangs and failures


@pytest.mark.slow
def test_detection_returns_within_10_s_when_every_probe_hangs():
    hang = Hang()
    try:
        started = time.monotonic()
        report = detect_hardware(system="Linux", runner=hang, files=hang, nvml=hang)
        wall = time.monotonic() - started
    finally:
        hang.release.set()
    print(f"detection with every probe hung: {wall:.2f} s")
    assert wall < 10
    assert hang.calls >= 1
    # psutil still answers: totals are known even when every probe is stuck
    assert report.ram.total_bytes == psutil.virtual_memory().total
    assert report.cpu.logical_cores == psutil.cpu_count()
    assert report.ram.measured_bandwidth_bytes_per_s  # in-process, not a command
    timeouts = {n.probe for n in report.notes if n.status == "timeout"}
    assert {"lscpu", "/proc/cpuinfo", "memory", "gpus", "nvidia"} <= timeouts
    assert all("deadline" in n.detail for n in report.notes if n.status == "timeout")
    assert report.gpus == ()


@pytest.mark.parametrize("system", ["Darwin", "Windows"])
def test_detection_on_other_systems_also_stops_at_its_deadline(system):
    hang = Hang()
    try:
        started = time.monotonic()
        report = detect_hardware(
            system=system, runner=hang, files=hang, nvml=hang, timeout_s=0.5,
            probe_bandwidth=False,
        )  # fmt: skip
        wall = time.monotonic() - started
    finally:
        hang.release.set()
    assert wall < 2
    assert report.os == system
    assert any(n.status == "timeout" for n in report.notes)


@pytest.mark.parametrize("system", ["Linux", "Darwin", "Windows"])
def test_detection_survives_probes_that_raise(system):
    broken = Broken()
    started = time.monotonic()
    report = detect_hardware(
        system=system, runner=broken, files=broken, nvml=broken, probe_bandwidth=False
    )
    assert time.monotonic() - started < 3
    assert report.gpus == ()
    failed = [n for n in report.notes if n.status == "failed"]
    assert failed and all(n.detail for n in failed)  # every failure says why
    assert report.ram.total_bytes == psutil.virtual_memory().total


@pytest.mark.skipif(os.name == "nt", reason="POSIX shell scripts stand in for the tools")
def test_real_runner_stops_and_kills_hanging_tools(tmp_path, monkeypatch):
    # every tool detection may call on Linux is a script that starts a child and hangs
    for tool in ("lscpu", "dmidecode", "lspci", "nvidia-smi", "rocm-smi"):
        script = tmp_path / tool
        script.write_text("#!/bin/sh\nsleep 41.5 &\nwait\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    started = time.monotonic()
    report = detect_hardware(system="Linux", nvml=NoNvml(), timeout_s=1.0, probe_bandwidth=False)
    assert time.monotonic() - started < 3
    statuses = {n.probe: n.status for n in report.notes}
    assert statuses["lscpu"] == "timeout"
    assert report.cpu.logical_cores == psutil.cpu_count()  # /proc/cpuinfo and psutil still answer

    def leftovers() -> list[psutil.Process]:
        return [
            proc
            for proc in psutil.process_iter(["cmdline", "status"])
            if "41.5" in " ".join(proc.info["cmdline"] or [])
            and proc.info["status"] != psutil.STATUS_ZOMBIE
        ]

    deadline = time.monotonic() + 3  # the runner threads kill what they started, then exit
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers() == []


def test_every_command_gets_a_short_timeout():
    runner = ReplayRunner({})
    for system in ("Linux", "Darwin", "Windows"):
        detect_hardware(system=system, runner=runner, files=ReplayFiles({}), nvml=NoNvml(),
                        probe_bandwidth=False)  # fmt: skip
    assert runner.calls
    assert all(0 < timeout <= 5.0 for _, timeout in runner.calls)


# --------------------------------------------------------------------------- replayed machines


def test_linux_replay_desktop_with_radeon_and_geforce():
    # Recordings: lscpu of a Ryzen 9 5950X, /proc/cpuinfo of a Ryzen 7 2700X, dmidecode and
    # lspci of the 7950X3D desktop, nvidia-smi CSV of an RTX 4080 SUPER. The /sys/class/drm
    # files tying the Radeon to its PCI slot are written here (no recording of them exists).
    drm = "/sys/class/drm/card1/device"
    files = ReplayFiles(
        {
            "/proc/cpuinfo": fixture("linux/proc-cpuinfo-ryzen7-2700x.txt"),
            f"{drm}/uevent": "DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME=0000:03:00.0\n",
            f"{drm}/vendor": "0x1002\n",
            f"{drm}/device": "0x744c\n",
            f"{drm}/mem_info_vram_total": "25753026560\n",
            f"{drm}/mem_info_vram_used": "1073741824\n",
        }
    )
    runner = ReplayRunner(
        {
            "lscpu": fixture("linux/lscpu-ryzen9-5950x.txt"),
            "dmidecode -t memory": fixture("linux/dmidecode-ryzen7950x3d-4x16-ddr5-6000.txt"),
            "lspci": fixture("linux/lspci-vvnn-rx7900xtx-excerpt.txt")
            + fixture("linux/lspci-vvnn-raphael-igpu-excerpt.txt"),
            "nvidia-smi --query-gpu": fixture("nvidia/query-gpu-rtx4080super.csv"),
        }
    )
    report = detect_hardware(
        system="Linux", runner=runner, files=files, nvml=NoNvml(), probe_bandwidth=False
    )
    assert report.cpu.model == "AMD Ryzen 9 5950X 16-Core Processor"  # lscpu wins
    assert (report.cpu.physical_cores, report.cpu.logical_cores) == (16, 32)
    assert "AVX2" in report.cpu.features
    ram = report.ram
    assert (ram.type, ram.speed_mts, ram.channels) == ("DDR5", 6000, 2)
    assert ram.theoretical_bandwidth_bytes_per_s == pytest.approx(96e9)
    assert len(ram.modules) == 4
    names = [g.name for g in report.gpus]
    assert names[0] == "NVIDIA GeForce RTX 4080 SUPER"
    assert names[1].startswith("AMD Navi 31")
    radeon = report.gpus[1]
    assert radeon.vram_total_bytes == 25753026560  # from amdgpu, not the 32G BAR
    assert "TUF Gaming Radeon RX 7900 XTX OC" in radeon.note
    assert radeon.pci_bus_id == "0000:03:00.0"
    geforce = report.gpus[0]
    assert geforce.vram_total_bytes == 16376 * 1024**2
    assert geforce.bandwidth_bytes_per_s is None  # nvidia-smi gives no bus width
    assert geforce.bandwidth_source.startswith("unknown")
    statuses = {n.probe: n.status for n in report.notes}
    assert statuses["NVML"] == "unavailable"
    assert statuses["rocm-smi"] == "unavailable"
    assert statuses["dmidecode -t memory"] == "ok"


class FakeNvml4090:
    """pynvml's API answering with an RTX 4090's figures: name, memory, driver, PCI ids and
    memory clock from the smi-q-x-rtx4090.xml recording; the 384-bit bus from the datasheet
    (nvidia-smi does not print it)."""

    NVML_CLOCK_MEM = 2

    class NVMLError_NotSupported(Exception):
        pass

    def __init__(self) -> None:
        self.shut_down = False

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        self.shut_down = True

    def nvmlSystemGetDriverVersion(self) -> str:
        return "535.86.05"

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetName(self, handle: int) -> str:
        return "NVIDIA GeForce RTX 4090"

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(total=24564 * MiB, free=24214 * MiB, used=350 * MiB)

    def nvmlDeviceGetPciInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(busId=b"00000000:84:00.0", pciDeviceId=0x268410DE)

    def nvmlDeviceGetMemoryBusWidth(self, handle: int) -> int:
        return 384

    def nvmlDeviceGetMaxClockInfo(self, handle: int, clock_type: int) -> int:
        assert clock_type == self.NVML_CLOCK_MEM
        return 10501

    def nvmlDeviceGetMigMode(self, handle: int) -> list[int]:
        raise self.NVMLError_NotSupported()  # GeForce cards have no MIG

    def nvmlDeviceGetVirtualizationMode(self, handle: int) -> int:
        return 0


def test_linux_nvml_gives_bandwidth_from_bus_width_and_merges_the_drm_card():
    nvml = FakeNvml4090()
    drm = "/sys/class/drm/card0/device"
    files = ReplayFiles(
        {f"{drm}/uevent": "DRIVER=nvidia\nPCI_ID=10DE:2684\nPCI_SLOT_NAME=0000:84:00.0\n"}
    )
    report = detect_hardware(
        system="Linux", runner=ReplayRunner({}), files=files, nvml=nvml, probe_bandwidth=False
    )
    (gpu,) = report.gpus  # NVML and /sys/class/drm describe one card
    assert gpu.name == "NVIDIA GeForce RTX 4090"
    assert (gpu.pci_id, gpu.pci_bus_id) == ("10de:2684", "0000:84:00.0")
    assert gpu.vram_total_bytes == 24564 * MiB
    assert (gpu.bus_width_bits, gpu.memory_clock_mhz) == (384, 10501)
    assert gpu.bandwidth_bytes_per_s == pytest.approx(1008e9, rel=0.001)
    assert "384-bit" in gpu.bandwidth_source and "10501 MHz" in gpu.bandwidth_source
    assert gpu.driver == "535.86.05"
    assert nvml.shut_down
    statuses = {n.probe: n.status for n in report.notes}
    assert statuses["NVML"] == "ok"
    assert "nvidia-smi --query-gpu" not in statuses  # not needed when NVML answers


def test_linux_boot_framebuffer_is_not_a_gpu():
    # simpledrm registers /sys/class/drm/card0 for the firmware framebuffer: no PCI identity
    files = ReplayFiles({"/sys/class/drm/card0/device/uevent": "DRIVER=simple-framebuffer\n"})
    report = detect_hardware(
        system="Linux", runner=ReplayRunner({}), files=files, nvml=NoNvml(), probe_bandwidth=False
    )
    assert report.gpus == ()


def test_linux_replay_dmidecode_without_root_leaves_ram_speed_unknown_with_reason():
    class NoRoot(ReplayRunner):
        def run(self, args: list[str], timeout_s: float) -> CommandResult:
            if args[0] == "dmidecode":
                return CommandResult(
                    "# dmidecode 3.4\n",
                    "/sys/firmware/dmi/tables/smbios_entry_point: Permission denied\n",
                    1, None, 0.01,
                )  # fmt: skip
            return super().run(args, timeout_s)

    report = detect_hardware(
        system="Linux", runner=NoRoot({"lscpu": fixture("linux/lscpu-arm-cortex-a72.txt")}),
        files=ReplayFiles({}), nvml=NoNvml(), probe_bandwidth=False,
    )  # fmt: skip
    assert report.cpu.model == "Cortex-A72"
    assert report.ram.theoretical_bandwidth_bytes_per_s is None
    assert "needs root" in report.ram.theoretical_bandwidth_source
    assert "Permission denied" in report.ram.theoretical_bandwidth_source
    assert report.ram.total_bytes == psutil.virtual_memory().total


def test_mac_replay_apple_m1_with_gpu_cores_and_its_share_of_unified_memory():
    runner = ReplayRunner(
        {
            "system_profiler SPHardwareDataType": fixture(
                "macos/sp-hardware-m1-air-16gb-native.json"
            ),
            "system_profiler SPDisplaysDataType": fixture(
                "macos/sp-displays-m1-7core-kHW-name-reformatted.json"
            ),
        }
    )
    report = detect_hardware(
        system="Darwin", runner=runner, files=ReplayFiles({}), probe_bandwidth=False
    )
    assert report.cpu.model == "Apple M1"
    assert (report.cpu.performance_cores, report.cpu.efficiency_cores) == (4, 4)
    assert report.machine == "MacBookAir10,1"
    assert report.ram.total_bytes == 16 * GiB  # hw.memsize / SPHardware on a Mac
    (gpu,) = report.gpus
    assert (gpu.name, gpu.gpu_cores, gpu.unified_memory) == ("Apple M1", 7, True)
    # 2/3 of 16 GiB: what Metal reported on a 16 GB M4 (recommendedMaxWorkingSetSize
    # 11453.25 MB in the llama.cpp CI log)
    assert gpu.vram_total_bytes / 1e6 == pytest.approx(11453.25, abs=0.01)
    assert report.ram.theoretical_bandwidth_bytes_per_s is None
    assert "catalogue" in report.ram.theoretical_bandwidth_source
    assert {n.probe: n.status for n in report.notes}["sysctl"] == "unavailable"


def test_mac_replay_m5_max_perf_levels_and_three_quarters_gpu_share():
    runner = ReplayRunner(
        {
            "sysctl": fixture("macos/sysctl-perflevels-m5max.txt"),
            "system_profiler SPHardwareDataType": fixture("macos/sp-hardware-m5max-128gb.json"),
        }
    )
    report = detect_hardware(
        system="Darwin", runner=runner, files=ReplayFiles({}), probe_bandwidth=False
    )
    assert report.cpu.model == "Apple M5 Max"
    assert report.cpu.core_types == (("Super", 6), ("Performance", 12))
    assert (report.cpu.performance_cores, report.cpu.efficiency_cores) == (18, 0)
    assert report.ram.total_bytes == 128 * GiB


def test_mac_replay_virtual_machine_is_said_to_be_one():
    runner = ReplayRunner(
        {
            "sysctl": fixture("macos/sysctl-gh-runner-m1-virtual.txt"),
            "system_profiler SPHardwareDataType": fixture(
                "macos/sp-hardware-gh-runner-m1-virtual.json"
            ),
            "system_profiler SPDisplaysDataType": fixture(
                "macos/sp-displays-gh-runner-intel-vm-paravirt.json"
            ),
        }
    )
    report = detect_hardware(
        system="Darwin", runner=runner, files=ReplayFiles({}), probe_bandwidth=False
    )
    assert report.cpu.model == "Apple M1"  # ready for the catalogue, without '(Virtual)'
    assert report.machine == "VirtualMac2,1"
    assert report.ram.total_bytes == 7 * GiB
    assert any(n.probe == "virtual machine" for n in report.notes)
    assert all(g.is_virtual for g in report.gpus)


def _windows_bundle_from_recordings(registry: list[dict]) -> str:
    """The JSON detection's PowerShell script prints, rebuilt from Format-List recordings."""
    processors = P.parse_cim_records(fixture("windows/cim-processor-i7-11800h.txt"))
    video = P.parse_cim_records(
        fixture("windows/cim-videocontroller-rtx3050ti-laptop-plus-uhd.txt")
    )
    return json.dumps(
        {"processor": processors, "video": video, "memory": [], "system": [],
         "registry": registry}
    )  # fmt: skip


def test_windows_replay_laptop_gets_vram_beyond_the_adapter_ram_cap_from_the_registry():
    # The registry entry is written here (no recording exists); the CIM parts are recorded.
    bundle = _windows_bundle_from_recordings(
        [{"Key": "0001", "DriverDesc": "NVIDIA GeForce RTX 3050 Ti Laptop GPU",
          "MatchingDeviceId": "pci\\ven_10de&dev_25a0", "qwMemorySize": 4294967296}]
    )  # fmt: skip
    runner = ReplayRunner({"powershell.exe": bundle})
    report = detect_hardware(
        system="Windows", runner=runner, files=ReplayFiles({}), nvml=NoNvml(),
        probe_bandwidth=False,
    )  # fmt: skip
    assert report.cpu.model == "11th Gen Intel(R) Core(TM) i7-11800H @ 2.30GHz"
    assert (report.cpu.physical_cores, report.cpu.logical_cores) == (8, 16)
    dgpu, igpu = report.gpus
    assert dgpu.name == "NVIDIA GeForce RTX 3050 Ti Laptop GPU"
    assert dgpu.vram_total_bytes == 4 * GiB
    assert igpu.unified_memory and igpu.vram_total_bytes is None
    assert {n.probe: n.status for n in report.notes}["nvidia-smi --query-gpu"] == "unavailable"
    cmd = runner.calls[0][0]
    assert cmd[0] == "powershell.exe" and "-EncodedCommand" in cmd and "-NoProfile" in cmd


def test_windows_replay_without_powershell_falls_back_to_wmic():
    runner = ReplayRunner({"wmic cpu": fixture("windows/wmic-cpu-list-i7-870.txt")})
    report = detect_hardware(
        system="Windows", runner=runner, files=ReplayFiles({}), nvml=NoNvml(),
        probe_bandwidth=False,
    )  # fmt: skip
    assert report.cpu.model == "Intel(R) Core(TM) i7 CPU 870 @ 2.93GHz"
    statuses = {n.probe.split(" (")[0]: n.status for n in report.notes}
    assert statuses["PowerShell CIM"] == "unavailable"


def test_windows_bundle_parser_reads_every_part():
    bundle = parse_windows_bundle(_windows_bundle_from_recordings([]))
    assert bundle.cpu.model.startswith("11th Gen Intel")
    assert len(bundle.gpus) == 2
    assert bundle.gpus[0].vram_total_bytes is None  # capped AdapterRAM, no registry entry


# --------------------------------------------------------------------------- the runner


@pytest.mark.skipif(os.name == "nt", reason="POSIX process groups")
def test_subprocess_runner_kills_the_whole_tree_on_timeout():
    runner = SubprocessRunner()
    started = time.monotonic()
    # a child that starts a grandchild and prints its pid, then both sleep
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    result = runner.run([sys.executable, "-c", code], timeout_s=0.8)
    assert time.monotonic() - started < 5
    assert result.timed_out and "did not finish" in result.error
    grandchild = int(result.stdout.split()[0])
    time.sleep(0.2)
    assert not psutil.pid_exists(grandchild) or (
        psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    )


def test_subprocess_runner_reports_missing_programs_and_bad_bytes():
    runner = SubprocessRunner()
    missing = runner.run(["advisor-no-such-program-xyz"], timeout_s=2)
    assert missing.not_found and missing.error and missing.returncode is None
    bad = runner.run(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe\\xfd')"],
        timeout_s=10,
    )
    assert bad.error is None and bad.returncode == 0
    assert bad.stdout.startswith("ok ") and "\ufffd" in bad.stdout  # replaced, not raised


def test_subprocess_runner_gives_the_command_no_stdin():
    # a command that reads stdin would hang on an inherited terminal; DEVNULL gives it EOF
    result = SubprocessRunner().run(
        [sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"], timeout_s=10
    )
    assert result.error is None and result.stdout.strip() == "0"


def test_local_file_reader_says_why_it_could_not_read():
    reader = LocalFileReader()
    assert reader.read_text("/no/such/file").error.endswith("does not exist")
    assert reader.read_text(__file__).text.startswith('"""Detection end to end')


def test_linux_replay_raspberry_pi_5_is_named_by_its_board():
    # Recording: /proc/cpuinfo of a Raspberry Pi 5 (cores named only by implementer and part,
    # the board in its last line). The device tree's model, which Arm boards have instead of
    # DMI, is written here with its trailing NUL as the kernel gives it (no recording of it).
    from advisor.core.catalogue.catalogue import load_catalogue
    from advisor.core.hardware.profile import build_profile, match_catalogue

    files = ReplayFiles(
        {
            "/proc/cpuinfo": fixture("linux/proc-cpuinfo-raspberry-pi-5.txt"),
            "/proc/device-tree/model": "Raspberry Pi 5 Model B Rev 1.1\x00",
        }
    )
    report = detect_hardware(system="Linux", runner=ReplayRunner({}), files=files,
                             nvml=NoNvml(), probe_bandwidth=False)  # fmt: skip
    assert report.cpu.model == "Cortex-A76"
    assert report.cpu.logical_cores == 4 and "NEON" in report.cpu.features
    assert report.machine == "Raspberry Pi 5 Model B Rev 1.1"  # a revision no alias names
    cat = load_catalogue()
    matched = match_catalogue(report, cat)
    assert matched.cpu.catalogue_id == "raspberry-pi-5-bcm2712"
    profile = build_profile(matched, cat)
    assert profile.catalogue_id == "raspberry-pi-5-bcm2712"
    assert profile.spec_bandwidth_bytes_per_s == pytest.approx(17.07e9)  # 32-bit LPDDR4X-4267
    # without the board's name the cores alone name no chip
    bare = match_catalogue(replace(report, machine=None), cat)
    assert bare.cpu.catalogue_id is None
