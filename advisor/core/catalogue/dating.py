"""How current the catalogue is: the newest date its data records.

The catalogue files carry no edition date of their own, so the date is the newest one the
data itself records about when something was read: the ggml snapshot the backend-path table
was read from, street and used prices (`street_price_date`, `used_price_date`), and sources
noted as "read here (YYYY-MM-DD)". Launch dates are left out: they date a product, not the
data. Saved runs, exports, the About box and `advisor --version` all take the date from here.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.catalogue.catalogue import load_records
from advisor.core.infra.paths import bundled

_READ_ON = re.compile(r"read here \((\d{4}-\d{2}-\d{2})")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


@dataclass(frozen=True)
class CatalogueDate:
    """The catalogue's date (ISO, "2026-08-21"; "" when the data records none) and what it
    is the date of, in words."""

    date: str
    basis: str

    def __str__(self) -> str:
        return f"{self.date} ({self.basis})" if self.date else "not recorded"


def catalogue_date(
    devices_folder: str | os.PathLike[str] | None = None,
    backend_paths_file: str | os.PathLike[str] | None = None,
) -> CatalogueDate:
    """The newest date recorded in the catalogue's data, and what it dates (cached)."""
    return _dated(
        str(devices_folder or ""),
        str(backend_paths_file or bundled("device_db") / "backend_paths.json"),
    )


@cache
def _dated(devices_folder: str, backend_paths_file: str) -> CatalogueDate:
    found: list[tuple[str, str]] = []
    for record in load_records(devices_folder or None):
        found += _record_dates(record)
    found += _snapshot_dates(Path(backend_paths_file))
    if not found:
        return CatalogueDate("", "the catalogue records no date")
    date, basis = max(found, key=lambda item: item[0])
    return CatalogueDate(date, basis)


def _record_dates(record: dict[str, Any]) -> list[tuple[str, str]]:
    name = record.get("name", record.get("id", "?"))
    out: list[tuple[str, str]] = []
    for key, what in (("street_price_date", "street price"), ("used_price_date", "used price")):
        street = record.get(key)
        if isinstance(street, str) and _ISO_DATE.match(street):
            out.append((street, f"{what} of the {name}"))
    for source in record.get("sources") or ():
        for date in _READ_ON.findall(str(source.get("note", ""))):
            out.append((date, f"a source of the {name} read on that day"))
    return out


def _snapshot_dates(path: Path) -> list[tuple[str, str]]:
    """The commit date of the ggml snapshot the backend-path table was read from
    ("d99724f... Fri Aug 21 15:39:22 2026 +0300")."""
    try:
        snapshot = json.loads(path.read_text(encoding="utf-8")).get("snapshot") or {}
    except (OSError, ValueError):
        return []
    commit = str(snapshot.get("ggml_commit", ""))
    sha, _, when = commit.partition(" ")
    try:
        day = datetime.strptime(when.strip(), "%a %b %d %H:%M:%S %Y %z").date().isoformat()
    except ValueError:
        return []
    return [(day, f"the ggml snapshot {sha[:7]} the backend-path table was read from")]
