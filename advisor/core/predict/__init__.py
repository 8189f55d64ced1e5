"""Prediction: what a machine does with a model, from physics and published llama.cpp results.

docs/MODEL.md states the speed model whole (every term, its equation, how its value is set and
its evidence); this package computes it. It is layered by responsibility, each layer importing
only those below it (an import-linter contract in pyproject.toml):

    advising      verdicts, how a speed feels, price and energy, a run's explanation
    projecting    a model and workload on a catalogued device (or several): `project`,
    | fitting     the user's run as the reference, bases and bands; fitting the speed model
                  on published rows, held-out searches and bands, the shipped fit
    model         the speed model itself: `SpeedModel` (what a device does, given fitted
                  values), the efficiency terms (`Key`, `RidgeFit`), the published rows it
                  rests on (`Observation`), band lookup
    physics       ceilings, bytes and FLOPs per step, usable compute, memory capacity
    | conditions  what is asked of the machine: workloads and test points

The central types: `ModelFacts` (advisor.core.model.facts: the model's bytes and FLOPs),
`Device` (the catalogue), `Workload` (conditions), `SpeedModel` (model), `Target` and
`Projection` (projecting). A front end gets the model once from
`fitting.shipped.load_speed_model()` and passes it to everything that predicts.
"""
