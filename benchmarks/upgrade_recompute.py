#!/usr/bin/env python3
"""How long the upgrade answer takes to recompute: the projections behind it (a worker thread,
once per model, workload and run) and the re-ranking a price, budget or electricity edit does
(the GUI thread, on every keystroke). Target: the full candidate list under 100 ms.

    python benchmarks/upgrade_recompute.py [--shape mistral-nemo-12b --quant q4_k_m]

Timed side by side in one process, after one warm-up call each (the speed model is loaded from
its shipped fit first, as the app does at start-up); median of 20 calls.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.workloads import PRESETS
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.usecases.upgrade import project_candidates, rank_candidates

TARGET_MS = 100.0
PRICES = {"nvidia-geforce-rtx-3090": 750.0}  # a used card at its street price


def _median_ms(fn, n: int = 20) -> float:
    fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="mistral-nemo-12b")
    ap.add_argument("--quant", default="q4_k_m")
    args = ap.parse_args()
    t0 = time.perf_counter()
    load_speed_model()
    load_s = time.perf_counter() - t0
    catalogue = load_catalogue()
    facts = facts_from_shape(get_shape(args.shape), args.quant)
    host = Host(ram_bytes=32e9, ram_bandwidth_bytes_per_s=60e9)
    print(f"speed model loaded in {load_s * 1000:.0f} ms; model {facts.name}")
    ok = True
    for include_pro in (False, True):
        for workload in ("chat", "summarise", "many-users"):
            w = PRESETS[workload]

            def project(w=w, include_pro=include_pro):
                return project_candidates(facts, w, catalogue=catalogue, host=host,
                                          reference=None, this_machine=None,
                                          include_pro=include_pro,
                                          speed_model=load_speed_model())  # fmt: skip

            projected = project()

            def rank(projected=projected):
                return rank_candidates(projected, prices=PRICES, budget_usd=1500,
                                       price_per_kwh=0.30)  # fmt: skip

            p_ms, r_ms = _median_ms(project), _median_ms(rank)
            n = len(projected.candidates)
            total = p_ms + r_ms
            ok &= total < TARGET_MS
            print(f"{'pro ' if include_pro else 'hobby'} {workload:11s} {n:4d} candidates: "
                  f"project {p_ms:6.1f} ms (worker), re-rank {r_ms:5.2f} ms (GUI thread), "
                  f"full recompute {total:6.1f} ms")  # fmt: skip
    print("PASS" if ok else f"FAIL: a full recompute took {TARGET_MS:g} ms or more")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
