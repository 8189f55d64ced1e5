"""Sentences a person must read although the command went on: a damaged file set aside, a
folder that could not be written. The code that finds such a thing `tell`s it once; the front
end `take`s what was told and shows it (the command line on stderr after its output, or inside
its one error line; the app in its banner).

A process-wide channel, like logging: the files that heal themselves are read deep inside
use cases that return data, not sentences, and threading a notice out through every return
value would change a dozen signatures for a message that is rare.
"""

from __future__ import annotations

import logging
import threading

_pending: list[str] = []
_guard = threading.Lock()
log = logging.getLogger(__name__)


def tell(sentence: str) -> None:
    """Keep `sentence` for the front end to show (once, however often it is told)."""
    log.info("told: %s", sentence)
    with _guard:
        if sentence not in _pending:
            _pending.append(sentence)


def take() -> list[str]:
    """The sentences told since the last call, oldest first; the channel is then empty."""
    with _guard:
        out = list(_pending)
        _pending.clear()
    return out
