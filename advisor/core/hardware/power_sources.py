"""Power sources that read real hardware, and the meter that samples them during a benchmark.

Readable without admin rights: NVIDIA GPUs through NVML (Linux, Windows: the energy counter in
mJ on Volta and newer, else power in mW sampled), AMD GPUs through amdgpu hwmon (Linux:
energy1_input in uJ, else power1_average / power1_input in uW sampled) and, where the system
allows it, the CPU package through RAPL energy_uj (Linux; root-only on most systems since 2020).
Nothing on macOS or for the CPU on Windows (power.py has the sentences saying why).

Energy counters are read at start and stop, and every few seconds so that a counter that wraps
more than once in a long run is not lost; power-only sources are sampled at ~10 Hz on a
background thread. Files come through an injectable FileReader, NVML through an injectable
module object (pynvml is imported lazily, here only), time through an injectable clock.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from advisor.core.hardware.power import (
    RAPL_ROOT_ONLY,
    WINDOWS_AMD_NOT_READABLE,
    Availability,
    CounterSource,
    PowerReading,
    PowerSampleSource,
    PowerSource,
    choose_hwmon_file,
    combine_readings,
    is_permission_error,
    is_rapl_package,
    parse_sysfs_int,
    unreadable_here,
)
from advisor.core.hardware.probes import FileReader, LocalFileReader

Clock = Callable[[], float]
Target = Literal["cpu", "gpu"]

POWERCAP_ZONES = "/sys/class/powercap/intel-rapl:*/name"
AMDGPU_HWMON = "/sys/class/drm/card*/device/hwmon/hwmon*/name"
_TOP_LEVEL_RAPL = re.compile(r"/intel-rapl:\d+$")  # not the subzones intel-rapl:0:1
_DRM_CARD = re.compile(r"/(card\d+)/device/")  # not connectors such as card0-DP-1


Found = tuple[list[PowerSource], list[Availability]]


def _int_reader(reader: FileReader, path: str) -> Callable[[], int | None]:
    return lambda: parse_sysfs_int(reader.read_text(path).text)


def rapl_sources(reader: FileReader) -> Found:
    """One counter per CPU package zone of /sys/class/powercap, or why none can be read."""
    sources: list[PowerSource] = []
    unavailable: list[Availability] = []
    for name_path in reader.glob(POWERCAP_ZONES):
        zone = name_path.rsplit("/", 1)[0]
        zone_name = (reader.read_text(name_path).text or "").strip()
        if not _TOP_LEVEL_RAPL.search(zone) or not is_rapl_package(zone_name):
            continue
        energy = reader.read_text(f"{zone}/energy_uj")
        label = f"RAPL {zone_name}"
        if energy.text is None:
            reason = energy.error or "unreadable"
            if is_permission_error(energy.error):
                reason = RAPL_ROOT_ONLY.format(path=f"{zone}/energy_uj")
            unavailable.append(Availability(label, False, reason))
            continue
        wrap_at = parse_sysfs_int(reader.read_text(f"{zone}/max_energy_range_uj").text)
        read = _int_reader(reader, f"{zone}/energy_uj")
        sources.append(CounterSource(label, read, 1e-6, wrap_at))
    if not sources and not unavailable:
        reason = "no RAPL package zone under /sys/class/powercap (a VM, or no intel_rapl driver)"
        unavailable.append(Availability("RAPL", False, reason))
    return sources, unavailable


def amdgpu_sources(reader: FileReader) -> Found:
    """One source per amdgpu card: its energy counter, else its power sampled."""
    sources: list[PowerSource] = []
    unavailable: list[Availability] = []
    for name_path in reader.glob(AMDGPU_HWMON):
        card = _DRM_CARD.search(name_path)
        if card is None or (reader.read_text(name_path).text or "").strip() != "amdgpu":
            continue
        hwmon = name_path.rsplit("/", 1)[0]
        files = {p.rsplit("/", 1)[-1] for p in reader.glob(f"{hwmon}/*")}
        choice = choose_hwmon_file(files)
        label = f"amdgpu hwmon ({card.group(1)})"
        if choice is None:
            reason = f"{hwmon} has no energy1_input, power1_average or power1_input"
            unavailable.append(Availability(label, False, reason))
            continue
        file_name, kind = choice
        path = f"{hwmon}/{file_name}"
        probe = reader.read_text(path)
        if parse_sysfs_int(probe.text) is None:
            unavailable.append(Availability(label, False, probe.error or f"{path} is empty"))
            continue
        read = _int_reader(reader, path)
        if kind == "counter":
            sources.append(CounterSource(f"{label} {file_name}", read, 1e-6, None))
        else:
            sources.append(PowerSampleSource(f"{label} {file_name}", _scaled(read, 1e-6)))
    return sources, unavailable


def _scaled(read: Callable[[], int | None], factor: float) -> Callable[[], float | None]:
    def read_scaled() -> float | None:
        value = read()
        return None if value is None else value * factor

    return read_scaled


def load_nvml() -> tuple[Any | None, str]:
    """Import and start NVML (nvidia-ml-py); (None, why) when there is no NVIDIA driver."""
    try:
        import pynvml  # nvidia-ml-py; imported here only, never by the parsers
    except ImportError:
        return None, "nvidia-ml-py (pynvml) is not installed"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None, f"NVML could not start ({exc}): no NVIDIA driver?"
    return pynvml, ""


def nvml_sources(nvml: Any, indices: Sequence[int] | None = None) -> Found:
    """Per GPU: NVML's energy counter where supported (Volta+), else its power sampled."""
    sources: list[PowerSource] = []
    unavailable: list[Availability] = []
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as exc:
        return [], [Availability("NVML", False, f"NVML could not count GPUs ({exc})")]
    for index in indices if indices is not None else range(count):
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
        except Exception as exc:
            unavailable.append(Availability(f"NVML GPU {index}", False, str(exc)))
            continue
        energy_error = _try(nvml.nvmlDeviceGetTotalEnergyConsumption, handle)
        if energy_error is None:
            read = _nvml_reader(nvml.nvmlDeviceGetTotalEnergyConsumption, handle)
            sources.append(CounterSource(f"NVML energy counter (GPU {index})", read, 1e-3, None))
            continue
        power_error = _try(nvml.nvmlDeviceGetPowerUsage, handle)
        if power_error is None:
            read_mw = _nvml_reader(nvml.nvmlDeviceGetPowerUsage, handle)
            sources.append(PowerSampleSource(f"NVML power (GPU {index})", _scaled(read_mw, 1e-3)))
            continue
        reason = f"neither energy ({energy_error}) nor power ({power_error}) is supported"
        unavailable.append(Availability(f"NVML GPU {index}", False, reason))
    return sources, unavailable


def _try(function: Callable[[Any], object], handle: Any) -> str | None:
    try:
        function(handle)
    except Exception as exc:  # NVMLError_NotSupported, NoPermission, GpuIsLost ...
        return str(exc) or type(exc).__name__
    return None


def _nvml_reader(function: Callable[[Any], Any], handle: Any) -> Callable[[], int | None]:
    return lambda: int(function(handle))


class PowerMeter:
    """Measures energy over one benchmark window from the sources it was given."""

    def __init__(
        self,
        sources: Sequence[PowerSource],
        unavailable: Sequence[Availability] = (),
        clock: Clock = time.monotonic,
        fast_interval_s: float = 0.1,
        counter_poll_s: float | None = 5.0,
        scope_note: str = "",
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._sources = list(sources)
        self._unavailable = list(unavailable)
        self._clock = clock
        self._scope_note = scope_note
        self._on_close = on_close
        any_fast = any(s.power_only for s in self._sources)
        self._interval_s = fast_interval_s if any_fast else counter_poll_s
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def availability(self) -> tuple[Availability, ...]:
        """Every source considered: the ones in use, and the others with their reasons."""
        used = tuple(Availability(s.name, True) for s in self._sources)
        return used + tuple(self._unavailable)

    def start(self, background: bool = True) -> None:
        """First readings; then (with background) a thread keeps sampling until stop()."""
        now = self._clock()
        started: list[PowerSource] = []
        for source in self._sources:
            try:
                source.start(now)
                started.append(source)
            except Exception as exc:
                self._unavailable.append(Availability(source.name, False, str(exc)))
        self._sources = started
        if background and self._sources and self._interval_s:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, name="power-meter", daemon=True)
            self._thread.start()

    def sample(self) -> None:
        """One reading of every source (what the background thread does at each tick)."""
        with self._lock:
            now = self._clock()
            for source in self._sources:
                source.sample(now)

    def stop(self) -> PowerReading | None:
        """Energy since start(): None when no source could be read (see availability), or
        when no counter moved. A device at work never draws 0 W: a counter that stood still
        ticks too rarely for so short a window (NVML's stood still over a 40 ms prefill on an
        H200), and 0 J is no measurement. The meter can be started again; close() ends it."""
        if self._thread is not None:
            self._stopping.set()
            self._thread.join(timeout=2.0)
            self._thread = None
        with self._lock:
            now = self._clock()
            parts = [source.stop(now) for source in self._sources]
        moved = [p for p in parts if p.joules > 0]
        reading = combine_readings([(p.source, p.joules, p.seconds, "") for p in moved])
        if reading is None:
            return None
        notes = [self._scope_note] if self._scope_note else []
        notes += [note for part in moved for note in part.notes]
        notes += [f"{p.source}: the counter did not move; left out" for p in parts
                  if p.joules <= 0]  # fmt: skip
        return replace(reading, note="; ".join(dict.fromkeys(notes)))

    def close(self) -> None:
        """Release what the sources hold (NVML), once, after the last window: a meter that
        shut NVML down after its first window could read no later one (on the H200 every
        test after the first fell back to the catalogue's TDP)."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            with contextlib.suppress(Exception):
                on_close()

    def _run(self) -> None:
        interval = self._interval_s or 1.0
        while not self._stopping.wait(interval):
            try:
                self.sample()
            except Exception:  # never let a sampling bug kill the benchmark
                return


GPU_SCOPE = "GPU board power only; the CPU and the rest of the system are not included"
CPU_SCOPE = "CPU package power (cores, caches, integrated GPU); RAM and the board not included"


def meter_for(
    target: Target,
    *,
    platform: str = sys.platform,
    reader: FileReader | None = None,
    nvml: Any | None = None,
    gpu_vendor: str | None = None,
    gpu_indices: Sequence[int] | None = None,
    clock: Clock = time.monotonic,
) -> PowerMeter:
    """The best meter for the device the benchmark runs on, with reasons for what is missing.

    gpu_vendor ('nvidia', 'amd') narrows the GPU sources to the benchmarked card's vendor;
    without it every readable GPU is summed.
    """
    blocked = unreadable_here(platform, target)
    if blocked is not None:
        return PowerMeter([], [blocked], clock)
    reader = reader or LocalFileReader()
    if target == "cpu":
        sources, unavailable = rapl_sources(reader)
        return PowerMeter(sources, unavailable, clock, scope_note=CPU_SCOPE)
    sources, unavailable, on_close = [], [], None
    if gpu_vendor in (None, "nvidia"):
        module, why = (nvml, "") if nvml is not None else load_nvml()
        if module is None:
            unavailable.append(Availability("NVML", False, why))
        else:
            found, missing = nvml_sources(module, gpu_indices)
            sources += found
            unavailable += missing
            on_close = getattr(module, "nvmlShutdown", None) if nvml is None else None
    if gpu_vendor in (None, "amd"):
        if platform.startswith("linux"):
            found, missing = amdgpu_sources(reader)
            sources += found
            unavailable += missing
        else:
            unavailable.append(Availability("amdgpu", False, WINDOWS_AMD_NOT_READABLE))
    return PowerMeter(sources, unavailable, clock, scope_note=GPU_SCOPE, on_close=on_close)
