"""Windowed list scheduling: the scheduler of the learned-priority study's published evaluation.

Carastan-Santos & de Camargo (SC'17) evaluate their policies with a simulator
(``sched-performance-tester`` in their code) that differs from schedlab's EASY engine in three
ways, each a parameter of :func:`simulate_window`:

- ``queue_window``: the policy orders, and backfilling looks at, only the ``queue_window``
  earliest-submitted waiting jobs (theirs: 32, the size of a training queue Q); ``None``: every
  waiting job;
- ``n_in_order``: the first ``n_in_order`` jobs (their state set S, 16) start in submission
  order, never reordered and never backfilled;
- ``backfilling``: one job at a time, the first in queue order that may start without delaying
  the head (EASY's test), the queue re-sorted before the next;
- ``exchange_sort``: their SPF sorts with an exchange sort, which orders equal estimates
  otherwise than by submission.

With ``queue_window=None`` and ``n_in_order=0`` the schedule is EASY's (or, without
backfilling, list scheduling's) job by job, except where two running jobs have the same
estimated end at the shadow time or a job outlives its estimate (``docs/simulator.md``,
"Windowed list scheduling"). The compiled loop is :mod:`scheduler.sim._window_kernel`.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.policies import PolicyInputs, priority_key
from scheduler.sim import _window_kernel as kernel
from scheduler.sim._jobs import first_invalid, job_column, machine_procs_value

__all__ = ["simulate_window"]


def simulate_window(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    machine_procs: int,
    *,
    policy: str = "FCFS",
    backfilling: bool = False,
    queue_window: int | None = None,
    n_in_order: int = 0,
    exchange_sort: bool = False,
) -> np.ndarray:
    """Start times (s) of windowed list scheduling of jobs given as arrays.

    Parameters
    ----------
    submit_s, procs, run_s, estimate_s
        One value per job, in submission order (``submit_s`` nondecreasing, seconds);
        processors 1..``machine_procs``; actual and estimated run times (s, > 0). The policy
        and the backfilling test see ``estimate_s``; jobs run for ``run_s``.
    machine_procs
        Processors of the machine.
    policy
        A policy name of ``scheduler policies`` (its key at each decision, smallest first;
        F1-F4 measure submit times from the first job's).
    backfilling
        Start, one at a time, a later job that does not delay the head when the head cannot
        start.
    queue_window
        Waiting jobs the scheduler sees (the earliest-submitted ones); ``None``: all.
    n_in_order
        Jobs at the start that are started in submission order, unsorted, never backfilled.
    exchange_sort
        Order the window with the authors' exchange sort (``for i, for j: if key_i < key_j:
        swap``, from the current order), as their code sorts SPF: equal keys then end in
        another order than submission's. False: a stable sort, ties by submission order.

    Returns
    -------
    numpy.ndarray
        float64 start times (s), one per job in the given order; ``start >= submit``.
    """
    submit = job_column("submit_s", submit_s, None)
    n = submit.shape[0]
    columns = {
        "submit_s": submit,
        "procs": job_column("procs", procs, n),
        "run_s": job_column("run_s", run_s, n),
        "estimate_s": job_column("estimate_s", estimate_s, n),
    }
    machine = machine_procs_value(machine_procs)
    backfilling = flag(backfilling, "backfilling")
    exchange_sort = flag(exchange_sort, "exchange_sort")
    bad = first_invalid(columns, machine)
    if bad is not None:
        raise ConfigurationError(f"{bad.name} of job {bad.index} must be {bad.expected}")
    if n > 1 and np.any(np.diff(submit) < 0):
        raise ConfigurationError("submit_s must be nondecreasing (jobs in submission order)")
    if queue_window is not None and queue_window < 1:
        raise ConfigurationError(f"queue_window must be >= 1 or None, got {queue_window}")
    if n_in_order < 0:
        raise ConfigurationError(f"n_in_order must be >= 0, got {n_in_order}")
    inputs = PolicyInputs(
        submit_s=submit,
        procs=columns["procs"],
        estimate_s=columns["estimate_s"],
        first_submit_s=float(submit[0]) if n else 0.0,
    )
    key = priority_key(policy, inputs)
    start = np.full(n, np.nan)
    if n:
        kernel.window_schedule(
            submit, columns["procs"].astype(np.int64), columns["run_s"], columns["estimate_s"],
            np.ascontiguousarray(key.base, dtype=np.float64),
            np.ascontiguousarray(key.divisor, dtype=np.float64),
            machine, 0 if queue_window is None else int(queue_window), int(n_in_order),
            backfilling, exchange_sort, start,
        )  # fmt: skip
    return start
