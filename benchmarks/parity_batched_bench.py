"""Batched decode against llama.cpp's own llama-batched-bench, with the command the app exports.

Runs the app's tgNxB tests on a synthetic model, then the exact `llama-batched-bench` command
`advisor` exports for that run (one KV cache per stream, its default), and prints S_TG t/s of
each and their ratio. Alternates who goes first over a few rounds (CPU frequency and cache
state drift), like parity_llama_bench.py.

    python benchmarks/parity_batched_bench.py [--batches 4,8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.bench.controller import BenchJob  # noqa: E402
from advisor.bench.synth import synthetic_file_name, write_synthetic_gguf  # noqa: E402
from advisor.core.hardware.threads import default_threads  # noqa: E402
from advisor.core.runs.config import BenchConfig  # noqa: E402
from advisor.core.runs.export import batched_bench_command  # noqa: E402
from advisor.core.runs.results import RunResult  # noqa: E402
from benchmarks.parity_llama_bench import find_llama_bench  # noqa: E402


def theirs(command: str, binary: str) -> dict[int, float]:
    args = shlex.split(command)
    args[0] = binary
    out = subprocess.run(
        [*args, "--output-format", "jsonl"], capture_output=True, text=True, check=True
    )
    rates = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rates[int(row["pl"])] = float(row["speed_tg"])
    return rates


def ours(config: BenchConfig, home: str) -> dict[int, float]:
    final = None
    for event in BenchJob(config, home=home).events():
        final = event
    if not isinstance(final, RunResult):
        raise SystemExit(f"our benchmark failed: {final}")
    return {t.batch: t.tokens_per_s for t in final.tests if t.batch > 1}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="4,8")
    ap.add_argument("--tg", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=default_threads().threads)
    ap.add_argument("--llama-bench", help="llama-bench path (llama-batched-bench beside it)")
    args = ap.parse_args()
    binary = str(Path(find_llama_bench(args.llama_bench)).with_name("llama-batched-bench"))
    models = Path(tempfile.gettempdir()) / "advisor-parity"
    models.mkdir(exist_ok=True)
    path = models / synthetic_file_name("llama-3.2-1b", "q4_0", None)
    if not path.exists():
        write_synthetic_gguf(path, "llama-3.2-1b", "q4_0")
    batches = tuple(int(b) for b in args.batches.split(","))
    config = BenchConfig(
        model_path=str(path), n_prompt=(), n_gen=(args.tg,), batches=batches, reps=3,
        adaptive_reps=False, threads=args.threads, gpu_layers=0,
    )  # fmt: skip
    command = batched_bench_command(config)
    assert command is not None
    print(f"exported: {command}\n")
    home = tempfile.mkdtemp(prefix="advisor-batched-")
    a: dict[int, list[float]] = {}
    b: dict[int, list[float]] = {}
    for r in range(args.rounds):
        for who in (("ours", "theirs"), ("theirs", "ours"))[r % 2]:
            res = ours(config, home) if who == "ours" else theirs(command, binary)
            for k, v in res.items():
                (a if who == "ours" else b).setdefault(k, []).append(v)
    print(f"{'streams':>7} {'batched-bench S_TG':>19} {'advisor tgNxB':>14} {'ratio':>7}")
    worst = 0.0
    for k in sorted(b):
        t, o = statistics.median(b[k]), statistics.median(a[k])
        worst = max(worst, abs(o / t - 1))
        print(f"{k:7d} {t:19.2f} {o:14.2f} {o / t:7.3f}")
    print(f"\nlargest deviation from 1: {worst:.1%} (threads {args.threads}, tg{args.tg})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
