"""The speed model checked on published results it was never fitted on, as the app shows them.

Issue 14 keeps two sources aside to check the model independently: the issues of
geerlingguy/ai-benchmarks and of brand-o/normiebench (the few rows of theirs that the reference
set already held stay there; every other row is here). Their rows live in
`benchmarks/kept_aside/*.csv`, outside the package: nothing installed reads them, and
`tests/core/test_kept_aside.py` fails if a shipped data file cites one of their threads.

Each row is projected the way `advisor project --json` would project it for a user (the shipped
fit, one card, llama-bench's conditions: tg128 from an empty cache, pp512), with the band and
the basis label the app would show. Printed: median and 90th-percentile error, decode and
prefill, per backend and per basis, the share inside the band, and the median band width; and
for pairs measured by the same hands (one source, one model file, one backend, two devices),
the error of device B's decode predicted from device A's run.

    python benchmarks/kept_aside.py            # the table
    python benchmarks/kept_aside.py --rows     # every row: measured, predicted, band, basis
    python benchmarks/kept_aside.py --set issue-37   # issue 37's sources, with its acceptance lines

Each row is compared at its own test point (`tg128 @ d4096` at that depth, pp2048 at 2048).

This is a check, not a fit: nothing here feeds the shipped model, and a change to the model is
chosen by the held-out table of `calibration_holdout.py` (shipped rows only), then measured here.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.predict.conditions.workloads import Workload, custom_workload
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.model import speed_model
from advisor.core.predict.model.efficiency import efficiency_class
from advisor.core.predict.model.observations import Observation, Skipped, observations_from_rows
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.predict.projecting.projection import Target, project
from advisor.core.predict.projecting.reference import Reference

FOLDER = Path(__file__).resolve().parent / "kept_aside"
# the sets: issue 14's two sources (the folder's own files), and the sources issue 37 names
SETS = {"issue-14": FOLDER, "issue-37": FOLDER / "issue-37"}
HOST = Host(256 * GiB, 100e9)  # a host that never limits a card
DECODE = custom_workload(0, 128)  # tg128 from an empty cache
NEW_BUILDS = "2025-06"  # issue 37's "current builds"


@dataclass(frozen=True)
class Kept:
    """A kept-aside row, and whether its card sat in a host that limits it (a Raspberry Pi's
    single PCIe lane and small CPU, a RISC-V board): the app predicts a card in a desktop, so
    those are reported apart."""

    obs: Observation
    host_limited: bool


def kept_aside(folder: Path = FOLDER) -> tuple[list[Kept], list[Skipped]]:
    """The kept-aside rows of one set: each names its catalogue record (`catalogue_id`); a row
    without one is skipped, never resolved by its name."""
    catalogue = load_catalogue()
    kept: list[Kept] = []
    skipped: list[Skipped] = []
    for path in sorted(folder.glob("*.csv")):
        with open(path, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            if not (row.get("catalogue_id") or "").strip():
                skipped.append(Skipped(row.get("source_url", ""), row.get("device", ""),
                                       "no catalogue record named"))  # fmt: skip
        pinned = [r for r in rows if (r.get("catalogue_id") or "").strip()]
        for r in pinned:
            used, dropped = observations_from_rows([r], catalogue)
            limited = bool((r.get("host_limited") or "").strip())
            kept += [Kept(o, limited) for o in used]
            skipped += dropped
    return kept, skipped


@dataclass(frozen=True)
class Checked:
    obs: Observation
    kind: str  # decode | prefill
    predicted: float
    low: float
    high: float
    basis: str
    host_limited: bool

    @property
    def measured(self) -> float:
        value = self.obs.tg_tps if self.kind == "decode" else self.obs.pp_tps
        assert value is not None
        return value

    @property
    def error(self) -> float:
        return abs(self.measured / self.predicted - 1)

    @property
    def inside(self) -> bool:
        return self.low <= self.measured <= self.high

    @property
    def stated_build(self) -> bool:
        return bool(self.obs.build) and self.obs.build.lower() != "not stated"


@contextmanager
def predicting_at(date: str) -> Iterator[None]:
    """The shipped model predicting the llama.cpp of `date` (its build-date term), not today's:
    how much of a miss is the builds' progress since the row was measured."""
    saved = speed_model.PREDICT_AT
    speed_model.PREDICT_AT = date
    try:
        yield
    finally:
        speed_model.PREDICT_AT = saved


def check(
    rows: list[Kept], at_row_date: bool = False, model: SpeedModel | None = None
) -> list[Checked]:
    """Each row projected as `advisor project --json` would (the shipped model unless one is
    given), decode and prefill."""
    model = model or load_speed_model()
    if at_row_date:
        out = []
        for k in rows:
            with predicting_at(k.obs.date[:7] if k.obs.date else speed_model.PREDICT_AT):
                out += check([k], model=model)
        return out
    out = []
    for k in rows:
        o = k.obs
        target = Target(o.device, backend=o.backend)
        for kind, workload, measured in (("decode", _decode_workload(o), o.tg_tps),
                                         ("prefill", _prefill_workload(o), o.pp_tps)):  # fmt: skip
            if not measured:
                continue
            p = project(o.facts, target, workload, host=HOST, model=model)
            if kind == "decode":
                figures = (p.decode_tps, p.decode_tps_low, p.decode_tps_high, p.decode_basis)
            else:
                figures = (p.prefill_tps, p.prefill_tps_low, p.prefill_tps_high, p.prefill_basis)
            tps, low, high, basis = figures
            if tps and low and high:
                out.append(Checked(o, kind, tps, low, high, basis, k.host_limited))
    return out


def _decode_workload(o: Observation) -> Workload:
    """The row's own decode test (tg128, `tg128 @ d4096`) as a workload."""
    t = o.decode_test
    return custom_workload(0, t.generated_tokens, history_tokens=t.depth)


def _prefill_workload(o: Observation) -> Workload:
    """The row's own prefill test (pp512, `pp2048 @ d4096`) as a workload."""
    t = o.prefill_test
    return custom_workload(t.prompt_tokens, 1, history_tokens=t.depth)


def transferred(rows: list[Kept]) -> list[float]:
    """Decode error on device B predicted from device A's run: both measured by one source,
    with one model file, on one backend, in desktop hosts."""
    errors = []
    groups: dict[tuple[str, str, str, str], list[Observation]] = {}
    for k in rows:
        o = k.obs
        if o.tg_tps and o.era != "old" and not k.host_limited:
            groups.setdefault((o.source_url, o.shape_id, o.quant, o.backend), []).append(o)
    for group in groups.values():
        for a in group:
            ref = Reference(a.device, a.backend, tg_tps=a.tg_tps, pp_tps=a.pp_tps, facts=a.facts)
            for b in group:
                if b.device.id == a.device.id:
                    continue
                p = project(b.facts, Target(b.device, backend=b.backend), DECODE, host=HOST,
                            reference=ref, model=load_speed_model())  # fmt: skip
                if p.decode_tps and b.tg_tps:
                    errors.append(abs(b.tg_tps / p.decode_tps - 1))
    return errors


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def line(label: str, rows: list[Checked]) -> str:
    """One group: rows, median and p90 error, the signed median (measured / predicted - 1: +
    where the model is low), the share inside the band and the band's median width."""
    if not rows:
        return f"{label:34s} {0:5d}"
    errors = [r.error for r in rows]
    signed = statistics.median(r.measured / r.predicted - 1 for r in rows)
    inside = sum(r.inside for r in rows) / len(rows)
    width = statistics.median(r.high / r.low for r in rows)
    return (
        f"{label:34s} {len(rows):5d} {statistics.median(errors):7.1%} {_p90(errors):7.1%} "
        f"{signed:+7.1%} {inside:8.0%} {width:6.2f}"
    )


HEADER = f"{'':34s} {'rows':>5s} {'median':>7s} {'p90':>7s} {'signed':>7s} {'in band':>8s} " + (
    f"{'hi/lo':>6s}"
)


def new_build(c: Checked) -> bool:
    """Measured on a 2025-06 or later llama.cpp (issue 37's current builds)."""
    return c.obs.era != "old" and bool(c.obs.date) and c.obs.date[:7] >= NEW_BUILDS


def acceptance(checked: list[Checked]) -> None:
    """Issue 37's acceptance lines on these rows: decode of GeForce and RTX PRO cards on
    2025-06+ builds and of Apple chips, signed per class; CUDA prefill on those builds; band
    coverage on CUDA and Metal and the decode band's width."""
    rows = [c for c in checked if not c.host_limited and c.obs.era != "old"]
    decode = [c for c in rows if c.kind == "decode"]
    nv = [c for c in decode if efficiency_class(c.obs.device) in ("geforce", "nv-workstation")
          and new_build(c)]  # fmt: skip
    apple = [c for c in decode if efficiency_class(c.obs.device).startswith("apple-")]
    print("\nissue 37's acceptance lines (current builds; host-limited rows apart)")
    print(HEADER)
    print(line("decode GeForce+RTX PRO 2025-06+, Apple", nv + apple))
    for cls in sorted({efficiency_class(c.obs.device) for c in nv + apple}):
        print(line(f"  class {cls}", [c for c in nv + apple
                                       if efficiency_class(c.obs.device) == cls]))  # fmt: skip
    for device in sorted({c.obs.device.name for c in nv + apple}):
        print(line(f"    {device}", [c for c in nv + apple if c.obs.device.name == device]))
    cuda_pp = [c for c in rows if c.kind == "prefill" and c.obs.backend == "cuda" and new_build(c)]
    print(line("prefill CUDA 2025-06+", cuda_pp))
    for backend in ("cuda", "metal"):
        for kind in ("decode", "prefill"):
            sel = [c for c in rows if c.kind == kind and c.obs.backend == backend]
            print(line(f"{kind} {backend} (band coverage)", sel))
    print(line("decode, every backend (band width)", decode))


def report(checked: list[Checked]) -> None:
    current = [c for c in checked if c.obs.era != "old"]
    print("\n" + HEADER)
    for kind in ("decode", "prefill"):
        limited = [c for c in current if c.kind == kind and c.host_limited]
        rows = [c for c in current if c.kind == kind and not c.host_limited]
        print(f"\n{kind} (current builds)")
        print(line("every row", rows + limited))
        print(line("host-limited (apart)", limited))
        print(line("all others", rows))
        print("  of which:")
        print(line("build stated", [c for c in rows if c.stated_build]))
        for basis in sorted({c.basis for c in rows}):
            print(line(f"basis {basis}", [c for c in rows if c.basis == basis]))
        for backend in sorted({c.obs.backend for c in rows}):
            print(line(f"backend {backend}", [c for c in rows if c.obs.backend == backend]))
        for moe in (False, True):
            print(line("MoE" if moe else "dense", [c for c in rows if c.obs.moe == moe]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="print every row")
    ap.add_argument("--set", choices=sorted(SETS), default="issue-14",
                    help="which kept-aside sources (default: issue 14's)")  # fmt: skip
    args = ap.parse_args()
    kept, skipped = kept_aside(SETS[args.set])
    obs = [k.obs for k in kept]
    print(f"{len(obs)} kept-aside rows used from {len({o.source_url for o in obs})} threads, "
          f"{len({o.device.id for o in obs})} devices; {len(skipped)} skipped")  # fmt: skip
    reasons: dict[str, int] = {}
    for s in skipped:
        reasons[s.reason] = reasons.get(s.reason, 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  skipped {n:3d}: {reason}")
    checked = check(kept)
    report(checked)
    acceptance(checked)
    dated = check(kept, at_row_date=True)
    print("\nthe same rows predicted for the llama.cpp of each row's own date (not today's):")
    for kind in ("decode", "prefill"):
        print(line(f"{kind}, all others", [c for c in dated if c.kind == kind
                                           and not c.host_limited]))  # fmt: skip
    errors = transferred(kept)
    if errors:
        print(
            f"\ndecode from another device's run (same source, model file and backend): "
            f"{len(errors)} pairs, median {statistics.median(errors):.1%}, p90 {_p90(errors):.1%}"
        )
    if args.rows:
        print()
        for c in sorted(checked, key=lambda c: -c.error):
            o = c.obs
            print(
                f"{c.kind:8s} {o.device.id:38s} {o.backend:7s} {o.shape_id:16s} {o.quant:10s} "
                f"measured {c.measured:9.1f} predicted {c.predicted:9.1f} "
                f"({c.measured / c.predicted - 1:+.0%}) band {c.low:.1f}-{c.high:.1f} "
                f"{c.basis:10s} {'host-limited ' if c.host_limited else ''}"
                f"{o.build or '-'} {o.source_url}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
