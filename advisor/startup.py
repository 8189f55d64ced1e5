"""Checks and plumbing for the packaged app, before anything heavy is imported.

- The bundled llama.cpp is compiled for a baseline instruction set (AVX2 + FMA on x86); on an
  older CPU it would crash with an illegal instruction, so check first and say so plainly.
- A windowed app has no console: stdout and stderr go to the log file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

BUILD_INFO = "build_info.json"


def bundle_dir() -> Path | None:
    """The folder of a frozen (PyInstaller) app, None when running from source."""
    if getattr(sys, "frozen", False):
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    return None


def build_info() -> dict:
    folder = bundle_dir()
    if folder is None:
        return {}
    try:
        return json.loads((folder / BUILD_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def cpu_features() -> set[str]:
    """Instruction-set features numpy detected on this CPU at import (no subprocess)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return {name.upper() for name, present in features.items() if present}


def missing_instructions(required: list[str], present: set[str] | None = None) -> list[str]:
    """Which of the build's required instruction sets this CPU lacks (FMA is FMA3 to numpy)."""
    present = cpu_features() if present is None else present
    aliases = {
        "FMA": ("FMA3", "FMA"),
        "F16C": ("F16C",),
        "AVX2": ("AVX2",),
        "NEON": ("NEON", "ASIMD"),
        "AVX": ("AVX",),
    }
    return [r for r in required if not any(a in present for a in aliases.get(r, (r,)))]


def cpu_check_message() -> str | None:
    """None when this CPU can run the bundled llama.cpp, else one sentence saying why not."""
    info = build_info()
    required = info.get("requires_cpu", [])
    if not required:
        return None
    missing = missing_instructions(required)
    if not missing:
        return None
    if info.get("native_build"):
        return (
            "This build of LLM Hardware Advisor was compiled for the processor of the "
            f"computer it was built on, and this CPU lacks {', '.join(missing)}; install the "
            "release build, or build the app from source on this machine."
        )
    return (
        f"This build of LLM Hardware Advisor needs a CPU with {' and '.join(required)} "
        f"instructions (Intel Haswell, AMD Zen or newer), and this CPU lacks "
        f"{', '.join(missing)}; build the app from source for this machine instead."
    )


def route_output_to_log(log_file: Path) -> None:
    """Windowed apps have no stdout/stderr: send them to the log file instead of nowhere."""
    if sys.stdout is not None and sys.stderr is not None:
        return
    log_file.parent.mkdir(parents=True, exist_ok=True)
    stream = open(log_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (process-long)
    if sys.stdout is None:
        sys.stdout = stream
    if sys.stderr is None:
        sys.stderr = stream
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
