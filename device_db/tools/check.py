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

# Calibration CSV device string -> catalogue id. Rows whose device string is listed here
# must match that record's bandwidth; any device string not listed is an error, so a new
# calibration row forces a decision here.
CALIBRATION_MAP = {
    "Apple M1 Pro": {14: "apple-m1-pro-14c", 16: "apple-m1-pro-16c"},
    "Apple M1 Max": {24: "apple-m1-max-24c", 32: "apple-m1-max-32c"},
    "Apple M1 Ultra": {48: "apple-m1-ultra-48c", 64: "apple-m1-ultra-64c"},
    "Apple M3": {10: "apple-m3-10c"},
    "Apple M3 Max": {30: "apple-m3-max-30c", 40: "apple-m3-max-40c"},
    "Apple M3 Ultra": {60: "apple-m3-ultra-60c", 80: "apple-m3-ultra-80c"},
    "Apple M4": {10: "apple-m4-10c"},
    "Apple M4 Max": {32: "apple-m4-max-32c", 40: "apple-m4-max-40c"},
    "Apple M1 (7-core GPU, 8GB)": "apple-m1-7c",
    "Apple M1 Max (32-core GPU, 64GB)": "apple-m1-max-32c",
    "Apple M2 Ultra (76-core GPU, 192GB)": "apple-m2-ultra-76c",
    "Apple M3 Max (40-core GPU, 64GB)": "apple-m3-max-40c",
    "Apple M1 Ultra (64-core GPU, 128GB)": "apple-m1-ultra-64c",
    "Apple M4 (Mac mini, 16GB)": "apple-m4-10c",
    "NVIDIA GeForce RTX 3080 Ti 12GB": "nvidia-geforce-rtx-3080-ti",
    "NVIDIA GeForce RTX 4070 Ti 12GB": "nvidia-geforce-rtx-4070-ti",
    "NVIDIA GeForce RTX 4080 16GB": "nvidia-geforce-rtx-4080",
    "NVIDIA GeForce RTX 4090 24GB": "nvidia-geforce-rtx-4090",
    "NVIDIA RTX 4000 Ada 20GB": "nvidia-rtx-4000-ada",
    "NVIDIA RTX 6000 Ada 48GB": "nvidia-rtx-6000-ada",
    "NVIDIA A40 48GB": "nvidia-a40",
    "NVIDIA GeForce RTX 3080 (10GB assumed)": "nvidia-geforce-rtx-3080-10gb",
    "NVIDIA GeForce RTX 4070 Laptop GPU": "nvidia-geforce-rtx-4070-laptop",
    "NVIDIA GeForce RTX 5090": "nvidia-geforce-rtx-5090",
    "NVIDIA GeForce RTX 5080": "nvidia-geforce-rtx-5080",
    "NVIDIA GeForce RTX 3090": "nvidia-geforce-rtx-3090",
    "NVIDIA GeForce RTX 5060 Ti 16GB": "nvidia-geforce-rtx-5060-ti",
    "NVIDIA H100 80GB (PCIe per one copy)": "nvidia-h100-pcie",
    "NVIDIA A100 80GB (form factor not stated)": "nvidia-a100-pcie-80gb",
    "NVIDIA RTX PRO 6000 Blackwell (variant not stated)": "nvidia-rtx-pro-6000-blackwell",
    "NVIDIA L40": "nvidia-l40",
    "NVIDIA RTX PRO 4000 Blackwell": "nvidia-rtx-pro-4000-blackwell",
    "NVIDIA RTX A5000": "nvidia-rtx-a5000",
    "NVIDIA GeForce RTX 5070": "nvidia-geforce-rtx-5070",
    "NVIDIA GeForce RTX 3060 12GB": "nvidia-geforce-rtx-3060-12gb",
    "NVIDIA Tesla M40 24GB": "nvidia-tesla-m40-24gb",
    "NVIDIA Tesla K80 (one of two GPUs)": "nvidia-tesla-k80",
    "NVIDIA GeForce RTX 4070 SUPER": "nvidia-geforce-rtx-4070-super",
    "NVIDIA GeForce RTX 4070": "nvidia-geforce-rtx-4070",
    "AMD Instinct MI210": "amd-instinct-mi210",
    "AMD Radeon PRO W7900 48GB": "amd-radeon-pro-w7900",
    "AMD Radeon RX 9070": "amd-radeon-rx-9070",
    "AMD Radeon AI PRO R9700": "amd-radeon-ai-pro-r9700",
    "AMD Radeon RX 6700 XT 12GB": "amd-radeon-rx-6700-xt",
    "AMD Radeon RX 6800 XT 16GB": "amd-radeon-rx-6800-xt",
    "Intel Arc A770": "intel-arc-a770-16gb",
}


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


def check(db_dir: Path, calibration: Path | None) -> int:
    schema, files, errors = load(db_dir)
    warnings: list[str] = []
    field_names = set(schema["$defs"]["device"]["properties"])

    records = [(fname, d) for fname, doc in files.items() for d in doc.get("devices", [])]
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
