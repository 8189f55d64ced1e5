#!/usr/bin/env python3
"""How well does the speed model predict devices it has not seen?

Leave one device out: fit the model on every published measurement except one device's,
predict that device, repeat for every device. The band for each prediction comes from a second,
inner leave-one-device-out over the training devices only, so the held-out device never shapes
its own band. Prints the median absolute error of decode and prefill predictions and the share
of measured values inside the predicted band, per backend class and overall.

    python benchmarks/calibration_holdout.py [--verbose]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.core.predict.speed_model import (
    _bands,
    fit,
    load_observations,
    lodo_residuals,
    predict,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--verbose", action="store_true", help="one line per held-out measurement")
    args = ap.parse_args()
    obs = load_observations()
    devices = sorted({o.device.id for o in obs})
    rows = []
    for device_id in devices:
        train = [o for o in obs if o.device.id != device_id]
        test = [o for o in obs if o.device.id == device_id]
        model = fit(train)
        decode_band, prefill_band = _bands(lodo_residuals(train))
        for o in test:
            if not model.calibrated(o.backend):
                continue
            tg, pp = predict(model, o)
            lo, hi = decode_band.get(o.backend, (0.6, 1.3))
            plo, phi = prefill_band.get(o.backend, (0.6, 1.3))
            rows.append(
                {
                    "o": o,
                    "tg": tg,
                    "pp": pp,
                    "tg_err": tg / o.tg_tps - 1,
                    "pp_err": pp / o.pp_tps - 1,
                    "tg_in": tg * lo <= o.tg_tps <= tg * hi,
                    "pp_in": pp * plo <= o.pp_tps <= pp * phi,
                }
            )
    print(
        f"{len(obs)} published measurements, {len(devices)} devices; "
        f"{len(rows)} predicted with their device held out\n"
    )
    print(
        f"{'backend':8} {'n':>4} {'decode MdAPE':>13} {'P90':>8} {'in band':>8} "
        f"{'prefill MdAPE':>14} {'P90':>8} {'in band':>8}"
    )
    for backend in [*sorted({r["o"].backend for r in rows}), "all"]:
        sel = [r for r in rows if backend == "all" or r["o"].backend == backend]
        med_tg = statistics.median(abs(r["tg_err"]) for r in sel)
        med_pp = statistics.median(abs(r["pp_err"]) for r in sel if math.isfinite(r["pp_err"]))
        cov_tg = sum(r["tg_in"] for r in sel) / len(sel)
        cov_pp = sum(r["pp_in"] for r in sel) / len(sel)
        p90_tg = sorted(abs(r["tg_err"]) for r in sel)[int(0.9 * (len(sel) - 1))]
        finite = sorted(abs(r["pp_err"]) for r in sel if math.isfinite(r["pp_err"]))
        p90_pp = finite[int(0.9 * (len(finite) - 1))]
        print(
            f"{backend:8} {len(sel):4d} {med_tg:13.1%} {p90_tg:8.0%} {cov_tg:8.0%} "
            f"{med_pp:14.1%} {p90_pp:8.0%} {cov_pp:8.0%}"
        )
    if args.verbose:
        print()
        for r in rows:
            o = r["o"]
            print(
                f"{o.backend:7} {o.device.name[:30]:30} {o.model[:16]:16} {o.quant:7} "
                f"tg {o.tg_tps:8.1f} pred {r['tg']:8.1f} ({r['tg_err']:+.0%})  "
                f"pp {o.pp_tps:8.0f} pred {r['pp']:8.0f} ({r['pp_err']:+.0%})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
