#!/usr/bin/env python3
"""Cold start: time from launching `advisor` to a usable (painted, responsive) window.

Launches the real app N times (offscreen unless DISPLAY is set), each in a fresh process with
a fresh app folder, and prints each start-up time and the median. Target: under 2 s.

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    exe = shutil.which("advisor") or ""
    cmd = [exe] if exe else [sys.executable, "-m", "advisor"]
    times = []
    for i in range(args.runs):
        home = tempfile.mkdtemp(prefix="advisor-cold-")
        env = {**os.environ, "ADVISOR_HOME": home, "ADVISOR_REPORT_STARTUP": "1"}
        if not env.get("DISPLAY"):
            env["QT_QPA_PLATFORM"] = "offscreen"
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
        m = re.search(r"usable window ([0-9.]+) s", out.stdout)
        if not m:
            print(out.stdout, out.stderr)
            return 1
        times.append(float(m.group(1)))
        print(f"run {i + 1}: {times[-1]:.3f} s")
        shutil.rmtree(home, ignore_errors=True)
    print(
        f"median {statistics.median(times):.3f} s, worst {max(times):.3f} s "
        f"({'under' if max(times) < 2 else 'OVER'} the 2 s target)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
