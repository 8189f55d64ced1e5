#!/usr/bin/env python3
"""Time the README's fast lane: the command is read from the README itself, so the figure
printed is the one a developer gets. Exit 1 when it takes 60 s or more (the house issue's
target) or when any test fails.

    python benchmarks/fast_lane.py [--runs 2]
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT_S = 60.0


def readme_command() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if "# the fast lane" in ln)
    command = shlex.split(line.split("#", 1)[0].strip())
    if not command or "pytest" not in command:
        raise SystemExit(f"the README's fast-lane line is not a pytest command: {line!r}")
    return [sys.executable if re.search(r"python3?$", command[0]) else command[0], *command[1:]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    command = readme_command()
    print("fast lane:", " ".join(command[1:]))
    worst = 0.0
    for i in range(args.runs):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        took = time.perf_counter() - started
        worst = max(worst, took)
        tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
        print(f"  run {i + 1}: {took:5.1f} s wall  ({tail})")
        if done.returncode != 0:
            print("  tests failed")
            return 1
    print(f"slowest {worst:.1f} s against a limit of {LIMIT_S:.0f} s: "
          f"{'ok' if worst < LIMIT_S else 'TOO SLOW'}")  # fmt: skip
    return 0 if worst < LIMIT_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
