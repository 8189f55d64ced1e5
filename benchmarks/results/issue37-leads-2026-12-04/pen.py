# Lead 1. Needs a two-line change that is not shipped: in speed_model.decode_covariates the
# term moe:{device} gets the penalty kind "moe_device", and shares.DECODE_PENALTIES a
# "moe_device": 2.0 entry. usage: PYTHONPATH=. python pen.py 2 1 0.5 0.25 0.1
import math
import statistics
import sys

from advisor.core.predict.fitting import shares
from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model.observations import load_observations

obs, _ = load_observations()


def pct(v):
    return math.exp(v) - 1


for val in [float(x) for x in sys.argv[1:]]:
    shares.DECODE_PENALTIES["moe_device"] = val
    res = [h for h in held_out(obs, kinds=("decode",)) if h.obs.era != "old"]
    out = []
    for basis in ("published", "modelled"):
        r = [h for h in res if h.basis == basis]
        a = sorted(abs(h.log_error) for h in r)
        out.append(
            f"{basis[:3]} n{len(r)} med {pct(statistics.median(a)):.2%} "
            f"mean {statistics.mean(a):.4f} p90 {pct(a[int(0.9 * len(a))]):.1%}"
        )
        for sub in ("dense", "moe"):
            rr = [abs(h.log_error) for h in r if h.obs.moe == (sub == "moe")]
            out.append(f"{sub} {pct(statistics.median(rr)):.1%}/{statistics.mean(rr):.4f}")
    g = [
        h.log_error
        for h in res
        if h.basis == "published" and "gb10" in h.obs.device.id and not h.obs.moe
    ]
    print(val, " | ".join(out), "gb10 dense pub", [f"{pct(x):+.0%}" for x in g], flush=True)
