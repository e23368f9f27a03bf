"""Scheduling on a heterogeneous-memory cluster with a learned memory estimator.

After Yom-Tov and Aridor, "A self-optimized job scheduler for heterogeneous server clusters"
(JSSPP 2007). Nodes come in classes by memory size; users over-state their jobs' memory, so a
job asking for a big node may wait while small nodes idle. An estimator guesses each job's real
need when it is considered for a start (Algorithm 1 of the paper: a perceptron, with implicit or
explicit feedback; or the per-user ratio estimator added here); a job given less memory than it
uses fails part-way, frees its nodes and is resubmitted.

- :func:`simulate_memory` takes a job table (the columns of :func:`memory_jobs`, or an SWF job
  table after :func:`scheduler.traces.memory.memory_filter`) and a :class:`MemoryConfig`, and
  returns a :class:`MemoryResult` (per-job and per-run tables, a :class:`MemorySummary`);
- :func:`simulate_memory_arrays` is the low-level entry over NumPy arrays (:class:`MemoryArrays`).

The exact semantics (capacity E, decisions, best fit, failures, feedback, event order, EASY's
reservation with eligible nodes, random stream, metrics) are in ``docs/simulator.md``,
"Memory-aware heterogeneous clusters"; the compiled loop is
:mod:`scheduler.sim._memory_kernel`. Memory is in MB per node, times in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from scheduler.core.constants import BSLD_TAU_S
from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.registry import Registry
from scheduler.sim import _memory_kernel as mk
from scheduler.sim._jobs import check_columns, check_job_count, check_job_ids
from scheduler.sim.cache import call_repairing_cache
from scheduler.sim.metrics import RunFigures, run_figures, table_arrays, with_job_metrics
from scheduler.sim.results import RunResult, json_ready
from scheduler.traces.swf import Trace, used_procs

__all__ = [
    "MEMORY_ESTIMATORS",
    "MEMORY_FEEDBACKS",
    "MEMORY_GRADIENTS",
    "MEMORY_JOB_COLUMNS",
    "MEMORY_LIMITS",
    "MEMORY_SCHEDULERS",
    "PAPER_FEEDBACK",
    "MemoryArrays",
    "MemoryConfig",
    "MemoryResult",
    "MemorySummary",
    "feature_names",
    "memory_jobs",
    "simulate_memory",
    "simulate_memory_arrays",
]

#: Memory estimators: name -> kernel code.
MEMORY_ESTIMATORS: Registry[int] = Registry("memory estimator", canonical=str.lower)
MEMORY_ESTIMATORS.add("none", mk.EST_NONE, "no estimation: every job is allocated its request")
MEMORY_ESTIMATORS.add(
    "perceptron", mk.EST_PERCEPTRON, "Algorithm 1 of Yom-Tov & Aridor (implicit/explicit feedback)"
)
MEMORY_ESTIMATORS.add(
    "history",
    mk.EST_HISTORY,
    "the largest memory used by the user's earlier successful jobs with the same request "
    "(capped at the request); the request with no such job or after a failure",
)
#: Scheduling disciplines: ``fcfs`` (the paper) and ``easy`` (EASY backfilling).
MEMORY_SCHEDULERS: tuple[str, ...] = ("fcfs", "easy")
#: Feedback of the perceptron: success/failure only (as published, or with the sign that raises
#: the estimate after a failure), or the used memory.
MEMORY_FEEDBACKS: tuple[str, ...] = ("implicit", "explicit", "implicit-raise")
#: The feedback of Algorithm 1 each of :data:`MEMORY_FEEDBACKS` is (implicit-raise is implicit
#: feedback with the update's sign reversed).
PAPER_FEEDBACK: dict[str, str] = {
    "implicit": "implicit", "explicit": "explicit", "implicit-raise": "implicit",
}  # fmt: skip
_FEEDBACK_CODES = {
    "implicit": mk.FB_IMPLICIT, "explicit": mk.FB_EXPLICIT, "implicit-raise": mk.FB_IMPLICIT_RAISE,
}  # fmt: skip
#: What a job may use: the memory of its nodes, or its allocation (a hard limit).
MEMORY_LIMITS: tuple[str, ...] = ("node", "allocation")
#: The perceptron's scaling: Algorithm 1 transcribed with memory in MB, memory in units of M, or
#: memory in units of M and the inputs standardised online (Duda, Hart & Stork §6.8).
MEMORY_GRADIENTS: tuple[str, ...] = ("literal", "normalised", "standardised")
_GRADIENT_CODES = {
    "literal": mk.SC_LITERAL, "normalised": mk.SC_NORMALISED, "standardised": mk.SC_STANDARDISED,
}  # fmt: skip

#: Columns of the engine's job table (:func:`memory_jobs`).
MEMORY_JOB_COLUMNS: tuple[str, ...] = (
    "job_id", "submit_s", "procs", "run_s", "req_time_s", "req_mem_mb", "used_mem_mb", "user_id",
)  # fmt: skip

_KB_PER_MB = 1024.0


def feature_names(k: int) -> tuple[str, ...]:
    """Names of the perceptron's ``k + 4`` features, in weight order."""
    return (*(f"free_class{c + 1}" for c in range(k)), "need", "log_request", "log_queue", "bias")


def _choice(key: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ConfigurationError(f"{key} must be one of {', '.join(allowed)}, got {quote(value)}")
    return value.lower()


def _positive(key: str, value: object, *, integer: bool = False) -> float:
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value > 0:
        what = "an integer" if integer else "a number"
        raise ConfigurationError(f"{key} must be {what} > 0, got {value!r}")
    if not math.isfinite(float(value)):
        raise ConfigurationError(f"{key} must be finite, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class MemoryConfig:
    """The machine and the scheduler of a memory-aware run (memory in MB per node).

    ``class_nodes[c]`` nodes have ``class_memory_mb[c]`` MB each; the classes are kept sorted
    by memory, ascending (memories distinct). ``scheduler`` in :data:`MEMORY_SCHEDULERS`,
    ``estimator`` in :data:`MEMORY_ESTIMATORS`, ``feedback`` in :data:`MEMORY_FEEDBACKS` (the
    perceptron's), ``memory_limit`` in :data:`MEMORY_LIMITS`, ``gradient`` in
    :data:`MEMORY_GRADIENTS` (``literal``: f' = a M b (1 − tanh²) and explicit targets in MB, as
    Algorithm 1 reads; ``normalised``: memory in units of M, f' = a b (1 − tanh²);
    ``standardised``: as ``normalised``, every feature but the bias standardised by the running
    mean and sd of the decisions so far, ``docs/simulator.md``); ``eta``
    (η), ``tau`` (τ), ``a``, ``b``: Algorithm 1's constants; ``max_failures``: failures after
    which a job is started with its request; ``seed``: the random stream (exploration draws,
    failure times).
    """

    class_nodes: tuple[int, ...] = (512, 512)
    class_memory_mb: tuple[float, ...] = (24.0, 32.0)
    scheduler: str = "fcfs"
    estimator: str = "none"
    feedback: str = "implicit"
    memory_limit: str = "node"
    gradient: str = "literal"
    eta: float = 0.1
    tau: float = 10.0
    a: float = 1.716
    b: float = 2.0 / 3.0
    max_failures: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        nodes, memory = self.class_nodes, self.class_memory_mb
        if isinstance(nodes, int | float) or isinstance(memory, int | float):
            raise ConfigurationError(
                "class_nodes and class_memory_mb must be lists (one per class)"
            )
        nodes, memory = tuple(nodes), tuple(memory)
        if not nodes or len(nodes) != len(memory):
            raise ConfigurationError(
                f"class_nodes ({len(nodes)}) and class_memory_mb ({len(memory)}) must be "
                "non-empty lists of the same length (one entry per node class)"
            )
        for c, (count, mb) in enumerate(zip(nodes, memory, strict=True)):
            _positive(f"class_nodes[{c}]", count, integer=True)
            _positive(f"class_memory_mb[{c}]", mb)
        if len(set(map(float, memory))) != len(memory):
            raise ConfigurationError(f"class_memory_mb must be distinct, got {list(memory)}")
        pairs = tuple(
            sorted((float(mb), int(count)) for count, mb in zip(nodes, memory, strict=True))
        )
        object.__setattr__(self, "class_nodes", tuple(c for _, c in pairs))
        object.__setattr__(self, "class_memory_mb", tuple(mb for mb, _ in pairs))
        object.__setattr__(
            self, "scheduler", _choice("scheduler", self.scheduler, MEMORY_SCHEDULERS)
        )
        MEMORY_ESTIMATORS.lookup(self.estimator, where="estimator")
        object.__setattr__(self, "estimator", MEMORY_ESTIMATORS.canonical(self.estimator))
        object.__setattr__(self, "feedback", _choice("feedback", self.feedback, MEMORY_FEEDBACKS))
        object.__setattr__(
            self, "memory_limit", _choice("memory_limit", self.memory_limit, MEMORY_LIMITS)
        )
        object.__setattr__(self, "gradient", _choice("gradient", self.gradient, MEMORY_GRADIENTS))
        for key in ("eta", "tau", "a", "b"):
            object.__setattr__(self, key, _positive(key, getattr(self, key)))
        object.__setattr__(
            self, "max_failures", int(_positive("max_failures", self.max_failures, integer=True))
        )
        seed = self.seed
        if (
            isinstance(seed, bool)
            or not isinstance(seed, int | np.integer)
            or not 0 <= seed < 2**64
        ):
            raise ConfigurationError(f"seed must be an integer in [0, 2**64), got {seed!r}")
        object.__setattr__(self, "seed", int(seed))

    @property
    def nodes(self) -> int:
        """N, the nodes of the machine."""
        return sum(self.class_nodes)

    @property
    def largest_memory_mb(self) -> float:
        """M, the largest node memory (MB)."""
        return self.class_memory_mb[-1]

    def to_dict(self) -> dict[str, object]:
        """Plain dict (JSON-ready: :func:`~scheduler.sim.results.json_ready`)."""
        return json_ready(self)


@dataclass(frozen=True)
class MemoryArrays:
    """A memory-aware run over arrays, jobs in the input's order (s, MB).

    Per job: ``start_s`` the start of its successful run, ``failures`` its failed runs,
    ``forced`` its runs forced to the request by ``max_failures``. Per run, in start order:
    ``run_job`` (job index), ``run_start_s``, ``run_end_s``, ``run_alloc_mb`` (the allocation
    A), ``run_memory_mb`` (a_j: the smallest node memory, or A under the ``allocation`` limit),
    ``run_failed``, ``run_estimate_mb`` (the perceptron's E', NaN when not asked),
    ``run_class_nodes`` (runs × K, nodes taken per class, classes ascending). ``weights`` is the
    final w, ``success_fraction`` the final p.
    """

    start_s: np.ndarray
    failures: np.ndarray
    forced: np.ndarray
    run_job: np.ndarray
    run_start_s: np.ndarray
    run_end_s: np.ndarray
    run_alloc_mb: np.ndarray
    run_memory_mb: np.ndarray
    run_failed: np.ndarray
    run_estimate_mb: np.ndarray
    run_class_nodes: np.ndarray
    weights: np.ndarray
    success_fraction: float


@dataclass(frozen=True)
class MemorySummary(RunFigures):
    """Figures of one memory-aware run: the shared :class:`~scheduler.sim.metrics.RunFigures`
    on the machine's N nodes (bsld with τ = 10 s; waits from the original submission to the
    successful start; ``wasted_proc_s`` the node-seconds of the failed runs) and the variant's
    own: ``nodes`` (N), ``failed_runs``, ``forced`` (runs forced to the request),
    ``success_fraction`` (final p), ``weights`` (final w, zeros unless the perceptron).

    The paper's names: its *effective utilisation* (successful runs only) is ``utilisation``,
    its *total utilisation* (failed runs included) ``utilisation_with_waste``, its slowdown
    ``(W + T)/T`` (eq. 2) the stretch, ``avg_stretch`` (``docs/glossary.md``).
    """

    nodes: int
    failed_runs: int
    forced: int
    success_fraction: float
    weights: tuple[float, ...]

    def to_dict(self) -> dict[str, float | int]:
        """Plain dict (JSON-ready), the weights flattened as ``w_<feature>``."""
        out = super().to_dict()
        del out["weights"]
        names = feature_names(len(self.weights) - 4)
        out.update({f"w_{name}": float(v) for name, v in zip(names, self.weights, strict=True)})
        return out


@dataclass(frozen=True)
class MemoryResult(RunResult):
    """A simulated memory-aware schedule.

    ``jobs``: one row per job in (submit time, job number) order: ``job_id, submit_s, procs,
    run_s, req_mem_mb, used_mem_mb, start_s, end_s, wait_s, failures, forced, alloc_mb,
    node_memory_mb, stretch, bsld`` (``alloc_mb``/``node_memory_mb`` of the successful run).
    ``runs``: one row per run in start order: ``job_id, start_s, end_s, alloc_mb,
    node_memory_mb, failed, estimate_mb, nodes_class1..K``.
    """

    summary: MemorySummary
    runs: pl.DataFrame
    config: MemoryConfig


def memory_jobs(table: pl.DataFrame | Trace) -> pl.DataFrame:
    """The engine's job table from an SWF job table (memory in KB per processor).

    Columns :data:`MEMORY_JOB_COLUMNS`: ``procs`` = allocated processors (requested when
    unknown), memory in MB (``/ 1024``), times as float seconds; sorted by (submit, job number).
    A table that already has these columns is checked and returned sorted.

    Raises
    ------
    ConfigurationError
        A needed column is missing, a job number repeats (as for the other engines:
        ``scheduler.sim._jobs.check_job_ids``), or a memory field is unknown (<= 0): filter
        first (:func:`scheduler.traces.memory.memory_filter`).
    """
    return _engine_table(table).sort("submit_s", "job_id")


def _engine_table(table: pl.DataFrame | Trace) -> pl.DataFrame:
    """:func:`memory_jobs` in the caller's job order (the engine sorts after its checks, so
    that they name each job's index as the other engines do)."""
    if isinstance(table, Trace):
        table = table.jobs
    if not isinstance(table, pl.DataFrame):
        raise TypeError(
            f"memory_jobs needs a polars DataFrame or a Trace, got {type(table).__name__}"
        )
    if all(c in table.columns for c in MEMORY_JOB_COLUMNS):
        jobs = table.select(
            pl.col("job_id").cast(pl.Int64),
            pl.col("submit_s").cast(pl.Float64),
            pl.col("procs").cast(pl.Int64),
            pl.col("run_s").cast(pl.Float64),
            pl.col("req_time_s").cast(pl.Float64),
            pl.col("req_mem_mb").cast(pl.Float64),
            pl.col("used_mem_mb").cast(pl.Float64),
            pl.col("user_id").cast(pl.Int64),
        )
    else:
        needed = ("job_id", "submit_s", "run_s", "alloc_procs", "req_procs", "req_time_s",
                  "req_mem_kb", "used_mem_kb", "user_id")  # fmt: skip
        missing = [c for c in needed if c not in table.columns]
        if missing:
            raise ConfigurationError(
                f"memory_jobs: the job table lacks the column(s) {', '.join(missing)} (an SWF job "
                f"table or the columns {', '.join(MEMORY_JOB_COLUMNS)})"
            )
        jobs = table.select(
            pl.col("job_id").cast(pl.Int64),
            pl.col("submit_s").cast(pl.Float64),
            used_procs().cast(pl.Int64).alias("procs"),
            pl.col("run_s").cast(pl.Float64),
            pl.col("req_time_s").cast(pl.Float64),
            (pl.col("req_mem_kb").cast(pl.Float64) / _KB_PER_MB).alias("req_mem_mb"),
            (pl.col("used_mem_kb").cast(pl.Float64) / _KB_PER_MB).alias("used_mem_mb"),
            pl.col("user_id").cast(pl.Int64),
        )
    check_job_ids(jobs["job_id"].to_numpy())  # in the caller's order, as the other engines
    for column in ("req_mem_mb", "used_mem_mb"):
        bad = jobs.filter(~(pl.col(column) > 0))
        if bad.height:
            raise ConfigurationError(
                f"memory_jobs: {bad.height} job(s) without a known {column} (first: job "
                f"{bad['job_id'][0]}); remove them with scheduler.traces.memory.memory_filter"
            )
    return jobs


def _check_jobs(jobs: pl.DataFrame, config: MemoryConfig) -> None:
    """Refuse jobs the model cannot run, naming the first offending job: the times and
    processors as every engine does (``scheduler.sim._jobs.check_columns``, the nodes as the
    machine), then the memory engine's own rules."""
    columns = ("submit_s", "procs", "run_s", "req_time_s")
    check_columns(
        {name: jobs[name].cast(pl.Float64).to_numpy() for name in columns},
        config.nodes,
        jobs["job_id"].to_numpy(),
        hint=" (scheduler.traces.memory.memory_filter removes such jobs)",
    )
    big = config.largest_memory_mb
    rules = (
        (pl.col("submit_s") < 0, "submit_s must be >= 0"),
        (pl.col("used_mem_mb") > pl.col("req_mem_mb"),
         "used_mem_mb must be <= req_mem_mb (memory_filter(under_request=...) repairs this)"),
        (pl.col("req_mem_mb") > big, f"req_mem_mb must be <= the largest node memory, {big} MB"),
        (pl.col("user_id") < -1, "user_id must be >= -1"),
    )  # fmt: skip
    for predicate, message in rules:
        bad = jobs.filter(predicate)
        if bad.height:
            raise ConfigurationError(
                f"simulate_memory: {bad.height} job(s) violate: {message} (first: job "
                f"{bad['job_id'][0]})"
            )


def simulate_memory_arrays(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    est_s: np.ndarray,
    req_mem_mb: np.ndarray,
    used_mem_mb: np.ndarray,
    user: np.ndarray,
    config: MemoryConfig,
) -> MemoryArrays:
    """A whole memory-aware run over arrays in job order ((submit, job number); float64 except
    ``procs`` and ``user``, int64). No validation beyond the shapes (and no job at all, which
    every engine refuses): :func:`simulate_memory` validates."""
    n = len(submit_s)
    check_job_count(n)
    arrays = [
        np.ascontiguousarray(v, dtype=np.float64)
        for v in (submit_s, run_s, est_s, req_mem_mb, used_mem_mb)
    ]
    if any(a.shape != (n,) for a in arrays) or len(procs) != n or len(user) != n:
        raise ValueError("simulate_memory_arrays: every job array must have the same length")
    submit, run, est, req, used = arrays
    # the history estimator's key: the (user, request) pair of each job, as a dense index
    pairs = np.stack([np.asarray(user, dtype=np.float64), req])
    _, group = np.unique(pairs, axis=1, return_inverse=True)
    group = np.asarray(group, dtype=np.int64).reshape(-1)
    out = call_repairing_cache(
        mk.simulate,
        submit, np.ascontiguousarray(procs, dtype=np.int64), run, est, req, used,
        group, int(group.max(initial=-1)) + 1,
        np.asarray(config.class_nodes, dtype=np.int64),
        np.asarray(config.class_memory_mb, dtype=np.float64),
        config.scheduler == "easy", MEMORY_ESTIMATORS[config.estimator],
        _FEEDBACK_CODES[config.feedback], config.memory_limit == "allocation",
        config.eta, config.tau, config.a, config.b, config.max_failures, np.uint64(config.seed),
        _GRADIENT_CODES[config.gradient],
    )  # fmt: skip
    start, failures, forced, rf, ri, w, p = out
    return MemoryArrays(
        start_s=start,
        failures=failures,
        forced=forced,
        run_job=ri[:, mk.RI_JOB].copy(),
        run_start_s=rf[:, mk.RF_START].copy(),
        run_end_s=rf[:, mk.RF_END].copy(),
        run_alloc_mb=rf[:, mk.RF_ALLOC].copy(),
        run_memory_mb=rf[:, mk.RF_MEMORY].copy(),
        run_failed=ri[:, mk.RI_FAILED] == 1,
        run_estimate_mb=rf[:, mk.RF_ESTIMATE].copy(),
        run_class_nodes=ri[:, mk.RI_COLS :].copy(),
        weights=w,
        success_fraction=float(p),
    )


def _summary(jobs: pl.DataFrame, out: MemoryArrays, nodes: int) -> MemorySummary:
    failed = out.run_failed
    procs = jobs["procs"].to_numpy()  # the engine's job order: the table's
    wasted = procs[out.run_job[failed]] * (out.run_end_s[failed] - out.run_start_s[failed])
    figures = run_figures(*table_arrays(jobs), nodes, tau_s=BSLD_TAU_S, wasted_proc_s=wasted)
    return MemorySummary.from_figures(
        figures,
        nodes=nodes,
        failed_runs=int(failed.sum()),
        forced=int(out.forced.sum()),
        success_fraction=out.success_fraction,
        weights=tuple(float(v) for v in out.weights),
    )


def simulate_memory(jobs: pl.DataFrame | Trace, config: MemoryConfig | None = None) -> MemoryResult:
    """Simulate a heterogeneous-memory cluster over a job table.

    Parameters
    ----------
    jobs
        The columns of :func:`memory_jobs` (MB, seconds), or an SWF job table / Trace whose
        memory fields are known (converted by :func:`memory_jobs`).
    config
        The machine and scheduler (default: :class:`MemoryConfig`'s, 512 × 24 MB + 512 × 32 MB,
        FCFS, no estimation).

    Raises
    ------
    ConfigurationError
        No job at all, a job number that repeats, or a job the model cannot run (wider than
        the machine, using more than it requests, requesting more than the largest node,
        non-positive run or requested time), naming it; the same checks and messages as the
        other engines (``scheduler.sim._jobs``) where they apply.
    """
    config = MemoryConfig() if config is None else config
    if not isinstance(config, MemoryConfig):
        raise TypeError(f"config must be a MemoryConfig, got {type(config).__name__}")
    table = _engine_table(jobs)
    _check_jobs(table, config)  # in the caller's order: the messages name each job's index
    table = table.sort("submit_s", "job_id")
    out = simulate_memory_arrays(
        table["submit_s"].to_numpy(), table["procs"].to_numpy(), table["run_s"].to_numpy(),
        table["req_time_s"].to_numpy(), table["req_mem_mb"].to_numpy(),
        table["used_mem_mb"].to_numpy(), table["user_id"].to_numpy(), config,
    )  # fmt: skip
    k = len(config.class_nodes)
    job_ids = table["job_id"].to_numpy()
    runs = pl.DataFrame(
        {
            "job_id": job_ids[out.run_job],
            "start_s": out.run_start_s,
            "end_s": out.run_end_s,
            "alloc_mb": out.run_alloc_mb,
            "node_memory_mb": out.run_memory_mb,
            "failed": out.run_failed,
            "estimate_mb": out.run_estimate_mb,
            **{f"nodes_class{c + 1}": out.run_class_nodes[:, c] for c in range(k)},
        }
    )
    ok = ~out.run_failed
    alloc = np.full(table.height, np.nan)
    memory = np.full(table.height, np.nan)
    alloc[out.run_job[ok]] = out.run_alloc_mb[ok]
    memory[out.run_job[ok]] = out.run_memory_mb[ok]
    result = table.select(
        "job_id", "submit_s", "procs", "run_s", "req_mem_mb", "used_mem_mb"
    ).with_columns(
        pl.Series("start_s", out.start_s),
        pl.Series("failures", out.failures),
        pl.Series("forced", out.forced),
        pl.Series("alloc_mb", alloc),
        pl.Series("node_memory_mb", memory),
    )  # fmt: skip
    # wait, end, bsld (τ = 10 s) as everywhere; the paper's slowdown (eq. 2) is the stretch
    result = with_job_metrics(result, tau_s=BSLD_TAU_S).select(
        "job_id", "submit_s", "procs", "run_s", "req_mem_mb", "used_mem_mb", "start_s", "end_s",
        "wait_s", "failures", "forced", "alloc_mb", "node_memory_mb", "stretch", "bsld",
    )  # fmt: skip
    summary = _summary(result, out, config.nodes)
    return MemoryResult(jobs=result, summary=summary, runs=runs, config=config)
