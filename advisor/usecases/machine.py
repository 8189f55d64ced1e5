"""This machine: detected once (cached for a day), joined with the catalogue, and the host
whose RAM takes the layers that do not fit a card.

Nothing here runs on a GUI thread: the app calls `detect_machine` from a worker.
"""

from __future__ import annotations

import time
from dataclasses import replace

import psutil

from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.hardware.model import HardwareReport
from advisor.core.hardware.profile import (
    DEFAULT_RAM_BANDWIDTH_BYTES_PER_S,
    Host,
    MachineProfile,
    build_profile,
    host_from_report,
    match_catalogue,
)
from advisor.core.hardware.report_cache import load_cached_report, save_cached_report
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import AppPaths
from advisor.core.infra.units import GiB
from advisor.core.predict.physics.ceilings import usable_peak
from advisor.core.predict.physics.placement import rated_ram_bandwidth
from advisor.core.runs.results import RunResult


def detect_machine(
    paths: AppPaths,
    *,
    probe_bandwidth: bool = True,
    use_cache: bool = True,
    chosen_device_id: str | None = None,
    catalogue: Catalogue | None = None,
) -> tuple[HardwareReport, MachineProfile]:
    """The hardware report (cached for a day) and the machine profile built from it."""
    from advisor.bench.backend import query_backend
    from advisor.core.hardware.detect import detect_hardware

    catalogue = catalogue or load_catalogue()
    report = load_cached_report(paths.hardware_cache) if use_cache else None
    if report is not None and probe_bandwidth and report.ram.measured_bandwidth_bytes_per_s is None:
        report = None  # the cached report skipped the probe; this time we want it
    if report is None:
        report = detect_hardware(probe_bandwidth=probe_bandwidth)
        report = replace(report, backend=query_backend(), detected_at=time.time())
        report = match_catalogue(report, catalogue)
        save_cached_report(paths.hardware_cache, report)
    return report, build_profile(report, catalogue, chosen_device_id=chosen_device_id)


def host_for(
    report: HardwareReport | None,
    *,
    run: RunResult | None = None,
    ram_gb: float | None = None,
    ram_bandwidth_gbs: float | None = None,
    ram_speed: str | None = None,
    ram_channels: int | None = None,
    pcie_gbs: float | None = None,
    catalogue: Catalogue | None = None,
) -> Host:
    """The computer the projected cards sit in: the machine a run was measured on where a run
    is given, else this machine (its cached detection, else what the OS says), with the user's
    choices over it. `ram_bandwidth_gbs` is a measured read bandwidth (what the app's probe
    reports); `ram_speed` and `ram_channels` describe the memory where nothing was measured.
    Its CPU's usable peak comes from the catalogue record, where the CPU is catalogued."""
    host = (
        host_from_run(run, float(psutil.virtual_memory().total))
        if run is not None
        else host_from_report(report, float(psutil.virtual_memory().total))
    )
    host = with_choices(
        host, ram_gb=ram_gb, ram_bandwidth_gbs=ram_bandwidth_gbs, ram_speed=ram_speed,
        ram_channels=ram_channels, pcie_gbs=pcie_gbs,
    )  # fmt: skip
    return _with_cpu_peak(host, catalogue)


def with_choices(
    host: Host,
    *,
    ram_gb: float | None = None,
    ram_bandwidth_gbs: float | None = None,
    ram_speed: str | None = None,
    ram_channels: int | None = None,
    pcie_gbs: float | None = None,
) -> Host:
    """The host with the user's choices over what was detected (the command line's flags, the
    Upgrade and Compare pages' fields): its RAM size, a measured read bandwidth, or the memory
    (its speed and channels) where nothing was measured, the host link."""
    if ram_gb is not None:
        host = replace(host, ram_bytes=ram_gb * GiB)
    if ram_speed is not None or ram_channels is not None:
        memory = ram_speed or _memory_of(host)
        channels = ram_channels or 2
        try:
            rated = rated_ram_bandwidth(memory, channels)
        except ValueError as exc:
            raise InputError(f"{exc}; give --ram-speed like DDR5-4800.") from None
        plural = "s" if channels > 1 else ""
        host = replace(host, ram_bandwidth_bytes_per_s=rated, bandwidth_basis="rated",
                       ram_description=f"{memory.upper()}, {channels} channel{plural}")  # fmt: skip
    if ram_bandwidth_gbs is not None:
        host = replace(host, ram_bandwidth_bytes_per_s=ram_bandwidth_gbs * 1e9,
                       bandwidth_basis="measured")  # fmt: skip
    if pcie_gbs is not None:
        host = replace(host, link_gbs=pcie_gbs)
    return host


def host_from_run(run: RunResult, fallback_ram_bytes: float) -> Host:
    """The host a saved run was measured on: its RAM, that RAM's bandwidth as the run saved it
    (a CPU run's own measured bandwidth where it saved no host), its link and CPU."""
    hw = run.hardware
    bandwidth, basis = hw.ram_bandwidth_bytes_per_s, hw.ram_bandwidth_basis or "rated"
    if not bandwidth and hw.backend == "cpu" and hw.measured_bandwidth_bytes_per_s:
        bandwidth, basis = hw.measured_bandwidth_bytes_per_s, "measured"
    if not bandwidth:
        bandwidth, basis = DEFAULT_RAM_BANDWIDTH_BYTES_PER_S, "assumed"
    return Host(
        float(hw.ram_total_bytes or fallback_ram_bytes), float(bandwidth),
        bandwidth_basis=basis, ram_description=hw.ram_description, pcie_gen=hw.pcie_gen,
        pcie_lanes=hw.pcie_lanes, cpu_id=hw.cpu_id,
    )  # fmt: skip


def _memory_of(host: Host) -> str:
    """'DDR5-4800' from the host's description, for --ram-channels given alone."""
    words = host.ram_description.split(",")[0].strip()
    if not words or "-" not in words:
        raise InputError("Give --ram-speed (e.g. DDR5-4800) with --ram-channels.")
    return words


def _with_cpu_peak(host: Host, catalogue: Catalogue | None) -> Host:
    """The host with its CPU's usable peak for quantised weights, where the CPU is catalogued."""
    if host.cpu_id is None or host.cpu_peak_flops_per_s:
        return host
    catalogue = catalogue or load_catalogue()
    cpu = catalogue.by_id(host.cpu_id)
    if cpu is None:
        return host
    return replace(host, cpu_peak_flops_per_s=usable_peak(cpu, "cpu", True))


def cached_report(paths: AppPaths) -> HardwareReport | None:
    """The last detection of this machine, if there is a recent one (never probes)."""
    return load_cached_report(paths.hardware_cache)
