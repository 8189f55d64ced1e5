"""What each measured number means physically, and the assembled run.

`explain_test` adds to a measured test the bytes read per token, the bandwidth achieved, the
FLOP/s achieved, the ceiling and the share of it reached; `finish_run` explains every test,
judges noise and other programs' load, and assembles the saved run.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from advisor.core.model.facts import ModelFacts
from advisor.core.predict.physics import ceilings
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.results import LlamaInfo, RunHardware, RunResult, TestResult

# a run is flagged noisy when repetitions spread more than this (coefficient of variation) ...
NOISY_CV = 0.05
# ... or busy when other programs used more than this share of the CPU while it ran
BUSY_OTHER_CPU = 0.10


def explain_test(
    test: TestResult,
    facts: ModelFacts,
    bandwidth_spec_bytes_per_s: float | None,
    bandwidth_measured_bytes_per_s: float | None,
    peak_flops_per_s: float | None,
    cache_type: str = "f16",
    n_ubatch: int = 512,
) -> TestResult:
    """Add the physics to a measured test: bytes read, achieved bandwidth, ceilings, efficiency."""
    if test.kind == "decode":
        return _explain_decode(
            test, facts, bandwidth_spec_bytes_per_s, bandwidth_measured_bytes_per_s,
            peak_flops_per_s, cache_type,
        )  # fmt: skip
    return _explain_prefill(test, facts, peak_flops_per_s, cache_type, n_ubatch)


def _explain_decode(
    test: TestResult,
    facts: ModelFacts,
    bandwidth_spec: float | None,
    bandwidth_measured: float | None,
    peak_flops: float | None,
    cache_type: str,
) -> TestResult:
    # while n_gen tokens are generated the cache grows from depth to depth + n_gen
    avg_depth = round(test.depth + test.n_gen / 2)
    kv = facts.kv_cache_bytes(avg_depth, cache_type)
    weights = facts.active_weights_bytes
    step_bytes = ceilings.decode_step_bytes(weights, kv, test.batch)
    flops = facts.flops_per_token(avg_depth)

    def ceiling(bandwidth: float | None) -> float | None:
        if not bandwidth:
            return None
        return ceilings.batched_decode_ceiling(
            test.batch, bandwidth, weights, kv, peak_flops, flops
        ).aggregate_tps

    ceil_spec, ceil_meas = ceiling(bandwidth_spec), ceiling(bandwidth_measured)
    ceil = ceil_spec or ceil_meas
    return replace(
        test,
        bytes_per_token=step_bytes / test.batch,
        achieved_bandwidth_bytes_per_s=step_bytes * test.tokens_per_s / test.batch,
        decode_ceiling_tps=ceil,
        decode_ceiling_measured_bw_tps=ceil_meas,
        efficiency=test.tokens_per_s / ceil if ceil else None,
        flops_per_token=flops,
        achieved_flops_per_s=flops * test.tokens_per_s,
        arithmetic_intensity=ceilings.arithmetic_intensity(flops * test.batch, step_bytes),
    )


def _explain_prefill(
    test: TestResult,
    facts: ModelFacts,
    peak_flops: float | None,
    cache_type: str,
    n_ubatch: int,
) -> TestResult:
    flops = facts.flops_per_token(round(test.depth + test.n_prompt / 2))
    ceil = ceilings.compute_ceiling_tps(peak_flops, flops) if peak_flops else None
    # a prefill pass reads the weights once per micro-batch (n_ubatch tokens)
    reads = math.ceil(test.n_prompt / max(1, n_ubatch))
    bytes_total = reads * facts.active_weights_bytes + facts.kv_cache_bytes(
        test.depth + test.n_prompt, cache_type
    )
    return replace(
        test,
        flops_per_token=flops,
        achieved_flops_per_s=flops * test.tokens_per_s,
        prefill_ceiling_tps=ceil,
        efficiency=test.tokens_per_s / ceil if ceil else None,
        bytes_per_token=bytes_total / test.n_prompt,
        arithmetic_intensity=ceilings.arithmetic_intensity(flops * test.n_prompt, bytes_total),
    )


def run_notes(tests: list[TestResult]) -> tuple[bool, bool, list[str]]:
    """(busy, noisy, notes): whether other programs loaded the CPU, whether repetitions
    spread, and the sentences that say so."""
    notes: list[str] = []
    loads = [t.other_cpu_load for t in tests if t.other_cpu_load is not None]
    busy = bool(loads) and max(loads) > BUSY_OTHER_CPU
    if busy:
        notes.append(
            f"Other programs used up to {max(loads):.0%} of the CPU during the run, so these "
            "numbers are probably low; close other programs and run it again."
        )
    noisy_tests = [t.name for t in tests if t.cv > NOISY_CV]
    if noisy_tests:
        notes.append(
            "Repetitions varied by more than 5% in "
            + ", ".join(noisy_tests)
            + "; more repetitions or a quieter machine give steadier numbers."
        )
    return busy, bool(noisy_tests), notes


def finish_run(
    run_id: str,
    config: BenchConfig,
    facts: ModelFacts,
    tests: list[TestResult],
    *,
    hardware: RunHardware | None = None,
    llama: LlamaInfo | None = None,
    load_time_s: float | None = None,
    app_version: str = "",
    catalogue_date: str = "",
) -> RunResult:
    """Explain every test, judge noise and other programs' load, and assemble the saved run."""
    explained = [
        explain_test(
            t,
            facts,
            config.bandwidth_spec_bytes_per_s,
            config.bandwidth_measured_bytes_per_s,
            config.peak_flops_per_s,
            config.cache_type_k,
            config.n_ubatch,
        )
        for t in tests
    ]
    busy, noisy, notes = run_notes(explained)
    pp = next((t for t in explained if t.kind == "prefill" and t.depth == 0), None)
    tg = next((t for t in explained if t.kind == "decode" and t.depth == 0 and t.batch == 1), None)
    ttft = None
    if pp and pp.tokens_per_s and tg and tg.tokens_per_s:
        ttft = pp.n_prompt / pp.tokens_per_s + 1 / tg.tokens_per_s
    return RunResult(
        id=run_id,
        created_at=time.time(),
        config=config,
        model=facts,
        tests=tuple(explained),
        hardware=hardware or RunHardware(),
        llama=llama or LlamaInfo(),
        load_time_s=load_time_s,
        ttft_s=ttft,
        busy=busy,
        noisy=noisy,
        notes=tuple(notes),
        app_version=app_version,
        catalogue_date=catalogue_date,
    )
