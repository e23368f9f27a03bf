"""The learned-priority-function study's plan: the ``learned`` config section (validated
against ``config.schema.yaml``, defaults filled in) checked where the schema cannot (policy
names, workloads against the catalogue, the convergence counts' order), and the files, targets,
step settings and policy registrations it implies. Errors name the config key.

Workloads of the evaluation are catalogue logs (by name) or the workload model at a machine
size, written ``model-<processors>`` (e.g. ``model-256``, ``model-1024``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from scheduler.core.config_schema import load_schema
from scheduler.core.errors import ConfigurationError
from scheduler.policies.learned import register_learned
from scheduler.studies.common.config import (
    MAX_SIMULATION_JOBS,
    MAX_TRIALS,
    TraceEntry,
    catalogue_entries,
    check_plan_size,
    policy_list,
)
from scheduler.studies.common.paths import Reported, StudyFiles, output_paths, trace_file

__all__ = [
    "FUNCTION_PREFIX",
    "LearnedPlan",
    "Workload",
    "learned_plan",
    "learned_setup",
    "model_workload",
]

#: Names of the learned functions in the evaluation: LF1 is the rank-1 function of the fit.
FUNCTION_PREFIX = "LF"
_MODEL = re.compile(r"^model-([0-9]+)$")
#: The fit file of the learned functions, which every study's policies LF<k> read.
FUNCTIONS_FILE = StudyFiles("learned").result("functions.parquet")


@dataclass(frozen=True)
class Workload:
    """An evaluation workload: a catalogue log (``trace`` set) or the model at ``model_procs``
    processors; ``machine_procs`` overrides the log's machine size (``None``: the catalogue's
    or the log header's); ``skipped_sequences`` are the indices of the sequences left out."""

    name: str
    trace: TraceEntry | None = None
    model_procs: int | None = None
    machine_procs: int | None = None
    skipped_sequences: tuple[int, ...] = ()

    @property
    def is_model(self) -> bool:
        return self.model_procs is not None


def model_workload(name: str) -> int | None:
    """The machine size of a ``model-<processors>`` workload name, else ``None``."""
    match = _MODEL.match(name)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class LearnedPlan:
    """The learned-priority-function study, checked (see the configuration reference).

    Files: ``results/learned/model/model-<procs>.parquet`` (a model trace),
    ``…/tuples/batch<b>.parquet`` and ``…/scores/batch<b>.parquet`` (training tuples and their
    trial scores), the fit (``forms.parquet``, :data:`FUNCTIONS_FILE`), the convergence curve,
    ``…/evaluation/<workload>.parquet``, the tables and the figures.
    """

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "learned"

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
    allocated_only: bool
    queue_window: int | None
    state_in_order: bool
    exchange_sorted_policies: tuple[str, ...]
    random_sequences: bool
    days: float
    modes: tuple[str, ...]
    policies: tuple[str, ...]

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

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
        return learned_names(self.top)

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

    # -- files --------------------------------------------------------------------------------
    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        return {
            "procs": r"\d+",
            "rank": r"\d+",
            "batch": r"\d+",
            "workload": r"[A-Za-z0-9][A-Za-z0-9_.-]*",
        }

    def model_file(self, procs: int | str = "{procs}") -> str:
        return self.files.result(f"model/model-{procs}.parquet")

    def tuples_file(self, batch: int | str = "{batch}") -> str:
        return self.files.result(f"tuples/batch{batch}.parquet")

    def scores_file(self, batch: int | str = "{batch}") -> str:
        return self.files.result(f"scores/batch{batch}.parquet")

    def score_files(self, wildcards: object = None) -> list[str]:
        return [self.scores_file(batch) for batch in range(self.batches)]

    def fit_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``fit_functions``."""
        return {
            "forms_path": self.files.result("forms.parquet"),
            "functions_path": FUNCTIONS_FILE,
            "forms_csv_path": Reported(
                self.files.table("forms.csv"), "table.rst",
                {"table": "every function form (CSV)"},
            ),
            "top_md_path": self.files.table("top_functions.md"),
        }  # fmt: skip

    def convergence_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``convergence_curve``."""
        return {
            "out_path": self.files.result("convergence.parquet"),
            "png_path": Reported(
                self.files.figure("convergence", "png"), "figure.rst", {"figure": "convergence"}
            ),
            "pdf_path": self.files.figure("convergence", "pdf"),
        }

    def workload_source(self, wildcards: Any) -> str:
        """The jobs of an evaluation workload (:meth:`workload_file`), as an input function."""
        return self.workload_file(wildcards.workload)

    def workload_file(self, name: str) -> str:
        """The jobs of an evaluation workload: the generated model, or the catalogue log as
        downloaded (the protocol keeps every job with positive processors, run and requested
        times: no strong filter)."""
        workload = self.workload(name)
        if workload.model_procs is not None:
            return self.model_file(workload.model_procs)
        return trace_file(workload.name)

    def evaluation_file(self, workload: str = "{workload}") -> str:
        return self.files.result(f"evaluation/{workload}.parquet")

    def evaluation_files(self, wildcards: object = None) -> list[str]:
        return [self.evaluation_file(w.name) for w in self.workloads]

    def evaluation_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``evaluation_tables``."""
        return {
            "parquet_path": self.files.result("evaluation.parquet"),
            "csv_path": Reported(
                self.files.table("evaluation.csv"), "table.rst", {"table": "evaluation (CSV)"}
            ),
            "markdown_path": self.files.table("evaluation.md"),
            "png_path": Reported(
                self.files.figure("evaluation", "png"), "figure.rst", {"figure": "evaluation"}
            ),
            "pdf_path": self.files.figure("evaluation", "pdf"),
        }

    def published_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``published_tables``: the paper's Tables 3 and 4 beside schedlab's."""
        return {
            "markdown_path": self.files.table("published.md"),
            "csv_path": self.files.table("published.csv"),
        }

    def published_inputs(self) -> dict[str, str]:
        """The inputs of ``published_tables``."""
        return {
            "forms_path": str(self.fit_outputs()["forms_path"]),
            "evaluation_path": str(self.evaluation_outputs()["parquet_path"]),
        }

    #: The fixed policy the representative week compares the rank-1 learned function with.
    WEEK_BASELINE: ClassVar[str] = "FCFS"

    @property
    def week_workload(self) -> Workload:
        """The workload of the representative-week figure: the first evaluation workload."""
        return self.workloads[0]

    def week_inputs(self) -> dict[str, str]:
        """The inputs of ``draw_week``: the week workload's jobs and the fit file."""
        return {
            "workload_path": self.workload_file(self.week_workload.name),
            "functions_path": FUNCTIONS_FILE,
        }

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``draw_week``: the representative week (PNG in the report, PDF)."""
        return self.files.week_outputs()

    def targets(self) -> list[str]:
        files = (
            output_paths(self.fit_outputs())
            + output_paths(self.published_outputs())
            + output_paths(self.convergence_outputs())
            + output_paths(self.evaluation_outputs())
        )
        functions = [
            self.files.figure(f"function_{rank}", ext)
            for rank in range(1, self.top + 1)
            for ext in ("png", "pdf")
        ]
        return files + functions + output_paths(self.week_outputs())

    # -- step settings (keyword arguments of scheduler.studies.learned.steps) -----------------
    def model_settings(self, wildcards: Any) -> dict[str, Any]:
        """``model_trace``: the workload model at ``procs`` processors."""
        return {
            "procs": int(wildcards.procs),
            "jobs": self.model_jobs,
            "job_types": self.job_types,
            "seed": self.seed,
        }

    def tuples_settings(self, wildcards: Any) -> dict[str, Any]:
        """``draw_tuples``: one batch of training tuples."""
        return {
            "tuples": list(self.batch_tuples(int(wildcards.batch))),
            "state_jobs": self.state_jobs,
            "queue_jobs": self.queue_jobs,
            "seed": self.seed,
        }

    def scores_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``tuple_scores``."""
        return {"trials": self.trials, "tau_s": self.tau_s, "seed": self.seed}

    def fit_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``fit_functions``."""
        return {"top": self.top}

    def convergence_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``convergence_curve``."""
        return {
            "trial_counts": list(self.convergence_trials),
            "repetitions": self.convergence_repetitions,
            "tau_s": self.tau_s,
            "seed": self.seed,
        }

    def function_figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``function_figure``."""
        return {"rank": int(wildcards.rank)}

    def evaluation_settings(self, wildcards: Any) -> dict[str, Any]:
        """``evaluate_workload``: every policy and mode on one workload's sequences."""
        workload = self.workload(wildcards.workload)
        return {
            "workload": workload.name,
            "machine_procs": workload.machine_procs,
            "modes": list(self.modes),
            "policies": list(self.policies),
            "learned": {name: rank for rank, name in enumerate(self.learned_names, start=1)},
            "sequences": self.sequences,
            "skipped_sequences": list(workload.skipped_sequences),
            "allocated_only": self.allocated_only,
            "queue_window": self.queue_window,
            "state_in_order": self.state_in_order,
            "exchange_sorted_policies": list(self.exchange_sorted_policies),
            "random_sequences": self.random_sequences,
            "days": self.days,
            "tau_s": self.tau_s,
            "seed": self.seed,
        }

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``draw_week``: the week workload, EASY with :attr:`WEEK_BASELINE` against LF1."""
        workload = self.week_workload
        return {
            "workload": workload.name,
            "machine_procs": workload.machine_procs,
            "allocated_only": self.allocated_only,
            "baseline": self.WEEK_BASELINE,
            "learned": {self.learned_names[0]: 1},
        }

    def evaluation_tables_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``evaluation_tables``."""
        return {"policies": list(self.evaluated_policies), "modes": list(self.modes)}


def learned_names(top: int) -> tuple[str, ...]:
    """The policy names of the learned functions of ranks 1 … ``top``: LF1 … LF<top>."""
    return tuple(f"{FUNCTION_PREFIX}{rank}" for rank in range(1, top + 1))


def learned_setup(config: Mapping[str, Any]) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    """The registrations of a validated config's learned functions as policies of every study:
    LF<k> is the rank-k function of :data:`FUNCTIONS_FILE` (read when a simulation computes its
    keys; the rules that simulate with one take the file as an input)."""
    top = config["learned"]["top"]
    return [
        (register_learned, (name, f"learned:{FUNCTIONS_FILE}#{rank}"))
        for rank, name in enumerate(learned_names(top), start=1)
    ]


def _model_procs_bounds() -> tuple[int, int]:
    """The machine sizes the workload model takes: the schema's bounds of ``model_procs``."""
    node = load_schema(Path(__file__).with_name("config.schema.yaml"))["properties"]
    return node["model_procs"]["minimum"], node["model_procs"]["maximum"]


def _workloads(config: Mapping[str, Any], evaluation: Mapping[str, Any]) -> tuple[Workload, ...]:
    names = list(evaluation["workloads"])
    sizes = evaluation["machine_procs"]
    skipped = evaluation["skipped_sequences"]
    for key, mapping in (("machine_procs", sizes), ("skipped_sequences", skipped)):
        for name in mapping:
            if name not in names:
                raise ConfigurationError(
                    f"config learned.evaluation.{key}: {name!r} is not an evaluation workload"
                )
    workloads = []
    for name in names:
        skip = tuple(sorted(skipped.get(name) or ()))
        procs = model_workload(name)
        if procs is not None:
            low, high = _model_procs_bounds()
            if not low <= procs <= high:
                raise ConfigurationError(
                    f"config learned.evaluation.workloads: {name!r}: the model's machine has "
                    f"{low:,} to {high:,} processors (the bounds of learned.model_procs)"
                )
            workloads.append(
                Workload(name, model_procs=procs, machine_procs=procs, skipped_sequences=skip)
            )
        else:
            entry = catalogue_entries(config, [name], "learned.evaluation.workloads")[0]
            size = sizes.get(name) or entry.machine_procs
            workloads.append(
                Workload(name, trace=entry, machine_procs=size, skipped_sequences=skip)
            )
    return tuple(workloads)


def _exchange_sorted(evaluation: Mapping[str, Any]) -> tuple[str, ...]:
    key = "learned.evaluation.exchange_sorted_policies"
    names = evaluation["exchange_sorted_policies"]
    if names and evaluation["queue_window"] is None and not evaluation["state_in_order"]:
        raise ConfigurationError(
            f"config {key}: the exchange sort is the windowed scheduler's; set "
            "learned.evaluation.queue_window or state_in_order"
        )
    return policy_list(names, key) if names else ()


def learned_plan(config: Mapping[str, Any]) -> LearnedPlan:
    """The plan of the ``learned`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, LearnedPlan.name)
    evaluation = section["evaluation"]
    convergence = section["convergence"]
    state, queue = section["state_jobs"], section["queue_jobs"]
    if section["model_jobs"] < state + queue:
        raise ConfigurationError(
            f"config learned.model_jobs: {section['model_jobs']} jobs, a tuple needs "
            f"learned.state_jobs + learned.queue_jobs = {state + queue}"
        )
    counts = tuple(convergence["trials"])
    if list(counts) != sorted(set(counts)):
        raise ConfigurationError(
            f"config learned.convergence.trials: give increasing trial counts, got {list(counts)}"
        )
    tuples, trials = section["tuples"], section["trials"]
    check_plan_size(math.ceil(tuples / section["tuples_per_job"]), "trial jobs",
                    "learned.tuples / learned.tuples_per_job", MAX_SIMULATION_JOBS)  # fmt: skip
    check_plan_size(tuples * trials, "trials", "learned.tuples x learned.trials", MAX_TRIALS)
    check_plan_size(sum(counts) * convergence["repetitions"], "trials",
                    "learned.convergence.trials x learned.convergence.repetitions",
                    MAX_TRIALS)  # fmt: skip
    return LearnedPlan(
        seed=whole["seed"],
        model_procs=section["model_procs"],
        model_jobs=section["model_jobs"],
        job_types=section["model_job_types"],
        tuples=section["tuples"],
        tuples_per_job=section["tuples_per_job"],
        state_jobs=state,
        queue_jobs=queue,
        trials=section["trials"],
        tau_s=float(section["tau_s"]),
        top=section["top"],
        convergence_trials=counts,
        convergence_repetitions=convergence["repetitions"],
        workloads=_workloads(whole, evaluation),
        sequences=evaluation["sequences"],
        allocated_only=evaluation["allocated_only"],
        queue_window=evaluation["queue_window"],
        state_in_order=evaluation["state_in_order"],
        exchange_sorted_policies=_exchange_sorted(evaluation),
        random_sequences=evaluation["random_sequences"],
        days=float(evaluation["days"]),
        modes=tuple(evaluation["modes"]),
        policies=policy_list(evaluation["policies"], "learned.evaluation.policies"),
    )
