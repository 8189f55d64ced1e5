#!/usr/bin/env python3
"""Validate the device catalogue (development-time tool, never used at run time).

Checks, over every file in device_db/devices/*.json:
  * the file validates against device_db/schema.json (JSON Schema draft 2020-12);
  * ids and names are unique across all files;
  * aliases are unique across all records after case-folding and whitespace collapsing,
    never equal another record's name, and never repeat the record's own name;
  * Apple records do not carry the bare chip name ("Apple M3 Max", "M3 Max") as an alias;
  * every key of `derived` and every entry of a source's `fields` names a real field;
  * bus width x data rate agrees with memory_bandwidth_gbs (within 3 %) unless `derived`
    explains the bandwidth; CPU records also agree with channels x 64-bit x data rate;
  * the FP16-accumulate tensor figure is not below the FP32-accumulate one;
  * a street price has a kind, a month and a cited source; a used price (beside a new street
    price) a month and a source; per-memory launch prices name offered sizes and the largest
    is launch_price_usd; a street or used price more than six months older than the
    catalogue's month (its newest price or "read here (date)") is a warning;
  * pcie_gen and pcie_lanes come together, with a source listing both, and only on discrete
    add-in cards: never on a laptop GPU, iGPU, SoC, CPU or an SXM/OAM module;
  * every device named in shared/reference/llamacpp_calibration.csv maps to a record with
    the same bandwidth (the mapping table is CALIBRATION_MAP below).

Usage: python3 device_db/tools/check.py [--calibration PATH]
Exit status 0 when clean, 1 when any error was found.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

try:
    import jsonschema
except ImportError:  # pragma: no cover - the tool is for developers
    sys.exit("check.py needs the 'jsonschema' package (pip install jsonschema)")

DB_DIR = Path(__file__).resolve().parent.parent
DEVICE_FILES = ["nvidia.json", "amd.json", "intel.json", "apple.json", "cpu.json", "qualcomm.json"]


# Calibration CSV device string -> catalogue id (the app's own table in resources/data).
# Rows whose device string is listed there must match that record's bandwidth; any device
# string not listed is an error, so a new calibration row forces a decision there.
def _calibration_map() -> dict[str, object]:
    """resources/data/calibration_device_ids.json, in the shape the checks below use."""
    path = DB_DIR.parent / "resources" / "data" / "calibration_device_ids.json"
    flat = json.loads(path.read_text(encoding="utf-8"))["devices"]
    out: dict[str, object] = {}
    for key, device_id in flat.items():
        name, _, cores = key.partition("|")
        if cores:
            out.setdefault(name, {})[int(cores)] = device_id  # type: ignore[index]
        else:
            out[name] = device_id
    return out


CALIBRATION_MAP = _calibration_map()


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def load(db_dir: Path):
    schema = json.loads((db_dir / "schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    files = {}
    errors = []
    for name in DEVICE_FILES:
        path = db_dir / "devices" / name
        if not path.exists():
            errors.append(f"{name}: missing")
            continue
        doc = json.loads(path.read_text())
        for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.path)):
            loc = "/".join(str(p) for p in err.path)
            errors.append(f"{name}: schema: {loc}: {err.message}")
        files[name] = doc
    return schema, files, errors


# Dense rates relative to the dense FP16 matrix rate on every architecture in the catalogue:
# INT8 and FP8 at most 2x, FP4 at most 4x, BF16 at most 1x. A figure above these is a sparse
# ("with sparsity") headline in a dense field.
DENSE_RATIO_LIMITS = {
    "int8_tensor_tops": 2.05,
    "fp8_tensor_tflops": 2.05,
    "fp4_tensor_tflops": 4.1,
    "bf16_tensor_tflops": 1.05,
}
# FP32 FLOPs per shader lane per clock beyond the plain FMA's 2: dual issue (RDNA3 and
# later) is counted in AMD's figures
FP32_ISSUE = {"rdna3": 2, "rdna3.5": 2, "rdna4": 2}
PEAK_TOLERANCE = 0.15
PEAK_FIELDS = (
    "fp32_tflops", "fp16_tflops", "fp16_tensor_tflops", "fp16_tensor_tflops_fp16acc",
    "bf16_tensor_tflops", "int8_tensor_tops", "int8_dot_tops", "fp8_tensor_tflops",
    "fp4_tensor_tflops",
)  # fmt: skip


def peak_errors(d: dict) -> list[str]:
    """A sparse figure in a dense field, and an FP32 peak that shader units x clock x 2 do
    not explain (by more than 15%) unless derived['fp32_tflops'] gives the reason after
    'peak-check:'."""
    errors = []
    derived = d.get("derived") or {}
    reference = (
        d.get("fp16_tensor_tflops_fp16acc")
        or d.get("fp16_tensor_tflops")
        or d.get("bf16_tensor_tflops")
    )
    for field, limit in DENSE_RATIO_LIMITS.items():
        value = d.get(field)
        if value and reference and value > limit * reference:
            errors.append(
                f"{field} {value} is {value / reference:.1f}x the dense FP16 matrix rate "
                f"{reference}: a sparse figure in a dense field?"
            )
    units, clock, fp32 = d.get("shader_units"), d.get("boost_clock_mhz"), d.get("fp32_tflops")
    if units and clock and fp32 and not d.get("class", "").startswith("cpu_"):
        expected = units * 2 * clock * FP32_ISSUE.get(d.get("arch") or "", 1) / 1e6
        off = fp32 / expected - 1
        if abs(off) > PEAK_TOLERANCE and "peak-check:" not in derived.get("fp32_tflops", ""):
            errors.append(
                f"fp32_tflops {fp32} is {off:+.0%} off {units} lanes x 2 x {clock} MHz = "
                f"{expected:.1f}, and derived['fp32_tflops'] has no 'peak-check:' reason"
            )
    for field in d.get("not_published") or []:
        if field not in PEAK_FIELDS:
            errors.append(f"not_published lists '{field}', which is not a peak field")
        elif d.get(field):
            errors.append(f"{field} is both given and listed as not published")
    return errors


# Classes whose records can be add-in PCIe cards; the datacenter ones also hold modules, named
# as such (SXM, OAM) or listed below, which plug into a board, not a slot
ADD_IN_CARD_CLASSES = frozenset({
    "nvidia_consumer", "nvidia_workstation", "nvidia_datacenter", "amd_consumer",
    "amd_workstation", "amd_datacenter", "intel_arc",
})  # fmt: skip
MODULE_IDS = frozenset({
    "nvidia-b200",  # SXM6 (HGX B200)
    "amd-instinct-mi250x", "amd-instinct-mi325x", "amd-instinct-mi350x",
    "amd-instinct-mi355x",  # OAM
    "amd-instinct-mi300a",  # an APU in a socket
})  # fmt: skip
PCIE_FIELDS = ("pcie_gen", "pcie_lanes")


def is_module(d: dict) -> bool:
    """An SXM/OAM module (or a socketed APU): no add-in card, so no PCIe link of its own."""
    words = " ".join([d.get("id", ""), d.get("name", ""), *d.get("aliases", [])])
    return d.get("id") in MODULE_IDS or bool(re.search(r"\b(sxm\d*|oam)\b", words, re.I))


def pcie_errors(d: dict) -> list[str]:
    """The card's host link: both fields or neither, with a source listing both, and only on
    a discrete add-in card."""
    given = [f for f in PCIE_FIELDS if d.get(f) is not None]
    if not given:
        return []
    errors = []
    if len(given) == 1:
        missing = next(f for f in PCIE_FIELDS if f not in given)
        errors.append(f"{given[0]} without {missing}")
    if d.get("class") not in ADD_IN_CARD_CLASSES or is_module(d):
        errors.append(f"a PCIe link on {d.get('class')} {d.get('name')}, which is no add-in card")
    cited = [s for s in d.get("sources", []) if set(given) <= set(s.get("fields", []))]
    if not cited:
        errors.append(f"{' and '.join(given)} without a source listing them")
    return errors


def backend_path_errors(db_dir: Path, schema_fields: set[str]) -> list[str]:
    """Every backend-path rule has a source, a known backend and weights kind, and names
    only peak fields the catalogue has."""
    path = db_dir / "backend_paths.json"
    if not path.exists():
        return ["backend_paths.json is missing"]
    errors = []
    rules = json.loads(path.read_text(encoding="utf-8"))["rules"]
    seen: set[str] = set()
    for r in rules:
        rid = r.get("id", "?")
        if rid in seen:
            errors.append(f"backend_paths.json: duplicate rule id {rid}")
        seen.add(rid)
        if not str(r.get("source", "")).startswith("https://"):
            errors.append(f"backend_paths.json: {rid}: no source")
        if r.get("backend") not in ("cuda", "metal", "rocm", "vulkan", "sycl", "cpu"):
            errors.append(f"backend_paths.json: {rid}: unknown backend {r.get('backend')!r}")
        if r.get("weights") not in ("quantized", "float"):
            errors.append(f"backend_paths.json: {rid}: weights must be quantized or float")
        for field in r.get("precision", []):
            if field not in schema_fields:
                errors.append(f"backend_paths.json: {rid}: precision '{field}' is not a field")
    for backend in ("cuda", "metal", "rocm", "vulkan", "sycl", "cpu"):
        for weights in ("quantized", "float"):
            if not any(
                r["backend"] == backend and r["weights"] == weights and not r["when"] for r in rules
            ):
                errors.append(f"backend_paths.json: no catch-all rule for {backend} {weights}")
    return errors


STALE_MONTHS = 6  # a street price older than this before the catalogue's month is flagged
_READ_ON = re.compile(r"read here \((\d{4}-\d{2})")


def _months(later: str, earlier: str) -> int:
    y1, m1 = (int(x) for x in later[:7].split("-"))
    y0, m0 = (int(x) for x in earlier[:7].split("-"))
    return (y1 - y0) * 12 + (m1 - m0)


def catalogue_month(records: list[dict]) -> str:
    """The newest month the data records: a street or used price, or a source read on a day
    (the app's advisor.core.catalogue.dating reads the same fields)."""
    months = [d.get(k) or "" for d in records for k in ("street_price_date", "used_price_date")]
    months += [m for d in records for src in d.get("sources", [])
               for m in _READ_ON.findall(src.get("note", ""))]  # fmt: skip
    return max((m for m in months if m), default="")


def price_problems(d: dict, as_of: str) -> tuple[list[str], list[str]]:
    """(errors, warnings) about one record's prices: a street price needs its kind, month and a
    cited source; a used price its month, a source and a new street price beside it; launch
    prices per memory size name offered sizes; a price older than STALE_MONTHS is flagged."""
    errors: list[str] = []
    warnings: list[str] = []
    cited = {f for src in d.get("sources", []) for f in src.get("fields", [])}
    for usd, date, kind in (("street_price_usd", "street_price_date", "street_price_kind"),
                            ("used_price_usd", "used_price_date", None)):  # fmt: skip
        if not d.get(usd):
            if d.get(date) or (kind and d.get(kind)):
                errors.append(f"{date} without {usd}")
            continue
        if kind and not d.get(kind):
            errors.append(f"{usd} without {kind} (new or used)")
        if not d.get(date):
            errors.append(f"{usd} without {date} (YYYY-MM)")
        elif as_of and _months(as_of, d[date]) > STALE_MONTHS:
            warnings.append(f"{usd} is from {d[date]}, more than {STALE_MONTHS} months before "
                            f"the catalogue's {as_of}")  # fmt: skip
        if usd not in cited:
            errors.append(f"{usd} cited by no source (add its fields to a source)")
    if d.get("used_price_usd") and d.get("street_price_kind") != "new":
        errors.append(
            "used_price_usd beside a street price that is not new: put it in street_price_*"
        )
    sizes = [float(m) for m in d.get("memory_sizes_gb", [])]
    if d.get("price_memory_gb") and float(d["price_memory_gb"]) not in sizes:
        errors.append(f"price_memory_gb {d['price_memory_gb']} is not one of {sizes}")
    by_memory = d.get("launch_price_by_memory_gb") or {}
    for size in by_memory:
        if float(size) not in sizes:
            errors.append(f"launch_price_by_memory_gb names {size} GB, not one of {sizes}")
    if by_memory and sizes and by_memory.get(f"{max(sizes):g}") != d.get("launch_price_usd"):
        errors.append("launch_price_usd is not the largest memory option's launch price")
    return errors, warnings


def check(db_dir: Path, calibration: Path | None) -> int:
    schema, files, errors = load(db_dir)
    warnings: list[str] = []
    field_names = set(schema["$defs"]["device"]["properties"])

    records = [(fname, d) for fname, doc in files.items() for d in doc.get("devices", [])]
    as_of = catalogue_month([d for _, d in records])
    errors += backend_path_errors(db_dir, field_names)
    by_id: dict[str, dict] = {}
    names: dict[str, str] = {}
    for fname, d in records:
        rid = d.get("id", "?")
        if rid in by_id:
            errors.append(f"{fname}: duplicate id {rid}")
        by_id[rid] = d
        n = norm(d.get("name", ""))
        if n in names:
            errors.append(f"{fname}: {rid}: name '{d.get('name')}' also used by {names[n]}")
        names[n] = rid

    aliases: dict[str, str] = {}
    for fname, d in records:
        rid = d.get("id", "?")
        own = norm(d.get("name", ""))
        for a in d.get("aliases", []):
            na = norm(a)
            if na == own:
                errors.append(f"{fname}: {rid}: alias '{a}' repeats the record's own name")
                continue
            if na in names and names[na] != rid:
                errors.append(f"{fname}: {rid}: alias '{a}' equals the name of {names[na]}")
            if na in aliases:
                errors.append(f"{fname}: {rid}: alias '{a}' also an alias of {aliases[na]}")
            aliases[na] = rid

    for fname, d in records:
        rid = d.get("id", "?")
        for key in d.get("derived", {}) or {}:
            if key not in field_names:
                errors.append(f"{fname}: {rid}: derived key '{key}' is not a field")
        for src in d.get("sources", []):
            for f in src.get("fields", []):
                if f not in field_names:
                    errors.append(f"{fname}: {rid}: source field '{f}' is not a field")
        bw = d.get("memory_bandwidth_gbs")
        bus, rate = d.get("bus_width_bits"), d.get("memory_data_rate_mtps")
        explained = "memory_bandwidth_gbs" in (d.get("derived") or {})
        if bw and bus and rate:
            calc = bus / 8 * rate / 1000
            if abs(calc - bw) / bw > 0.03 and not explained:
                errors.append(
                    f"{fname}: {rid}: {bus}-bit x {rate} MT/s = {calc:.1f} GB/s but "
                    f"memory_bandwidth_gbs is {bw} and 'derived' does not explain it"
                )
        ch = d.get("memory_channels")
        if d.get("class", "").startswith("cpu_") and bw and ch and rate:
            calc = ch * 8 * rate / 1000
            if abs(calc - bw) / bw > 0.01 and not explained:
                errors.append(f"{fname}: {rid}: {ch} ch x 8 B x {rate} MT/s = {calc:.1f} != {bw}")
        t32, t16 = d.get("fp16_tensor_tflops"), d.get("fp16_tensor_tflops_fp16acc")
        if t32 and t16 and t16 < t32:
            errors.append(f"{fname}: {rid}: FP16-accumulate tensor figure below FP32-accumulate")
        if d.get("fp32_tflops_is_estimate") and "fp32_tflops" not in (d.get("derived") or {}):
            errors.append(f"{fname}: {rid}: estimated fp32_tflops without a formula in 'derived'")
        if d.get("vendor") == "Apple" and d.get("class") == "apple_soc":
            chip = re.sub(r"\s*\(.*\)$", "", d.get("name", ""))
            for bad in (chip, chip.replace("Apple ", "")):
                if norm(bad) in {norm(a) for a in d.get("aliases", [])}:
                    errors.append(f"{fname}: {rid}: bare chip name '{bad}' must not be an alias")
        if not d.get("sources"):
            errors.append(f"{fname}: {rid}: no sources")
        errors += [f"{fname}: {rid}: {e}" for e in peak_errors(d)]
        price_errors, price_warnings = price_problems(d, as_of)
        errors += [f"{fname}: {rid}: {e}" for e in price_errors]
        warnings += [f"{fname}: {rid}: {w}" for w in price_warnings]
        errors += [f"{fname}: {rid}: {e}" for e in pcie_errors(d)]

    if calibration and calibration.exists():
        with calibration.open(newline="") as fh:
            for row in csv.DictReader(fh):
                dev = row["device"]
                target = CALIBRATION_MAP.get(dev)
                if isinstance(target, dict):
                    cores = row.get("gpu_cores") or ""
                    target = target.get(int(cores)) if cores.isdigit() else None
                if target is None:
                    cores = row.get("gpu_cores")
                    errors.append(
                        f"calibration: no mapping for '{dev}' (gpu_cores={cores!r}); "
                        "add it to CALIBRATION_MAP"
                    )
                    continue
                rec = by_id.get(target)
                if rec is None:
                    errors.append(f"calibration: '{dev}' maps to missing id {target}")
                    continue
                want = float(row["mem_bandwidth_gbs"])
                if abs(rec["memory_bandwidth_gbs"] - want) > 0.005 * want:
                    errors.append(
                        f"calibration: '{dev}' says {want} GB/s, {target} has "
                        f"{rec['memory_bandwidth_gbs']}"
                    )
    elif calibration:
        warnings.append(f"calibration file {calibration} not found; skipped")

    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("error:", e)
    counts = ", ".join(f"{k} {len(v.get('devices', []))}" for k, v in files.items())
    print(
        f"{len(records)} records ({counts}); {len(aliases)} aliases; "
        f"{len(errors)} errors, {len(warnings)} warnings"
    )
    return 1 if errors else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_cal = DB_DIR.parent.parent / "shared" / "reference" / "llamacpp_calibration.csv"
    parser.add_argument(
        "--calibration",
        type=Path,
        default=default_cal,
        help="llama-bench calibration CSV to cross-check (default: %(default)s)",
    )
    parser.add_argument("--db", type=Path, default=DB_DIR, help="device_db directory")
    args = parser.parse_args()
    return check(args.db, args.calibration)


if __name__ == "__main__":
    sys.exit(main())
