"""The projections behind the answers, by name, for a child process (or, where there is none,
a thread of the app): the Upgrade candidates, the Compare table, a verdict, the Charts curves.

Requests and answers are plain dataclasses (the model's facts, the workload, the host, the
run's reference; projections back), so they cross a process boundary as they are. The child
loads the catalogue and the speed model once, in `start_child`; the app's own process never
waits on the GIL behind them (a computation in a thread of the app held the window for
95-177 ms after a run on 2 cores).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.usecases.charts import run_curves
from advisor.usecases.compare import projection_table, verdict
from advisor.usecases.upgrade import project_candidates


@dataclass
class _Loaded:
    """What the child process loads once: its catalogue and speed model."""

    catalogue: Catalogue | None = None
    speed_model: SpeedModel | None = None


# the child process's own copy (one per process, set by start_child; the app never uses it)
_CHILD = _Loaded()


def start_child() -> None:
    """The child process's initializer: load the catalogue and the speed model once."""
    _CHILD.catalogue = load_catalogue()
    _CHILD.speed_model = load_speed_model()


def ready() -> bool:
    """A request that only makes the child load (the app asks it once, after start-up)."""
    return _CHILD.catalogue is not None


ANSWERS: dict[str, Callable[..., Any]] = {
    "upgrade": lambda c, m, kw: project_candidates(catalogue=c, speed_model=m, **kw),
    "table": lambda c, m, kw: projection_table(catalogue=c, speed_model=m, **kw),
    "verdict": lambda c, m, kw: verdict(speed_model=m, **kw),
    "curves": lambda c, m, kw: run_curves(catalogue=c, speed_model=m, **kw),
}


def answer(
    name: str,
    kwargs: dict[str, Any],
    catalogue: Catalogue | None = None,
    speed_model: SpeedModel | None = None,
) -> Any:
    """The answer `name` for the request's arguments, with the catalogue and speed model given
    (the app's own, on a thread) or the child's."""
    if name == "ready":
        return ready()
    catalogue = catalogue or _CHILD.catalogue or load_catalogue()
    model = speed_model or _CHILD.speed_model or load_speed_model()
    return ANSWERS[name](catalogue, model, kwargs)
