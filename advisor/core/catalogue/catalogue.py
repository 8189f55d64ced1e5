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
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.catalogue.names import basic_key, parse_name, strip_vendor
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import bundled


class UnknownDeviceError(InputError):
    """A device name that resolves to nothing; the message lists the closest names."""


class Catalogue:
    """All devices, with name resolution and search."""

    def __init__(self, devices: list[Device]):
        self.devices = devices
        self._by_id = {d.id: d for d in devices}
        self._order = {d.id: i for i, d in enumerate(devices)}
        self._exact: dict[str, Device] = {}
        self._stripped: dict[str, list[Device]] = {}
        self._base: dict[str, list[Device]] = {}
        for d in devices:
            for n in (d.name, *d.aliases, d.id.replace("-", " ")):
                self._exact.setdefault(basic_key(n), d)
                stripped = strip_vendor(basic_key(n))
                if d not in self._stripped.setdefault(stripped, []):
                    self._stripped[stripped].append(d)
                base = parse_name(n).base
                if d not in self._base.setdefault(base, []):
                    self._base[base].append(d)

    def __len__(self) -> int:
        return len(self.devices)

    def __iter__(self):
        return iter(self.devices)

    def by_id(self, device_id: str) -> Device | None:
        return self._by_id.get(device_id)

    def try_resolve(self, name: str) -> Device | None:
        """The device `name` means, or None."""
        if not name or not name.strip():
            return None
        if name in self._by_id:
            return self._by_id[name]
        key = basic_key(name)
        if key in self._exact:
            return self._exact[key]
        stripped = strip_vendor(key)
        hits = self._stripped.get(stripped, [])
        if len(hits) == 1:
            return hits[0]
        q = parse_name(name)
        candidates = list(self._base.get(q.base, []))
        if not candidates and q.base:
            # "A100 80GB": every device whose name holds all the words, fewest extra words first
            words = set(q.base.split())
            scored = sorted(
                (
                    (len(set(base.split()) - words), self._order[d.id], d)
                    for base, devices in self._base.items()
                    if words <= set(base.split())
                    for d in devices
                ),
                key=lambda item: item[:2],
            )
            seen: list[Device] = []
            for _, _, d in scored:
                if d not in seen:
                    seen.append(d)
            candidates = seen
        if not candidates:
            return None
        if q.gpu_cores is not None:
            candidates = [d for d in candidates if d.gpu_cores in (None, q.gpu_cores)]
        if q.memory_gb is not None and len(candidates) > 1:
            fitting = [d for d in candidates if q.memory_gb in d.memory_sizes_gb]
            candidates = fitting or candidates
        if not candidates:
            return None
        if len(candidates) > 1 and all(d.gpu_cores for d in candidates):
            # an Apple chip named without its GPU cores: the full variant, as sold most often
            return max(candidates, key=lambda d: d.gpu_cores or 0)
        return candidates[0]

    def resolve(self, name: str) -> Device:
        """The device `name` means; unknown names raise UnknownDeviceError with suggestions."""
        device = self.try_resolve(name)
        if device is not None:
            return device
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
        """Devices matching `text`: the one it resolves to first, then name/alias/id matches."""
        found: list[Device] = []
        exact = self.try_resolve(text)
        if exact:
            found.append(exact)
        words = basic_key(text).split()
        for d in self.devices:
            hay = " ".join(
                basic_key(x) for x in (d.name, *d.aliases, d.id, d.vendor, d.device_class)
            )
            if all(w in hay for w in words) and d not in found:
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
