"""How many threads llama.cpp should use: the performance cores, not half the logical CPUs.

Hyper-threads share a core's vector units and efficiency cores fall behind in lock-step
matrix work, so llama.cpp's own default (common_cpu_get_num_math) counts physical performance
cores. This mirrors it without calling into llama.cpp.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import psutil


def _linux_physical_cores(cpus: set[int] | None = None) -> int | None:
    siblings = set()
    base = Path("/sys/devices/system/cpu")
    for cpu_dir in base.glob("cpu[0-9]*"):
        cpu = int(cpu_dir.name[3:])
        if cpus is not None and cpu not in cpus:
            continue
        try:
            siblings.add((cpu_dir / "topology" / "thread_siblings").read_text().strip())
        except OSError:
            continue
    return len(siblings) or None


def _parse_cpu_list(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.update(range(int(lo), int(hi) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def performance_core_count() -> int:
    """Physical performance cores of this machine (at least 1)."""
    system = platform.system()
    if system == "Darwin":
        for key in ("hw.perflevel0.physicalcpu", "hw.physicalcpu"):
            try:
                out = subprocess.run(
                    ["sysctl", "-n", key],
                    capture_output=True,
                    text=True,
                    timeout=2,
                    stdin=subprocess.DEVNULL,
                )
                if out.returncode == 0 and out.stdout.strip().isdigit():
                    return max(1, int(out.stdout.strip()))
            except (OSError, subprocess.SubprocessError):
                pass
    if system == "Linux":
        # Intel hybrid CPUs list their performance cores here
        p_cores = Path("/sys/devices/cpu_core/cpus")
        try:
            cpus = _parse_cpu_list(p_cores.read_text()) if p_cores.exists() else None
        except (OSError, ValueError):
            cpus = None
        n = _linux_physical_cores(cpus)
        if n:
            return n
    n = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    return max(1, n)
