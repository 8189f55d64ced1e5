"""Held-out errors: every published row predicted by a fit that never saw it. What the bands
and the basis labels rest on, and what `benchmarks/calibration_holdout.py` reports.

Each device is left out in turn (what a `modelled` prediction is worth), and each source of a
device that several sources measured (what a `published` one is worth).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.core.predict.fitting.shares import fit_decode, fit_prefill
from advisor.core.predict.model.observations import Observation
from advisor.core.predict.model.speed_model import LayerCost, PrefillFit


@dataclass(frozen=True)
class HeldOut:
    """One held-out prediction: the observation, what was predicted without it, and how."""

    obs: Observation
    kind: str  # decode | prefill
    predicted: float
    basis: str  # modelled (the device left out) | published (one source of it left out)

    @property
    def log_error(self) -> float:
        measured = self.obs.tg_tps if self.kind == "decode" else self.obs.pp_tps
        return math.log((measured or math.nan) / self.predicted)


def held_out(
    obs: Sequence[Observation],
    t_layer: dict[str, LayerCost] | None = None,
    prefill_layer_s: dict[str, LayerCost] | None = None,
    kinds: tuple[str, ...] = ("decode", "prefill"),
    backend: str | None = None,
    flop_share: dict[str, float] | None = None,
    old_weight: float | None = None,
) -> list[HeldOut]:
    """Every row predicted by a fit that never saw it: each device left out in turn
    (`modelled`), and each source of a device with several sources left out (`published`);
    only one backend's rows where `backend` is given (the others are still fitted on)."""
    out: list[HeldOut] = []
    groups: dict[str, Callable[[Observation], str]] = {
        "modelled": lambda o: o.device.id,
        "published": lambda o: f"{o.device.id}|{o.backend}|{o.source_url}",
    }
    for basis, group_of in groups.items():
        for group in sorted({group_of(o) for o in obs}):
            test = [o for o in obs if group_of(o) == group
                    and (backend is None or o.backend == backend)]  # fmt: skip
            train = [o for o in obs if group_of(o) != group]
            if basis == "published":
                kept = {(o.device.id, o.backend) for o in train}
                test = [o for o in test if (o.device.id, o.backend) in kept]
            if not test:
                continue
            if "decode" in kinds:
                decode = fit_decode(train, t_layer=t_layer, flop_share=flop_share,
                                    old_weight=old_weight)  # fmt: skip
                out += [HeldOut(o, "decode", decode.tps(o), basis) for o in test if o.tg_tps]
            if "prefill" in kinds:
                prefill = fit_prefill(train, layer_s=prefill_layer_s, old_weight=old_weight)
                for o in test:
                    pp = _prefill_tps(prefill, o)
                    if o.pp_tps and pp:
                        out.append(HeldOut(o, "prefill", pp, basis))
    return out


def _prefill_tps(fit: PrefillFit, o: Observation) -> float | None:
    return fit.tps(o.device, o.backend, o.facts, o.prefill_test)
