"""Job tables of the memory-aware cluster study: the memory filter and the offered
load of eq. 1 of Yom-Tov & Aridor (JSSPP 2007), set to a target by scaling submit times.

The tables are SWF job tables (:data:`scheduler.core.constants.SWF_COLUMNS`): memory per
processor in KB (field 7 ``used_mem_kb``, field 10 ``req_mem_kb``), times in seconds. The
functions that only need processors, run and submit times also accept the memory engine's
table (:func:`scheduler.sim.memory.memory_jobs`: a ``procs`` column instead of the SWF
processor fields).

:func:`memory_filter` applies these rules, in this order, each job counted under the first rule
that removes it (``jobs_in - removed == jobs_out``):

0. with ``missing_memory="fill"`` (default; the paper keeps every job but six), an unknown
   requested memory (``req_mem_kb <= 0``: the user stated none) becomes ``largest_node_kb`` (a
   whole node, what every job got on the original machine; counted in
   ``filled_requested_memory``), then an unknown used memory becomes the request, at most
   ``largest_node_kb`` (the job is taken to need all it asked for: an estimate below it fails
   the job; counted in ``filled_used_memory``), and an unknown requested time becomes the log's
   largest requested time (a job without a limit may run as long as any; only EASY reads it;
   counted in ``filled_requested_time``), so rules 1, 2 and 6 remove nothing; with ``"drop"``
   they apply:
1. ``removed_no_used_memory``: used memory unknown (``used_mem_kb <= 0``);
2. ``removed_no_requested_memory``: requested memory unknown (``req_mem_kb <= 0``);
3. ``removed_no_procs``: no processor count (``used_procs() <= 0``);
4. ``removed_whole_machine``: the job needs ``machine_nodes`` nodes or more (the paper removes
   the 6 jobs of LANL-CM5 that need all 1,024 nodes);
5. ``removed_bad_runtime``: run time <= 0 s or submit time < 0 s;
6. ``removed_bad_requested_time``: requested time <= 0 s (EASY needs it);
7. ``removed_exceeds_largest_node``: used memory above ``largest_node_kb`` (the job could never
   succeed on any node);
8. a job that used more memory than it requested (``used_mem_kb > req_mem_kb``): the engine's
   model takes a request as an upper bound, so with ``under_request="raise"`` (default) its
   request is set to its used memory (kept, counted in ``raised_under_request``), with
   ``"drop"`` it is removed (``removed_under_request``);
9. a request above ``largest_node_kb`` (no node could honour it; the engine refuses it) is set
   to ``largest_node_kb`` (kept, counted in ``capped_request``; after rule 7 the used memory
   stays below the request).

The survivors are sorted by (submit time, job number), stably.
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.traces.swf import used_procs

__all__ = [
    "MEMORY_REMOVAL_RULES",
    "MISSING_MEMORY_MODES",
    "UNDER_REQUEST_MODES",
    "MissingMemory",
    "UnderRequest",
    "memory_filter",
    "offered_load",
    "scale_to_load",
]

#: What the filter does with a job that used more memory than it requested.
UnderRequest = Literal["raise", "drop"]
#: The allowed values of ``under_request``.
UNDER_REQUEST_MODES: tuple[str, ...] = get_args(UnderRequest)

#: What the filter does with a job whose requested or used memory is unknown.
MissingMemory = Literal["fill", "drop"]
#: The allowed values of ``missing_memory``.
MISSING_MEMORY_MODES: tuple[str, ...] = get_args(MissingMemory)

#: The removal counts of the report, in rule order: (key, short label).
MEMORY_REMOVAL_RULES: tuple[tuple[str, str], ...] = (
    ("removed_no_used_memory", "used memory <= 0"),
    ("removed_no_requested_memory", "requested memory <= 0"),
    ("removed_no_procs", "no processor count"),
    ("removed_whole_machine", "needs the whole machine"),
    ("removed_bad_runtime", "run time <= 0 or submit < 0"),
    ("removed_bad_requested_time", "requested time <= 0"),
    ("removed_exceeds_largest_node", "used memory > largest node"),
    ("removed_under_request", "used > requested memory (drop)"),
)


def memory_filter(
    jobs: pl.DataFrame,
    machine_nodes: int,
    *,
    largest_node_kb: float,
    under_request: UnderRequest = "raise",
    missing_memory: MissingMemory = "fill",
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Keep the jobs the memory-aware engine can replay (rules in the module docstring).

    Parameters
    ----------
    jobs
        SWF job table; not modified.
    machine_nodes
        Nodes of the simulated machine (one processor each); jobs needing that many or more are
        removed.
    largest_node_kb
        Memory of the largest node, KB; jobs that used more are removed.
    under_request
        ``"raise"`` (a request below the used memory is set to the used memory) or ``"drop"``.
    missing_memory
        ``"fill"`` (an unknown request becomes ``largest_node_kb``, an unknown used memory the
        request, an unknown requested time the log's largest) or ``"drop"`` (such jobs are
        removed).

    Returns
    -------
    jobs : pl.DataFrame
        The survivors, sorted by (``submit_s``, ``job_id``).
    report : dict
        ``jobs_in``, ``jobs_out``, every count of :data:`MEMORY_REMOVAL_RULES`,
        ``filled_requested_memory``, ``filled_used_memory``, ``filled_requested_time``,
        ``raised_under_request``, ``capped_request`` and the arguments (``machine_nodes``,
        ``largest_node_kb``, ``under_request``, ``missing_memory``).

    Raises
    ------
    ConfigurationError
        ``machine_nodes < 1``, ``largest_node_kb`` not positive and finite, or an unknown
        ``under_request`` or ``missing_memory``.
    """
    choices = (("under_request", under_request, UNDER_REQUEST_MODES),
               ("missing_memory", missing_memory, MISSING_MEMORY_MODES))  # fmt: skip
    for key, value, modes in choices:
        if value not in modes:
            raise ConfigurationError(
                f"memory_filter: {key} must be one of {', '.join(modes)}, got {str(value)[:60]!r}"
            )
    if int(machine_nodes) < 1:
        raise ConfigurationError(f"memory_filter: machine_nodes must be >= 1, got {machine_nodes}")
    if not (math.isfinite(largest_node_kb) and largest_node_kb > 0):
        raise ConfigurationError(
            f"memory_filter: largest_node_kb must be positive and finite, got {largest_node_kb}"
        )
    used, requested = pl.col("used_mem_kb"), pl.col("req_mem_kb")
    filled = {"filled_requested_memory": 0, "filled_used_memory": 0, "filled_requested_time": 0}
    if missing_memory == "fill":
        limit = pl.col("req_time_s")
        counts = jobs.select(
            (requested <= 0).sum().alias("filled_requested_memory"),
            (used <= 0).sum().alias("filled_used_memory"),
            (limit <= 0).sum().alias("filled_requested_time"),
        ).row(0, named=True)
        filled = {name: int(count) for name, count in counts.items()}
        jobs = jobs.with_columns(
            pl.when(limit <= 0).then(limit.max()).otherwise(limit).alias("req_time_s"),
            pl.when(requested <= 0).then(pl.lit(float(largest_node_kb)))
            .otherwise(requested.cast(pl.Float64)).alias("req_mem_kb"),
        ).with_columns(
            pl.when(used <= 0).then(pl.min_horizontal(requested, pl.lit(float(largest_node_kb))))
            .otherwise(used.cast(pl.Float64))
            .alias("used_mem_kb")
        )  # fmt: skip
    under = used > requested
    rules: list[tuple[str, pl.Expr]] = [
        ("removed_no_used_memory", used <= 0),
        ("removed_no_requested_memory", requested <= 0),
        ("removed_no_procs", used_procs() <= 0),
        ("removed_whole_machine", used_procs() >= int(machine_nodes)),
        ("removed_bad_runtime", (pl.col("run_s") <= 0) | (pl.col("submit_s") < 0)),
        ("removed_bad_requested_time", pl.col("req_time_s") <= 0),
        ("removed_exceeds_largest_node", used > float(largest_node_kb)),
        ("removed_under_request", under if under_request == "drop" else pl.lit(False)),
    ]
    report: dict[str, Any] = {"jobs_in": jobs.height}
    kept = jobs
    for name, condition in rules:
        survivors = kept.filter(~condition)
        report[name] = kept.height - survivors.height
        kept = survivors
    raised = int(kept.select(under.sum()).item()) if under_request == "raise" else 0
    if raised:
        kept = kept.with_columns(pl.when(under).then(used).otherwise(requested).alias("req_mem_kb"))
    above = requested > float(largest_node_kb)
    capped = int(kept.select(above.sum()).item())
    if capped:
        kept = kept.with_columns(
            pl.when(above).then(pl.lit(float(largest_node_kb))).otherwise(requested)
            .alias("req_mem_kb")
        )  # fmt: skip
    kept = kept.sort(["submit_s", "job_id"], maintain_order=True)
    report |= {
        **filled,
        "raised_under_request": raised,
        "capped_request": capped,
        "jobs_out": kept.height,
        "machine_nodes": int(machine_nodes),
        "largest_node_kb": float(largest_node_kb),
        "under_request": under_request,
        "missing_memory": missing_memory,
    }
    return kept, report


def _procs(jobs: pl.DataFrame) -> pl.Expr:
    """Processors per job: the engine's ``procs`` column, else the SWF :func:`used_procs`."""
    return pl.col("procs") if "procs" in jobs.columns else used_procs()


def _load_terms(jobs: pl.DataFrame) -> tuple[float, float, float, float]:
    """(Σ q·p in node-seconds, first submission, last submission, run time of the last)."""
    if jobs.height == 0:
        raise ConfigurationError("offered load: no job")
    ordered = jobs.sort(["submit_s", "job_id"], maintain_order=True)
    work = float(ordered.select((_procs(jobs).cast(pl.Float64) * pl.col("run_s")).sum()).item())
    submit = ordered["submit_s"].cast(pl.Float64)
    last_run = float(ordered["run_s"].cast(pl.Float64)[-1])
    return work, float(submit[0]), float(submit[-1]), last_run


def offered_load(jobs: pl.DataFrame, nodes: int) -> float:
    """The offered load of eq. 1 of the paper: ``Σ q_j·p_j / (N·(a_last + p_last))``.

    ``q_j`` the job's nodes (:func:`~scheduler.traces.swf.used_procs`), ``p_j`` its run time
    (s), ``N = nodes``, ``a_last`` the last submission relative to the first (s) and ``p_last``
    the run time of that job (the last in (submit time, job number) order). Dimensionless.
    """
    if int(nodes) < 1:
        raise ConfigurationError(f"offered load: nodes must be >= 1, got {nodes}")
    work, first, last, last_run = _load_terms(jobs)
    span = (last - first) + last_run
    if not span > 0:
        raise ConfigurationError("offered load: the jobs span no time (a_last + p_last <= 0)")
    return work / (int(nodes) * span)


def scale_to_load(jobs: pl.DataFrame, nodes: int, target: float) -> pl.DataFrame:
    """``jobs`` with every submit time relative to the first multiplied by the constant ``c``
    that makes :func:`offered_load` equal ``target``:
    ``c = (Σ q·p / (N·target) − p_last) / a_last``.

    The first submission stays where it is; ``submit_s`` becomes Float64 (seconds); the order
    of the jobs is kept (``c > 0``). The factor is recorded nowhere: compute it as the ratio of
    the spans if needed.

    Raises
    ------
    ConfigurationError
        ``target`` not positive and finite; fewer than two distinct submit times (no span to
        scale); or the target is unreachable, i.e. it would need ``c <= 0`` (the last job's run
        time alone already brings the load below the target).
    """
    if not (math.isfinite(target) and target > 0):
        raise ConfigurationError(f"target load must be positive and finite, got {target!r}")
    if int(nodes) < 1:
        raise ConfigurationError(f"offered load: nodes must be >= 1, got {nodes}")
    work, first, last, last_run = _load_terms(jobs)
    if jobs.height < 2 or not last > first:
        raise ConfigurationError(
            f"cannot scale {jobs.height} job(s) submitted at one instant to a load: "
            "there is no inter-arrival time to stretch"
        )
    factor = (work / (int(nodes) * target) - last_run) / (last - first)
    if not factor > 0:
        reachable = work / (int(nodes) * last_run) if last_run > 0 else math.inf
        raise ConfigurationError(
            f"offered load {target:g} is unreachable: it would need a non-positive submit-time "
            f"factor ({factor:.3g}); the highest load these jobs can offer is below "
            f"{reachable:.3g}"
        )
    return jobs.with_columns(
        (pl.lit(first) + (pl.col("submit_s").cast(pl.Float64) - first) * factor).alias("submit_s")
    )
