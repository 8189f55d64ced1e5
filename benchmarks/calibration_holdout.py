"""How well the speed model predicts published llama-bench results it has not seen.

Every shipped row is predicted by a fit that never saw it: with its device left out (what a
`modelled` prediction is worth) and with its source left out where another source measured the
same device (what a `published` prediction is worth). Printed per backend and per device class,
decode and prefill: rows, median and 90th-percentile error, the share inside the band the app
would show, and the median band width (high / low).

    python benchmarks/calibration_holdout.py            # current builds
    python benchmarks/calibration_holdout.py --all      # old builds too
    python benchmarks/calibration_holdout.py --worst 20 # the rows it misses most
    python benchmarks/calibration_holdout.py --agreement # the model beside another source's figure
    python benchmarks/calibration_holdout.py --search-prefill # choose prefill's per-layer cost
    python benchmarks/calibration_holdout.py --search-decode  # choose decode's per-layer cost
    python benchmarks/calibration_holdout.py --write    # refit and ship the result
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.core.predict import efficiency as E
from advisor.core.predict.bands import bands_from, moe_widening, shown_band
from advisor.core.predict.holdout import HeldOut, held_out
from advisor.core.predict.observations import load_observations
from advisor.core.predict.speed_fit import (
    fit_file,
    fit_speed_model,
    fit_to_json,
    search_decode_flop_share,
    search_decode_layer,
    search_prefill_layer,
)
from advisor.core.predict.speed_model import T_LAYER_S


def table(rows: list[HeldOut], bands: dict, widening: dict, group, title: str) -> None:
    """Per group: rows, median and p90 error, the share inside the band the app would show
    (a mixture of experts' widened) and the median band width."""
    print(f"\n{title}")
    print(
        f"{'':24s} {'kind':8s} {'rows':>5s} {'median':>7s} {'p90':>7s} "
        f"{'in band':>8s} {'hi/lo':>6s}"
    )
    keys = sorted({(group(h), h.kind) for h in rows})
    for g, kind in keys:
        sel = [h for h in rows if group(h) == g and h.kind == kind]
        errs = [abs(math.exp(h.log_error) - 1) for h in sel]
        inside, widths = 0, []
        for h in sel:
            lo, hi = shown_band(bands, kind, h.obs.backend, h.basis, h.obs.moe, widening[kind])
            widths.append(hi / lo)
            inside += lo <= math.exp(h.log_error) <= hi
        print(
            f"{g:24s} {kind:8s} {len(sel):5d} {statistics.median(errs):7.1%} "
            f"{np.quantile(errs, 0.9):7.1%} {inside / len(sel):8.0%} "
            f"{statistics.median(widths):6.2f}"
        )


def source_agreement(obs, residuals: list[HeldOut]) -> dict[str, tuple[list[float], list[float]]]:
    """How far the data is from agreeing with itself. For every `published` held-out row whose
    device, backend, model and quantisation another source also measured: the error of taking
    the other sources' figure (their geometric mean) as the prediction, beside the model's own
    error on that row. Per kind: (errors of the other sources' figure, errors of the model)."""
    figures: dict[tuple, dict[str, list[float]]] = {}
    for o in obs:
        for kind, value in (("decode", o.tg_tps), ("prefill", o.pp_tps)):
            if value and o.era != "old":
                key = (kind, o.device.id, o.backend, o.shape_id, o.quant)
                figures.setdefault(key, {}).setdefault(o.source_url, []).append(value)
    out: dict[str, tuple[list[float], list[float]]] = {"decode": ([], []), "prefill": ([], [])}
    for h in residuals:
        o = h.obs
        if h.basis != "published" or o.era == "old":
            continue
        sources = figures.get((h.kind, o.device.id, o.backend, o.shape_id, o.quant), {})
        others = [statistics.median(v) for s, v in sources.items() if s != o.source_url]
        if not others or o.source_url not in sources:
            continue
        mine = statistics.median(sources[o.source_url])
        reference = math.exp(statistics.fmean(math.log(v) for v in others))
        out[h.kind][0].append(abs(mine / reference - 1))
        out[h.kind][1].append(abs(math.exp(h.log_error) - 1))
    return out


def print_agreement(obs, residuals: list[HeldOut]) -> None:
    print(
        "\nthe data beside itself: rows another source also measured (same device, backend, "
        "model, quant)\n"
        f"{'':8s} {'rows':>5s} {'other source median / p90':>27s} {'model median / p90':>20s}"
    )
    for kind, (copied, model) in source_agreement(obs, residuals).items():
        if copied:
            print(
                f"{kind:8s} {len(copied):5d} {np.median(copied):15.1%} / "
                f"{np.quantile(copied, 0.9):5.1%} {np.median(model):10.1%} / "
                f"{np.quantile(model, 0.9):5.1%}"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="include results from old builds")
    ap.add_argument("--worst", type=int, default=0, help="list the N rows missed most")
    ap.add_argument(
        "--agreement",
        action="store_true",
        help="compare the model with another source's figure for the same device and model",
    )
    ap.add_argument(
        "--search-prefill",
        action="store_true",
        help="rerun the held-out search for prefill's per-layer cost (speed_model.PREFILL_LAYER_S)",
    )
    ap.add_argument(
        "--search-decode",
        action="store_true",
        help="rerun the held-out searches for decode's per-layer cost and a CPU's arithmetic "
        "share (speed_model.T_LAYER_S, DECODE_FLOP_SHARE)",
    )
    ap.add_argument(
        "--write", action="store_true", help="write resources/data/speed_model_fit.json"
    )
    args = ap.parse_args()
    started = time.perf_counter()
    obs, skipped = load_observations()
    if args.search_prefill:
        chosen = search_prefill_layer(obs)
        print("prefill per-layer cost (ms per 512-token batch), held-out choice: "
              + ", ".join(f"{b} {v * 1e3:g}" for b, v in chosen.items()))  # fmt: skip
        return 0
    if args.search_decode:
        chosen = search_decode_layer(obs)
        print("decode per-layer cost (us per token), held-out choice: "
              + ", ".join(f"{b} {v * 1e6:g}" for b, v in chosen.items()))  # fmt: skip
        print(f"decode arithmetic share (CPU), held-out choice: {search_decode_flop_share(obs)}")
        return 0
    t_layer = dict(T_LAYER_S)
    residuals = held_out(obs, t_layer)
    bands = bands_from(residuals)
    widening = {k: moe_widening(residuals, bands, k) for k in ("decode", "prefill")}
    shown = [h for h in residuals if args.all or h.obs.era != "old"]
    print(
        f"{len(obs)} rows used ({len(skipped)} skipped), {len({o.device.id for o in obs})} devices;"
        f" t_layer (us): " + ", ".join(f"{b} {v * 1e6:.0f}" for b, v in t_layer.items())
    )
    for basis in ("modelled", "published"):
        sel = [h for h in shown if h.basis == basis]
        table(sel, bands, widening, lambda h: h.obs.backend, f"[{basis}] per backend")
        table(
            sel, bands, widening, lambda h: E.efficiency_class(h.obs.device), f"[{basis}] per class"
        )
        table(sel, bands, widening, lambda h: "all", f"[{basis}] pooled")
    if args.worst:
        print(f"\nworst {args.worst}:")
        for h in sorted(shown, key=lambda h: -abs(h.log_error))[: args.worst]:
            o = h.obs
            print(
                f"  {math.exp(h.log_error) - 1:+6.0%} {h.kind:7s} {h.basis:9s} {o.device.id:34s} "
                f"{o.backend:6s} {o.shape_id:16s} {o.quant:9s} {o.source_url[-50:]}"
            )
    if args.agreement:
        print_agreement(obs, residuals)
    if args.write:
        import json

        model = fit_speed_model(obs)
        fit_file().write_text(json.dumps(fit_to_json(model), indent=1) + "\n", encoding="utf-8")
        print(
            f"\nwrote {fit_file()}: transfer {model.transfer}, MoE widening "
            f"{model.moe_widening:.2f} decode, {model.moe_widening_prefill:.2f} prefill, "
            f"attention {model.attention_share}, "
            f"small batches {model.small_batch_cost}"
        )
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
