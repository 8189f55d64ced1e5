#!/usr/bin/env python3
"""Parity with llama-bench: the in-app benchmark against llama.cpp's own tool, side by side.

Builds (or finds) `llama-bench` from the llama.cpp tree of the installed llama-cpp-python
version, writes synthetic models of real shapes, then alternates the two tools on the same
file with the same threads and settings for several rounds, so drift on a shared machine hits
both alike. Prints tokens/s of each and the ratio ours / llama-bench per test.

    python benchmarks/parity_llama_bench.py [--rounds 3] [--reps 3] [--threads N]
        [--gpu-layers N] [--cpu-moe N]

Our side runs exactly as the app does: a child process through BenchJob. `--cpu-moe N` keeps
the experts of the first N layers in system RAM on both sides (llama-bench's -ncmoe N, the
app's BenchConfig.cpu_moe) and measures a mixture-of-experts model instead of the dense ones;
it needs a GPU build (the app refuses a hybrid placement where there is no card).
"""

from __future__ import annotations

import argparse
import json
import math
import os
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
from advisor.core.runs.results import RunResult  # noqa: E402
from advisor.core.runs.stats import mean_interval  # noqa: E402

MODELS = [
    # (shape, quant, layers): one of at least 500 MB and a small one
    ("llama-3.2-1b", "q8_0", None),  # the whole model, 1.3 GB
    ("llama-3.2-1b", "q4_0", None),  # 0.77 GB
    ("qwen2.5-0.5b", "q4_0", 4),  # 0.2 GB
]
# with --cpu-moe: experts to keep in RAM, 6 of 48 blocks (2.5 GB, 2.0 GB of it experts)
MOE_MODELS = [("qwen3-30b-a3b", "q4_0", 6)]


def find_llama_bench(given: str | None = None) -> str:
    env = given or os.environ.get("LLAMA_BENCH")
    if env and Path(env).exists():
        return env
    out = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "build_llama_bench.sh")],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHON": sys.executable},
    )
    return out.stdout.strip().splitlines()[-1]


def run_llama_bench(
    binary: str,
    model: Path,
    pp: int,
    tg: int,
    reps: int,
    threads: int,
    ngl: int | None = None,
    cpu_moe: int = 0,
    repack: bool = True,
) -> dict[str, float]:
    cmd = [
        binary,
        "-m",
        str(model),
        "-p",
        str(pp),
        "-n",
        str(tg),
        "-r",
        str(reps),
        "-t",
        str(threads),
        "-o",
        "json",
    ]
    if ngl is not None:
        cmd += ["-ngl", str(ngl)]
    if cpu_moe > 0:
        cmd += ["-ncmoe", str(cpu_moe)]  # llama-bench's --n-cpu-moe
    if not repack:
        cmd += ["--repack", "0"]  # the plain CPU weights, as the app's run here
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)
    result = {}
    for row in rows:
        name = f"pp{row['n_prompt']}" if row["n_prompt"] else f"tg{row['n_gen']}"
        result[name] = float(row["avg_ts"])
    return result


def run_ours(
    model: Path,
    pp: int,
    tg: int,
    reps: int,
    threads: int,
    home: str,
    ngl: int | None = None,
    cpu_moe: int = 0,
) -> dict[str, float]:
    # the same fixed number of repetitions as llama-bench's -r, like for like
    config = BenchConfig(
        model_path=str(model), n_prompt=(pp,), n_gen=(tg,), reps=reps, threads=threads,
        adaptive_reps=False, gpu_layers=ngl, cpu_moe=cpu_moe,
    )  # fmt: skip
    final = None
    for event in BenchJob(config, home=home).events():
        final = event
    if not isinstance(final, RunResult):
        raise SystemExit(f"our benchmark failed: {final}")
    return {t.name: t.tokens_per_s for t in final.tests}


def app_repacks() -> bool:
    """Whether the app's runs here use llama.cpp's repacked CPU weights: not where llama.cpp
    has AMX (runner.py: those kernels segfault at the first decode on some Xeons, and llama-bench
    with them too), so llama-bench gets --repack 0 there, like for like. Asked in a child, as
    the app asks: this process never loads llama.cpp."""
    code = "from advisor.bench.llama_lib import backend_info; print(backend_info().has_amx)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    return out.stdout.strip().splitlines()[-1:] != ["True"]


def paired_interval(per_round: list[float]) -> tuple[float, float]:
    """95% interval of the ratio from the rounds' paired ratios (ours / theirs measured
    back to back): the mean's t-interval on their logarithms, so drift between rounds cancels."""
    interval = mean_interval([math.log(r) for r in per_round])
    return (math.exp(interval[0]), math.exp(interval[1])) if interval else (math.nan, math.nan)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pp", type=int, default=512)
    ap.add_argument("--tg", type=int, default=128)
    ap.add_argument("--threads", type=int, default=default_threads().threads)
    ap.add_argument("--models-dir", default=str(Path(tempfile.gettempdir()) / "advisor-parity"))
    ap.add_argument("--llama-bench", help="path of a llama-bench binary (default: build one)")
    ap.add_argument("--gpu-layers", type=int, help="-ngl for both (default: each's own)")
    ap.add_argument(
        "--cpu-moe",
        type=int,
        default=0,
        metavar="N",
        help="experts of the first N layers in RAM for both (-ncmoe N); an MoE model",
    )
    args = ap.parse_args()
    if args.cpu_moe < 0:
        ap.error("--cpu-moe takes a whole number of layers, 0 or more")

    binary = find_llama_bench(args.llama_bench)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stderr.strip()
    print(f"llama-bench: {binary} ({version.splitlines()[0] if version else '?'})")
    repack = app_repacks()
    if not repack:
        print("llama.cpp has AMX here: the app runs the plain CPU kernels, llama-bench --repack 0")
    print(
        f"threads {args.threads}, pp{args.pp}, tg{args.tg}, {args.reps} repetitions, "
        f"{args.rounds} alternating rounds"
        + (f", experts of the first {args.cpu_moe} layers in RAM" if args.cpu_moe else "")
        + "\n"
    )
    models_dir = Path(args.models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="advisor-parity-home-")

    rows = []
    for shape, quant, layers in MOE_MODELS if args.cpu_moe else MODELS:
        path = models_dir / synthetic_file_name(shape, quant, layers)
        if not path.exists():
            write_synthetic_gguf(path, shape, quant, n_layers=layers)
        size_mb = path.stat().st_size / 1e6
        theirs: dict[str, list[float]] = {}
        ours: dict[str, list[float]] = {}
        for r in range(args.rounds):
            order = [("theirs", "ours"), ("ours", "theirs")][r % 2]
            for who in order:
                if who == "theirs":
                    res = run_llama_bench(
                        binary, path, args.pp, args.tg, args.reps, args.threads,
                        args.gpu_layers, args.cpu_moe, repack,
                    )  # fmt: skip
                    target = theirs
                else:
                    res = run_ours(
                        path, args.pp, args.tg, args.reps, args.threads, home,
                        args.gpu_layers, args.cpu_moe,
                    )  # fmt: skip
                    target = ours
                for k, v in res.items():
                    target.setdefault(k, []).append(v)
        for test in sorted(theirs):
            t_med = statistics.median(theirs[test])
            o_med = statistics.median(ours[test])
            per_round = [o / t for o, t in zip(ours[test], theirs[test], strict=False)]
            rows.append(
                (path.name, f"{size_mb:.0f} MB", test, t_med, o_med, o_med / t_med, per_round)
            )

    print(
        f"{'model':40} {'size':>8} {'test':>6} {'llama-bench':>12} {'advisor':>10} "
        f"{'ratio':>7} {'95% interval':>13}  per round"
    )
    for name, size, test, t, o, ratio, per_round in rows:
        rounds = " ".join(f"{x:.3f}" for x in per_round)
        lo, hi = paired_interval(per_round)
        print(
            f"{name:40} {size:>8} {test:>6} {t:12.2f} {o:10.2f} {ratio:7.3f} "
            f"{lo:6.3f}-{hi:5.3f}  {rounds}"
        )
    worst = max(abs(r[5] - 1) for r in rows)
    print(f"\nlargest deviation of the median ratio from 1: {worst:.1%}")
    print(
        "(the interval: the paired per-round ratios' 95% t-interval; where it is wide, the "
        "machine was too noisy to tell a difference that small)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
