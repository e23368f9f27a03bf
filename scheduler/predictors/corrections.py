"""The correction registry of the run-time prediction study.

A correction revises the prediction of a running job that reaches its predicted end and is still
running (never above the requested time p̃_j). The rules are applied inside the compiled
simulation (``scheduler/sim/_predict_kernel.py``); this registry holds their names and
descriptions (``docs/simulator.md``, "Run-time prediction inside the simulation").
"""

from __future__ import annotations

from scheduler.core.registry import Registry

#: INCREMENTAL's steps (s): the k-th correction sets the prediction to the original one plus the
#: k-th step (1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h), then p̃_j.
INCREMENTS_S: tuple[float, ...] = (
    60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 18000.0, 36000.0, 72000.0, 180000.0, 360000.0,
)  # fmt: skip

#: Corrections by name (lower case). The items are the names themselves.
CORRECTIONS: Registry[str] = Registry("correction", canonical=str.lower)

CORRECTIONS.add("requested", "requested", "REQUESTED TIME: set the prediction to p̃_j")
CORRECTIONS.add(
    "incremental",
    "incremental",
    "INCREMENTAL: k-th correction = original prediction + 1 min, 5 min, 15 min, 30 min, 1 h, "
    "2 h, 5 h, 10 h, 20 h, 50 h, 100 h, then p̃_j",
)
CORRECTIONS.add("doubling", "doubling", "RECURSIVE DOUBLING: double the current prediction")
