"""One saved workload, and the check every field of one passes when it is read back.

The saved-workloads file is the user's (they may edit it by hand, a sync tool may damage it),
so each record is rebuilt field by field: the right type, a finite number in a sensible
range, every key present. A record that fails is refused with `DataError` naming the field;
the store then sets that record aside by itself and keeps the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from advisor.core.infra.serde import DataError, from_json, shown_json
from advisor.core.traffic.derive import TrafficStats
from advisor.core.traffic.errors import WorkloadNameError

MAX_NAME_CHARS = 60
MAX_TOKENS = 1e9  # no prompt, answer or history is a billion tokens
MAX_COUNT = 1e12
MAX_NOTES = 50
MAX_TEXT_CHARS = 2000
NUMBER_KEYS = ("prompt_tokens", "answer_tokens", "history_tokens", "concurrency",
               "requests_per_day")  # fmt: skip


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
    def from_json(cls, data: Any, name: str | None = None) -> SavedWorkload:
        """Back from `to_json`, every field checked (DataError naming the first bad one).
        `name` (the record's key in the file) wins over the name inside the record."""
        return saved_from_json(data, name)


def validate_name(name: object) -> str:
    """The name without surrounding blanks, or WorkloadNameError with one sentence."""
    clean = name.strip() if isinstance(name, str) else ""
    if not 1 <= len(clean) <= MAX_NAME_CHARS or not clean.isprintable():
        raise WorkloadNameError(
            f"A workload name needs 1 to {MAX_NAME_CHARS} printable characters; "
            "choose another name."
        )
    return clean


def _share(v: float) -> bool:
    return 0.0 <= v <= 1.0


def _tokens(v: float) -> bool:
    return 0.0 <= v <= MAX_TOKENS


def _count(v: float) -> bool:
    return 0.0 <= v <= MAX_COUNT


def _short_text(v: str) -> bool:
    return len(v) <= MAX_TEXT_CHARS


# each statistic's range (None always allowed where the type allows it)
_STAT_RANGES: dict[str, Callable[[Any], bool]] = {
    "format": _short_text,
    "counter": _short_text,
    "concurrency_basis": _short_text,
    "tokens": lambda v: v in ("exact", "estimated", "partly exact"),
    "notes": lambda v: len(v) <= MAX_NOTES and all(len(n) <= MAX_TEXT_CHARS for n in v),
    "idle_share": _share,
    "prefix_cache_share": _share,
    "requests": lambda v: 1 <= v <= MAX_COUNT,
    "conversations": _count,
    "malformed_skipped": _count,
    "requests_per_day": _count,
    "span_s": _count,
    "peak_concurrency": _tokens,
    "typical_concurrency": _tokens,
    "busy_p90_concurrency": _tokens,
    "schema": lambda v: v >= 1,
}


def _check_stats(raw: Any) -> TrafficStats:
    stats = from_json(TrafficStats, raw, "stats")
    for f in fields(TrafficStats):
        value = getattr(stats, f.name)
        if value is None:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise DataError(f"stats.{f.name} is not a finite number")
        check = _STAT_RANGES.get(f.name, _tokens)  # the rest are token counts
        if not check(value):
            raise DataError(f"stats.{f.name} is out of range ({_shown(value)})")
    return stats


def _check_numbers(raw: Any) -> dict[str, int | None]:
    numbers = from_json(dict[str, int | None], raw, "numbers")
    for key in NUMBER_KEYS:
        if key not in numbers:
            raise DataError(f"numbers lacks its '{key}' field")
        value = numbers[key]
        if value is not None and not 0 <= value <= MAX_TOKENS:
            raise DataError(f"numbers.{key} is out of range ({_shown(value)})")
    return {k: numbers[k] for k in NUMBER_KEYS}


def _shown(value: object) -> str:
    return shown_json(value, 30)


def saved_from_json(raw: Any, name: str | None = None) -> SavedWorkload:
    """A SavedWorkload from one record of the file, every field checked (DataError)."""
    if not isinstance(raw, dict):
        raise DataError("the record is not an object")
    for key in ("stats", "numbers", "saved_at_s"):
        if key not in raw:
            raise DataError(f"the record lacks its '{key}' field")
    try:
        clean = validate_name(str(raw.get("name", "")) if name is None else name)
    except WorkloadNameError:
        raise DataError("its name is empty, too long or not printable") from None
    saved_at = raw["saved_at_s"]
    if isinstance(saved_at, bool) or not isinstance(saved_at, int | float):
        raise DataError(f"saved_at_s should be a number, not {_shown(saved_at)}")
    if not 0 <= saved_at <= 1e11:
        raise DataError(f"saved_at_s is out of range ({_shown(saved_at)})")
    return SavedWorkload(clean, _check_stats(raw["stats"]), _check_numbers(raw["numbers"]),
                         float(saved_at))  # fmt: skip
