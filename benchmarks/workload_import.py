#!/usr/bin/env python3
"""Import a ~100 MB OpenAI-style JSON Lines log: how long, and how much memory?

Runs the import with the estimated token counter in a fresh Python process (so nothing else
is in its memory), twice: once for the wall time and the process's peak resident memory
(ru_maxrss), once under tracemalloc for the peak of Python allocations (tracemalloc slows
the run, so its time is not the one reported). Targets: under 30 s and under 300 MB.

    python benchmarks/workload_import.py [log.jsonl]   # without a path: writes one (seed 7)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TARGET_S = 30.0
TARGET_MB = 300.0

CHILD = r"""
import json, resource, sys, time, tracemalloc
from advisor.core.traffic import EstimatedCounter, import_traffic, workload_numbers
path, traced = sys.argv[1], sys.argv[2] == "1"
calls = []
if traced:
    tracemalloc.start()
t0 = time.perf_counter()
stats = import_traffic(path, counter=EstimatedCounter(), progress=lambda d, t: calls.append(d))
wall = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1] if traced else None
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "maxrss_mb": rss_kb / 1024, "traced_peak_mb":
                  peak / 2**20 if peak else None, "progress_calls": len(calls),
                  "stats": stats.to_json(), "numbers": workload_numbers(stats)}))
"""


def _child(path: Path, traced: bool) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), "1" if traced else "0"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("log", type=Path, nargs="?")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="advisor-traffic-") as tmp:
        path = args.log
        if path is None:
            path = Path(tmp) / "traffic.jsonl"
            subprocess.run(
                [sys.executable, str(HERE / "make_openai_jsonl.py"), str(path)], check=True
            )
        size_mb = path.stat().st_size / 1e6
        plain = _child(path, traced=False)
        traced = _child(path, traced=True)
    s = plain["stats"]
    print(f"file: {size_mb:.1f} MB, {s['requests']} requests, {s['conversations']} conversations")
    print(f"wall time:                 {plain['wall_s']:6.1f} s   (target < {TARGET_S:g} s)")
    print(f"peak resident memory:      {plain['maxrss_mb']:6.1f} MB  (target < {TARGET_MB:g} MB)")
    print(f"peak Python allocations:   {traced['traced_peak_mb']:6.1f} MB  (tracemalloc)")
    print(f"progress reports:          {plain['progress_calls']}")
    print(f"workload numbers:          {plain['numbers']}")
    print("stats:", json.dumps({k: v for k, v in s.items() if k != "notes"}))
    ok = plain["wall_s"] < TARGET_S and plain["maxrss_mb"] < TARGET_MB
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
