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
    Host,
    MachineProfile,
    build_profile,
    host_from_report,
    match_catalogue,
)
from advisor.core.hardware.report_cache import load_cached_report, save_cached_report
from advisor.core.infra.paths import AppPaths
from advisor.core.infra.units import GiB


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
    ram_gb: float | None = None,
    ram_bandwidth_gbs: float | None = None,
) -> Host:
    """The host for projections: this machine's RAM (from the cached detection, else what the
    OS says), with the user's overrides."""
    host = host_from_report(report, float(psutil.virtual_memory().total))
    if ram_gb is not None:
        host = replace(host, ram_bytes=ram_gb * GiB)
    if ram_bandwidth_gbs is not None:
        host = replace(host, ram_bandwidth_bytes_per_s=ram_bandwidth_gbs * 1e9)
    return host


def cached_report(paths: AppPaths) -> HardwareReport | None:
    """The last detection of this machine, if there is a recent one (never probes)."""
    return load_cached_report(paths.hardware_cache)
