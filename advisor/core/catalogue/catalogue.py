"""The device catalogue: curated, cited specifications loaded from device_db/ (JSON, no pickles).

Names resolve the way people and drivers write them: case- and punctuation-insensitive, with
or without the vendor prefix ("NVIDIA GeForce RTX 4090", "RTX 4090"), with a memory-size
suffix ("GeForce RTX 4090 24GB"), and Apple chips with their GPU-core count ("Apple M2 Max
38-core GPU", "M2 Max (38-core GPU)"). An unknown name fails with the closest names.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Collection, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.catalogue.names import basic_key, family_only, parse_name, strip_vendor
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import bundled


class UnknownDeviceError(InputError):
    """A device name that resolves to nothing; the message lists the closest names."""


class AmbiguousDeviceError(InputError):
    """A name that fits several variants differing in bandwidth or memory; the message lists
    them, with bandwidth and memory, so the user can name one."""

    def __init__(self, name: str, devices: list[Device]):
        self.devices = devices
        listed = "; ".join(describe_variant(d) for d in devices[:8])
        more = f"; and {len(devices) - 8} more" if len(devices) > 8 else ""
        super().__init__(
            f"'{name}' fits {len(devices)} devices: {listed}{more}. Name one of them (e.g. "
            f"'{devices[0].name}')."
        )


def describe_variant(d: Device) -> str:
    """'Apple M4 Max (32-core GPU), 410 GB/s, 36 GB' for lists of variants."""
    memory = "/".join(f"{m:g}" for m in d.memory_sizes_gb)
    return f"{d.name}, {d.memory_bandwidth_gbs:,.0f} GB/s, {memory} GB"


class Catalogue:
    """All devices, with name resolution and search. A name resolves when it means exactly one
    device; when it fits several variants that differ in bandwidth or memory ("M4 Max",
    "A100", "RTX 6000", "Strix Halo") the resolver asks instead of guessing."""

    def __init__(self, devices: list[Device]):
        self.devices = devices
        self._by_id = {d.id: d for d in devices}
        self._order = {d.id: i for i, d in enumerate(devices)}
        self._exact: dict[str, Device] = {}
        self._stripped: dict[str, list[Device]] = {}
        self._base: dict[str, list[Device]] = {}
        self._products: dict[str, list[Device]] = {}
        for d in devices:
            for n in (d.name, *d.aliases, d.id.replace("-", " ")):
                key = basic_key(n)  # once: the app folds some 1,500 names as it starts
                self._exact.setdefault(key, d)
                _add(self._stripped, strip_vendor(key), d)
                _add(self._base, parse_name(n).base, d)
            for product in d.product_names:
                _add(self._products, strip_vendor(basic_key(product)), d)

    def __len__(self) -> int:
        return len(self.devices)

    def __iter__(self) -> Iterator[Device]:
        return iter(self.devices)

    def by_id(self, device_id: str) -> Device | None:
        return self._by_id.get(device_id)

    def candidates(self, name: str) -> list[Device]:
        """Every device `name` could mean, best matches first (empty: none)."""
        return self._match(name)[0]

    def _match(self, name: str) -> tuple[list[Device], int]:
        """(candidates, how many leading ones match equally best)."""
        if not name or not name.strip():
            return [], 0
        if name in self._by_id:
            return [self._by_id[name]], 1
        key = basic_key(name)
        if key in self._exact:
            return [self._exact[key]], 1
        # 'AMD Radeon(TM) Graphics' (with or without a memory size): many chips print it,
        # it names none
        if family_only(key) or family_only(parse_name(name).base):
            return [], 0
        stripped = strip_vendor(key)
        hits = self._stripped.get(stripped, [])
        if len(hits) == 1:
            return hits, 1
        if stripped in self._products:
            found = list(self._products[stripped])
            return found, len(found)
        q = parse_name(name)
        found = list(self._base.get(q.base, []))
        best = len(found)
        if not found:
            found, best = self._by_words(q.base)
        keep = [
            d
            for d in found
            if (q.gpu_cores is None or d.gpu_cores in (None, q.gpu_cores))
            and (q.memory_gb is None or q.memory_gb in d.memory_sizes_gb or len(found) == 1)
        ]
        if q.memory_gb is not None and not keep:
            keep = [d for d in found if q.gpu_cores is None or d.gpu_cores in (None, q.gpu_cores)]
        best = len([d for d in found[:best] if d in keep])
        return keep, best

    def _by_words(self, base: str) -> tuple[list[Device], int]:
        """ "A100 80GB": the devices one of whose names holds all the words, those with the
        fewest other words in their own name first (a short alias does not make one variant
        win); and how many tie for fewest."""
        words = set(base.split())
        if not words:
            return [], 0
        scored: dict[str, tuple[int, int, Device]] = {}
        for b, devices in self._base.items():
            if not words <= set(b.split()):
                continue
            for d in devices:
                own = set(parse_name(d.name).base.split())
                extra = len(own - words) if words <= own else len(set(b.split()) - words)
                if d.id not in scored or extra < scored[d.id][0]:
                    scored[d.id] = (extra, self._order[d.id], d)
        ranked = sorted(scored.values(), key=lambda item: item[:2])[:64]
        fewest = ranked[0][0] if ranked else 0
        return [d for _, _, d in ranked], sum(1 for e, _, _ in ranked if e == fewest)

    def chip_gpus(self, device: Device) -> list[Device]:
        """The integrated GPUs catalogued for a CPU's chip: 'Radeon 8060S (Ryzen AI Max+ 395)'
        for the Ryzen AI Max+ 395 (their names carry the chip's); none for anything else."""
        if not device.is_cpu:
            return []
        inner = (f"({device.name})", f"({device.name},")
        return [d for d in self.devices if not d.is_cpu and any(i in d.name for i in inner)]

    def chip_sentence(self, device: Device, how: str, named: Collection[str] = ()) -> str:
        """For a CPU whose chip has a catalogued GPU (not among the `named` ids): 'Ryzen AI Max+
        395 is the chip's CPU; its GPU, ..., usually runs llama.cpp faster: ' and `how`, with
        the GPU's name, says how to choose it ("add --to '{}'."); else ''."""
        gpus = [g for g in self.chip_gpus(device) if g.id not in named]
        if not gpus:
            return ""
        names = " or ".join(f"'{g.name}' ({', '.join(g.backends)})" for g in gpus)
        return (
            f"{device.name} is the chip's CPU; its GPU, {names}, usually runs llama.cpp faster: "
            + how.format(gpus[0].name)
        )

    def for_backend(self, device: Device, backend: str | None) -> Device:
        """The device a name means for a backend: a chip's CPU named with a GPU backend
        ('Ryzen AI Max+ 395' with rocm) means the chip's GPU, where the chip has exactly one
        catalogued GPU that runs it; anything else is the device itself."""
        if not backend or not device.is_cpu or backend in device.backends:
            return device
        gpus = [g for g in self.chip_gpus(device) if backend in g.backends]
        return gpus[0] if len(gpus) == 1 else device

    def try_resolve(self, name: str) -> Device | None:
        """The one device `name` means, or None (unknown, or several variants)."""
        found, best = self._match(name)
        top = _distinct(found[:best])
        return top[0] if len(top) == 1 else None

    def resolve(self, name: str) -> Device:
        """The device `name` means; an unknown name raises UnknownDeviceError with the closest
        names, one that fits several variants AmbiguousDeviceError listing them."""
        found, best = self._match(name)
        top = _distinct(found[:best])
        if len(top) == 1:
            return top[0]
        if top:
            raise AmbiguousDeviceError(name, _distinct(found)[:12])
        if family_only(name) or family_only(parse_name(name).base):
            raise UnknownDeviceError(
                f"'{name}' is a family name that many GPUs print (integrated ones among them), "
                "not one device: name the card or the chip (e.g. 'Radeon 780M', 'Ryzen 7 "
                "8840U', 'Arc 140V')."
            )
        raise UnknownDeviceError(
            f"Unknown device '{name}'. Closest: {', '.join(self.closest(name))}. "
            "Run 'advisor devices --search TEXT' to look one up."
        )

    def closest(self, name: str, n: int = 4) -> list[str]:
        key = parse_name(name).base or basic_key(name)
        names: dict[str, str] = {}
        for d in self.devices:
            for label in (d.name, *d.aliases):
                names.setdefault(parse_name(label).base, d.name)
        matches = difflib.get_close_matches(key, list(names), n=n * 3, cutoff=0.3)
        out: list[str] = []
        for m in matches:
            if names[m] not in out:
                out.append(names[m])
        return out[:n] or [d.name for d in self.devices[:n]]

    def search(self, text: str) -> list[Device]:
        """Devices matching `text`: what the name resolves to (all of its variants when it
        fits several) first, then the devices where each word begins a word of the name, an
        alias, the id, the vendor or the class ('M4' finds the Apple M4s, not an A100 SXM4)."""
        found: list[Device] = list(self.candidates(text))
        words = basic_key(text).split()
        for d in self.devices:
            hay = " ".join(
                basic_key(x) for x in (d.name, *d.aliases, d.id, d.vendor, d.device_class)
            ).split()
            if all(any(t.startswith(w) for t in hay) for w in words) and d not in found:
                found.append(d)
        return found


def _default_folder() -> Path:
    env = os.environ.get("ADVISOR_DEVICE_DB")
    if env:
        return Path(env)
    return bundled("device_db") / "devices"


def load_records(folder: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The raw records of every catalogue file, in file order."""
    base = Path(folder) if folder else _default_folder()
    records: list[dict[str, Any]] = []
    for path in sorted(base.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        records.extend(data["devices"])
    return records


@cache
def _load_cached(folder: str) -> Catalogue:
    return Catalogue([Device.from_record(r) for r in load_records(folder)])


def load_catalogue(folder: str | os.PathLike[str] | None = None) -> Catalogue:
    """The device catalogue (cached per folder)."""
    return _load_cached(str(Path(folder) if folder else _default_folder()))


def _add(index: dict[str, list[Device]], key: str, device: Device) -> None:
    if device not in index.setdefault(key, []):
        index[key].append(device)


def _distinct(devices: list[Device]) -> list[Device]:
    """Variants that differ in what a projection uses (bandwidth, memory, compute); records
    that agree on all of them count as one (the first)."""
    out: list[Device] = []
    seen: set[tuple[object, ...]] = set()
    for d in devices:
        key = (d.memory_bandwidth_gbs, d.memory_sizes_gb, d.fp32_tflops, d.fp16_tensor_tflops)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
