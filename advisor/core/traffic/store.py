"""Saved named workloads (statistics and numbers, never text) in one JSON file.

Writes are atomic: a temporary file in the same folder, fsync, then os.replace, so a crash
leaves the previous content whole. A file that cannot be read is set aside under a unique
name (never overwritten) and the store starts empty, saying so once in `notice`.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.infra.atomic import atomic_write_bytes
from advisor.core.traffic.derive import TrafficStats, workload_numbers
from advisor.core.traffic.errors import WorkloadNameError

SCHEMA = 1
MAX_NAME_CHARS = 60


@dataclass(frozen=True)
class SavedWorkload:
    """A named workload derived from traffic: its statistics and the Workload numbers."""

    name: str
    stats: TrafficStats
    numbers: dict[str, int | None]
    saved_at_s: float

    def to_json(self) -> dict[str, Any]:
        """A dict of JSON types."""
        return {
            "name": self.name,
            "stats": self.stats.to_json(),
            "numbers": dict(self.numbers),
            "saved_at_s": self.saved_at_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SavedWorkload:
        """Back from `to_json`."""
        return cls(
            name=str(data["name"]),
            stats=TrafficStats.from_json(data["stats"]),
            numbers=dict(data["numbers"]),
            saved_at_s=float(data["saved_at_s"]),
        )


def validate_name(name: str) -> str:
    """The name without surrounding blanks, or WorkloadNameError with one sentence."""
    clean = name.strip() if isinstance(name, str) else ""
    if not 1 <= len(clean) <= MAX_NAME_CHARS or not clean.isprintable():
        raise WorkloadNameError(
            f"A workload name needs 1 to {MAX_NAME_CHARS} printable characters; "
            "choose another name."
        )
    return clean


class WorkloadStore:
    """Named workloads in one JSON file at `path`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.notice: str | None = None  # one sentence when a corrupt file was set aside

    def load(self) -> dict[str, SavedWorkload]:
        """All saved workloads by name; a corrupt file is set aside and reads as empty."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
            items = data["workloads"]
            return {name: SavedWorkload.from_json(item) for name, item in items.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            aside = self._set_aside()
            self.notice = (
                f"The saved workloads file could not be read, so it was kept as {aside.name} "
                "and a new one was started."
            )
            return {}

    def save(self, name: str, stats: TrafficStats, now_s: float | None = None) -> SavedWorkload:
        """Save (or replace) the workload `name` from `stats`."""
        clean = validate_name(name)
        item = SavedWorkload(
            clean, stats, workload_numbers(stats), time.time() if now_s is None else now_s
        )
        items = self.load()
        items[clean] = item
        self._write(items)
        return item

    def delete(self, name: str) -> bool:
        """Remove `name`; False if there was no such workload."""
        items = self.load()
        if items.pop(name.strip(), None) is None:
            return False
        self._write(items)
        return True

    def _write(self, items: dict[str, SavedWorkload]) -> None:
        doc = {"schema": SCHEMA, "workloads": {k: v.to_json() for k, v in sorted(items.items())}}
        data = json.dumps(doc, indent=1, ensure_ascii=False).encode("utf-8")
        atomic_write_bytes(self.path, data)

    def _set_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        while True:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{uuid.uuid4().hex[:8]}")
            if not aside.exists():
                break
        os.replace(self.path, aside)
        return aside
