"""The memory-aware cluster study's plan: the ``memory`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (estimator variants,
the machine's classes, the sweep against the loads and schedulers), and the files, targets and
step settings it implies. Errors name the config key (``memory.<key>``).

An *estimator variant* is spelled ``<estimator>`` or ``<estimator>-<feedback>[-<gradient>]``:
the estimator one of :data:`~scheduler.sim.memory.MEMORY_ESTIMATORS`, the feedback (perceptron
only, which needs one) one of :data:`~scheduler.sim.memory.MEMORY_FEEDBACKS`, the gradient
(perceptron only, ``literal`` when left out: Algorithm 1 as written) one of
:data:`~scheduler.sim.memory.MEMORY_GRADIENTS`; e.g. ``none``, ``perceptron-implicit``,
``perceptron-explicit``, ``perceptron-implicit-raise``, ``perceptron-explicit-normalised``,
``history``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from scheduler.core.errors import ConfigurationError, quote
from scheduler.sim.memory import (
    MEMORY_ESTIMATORS,
    MEMORY_FEEDBACKS,
    MEMORY_GRADIENTS,
    MEMORY_SCHEDULERS,
    MemoryConfig,
)
from scheduler.studies.common.config import (
    NUMBER_LABEL_PATTERN,
    TraceEntry,
    catalogue_entries,
    check_plan_size,
    number_label,
)
from scheduler.studies.common.paths import Reported, StudyFiles, output_paths, trace_file

__all__ = ["BASELINE", "MemoryPlan", "Variant", "memory_label", "memory_plan", "parse_variant"]

#: The variant without estimation (every job allocated its request): the reference of ratios.
BASELINE = "none"
#: The estimators that take a feedback (the others ignore it).
_LEARNERS = ("perceptron",)


#: The label of a load or a memory size in file names (reads back exactly).
memory_label = number_label


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

    def config(
        self,
        *,
        class_nodes: Sequence[int],
        class_memory_mb: Sequence[float],
        scheduler: str,
        memory_limit: str,
        max_failures: int,
        seed: int,
    ) -> MemoryConfig:
        """The engine's configuration of this variant on a machine of ``class_nodes`` nodes
        of ``class_memory_mb`` MB under ``scheduler``, with the study's settings."""
        return MemoryConfig(
            class_nodes=tuple(int(n) for n in class_nodes),
            class_memory_mb=tuple(float(m) for m in class_memory_mb),
            scheduler=scheduler, estimator=self.estimator, feedback=self.feedback,
            gradient=self.gradient, memory_limit=memory_limit, max_failures=int(max_failures),
            seed=int(seed),
        )  # fmt: skip


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
    """The memory-aware cluster study, checked (see the configuration reference for every key).

    Files: ``results/memory/<trace>/jobs.parquet`` (the filtered jobs),
    ``…/runs/<scheduler>/load-<load>.parquet`` (a load batch), ``…/sweep/<scheduler>/
    memory-<MB>.parquet`` (a sweep batch), ``results/memory/{runs,intervals,ratios}.parquet``,
    the tables and the figures.
    """

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "memory"

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
    under_request: str
    missing_memory: str
    memory_limit: str
    max_failures: int
    confidence: float
    #: schedulers of the sweep (a subset of ``schedulers``)
    sweep_schedulers: tuple[str, ...]

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

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
        merged: Counter[float] = Counter()
        for nodes, memory in zip(self.class_nodes, memories, strict=True):
            merged[memory] += nodes
        return tuple(merged.values()), tuple(merged)

    # -- files --------------------------------------------------------------------------------
    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        return {
            "memory_scheduler": "|".join(MEMORY_SCHEDULERS),
            "memory_load": NUMBER_LABEL_PATTERN,
            "memory_mb": NUMBER_LABEL_PATTERN,
        }

    def source_file(self, trace: str = "{trace}") -> str:
        """The log the study filters: the catalogue log as downloaded."""
        return trace_file(trace)

    def jobs_file(self, trace: str = "{trace}") -> str:
        return self.files.result(f"{trace}/jobs.parquet")

    def filter_report_file(self, trace: str = "{trace}") -> str:
        return self.files.result(f"{trace}/filter_report.json")

    def load_run(self, trace: str = "{trace}", scheduler: str = "{memory_scheduler}",
                 load: str = "{memory_load}") -> str:  # fmt: skip
        """One load batch's runs (``load`` a :attr:`load_labels` label)."""
        return f"{trace}/runs/{scheduler}/load-{load}"

    def sweep_run(self, trace: str = "{trace}", scheduler: str = "{memory_scheduler}",
                  memory_mb: str = "{memory_mb}") -> str:  # fmt: skip
        """One sweep batch's runs (``memory_mb`` a :attr:`sweep_labels` label)."""
        return f"{trace}/sweep/{scheduler}/memory-{memory_mb}"

    def run_files(self, wildcards: object = None) -> list[str]:
        """Every batch of runs: each log x scheduler x load, and the sweep's."""
        loads = [
            self.files.result(f"{self.load_run(trace, scheduler, label)}.parquet")
            for trace in self.trace_names
            for scheduler in self.schedulers
            for label in self.load_labels
        ]
        sweep = [
            self.files.result(f"{self.sweep_run(trace, scheduler, label)}.parquet")
            for trace in self.trace_names
            for scheduler in self.sweep_schedulers
            for label in self.sweep_labels
        ]
        return loads + sweep

    def filter_report_files(self, wildcards: object = None) -> list[str]:
        return [self.filter_report_file(trace) for trace in self.trace_names]

    def figure_names(self) -> tuple[str, ...]:
        """The figures this plan draws: weights only with a perceptron, the sweep only with
        sizes and an estimator besides the baseline."""
        names = ["utilisation", "slowdown", "failures"]
        if any(v.estimator == "perceptron" for v in self.variants):
            names.append("weights")
            if "fcfs" in self.schedulers:  # the paper's figures: FCFS with the perceptron
                names += ["paper_utilisation", "paper_slowdown"]
        if self.sweep_memory_mb and len(self.variants) > 1:
            names.append("memory_sweep")
        return tuple(names)

    def tables_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``memory_tables`` (step parameter -> file)."""
        files = self.files
        return {
            "runs_path": files.result("runs.parquet"),
            "intervals_path": files.result("intervals.parquet"),
            "ratios_path": files.result("ratios.parquet"),
            "summary_csv_path": Reported(
                files.table("summary.csv"), "table.rst",
                {"table": "means over seeds per scheduler, estimator and load"},
            ),
            "summary_md_path": files.table("summary.md"),
            "paper_csv_path": Reported(
                files.table("paper.csv"), "paper.rst", {"table": "the paper vs schedlab"}
            ),
            "paper_md_path": files.table("paper.md"),
            "published_csv_path": Reported(
                files.table("published.csv"), "published.rst",
                {"table": "every claim of the paper beside schedlab"},
            ),
            "published_md_path": files.table("published.md"),
            "filter_csv_path": Reported(
                files.table("filter.csv"), "filter.rst", {"table": "memory filter counts"}
            ),
        }  # fmt: skip

    @property
    def week_estimators(self) -> tuple[str, ...]:
        """The estimator variants the representative week may draw against the baseline: all
        of ``memory.estimators`` but ``none`` (empty: no week drawn)."""
        return tuple(label for label in self.variant_labels if label != BASELINE)

    def week_inputs(self, wildcards: object = None) -> dict[str, str]:
        """The inputs of ``memory_week``: the first log's filtered jobs, the study's runs."""
        return {"jobs_path": self.jobs_file(self.trace_names[0]),
                "runs_path": str(self.tables_outputs()["runs_path"])}  # fmt: skip

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``memory_week``: the representative week's Gantt chart."""
        return self.files.week_outputs()

    def targets(self) -> list[str]:
        tables = output_paths(self.tables_outputs())
        figures = [
            self.files.figure(name, ext) for name in self.figure_names() for ext in ("png", "pdf")
        ]
        week = output_paths(self.week_outputs()) if self.week_estimators else []
        return tables + figures + week

    # -- step settings (keyword arguments of scheduler.studies.memory.steps) -------------------
    def filter_settings(self, wildcards: Any) -> dict[str, Any]:
        """``filter_memory_jobs``: what defines a log's filtered jobs."""
        return {
            "trace": wildcards.trace,
            "machine_nodes": self.machine_nodes,
            "largest_node_kb": self.largest_node_kb,
            "under_request": self.under_request,
            "missing_memory": self.missing_memory,
            "slice_jobs": self.slice_jobs,
        }

    def _batch_settings(self, wildcards: Any, kind: str, machine: Any, load: float) -> dict:
        class_nodes, class_memory_mb = machine
        return {
            "kind": kind,
            "trace": wildcards.trace,
            "scheduler": wildcards.memory_scheduler,
            "load": load,
            "class_nodes": list(class_nodes),
            "class_memory_mb": list(class_memory_mb),
            "variants": list(self.variant_labels),
            "seeds": list(self.seeds),
            "memory_limit": self.memory_limit,
            "max_failures": self.max_failures,
        }

    def load_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_batch`` of one load batch: the configured machine at one offered load."""
        machine = (self.class_nodes, self.class_memory_mb)
        return self._batch_settings(wildcards, "load", machine, self.load(wildcards.memory_load))

    def sweep_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_batch`` of one sweep batch: the second class at ``memory_mb`` MB."""
        machine = self.sweep_machine(self.sweep_memory(wildcards.memory_mb))
        return self._batch_settings(wildcards, "sweep", machine, self.sweep_load)

    def tables_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``memory_tables``."""
        return {"confidence": self.confidence, "saturation_load": self.saturation_load,
                "class_memory_mb": list(self.class_memory_mb)}  # fmt: skip

    def figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``memory_figure``."""
        return {"figure": wildcards.memory_figure}

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``memory_week``: the first log and scheduler at the saturation load on the
        configured machine, the first seed, the baseline against one of
        :attr:`week_estimators`."""
        return {
            "trace": self.trace_names[0],
            "scheduler": self.schedulers[0],
            "load": self.saturation_load,
            "class_nodes": list(self.class_nodes),
            "class_memory_mb": list(self.class_memory_mb),
            "estimators": list(self.week_estimators),
            "seed": self.seeds[0],
            "memory_limit": self.memory_limit,
            "max_failures": self.max_failures,
        }


def _machine(section: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    machine = section["machine"]
    nodes = tuple(machine["class_nodes"])
    memories = tuple(float(m) for m in machine["class_memory_mb"])
    if len(memories) != len(nodes):
        raise ConfigurationError(
            f"config memory.machine: class_memory_mb has {len(memories)} value(s), class_nodes "
            f"{len(nodes)}: give one memory per class"
        )
    if len(set(memories)) != len(memories):
        raise ConfigurationError(
            f"config memory.machine.class_memory_mb: the classes' memories must be distinct, got "
            f"{quote(machine['class_memory_mb'])} (merge equal classes into one)"
        )
    return nodes, memories


def _subset(chosen: Sequence[str], allowed: Sequence[str], key: str, within: str) -> None:
    for name in chosen:
        if name not in allowed:
            raise ConfigurationError(
                f"config {key}: {name!r} is not one of {within} ({', '.join(allowed)})"
            )


def memory_plan(config: Mapping[str, Any]) -> MemoryPlan:
    """The plan of the ``memory`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, MemoryPlan.name)
    traces = catalogue_entries(whole, section["traces"], "memory.traces")
    class_nodes, class_memory_mb = _machine(section)
    loads = tuple(float(load) for load in section["loads"])
    variants = tuple(parse_variant(v) for v in section["estimators"])
    if len({v.label for v in variants}) != len(variants):
        raise ConfigurationError(f"config memory.estimators: a variant is listed twice: "
                                 f"{quote(section['estimators'])}")  # fmt: skip
    if BASELINE not in {v.label for v in variants}:
        raise ConfigurationError(
            "config memory.estimators: include 'none' (the baseline every ratio divides by)"
        )
    seeds_value = section["seeds"]
    seeds = tuple(range(seeds_value)) if isinstance(seeds_value, int) else tuple(seeds_value)
    sweep = section["memory_sweep"]
    sizes = tuple(float(mb) for mb in sweep["sizes_mb"])
    if sizes and len(class_nodes) < 2:
        raise ConfigurationError(
            "config memory.memory_sweep.sizes_mb: the sweep sets the second class's memory; "
            "memory.machine has one class"
        )
    saturation = section["saturation_load"]
    saturation_load = max(loads) if saturation is None else float(saturation)
    if saturation_load not in loads:
        raise ConfigurationError(
            f"config memory.saturation_load: {saturation!r} must be one of memory.loads"
        )
    sweep_load = saturation_load if sweep["load"] is None else float(sweep["load"])
    schedulers = tuple(section["schedulers"])
    sweep_schedulers = tuple(sweep["schedulers"]) or schedulers
    _subset(sweep_schedulers, schedulers, "memory.memory_sweep.schedulers", "memory.schedulers")
    batches = len(schedulers) * len(loads) + len(sweep_schedulers) * len(sizes)
    runs = sum(len(seeds) if v.random else 1 for v in variants)
    check_plan_size(batches * runs, "simulations of the whole log", "memory.seeds x "
                    "memory.estimators x (memory.schedulers x memory.loads + "
                    "memory.memory_sweep.schedulers x memory.memory_sweep.sizes_mb)")  # fmt: skip
    return MemoryPlan(
        traces=traces, slice_jobs=section["slice"], class_nodes=class_nodes,
        class_memory_mb=class_memory_mb, loads=loads, schedulers=schedulers,
        variants=variants, seeds=seeds, sweep_memory_mb=sizes, sweep_load=sweep_load,
        saturation_load=saturation_load, under_request=section["under_request"],
        missing_memory=section["missing_memory"],
        memory_limit=section["memory_limit"], max_failures=section["max_failures"],
        confidence=section["confidence"], sweep_schedulers=sweep_schedulers,
    )  # fmt: skip
