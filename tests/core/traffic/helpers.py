"""Helpers for the traffic-import tests."""

from __future__ import annotations

import re


def one_sentence(message: str) -> bool:
    """True when `message` is one plain sentence: one line, ends with a full stop."""
    return (
        message.endswith(".")
        and "\n" not in message
        and re.search(r"[.!?] [A-Z]", message) is None
        and len(message) < 300
    )
