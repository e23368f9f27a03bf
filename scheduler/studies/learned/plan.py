"""The learned-priority-function study's plan: the ``learned`` config section checked (the
training tuples and trials, the regression, the evaluation's workloads, modes and policies) and
the jobs it implies. Errors name the config key.

Workloads of the evaluation are catalogue logs (by name) or the workload model at a machine
size, written ``model-<processors>`` (e.g. ``model-256``, ``model-1024``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.core.errors import ConfigurationError, quote
from scheduler.studies.common.config import TraceEntry, catalogue_entries, policy_list
from scheduler.studies.learned.evaluation import MODES

__all__ = [
    "FUNCTION_PREFIX",
    "LearnedPlan",
    "Workload",
    "learned_plan",
    "model_workload",
]

#: Names of the learned functions in the evaluation: LF1 is the rank-1 function of the fit.
FUNCTION_PREFIX = "LF"
_MODEL = re.compile(r"^model-([0-9]+)$")
_JOB_TYPES = ("combined", "mixed", "batch", "interactive")


@dataclass(frozen=True)
class Workload:
    """An evaluation workload: a catalogue log (``trace`` set) or the model at ``model_procs``
    processors; ``machine_procs`` overrides the log's machine size (``None``: the catalogue's
    or the log header's)."""

    name: str
    trace: TraceEntry | None = None
    model_procs: int | None = None
    machine_procs: int | None = None

    @property
    def is_model(self) -> bool:
        return self.model_procs is not None


def model_workload(name: str) -> int | None:
    """The machine size of a ``model-<processors>`` workload name, else ``None``."""
    match = _MODEL.match(name)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class LearnedPlan:
    """The learned-priority-function study, checked."""

    seed: int
    model_procs: int
    model_jobs: int
    job_types: str
    tuples: int
    tuples_per_job: int
    state_jobs: int
    queue_jobs: int
    trials: int
    tau_s: float
    top: int
    convergence_trials: tuple[int, ...]
    convergence_repetitions: int
    workloads: tuple[Workload, ...]
    sequences: int | None
    random_sequences: bool
    days: float
    modes: tuple[str, ...]
    policies: tuple[str, ...]

    @property
    def batches(self) -> int:
        """Jobs of training tuples (the last one may hold fewer tuples)."""
        return -(-self.tuples // self.tuples_per_job)

    def batch_tuples(self, batch: int) -> range:
        """The tuple numbers of one batch."""
        if not 0 <= batch < self.batches:
            raise ConfigurationError(f"tuple batch {batch} is not in 0..{self.batches - 1}")
        first = batch * self.tuples_per_job
        return range(first, min(first + self.tuples_per_job, self.tuples))

    @property
    def learned_names(self) -> tuple[str, ...]:
        """The learned functions' policy names in the evaluation: LF1 … LF<top>."""
        return tuple(f"{FUNCTION_PREFIX}{rank}" for rank in range(1, self.top + 1))

    @property
    def evaluated_policies(self) -> tuple[str, ...]:
        return self.policies + self.learned_names

    def workload(self, name: str) -> Workload:
        for workload in self.workloads:
            if workload.name == name:
                return workload
        raise ConfigurationError(f"no evaluation workload {name!r}")

    @property
    def model_sizes(self) -> tuple[int, ...]:
        """Machine sizes of the model traces the study generates (training and evaluation)."""
        sizes = {self.model_procs}
        sizes.update(w.model_procs for w in self.workloads if w.model_procs is not None)
        return tuple(sorted(sizes))


def _integer(section: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(
            f"config learned.{key}: must be an integer in {low}..{high}, got {quote(value)}"
        )
    return value


def _names(value: object, key: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigurationError(f"config {key}: must be a list, got {quote(value)}")
    return [str(item) for item in value]


def _workloads(config: Mapping[str, Any], evaluation: Mapping[str, Any]) -> tuple[Workload, ...]:
    names = _names(evaluation.get("workloads", ["model-256"]), "learned.evaluation.workloads")
    if not names:
        raise ConfigurationError("config learned.evaluation.workloads: give at least one")
    if len(set(names)) != len(names):
        raise ConfigurationError("config learned.evaluation.workloads: a name is listed twice")
    sizes = evaluation.get("machine_procs") or {}
    if not isinstance(sizes, Mapping):
        raise ConfigurationError("config learned.evaluation.machine_procs: must be a mapping")
    for name, size in sizes.items():
        if name not in names:
            raise ConfigurationError(
                f"config learned.evaluation.machine_procs: {name!r} is not an evaluation workload"
            )
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ConfigurationError(
                f"config learned.evaluation.machine_procs.{name}: must be an integer >= 1"
            )
    workloads = []
    for name in names:
        procs = model_workload(name)
        if procs is not None:
            if not 1 <= procs <= 1_000_000:
                raise ConfigurationError(
                    f"config learned.evaluation.workloads: {name!r}: 1..1000000 processors"
                )
            workloads.append(Workload(name, model_procs=procs, machine_procs=procs))
        else:
            entry = catalogue_entries(config, [name], "learned.evaluation.workloads")[0]
            size = sizes.get(name, entry.machine_procs)
            workloads.append(Workload(name, trace=entry, machine_procs=size))
    return tuple(workloads)


def _job_types(value: object) -> str:
    if value not in _JOB_TYPES:
        raise ConfigurationError(
            f"config learned.model_job_types: {quote(value)} must be one of {', '.join(_JOB_TYPES)}"
        )
    return str(value)


def learned_plan(config: Mapping[str, Any]) -> LearnedPlan:
    """Check the ``learned`` section of a (schema-validated) config and return its plan."""
    section = config.get("learned") or {}
    evaluation = section.get("evaluation") or {}
    convergence = section.get("convergence") or {}
    state = _integer(section, "state_jobs", 16, 0, 1000)
    queue = _integer(section, "queue_jobs", 32, 1, 1000)
    tau_s = float(section.get("tau_s", 10.0))
    if not tau_s > 0:
        raise ConfigurationError(f"config learned.tau_s: must be > 0, got {tau_s!r}")
    trials = _integer(section, "trials", 4096, 1, 100_000_000)
    counts = tuple(int(t) for t in convergence.get("trials", [1000, 4000]))
    if not counts or any(t < 1 for t in counts) or list(counts) != sorted(set(counts)):
        raise ConfigurationError(
            f"config learned.convergence.trials: give increasing trial counts >= 1, got {counts}"
        )
    repetitions = int(convergence.get("repetitions", 10))
    if repetitions < 2:
        raise ConfigurationError("config learned.convergence.repetitions: must be >= 2")
    modes = tuple(_names(evaluation.get("modes", list(MODES)), "learned.evaluation.modes"))
    for mode in modes:
        if mode not in MODES:
            raise ConfigurationError(
                f"config learned.evaluation.modes: {mode!r} must be one of {', '.join(MODES)}"
            )
    if not modes or len(set(modes)) != len(modes):
        raise ConfigurationError("config learned.evaluation.modes: give distinct modes")
    policies = policy_list(
        _names(evaluation.get("policies", ["FCFS"]), "learned.evaluation.policies"),
        "learned.evaluation.policies",
    )
    sequences = evaluation.get("sequences", 10)
    if sequences is not None and (
        isinstance(sequences, bool) or not isinstance(sequences, int) or sequences < 1
    ):
        raise ConfigurationError(
            f"config learned.evaluation.sequences: an integer >= 1 or null (all), got "
            f"{quote(sequences)}"
        )
    days = float(evaluation.get("days", 15.0))
    if not days > 0:
        raise ConfigurationError(f"config learned.evaluation.days: must be > 0, got {days!r}")
    model_procs = _integer(section, "model_procs", 256, 1, 1_000_000)
    return LearnedPlan(
        seed=int(config.get("seed", 0)),
        model_procs=model_procs,
        model_jobs=_integer(section, "model_jobs", 20_000, state + queue, 10_000_000),
        job_types=_job_types(section.get("model_job_types", "combined")),
        tuples=_integer(section, "tuples", 32, 1, 1_000_000),
        tuples_per_job=_integer(section, "tuples_per_job", 8, 1, 100_000),
        state_jobs=state,
        queue_jobs=queue,
        trials=trials,
        tau_s=tau_s,
        top=_integer(section, "top", 4, 1, 576),
        convergence_trials=counts,
        convergence_repetitions=repetitions,
        workloads=_workloads(config, evaluation),
        sequences=sequences,
        random_sequences=bool(evaluation.get("random_sequences", False)),
        days=days,
        modes=modes,
        policies=policies,
    )
