#!/usr/bin/env python3
"""Re-plant the small bugs of the test-quality issue, one at a time, and show which tests catch
each.

Each bug is a one-line edit of the current code (the same slip the issue planted in version 1,
at its new place). The script applies it in place, runs the tests that should catch it, restores
the file (also on Ctrl-C), and prints a table: bug, caught or not, by which test.

    python benchmarks/planted_bugs.py [--only N] [--out benchmarks/results/planted-bugs.txt]

The GUI bug (a 1.5 s sleep in the Run click handler) needs llama.cpp and a virtual screen; the
others run in the fast lane's tests.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bug:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    markers: str = "not slow"


BUGS = (
    Bug("explain ignores KV growth during decode", "advisor/core/predict/advising/explain.py",
        "avg_depth = round(test.depth + test.n_gen / 2)", "avg_depth = round(test.depth)",
        ("tests/core/test_hand_computed.py", "tests/core/test_ceilings.py", "tests/core/runs")),
    Bug("explain drops x batch in the batched ceiling", "advisor/core/predict/advising/explain.py",
        "            test.batch, bandwidth, weights, kv, peak_flops, flops",
        "            1, bandwidth, weights, kv, peak_flops, flops",
        ("tests/core/test_hand_computed.py", "tests/core/test_ceilings.py", "tests/core/runs")),
    Bug("GGUF alignment check off", "advisor/core/model/gguf_file.py",
        "    if offset % alignment:", "    if False:",
        ("tests/core/test_hand_computed.py", "tests/core/test_model_facts.py",
         "tests/reliability/test_fuzz_gguf.py", "tests/reliability/test_bad_inputs.py")),
    Bug("GGUF whole-blocks check off", "advisor/core/model/gguf_file.py",
        "    if shape[0] % block:", "    if False:",
        ("tests/core/test_hand_computed.py", "tests/core/test_model_facts.py",
         "tests/reliability/test_fuzz_gguf.py", "tests/reliability/test_bad_inputs.py")),
    Bug("stdev -> pstdev in the run statistics", "advisor/core/runs/stats.py",
        "    std = statistics.stdev(tps) if len(tps) > 1 else 0.0",
        "    std = statistics.pstdev(tps) if len(tps) > 1 else 0.0",
        ("tests/core/test_hand_computed.py", "tests/core/runs",
         "tests/bench/test_longest_and_energy.py")),
    Bug("mean of rates -> total tokens / total time", "advisor/core/runs/stats.py",
        "    mean = statistics.fmean(tps) if tps else 0.0",
        "    mean = spec.tokens_per_rep * len(tps) / sum(samples_s) if tps else 0.0",
        ("tests/core/test_hand_computed.py", "tests/core/runs",
         "tests/bench/test_longest_and_energy.py")),
    Bug("stddev over seconds instead of tokens/s", "advisor/core/runs/stats.py",
        "    std = statistics.stdev(tps) if len(tps) > 1 else 0.0",
        "    std = statistics.stdev(samples_s) if len(tps) > 1 else 0.0",
        ("tests/core/test_hand_computed.py", "tests/core/runs",
         "tests/bench/test_longest_and_energy.py")),
    Bug("10% over-commit counted as fits: yes", "advisor/core/predict/physics/memory.py",
        "    if need_bytes <= usable:", "    if need_bytes <= usable * 1.1:",
        ("tests/core/test_hand_computed.py", "tests/core/test_projection.py")),
    Bug("'no' only past 1.5x the room", "advisor/core/predict/physics/memory.py",
        "    if need_bytes > room:", "    if need_bytes > room * 1.5:",
        ("tests/core/test_hand_computed.py", "tests/core/test_projection.py")),
    Bug("Apple usable share 0.75 for every size", "advisor/core/predict/physics/memory.py",
        "        large = memory_gb >= APPLE_LARGE_MEMORY_GB", "        large = True",
        ("tests/core/test_hand_computed.py", "tests/core/test_projection.py",
         "tests/core/runs/test_preflight.py")),
    Bug("OS reserve ignored when the model spills to RAM", "advisor/core/predict/physics/memory.py",
        "        room = usable + max(0.0, host.ram_bytes - UNIFIED_OS_RESERVE_BYTES)",
        "        room = usable + host.ram_bytes",
        ("tests/core/test_hand_computed.py", "tests/core/test_projection.py")),
    Bug("a 1.5 s sleep in the Run click handler", "advisor/gui/panels/bench.py",
        "    def _on_run_clicked(self) -> None:\n        self._start()",
        "    def _on_run_clicked(self) -> None:\n        __import__('time').sleep(1.5)\n"
        "        self._start()",
        ("tests/gui/test_app.py::test_quick_benchmark_end_to_end",), markers=""),
    Bug("launch price taken before the street price", "advisor/core/catalogue/prices.py",
        'PRICE_KINDS = ("yours", "new", "used", "launch")',
        'PRICE_KINDS = ("yours", "launch", "new", "used")',
        ("tests/core/test_prices.py", "tests/core/test_projection.py")),
)  # fmt: skip


def run(bug: Bug, timeout_s: float) -> tuple[str, str]:
    path = REPO / bug.path
    original = path.read_text(encoding="utf-8")
    if bug.old not in original:
        return "not planted", "the line is not in the code any more"
    try:
        path.write_text(original.replace(bug.old, bug.new, 1), encoding="utf-8")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *bug.tests]
        if bug.markers:
            cmd += ["-m", bug.markers]
        try:
            done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                                  timeout=timeout_s)  # fmt: skip
        except subprocess.TimeoutExpired:
            return "caught", "the tests timed out"
    finally:
        path.write_text(original, encoding="utf-8")
    if done.returncode == 0:
        return "NOT CAUGHT", ""
    failed = re.findall(r"^FAILED (\S+)", done.stdout, re.M)
    return "caught", failed[0] if failed else done.stdout.strip().splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", type=int, action="append", help="bug numbers (1-based)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    lines = [f"planted bugs, {time.strftime('%Y-%m-%d %H:%M')}", ""]
    caught = 0
    chosen = [(i, b) for i, b in enumerate(BUGS, 1) if not args.only or i in args.only]
    for i, bug in chosen:
        verdict, by = run(bug, args.timeout)
        caught += verdict == "caught"
        line = f"{i:2d}. {bug.name:48s} {verdict:11s} {by}"
        print(line, flush=True)
        lines.append(line)
    lines += ["", f"caught {caught} of {len(chosen)}"]
    print(lines[-1])
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if caught == len(chosen) else 1


if __name__ == "__main__":
    raise SystemExit(main())
