"""Adaptive repetitions against a fixed five: time saved and the same figures.

Runs the Quick preset (pp512, tg128) on a small synthetic model twice, alternating: with five
fixed repetitions (llama-bench's default) and with adaptive ones (stop once the 95% interval is
within +-2%, at least 2). Prints each test's mean, repetitions and the wall time of each run.

    python benchmarks/adaptive_reps.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from advisor.bench.controller import BenchJob  # noqa: E402
from advisor.bench.synth import synthetic_file_name, write_synthetic_gguf  # noqa: E402
from advisor.core.runs.config import BenchConfig  # noqa: E402
from advisor.core.runs.results import RunResult  # noqa: E402


def run(config: BenchConfig, home: str) -> tuple[RunResult, float]:
    started = time.perf_counter()
    final = None
    for event in BenchJob(config, home=home).events():
        final = event
    if not isinstance(final, RunResult):
        raise SystemExit(f"the benchmark failed: {final}")
    return final, time.perf_counter() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    models = Path(tempfile.gettempdir()) / "advisor-parity"
    models.mkdir(exist_ok=True)
    path = models / synthetic_file_name("qwen2.5-0.5b", "q4_0", None)
    if not path.exists():
        write_synthetic_gguf(path, "qwen2.5-0.5b", "q4_0")
    home = tempfile.mkdtemp(prefix="advisor-adaptive-")
    base = BenchConfig(model_path=str(path), n_prompt=(512,), n_gen=(128,), reps=5)
    print(f"{'run':>9} {'wall s':>7}  tests (mean t/s, repetitions)")
    for r in range(args.rounds):
        for adaptive in ((False, True), (True, False))[r % 2]:
            result, wall = run(BenchConfig(**{**base.__dict__, "adaptive_reps": adaptive}), home)
            tests = ", ".join(
                f"{t.name} {t.tokens_per_s:.1f} ({len(t.samples)})" for t in result.tests
            )
            print(f"{'adaptive' if adaptive else 'fixed 5':>9} {wall:7.1f}  {tests}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
