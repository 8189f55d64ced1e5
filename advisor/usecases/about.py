"""What this installation is made of: the facts the About box shows and `advisor --version`
prints, one line each, for a bug report."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any

from advisor import __version__


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def about_facts() -> dict[str, Any]:
    """App, Python and library versions (more are added by the release-hygiene work)."""
    return {
        "app_version": __version__,
        "python": platform.python_version(),
        "llama_cpp_python": _dist_version("llama-cpp-python"),
        "pyside6": _dist_version("PySide6-Essentials") or _dist_version("PySide6"),
        "platform": f"{platform.system()} {platform.release()} ({platform.machine()})",
    }
