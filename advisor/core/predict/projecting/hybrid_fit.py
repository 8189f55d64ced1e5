"""Published results of models placed over a card and system RAM: each row read as a
placement, a host and a test, predicted by the projection, and the three shares the placement
physics leaves open (model/hybrid_shares.py) fitted on them.

The rows (resources/data/llamacpp_hybrid_added.csv, as gathered) and how each is read
(llamacpp_hybrid_reading.csv: the shape and quantisation, the placement in llama.cpp's terms,
the host's RAM and link, the test, or why a row is not used) are kept apart from the
single-device calibration: none of them enters the speed model's fit. The shares are fitted
through the projection itself (each row projected with its placement, host and test), so
this fit sits with the projection, not with the single-device fitting below it.

The fit is small on purpose: the physics fixes everything but what share of a host's RAM
bandwidth the CPU backend streams beside a card (measured, or rated) and what share of the
link's rate a prompt's copies reach. Each is the value, on a grid of 0.01, that minimises the
median absolute log error of its rows; `leave_one_source_out` refits without each source in
turn and predicts that source's rows.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.catalogue.device import Device
from advisor.core.hardware.profile import DEFAULT_RAM_BANDWIDTH_BYTES_PER_S, Host
from advisor.core.infra.paths import bundled
from advisor.core.infra.units import GiB
from advisor.core.model.facts import ModelFacts, facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.workloads import Workload, custom_workload
from advisor.core.predict.model.hybrid_shares import HybridShares
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.physics.placement import Placement
from advisor.core.predict.projecting.projection import Target, project

ASSUMED_RAM_GB = 2048  # a row that ran but does not state its RAM: room enough (it ran)
GRID = [round(0.20 + 0.01 * i, 2) for i in range(81)]  # 0.20 .. 1.00


@dataclass(frozen=True)
class HybridRow:
    """One published hybrid result, read as the projection's inputs."""

    row: int
    source_url: str
    confidence: str
    device: Device
    cards: int
    facts: ModelFacts
    placement: Placement
    host: Host
    ubatch: int
    n_prompt: int
    n_gen: int
    depth: int
    cache_type: str
    tg_tps: float | None
    pp_tps: float | None
    reading: str


@dataclass(frozen=True)
class Predicted:
    row: HybridRow
    kind: str  # decode | prefill
    measured: float
    predicted: float | None
    # the projection's memory estimate said the placement does not fit the card, though it
    # ran: the speed is the one it predicts for a card with room enough
    fit_missed: bool = False

    @property
    def log_error(self) -> float:
        return math.log(self.measured / self.predicted) if self.predicted else math.nan


def data_paths() -> tuple[Path, Path]:
    folder = bundled("resources") / "data"
    return folder / "llamacpp_hybrid_added.csv", folder / "llamacpp_hybrid_reading.csv"


def load_hybrid_rows(
    catalogue: Catalogue | None = None,
) -> tuple[list[HybridRow], list[tuple[int, str]]]:
    """The rows read as projections' inputs, and the rows not used with the reason."""
    catalogue = catalogue or load_catalogue()
    added_path, reading_path = data_paths()
    with open(added_path, encoding="utf-8") as fh:
        added = list(csv.DictReader(fh))
    with open(reading_path, encoding="utf-8") as fh:
        readings = list(csv.DictReader(fh))
    rows: list[HybridRow] = []
    unused: list[tuple[int, str]] = []
    for r in readings:
        index = int(r["row"])
        if r["use"] != "yes":
            unused.append((index, r["reading"]))
            continue
        a = added[index]
        device = catalogue.by_id(r["device"])
        if device is None:
            raise ValueError(f"hybrid row {index}: no catalogue record {r['device']}")
        basis = r["ram_basis"]
        bandwidth = float(r["ram_gbs"]) * 1e9 if r["ram_gbs"] else DEFAULT_RAM_BANDWIDTH_BYTES_PER_S
        host = Host(
            float(r["ram_gb"] or ASSUMED_RAM_GB) * GiB, bandwidth, bandwidth_basis=basis,
            pcie_gen=int(r["pcie_gen"]) if r["pcie_gen"] else None,
            pcie_lanes=int(r["pcie_lanes"]) if r["pcie_lanes"] else None,
        )  # fmt: skip
        rows.append(
            HybridRow(
                index, a["source_url"], a["confidence"], device, int(r["cards"]),
                facts_from_shape(get_shape(r["shape"]), r["quant"]),
                Placement(int(r["gpu_layers"]), int(r["cpu_moe"])), host, int(r["ubatch"]),
                int(r["n_prompt"]), int(r["n_gen"]), int(r["depth"]), r["cache_type"],
                _speed(a["tg_tps"]) if int(r["n_gen"]) else None,
                _speed(a["pp_tps"]) if int(r["n_prompt"]) else None, r["reading"],
            )
        )  # fmt: skip
    return rows, unused


def _speed(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 and math.isfinite(value) else None


def predict(rows: Sequence[HybridRow], model: SpeedModel) -> list[Predicted]:
    """Each row's decode and prefill as the projection predicts them for its placement, host
    and test (a card's own memory the largest it comes with: the row ran)."""
    out: list[Predicted] = []
    for r in rows:
        if r.tg_tps:
            w = custom_workload(0, r.n_gen, history_tokens=r.depth)
            speed, missed = _projected(r, w, model, "decode_tps")
            out.append(Predicted(r, "decode", r.tg_tps, speed, missed))
        if r.pp_tps:
            w = custom_workload(r.n_prompt, 1, history_tokens=r.depth)
            speed, missed = _projected(r, w, model, "prefill_tps")
            out.append(Predicted(r, "prefill", r.pp_tps, speed, missed))
    return out


def _projected(
    r: HybridRow, w: Workload, model: SpeedModel, what: str
) -> tuple[float | None, bool]:
    """The projection's speed for the row, and whether its memory estimate missed."""
    memory = max(r.device.memory_sizes_gb)
    for device, missed in (
        (r.device, False),
        (replace(r.device, memory_sizes_gb=(4 * memory,)), True),
    ):
        target = Target(device, count=r.cards, memory_gb=max(device.memory_sizes_gb),
                        placement=r.placement, ubatch=r.ubatch)  # fmt: skip
        p = project(r.facts, target, w, host=r.host, model=model, cache_type=r.cache_type)
        if p.fits != "no":
            return getattr(p, what), missed
    return None, True


# what each share is fitted on
def _measured_ram(p: Predicted) -> bool:
    return p.kind == "decode" and p.row.host.bandwidth_basis == "measured"


def _rated_ram(p: Predicted) -> bool:
    return p.kind == "decode" and p.row.host.bandwidth_basis == "rated"


def _link(p: Predicted) -> bool:
    return p.kind == "prefill"


SHARES: dict[str, Callable[[Predicted], bool]] = {
    "measured_ram": _measured_ram,
    "rated_ram": _rated_ram,
    "link": _link,
}


def fit_shares(rows: Sequence[HybridRow], model: SpeedModel) -> HybridShares:
    """Each share: the grid value with the smallest median absolute log error on its rows
    (the model's own where no row speaks to it)."""
    shares = model.hybrid
    for name, picks in SHARES.items():
        which = [r for r in rows if any(picks(p) for p in _kinds(r))]
        if not which:
            continue

        def score(
            value: float,
            name: str = name,
            which: list[HybridRow] = which,
            shares: HybridShares = shares,
        ) -> float:
            m = replace(model, hybrid=replace(shares, **{name: value}))
            errors = [abs(p.log_error) for p in predict(which, m) if SHARES[name](p)]
            return statistics.median(e for e in errors if math.isfinite(e))

        best = min(GRID, key=lambda v: (round(score(v), 9), v))
        shares = replace(shares, **{name: best})
    return shares


def _kinds(r: HybridRow) -> list[Predicted]:
    """Stand-ins saying which kinds a row has (for choosing the rows a share is fitted on)."""
    out = []
    if r.tg_tps:
        out.append(Predicted(r, "decode", r.tg_tps, None))
    if r.pp_tps:
        out.append(Predicted(r, "prefill", r.pp_tps, None))
    return out


def leave_one_source_out(rows: Sequence[HybridRow], model: SpeedModel) -> list[Predicted]:
    """Every row predicted with shares fitted on the other sources' rows alone."""
    out: list[Predicted] = []
    for source in sorted({r.source_url for r in rows}):
        train = [r for r in rows if r.source_url != source]
        test = [r for r in rows if r.source_url == source]
        shares = fit_shares(train, model)
        out += predict(test, replace(model, hybrid=shares))
    return out
