# Cross-source band coverage per backend. usage: PYTHONPATH=. python xcov.py
import collections
import math
import random

from advisor.core.predict.fitting import bands_fit as B
from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model.bands import shown_band
from advisor.core.predict.model.observations import load_observations

obs, _ = load_observations()
res = held_out(obs)
rows = [h for h in res if B._counted(h)]
sources = sorted({h.obs.source_url for h in rows})
inside = collections.defaultdict(list)
dense = collections.defaultdict(list)
for seed in range(40):
    half = set(random.Random(seed).sample(sources, len(sources) // 2))
    built = [h for h in rows if h.obs.source_url in half]
    bands = B.bands_from(built)
    wid = {k: B.moe_widening(built, bands, k) for k in ("decode", "prefill")}
    for h in rows:
        if h.obs.source_url in half:
            continue
        lo, hi = shown_band(bands, h.kind, h.obs.backend, h.basis, h.obs.moe, wid[h.kind])
        ok = lo <= math.exp(h.log_error) <= hi
        inside[(h.kind, h.basis, h.obs.backend)].append(ok)
        inside[(h.kind, h.basis, "*")].append(ok)
        if not h.obs.moe:
            dense[(h.kind, h.basis, h.obs.backend)].append(ok)
for k in sorted(inside):
    v = inside[k]
    d = dense.get(k, [])
    print(
        k,
        len(v) // 20,
        f"{sum(v) / len(v):.1%}",
        f"dense {sum(d) / max(1, len(d)):.1%}" if d else "",
    )
