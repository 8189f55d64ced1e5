"""Looking a name up among known names, and the "did you mean" sentence when it is unknown.

Shapes, workloads, quantisations and catalogue devices all answer an unknown name the same
way: with the closest known names, so a typo costs the user one glance, not a search.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def normalise_key(name: str) -> str:
    """Lower case, surrounding space removed, '_' and inner spaces as '-' ("Long Chat" ->
    "long-chat")."""
    return "-".join(name.strip().lower().replace("_", " ").split())


def closest(name: str, known: Iterable[str], n: int = 3, cutoff: float = 0.4) -> list[str]:
    """Up to n known names that look most like `name`, best first."""
    return difflib.get_close_matches(name, list(known), n=n, cutoff=cutoff)


def did_you_mean(name: str, known: Iterable[str], n: int = 3, cutoff: float = 0.4) -> str:
    """' Did you mean a, b or c?' for the closest known names, or '' when none is close."""
    close = closest(name, known, n, cutoff)
    if not close:
        return ""
    listed = close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]
    return f" Did you mean {listed}?"
