#!/usr/bin/env python3
"""Import a ~100 MB OpenAI-style JSON Lines log: how long, and how much memory?

Runs the import with the estimated token counter in a fresh Python process (so nothing else
is in its memory), twice: once for the wall time and the process's peak resident memory
(ru_maxrss), once under tracemalloc for the peak of Python allocations (tracemalloc slows
the run, so its time is not the one reported). Targets: under 30 s and under 300 MB.

Then once more with the llama.cpp tokenizer of a small synthetic model (written with
`advisor synth`, vocabulary only loaded, in the tokenizer child process): target under 120 s.

    python benchmarks/workload_import.py [log.jsonl] [--model M.gguf] [--skip-tokenizer]
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
path, traced, model = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
calls = []
if model:
    from advisor.bench.token_counter import ModelTokenCounter
    counter = ModelTokenCounter(model)
    counter.start()
else:
    counter = EstimatedCounter()
if traced:
    tracemalloc.start()
t0 = time.perf_counter()
stats = import_traffic(path, counter=counter, progress=lambda d, t: calls.append(d))
wall = time.perf_counter() - t0
if model:
    counter.close()
peak = tracemalloc.get_traced_memory()[1] if traced else None
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "maxrss_mb": rss_kb / 1024, "traced_peak_mb":
                  peak / 2**20 if peak else None, "progress_calls": len(calls),
                  "stats": stats.to_json(), "numbers": workload_numbers(stats)}))
"""


TOKENIZER_TARGET_S = 120.0


def _child(path: Path, traced: bool, model: Path | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), "1" if traced else "0", str(model or "")],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("log", type=Path, nargs="?")
    ap.add_argument("--model", type=Path, help="a GGUF whose tokenizer counts (default: synth)")
    ap.add_argument("--skip-tokenizer", action="store_true")
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
        tok = None
        if not args.skip_tokenizer:
            model = args.model
            if model is None:
                model = Path(tmp) / "tinyllama-1l.gguf"
                subprocess.run(
                    [sys.executable, "-m", "advisor", "synth", str(model), "--shape",
                     "tinyllama-1.1b", "--quant", "q4_0", "--layers", "1"],
                    check=True, cwd=REPO, capture_output=True,
                )  # fmt: skip
            tok = _child(path, traced=False, model=model)
    s = plain["stats"]
    print(f"file: {size_mb:.1f} MB, {s['requests']} requests, {s['conversations']} conversations")
    print(f"wall time:                 {plain['wall_s']:6.1f} s   (target < {TARGET_S:g} s)")
    print(f"peak resident memory:      {plain['maxrss_mb']:6.1f} MB  (target < {TARGET_MB:g} MB)")
    print(f"peak Python allocations:   {traced['traced_peak_mb']:6.1f} MB  (tracemalloc)")
    print(f"progress reports:          {plain['progress_calls']}")
    print(f"workload numbers:          {plain['numbers']}")
    print("stats:", json.dumps({k: v for k, v in s.items() if k != "notes"}))
    ok = plain["wall_s"] < TARGET_S and plain["maxrss_mb"] < TARGET_MB
    if tok is not None:
        t = tok["stats"]
        print(f"with the model's tokenizer: {tok['wall_s']:6.1f} s   (target < "
              f"{TOKENIZER_TARGET_S:g} s), import process peak {tok['maxrss_mb']:.1f} MB, "
              f"tokens {t['tokens']} ({t['counter']})")  # fmt: skip
        print(f"  workload numbers:         {tok['numbers']}")
        ok = ok and tok["wall_s"] < TOKENIZER_TARGET_S
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
