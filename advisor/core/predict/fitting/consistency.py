"""Does a source's decode scale the way the physics says it must?

Decode time per token is bytes / (bandwidth x share) plus a fixed cost per layer, so one
source's rows on one device, across models of several sizes, lie on a line in (bytes, layers)
with a positive per-layer cost. A source whose rows show none (or a negative one) measured
something else. And a device streams its memory at about the share its class does: a source
whose every model reads at half that (a throttled machine) measured the machine's state, not
the chip. `scaling_fits` fits the line per device, backend and source; `suspects` names the
groups whose per-layer cost is negative or whose share is below SUSPECT_SHARE_RATIO of the
median of the same class's other groups. A row is set aside only by hand, in the data's
`exclude` column with the reason, after reading the source again.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from advisor.core.predict.model.efficiency import efficiency_class
from advisor.core.predict.model.observations import Observation

MIN_ROWS = 3  # a line through fewer rows says nothing of its slope
MIN_SIZES = 3  # and its rows must span this many step sizes (bytes per token)
# a group streaming less than this share of what its class's other sources stream is suspect
SUSPECT_SHARE_RATIO = 0.6


@dataclass(frozen=True)
class ScalingFit:
    """One source's decode rows on one device, fitted as 1/tps = bytes/(bw x share) + t x layers."""

    device_id: str
    backend: str
    source_url: str
    efficiency_class: str
    rows: int
    share: float
    layer_s: float


def scaling_fits(obs: Sequence[Observation]) -> list[ScalingFit]:
    """The line of every device/backend/source group with enough dense decode rows over
    enough model sizes."""
    groups: dict[tuple[str, str, str], list[Observation]] = {}
    for o in obs:
        if o.tg_tps and not o.moe and o.backend != "cpu":
            groups.setdefault((o.device.id, o.backend, o.source_url), []).append(o)
    out = []
    for (device_id, backend, source), rows in sorted(groups.items()):
        sizes = {round(o.decode_bytes / 1e9, 1) for o in rows}
        if len(rows) < MIN_ROWS or len(sizes) < MIN_SIZES:
            continue
        x = np.array([[o.decode_bytes / o.device.bandwidth_bytes_per_s, o.facts.n_layers]
                      for o in rows])  # fmt: skip
        y = np.array([1.0 / o.tg_tps for o in rows if o.tg_tps])
        (a, b), *_ = np.linalg.lstsq(x, y, rcond=None)
        cls = efficiency_class(rows[0].device)
        out.append(ScalingFit(device_id, backend, source, cls, len(rows), float(1 / a), float(b)))
    return out


def suspects(fits: Sequence[ScalingFit]) -> list[tuple[ScalingFit, str]]:
    """The groups that do not scale as the physics says, with the reason in words."""
    out = []
    for f in fits:
        others = [g.share for g in fits if g.efficiency_class == f.efficiency_class
                  and g.device_id != f.device_id]  # fmt: skip
        typical = statistics.median(others) if others else None
        if f.layer_s < 0:
            out.append((f, f"negative per-layer cost ({f.layer_s * 1e6:.0f} us)"))
        elif typical and f.share < SUSPECT_SHARE_RATIO * typical:
            out.append((f, f"streams {f.share:.2f} of its bandwidth on every model, its "
                           f"class's other sources {typical:.2f}"))  # fmt: skip
    return out
