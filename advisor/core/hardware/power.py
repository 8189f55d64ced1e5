"""Energy per token: readings, counter arithmetic and sysfs parsers. Pure: no I/O, no threads.

Here: the result types, the counter and power arithmetic (wrap-around, resets, absurd values),
the sentences for what cannot be read, and the two kinds of source as state machines over an
injected read function and injected times. Finding real hardware (RAPL zones, amdgpu hwmon,
NVML) and the sampling thread are in `power_sources.py`. Tests replay recorded values only
(tests/core/hardware/fixtures/power/README.md).

Units follow the kernel and NVML: RAPL energy_uj and hwmon energy1_input are microjoules,
hwmon power1_average / power1_input are microwatts, NVML energy is millijoules and NVML power
is milliwatts. Results are SI (joules, seconds, watts).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Method = Literal["measured", "estimate"]

# Above this a single source's average power is a glitch (a counter reset read as a wrap, a
# firmware 0xFFFF..), not hardware: the largest accelerator boards draw about 1.2 kW.
MAX_PLAUSIBLE_W = 5000.0

# Why a source cannot be read, in sentences the user can act on. One place, so the CLI and the
# GUI say the same thing.
RAPL_ROOT_ONLY = (
    "CPU energy (RAPL, {path}) is readable only by root on this system: Linux restricted it "
    "in November 2020 because of CVE-2020-8694 (PLATYPUS). An administrator can allow it with "
    "'sudo chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj' (until the next reboot) or a "
    "udev rule."
)
MACOS_NOT_READABLE = (
    "Power is not readable without admin rights on macOS: the only source, powermetrics, "
    "needs sudo."
)
WINDOWS_CPU_NOT_READABLE = (
    "CPU power is not readable without admin rights on Windows: the energy counters (RAPL "
    "MSRs) need a kernel driver."
)
WINDOWS_AMD_NOT_READABLE = (
    "AMD GPU power is not readable on Windows by this app: it needs AMD's ADLX library."
)
OTHER_OS_NOT_READABLE = "Power is not readable without admin rights on this operating system."


@dataclass(frozen=True)
class PowerReading:
    """Energy over one benchmark window: measured by a meter, or estimated from a TDP."""

    joules: float
    seconds: float
    average_w: float
    source: str  # "NVML energy counter (GPU 0)", "RAPL package-0", "catalogue TDP"
    method: Method
    note: str = ""


@dataclass(frozen=True)
class Availability:
    """Whether one power source can be read here, and if not, why (a sentence)."""

    source: str
    available: bool
    reason: str = ""


@dataclass(frozen=True)
class CounterStep:
    """Energy between two readings of an energy counter; 0 with a note when ignored."""

    joules: float
    wrapped: bool = False
    note: str = ""


@dataclass(frozen=True)
class IntegratedPower:
    """Energy from power samples (trapezoids), with how many samples were thrown away."""

    joules: float
    seconds: float
    dropped: int = 0


def counter_step(
    previous: int,
    current: int,
    unit_j: float,
    seconds: float,
    wrap_at: int | None = None,
    max_w: float = MAX_PLAUSIBLE_W,
) -> CounterStep:
    """Energy between two raw counter values `seconds` apart.

    A counter with a known range (RAPL: max_energy_range_uj) that went down has wrapped once;
    one without (NVML, hwmon energy1_input) was reset, so the step is ignored. A step whose
    average power is above `max_w` is ignored too: a reset misread as a wrap, or a glitch.
    """
    if current >= previous:
        raw, wrapped = current - previous, False
    elif wrap_at is not None and wrap_at > previous:
        raw, wrapped = wrap_at - previous + current, True
    else:
        return CounterStep(0.0, False, "the energy counter went backwards (reset?); skipped")
    joules = raw * unit_j
    if seconds > 0 and joules / seconds > max_w:
        watts = joules / seconds
        return CounterStep(0.0, False, f"an implausible {watts:,.0f} W step was skipped")
    return CounterStep(joules, wrapped, "the counter wrapped around" if wrapped else "")


def integrate_power(
    samples: Sequence[tuple[float, float]], max_w: float = MAX_PLAUSIBLE_W
) -> IntegratedPower:
    """Trapezoidal energy over (time_s, watts) samples; negative or absurd samples are dropped."""
    kept = [(t, w) for t, w in samples if math.isfinite(w) and 0.0 <= w <= max_w]
    dropped = len(samples) - len(kept)
    kept.sort()
    joules = sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in itertools.pairwise(kept))
    seconds = kept[-1][0] - kept[0][0] if len(kept) >= 2 else 0.0
    return IntegratedPower(joules, seconds, dropped)


def tdp_estimate(tdp_w: float, seconds: float, utilisation: float = 1.0) -> PowerReading:
    """An estimate, not a measurement: the catalogue TDP times utilisation over the window."""
    utilisation = min(max(utilisation, 0.0), 1.0)
    watts = tdp_w * utilisation
    return PowerReading(
        joules=watts * seconds,
        seconds=seconds,
        average_w=watts,
        source="catalogue TDP",
        method="estimate",
        note=f"{tdp_w:g} W TDP x {utilisation:.0%} utilisation; real draw is usually lower",
    )


def energy_per_token_j(reading: PowerReading, tokens: int) -> float | None:
    """Joules per generated (or processed) token; None when no tokens were counted."""
    if tokens <= 0:
        return None
    return reading.joules / tokens


def parse_sysfs_int(text: str | None) -> int | None:
    """A sysfs number ('2469474853\\n'); None for empty, 'N/A' or garbage."""
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def is_permission_error(error: str | None) -> bool:
    """Whether a FileReader error means 'permission denied' (not 'missing' or 'I/O error')."""
    if not error:
        return False
    lowered = error.lower()
    return "not readable without root" in lowered or "permission denied" in lowered


def is_rapl_package(zone_name: str) -> bool:
    """RAPL zones that measure a CPU package ('package-0'), not psys/dram/core/uncore."""
    return zone_name.strip().startswith("package-")


HwmonKind = Literal["counter", "power"]


def choose_hwmon_file(file_names: set[str]) -> tuple[str, HwmonKind] | None:
    """Which amdgpu hwmon file to read: an energy counter if present, else average, else input.

    Most AMD GPUs expose either power1_average or power1_input (amdgpu, Linux 6.6+), rarely
    both; energy1_input (microjoules) exists on some APUs and newer kernels.
    """
    if "energy1_input" in file_names:
        return "energy1_input", "counter"
    for name in ("power1_average", "power1_input"):
        if name in file_names:
            return name, "power"
    return None


def unreadable_here(platform: str, target: Literal["cpu", "gpu"]) -> Availability | None:
    """The 'not readable without admin rights' answer for an OS with no unprivileged source.

    None where an unprivileged source may exist (Linux; NVIDIA GPUs on Windows via NVML), so
    the caller probes the real sources instead.
    """
    if platform == "darwin":
        return Availability("powermetrics", False, MACOS_NOT_READABLE)
    if platform == "win32" and target == "cpu":
        return Availability("RAPL (MSR)", False, WINDOWS_CPU_NOT_READABLE)
    if platform.startswith("linux") or platform == "win32":
        return None
    return Availability("power meter", False, OTHER_OS_NOT_READABLE)


def combine_readings(
    parts: Sequence[tuple[str, float, float, str]], method: Method = "measured"
) -> PowerReading | None:
    """One reading from several sources measured over the same window (GPUs, sockets).

    Each part is (source, joules, seconds, note); seconds is the longest window.
    """
    if not parts:
        return None
    joules = sum(p[1] for p in parts)
    seconds = max(p[2] for p in parts)
    average_w = joules / seconds if seconds > 0 else 0.0
    source = " + ".join(p[0] for p in parts)
    note = "; ".join(dict.fromkeys(p[3] for p in parts if p[3]))
    return PowerReading(joules, seconds, average_w, source, method, note)


# --------------------------------------------------------------------------- sources
# Pure state machines over a read function and the times they are given; the functions that
# find real hardware and read it are in power_sources.py.


@dataclass(frozen=True)
class SourceEnergy:
    """What one source measured over the window."""

    source: str
    joules: float
    seconds: float
    notes: tuple[str, ...] = ()


class PowerSource(Protocol):
    """One thing the meter reads: an energy counter, or a power value it integrates."""

    name: str
    power_only: bool  # True: needs ~10 Hz sampling; False: an energy counter

    def start(self, now: float) -> None:
        """Take the first reading (raises if the source cannot be read)."""
        ...

    def sample(self, now: float) -> None:
        """Take one more reading; failures become notes, never exceptions."""
        ...

    def stop(self, now: float) -> SourceEnergy:
        """Take the last reading and return the energy since start()."""
        ...


class CounterSource:
    """An energy counter (RAPL, NVML energy, hwmon energy1_input)."""

    power_only = False

    def __init__(
        self, name: str, read_raw: Callable[[], int | None], unit_j: float, wrap_at: int | None
    ) -> None:
        self.name = name
        self._read_raw = read_raw
        self._unit_j = unit_j
        self._wrap_at = wrap_at
        self._notes: list[str] = []
        self._joules = 0.0
        self._t0 = self._t_last = 0.0
        self._last = 0

    def start(self, now: float) -> None:
        """Read the counter's starting value."""
        value = self._read_raw()
        if value is None:
            raise OSError(f"{self.name} gave no reading")
        self._last, self._t0, self._t_last = value, now, now
        self._joules, self._notes = 0.0, []

    def sample(self, now: float) -> None:
        """Add the energy since the last reading, handling a wrap or a reset."""
        try:
            value = self._read_raw()
        except Exception as exc:  # a driver error mid-run must not end the benchmark
            self._notes.append(f"{self.name}: a reading failed ({exc})")
            return
        if value is None:
            self._notes.append(f"{self.name}: a reading failed")
            return
        step = counter_step(self._last, value, self._unit_j, now - self._t_last, self._wrap_at)
        self._joules += step.joules
        if step.note:
            self._notes.append(f"{self.name}: {step.note}")
        self._last, self._t_last = value, now

    def stop(self, now: float) -> SourceEnergy:
        """The energy counted since start()."""
        self.sample(now)
        notes = tuple(dict.fromkeys(self._notes))
        return SourceEnergy(self.name, self._joules, now - self._t0, notes)


class PowerSampleSource:
    """A power value (NVML power usage, hwmon power1_average) integrated over time."""

    power_only = True

    def __init__(self, name: str, read_w: Callable[[], float | None]) -> None:
        self.name = name
        self._read_w = read_w
        self._samples: list[tuple[float, float]] = []
        self._failures = 0

    def start(self, now: float) -> None:
        """Take the first power sample."""
        watts = self._read_w()
        if watts is None:
            raise OSError(f"{self.name} gave no reading")
        self._samples, self._failures = [(now, watts)], 0

    def sample(self, now: float) -> None:
        """Record the power now."""
        try:
            watts = self._read_w()
        except Exception:  # a driver error mid-run must not end the benchmark
            watts = None
        if watts is None:
            self._failures += 1
        else:
            self._samples.append((now, watts))

    def stop(self, now: float) -> SourceEnergy:
        """Integrate the samples (trapezoids) into joules."""
        if not self._samples or now > self._samples[-1][0]:
            self.sample(now)
        result = integrate_power(self._samples)
        notes = [f"{self.name}: {len(self._samples)} power samples integrated"]
        if result.dropped:
            notes.append(f"{self.name}: {result.dropped} implausible samples dropped")
        if self._failures:
            notes.append(f"{self.name}: {self._failures} readings failed")
        return SourceEnergy(self.name, result.joules, result.seconds, tuple(notes))
