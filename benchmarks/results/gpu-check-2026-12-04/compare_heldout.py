"""Held-out decode of every device but the H200, with and without the H200 rows in the fit.

usage (repository root):
    PYTHONPATH=. python benchmarks/results/gpu-check-2026-12-04/compare_heldout.py [--with-h200]
    [--costs JSON]   (costs: backend -> [seconds, speed exponent, MoE factor])
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model.efficiency import efficiency_class
from advisor.core.predict.model.observations import data_files, load_observations
from advisor.core.predict.model.speed_model import LayerCost

ROWS = Path(__file__).with_name("h200-rows.csv")


def line(name: str, rows: list) -> None:
    a = sorted(abs(h.log_error) for h in rows)
    if not a:
        return
    s = statistics.median(h.log_error for h in rows)
    print(
        f"{name:30s} n{len(a):4d} median {math.exp(statistics.median(a)) - 1:5.1%} "
        f"mean abs log {statistics.mean(a):.4f} signed {math.exp(s) - 1:+5.1%}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--with-h200", action="store_true")
    ap.add_argument("--costs", default=None)
    args = ap.parse_args()
    files = data_files() + ([(ROWS, False)] if args.with_h200 else [])
    obs, _ = load_observations(files)
    costs = json.loads(args.costs) if args.costs else None
    t_layer = {b: LayerCost(*v) for b, v in costs.items()} if costs else None
    res = [h for h in held_out(obs, t_layer=t_layer, kinds=("decode",)) if h.obs.era != "old"]
    for basis in ("published", "modelled"):
        rows = [h for h in res if h.basis == basis and "h200" not in h.obs.device.id]
        line(f"{basis} all", rows)
        line(f"{basis} cuda", [h for h in rows if h.obs.backend == "cuda"])
        line(f"{basis} geforce", [h for h in rows if efficiency_class(h.obs.device) == "geforce"])
        line(f"{basis} H200", [h for h in res if h.basis == basis and "h200" in h.obs.device.id])


if __name__ == "__main__":
    main()
