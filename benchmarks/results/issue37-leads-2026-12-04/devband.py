# Lead 3. usage: PYTHONPATH=. python devband.py
import collections
import math
import random
import statistics

from advisor.core.predict.fitting import bands_fit as B
from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model.bands import shown_band
from advisor.core.predict.model.observations import load_observations

obs, _ = load_observations()
res = held_out(obs)
rows = [h for h in res if B._counted(h)]
sources = sorted({h.obs.source_url for h in rows})


def run(variant):
    inside = collections.defaultdict(list)
    width = collections.defaultdict(list)
    for seed in range(40):
        half = set(random.Random(seed).sample(sources, len(sources) // 2))
        built = [h for h in rows if h.obs.source_url in half]
        bands = B.bands_from(built)
        wid = {k: B.moe_widening(built, bands, k) for k in ("decode", "prefill")}
        own = collections.defaultdict(list)
        for h in built:
            own[(h.kind, h.basis, h.obs.device.id, h.obs.backend, h.obs.moe)].append(
                abs(h.log_error)
            )
        for h in rows:
            if h.obs.source_url in half:
                continue
            lo, hi = shown_band(bands, h.kind, h.obs.backend, h.basis, h.obs.moe, wid[h.kind])
            e = own.get((h.kind, h.basis, h.obs.device.id, h.obs.backend, h.obs.moe), [])
            if variant and h.basis == "published" and len(e) >= variant[0]:
                x = {
                    "max": max(e),
                    "med": statistics.median(e),
                    "q": sorted(e)[int(0.86 * len(e))],
                }[variant[1]]
                lo, hi = min(lo, math.exp(-x)), max(hi, math.exp(x))
            ok = lo <= math.exp(h.log_error) <= hi
            for key in ((h.kind, h.basis, h.obs.backend), (h.kind, h.basis, "*")):
                inside[key].append(ok)
                width[key].append(hi / lo)
    return inside, width


base = None
for v in [None, (1, "max"), (2, "max"), (2, "med"), (3, "q")]:
    ins, wd = run(v)
    print(
        v,
        "  ".join(
            f"{k[0][:3]}/{k[2]} {sum(x) / len(x):.1%} w{statistics.median(wd[k]):.2f}"
            for k, x in sorted(ins.items())
            if k[1] == "published" and k[2] in ("*", "cuda", "vulkan", "rocm", "metal")
        ),
    )
