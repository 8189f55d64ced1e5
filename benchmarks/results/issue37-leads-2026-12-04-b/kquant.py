"""Held-out decode with a term for K-quants' dequantisation work on GPU backends.

Two forms, each patched into the shipped model for this run only:
- compute: a decoded token adds 2 x active parameters x C FP32 operations at the device's FP32
  peak, for K-quant files on CUDA (beside the weight stream, as the CPU's arithmetic term);
- ridge: a covariate of the K-quant share on GPU backends, log(bytes per FP32 FLOP) ("bpf",
  or only above 0.02 B/FLOP: "bpfpos") or log(bandwidth) ("bw"), penalised as the other
  covariates.

usage (repository root):
    PYTHONPATH=. python benchmarks/results/issue37-leads-2026-12-04-b/kquant.py \
        --form compute --c 2 [--with-h200]
    PYTHONPATH=. python benchmarks/results/issue37-leads-2026-12-04-b/kquant.py --form bpf
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import advisor.core.predict.fitting.ridge as ridge
import advisor.core.predict.fitting.shares as shares
import advisor.core.predict.model.speed_model as speed_model
from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model import efficiency
from advisor.core.predict.model.observations import data_files, load_observations

H200 = Path(__file__).parents[1] / "gpu-check-2026-12-04" / "h200-rows.csv"


def line(name: str, rows: list) -> None:
    if not rows:
        return
    a = sorted(abs(h.log_error) for h in rows)
    s = statistics.median(h.log_error for h in rows)
    print(f"{name:24s} n{len(a):4d} median {math.exp(statistics.median(a)) - 1:5.1%} "
          f"mean abs log {statistics.mean(a):.4f} signed {math.exp(s) - 1:+5.1%}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--form", choices=("none", "compute", "bpf", "bpfpos", "bw"), default="none")
    ap.add_argument("--c", type=float, default=0.0, help="compute: FP32 ops per weight FLOP")
    ap.add_argument("--with-h200", action="store_true")
    a = ap.parse_args()

    matvec, features = speed_model.matvec_s, efficiency.features

    def matvec_kquant(device, backend, facts, flop_share):  # type: ignore[no-untyped-def]
        s = matvec(device, backend, facts, flop_share)
        kq = efficiency.quant_kind(facts.file_type) == "kquant"
        if backend == "cuda" and kq and device.fp32_tflops:
            s += facts.flops_per_token(0) * a.c / (device.fp32_tflops * 1e12)
        return s

    def features_kquant(k):  # type: ignore[no-untyped-def]
        f = features(k)
        if k.quant_kind == "kquant" and k.backend != "cpu" and k.device.fp32_tflops:
            bw = k.device.bandwidth_bytes_per_s
            bpf = math.log(bw / (k.device.fp32_tflops * 1e12) / 0.02)
            v = {"bpf": bpf, "bpfpos": max(0.0, bpf), "bw": math.log(bw / 500e9)}[a.form]
            f[f"cov:{k.backend}:kq_{a.form}"] = ("cov", v)
        return f

    if a.form == "compute":
        speed_model.matvec_s = shares.matvec_s = matvec_kquant
    elif a.form != "none":
        efficiency.features = ridge.features = features_kquant
    files = data_files() + ([(H200, False)] if a.with_h200 else [])
    obs, _ = load_observations(files)
    res = [h for h in held_out(obs, kinds=("decode",)) if h.obs.era != "old"]
    print(vars(a))
    for basis in ("published", "modelled"):
        rows = [h for h in res if h.basis == basis and "h200" not in h.obs.device.id]
        line(f"{basis} all", rows)
        line(f"{basis} cuda", [h for h in rows if h.obs.backend == "cuda"])
        gpu_kq = [h for h in rows if h.obs.backend != "cpu" and h.obs.quant_kind == "kquant"]
        line(f"{basis} GPU K-quant", gpu_kq)
        for h in res:
            if h.basis == basis and "h200" in h.obs.device.id:
                print(f"    H200 {h.obs.quant_kind:7s} {math.exp(h.log_error) - 1:+.1%}")


if __name__ == "__main__":
    main()
