"""Every number the user types, checked once before any work starts.

The command line and the app use the same validators, so a value refused in one is refused in
the other with the same sentence. Each names the field (as the front end calls it), the range
it takes, and what was given: "--threads takes a whole number from 1 to 512, not -1."
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from advisor.core.infra.errors import InputError

# a comma is read only as a thousands separator ("12,345"): "1,5" is a European decimal or a
# typo, and reading it as 15 would be a silent mistake
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")


def _plain(text: str) -> str | None:
    """The number text without thousands separators, or None for a comma used otherwise."""
    text = text.strip()
    if "," not in text:
        return text
    return text.replace(",", "") if _THOUSANDS.fullmatch(text) else None


def _shown(value: object) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 30 else text[:27] + "..."


def whole_number(label: str, value: object, low: int, high: int) -> int:
    """A whole number in [low, high], or InputError naming the field and the range."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        plain = _plain(value)
        try:
            number = int(plain.replace("_", "")) if plain is not None else None
        except ValueError:
            number = None
    if number is None or not low <= number <= high:
        raise InputError(
            f"{label} takes a whole number from {low:,} to {high:,}, not {_shown(value)}."
        )
    return number


def number(
    label: str,
    value: object,
    low: float,
    high: float,
    *,
    unit: str = "",
    low_inclusive: bool = False,
) -> float:
    """A finite number in (low, high] (or [low, high]), else InputError with the range."""
    result: float | None = None
    if isinstance(value, bool):
        result = None
    elif isinstance(value, (int, float)):
        result = float(value)
    elif isinstance(value, str):
        plain = _plain(value)
        try:
            result = float(plain) if plain is not None else None
        except ValueError:
            result = None
    suffix = f" {unit}" if unit else ""
    ok = (
        result is not None
        and math.isfinite(result)
        and (result >= low if low_inclusive else result > low)
        and result <= high
    )
    if not ok:
        above = f"{'at least' if low_inclusive else 'more than'} {low:g}"
        raise InputError(
            f"{label} takes a number {above} and at most {high:,g}{suffix}, not {_shown(value)}."
        )
    assert result is not None
    return result


def whole_numbers(label: str, text: str, low: int, high: int, *, most: int = 16) -> tuple[int, ...]:
    """Comma-separated whole numbers ("0,4096"), each in [low, high], at most `most` of them."""
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise InputError(f"{label} takes whole numbers separated by commas, not {_shown(text)}.")
    if len(parts) > most:
        raise InputError(f"{label} takes at most {most} values, not {len(parts)}.")
    values = tuple(whole_number(label, p, low, high) for p in parts)
    return tuple(dict.fromkeys(values))  # repeated values would run the same test twice


def one_of(label: str, value: str, allowed: Iterable[str]) -> str:
    """One of the allowed words (case-insensitive), else InputError listing them."""
    options = list(allowed)
    key = str(value).strip().lower()
    if key not in options:
        raise InputError(f"{label} takes one of {', '.join(options)}, not {_shown(value)}.")
    return key
