#!/usr/bin/env python3
"""Cold start: time from launching `advisor` to a usable (painted, responsive) window.

Launches the real app N times (offscreen unless DISPLAY is set), each in a fresh process with
a fresh app folder, and prints each start-up time, the CPU time the process used until then
(its own work, whatever else the machine runs) and the median. Target: under 1 s.

    python benchmarks/gui_cold_start.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

TARGET_S = 1.0  # launch to a painted, responsive window


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    exe = shutil.which("advisor") or ""
    cmd = [exe] if exe else [sys.executable, "-m", "advisor"]
    times, cpus = [], []
    for i in range(args.runs):
        home = tempfile.mkdtemp(prefix="advisor-cold-")
        env = {**os.environ, "ADVISOR_HOME": home, "ADVISOR_REPORT_STARTUP": "1"}
        if not env.get("DISPLAY"):
            env["QT_QPA_PLATFORM"] = "offscreen"
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
        m = re.search(
            r"usable window ([0-9.]+) s after the process started \(([0-9.]+) s", out.stdout
        )
        if not m:
            print(out.stdout, out.stderr)
            return 1
        times.append(float(m.group(1)))
        cpus.append(float(m.group(2)))
        print(f"run {i + 1}: {times[-1]:.3f} s ({cpus[-1]:.3f} s of CPU)")
        shutil.rmtree(home, ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"median {statistics.median(times):.3f} s, worst {max(times):.3f} s "
        f"({'under' if max(times) < TARGET_S else 'OVER'} the {TARGET_S:g} s target); CPU "
        f"median {statistics.median(cpus):.3f} s; load average {load:.1f} on {os.cpu_count()} "
        "cores"
    )
    return 0 if max(times) < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
