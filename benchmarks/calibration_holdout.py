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
import csv
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.predict.fitting.bands_fit import cross_source_coverage
from advisor.core.predict.fitting.consistency import scaling_fits, suspects
from advisor.core.predict.fitting.holdout import HeldOut
from advisor.core.predict.fitting.shipped import data_summary, fit_file, fit_to_json
from advisor.core.predict.fitting.speed_fit import (
    fit_with_residuals,
    search_decode_flop_share,
    search_decode_layer,
    search_old_weight,
    search_prefill_layer,
)
from advisor.core.predict.fitting.summary import Line, summarise
from advisor.core.predict.model.observations import (
    data_files,
    load_observations,
    observations_from_rows,
)
from benchmarks.kept_aside import _p90, check, kept_aside
from benchmarks.model_card import (
    render_card,
    render_readme_section,
    replace_readme_section,
    seed_and_many_users,
)

ROOT = Path(__file__).resolve().parents[1]
CARD = ROOT / "docs" / "MODEL.md"
README = ROOT / "README.md"


def table(lines: list[Line], title: str) -> None:
    """Per group: rows, median and p90 error, the signed median, the share inside the band the
    app would show (a mixture of experts' widened) and the median band width."""
    print(f"\n{title}")
    print(
        f"{'':24s} {'kind':8s} {'rows':>5s} {'median':>7s} {'p90':>7s} {'signed':>7s} "
        f"{'in band':>8s} {'hi/lo':>6s}"
    )
    for ln in lines:
        print(
            f"{ln.group:24s} {ln.kind:8s} {ln.rows:5d} {ln.median:7.1%} {ln.p90:7.1%} "
            f"{ln.signed:+7.1%} {ln.in_band:8.0%} {ln.width:6.2f}"
        )


def signed_median(rows: list[HeldOut]) -> float:
    """Measured / predicted - 1 at the median: + where the model is low, - where high."""
    return math.exp(statistics.median(h.log_error for h in rows)) - 1


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


def checks(model, obs, residuals: list[HeldOut]) -> dict:
    """What the README quotes beside the held-out table, computed now: the seed article's
    figures and 32 users, the bands on sources they were not built from, the data against
    itself, and the kept-aside check."""
    agreement = source_agreement(obs, residuals)
    kept, _ = kept_aside()
    checked = [c for c in check(kept, model=model) if c.obs.era != "old" and not c.host_limited]

    def of(kind: str) -> list:
        return [c for c in checked if c.kind == kind]

    def r(x: float) -> float:
        return round(float(x), 4)

    return {
        "seed": seed_and_many_users(model),
        "bands_across_sources": {f"{kind}_{basis}": r(share) for (kind, basis), share
                                 in cross_source_coverage(residuals).items()},
        "agreement": {
            f"{kind}_{who}": r(np.median(values[i]))
            for kind, values in agreement.items() for i, who in ((0, "other"), (1, "model"))
        } | {f"{kind}_rows": len(values[0]) for kind, values in agreement.items()},
        "kept_aside": {
            "decode_rows": len(of("decode")),
            "decode_median": r(statistics.median(c.error for c in of("decode"))),
            "decode_p90": r(_p90([c.error for c in of("decode")])),
            "decode_in_band": r(sum(c.inside for c in of("decode")) / len(of("decode"))),
            "prefill_rows": len(of("prefill")),
            "prefill_median": r(statistics.median(c.error for c in of("prefill"))),
        },
    }  # fmt: skip


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
        help="rerun the held-out search for prefill's per-layer cost (shares.PREFILL_LAYER_S)",
    )
    ap.add_argument(
        "--search-decode",
        action="store_true",
        help="rerun the held-out searches for decode's per-layer cost and a CPU's arithmetic "
        "share (speed_model.T_LAYER_S, DECODE_FLOP_SHARE)",
    )
    ap.add_argument(
        "--consistency",
        action="store_true",
        help="list the sources whose decode does not scale as the physics says (set aside by hand)",
    )
    ap.add_argument(
        "--write", action="store_true", help="write resources/data/speed_model_fit.json"
    )
    args = ap.parse_args()
    started = time.perf_counter()
    obs, skipped = load_observations()
    if args.search_prefill:
        chosen = search_prefill_layer(obs)
        print("prefill per-layer cost, held-out choice (ms per micro-batch, speed exponent, "
              "MoE factor): "
              + ", ".join(f"{b} {c.seconds * 1e3:g}/{c.speed_exponent:g}/{c.moe_factor:g}"
                          for b, c in chosen.items()))  # fmt: skip
        return 0
    if args.consistency:  # every row, those already set aside by hand included
        every = []
        for path, reference in data_files():
            with open(path, encoding="utf-8") as fh:
                rows = [{**r, "exclude": ""} for r in csv.DictReader(fh)]
            every += observations_from_rows(rows, load_catalogue(), reference)[0]
        for fit, reason in suspects(scaling_fits(every)):
            print(f"{fit.backend:6s} {fit.device_id:32s} {fit.rows:3d} rows: {reason}  "
                  f"{fit.source_url}")  # fmt: skip
        return 0
    if args.search_decode:
        chosen = search_decode_layer(obs)
        print("decode per-layer cost, held-out choice (us at 30 TFLOPS, speed exponent, MoE "
              "factor): " + ", ".join(f"{b} {c.seconds * 1e6:g}/{c.speed_exponent:g}/"
                                      f"{c.moe_factor:g}" for b, c in chosen.items()))  # fmt: skip
        print(f"decode arithmetic share (CPU), held-out choice: {search_decode_flop_share(obs)}")
        print(f"an old build's row counts, held-out choice: {search_old_weight(obs)}")
        return 0
    model, residuals = fit_with_residuals(obs)
    widening = {"decode": model.moe_widening, "prefill": model.moe_widening_prefill}
    lines = summarise(residuals, model.bands, widening, old=args.all)
    shown = [h for h in residuals if args.all or h.obs.era != "old"]
    costs = ", ".join(
        f"{b} {c.seconds * 1e6:.0f}/{c.speed_exponent:g}/{c.moe_factor:g}"
        for b, c in model.decode_fit.t_layer.items()
    )
    print(
        f"{len(obs)} rows used ({len(skipped)} skipped), {len({o.device.id for o in obs})} devices;"
        f" t_layer (us at 30 TFLOPS / speed exponent / MoE factor): {costs}"
    )
    for basis in ("modelled", "published"):
        for grouping, title in (("backend", "per backend"), ("class", "per class"),
                                ("era", "per build era"), ("all", "pooled")):  # fmt: skip
            sel = [ln for ln in lines if ln.basis == basis and ln.grouping == grouping]
            table(sel, f"[{basis}] {title}")
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
        saved = {**fit_to_json(model), "held_out": [ln.to_json() for ln in summarise(
            residuals, model.bands, widening)], "data": data_summary(obs, skipped),
            "checks": checks(model, obs, residuals)}  # fmt: skip
        fit_file().write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
        CARD.write_text(render_card(model, saved), encoding="utf-8")
        readme = README.read_text(encoding="utf-8")
        README.write_text(replace_readme_section(readme, render_readme_section(saved)),
                          encoding="utf-8")  # fmt: skip
        print(
            f"\nwrote {fit_file()}, {CARD} and the README's accuracy section: transfer "
            f"{model.transfer}, MoE widening {model.moe_widening:.2f} decode, "
            f"{model.moe_widening_prefill:.2f} prefill, attention {model.attention_share}, "
            f"small batches {model.small_batch_cost}"
        )
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
