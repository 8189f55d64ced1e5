"""The events a benchmark yields, and their JSON-line form between the child and the parent.

The child process that runs llama.cpp yields `Progress` events and then exactly one
`RunResult` or one `Failure`; they travel as JSON lines and are rebuilt here on the other side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.core.infra.serde import from_json, json_safe, to_json
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.results import RunHardware, RunResult


@dataclass(frozen=True)
class Progress:
    """A step of a run: phase ('writing model', 'loading', 'warm-up', test name), live speed."""

    phase: str
    step: int
    total: int
    tokens_per_s: float | None = None
    eta_s: float | None = None
    message: str = ""

    kind = "progress"


@dataclass(frozen=True)
class Failure:
    """The run failed or was cancelled: one plain sentence, and details to copy."""

    message: str
    details: str = ""
    cancelled: bool = False
    user_error: bool = False  # bad input (a wrong file, a model too big): not a failed run

    kind = "error"


Event = Progress | Failure | RunResult


@dataclass(frozen=True)
class BenchRequest:
    """What the parent sends the child: the settings, the machine facts a saved run keeps,
    and the app folder to use."""

    config: BenchConfig
    hardware: RunHardware = field(default_factory=RunHardware)
    home: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(to_json(self))

    @classmethod
    def from_json(cls, data: Any) -> BenchRequest:
        return from_json(cls, data, "the benchmark request")


def event_to_json(event: Event) -> dict[str, Any]:
    """The JSON-line form of an event: {'event': kind, ...}."""
    body = event.to_json() if isinstance(event, RunResult) else to_json(event)
    return dict(json_safe({"event": event.kind, **body}))


def event_from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from its JSON-line form (a malformed one raises DataError)."""
    kind = data.get("event")
    body = {k: v for k, v in data.items() if k != "event"}
    if kind == "progress":
        return from_json(Progress, body, "a progress event")
    if kind == "error":
        return from_json(Failure, body, "an error event")
    if kind == "result":
        return RunResult.from_json(body)
    raise ValueError(f"unknown event {kind!r}")
