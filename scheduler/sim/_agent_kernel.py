"""Compiled EASY loop driven by an outside chooser (private): the Gymnasium environment's engine.

The base engine (:mod:`scheduler.sim._kernel`) orders the waiting jobs by a priority key; here an
agent takes that key's place. Its state arrays are the base engine's (``jobs``, ``istate``,
``iwork``, ``fwork``, built by :func:`scheduler.sim._kernel.new_state`) and two more:
``clock`` float64 (1,): the current instant (s); ``flags`` int64 (FLAG_ROWS,): IN_PASS (1 while
the agent is asked at the current instant), DECISIONS (how many were asked so far) and
OBS_ROWS (the job rows of the last observation: the rows after them are zero already).

One instant, as the base engine's (``docs/simulator.md``): every completion and submission at
``now`` is applied, then a pass:

1. while some waiting job fits in the free processors, the agent picks a waiting job
   (:func:`decide` returns, :func:`act` applies the choice): a job that fits starts now;
2. a job that does not fit is the reserved job: its shadow time and extra processors are
   computed (after revising outlived estimates) and, with backfilling, the other waiting jobs
   start in submit order when ``now + estimate <= shadow`` or they fit in the extra processors;
   the pass ends;
3. when no waiting job fits, the pass ends without asking (no choice could start a job).

An agent that always picks the first waiting job in submit order therefore schedules exactly as
EASY-FCFS-FCFS (with ``backfill``) or FCFS list scheduling (without), job by job; an agent that
picks the smallest key of a policy, as EASY-P-FCFS (``tests/sim/test_agent.py``).
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit
from scheduler.sim import _kernel as k

# entries of ``flags``
IN_PASS, DECISIONS, OBS_ROWS = range(3)
FLAG_ROWS = 3

# columns of an observation row (:func:`observe`)
F_WAIT, F_ESTIMATE, F_PROCS, F_FITS, F_VALID, F_FREE, F_QUEUE = range(7)
FEATURES = 7


@jit(inline=True)
def _fits_now(jobs, istate, iwork):
    """True when some waiting job fits in the free processors."""
    free = istate[k.FREE]
    if free == 0:
        return False
    for i in range(istate[k.QLEN]):
        j = iwork[k.QUEUE, i]
        if iwork[k.STATUS, j] == k.WAITING and jobs[k.PROCS, j] <= free:
            return True
    return False


@jit
def decide(outlive, jobs, istate, iwork, fwork, clock, flags):
    """Move on to the next decision: True when the agent is to choose at ``clock[0]``, False
    when every job has started (the schedule is then complete in ``fwork[START]``)."""
    n = jobs.shape[1]
    while True:
        if flags[IN_PASS]:
            if _fits_now(jobs, istate, iwork):
                flags[DECISIONS] += 1
                return True
            # the pass ends: nothing fits (the base engine revises outlived estimates here)
            now = clock[0]
            if (istate[k.QLEN] > istate[k.DEAD] and istate[k.RLEN] > 0
                    and fwork[k.EST_END, iwork[k.RUNNING, 0]] <= now):  # fmt: skip
                k._revise_outlived(now, outlive, jobs, istate, iwork, fwork)
            flags[IN_PASS] = 0
        if istate[k.DEAD] > k._DEAD_SLACK + (istate[k.QLEN] - istate[k.DEAD]) // 4:
            k._compact(iwork, istate, False, False)
        t_sub = jobs[k.SUBMIT, istate[k.NEXT_SUB]] if istate[k.NEXT_SUB] < n else np.inf
        t_end = fwork[k.END, iwork[k.HEAP, 0]] if istate[k.HLEN] > 0 else np.inf
        now = min(t_sub, t_end)
        if now == np.inf:
            return False
        while istate[k.HLEN] > 0 and fwork[k.END, iwork[k.HEAP, 0]] <= now:
            j, size = k._heap_pop(iwork, fwork, istate[k.HLEN])
            istate[k.HLEN] = size
            istate[k.FREE] += np.int64(jobs[k.PROCS, j])
            istate[k.RLEN] = k._running_remove(jobs, iwork, fwork, istate[k.RLEN], j)
        while istate[k.NEXT_SUB] < n and jobs[k.SUBMIT, istate[k.NEXT_SUB]] <= now:
            iwork[k.QUEUE, istate[k.QLEN]] = istate[k.NEXT_SUB]
            istate[k.QLEN] += 1
            istate[k.NEXT_SUB] += 1
        clock[0] = now
        flags[IN_PASS] = 1


@jit
def act(j, backfill, classic, outlive, jobs, istate, iwork, fwork, clock, flags):
    """Apply the agent's choice of waiting job ``j`` at ``clock[0]`` (module docstring)."""
    now = clock[0]
    if jobs[k.PROCS, j] <= istate[k.FREE]:
        k._start(j, now, k.STARTED_HEAD, jobs, istate, iwork, fwork)
        return
    flags[IN_PASS] = 0
    if istate[k.RLEN] > 0 and fwork[k.EST_END, iwork[k.RUNNING, 0]] <= now:
        k._revise_outlived(now, outlive, jobs, istate, iwork, fwork)
    if not backfill or istate[k.FREE] == 0:
        return
    shadow, extra = k._reservation(np.int64(jobs[k.PROCS, j]), classic, jobs, istate, iwork, fwork)
    if np.isnan(fwork[k.RESERVED, j]):
        fwork[k.RESERVED, j] = shadow
    for i in range(istate[k.QLEN]):
        c = iwork[k.QUEUE, i]
        free = istate[k.FREE]
        if free == 0:
            return
        q = np.int64(jobs[k.PROCS, c])
        if iwork[k.STATUS, c] != k.WAITING or c == j or q > free:
            continue
        if now + fwork[k.EST_CUR, c] <= shadow:
            k._start(c, now, k.STARTED_BACKFILL, jobs, istate, iwork, fwork)
        elif q <= extra:
            extra -= q
            k._start(c, now, k.STARTED_BACKFILL, jobs, istate, iwork, fwork)


@jit
def observe(machine_procs, wait_scale_s, estimate_scale_s, jobs, istate, iwork, fwork, clock,
            flags, obs, ids):  # fmt: skip
    """Fill ``obs`` (window, FEATURES) with the first ``window`` waiting jobs in submit order and
    ``ids`` with their job indices (-1 for rows without a job); return how many jobs wait.

    Row features (all in [0, 1]): wait / ``wait_scale_s`` and estimate / ``estimate_scale_s``
    (both capped at 1), processors / machine, fits in the free processors now (0/1), a real job
    (1), the machine's free fraction and the waiting jobs / window (capped at 1): the last two
    are the machine's state, repeated on every job row. Rows without a job are zero. Only the
    job rows and the rows that held a job at the last observation are written (the others are
    zero already): the cost is that of the jobs shown, not of the window.
    """
    window = obs.shape[0]
    now = clock[0]
    free = istate[k.FREE]
    waiting = istate[k.QLEN] - istate[k.DEAD]
    free_fraction = free / machine_procs
    queue_fraction = min(waiting / window, 1.0)
    row = 0
    for i in range(istate[k.QLEN]):
        if row == window:
            break
        j = iwork[k.QUEUE, i]
        if iwork[k.STATUS, j] != k.WAITING:
            continue
        ids[row] = j
        obs[row, F_WAIT] = min((now - jobs[k.SUBMIT, j]) / wait_scale_s, 1.0)
        obs[row, F_ESTIMATE] = min(fwork[k.EST_CUR, j] / estimate_scale_s, 1.0)
        obs[row, F_PROCS] = jobs[k.PROCS, j] / machine_procs
        obs[row, F_FITS] = 1.0 if jobs[k.PROCS, j] <= free else 0.0
        obs[row, F_VALID] = 1.0
        obs[row, F_FREE] = free_fraction
        obs[row, F_QUEUE] = queue_fraction
        row += 1
    for r in range(row, max(row, flags[OBS_ROWS])):
        ids[r] = -1
        obs[r, :] = 0.0
    flags[OBS_ROWS] = row
    return waiting


@jit
def run_keyed(base, divisor, backfill, classic, outlive, jobs, istate, iwork, fwork, clock,
              flags):  # fmt: skip
    """The whole schedule with the agent replaced by a policy's key ``base + (now - submit) /
    divisor`` (smallest first, ties in submit order): the chooser loop in compiled code, for
    tests and baselines."""
    while decide(outlive, jobs, istate, iwork, fwork, clock, flags):
        now = clock[0]
        best = -1
        best_key = np.inf
        for i in range(istate[k.QLEN]):
            j = iwork[k.QUEUE, i]
            if iwork[k.STATUS, j] != k.WAITING:
                continue
            key = base[j] + (now - jobs[k.SUBMIT, j]) / divisor[j]
            if best < 0 or key < best_key:
                best = j
                best_key = key
        act(best, backfill, classic, outlive, jobs, istate, iwork, fwork, clock, flags)


@jit
def act_observe(j, backfill, classic, outlive, machine_procs, wait_scale_s, estimate_scale_s,
                jobs, istate, iwork, fwork, clock, flags, obs, ids):  # fmt: skip
    """One step of an agent in one call: :func:`act` on job ``j``, :func:`decide`, then
    :func:`observe`; returns the waiting jobs, or -1 when every job has started (``obs`` and
    ``ids`` are then left as they were)."""
    act(j, backfill, classic, outlive, jobs, istate, iwork, fwork, clock, flags)
    if not decide(outlive, jobs, istate, iwork, fwork, clock, flags):
        return -1
    return observe(machine_procs, wait_scale_s, estimate_scale_s, jobs, istate, iwork, fwork,
                   clock, flags, obs, ids)  # fmt: skip


@jit
def act_observe_many(actions, backfill, classic, outlive, machine_procs, wait_scale_s,
                     estimate_scale_s, jobs_list, istates, iworks, fworks, clocks, flags_list,
                     obs, ids, waiting):  # fmt: skip
    """:func:`act_observe` for several simulations at once (a vector environment's step):
    simulation ``e`` (the ``e``-th slice of each stacked state array) applies the job of row
    ``actions[e]`` of ``ids[e]`` (a row without a job: row 0) and writes ``obs[e]``, ``ids[e]``
    and ``waiting[e]`` (-1: its episode is over); ``machine_procs`` and ``estimate_scale_s``
    are per simulation."""
    for e in range(actions.shape[0]):
        row = actions[e]
        if row < 0 or row >= ids.shape[1] or ids[e, row] < 0:
            row = 0
        waiting[e] = act_observe(
            ids[e, row], backfill, classic, outlive, machine_procs[e], wait_scale_s,
            estimate_scale_s[e], jobs_list[e], istates[e], iworks[e], fworks[e], clocks[e],
            flags_list[e], obs[e], ids[e],
        )  # fmt: skip
