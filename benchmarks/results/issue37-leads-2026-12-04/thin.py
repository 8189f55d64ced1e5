# Lead 2. usage: PYTHONPATH=. python thin.py
import collections
import math
import statistics

from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model.observations import load_observations

obs, _ = load_observations()
src = collections.defaultdict(set)
nrows = collections.Counter()
for o in obs:
    src[(o.device.id, o.backend)].add(o.source_url)
    nrows[(o.device.id, o.backend)] += 1
res = [h for h in held_out(obs) if h.obs.era != "old" and h.basis == "published"]


def q(a, p):
    a = sorted(a)
    return a[min(len(a) - 1, int(p * len(a)))]


for kind in ("decode", "prefill"):
    for be in ("all", "cuda"):
        g = collections.defaultdict(list)
        for h in res:
            if h.kind != kind or (be != "all" and h.obs.backend != be):
                continue
            k = (h.obs.device.id, h.obs.backend)
            others = len(src[k]) - 1
            g["1 other" if others == 1 else "2 others" if others == 2 else "3+ others"].append(
                abs(h.log_error)
            )
        for k in sorted(g):
            a = g[k]
            print(
                kind,
                be,
                k,
                len(a),
                f"med {math.exp(statistics.median(a)) - 1:.1%} p86 {math.exp(q(a, 0.86)) - 1:.1%}",
            )
