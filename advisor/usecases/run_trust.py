"""Which run an answer can rest on, and what to say about it.

A run made while other programs were busy measured this machine too slow, so every speed-up
built on it is too high; a run whose repetitions spread is doubtful either way. The answer says
so where it is read (Upgrade, Compare, the report card, `advisor upgrade`), and where a quiet run
of the same model on the same device is on record, it rests on that one instead and says so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.runs.results import RunResult


@dataclass(frozen=True)
class RunTrust:
    """The run the answer uses, the run the user has open, and the sentences about them."""

    used: RunResult | None  # what the projections rest on
    shown: RunResult | None  # the run the user has open
    warning: str = ""  # the used run was disturbed or doubtful ('' when quiet)
    note: str = ""  # the shown run was set aside for a quiet one of the same model

    @property
    def disturbed(self) -> bool:
        return bool(self.warning)

    @property
    def replaced(self) -> bool:
        return self.used is not None and self.shown is not None and self.used is not self.shown

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": self.used.id if self.used else None,
            "shown_run_id": self.shown.id if self.shown else None,
            "disturbed": self.disturbed,
            "warning": self.warning,
            "note": self.note,
        }


def other_load(run: RunResult) -> float | None:
    """The most of the CPU other programs used during the run (0.62 for 62%), if measured."""
    loads = [t.other_cpu_load for t in run.tests if t.other_cpu_load is not None]
    return max(loads) if loads else None


def trouble(run: RunResult) -> str:
    """What was wrong with a run, in a clause ('' for a quiet one)."""
    if run.busy:
        load = other_load(run)
        used = f" {load:.0%} of" if load is not None else ""
        return f"other programs used{used} the CPU while it ran"
    if run.noisy:
        return "its repetitions varied by more than 5%"
    return ""


def _warning(run: RunResult) -> str:
    if run.busy:
        return (
            f"Your run was disturbed: {trouble(run)}, so it measured this machine too slow and "
            "the speed-ups are probably too high. Measure again with other programs closed."
        )
    if run.noisy:
        return (
            f"Your run is doubtful: {trouble(run)}, so the speed-ups may be off either way. "
            "Measure again on a quieter machine."
        )
    return ""


def same_measurement(a: RunResult, b: RunResult) -> bool:
    """Two runs of the same model file or shape, on the same device and backend."""
    return (
        a.model.name == b.model.name
        and a.model.file_type == b.model.file_type
        and a.model.weights_bytes == b.model.weights_bytes
        and a.device_name == b.device_name
        and a.hardware.backend == b.hardware.backend
        and a.config.gpu_layers == b.config.gpu_layers
    )


def run_trust(shown: RunResult | None, history: Sequence[RunResult] = ()) -> RunTrust:
    """The run an answer rests on: the shown one, or, where it was disturbed or doubtful, the
    newest quiet run of the same model on the same device in the history."""
    if shown is None or not (shown.busy or shown.noisy):
        return RunTrust(shown, shown)
    quiet = [
        r
        for r in history
        if r.id != shown.id and not (r.busy or r.noisy) and same_measurement(r, shown)
    ]
    if not quiet:
        return RunTrust(shown, shown, _warning(shown))
    best = max(quiet, key=lambda r: r.created_at)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(best.created_at))
    note = (
        f"Your latest run of this model was disturbed ({trouble(shown)}); this answer uses "
        f"your quiet run of {when} instead."
    )
    return RunTrust(best, shown, "", note)
