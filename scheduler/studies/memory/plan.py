"""The memory-aware cluster study's plan: the ``memory`` config section checked (logs, machine,
loads, schedulers, estimator variants, seeds, the second class's memory sweep) and the
simulation jobs it implies. Errors name the config key (``memory.<key>``).

An *estimator variant* is spelled ``<estimator>`` or ``<estimator>-<feedback>[-<gradient>]``:
the estimator one of :data:`~scheduler.sim.memory.MEMORY_ESTIMATORS`, the feedback (perceptron
only, which needs one) one of :data:`~scheduler.sim.memory.MEMORY_FEEDBACKS`, the gradient
(perceptron only, ``literal`` when left out: Algorithm 1 as written) one of
:data:`~scheduler.sim.memory.MEMORY_GRADIENTS`; e.g. ``none``, ``perceptron-implicit``,
``perceptron-explicit``, ``perceptron-implicit-raise``, ``perceptron-explicit-normalised``,
``history``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.core.errors import ConfigurationError, quote
from scheduler.sim.memory import (
    MEMORY_ESTIMATORS,
    MEMORY_FEEDBACKS,
    MEMORY_GRADIENTS,
    MEMORY_LIMITS,
    MEMORY_SCHEDULERS,
)
from scheduler.studies.common.config import TraceEntry, catalogue_entries, confidence_level
from scheduler.traces.memory import UNDER_REQUEST_MODES

__all__ = ["BASELINE", "MemoryPlan", "Variant", "memory_label", "memory_plan", "parse_variant"]

#: The variant without estimation (every job allocated its request): the reference of ratios.
BASELINE = "none"
#: The estimators that take a feedback (the others ignore it).
_LEARNERS = ("perceptron",)


def memory_label(value: float) -> str:
    """The path-safe label of a load or a memory size: ``f"{value:g}"`` (``0.5``, ``24``)."""
    return f"{value:g}"


@dataclass(frozen=True)
class Variant:
    """An estimator variant: its label, the engine's ``estimator``, ``feedback`` and
    ``gradient`` (the last two matter to the perceptron only)."""

    label: str
    estimator: str
    feedback: str = "implicit"
    gradient: str = "literal"

    @property
    def random(self) -> bool:
        """Whether its runs depend on the seed (the baseline never fails, so draws nothing)."""
        return self.estimator != BASELINE


def parse_variant(text: object, key: str = "memory.estimators") -> Variant:
    """A :class:`Variant` from its spelling (module docstring); errors name ``key``."""
    label = str(text).strip().lower()
    for estimator in sorted(MEMORY_ESTIMATORS.names(), key=len, reverse=True):
        if label == estimator:
            if estimator in _LEARNERS:
                raise ConfigurationError(
                    f"config {key}: {text!r} needs a feedback: "
                    + ", ".join(f"{estimator}-{f}" for f in MEMORY_FEEDBACKS)
                )
            return Variant(label, estimator)
        if label.startswith(estimator + "-") and estimator in _LEARNERS:
            rest = label.removeprefix(estimator + "-")
            # the longest feedback first: "implicit-raise" is a feedback, not implicit + gradient
            feedback, gradient = rest, ""
            for name in sorted(MEMORY_FEEDBACKS, key=len, reverse=True):
                if rest == name or rest.startswith(name + "-"):
                    feedback, gradient = name, rest[len(name) + 1 :]
                    break
            if feedback not in MEMORY_FEEDBACKS:
                raise ConfigurationError(
                    f"config {key}: {text!r}: unknown feedback {feedback!r}; known: "
                    + ", ".join(MEMORY_FEEDBACKS)
                )
            if gradient and gradient not in MEMORY_GRADIENTS:
                raise ConfigurationError(
                    f"config {key}: {text!r}: unknown gradient {gradient!r}; known: "
                    + ", ".join(MEMORY_GRADIENTS)
                )
            return Variant(label, estimator, feedback, gradient or "literal")
    names = MEMORY_ESTIMATORS.names()
    known = [e for e in names if e not in _LEARNERS] + [
        f"{e}-{f}" for e in _LEARNERS if e in names for f in MEMORY_FEEDBACKS
    ]
    raise ConfigurationError(
        f"config {key}: unknown estimator {quote(text)}; known: {', '.join(known)}"
    )


@dataclass(frozen=True)
class MemoryPlan:
    """The memory-aware cluster study, checked (see config/README.md for every key)."""

    traces: tuple[TraceEntry, ...]
    slice_jobs: int | None
    class_nodes: tuple[int, ...]
    class_memory_mb: tuple[float, ...]
    loads: tuple[float, ...]
    schedulers: tuple[str, ...]
    variants: tuple[Variant, ...]
    seeds: tuple[int, ...]
    sweep_memory_mb: tuple[float, ...]
    sweep_load: float
    saturation_load: float
    under_request: str = "raise"
    memory_limit: str = "node"
    max_failures: int = 50
    confidence: float = 0.95
    #: schedulers of the sweep (a subset of ``schedulers``; empty: all of them)
    sweep_schedulers: tuple[str, ...] = ()

    @property
    def sweep_scheduler_names(self) -> tuple[str, ...]:
        """The schedulers the memory sweep runs under (``memory.memory_sweep.schedulers``)."""
        return self.sweep_schedulers or self.schedulers

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    @property
    def machine_nodes(self) -> int:
        """Nodes of the machine (one processor each), the same in every sweep point."""
        return sum(self.class_nodes)

    @property
    def largest_node_kb(self) -> float:
        """The largest node memory, KB, that every machine of the study has (the filter drops
        jobs using more: they could fail forever on some sweep point)."""
        machines = [self.class_memory_mb] + [self.sweep_machine(mb)[1] for mb in
                                             self.sweep_memory_mb]  # fmt: skip
        return min(max(memories) for memories in machines) * 1024.0

    @property
    def variant_labels(self) -> tuple[str, ...]:
        return tuple(v.label for v in self.variants)

    @property
    def load_labels(self) -> tuple[str, ...]:
        return tuple(memory_label(load) for load in self.loads)

    @property
    def sweep_labels(self) -> tuple[str, ...]:
        return tuple(memory_label(mb) for mb in self.sweep_memory_mb)

    def load(self, label: str) -> float:
        for load in self.loads:
            if memory_label(load) == label:
                return load
        raise ConfigurationError(f"load {label!r} is not in memory.loads")

    def sweep_memory(self, label: str) -> float:
        for mb in self.sweep_memory_mb:
            if memory_label(mb) == label:
                return mb
        raise ConfigurationError(f"memory size {label!r} is not in memory.memory_sweep.sizes_mb")

    def variant_seeds(self, variant: Variant) -> tuple[int, ...]:
        """The seeds a variant runs with: every seed, or the first only for the baseline
        (deterministic: it never fails, so it draws no random number)."""
        return self.seeds if variant.random else self.seeds[:1]

    def sweep_machine(self, second_mb: float) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The machine with the second class (as configured) at ``second_mb`` MB per node;
        classes of equal memory merged into one (the engine wants distinct memories)."""
        memories = list(self.class_memory_mb)
        memories[1] = float(second_mb)
        merged: dict[float, int] = {}
        for nodes, memory in zip(self.class_nodes, memories, strict=True):
            merged[memory] = merged.get(memory, 0) + nodes
        return tuple(merged.values()), tuple(merged)


def _numbers(value: object, key: str, *, allow_empty: bool = False) -> list[float]:
    if isinstance(value, str) or not isinstance(value, Sequence) or (not value and
                                                                     not allow_empty):  # fmt: skip
        raise ConfigurationError(f"config {key}: give a non-empty list, got {quote(value)}")
    try:
        numbers = [float(v) for v in value]
    except (TypeError, ValueError):
        raise ConfigurationError(f"config {key}: not numbers: {quote(value)}") from None
    for number in numbers:
        if not (math.isfinite(number) and number > 0):
            raise ConfigurationError(f"config {key}: {number!r} must be positive and finite")
    if len({memory_label(n) for n in numbers}) != len(numbers):
        raise ConfigurationError(f"config {key}: a value is listed twice: {quote(value)}")
    return numbers


def _choices(value: object, key: str, known: Sequence[str]) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ConfigurationError(f"config {key}: give a non-empty list, got {quote(value)}")
    out = []
    for item in value:
        name = str(item).strip().lower()
        if name not in known:
            raise ConfigurationError(
                f"config {key}: unknown value {quote(item)}; known: {', '.join(known)}"
            )
        out.append(name)
    if len(set(out)) != len(out):
        raise ConfigurationError(f"config {key}: a value is listed twice: {quote(value)}")
    return tuple(out)


def _seeds(value: object) -> tuple[int, ...]:
    if isinstance(value, bool):
        raise ConfigurationError(f"config memory.seeds: give a count or a list, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ConfigurationError(f"config memory.seeds: the count must be >= 1, got {value}")
        return tuple(range(value))
    if isinstance(value, Sequence) and not isinstance(value, str) and value:
        seeds = []
        for seed in value:
            if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
                raise ConfigurationError(
                    f"config memory.seeds: {quote(seed)} must be an integer in [0, 2^63)"
                )
            seeds.append(seed)
        if len(set(seeds)) != len(seeds):
            raise ConfigurationError(f"config memory.seeds: a seed is listed twice: {value}")
        return tuple(seeds)
    raise ConfigurationError(f"config memory.seeds: give a count or a list, got {quote(value)}")


def _machine(section: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    machine = section.get("machine") or {}
    nodes_value = machine.get("class_nodes", [512, 512])
    memory_value = machine.get("class_memory_mb", [32, 24])
    if isinstance(nodes_value, str) or not isinstance(nodes_value, Sequence) or not nodes_value:
        raise ConfigurationError(
            f"config memory.machine.class_nodes: give a non-empty list, got {quote(nodes_value)}"
        )
    nodes = []
    for count in nodes_value:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigurationError(
                f"config memory.machine.class_nodes: {quote(count)} must be a whole number >= 1"
            )
        nodes.append(count)
    memories = _numbers(memory_value, "memory.machine.class_memory_mb")
    if len(memories) != len(nodes):
        raise ConfigurationError(
            f"config memory.machine: class_memory_mb has {len(memories)} value(s), class_nodes "
            f"{len(nodes)}: give one memory per class"
        )
    if len({memory_label(m) for m in memories}) != len(memories):
        raise ConfigurationError(
            f"config memory.machine.class_memory_mb: the classes' memories must be distinct, got "
            f"{quote(memory_value)} (merge equal classes into one)"
        )
    return tuple(nodes), tuple(memories)


def memory_plan(config: Mapping[str, Any]) -> MemoryPlan:
    """Check the ``memory`` section of a (schema-validated) config and return its plan."""
    section = config.get("memory") or {}
    traces = catalogue_entries(config, section.get("traces", []), "memory.traces")
    if not traces:
        raise ConfigurationError("config memory.traces: give at least one trace")
    slice_jobs = section.get("slice")
    if slice_jobs is not None and (isinstance(slice_jobs, bool) or not isinstance(slice_jobs, int)
                                   or slice_jobs < 2):  # fmt: skip
        raise ConfigurationError(
            f"config memory.slice: give a number of jobs >= 2 or null, got {quote(slice_jobs)}"
        )
    class_nodes, class_memory_mb = _machine(section)
    loads = _numbers(section.get("loads", [0.5, 0.8, 1.1]), "memory.loads")
    schedulers = _choices(section.get("schedulers", list(MEMORY_SCHEDULERS)),
                          "memory.schedulers", MEMORY_SCHEDULERS)  # fmt: skip
    raw_variants = section.get("estimators", [BASELINE, "perceptron-implicit",
                                              "perceptron-explicit", "history"])  # fmt: skip
    if isinstance(raw_variants, str) or not isinstance(raw_variants, Sequence) or not raw_variants:
        raise ConfigurationError(
            f"config memory.estimators: give a non-empty list, got {quote(raw_variants)}"
        )
    variants = tuple(parse_variant(v) for v in raw_variants)
    if len({v.label for v in variants}) != len(variants):
        raise ConfigurationError(f"config memory.estimators: a variant is listed twice: "
                                 f"{quote(raw_variants)}")  # fmt: skip
    if BASELINE not in {v.label for v in variants}:
        raise ConfigurationError(
            "config memory.estimators: include 'none' (the baseline every ratio divides by)"
        )
    seeds = _seeds(section.get("seeds", 1))
    sweep = section.get("memory_sweep") or {}
    sizes = _numbers(sweep.get("sizes_mb", []), "memory.memory_sweep.sizes_mb", allow_empty=True)
    if sizes and len(class_nodes) < 2:
        raise ConfigurationError(
            "config memory.memory_sweep.sizes_mb: the sweep sets the second class's memory; "
            "memory.machine has one class"
        )
    saturation = section.get("saturation_load")
    saturation_load = max(loads) if saturation is None else float(saturation)
    if memory_label(saturation_load) not in {memory_label(x) for x in loads}:
        raise ConfigurationError(
            f"config memory.saturation_load: {saturation!r} must be one of memory.loads"
        )
    sweep_load_value = sweep.get("load")
    sweep_load = saturation_load if sweep_load_value is None else float(sweep_load_value)
    if not (math.isfinite(sweep_load) and sweep_load > 0):
        raise ConfigurationError(
            f"config memory.memory_sweep.load: {sweep_load_value!r} must be positive and finite"
        )
    sweep_schedulers = _choices(sweep.get("schedulers") or list(schedulers),
                                "memory.memory_sweep.schedulers", schedulers)  # fmt: skip
    under_request = str(section.get("under_request", "raise"))
    if under_request not in UNDER_REQUEST_MODES:
        raise ConfigurationError(f"config memory.under_request: {under_request!r} must be one of "
                                 f"{', '.join(UNDER_REQUEST_MODES)}")  # fmt: skip
    memory_limit = str(section.get("memory_limit", "node"))
    if memory_limit not in MEMORY_LIMITS:
        raise ConfigurationError(f"config memory.memory_limit: {memory_limit!r} must be one of "
                                 f"{', '.join(MEMORY_LIMITS)}")  # fmt: skip
    max_failures = section.get("max_failures", 50)
    if isinstance(max_failures, bool) or not isinstance(max_failures, int) or max_failures < 1:
        raise ConfigurationError(
            f"config memory.max_failures: {quote(max_failures)} must be a whole number >= 1"
        )
    confidence = confidence_level(section.get("confidence", 0.95), "memory.confidence")
    return MemoryPlan(
        traces=traces, slice_jobs=slice_jobs, class_nodes=class_nodes,
        class_memory_mb=class_memory_mb, loads=tuple(loads), schedulers=schedulers,
        variants=variants, seeds=seeds, sweep_memory_mb=tuple(sizes), sweep_load=sweep_load,
        saturation_load=saturation_load, under_request=under_request, memory_limit=memory_limit,
        max_failures=max_failures, confidence=confidence, sweep_schedulers=sweep_schedulers,
    )  # fmt: skip
