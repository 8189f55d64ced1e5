"""Published llama-bench results, read into observations the speed model can fit and explain.

Two sets ship with the app (resources/data): the reference set (llamacpp_calibration.csv) and
the rows gathered from other sources (llamacpp_published_added*.csv). Each row is resolved to
a catalogued device through an explicit table (calibration_device_ids.json: a source's own
device string never goes through a guessing resolver), to a built-in model shape, and to a
build era: results from before mid-2024 (CUDA graphs, the MMQ and flash-attention rewrites)
are slower than today's llama.cpp, so the model learns that difference and predicts today's.
Rows the model cannot use honestly (several cards, a device not catalogued, a bandwidth that is
not the device's) are skipped with their reason, counted in `Skipped`.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.catalogue.device import Device
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import bundled
from advisor.core.model.facts import ModelFacts, facts_from_shape
from advisor.core.model.quant import UnknownQuantError, file_type
from advisor.core.model.shapes import UnknownShapeError, get_shape, known_shape
from advisor.core.predict.conditions.test_point import DEFAULT_UBATCH, TestPoint, parse_test
from advisor.core.predict.model.efficiency import quant_kind

GiB = 1024**3
BACKENDS = ("cuda", "metal", "rocm", "vulkan", "sycl", "cpu")
# results older than this ran before CUDA graphs and the 2024 kernel rewrites
ERA_CUTOFF = "2024-07"
# model names of the reference set -> built-in shapes
REFERENCE_SHAPES = {
    "LLaMA-2 7B": "llama-2-7b",
    "Llama 3 8B": "llama-3-8b",
    "Llama 3 70B": "llama-3-70b",
    "Llama 3.1 8B": "llama-3.1-8b",
    "TinyLlama 1.1B (OpenOrca)": "tinyllama-1.1b",
    "Llama 3.2 3B Instruct": "llama-3.2-3b",
    "Mistral 7B Instruct v0.2 (llama arch)": "mistral-7b",
    "LLaMA 13B": "llama-2-13b",
}
# when the reference set's sources were published (it states few builds): the era of a row
REFERENCE_SOURCE_DATES = {
    "llama.cpp/discussions/4167": "",  # updated from 2023 to 2025, builds not stated: unknown
    "XiongjieDai/GPU-Benchmarks-on-LLM-Inference": "2024-05",
    "llama.cpp/pull/2059": "2024-01",
    "llama.cpp/pull/5835": "2024-03",
    "dmatora/LLM-inference-speed-benchmarks": "2024-08",
    "llama.cpp/discussions/10879": "2025-01",
    "llama.cpp/discussions/15013": "2025-08",
    "llama.cpp/discussions/15021": "2025-08",
    "geerlingguy/ai-benchmarks": "2025-10",
    "brand-o/normiebench": "2025-06",
}


@dataclass(frozen=True)
class Observation:
    """One published measurement, with what the model needs to explain it."""

    device: Device
    backend: str
    shape_id: str
    quant: str  # file type label, "Q4_K_M"
    facts: ModelFacts
    weights_bytes: float  # the file's weights as published (the shape's where not given)
    tg_tps: float | None
    pp_tps: float | None
    decode_test: TestPoint  # the test the decode figure comes from (tg128: 128 generated)
    prefill_test: TestPoint  # and the prefill figure (pp512: 512 prompt tokens)
    era: str  # "current" | "old" | "unknown"
    build: str
    date: str
    source_url: str
    confidence: str
    reference_set: bool  # from the shipped reference set (else gathered from other sources)

    @property
    def moe(self) -> bool:
        return self.facts.is_moe

    @property
    def quant_kind(self) -> str:
        """float, q8, legacy (Q4_0...), kquant (Q2_K-Q6_K, IQ4_XS) or mxfp4."""
        return quant_kind(self.quant)

    @property
    def decode_bytes(self) -> float:
        """Bytes one decode step reads: the step's weights (scaled to the file's published
        size) and the KV cache at mid-test."""
        share = self.facts.step_weights_bytes / max(self.facts.weights_bytes, 1)
        return self.weights_bytes * share + self.facts.kv_cache_bytes(self.decode_test.decode_depth)

    @property
    def prefill_flops_per_token(self) -> float:
        return self.facts.prompt_flops_per_token(self.prefill_test.prefill_depth)


@dataclass(frozen=True)
class Published:
    """The published figure nearest a prediction, with what it was measured on."""

    tg_tps: float | None
    pp_tps: float | None
    model: str
    quant: str
    build: str
    date: str
    source_url: str

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "cards": 1}  # the shipped data holds one card's results

    def summary(self, cards: int = 1, hybrid: bool = False) -> str:
        """In words; for a target of several cards, said to be one card's, and for a model
        placed over the card and RAM, said to be with every layer on the card (the shipped data
        holds single-card, full-offload results only)."""
        speed = f"{self.tg_tps:.0f} t/s decode" if self.tg_tps else f"{self.pp_tps:.0f} t/s prefill"
        build = f", build {self.build}" if self.build and self.build != "not stated" else ""
        one = " on one card" if cards > 1 else ""
        one += " with every layer on the card" if hybrid else ""
        return f"published{one}: {speed}, {self.model} {self.quant}{build}"


@dataclass(frozen=True)
class Skipped:
    source_url: str
    device: str
    reason: str


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


UNSTEADY_SPREAD = 0.5  # a figure whose repetitions spread over half of it measured no one speed
DEFAULT_PROMPT, DEFAULT_GEN = 512, 128  # llama-bench's defaults, where a source names no length
TESTS = ("pp", "tg")


def _whole(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default


@dataclass(frozen=True)
class RowConditions:
    """A published row's test conditions and data-quality flags, read from its columns
    (resources/data/README.md): the tests' lengths and depth, the micro-batch, each figure's
    spread over its repetitions, and the figures left out with the reason why."""

    decode_test: TestPoint
    prefill_test: TestPoint
    lengths_stated: bool
    sd: dict[str, float | None]
    excluded: frozenset[str]  # "pp", "tg"
    exclude_reason: str


def row_conditions(row: dict[str, str], flags: dict[str, str] | None = None) -> RowConditions:
    """The conditions of a row. Gathered rows carry them as columns (n_prompt, n_gen, depth,
    n_ubatch, pp_sd, tg_sd, exclude); the reference set, kept byte for byte as published,
    names its tests in pp_test/tg_test ('pp512', 'tg128') and its few flags sit in a sidecar
    file (`flags`)."""
    flags = flags or {}
    if "n_prompt" in row:
        ubatch = _whole(row.get("n_ubatch"), DEFAULT_UBATCH)
        depth = _whole(row.get("depth"), 0)
        prefill = TestPoint(prompt_tokens=_whole(row.get("n_prompt"), DEFAULT_PROMPT),
                            depth=depth, ubatch=ubatch)  # fmt: skip
        decode = TestPoint(generated_tokens=_whole(row.get("n_gen"), DEFAULT_GEN), depth=depth)
        stated = row.get("lengths_stated", "1") != "0"
    else:
        prefill = _reference_test(row.get("pp_test"), TestPoint(prompt_tokens=DEFAULT_PROMPT))
        decode = _reference_test(row.get("tg_test"), TestPoint(generated_tokens=DEFAULT_GEN))
        stated = bool(row.get("pp_test") or row.get("tg_test"))
    merged = {**row, **{k: v for k, v in flags.items() if v}}
    excluded = merged.get("exclude") or ""
    tests = {t for t in TESTS if t in excluded or excluded.strip() == "all"}
    return RowConditions(
        decode, prefill, stated,
        {t: _number(merged.get(f"{t}_sd", "")) for t in TESTS},
        frozenset(tests), merged.get("exclude_reason", ""),
    )  # fmt: skip


def _unsteady(sd: float | None, value: float | None) -> bool:
    """Did the repetitions spread over half the figure? llama-bench prints the mean +- the
    standard deviation; a pp512 of 10,802 +- 9,881 (a run whose first repetitions were cold)
    says little about the card's speed."""
    return bool(sd and value and sd > UNSTEADY_SPREAD * value)


FLAG_KEY = ("device", "backend", "model", "quant")


@cache
def reference_flags() -> dict[tuple[str, ...], dict[str, str]]:
    """The reference set's data-quality flags (llamacpp_calibration_flags.csv), by row key:
    the reference file stays byte for byte the published one."""
    path = bundled("resources") / "data" / "llamacpp_calibration_flags.csv"
    with open(path, encoding="utf-8") as fh:
        return {tuple(r[k] for k in FLAG_KEY): r for r in csv.DictReader(fh)}


def _reference_test(text: str | None, default: TestPoint) -> TestPoint:
    try:
        return parse_test(text or "") if text else default
    except InputError:
        return default


# llama.cpp grows faster month by month (Vulkan's prefill doubled between mid-2025 and 2026 on
# the same cards): a row's date is a covariate, and predictions are for the newest results in
# the data (not beyond: the trend is not extrapolated past what was measured)
PREDICT_AT = "2026-08"
DATE_ORIGIN = 2025.5  # the date covariate's zero: mid-2025, the middle of the data
DATE_CLAMP = 1.5  # years either way: older or newer dates count as this far


def years(date: str) -> float:
    """Years from mid-2025 to a row's date (0 where it has none), clamped to +-1.5."""
    found = re.match(r"(\d{4})-(\d{2})", date or "")
    if not found:
        return 0.0
    value = int(found.group(1)) + (int(found.group(2)) - 0.5) / 12 - DATE_ORIGIN
    return max(-DATE_CLAMP, min(DATE_CLAMP, value))


def _era(date: str, build: str) -> str:
    number = re.search(r"\((\d{3,5})\)", build or "")
    if number:
        return "old" if int(number.group(1)) < 3000 else "current"
    if date:
        return "old" if date[:7] < ERA_CUTOFF else "current"
    return "unknown"


@cache
def device_ids() -> dict[str, str | None]:
    """Device string of a source ('|N' = N GPU cores) -> catalogue id (None: skipped)."""
    path = bundled("resources") / "data" / "calibration_device_ids.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))["devices"])


def device_of(row: dict[str, str], catalogue: Catalogue) -> Device | None:
    """The catalogued device a row was measured on (its own `catalogue_id` column, else the
    table, else a resolver that refuses to guess); with the row's own bandwidth where it is
    not the record's (a laptop with socketed memory)."""
    pinned = (row.get("catalogue_id") or "").strip()
    if pinned:  # a row that names its catalogue record needs no table and no resolver
        device = catalogue.by_id(pinned)
        return None if device is None else _with_row_bandwidth(device, row)
    ids = device_ids()
    cores = (row.get("gpu_cores") or "").strip()
    keys = (f"{row['device']}|{cores}", row["device"])
    listed = next((k for k in keys if k in ids), None)
    if listed is not None:
        device_id = ids[listed]
        device = catalogue.by_id(device_id) if device_id else None
    else:
        name = row["device"] + (
            f" {cores}-core GPU" if cores and "core" not in row["device"] else ""
        )
        device = catalogue.try_resolve(name)
    if device is None:
        return None
    return _with_row_bandwidth(device, row)


def _with_row_bandwidth(device: Device, row: dict[str, str]) -> Device:
    bandwidth = _number(row.get("mem_bandwidth_gbs", ""))
    if bandwidth and abs(bandwidth / device.memory_bandwidth_gbs - 1) > 0.05:
        device = replace(device, memory_bandwidth_gbs=bandwidth)
    return device


def _reference_date(url: str) -> str:
    return next((d for key, d in REFERENCE_SOURCE_DATES.items() if key in url), "")


def _observation(row: dict[str, str], catalogue: Catalogue, reference: bool) -> Observation | str:
    flags = reference_flags().get(tuple(row.get(k, "") for k in FLAG_KEY)) if reference else None
    """An observation from a row, or the reason it is skipped."""
    if int(_number(row.get("n_gpus", "1") or "1") or 1) != 1:
        return "several cards (layer split)"
    shape_id = row.get("shape") or REFERENCE_SHAPES.get(row.get("model", ""), "")
    if not shape_id or not known_shape(shape_id):
        return f"model {row.get('model')!r} is not a built-in shape"
    device = device_of(row, catalogue)
    if device is None:
        return "device not catalogued (or not named precisely enough)"
    backend = row["backend"].split()[0].lower()
    if backend not in device.backends:
        return f"backend {backend} is not one the device runs"
    quant_raw = re.split(r"[\s(]", row["quant"].strip())[0].lower().replace("ud-", "")
    quant_raw = re.sub(r"_xl$", "_m", quant_raw)  # Unsloth's dynamic mixes: the row's own size
    try:
        label = file_type(quant_raw).label
    except UnknownQuantError:
        return f"quantisation {row['quant']!r} is not modelled"
    facts = _shape_facts(shape_id, label)
    size = _number(row.get("model_size_gib", ""))
    tg, pp = _number(row.get("tg_tps", "")), _number(row.get("pp_tps", ""))
    c = row_conditions(row, flags)
    if not c.prefill_test.batches_like_llama_bench():
        pp = None  # another micro-batch size multiplies other matrices: not comparable
    # a figure whose repetitions spread over half of it measured no one speed
    tg = None if "tg" in c.excluded or _unsteady(c.sd["tg"], tg) else tg
    pp = None if "pp" in c.excluded or _unsteady(c.sd["pp"], pp) else pp
    if tg is None and pp is None:
        return c.exclude_reason or "no speed"
    date = row.get("date") or (_reference_date(row["source_url"]) if reference else "")
    build = row.get("build", "")
    return Observation(
        device=device,
        backend=backend,
        shape_id=shape_id,
        quant=label,
        facts=facts,
        weights_bytes=size * GiB if size else float(facts.weights_bytes),
        tg_tps=tg,
        pp_tps=pp,
        decode_test=c.decode_test,
        prefill_test=c.prefill_test,
        era=_era(date, build),
        build=build,
        date=date,
        source_url=row["source_url"].split(" ")[0],
        confidence=row.get("confidence", ""),
        reference_set=reference,
    )


@cache
def _shape_facts(shape_id: str, label: str) -> ModelFacts:
    return facts_from_shape(get_shape(shape_id), label)


def data_files() -> list[tuple[Path, bool]]:
    """(path, is the reference set) of every shipped calibration file."""
    folder = bundled("resources") / "data"
    files = [(folder / "llamacpp_calibration.csv", True)]
    files += [(p, False) for p in sorted(folder.glob("llamacpp_published_added*.csv"))]
    return files


def load_observations(
    files: Iterable[tuple[Path, bool]] | None = None, catalogue: Catalogue | None = None
) -> tuple[list[Observation], list[Skipped]]:
    """Every usable published measurement, and the rows skipped with their reasons."""
    catalogue = catalogue or load_catalogue()
    out: list[Observation] = []
    skipped: list[Skipped] = []
    for path, reference in files if files is not None else data_files():
        with open(path, encoding="utf-8") as fh:
            rows, dropped = observations_from_rows(csv.DictReader(fh), catalogue, reference)
        out += rows
        skipped += dropped
    return out, skipped


def observations_from_rows(
    rows: Iterable[dict[str, str]], catalogue: Catalogue, reference: bool = False
) -> tuple[list[Observation], list[Skipped]]:
    """Observations from rows of a calibration file, and the rows skipped with their reasons."""
    out: list[Observation] = []
    skipped: list[Skipped] = []
    for row in rows:
        result = _observation(row, catalogue, reference)
        if isinstance(result, str):
            skipped.append(Skipped(row.get("source_url", ""), row.get("device", ""), result))
        else:
            out.append(result)
    return out, skipped


# -------------------------------------------------------------------------------------------
# decode deep in the context, and decode for several streams at once
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DepthPair:
    """Decode measured at depth 0 and at `depth` in one run: what reading the KV cache costs."""

    device: Device
    backend: str
    facts: ModelFacts
    weights_bytes: float
    depth: int
    n_gen: int
    tps_deep: float
    tps_shallow: float
    kv_cache: str  # f16 | q8_0 | q8_0/f16 (K/V)
    source_url: str

    def kv_bytes(self, depth: int) -> float:
        types = self.kv_cache.split("/")
        return sum(self.facts.kv_cache_bytes(depth, t) for t in types) / len(types)


@dataclass(frozen=True)
class BatchedPoint:
    """Aggregate decode tokens/s of `streams` streams decoding together (llama-batched-bench)."""

    device: Device
    backend: str
    facts: ModelFacts
    streams: int
    n_gen: int
    prompt_tokens: int
    aggregate_tps: float
    source_url: str


def _device_row(row: dict[str, str], catalogue: Catalogue) -> tuple[Device, str] | None:
    device = device_of({**row, "mem_bandwidth_gbs": row.get("mem_bandwidth_gbs", "")}, catalogue)
    backend = row["backend"].split()[0].lower()
    if device is None or backend not in device.backends:
        return None
    return device, backend


def _facts(row: dict[str, str]) -> ModelFacts | None:
    quant = re.split(r"[\s(/]", row["quant"].strip())[0]
    try:
        return _shape_facts(row["shape"], file_type(quant).label)
    except (KeyError, ValueError, UnknownQuantError, UnknownShapeError):
        return None


def load_depth_pairs(catalogue: Catalogue | None = None) -> list[DepthPair]:
    """Published decode-at-depth ladders with the same run's depth-0 figure."""
    catalogue = catalogue or load_catalogue()
    path = bundled("resources") / "data" / "llamacpp_depth_added.csv"
    out = []
    with open(path, encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            found, facts = _device_row(row, catalogue), _facts(row)
            shallow, deep = _number(row["tg_tps_at_depth0"]), _number(row["tg_tps"])
            if found is None or facts is None or not shallow or not deep:
                continue
            out.append(DepthPair(found[0], found[1], facts, float(facts.weights_bytes),
                                 int(row["depth"]), int(row["n_gen"]), deep, shallow,
                                 row.get("kv_cache") or "f16", row["source_url"]))  # fmt: skip
    return out


def load_batched(catalogue: Catalogue | None = None) -> list[BatchedPoint]:
    """Published batched-decode series (every series includes one stream)."""
    catalogue = catalogue or load_catalogue()
    out = []
    for path in sorted((bundled("resources") / "data").glob("llamacpp_batched_added*.csv")):
        with open(path, encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                found, facts = _device_row(row, catalogue), _facts(row)
                rate = _number(row["aggregate_tps"])
                if found is None or facts is None or not rate:
                    continue
                prompt = row.get("prompt_tokens") or row.get("depth") or "0"
                out.append(BatchedPoint(found[0], found[1], facts, int(row["n_streams"]),
                                        int(row["n_gen"]), int(prompt), rate,
                                        row["source_url"]))  # fmt: skip
    return out
