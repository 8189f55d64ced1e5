"""Energy meters replayed from recorded sysfs trees and NVML values (fixtures/power/README.md).

A fake filesystem (FakeSysfs) is built from each recorded tree and handed to the real source
code as its FileReader; a fake NVML module answers from recorded counter deltas. Where a test
needs a value the recording does not contain (a second counter reading, a zone's name), the
test says so next to the number.
"""

from __future__ import annotations

import csv
import re
import time
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from advisor.core.hardware import power as P
from advisor.core.hardware import power_sources as S
from advisor.core.hardware.probes import FileResult

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


class FakeSysfs:
    """A FileReader over {path: text}; `denied` paths fail as LocalFileReader says for EACCES."""

    def __init__(self, files: dict[str, str], denied: set[str] | None = None) -> None:
        self.files = dict(files)
        self.denied = set(denied or ())

    def read_text(self, path: str) -> FileResult:
        if path in self.denied:
            return FileResult(None, f"{path} is not readable without root")
        if path in self.files:
            return FileResult(self.files[path], None)
        return FileResult(None, f"{path} does not exist")

    def glob(self, pattern: str) -> list[str]:
        wanted = pattern.split("/")
        paths = set(self.files) | self.denied
        for path in list(paths):  # directories exist too
            parts = path.split("/")
            paths.update("/".join(parts[:i]) for i in range(2, len(parts)))
        return sorted(
            p
            for p in paths
            if len(p.split("/")) == len(wanted)
            and all(fnmatchcase(a, b) for a, b in zip(p.split("/"), wanted, strict=True))
        )


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def grep_tree(text: str, old_prefix: str = "", new_prefix: str = "") -> dict[str, str]:
    """`grep -r . dir` output (path:value per line) as {path: value}."""
    files = {}
    for line in text.splitlines():
        path, _, value = line.rpartition(":")
        files[path.replace(old_prefix, new_prefix, 1)] = value + "\n"
    return files


def powercap_info_tree(text: str) -> dict[str, str]:
    """powercap-info output as the sysfs files it was read from (zone fields only)."""
    files, zone, field_indent = {}, "", -1
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        header = re.fullmatch(r"\s*Zone ([\d:]+)", line)
        if header:
            zone, field_indent = f"/sys/class/powercap/intel-rapl:{header.group(1)}", indent + 2
        elif zone and indent == field_indent and ":" in line:
            key, _, value = line.strip().partition(": ")
            files[f"{zone}/{key}"] = value + "\n"
    return files


def cat_tree(text: str) -> dict[str, str]:
    """'$ cat PATH' lines each followed by the file's value."""
    lines = text.splitlines()
    return {
        line.split()[-1]: lines[i + 1] + "\n"
        for i, line in enumerate(lines)
        if line.startswith("$ cat ")
    }


# --------------------------------------------------------------------------- RAPL (CPU)


def test_powercap_info_tree_gives_one_package_counter_not_its_core_and_uncore_subzones():
    tree = powercap_info_tree(fixture("power/rapl-powercap-info-package0.txt"))
    assert tree["/sys/class/powercap/intel-rapl:0/energy_uj"] == "26963529117\n"
    assert tree["/sys/class/powercap/intel-rapl:0/max_energy_range_uj"] == "262143328850\n"
    assert tree["/sys/class/powercap/intel-rapl:0:1/name"] == "uncore\n"
    sources, unavailable = S.rapl_sources(FakeSysfs(tree))
    assert [s.name for s in sources] == ["RAPL package-0"]
    assert unavailable == []


def test_rapl_package_energy_over_a_run_from_the_recorded_counter():
    tree = powercap_info_tree(fixture("power/rapl-powercap-info-package0.txt"))
    fs, clock = FakeSysfs(tree), FakeClock()
    meter = S.meter_for("cpu", platform="linux", reader=fs, clock=clock)
    meter.start(background=False)
    clock.now = 15.0
    # constructed end value: the recorded 26963529117 uJ plus 412.5 J over 15 s
    fs.files["/sys/class/powercap/intel-rapl:0/energy_uj"] = "27376029117\n"
    reading = meter.stop()
    assert reading is not None
    assert reading.joules == pytest.approx(412.5)
    assert reading.seconds == 15.0
    assert reading.average_w == pytest.approx(27.5)
    assert reading.method == "measured"
    assert reading.source == "RAPL package-0"
    assert "RAM and the board not included" in reading.note


def test_rapl_dram_subzone_values_parse_but_are_not_a_cpu_package():
    # the recorded hierarchy, as it also appears flat under /sys/class/powercap
    tree = grep_tree(
        fixture("power/rapl-i7-4770s-dram-zone-grep.txt"),
        "/sys/class/powercap/intel-rapl/intel-rapl:0/",
        "/sys/class/powercap/",
    )
    zone = "/sys/class/powercap/intel-rapl:0:2"
    assert P.parse_sysfs_int(tree[f"{zone}/energy_uj"]) == 2469474853
    assert P.parse_sysfs_int(tree[f"{zone}/max_energy_range_uj"]) == 262143999938
    assert P.parse_sysfs_int(tree[f"{zone}/power/runtime_status"]) is None  # 'unsupported'
    sources, unavailable = S.rapl_sources(FakeSysfs(tree))
    assert sources == []  # dram is a subzone, and not a package
    assert "no RAPL package zone" in unavailable[0].reason


def test_rapl_counter_polled_every_5_s_survives_a_run_longer_than_its_range():
    text = fixture("power/rapl-likwid-wrap-2x-xeon-8260l.txt")
    runs = [
        (float(s), float(j.replace(",", "")))
        for s, j in re.findall(r"runs for ([\d.]+) sec and PKG1 reads _?([\d,.]+) J", text)
    ]
    (short_s, short_j), (long_s, naive_j) = runs
    assert short_j / short_s == pytest.approx(161.0, abs=0.1)  # shorter than one range
    # a 32-bit counter in 2^-14 J units: the range sysfs reports (i7-4770S recording)
    last_line = fixture("power/rapl-i7-4770s-dram-zone-grep.txt").splitlines()[-1]
    wrap_at = P.parse_sysfs_int(last_line.rpartition(":")[2])
    assert wrap_at == 262143999938
    # the long run drew 30,811.1 J more than one full range (the range went by unseen)
    rate_uj_per_s = (naive_j * 1e6 + wrap_at) / long_s
    start_uj = 250_000_000_000  # constructed start; any value gives the same answer

    def run(poll_s: float | None) -> float:
        clock = FakeClock()
        counter = P.CounterSource(
            "RAPL package-1",
            lambda: round(start_uj + rate_uj_per_s * clock.now) % wrap_at,
            1e-6,
            wrap_at,
        )
        meter = S.PowerMeter([counter], clock=clock)
        meter.start(background=False)
        while poll_s and clock.now + poll_s < long_s:
            clock.now += poll_s
            meter.sample()
        clock.now = long_s
        reading = meter.stop()
        assert reading is not None
        return reading.joules

    assert run(poll_s=None) == pytest.approx(naive_j, abs=0.01)  # start/stop only: likwid's error
    polled = run(poll_s=5.0)
    assert polled == pytest.approx(naive_j + wrap_at * 1e-6, abs=0.01)
    assert polled / long_s == pytest.approx(163.2, abs=0.1)  # vs 161.0 W in the short run


def test_one_wrap_between_two_readings_and_implausible_steps():
    wrap_at = 262143328850  # the package-0 range recorded by powercap-info
    step = P.counter_step(wrap_at - 1_000_000, 2_000_000, 1e-6, 1.0, wrap_at)
    assert step.wrapped and step.joules == pytest.approx(3.0)
    reset = P.counter_step(5_000_000, 1_000, 1e-3, 1.0, None)  # NVML: no range, so a reset
    assert reset.joules == 0.0 and "backwards" in reset.note
    glitch = P.counter_step(0, 10**13, 1e-6, 0.1, wrap_at)  # 10 MJ in 0.1 s
    assert glitch.joules == 0.0 and "implausible" in glitch.note


def test_root_only_rapl_gives_the_permission_sentence_not_a_crash():
    listing = fixture("power/rapl-permission-denied-ls-l.txt").splitlines()[2:]
    zone = "/sys/class/powercap/intel-rapl:0"
    files = {f"{zone}/name": "package-0\n"}  # constructed: the recording shows modes, not text
    denied = {
        f"{zone}/{line.split()[-1]}"
        for line in listing
        if line.startswith("-") and line[7] != "r"  # a file others may not read
    }
    assert f"{zone}/energy_uj" in denied and f"{zone}/name" not in denied
    fs = FakeSysfs(files, denied)
    meter = S.meter_for("cpu", platform="linux", reader=fs, clock=FakeClock())
    meter.start(background=False)
    assert meter.stop() is None
    (why,) = meter.availability
    assert not why.available
    assert "readable only by root" in why.reason
    assert "CVE-2020-8694" in why.reason
    assert f"{zone}/energy_uj" in why.reason


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("/sys/class/powercap/intel-rapl:0/energy_uj is not readable without root", True),
        (
            "[Errno 13] Permission denied: '/sys/class/powercap/intel-rapl/intel-rapl:0/energy_uj'",
            True,
        ),  # codecarbon issue #232, verbatim
        ("/sys/class/powercap/intel-rapl:0/energy_uj does not exist", False),
        (None, False),
    ],
)
def test_permission_errors_are_told_apart_from_missing_files(error, expected):
    assert P.is_permission_error(error) is expected


# --------------------------------------------------------------------------- amdgpu hwmon


def test_amdgpu_power1_average_is_sampled_and_integrated():
    tree = cat_tree(fixture("power/hwmon-amdgpu-power1-average-cat.txt"))
    hwmon = "/sys/class/drm/card0/device/hwmon/hwmon4"
    assert tree[f"{hwmon}/power1_average"] == "9103000\n"  # microwatts
    tree[f"{hwmon}/name"] = "amdgpu\n"  # constructed: the recording does not cat the name
    clock = FakeClock()
    meter = S.meter_for(
        "gpu", platform="linux", reader=FakeSysfs(tree), gpu_vendor="amd", clock=clock
    )
    meter.start(background=False)
    for _ in range(20):  # 2 s at 10 Hz
        clock.now += 0.1
        meter.sample()
    reading = meter.stop()
    assert reading is not None
    assert reading.source == "amdgpu hwmon (card0) power1_average"
    assert reading.average_w == pytest.approx(9.103)
    assert reading.joules == pytest.approx(18.206)
    assert "GPU board power only" in reading.note


def test_rx580_on_linux_6_9_has_power1_input_only_and_that_is_what_gets_read():
    lines = fixture("power/hwmon-rx580-power1-input-tree.txt").splitlines()
    names = {
        line[8:].split(" ->")[0] for line in lines if line.startswith(("    ├── ", "    └── "))
    }
    assert "power1_input" in names and "power1_average" not in names
    assert P.choose_hwmon_file(names) == ("power1_input", "power")
    assert P.choose_hwmon_file(names | {"energy1_input"}) == ("energy1_input", "counter")
    assert P.choose_hwmon_file({"temp1_input", "fan1_input"}) is None


# --------------------------------------------------------------------------- NVML


class NVMLError_NotSupported(Exception):  # pynvml's own name
    pass


class FakeNvml:
    """The pynvml functions the meter calls, answering from functions of the fake clock."""

    def __init__(
        self,
        clock: FakeClock,
        energy_mj: Callable[[float], int] | None = None,
        power_mw: Callable[[float], int] | None = None,
    ) -> None:
        self.clock, self.energy_mj, self.power_mw = clock, energy_mj, power_mw

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:
        return f"gpu{index}"

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: str) -> int:
        if self.energy_mj is None:
            raise NVMLError_NotSupported("Not Supported")
        return self.energy_mj(self.clock.now)

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:
        if self.power_mw is None:
            raise NVMLError_NotSupported("Not Supported")
        return self.power_mw(self.clock.now)


def measure(nvml: FakeNvml, clock: FakeClock, seconds: float, steps: int = 10):
    meter = S.meter_for("gpu", platform="linux", nvml=nvml, gpu_vendor="nvidia", clock=clock)
    meter.start(background=False)
    for i in range(1, steps + 1):
        clock.now = seconds * i / steps
        meter.sample()
    return meter.stop()


@pytest.mark.parametrize(
    ("state", "recorded_mj", "expected_w"),
    [("idle", 952_494, 15.87), ("active", 16_522_288, 275.37)],
)
def test_nvml_energy_counter_is_millijoules_titan_rtx(state, recorded_mj, expected_w):
    text = fixture("power/nvml-energy-titan-rtx-pyjoules.txt")
    assert f"{recorded_mj:,} uJ" in text  # pyJoules printed NVML millijoules as 'uJ'
    clock, start = FakeClock(), 123_456_789  # constructed counter start; only deltas recorded
    nvml = FakeNvml(clock, energy_mj=lambda t: start + round(recorded_mj * t / 60))
    reading = measure(nvml, clock, 60.0)
    assert reading.source == "NVML energy counter (GPU 0)"
    assert reading.joules == pytest.approx(recorded_mj / 1000)  # 16.5 kJ, not 16.5 J
    assert reading.average_w == pytest.approx(expected_w, abs=0.01)  # reporter: ~16 W / ~280 W


def test_nvml_energy_counter_rtx_3060_short_window():
    text = fixture("power/nvml-energy-rtx3060-pyjoules.txt")
    seconds = float(re.search(r"duration : ([\d.]+)", text).group(1))
    delta_mj = int(re.search(r"nvidia_gpu_0 : (\d+)", text).group(1))
    clock = FakeClock()
    nvml = FakeNvml(clock, energy_mj=lambda t: 5_000_000 + round(delta_mj * t / seconds))
    reading = measure(nvml, clock, seconds)
    assert reading.joules == pytest.approx(192.276)
    assert reading.average_w == pytest.approx(51.08, abs=0.01)


def test_nvml_counter_reset_mid_run_is_skipped_with_a_note():
    clock = FakeClock()  # constructed: NVML's counter restarts when the driver reloads

    def energy(t: float) -> int:
        return 900_000_000 + 200_000 * round(t) if t < 5 else 100_000 * round(t - 5)

    reading = measure(nvml=FakeNvml(clock, energy_mj=energy), clock=clock, seconds=10.0)
    assert reading.joules == pytest.approx(800 + 500)  # before the reset, then after it
    assert "went backwards" in reading.note


def h100_recorded_power_w() -> list[float]:
    rows = list(csv.DictReader(fixture("nvidia/query-gpu-h100-80gb-hbm3.csv").splitlines()))
    row = {k.strip(): v.strip() for k, v in rows[0].items()}
    return [float(row[k].split()[0]) for k in ("power.draw [W]", "power.draw.instant [W]")]


def test_nvml_power_only_gpu_is_sampled_at_10_hz_and_integrated():
    recorded = h100_recorded_power_w()
    assert recorded == [69.85, 69.62]
    clock = FakeClock()  # the two recorded readings, alternating: a constructed series
    nvml = FakeNvml(clock, power_mw=lambda t: round(recorded[round(t * 10) % 2] * 1000))
    reading = measure(nvml, clock, 2.0, steps=20)
    assert reading.source == "NVML power (GPU 0)"
    assert 69.62 <= reading.average_w <= 69.85
    assert reading.joules == pytest.approx(2.0 * reading.average_w)
    assert "21 power samples integrated" in reading.note


def test_nvml_without_energy_or_power_says_why():
    meter = S.meter_for("gpu", platform="win32", nvml=FakeNvml(FakeClock()), gpu_vendor="nvidia")
    meter.start(background=False)
    assert meter.stop() is None
    (why,) = meter.availability
    assert why.source == "NVML GPU 0" and "Not Supported" in why.reason


def test_absurd_power_samples_are_dropped_with_a_note():
    clock = FakeClock()  # constructed glitch: one 10 MW sample among 300 W ones
    nvml = FakeNvml(clock, power_mw=lambda t: 10_000_000_000 if 0.45 < t < 0.55 else 300_000)
    reading = measure(nvml, clock, 1.0)
    assert reading.average_w == pytest.approx(300.0)
    assert "1 implausible samples dropped" in reading.note


# --------------------------------------------------------------------------- other systems


def test_macos_is_not_readable_without_admin_rights():
    for target in ("gpu", "cpu"):
        meter = S.meter_for(target, platform="darwin", reader=FakeSysfs({}))
        meter.start()
        assert meter.stop() is None
        (why,) = meter.availability
        assert not why.available and why.source == "powermetrics"
        assert "not readable without admin rights" in why.reason and "sudo" in why.reason


def test_windows_cpu_power_is_not_readable_without_admin_rights():
    (why,) = S.meter_for("cpu", platform="win32").availability
    assert "not readable without admin rights on Windows" in why.reason


def test_tdp_estimate_is_labelled_an_estimate():
    reading = P.tdp_estimate(350.0, 10.0, utilisation=0.8)
    assert (reading.joules, reading.average_w) == (2800.0, 280.0)
    assert reading.method == "estimate" and reading.source == "catalogue TDP"
    assert P.energy_per_token_j(reading, 1400) == pytest.approx(2.0)
    assert P.energy_per_token_j(reading, 0) is None


# --------------------------------------------------------------------------- sampling thread


class CountingSource:
    def __init__(self, power_only: bool) -> None:
        self.name, self.power_only, self.samples = "counting", power_only, 0

    def start(self, now: float) -> None:
        self.t0 = now

    def sample(self, now: float) -> None:
        self.samples += 1

    def stop(self, now: float) -> P.SourceEnergy:
        return P.SourceEnergy(self.name, 1.0, now - self.t0)


@pytest.mark.parametrize(
    ("power_only", "min_samples", "max_samples"), [(True, 2, 8), (False, 0, 0)]
)
def test_background_sampling_runs_at_10_hz_only_for_power_sources(
    power_only, min_samples, max_samples
):
    source = CountingSource(power_only)
    meter = S.PowerMeter([source])
    meter.start(background=True)
    time.sleep(0.45)
    during = source.samples
    reading = meter.stop()
    assert min_samples <= during <= max_samples
    assert reading is not None and reading.joules == 1.0


class ShutdownNvml(FakeNvml):
    """pynvml after nvmlShutdown(): every call fails until it is initialised again."""

    def __init__(self, clock: FakeClock, energy_mj: Callable[[float], int]) -> None:
        super().__init__(clock, energy_mj=energy_mj)
        self.shutdowns = 0

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: str) -> int:
        if self.shutdowns:
            raise NVMLError_NotSupported("Uninitialized")
        return super().nvmlDeviceGetTotalEnergyConsumption(handle)


def test_one_meter_measures_every_test_of_a_run_and_releases_nvml_once_at_the_end():
    # on the lent H200 (2026-12-04) the meter shut NVML down after the run's first test: every
    # later test fell back to the catalogue TDP
    clock = FakeClock()
    nvml = ShutdownNvml(clock, energy_mj=lambda t: 1_000_000 + round(300_000 * t))  # 300 W
    found, _ = S.nvml_sources(nvml, None)
    meter = S.PowerMeter(found, clock=clock, on_close=nvml.nvmlShutdown)
    readings = []
    for window in range(3):
        clock.now = 10.0 * window
        meter.start(background=False)
        clock.now += 2.0
        readings.append(meter.stop())
    assert [r.average_w for r in readings] == pytest.approx([300.0, 300.0, 300.0])
    assert nvml.shutdowns == 0
    meter.close()
    meter.close()
    assert nvml.shutdowns == 1


def test_a_counter_that_did_not_move_is_no_measurement_of_zero_watts():
    # NVML's energy counter stood still over a 40 ms prefill on the H200: 0 J, shown as a
    # measured 0.0 W, 0.0 J/token; a working GPU never draws 0 W
    clock = FakeClock()
    nvml = FakeNvml(clock, energy_mj=lambda t: 5_000_000 + 30_000 * int(t / 0.1))  # 0.1 s ticks
    meter = S.meter_for("gpu", platform="linux", nvml=nvml, gpu_vendor="nvidia", clock=clock)
    clock.now = 0.01
    meter.start(background=False)
    clock.now = 0.05
    assert meter.stop() is None  # the runner then labels the catalogue TDP an estimate
    clock.now = 1.0
    meter.start(background=False)
    clock.now = 3.0
    assert meter.stop().average_w == pytest.approx(300.0, rel=0.05)  # it ticks again
