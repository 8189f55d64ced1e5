"""What this installation is made of: the facts the About box shows and `advisor --version`
prints, one line each, for a bug report.

Nothing here loads llama.cpp into the calling process: the backends and the llama.cpp commit
come from the last detection of this machine (cached), from the frozen build's record of
what it bundles, or, when asked to, from llama.cpp itself in a child process. Reading the
catalogue and the calibration data takes about a second: the app calls `about_facts` from a
worker, never on the GUI thread.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from importlib import metadata

from advisor import APP_NAME, __version__
from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.catalogue.dating import catalogue_date
from advisor.core.hardware.model import BackendInfo
from advisor.core.hardware.report_cache import load_cached_report
from advisor.core.infra.paths import AppPaths, app_paths
from advisor.startup import build_info

NOT_KNOWN = "not known"


@dataclass(frozen=True)
class AboutFacts:
    """Versions, data and folders of this installation (JSON keys are stable)."""

    app_version: str
    python: str
    platform: str
    frozen: bool
    llama_cpp_python: str | None
    llama_cpp_commit: str | None
    backends: tuple[str, ...]  # as llama.cpp reports them; empty when not known
    backends_note: str  # why the backends are not known ("" when they are)
    qt: str | None
    pyside6: str | None
    catalogue_date: str
    catalogue_date_basis: str  # what the date is the date of
    catalogue_devices: int
    calibration_rows: int  # published measurements the speed model is fitted on
    calibration_rows_skipped: int
    data_folder: str
    log_file: str
    config_folder: str
    cache_folder: str

    def lines(self) -> list[tuple[str, str]]:
        """Label and value, one line per fact: what the About box shows, what its Copy
        button puts on the clipboard, and what `advisor --version` prints."""
        build = "frozen build" if self.frozen else "run from source"
        backends = ", ".join(self.backends) or f"{NOT_KNOWN} ({self.backends_note})"
        skipped = (
            f" ({self.calibration_rows_skipped} skipped)" if self.calibration_rows_skipped else ""
        )
        date = self.catalogue_date or NOT_KNOWN
        basis = f" ({self.catalogue_date_basis})" if self.catalogue_date else ""
        return [
            (APP_NAME, f"{self.app_version} ({build})"),
            ("Python", self.python),
            ("Platform", self.platform),
            ("llama-cpp-python", self.llama_cpp_python or NOT_KNOWN),
            ("llama.cpp commit", self.llama_cpp_commit or NOT_KNOWN),
            ("llama.cpp backends", backends),
            ("Qt", self.qt or NOT_KNOWN),
            ("PySide6", self.pyside6 or NOT_KNOWN),
            (
                "Catalogue",
                f"{self.catalogue_devices} devices; newest date in its data {date}{basis}",
            ),
            ("Calibration data", f"{self.calibration_rows} published measurements{skipped}"),
            ("Data folder", self.data_folder),
            ("Log file", self.log_file),
            ("Settings folder", self.config_folder),
            ("Cache folder", self.cache_folder),
        ]

    def as_text(self) -> str:
        """All the facts as plain text, for a bug report."""
        width = max(len(label) for label, _ in self.lines())
        return "\n".join(f"{label.ljust(width)}  {value}" for label, value in self.lines())


def _dist_version(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def llama_cpp_commit(backend: BackendInfo | None) -> str | None:
    """The llama.cpp commit the installed llama-cpp-python vendors, as llama.cpp reported it
    (a detection or a run), else as the frozen build recorded it; None when neither knows."""
    if backend is not None and backend.llama_cpp_commit:
        return backend.llama_cpp_commit
    return build_info().get("llama_cpp_commit")


def known_backend(paths: AppPaths, backend: BackendInfo | None = None) -> BackendInfo | None:
    """What llama.cpp said about itself in the last detection of this machine (cached for a
    day), unless the caller already has it; never asks llama.cpp."""
    if backend is not None:
        return backend
    report = load_cached_report(paths.hardware_cache)
    return report.backend if report is not None else None


def about_facts(
    paths: AppPaths | None = None,
    *,
    qt_version: str | None = None,
    pyside6_version: str | None = None,
    backend: BackendInfo | None = None,
    ask_llama: bool = False,
    catalogue: Catalogue | None = None,
) -> AboutFacts:
    """The facts of this installation. The front end passes the Qt and PySide6 versions (only
    it imports Qt). The backends come from `backend`, else the cached detection, else, with
    `ask_llama`, from llama.cpp in a child process (about a second)."""
    from advisor.core.predict.model.observations import load_observations

    paths = paths or app_paths()
    catalogue = catalogue or load_catalogue()
    backend = known_backend(paths, backend)
    if backend is None and ask_llama:
        from advisor.bench.backend import query_backend

        backend = query_backend(timeout_s=20.0)
    if backend is None:
        note = "not asked: this machine has not been detected yet"
    elif not backend.available:
        note = f"llama.cpp could not be asked: {backend.error or 'no reason given'}"
    else:
        note = "" if backend.backends else "llama.cpp reported none"
    used, skipped = load_observations(catalogue=catalogue)
    dated = catalogue_date()
    binding = _dist_version("llama-cpp-python") or build_info().get("llama_cpp_python")
    return AboutFacts(
        app_version=__version__,
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.release()} ({platform.machine()})",
        frozen=bool(getattr(sys, "frozen", False)),
        llama_cpp_python=binding or (backend.llama_cpp_python_version if backend else None),
        llama_cpp_commit=llama_cpp_commit(backend),
        backends=tuple(backend.backends) if backend is not None and backend.available else (),
        backends_note=note,
        qt=qt_version or build_info().get("qt_version"),
        pyside6=pyside6_version or _dist_version("PySide6-Essentials", "PySide6"),
        catalogue_date=dated.date,
        catalogue_date_basis=dated.basis,
        catalogue_devices=len(catalogue),
        calibration_rows=len(used),
        calibration_rows_skipped=len(skipped),
        data_folder=str(paths.data),
        log_file=str(paths.log_file),
        config_folder=str(paths.config),
        cache_folder=str(paths.cache),
    )
